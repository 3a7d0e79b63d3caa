"""Chapters 07 and 07b: each sentence beside a dashboard, figure or printed readout that states a number, an order or
a trend is rebuilt here from the model, over the dashboard's whole range where a dashboard is involved.
Markdown line breaks are read as spaces."""

import json
import re
from functools import cache
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from nvcourse import catalog, training
from nvcourse.chapters import ch07_training as ch07

ROOT = Path(__file__).resolve().parents[1]
MODELS = ["llama3-8b", "llama3-70b", "llama3-405b"]
SYSTEMS = ["pcie-8gpu", "dgx-h100", "gb200-nvl72"]


@pytest.fixture(autouse=True)
def _close_figures():
    """Building a dashboard draws its first state: close those figures after each test."""
    yield
    plt.close("all")


@cache
def cells(notebook: str) -> dict[str, str]:
    """Cell id → Markdown/code source with whitespace collapsed."""
    nb = json.loads((ROOT / "notebooks" / notebook).read_text(encoding="utf-8"))
    return {c["id"]: re.sub(r"\s+", " ", "".join(c["source"])) for c in nb["cells"]}


def _dash_controls() -> dict:
    return ch07.step_dashboard(models=MODELS, systems=SYSTEMS, compute_efficiency=0.55).controls


# ------------------------------------------------------------------------------------------------ 07 §7 dashboard
def _step(gpus, model="llama3-70b", system="dgx-h100", tp=8, pp=4, placement="tp-first"):
    return training.step_time(model, system, gpus, tp=tp, pp=pp, placement=placement, compute_efficiency=0.55,
                              virtual_stages=1)


def test_07_dashboard_opens_where_the_predict_question_says():
    c = _dash_controls()
    assert (c["model"].value, c["system"].value, c["gpus"].value, c["tp"].value, c["pp"].value,
            c["placement"].value) == ("llama3-70b", "dgx-h100", 1024, 8, 4, "tp-first")
    assert c["efficiency"].value == training.data()["defaults"]["compute_efficiency"] == 0.55


def test_07_predict_answers_are_the_dashboards_numbers():
    text = cells("07_training_at_scale.ipynb")["c015"]
    a, b, big = _step(1024), _step(1024, placement="dp-first"), _step(4096)
    assert b.total_s > 2 * a.total_s  # "more than twice as long"
    assert f"({a.total_s:.2f} s → {b.total_s:.2f} s)" in text
    assert f"from {a.breakdown()['TP comm']:.2f} s to {b.breakdown()['TP comm']:.2f} s" in text
    assert f"from {a.mfu:.1%} to {big.mfu:.1%}".replace("%", " %") in text and big.mfu < a.mfu
    assert (a.micro_batches, big.micro_batches) == (16, 4) and "4 micro-batches instead of 16" in text
    bubble_a, bubble_big = a.breakdown()["pipeline bubble"], big.breakdown()["pipeline bubble"]
    assert bubble_a == pytest.approx(bubble_big) and f"({bubble_a:.2f} s either way)" in text
    assert 0.15 < bubble_a / a.breakdown()["compute"] < 0.25  # "about a fifth"
    assert 0.70 < bubble_big / big.breakdown()["compute"] < 0.80  # "about three quarters"


def test_07_settings_the_model_cannot_compute_are_the_two_the_prose_names():
    """Every discrete state of the dashboard either computes (and says "does not fit" when it does not) or fails
    with one of the two reasons the prose lists, as a one-line message the dashboard shows in its note."""
    c = _dash_controls()
    reasons = set()
    for model in MODELS:
        for tp in c["tp"].options:
            for pp in c["pp"].options:
                for g in ch07.GPU_COUNTS:
                    if g < tp * pp or g % (tp * pp):
                        continue  # the GPU slider does not offer it
                    try:
                        _step(g, model, "dgx-h100", tp, pp)
                    except ValueError as exc:
                        assert "\n" not in str(exc)
                        reasons.add("batch" if "must split evenly" in str(exc) else
                                    "heads" if "attention heads" in str(exc) else str(exc))
    assert reasons == {"batch", "heads"}
    text = cells("07_training_at_scale.ipynb")["c015"]
    assert "a global batch that does not split evenly" in text and "more TP ranks than the model has attention" in text


def test_07_readout_says_does_not_fit_exactly_when_the_model_says_so():
    for g, model in [(64, "llama3-405b"), (1024, "llama3-70b")]:
        s = _step(g, model)
        fig, text = ch07._render(g, model, "dgx-h100", 8, 4, "tp-first", 0.55, 15.6, 0.0)
        assert ("does not fit" in text) == (not s.fits)
        plt.close(fig)
    assert not _step(64, "llama3-405b").fits and _step(1024).fits  # both branches were seen


