"""Chapter 08's goodput dashboard: what it draws and says comes from nvcourse.reliability."""

import io

import numpy as np
import pytest
from PIL import Image

from nvcourse import reliability as rel
from nvcourse.chapters import ch08_reliability as rv


def _pixels(live) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(live.png())))


def test_markers_and_readout_are_the_models_young_and_daly_intervals():
    view = rv.GoodputView()
    live, text = view(16384, 60, 10, 1.0)
    mtbf_s = rel.cluster_mtbf_hours(16384) * 3600
    daly = rel.daly_interval(60, mtbf_s)
    assert view.daly.get_xdata()[0] == pytest.approx(daly / 60)
    assert view.young.get_xdata()[0] == pytest.approx(rel.young_interval(60, mtbf_s) / 60)
    tau, best = rel.best_goodput(checkpoint_s=60, restart_s=600, mtbf_s=mtbf_s)
    assert view.daly.get_ydata()[0] == pytest.approx(best)
    assert f"best goodput {best:.1%}" in text and f"MTBI {mtbf_s / 3600:.2f} h" in text
    # the curve peaks where Daly says (within the plotted grid's resolution)
    curve = np.asarray(view.curve.get_ydata())
    assert curve.max() == pytest.approx(best, rel=1e-3)
    assert [t.get_text() for t in view.legend.get_texts()] == [f"Young: {rel.young_interval(60, mtbf_s) / 60:.0f} min",
                                                                f"Daly: {daly / 60:.0f} min"]


def test_more_gpus_or_more_failures_lower_the_best_goodput():
    view = rv.GoodputView()
    best = [float(view.daly.get_ydata()[0]) for g in (1024, 16384, 131072) if view(g, 60, 10, 1.0)]
    assert best[0] > best[1] > best[2]
    assert view(16384, 60, 10, 3.0)[0] and view.daly.get_ydata()[0] < best[1]


def test_updated_view_draws_what_a_fresh_one_draws_and_only_once():
    view = rv.GoodputView()
    for state in [(64, 5, 1, 0.1), (131072, 1200, 120, 10.0), (2048, 300, 30, 1.0)]:
        view(*state)[0].png()
    live, text = view(8192, 120, 20, 2.0)
    fresh, fresh_text = rv.GoodputView()(8192, 120, 20, 2.0)
    assert text == fresh_text
    assert np.array_equal(_pixels(live), _pixels(fresh))
    assert live.full_draws == 1


def test_dashboard_offers_only_valid_states():
    d = rv.goodput_dashboard()
    for g in rv.GPU_COUNTS[:: 3]:
        d.controls["gpus"].value = g
        assert d.last_error is None
    d.controls["rate_factor"].value = 10.0
    d.controls["checkpoint_s"].value = 1200
    assert d.last_error is None and "best goodput" in d.readout.value


def test_mtbf_figure_is_one_over_n_lambda_and_prints_the_largest_job():
    import matplotlib.pyplot as plt
    from figure_audit import figure_problems

    fig, text = rv.mtbf_figure()
    try:
        ax = fig.axes[0]
        (line,) = ax.lines
        assert list(line.get_xdata()) == [2**k for k in range(3, 18)]
        assert list(line.get_ydata()) == pytest.approx([rel.cluster_mtbf_hours(2**k) for k in range(3, 18)])
        assert [t.get_text() for t in ax.texts] == [f"{rel.cluster_mtbf_hours(n):.2g} h" for n in (1024, 16384, 131072)]
        assert ax.get_xlabel() == "GPUs in the job" and ax.get_ylabel() == "mean time between interruptions (h)"
        assert figure_problems(fig) == []
    finally:
        plt.close(fig)
    assert text == f"131,072 GPUs: one interruption every {rel.cluster_mtbf_hours(131072) * 60:.0f} min"
    assert text == "131,072 GPUs: one interruption every 23 min"  # the chapter's prose quotes it


def test_goodput_by_size_figure_falls_with_size_and_rises_with_faster_recovery():
    import matplotlib.pyplot as plt
    from figure_audit import figure_problems

    fig = rv.goodput_by_size_figure()
    try:
        ax = fig.axes[0]
        assert [t.get_text() for t in ax.get_legend().get_texts()] == [
            "checkpoint 300 s with restart 30 min",
            "checkpoint 60 s with restart 10 min",
            "checkpoint 10 s with restart 2 min",
        ]
        mtbf_s = rel.cluster_mtbf_hours(16384) * 3600
        i = list(rv.JOB_SIZES).index(16384)
        assert ax.lines[1].get_ydata()[i] == pytest.approx(
            rel.best_goodput(checkpoint_s=60, restart_s=600, mtbf_s=mtbf_s)[1]
        )
        curves = [np.asarray(line.get_ydata()) for line in ax.lines]
        assert all(np.all(np.diff(c) < 0) for c in curves)  # more GPUs, more interruptions
        assert np.all(curves[0] < curves[1]) and np.all(curves[1] < curves[2])
        assert ax.get_ylabel() == "goodput at the best interval"
        assert figure_problems(fig) == []
    finally:
        plt.close(fig)


