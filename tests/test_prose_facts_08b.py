"""Chapter 08b's sentences next to its dashboards hold in every state their controls allow. Expected values come
from the chapter's text; the model is swept over the dashboard's whole range. Markdown line breaks read as spaces."""

import json
import re
from functools import cache
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from nvcourse import isolation
from nvcourse.chapters import ch08b_security_and_observability as ch

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "08b_security_and_observability.ipynb"
SHARES = [round(0.1 * i, 1) for i in range(1, 10)]  # the victim-share slider: 0.1 .. 0.9
DUTIES = [round(0.1 * i, 1) for i in range(0, 11)]  # the neighbour-duty slider: 0 .. 1


@cache
def cell(cid: str) -> str:
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    return next(re.sub(r"\s+", " ", "".join(c["source"])) for c in nb["cells"] if c["id"] == cid)


@pytest.mark.parametrize("exp", range(20, 33, 2))  # the size slider: 1 MiB .. 4 GiB
def test_an_ets_share_helps_only_above_what_per_flow_fairness_gives(exp):
    # "helps only when the share is larger than what fairness already gives the victim's flows: here 1/8 of the
    # link under per-flow fairness ... below it (a share of 0.1 on RoCE) the victim is worse off than with no QoS"
    text = cell("c015a")  # section 1.5's rule, under its dashboard
    assert "helps only when the share is larger than what fairness already gives the victim's flows" in text
    assert "here 1/8 of the link under per-flow fairness" in text
    assert "below it (a share of 0.1 on RoCE) the victim is worse off than with no QoS" in text
    predict = cell("c014a")
    assert "Then lower it to 0.1: better or worse than no QoS?" in predict  # the predict question ...
    assert "worse off" not in predict and "1/8" not in predict  # ... not answered before its check
    key = cell("c033")
    assert "helps only when it is larger than what fairness already gives the job (1/8 of the link" in key
    assert "bound it on both" not in key
    for duty in DUTIES:
        none = isolation.noisy_neighbour(2**exp, qos="none", duty=duty)
        fair = none.shared_rate_GBps / none.alone_rate_GBps
        assert fair == pytest.approx(1 / 8)
        for share in SHARES:
            ets = isolation.noisy_neighbour(2**exp, qos="ets", victim_share=share, duty=duty)
            assert ets.shared_rate_GBps == pytest.approx(share * ets.alone_rate_GBps)  # the share is kept
            if duty == 0:
                assert ets.slowdown == pytest.approx(none.slowdown) == pytest.approx(1)
            elif share > fair:
                assert ets.slowdown < none.slowdown
            else:
                assert ets.slowdown > none.slowdown
            # the bound: the network part stretches at most 1/share, so the whole at most that too
            assert ets.slowdown <= 1 + duty * (1 / share - 1) + 1e-9


def test_the_ets_readout_compares_with_no_qos_in_words():
    _fig, text = ch.noisy_neighbour_dashboard()._render(qos="ets", share=0.1, duty=1.0, nbytes=2**28)
    none = isolation.noisy_neighbour(2**28, qos="none").slowdown
    assert f"With no QoS the victim would run ×{none:.2f}: this share is worse than no QoS" in text
    assert "1/8 of the link" in text
    _fig, text = ch.noisy_neighbour_dashboard()._render(qos="ets", share=0.2, duty=0.5, nbytes=2**20)
    assert "this share is better than no QoS" in text
    _fig, text = ch.noisy_neighbour_dashboard()._render(qos="ets", share=0.5, duty=0.0, nbytes=2**28)
    assert "With no QoS" not in text  # the neighbour never sends: nothing to compare


def test_the_qos_look_for_sentence_holds_in_every_state():
    # 1.5: "What to look for: the first line, the victim's slowdown; with ETS shares (while the neighbour sends) the
    # last line compares it with no QoS."
    text = cell("c014a")
    assert ("What to look for: the first line, the victim's slowdown; with ETS shares (while the neighbour sends) the "
            "last line compares it with no QoS.") in text
    dash = ch.noisy_neighbour_dashboard()
    for exp in range(20, 33, 4):
        for duty in (0.0, 0.5, 1.0):
            for qos in isolation.QOS_MODES:
                for share in (0.1, 0.5, 0.9):
                    fig, out = dash._render(qos=qos, share=share, duty=duty, nbytes=2**exp)
                    plt.close(fig)
                    assert out.startswith("<p>Victim all-reduce: <b>×")
                    last = out.rsplit("<p>", 1)[-1]
                    assert last.startswith("With no QoS the victim would run") == (qos == "ets" and duty > 0)


def test_a_longer_compute_tolerates_a_larger_loss_at_every_setting():
    # 4.1's answer: "At every setting of the dashboard, a longer compute tolerates a larger loss."
    from nvcourse.observability import counters

    text = cell("c029")
    assert "At every setting of the dashboard, a longer compute tolerates a larger loss." in text
    assert "f* = s/(c + s) grows as c shrinks" in text
    computes = [10 ** (-3 + 0.1 * i) for i in range(31)]  # the compute slider: 1 ms .. 1 s, step 0.1 in log10
    for exp in range(24, 34):  # the gradients slider
        for nodes in (1, 2, 4, 16, 64):  # the nodes menu
            losses = [counters.alert_thresholds(
                counters.bandwidth_fraction("dgx-h100", 8, 2**exp, c, nodes=nodes)).tolerable_loss for c in computes]
            assert all(b > a for a, b in zip(losses, losses[1:])), (exp, nodes)


def test_each_dashboard_says_what_its_model_leaves_out():
    # one short "What this model leaves out" per model-driven dashboard (tenancy, neighbour, thresholds)
    for cid, says in (("c006", "No published run compares 36-way with 72-way in-switch reduction."),
                      ("c014", "for a real NCCL job ×4.45 likely understates the slowdown"),
                      ("c029", "a job that hides part of its communication behind compute (chapter 07b) tolerates "
                               "more: the hidden part absorbs some of the loss before the step slows")):
        text = cell(cid)
        assert "What this model leaves out" in text and says in text, cid


def test_the_tenancy_predicts_are_not_answered_before_their_check():
    # 1.1: the 9 + 9 predict (c004) and the dashboard's predict (c006) come before the time summary (c007a)
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    order = [c["id"] for c in nb["cells"]]
    assert order.index("c004") < order.index("c005") < order.index("c006") < order.index("c007") < order.index("c007a")
    for cid in ("c004", "c006"):
        assert "within 7 %" not in cell(cid) and "2.4×" not in cell(cid), cid
    assert "From 1 GiB up a tenant's collective time stays within 7 % of the rack's;" in cell("c007a")


@pytest.mark.parametrize("exp", range(20, 33))  # the size slider: 1 MiB .. 4 GiB
def test_a_share_of_0_9_leaves_the_victim_just_above_1x(exp):
    # 1.5: "a share of 0.9 caps the victim's flows at 0.9 of the link, so while the neighbour sends the slowdown
    # stays just above 1× (×1.05 at most)"
    text = cell("c015a")
    assert ("a share of 0.9 caps the victim's flows at 0.9 of the link, so while the neighbour sends the slowdown "
            "stays just above 1× (×1.05 at most)") in text
    for duty in DUTIES:
        r = isolation.noisy_neighbour(2**exp, qos="ets", victim_share=0.9, duty=duty)
        assert r.shared_rate_GBps == pytest.approx(0.9 * r.alone_rate_GBps)
        if duty > 0:
            assert 1 < r.slowdown and round(r.slowdown, 2) <= 1.05