def test_07_key_point_efficiency_never_rises_with_more_gpus_when_tp_is_inside_the_node():
    for model in MODELS:
        for system in SYSTEMS:
            for tp in (1, 2, 4, 8):
                for pp in (1, 2, 4, 8, 16):
                    prev = None
                    for g in ch07.GPU_COUNTS:
                        if g < tp * pp or g % (tp * pp):
                            continue
                        try:
                            s = _step(g, model, system, tp, pp)
                        except ValueError:
                            continue
                        b = s.breakdown()
                        cur = (s.micro_batches, b["pipeline bubble"] / b["compute"], s.efficiency)
                        if prev is not None:
                            assert cur[0] <= prev[0] and cur[1] >= prev[1] - 1e-9, (model, system, tp, pp, g)
                            assert cur[2] <= prev[2] + 1e-9, (model, system, tp, pp, g)
                        prev = cur
    assert "with TP inside the node it never rises as GPUs are added" in cells("07_training_at_scale.ipynb")["c017"]


def test_07_the_wrong_rank_order_can_halve_throughput():
    assert _step(1024, placement="dp-first").total_s >= 2 * _step(1024).total_s
    assert "the wrong rank order can halve throughput" in cells("07_training_at_scale.ipynb")["c017"]


# ------------------------------------------------------------------------------------------------ 07 §3, §4 figures
def test_07_dp_first_costs_about_the_whole_compute():
    ref = training.data()["reference_runs"]["llama3-405b-16k"]
    args = (ref["model"], ref["system"], ref["gpus"])
    tp_first = training.step_time(*args, tp=ref["tp"], pp=ref["pp"], virtual_stages=4)
    dp_first = training.step_time(*args, tp=ref["tp"], pp=ref["pp"], virtual_stages=4, placement="dp-first")
    extra = dp_first.total_s - tp_first.total_s
    assert 0.8 < extra / tp_first.breakdown()["compute"] < 1.25
    assert "costs about as much as the whole compute" in cells("07_training_at_scale.ipynb")["c008"]


@cache
def _efficiency_table() -> dict:
    _fig, table = ch07.scaling_efficiency_figure(MODELS, SYSTEMS, counts=ch07.GPU_COUNTS)
    plt.close(_fig)
    return {k: v.efficiency for k, v in table.items()}


def test_07_scaling_curves_read_as_the_bullets_say():
    eff = _efficiency_table()
    text = cells("07_training_at_scale.ipynb")["c010"]
    for model in MODELS:
        for g in ch07.GPU_COUNTS:
            pcie, dgx, nvl = (eff.get((model, s, g)) for s in SYSTEMS)
            if pcie is not None:  # the PCIe server loses first: never above either of the others
                assert pcie <= max(x for x in (dgx, nvl) if x is not None) + 0.005, (model, g)
            if model != "llama3-8b" and dgx is not None:  # the two larger models: NVL72 bends last
                assert nvl is not None and nvl >= dgx, (model, g)
    assert any(eff[("llama3-8b", "gb200-nvl72", g)] < eff[("llama3-8b", "dgx-h100", g)] for g in ch07.GPU_COUNTS)
    assert "for the two larger models, bends last" in text and "it can dip below the DGX H100" in text
    first = {s: min(g for (m, sy, g) in eff if m == "llama3-405b" and sy == s) for s in SYSTEMS}
    assert first == {"pcie-8gpu": 256, "dgx-h100": 256, "gb200-nvl72": 64}
    memory = {s: catalog.get_system(s).gpu_spec.memory_GB for s in SYSTEMS}
    assert memory == {"pcie-8gpu": 80, "dgx-h100": 80, "gb200-nvl72": 186}
    # the counts sit in the reference section 8; the bullet points there
    ref = cells("07_training_at_scale.ipynb")["c016a"]
    assert "405B needs 256 GPUs of 80 GB, or 64 of the NVL72's 186 GB GPUs" in ref
    assert "(§8 gives 405B's smallest counts)" in text


def test_07_the_70b_nvl72_dip_at_8_gpus_is_tp_8():
    at8, at16 = (training.best_config("llama3-70b", "gb200-nvl72", g) for g in (8, 16))
    assert (at8.tp, at8.pp) == (8, 1) and at16.pp > 1 and at16.efficiency > at8.efficiency + 0.1
    tp_share = at8.breakdown()["TP comm"] / at8.breakdown()["compute"]
    assert 0.35 < tp_share < 0.45  # "about 40 % to the compute"
    for tp, pp in [(t, p) for t in (1, 2, 4) for p in (1, 2, 4, 8) if t * p == 8]:  # nothing else fits
        try:
            assert not _step(8, "llama3-70b", "gb200-nvl72", tp, pp).fits
        except ValueError:
            pass
    assert "only TP 8 fits in memory there, and its all-reduces add about 40 % to the compute" in cells(
        "07_training_at_scale.ipynb")["c016a"]  # reference section 8; §4's bullet points there