def test_hero_busbw_figure_is_the_straggler_model_at_half_speed():
    import matplotlib.pyplot as plt
    from figure_audit import figure_problems

    nodes = (2, 16, 1024)
    fig = rv.hero_busbw_figure(nodes=nodes)
    try:
        ax = fig.axes[0]
        assert [t.get_text() for t in ax.get_legend().get_texts()] == [
            "q = 0.0001 per link",
            "q = 0.001 per link",
            "q = 0.01 per link",
        ]
        for line, (q, _) in zip(ax.lines, rv.DEGRADED_LINK_PROBABILITIES, strict=True):
            assert list(line.get_xdata()) == list(nodes)
            assert list(line.get_ydata()) == pytest.approx(
                [1 / rel.straggler_slowdown(n, p_slow=q, slow_factor=2.0) for n in nodes]
            )
        # q = 1 %: two nodes see almost the hero number, 1,024 nodes about half of it
        assert ax.lines[2].get_ydata()[0] > 0.98 and ax.lines[2].get_ydata()[-1] < 0.51
        assert ax.get_xlabel() == "nodes in the ring" and ax.get_ylabel() == "expected busbw / hero busbw"
        assert figure_problems(fig) == []
    finally:
        plt.close(fig)


def test_drift_alert_figure_colours_each_day_by_the_rule_and_names_the_first_alerts():
    import matplotlib.pyplot as plt
    from figure_audit import figure_problems
    from matplotlib.colors import to_hex

    rule = rel.alerts()[0]
    fig, text = rv.drift_alert_figure(days=60, seed=7)
    try:
        ax = fig.axes[0]
        (points,) = ax.collections
        values = points.get_offsets()[:, 1]
        assert len(values) == 60
        levels = [rel.evaluate_alert(rule, v) for v in values]
        assert [to_hex(c) for c in points.get_facecolors()] == [rv.ALERT_COLOURS[lvl].lower() for lvl in levels]
        assert [line.get_ydata()[0] for line in ax.lines] == [rule.warn, rule.critical]
        assert [t.get_text() for t in ax.get_legend().get_texts()] == [
            f"warn < {rule.warn}",
            f"critical < {rule.critical}",
        ]
        assert figure_problems(fig) == []
    finally:
        plt.close(fig)
    assert text == f"first warning on day {levels.index('warn')} · first critical on day {levels.index('critical')}"
    assert text == "first warning on day 35 · first critical on day 51"  # the chapter's seed, quoted in its prose
    fig, text = rv.drift_alert_figure(days=15)  # before the drift starts: noise only, no alert
    plt.close(fig)
    assert text == "first warning on day None · first critical on day None"


def test_quiet_failure_lines_take_the_link_from_the_catalog():
    from nvcourse import catalog

    lines = rv.quiet_failure_lines()
    lk = catalog.get_link("ib-ndr")
    achievable = lk.line_GBps_dir * lk.efficiency
    assert lines[0] == f"ib-ndr: α {lk.alpha_s * 1e6:g} µs, achievable {achievable:.0f} GB/s per direction"
    beta = lk.line_GBps_dir * lk.efficiency * 1e9
    half = rel.degraded_link_slowdown(2**30, 64, alpha_s=lk.alpha_s, beta_Bps=beta, slowest_link_factor=0.5)
    assert f"takes {half:.2f}x longer" in lines[2]
    assert lines[-1].startswith("8 GPUs, 2 % jitter simulated")


def test_alert_and_signal_tables():
    t = rv.alerts_table_html()
    assert t.count("<tr>") == len(rel.alerts()) + 1 and "&gt; 1.05" in t and "&gt; 1.1" in t and "≥ 1.05" not in t
    assert "overflow-wrap:anywhere" in rv.signals_table_html()


def test_fault_message_names_the_rank_and_the_call_but_no_process_id():
    from nvcourse.collectives import CollectiveError, Fault, ProcessGroup

    with pytest.raises(CollectiveError) as caught, ProcessGroup(2, timeout_s=30) as pg:
        pg.run("allreduce", nbytes="64KiB", algo="ring", iters=1, warmup=0, fault=Fault(rank=1, step=1, action="kill"))
    raw, shown = str(caught.value), rv.fault_message(caught.value)
    assert "pid" in raw and "pid" not in shown
    assert shown.startswith("rank 1 died") and "during allreduce" in shown
    hang = CollectiveError("allreduce timed out: no progress for 1 s; ranks [0, 1] did not finish "
                           "(pids [31, 32]; steps done per rank [3, 2])")
    assert rv.fault_message(hang) == ("allreduce timed out: no progress for 1 s; ranks [0, 1] did not finish "
                                      "(steps done per rank [3, 2])")


def test_the_gpu_line_is_the_six_rows_the_prose_names():
    import json
    import re
    from pathlib import Path

    nb = json.loads((Path(__file__).resolve().parents[1] / "notebooks" / "08_reliability_and_operations.ipynb")
                    .read_text(encoding="utf-8"))
    text = re.sub(r"\s+", " ", next("".join(c["source"]) for c in nb["cells"] if c["id"] == "c004"))
    r = rel.failure_record()
    gpu_rows = [(name, n) for name, cat, n in r.causes if cat == "gpu"]
    assert len(gpu_rows) == 6 and "adds up six rows" in text
    words = {"Faulty GPU": '"faulty GPU" (148', "HBM3": "HBM3 memory (72)", "SRAM": "SRAM (19)",
             "system processor": "system processor (17)", "Silent data": "silent data corruption (6)",
             "thermal": "thermal interface (6)"}
    for name, n in gpu_rows:
        said = next(v for k, v in words.items() if k in name)
        assert said in text and str(n) in said
    network = sum(n for _, cat, n in r.causes if cat == "network") / r.unexpected_interruptions
    assert 0.09 <= network <= 0.11 and "about one interruption in ten" in text
    assert "the table prints" not in text  # the paper's misprinted share is not retyped; the counts are used