# ------------------------------------------------------------------------------------------------ 07b
def _dp(model="llama3-8b", system="dgx-h100", nodes=64):
    from nvcourse import overlap

    return overlap.dp_scenario(model, system, nodes, tp=1 if model == "llama3-8b" else 8)


def _wait(tl) -> float:
    return tl.exposed_s - max(tl.slowdown_s, 0.0)


def test_07b_toy_step_numbers():
    from nvcourse import overlap

    toy = overlap.dp_bucket_timeline(100e6, 1.0, 25e6, lambda nbytes: 0.3)
    assert toy.exposed_s == pytest.approx(0.45) and toy.comm_s == pytest.approx(1.2)
    assert "0.45 s of the 1.2 s of communication stay exposed" in cells("07b_overlapping_communication.ipynb")["c004"]


def test_07b_bucket_range_for_the_8b_and_none_for_the_70b():
    sc, big = _dp(), _dp("llama3-70b")
    mib = 2**20
    assert sc.timeline(1 * mib).exposed_s > 1.0  # "at 1 MiB the thousands of latencies cost seconds"
    for m in (8, 16, 25, 32, 64):  # from about the bound up to a hundred MiB: the tail, under a millisecond
        assert m * mib >= sc.min_bucket() and sc.timeline(m * mib).exposed_s < 1e-3
    assert 2e-3 < sc.timeline(1024 * mib).exposed_s < 10e-3  # "several milliseconds" at 1 GiB
    assert big.min_bucket() == float("inf")
    nic_Bps = 400e9 / 8  # one 400 Gb/s NIC per GPU: even at line rate a ring's 2(n-1)/n of the gradient is too long
    dp = big.gpus_per_node * big.nodes
    assert 2 * (dp - 1) / dp * big.grad_bytes / nic_Bps > big.backward_s > big.grad_bytes / nic_Bps
    assert "sends about twice its 17.5 GB of gradients" in cells("07b_overlapping_communication.ipynb")["c006"]
    assert f"{big.grad_bytes / 1e9:.1f}" == "17.5"
    text = cells("07b_overlapping_communication.ipynb")["c006"]
    assert "under a millisecond" in text and "at 1 GiB the tail grows to several milliseconds" in text


def test_07b_sm_cost_moves_the_best_bucket_up():
    sc = _dp()
    mib = 2**20
    for f in (0.05, 0.15, 0.3):
        tls = [sc.timeline(m * mib, f) for m in (4, 25, 256)]
        assert tls[0].slowdown_s > tls[1].slowdown_s > tls[2].slowdown_s
        assert tls[0].comm_s > tls[1].comm_s > tls[2].comm_s
        assert tls[2].exposed_s < tls[1].exposed_s  # with SMs counted, 256 MiB beats 25 MiB ...
    assert sc.timeline(25 * mib).exposed_s < sc.timeline(256 * mib).exposed_s  # ... without, 25 MiB wins
    assert "compare the 25 MiB and 256 MiB columns" in cells("07b_overlapping_communication.ipynb")["c008"]


def _fsdp_parts(model, system, nodes):
    """One layer's forward compute and all-gather time, as ch07b.fsdp_case builds them."""
    from nvcourse import catalog, costmodel

    spec, s = training.get_model(model), catalog.get_system(system)
    eff = training.data()["defaults"]["compute_efficiency"]
    per_node = max(s.gpus_per_host, s.gpus_per_domain)
    fwd = 2 * spec.params / spec.layers * spec.seq / (s.gpu_spec.bf16_TFLOPS * 1e12 * eff)
    layer_bytes = spec.params / spec.layers * 2
    ag = costmodel.predict("allgather", system, per_node, layer_bytes, nodes=nodes, algo="nccl").time_s
    return fwd, ag


def test_07b_deeper_prefetch_helps_only_when_a_gather_outlasts_a_layer():
    from nvcourse.chapters import ch07b_overlap as ch07b

    dash = ch07b.overlap_dashboard().controls
    for model in dash["model"].options:
        for system in dash["system"].options:
            for nodes in dash["nodes"].options:
                one, three = (ch07b.fsdp_case(model, system, nodes, prefetch=p).exposed_s for p in (1, 3))
                assert three <= one + 1e-12
                if three < 0.99 * one:
                    fwd, ag = _fsdp_parts(model, system, nodes)
                    assert ag > fwd, (model, system, nodes)
                    assert three >= 0.85 * one, (model, system, nodes)  # "at most about 15 % in this dashboard"
    case = [ch07b.fsdp_case("llama3-8b", "dgx-h100", 8, prefetch=p).exposed_s for p in (0, 1, 2)]
    assert case[1] < 0.05 * case[0] and case[2] == pytest.approx(case[1])  # "one layer ahead hides nearly all"
    fwd, ag = _fsdp_parts("llama3-8b", "dgx-h100", 8)
    assert ag < fwd
    # "try the 8B model on 64 NVL72 racks": gathers outlast layers and no depth hides them
    fwd, ag = _fsdp_parts("llama3-8b", "gb200-nvl72", 64)
    deep = [ch07b.fsdp_case("llama3-8b", "gb200-nvl72", 64, prefetch=p).exposed_s for p in (1, 3)]
    assert ag > fwd and deep[1] == pytest.approx(deep[0]) and deep[1] > 0.5
    assert ("when one gather is longer than one layer's compute, the network is the bound: a deeper prefetch trims "
            "only a little of what stays exposed (at most about 15 % in this dashboard) and no depth hides it (try "
            "the 8B model on 64 NVL72 racks)") in cells("07b_overlapping_communication.ipynb")["c010"]


def test_07b_roofline_sides_and_the_efficiency_scaling():
    from nvcourse import rooflines

    C, W = rooflines.gpu_rates("dgx-h100", link="nic")
    assert not rooflines.dp_roofline(8192, C, W, per_node=8).comm_bound  # Llama 3 8B DDP: can hide
    assert rooflines.dp_roofline(8192, C, W, per_node=1).comm_bound      # 70B TP8 + DDP: comm-bound
    ep = rooflines.ep_roofline(2048, C, W, remote_fraction=7 / 8)
    assert ep.comm_bound and ep.threshold > 5 * ep.value                   # "far on the wrong side"
    at55 = rooflines.dp_roofline(8192, 0.55 * C, W, per_node=8).threshold
    assert at55 == pytest.approx(0.55 * rooflines.dp_roofline(8192, C, W, per_node=8).threshold)
    text = cells("07b_overlapping_communication.ipynb")["c016"]
    assert "fall on either side of the line" in text and "the thresholds are 0.55× as large" in text


def test_07b_section_3_yes_by_far_and_section_7_short_answers():
    from nvcourse import rooflines

    # §3: "Yes, by far": at 15 % of the SMs the 25 MiB case exposes many times §2's tail
    sc = _dp()
    at0, at15 = (sc.timeline(25 * 2**20, sm_fraction=f).exposed_s for f in (0.0, 0.15))
    assert at15 > 10 * at0
    assert 'Yes, by far: "fully hidden" communication still costs compute time.' in cells(
        "07b_overlapping_communication.ipynb")["c008"]
    # §7: "FSDP has DP's threshold, Llama 3 70B's MLP can hide on TP 8 over NVLink, and DeepSeek-V3's experts cannot
    # over InfiniBand"
    C, W = rooflines.gpu_rates("dgx-h100", link="nic")
    Cn, Wn = rooflines.gpu_rates("dgx-h100", link="nvlink")
    assert not rooflines.tp_roofline(28672, 8, Cn, Wn).comm_bound
    assert rooflines.ep_roofline(2048, C, W, remote_fraction=7 / 8).comm_bound
    assert ("In short: FSDP has DP's threshold, Llama 3 70B's MLP can hide on TP 8 over NVLink, and DeepSeek-V3's "
            "experts cannot over InfiniBand.") in cells("07b_overlapping_communication.ipynb")["c014"]


# ------------------------------------------------------------------------------------------------ 07b §8 dashboard
def test_07b_dashboard_opens_where_the_questions_assume():
    from nvcourse import overlap
    from nvcourse.chapters import ch07b_overlap as ch07b

    c = ch07b.overlap_dashboard().controls
    assert (c["system"].value, c["nodes"].value, c["model"].value) == ("dgx-h100", 64, "llama3-8b")
    assert c["sm_fraction"].value == overlap.data()["defaults"]["comm_sm_fraction"] == 0.15


def test_07b_predict_answers_1_and_2_are_the_dashboards():
    from nvcourse.chapters import ch07b_overlap as ch07b

    mib, sizes = 2**20, ch07b.BUCKET_CHOICES_MIB
    text = cells("07b_overlapping_communication.ipynb")["c016"]
    w64, w256 = ({m: _wait(_dp(nodes=n).timeline(m * mib, 0.15)) for m in sizes} for n in (64, 256))
    for w in (w64, w256):
        assert w[4] > 0.05 and all(w[m] < 0.010 for m in sizes if m >= 8)
    assert w256[4] > w64[4]
    assert f"waits {w64[4] * 1e3:.0f} ms on 64 nodes and {w256[4] * 1e3:.0f} ms on 256" in text
    assert ch07b.smallest_keeping_up(_dp()) == ch07b.smallest_keeping_up(_dp(nodes=256)) == 8
    dgx = [_wait(_dp("llama3-70b").timeline(m * mib, 0.15)) for m in sizes]
    nvl = {m: _wait(_dp("llama3-70b", "gb200-nvl72").timeline(m * mib, 0.15)) for m in sizes}
    assert min(dgx) >= 0.150 and "at least 150 ms at every bucket size" in text
    assert all(nvl[m] < 0.010 for m in sizes if m >= 16) and nvl[8] > 0.010
    # at 15 % from 16 MiB up; the answer says 25 MiB holds at every share (tests/test_prose_facts_walk_v_e.py)
    assert "at 15 %, 16 MiB too, only through the SM slowdown" in text


def test_07b_predict_answers_3_and_4_are_the_dashboards():
    from nvcourse.chapters import ch07b_overlap as ch07b

    text = cells("07b_overlapping_communication.ipynb")["c016"]
    f = [ch07b.fsdp_case("llama3-8b", "dgx-h100", 64, prefetch=p, sm_fraction=0.15).exposed_s for p in range(4)]
    assert 5.5 < f[0] / f[1] < 6.5 and f[3] == pytest.approx(f[1])
    assert f"({f[0] * 1e3:.0f} ms → {f[1] * 1e3:.0f} ms)" in text
    tp = {c: ch07b.tp_case("llama3-8b", "dgx-h100", 8, chunks=c, sm_fraction=0.15).exposed_s for c in range(1, 9)}
    best = min(tp, key=tp.get)
    assert best == 3 and f"3 chunks ({tp[3] * 1e6:.0f} µs exposed)" in text
    at30 = {c: ch07b.tp_case("llama3-8b", "dgx-h100", 8, chunks=c, sm_fraction=0.3).exposed_s for c in (1, 2)}
    assert at30[2] > at30[1] and "at 30 %, 2 chunks are slower than no split at all" in text


def test_07b_more_sms_taken_never_speeds_a_split_gemm():
    from nvcourse.chapters import ch07b_overlap as ch07b

    c = ch07b.overlap_dashboard().controls
    shares = [round(x, 2) for x in (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3)]
    for model in c["model"].options:
        for system in c["system"].options:
            for chunks in range(1, 9):
                exp = [ch07b.tp_case(model, system, 8, chunks=chunks, sm_fraction=f).exposed_s for f in shares]
                if chunks == 1:
                    assert max(exp) == pytest.approx(min(exp))
                else:
                    assert all(b >= a - 1e-12 for a, b in zip(exp, exp[1:])), (model, system, chunks)


def test_07b_ddp_hint_matches_the_timeline_in_every_dashboard_state():
    """"buckets ≥ X MiB keep up with the backward": every offered size from X up does, the one below does not."""
    import re as _re

    from nvcourse.chapters import ch07b_overlap as ch07b

    c = ch07b.overlap_dashboard().controls
    sizes = ch07b.BUCKET_CHOICES_MIB
    for model in c["model"].options:
        for system in c["system"].options:
            for nodes in c["nodes"].options:
                sc = _dp(model, system, nodes)
                hint = ch07b.bucket_hint(sc)
                if sc.gpus_per_node * sc.nodes == 1:
                    assert "no gradient all-reduce" in hint
                    continue
                keeps = {m: sc.timeline(m * 2**20).comm_s <= sc.backward_s for m in sizes}
                if m := _re.search(r"buckets ≥ (\d+) MiB keep up", hint):
                    first = int(m.group(1))
                    assert all(keeps[s] for s in sizes if s >= first)
                    assert first == sizes[0] or not keeps[sizes[sizes.index(first) - 1]]
                else:
                    assert "no offered bucket size keeps up" in hint and not keeps[sizes[-1]]


def test_07b_dashboard_renders_every_ddp_state_without_a_note():
    from nvcourse.chapters import ch07b_overlap as ch07b

    dash = ch07b.overlap_dashboard()
    texts = {}
    for model in ("llama3-8b", "llama3-70b"):
        for nodes in (1, 2):
            fig, texts[model, nodes] = dash._render(scenario=ch07b._SCENARIOS[0], model=model, system="dgx-h100",
                                                    nodes=nodes, bucket_mib=25, prefetch=1, chunks=4, sm_fraction=0.15)
            assert "exposed" in texts[model, nodes]
            plt.close(fig)
    alone = texts["llama3-70b", 1]  # TP 8 fills the node: one replica, nothing to all-reduce
    assert "one data-parallel replica" in alone and "no communication" in alone and "overlapped" not in alone


# ------------------------------------------------------------------------------------------------ 07b §5-§7 words
def test_07b_words_are_defined_or_linked_where_first_used():
    c = cells("07b_overlapping_communication.ipynb")
    assert "glossary.md#cuda-stream) (a queue of GPU work that runs in order)" in c["c000"]
    assert "[streaming multiprocessors](../docs/glossary.md#sm)" in c["c000"]  # objectives: the first "SMs"
    assert "[thread block](../docs/glossary.md#thread-block) (a group of threads that runs on one SM)" in c["c006"]
    assert "**FFN** ([feed-forward network](../docs/glossary.md#ffn))" in c["c014"]
    assert "**column-parallel**" in c["c010"] and "**row-parallel**" in c["c010"]


def test_07b_roofline_symbols_are_all_defined_and_b_is_only_the_batch():
    text = cells("07b_overlapping_communication.ipynb")["c014"]
    # DP's symbols in the DP paragraphs, the others in the toggle's list, all before the four-row table
    table = text[text.index("| parallelism |"):text.index("**FSDP** moves")]
    legend = text[text.index("**DP**, the case to remember"):text.index("| parallelism |")]
    for sym in ("P", "T", "r", "t", "h", "F", "m", "k", r"\rho", "F_e"):
        assert f"${sym}$" in legend, sym
    before = text[:text.index("**DP**, the case to remember")]
    assert "$C$" in before and "$W$" in before
    assert "b" not in re.sub(r"\\frac|\\rho|\\cdot|\\ge|\\times", "", "".join(re.findall(r"\$[^$]+\$", table)))
    assert r"$b$ sequences of $s$ tokens" in cells("07b_overlapping_communication.ipynb")["c012"]


def test_07b_roofline_worked_numbers_are_the_models():
    from nvcourse import rooflines

    text = cells("07b_overlapping_communication.ipynb")["c014"]
    C, W = rooflines.gpu_rates("dgx-h100", link="nic")
    Cn, Wn = rooflines.gpu_rates("dgx-h100", link="nvlink")
    spec = training.get_model("llama3-70b")
    dp = rooflines.dp_roofline(8192, C, W, per_node=8).threshold
    tp = rooflines.tp_roofline(spec.ffn_hidden, 8, Cn, Wn)
    ep = rooflines.ep_roofline(2048, C, W, remote_fraction=7 / 8)
    assert f"$C/W$ is {C / W:,.0f} tokens" in text and f"{C / W:,.0f} / 8 ≈ {dp:,.0f} tokens" in text
    assert f"$C/W$ = {Cn / Wn:,.0f}: $2 \\cdot 7/3 \\times$ {Cn / Wn:,.0f} = {tp.threshold:,.0f}" in text
    assert f"($F$ = {spec.ffn_hidden:,})" in text and not tp.comm_bound
    assert ep.threshold == pytest.approx(2 * 7 / 8 * C / (3 * W))  # F_e >= 2 rho C/(mW), 2 bytes per value
    assert f"$2 \\cdot 7/8 / 3 \\times$ {C / W:,.0f} = {ep.threshold:,.0f}, about six times" in text
    assert round(ep.threshold / 2048) == 6


def test_07b_ring_attention_threshold_in_words_and_one_number():
    from nvcourse import overlap, rooflines

    text = cells("07b_overlapping_communication.ipynb")["c012"]
    spec = training.get_model("llama3-70b")
    assert (spec.hidden, spec.kv_heads * spec.head_dim) == (8192, 1024)
    assert "$h = 8192$ and $h_{kv} = 1024$ (8 key/value heads of 128)" in text
    C, W = rooflines.gpu_rates("dgx-h100", link="nvlink", efficiency=0.55)
    r = overlap.cp_ring_attention(seq=8192, cp=8, hidden=8192, kv_hidden=1024, flops_per_s=C, link_Bps=W)
    assert r["threshold_tokens_per_gpu"] == pytest.approx(1024 / (0.5 * 8192) * C / W)  # the formula as written
    thr = r["threshold_tokens_per_gpu"]
    assert f"$C/W \\approx$ {C / W:,.0f} tokens, so the send hides from about {thr:.0f}" in text
    assert r"\frac{h_{kv}}{\kappa\,h}\cdot\frac{C}{W}" in text


# ------------------------------------------------------------------------------------------------ 07: words
def test_07_defines_gemm_and_pue_where_first_used():
    nb = json.loads((ROOT / "notebooks" / "07_training_at_scale.ipynb").read_text(encoding="utf-8"))
    md = [re.sub(r"\s+", " ", "".join(c["source"])) for c in nb["cells"] if c["cell_type"] == "markdown"]
    gemm = next(s for s in md if re.search(r"\bGEMMs?\b", s))
    assert "[GEMM](../docs/glossary.md#gemm) (general matrix multiply)" in gemm
    assert gemm.index("[GEMM]") <= min(m.start() for m in re.finditer(r"\bGEMMs?\b", gemm)) + 1
    pue = next(s for s in md if re.search(r"\bPUE\b", s))
    assert "(PUE, [power usage effectiveness](../docs/glossary.md#pue): a data centre's total power over its IT" \
        " equipment's)" in pue


def test_07b_section_3_announces_the_dashboards_default_exposed_time():
    from nvcourse.units import format_time

    sc = _dp()
    at0, at15 = (sc.timeline(25 * 2**20, sm_fraction=f) for f in (0.0, 0.15))
    text = cells("07b_overlapping_communication.ipynb")["c008"]
    assert (f"shows {format_time(at15.exposed_s)} exposed for the 25 MiB case that §2 put at "
            f"{format_time(at0.exposed_s)}: the difference is the SM slowdown") in text
    assert at15.exposed_s - at0.exposed_s == pytest.approx(at15.slowdown_s, rel=0.05)
    from nvcourse.chapters import ch07b_overlap as ch07b

    c = ch07b.overlap_dashboard().controls
    assert (c["model"].value, c["nodes"].value, c["sm_fraction"].value) == ("llama3-8b", 64, 0.15)


def test_07b_tp_overlap_claims_say_the_sm_share_they_hold_at():
    # §5's table (70B, TP 8, DGX H100): exposed 111/70 µs with no SMs taken and 267/226 µs at 15 % against no split's
    # 349 µs; under half of no split up to about 7/11 % (in the toggle); slower than no split from about 21/24 %,
    # "and above 24 % every split is" (every chunk count the dashboard offers, at every slider step above 24 %)
    from nvcourse.chapters import ch07b_overlap as ch07b

    def tp(c, f=0.0):
        return ch07b.tp_case("llama3-70b", "dgx-h100", 8, chunks=c, sm_fraction=f).exposed_s

    def lim(c, x):
        return ch07b.tp_sm_limit("llama3-70b", "dgx-h100", 8, chunks=c, exposed_share=x)

    def us(x):
        return f"{x * 1e6:.0f} µs"

    c011, c012 = (cells("07b_overlapping_communication.ipynb")[k] for k in ("c011", "c012"))
    assert "setting=ch.tp_setting(chunks=4, sm_fraction=0.15)" in c011
    assert ch07b.tp_setting(4, 0.15) == "4 chunks, 15 % of the SMs taken by communication"
    details = ch07b.tp_split_details_html("llama3-70b", "dgx-h100", 8)  # the printout, behind c011's toggle
    assert "tp_split_details_html(" in c011 and details.startswith("<details>")
    assert "less than no split" in details and "of the communication hidden" not in details  # one quantity, named
    assert f"Judge a split by its exposed time against no split ({us(tp(1))} here)" in c012
    assert f"| exposed, no SMs taken | {us(tp(4))} | {us(tp(8))} |" in c012
    assert f"| exposed, 15 % taken (the figure) | {us(tp(4, 0.15))} | {us(tp(8, 0.15))} |" in c012
    assert [us(tp(1)), us(tp(4)), us(tp(8)), us(tp(4, .15)), us(tp(8, .15))] == \
        ["349 µs", "111 µs", "70 µs", "267 µs", "226 µs"]
    half, even = (lim(4, 0.5), lim(8, 0.5)), (lim(4, 1), lim(8, 1))
    for c, h, e in zip((4, 8), half, even, strict=True):  # the halving shares sit in the toggle, named in c012
        assert f"{c} chunks halve the unsplit exposed time up to {h:.0%} of SMs taken, beat no split up to {e:.0%}" in \
            details
    assert "The toggle above the figure gives every chunk count, and the shares of SMs up to which a split" in c012
    assert (f"4 chunks are slower than no split from about {even[0]:.0%} of the SMs taken, 8 chunks from about "
            f"{even[1]:.0%}").replace("%", " %") in c012
    assert [f"{x:.0%}" for x in half + even] == ["7%", "11%", "21%", "24%"]
    assert ("4 chunks are slower than no split from about 21 % of the SMs taken, 8 chunks from about 24 %, and "
            "above 24 % every split is.") in c012
    assert "every split is slower than no split" not in c012  # the old wording, false between 21 % and 24 %
    # the dashboard's SM slider (0..30 %): above the largest break-even no chunk count beats no split; below it one does
    dash = ch07b.overlap_dashboard().controls
    chunks = range(dash["chunks"].min, dash["chunks"].max + 1)
    steps = [round(dash["sm_fraction"].min + i * dash["sm_fraction"].step, 2)
             for i in range(round((dash["sm_fraction"].max - dash["sm_fraction"].min) / dash["sm_fraction"].step) + 1)]
    for f in steps:
        if f > 0.24:
            assert all(tp(c, f) > tp(1) for c in chunks if c > 1), f
    assert f"{max(lim(c, 1) for c in chunks if c > 1):.0%}" == "24%" and max(lim(c, 1) for c in chunks if c > 1) <= 0.24
    assert tp(8, 0.22) < tp(1) < tp(4, 0.22)  # between the two break-evens one split still wins


def test_07b_more_sms_taken_moves_waiting_into_sm_slowdown_in_every_ddp_state():
    # §8: "Raising "SMs taken by comm" in the DDP scenario never lowers the exposed time, but it can lower *waiting
    # for communication* ... (Llama 3 8B, 64 nodes, 4 MiB buckets: waiting 143 → 58 → 0.2 ms at 0, 15 and 30 %,
    # exposed 143 → 143 → 187 ms)."
    from nvcourse.chapters import ch07b_overlap as ch07b

    dash = ch07b.overlap_dashboard().controls
    shares = [round(0.05 * i, 2) for i in range(7)]
    assert (dash["sm_fraction"].min, dash["sm_fraction"].max) == (0.0, 0.3)
    for model in dash["model"].options:
        for system in dash["system"].options:
            for nodes in dash["nodes"].options:
                sc = _dp(model, system, nodes)
                for mib in dash["bucket_mib"].options:
                    tls = [sc.timeline(mib * 2**20, f) for f in shares]
                    for a, b in zip(tls, tls[1:], strict=False):
                        assert _wait(b) <= _wait(a) + 1e-9 and b.exposed_s >= a.exposed_s - 1e-9
    tls = [_dp().timeline(4 * 2**20, f) for f in (0.0, 0.15, 0.3)]
    assert [f"{_wait(t) * 1e3:.1f}" for t in tls] == ["142.6", "57.5", "0.2"]
    assert [f"{t.exposed_s * 1e3:.0f}" for t in tls] == ["143", "143", "187"]
    text = " ".join(cells("07b_overlapping_communication.ipynb").values())
    assert "Llama 3 8B, 64 nodes, 4 MiB buckets: | SMs taken by comm | 0 % | 15 % | 30 % |" in text
    assert "| waiting for communication | 143 ms | 58 ms | 0.2 ms |" in text
    assert "| exposed | 143 ms | 143 ms | 187 ms |" in text
    assert "the exposed time moves from *waiting* into *SM slowdown*" in text


# ------------------------------------------------------------------------------------------ memory assumes ZeRO-1
def test_memory_model_states_its_distributed_optimizer_assumption():
    """07, 07b and 09 say the memory model assumes a distributed optimizer (ZeRO-1), the model's default; and plain
    DDP (ZeRO-0) would not fit the 8B model's 16 bytes per parameter on an 80 GB GPU."""
    from nvcourse.capstone import Design
    from nvcourse.training.step_config import Recipe

    assert Recipe().zero_stage == 1
    assert Design.__dataclass_fields__["zero_stage"].default == 1
    ch07_text = " ".join(cells("07_training_at_scale.ipynb").values())
    assert "the model assumes a distributed optimizer (ZeRO-1: Adam's states sharded over data-parallel" in ch07_text
    assert "https://arxiv.org/abs/1910.02054" in ch07_text
    assert "plain [DDP](../docs/glossary.md#ddp) holds 16 bytes per parameter of its share" in ch07_text
    assert training.memory.BYTES_PER_PARAM == 16
    assert training.training_memory_bytes(8e9, zero_stage=0).total / 1e9 > 80
    assert "8B with DP and a distributed optimizer (ZeRO-1" in " ".join(
        cells("07b_overlapping_communication.ipynb").values())
    assert "pure DDP" not in " ".join(cells("07b_overlapping_communication.ipynb").values())
    assert "the memory gate, like chapter 07, assumes a distributed optimizer, ZeRO-1" in " ".join(
        cells("09_capstone_design_a_cluster.ipynb").values())
