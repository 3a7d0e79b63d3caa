"""Chapter 04b's dashboard draws what the cost model predicts, and only offers valid combinations."""

import io

import numpy as np
import pytest
from PIL import Image

from nvcourse import catalog
from nvcourse.chapters.ch04b_predicting import SIZES, TIME_LIMITS_S, BUSBW_LIMITS_Bps, SweepView, predict_dashboard
from nvcourse.costmodel import OPERATIONS, algorithms, predict, predict_sweep


def _pixels(live) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(live.png())))


def test_curves_are_the_models_sweeps():
    view = SweepView()
    live, text = view("allreduce", "nccl", "dgx-a100", 8, 2)
    sweep = predict_sweep("allreduce", "dgx-a100", 8, SIZES, nodes=2, algo="nccl")
    np.testing.assert_allclose(view.chosen.get_ydata(), sweep.time_s)
    shown = {name for name, line in view.lines.items() if line.get_visible()}
    assert shown == set(algorithms("allreduce", "dgx-a100", 8, 2))
    for name in shown:  # each algorithm's curve is its own sweep (fastest protocol at every size)
        own = predict_sweep("allreduce", "dgx-a100", 8, SIZES, nodes=2, algo=name).time_s
        np.testing.assert_allclose(view.lines[name].get_ydata(), own)
    picked = {str(a) for a in sweep.algo}
    assert {name for name, pts in view.points.items() if pts.get_visible()} == picked
    total = sum(len(pts.get_xdata()) for pts in view.points.values() if pts.get_visible())
    assert total == len(SIZES)
    p = predict("allreduce", "dgx-a100", 8, 2**30, nodes=2, algo="nccl")
    assert f"busbw {p.busbw_GBps:.1f} GB/s" in text and p.algo in text


def test_fixed_axes_hold_every_combination_the_controls_offer():
    """The axes never rescale, so every time and busbw the dashboard can show must fit inside them."""
    lo_t, hi_t = TIME_LIMITS_S
    lo_b, hi_b = BUSBW_LIMITS_Bps
    for op in OPERATIONS:
        for sid, s in catalog.systems().items():
            for nodes in (1, 256):
                for g in {2, max(s.gpus_per_host, s.gpus_per_domain)}:
                    full = predict_sweep(op, sid, g, SIZES, nodes=nodes, algo="auto")
                    times = np.concatenate(list(full.times_by_algo.values()))
                    assert lo_t <= times.min() and times.max() <= hi_t, (op, sid, g, nodes)
                    busbw = full.busbw_GBps[full.busbw_GBps > 0] * 1e9
                    assert lo_b <= busbw.min() and busbw.max() <= hi_b, (op, sid, g, nodes)


def test_updated_view_draws_what_a_fresh_one_draws():
    view = SweepView()
    for state in [("allreduce", "nccl", "dgx-h100", 8, 1), ("alltoall", "auto", "gb200-nvl72", 72, 1),
                  ("broadcast", "nccl", "pcie-8gpu", 8, 64)]:
        view(*state)[0].png()
    live, text = view("reducescatter", "auto", "dgx-a100", 8, 2)
    fresh, fresh_text = SweepView()("reducescatter", "auto", "dgx-a100", 8, 2)
    assert text == fresh_text
    assert np.array_equal(_pixels(live), _pixels(fresh))
    assert live.full_draws == 1


def test_dashboard_keeps_controls_valid():
    d = predict_dashboard()
    d.controls["system"].value = "gb200-nvl72"
    assert d.controls["gpus"].max == 72
    d.controls["gpus"].value = 72
    d.controls["system"].value = "dgx-a100"  # 72 GPUs no longer fit: clamped to 8
    assert d.controls["gpus"].value == 8 and d.last_error is None
    d.controls["op"].value = "alltoall"
    assert set(d.controls["algo"].options) == {"auto", *algorithms("alltoall", "dgx-a100", 8, 1)}
    d.controls["nodes"].value = 256
    assert d.last_error is None and "256" in d.readout.value
    with pytest.raises(ValueError):
        SweepView()("allreduce", "ring", "dgx-h100", 8, 0)


def test_protocol_kinks_figure_draws_the_published_sweep():
    from nvcourse.chapters.ch04b_predicting import protocol_kinks_figure
    from nvcourse.costmodel import sweeps

    kinks = protocol_kinks_figure()
    published = [p for p in sweeps.points() if p.sweep == "azure-nd-gb200-v6-allreduce-4gpu"]
    assert len(kinks.axes[0].lines[0].get_xdata()) == len(published)  # the measured points, one marker each


def test_registered_buffers_draw_the_symmetric_kernels_where_nccl_runs_them():
    from nvcourse.chapters.ch04b_predicting import symmetric_times

    view = SweepView()
    live, text = view("allreduce", "auto", "dgx-h100", 8, 1, "device", "registered")
    expected = [predict("allreduce", "dgx-h100", 8, float(s), registered=True).time_s for s in SIZES]
    assert view.symmetric.get_visible()
    np.testing.assert_allclose(view.symmetric.get_ydata(), expected)
    assert "Registered buffers (dashed): 8 B" in text and "AGxLL" in text
    for state in [("allreduce", "auto", "dgx-a100", 8, 1), ("broadcast", "auto", "dgx-h100", 8, 1),
                  ("allreduce", "auto", "dgx-h100", 8, 2)]:
        live, text = view(*state, "device", "registered")
        assert not view.symmetric.get_visible() and "no symmetric kernel here (" in text
        assert symmetric_times(*state[:1], *state[2:]) is None
    live, text = view("allreduce", "auto", "dgx-h100", 8, 1, "device", "plain")
    assert not view.symmetric.get_visible() and "Registered" not in text
    fresh, _ = SweepView()("allreduce", "auto", "dgx-h100", 8, 1)
    assert np.array_equal(_pixels(live), _pixels(fresh))  # switching back leaves nothing behind


def test_readout_is_a_short_table_with_the_rest_collapsed():
    from nvcourse.units import format_time

    for state in [("allreduce", "auto", "dgx-h100", 8, 1), ("alltoall", "auto", "dgx-a100", 8, 64)]:
        _, text = SweepView()(*state)
        head, rest = text.split("<details>")
        assert head.count("<tr>") == 3  # a header and two rows: 8 B and 1 GiB
        for size in (8, 2**30):
            p = predict(state[0], state[2], state[3], size, nodes=state[4], algo=state[1])
            assert f"{p.algo}/{p.proto}" in head and format_time(p.time_s) in head
        assert "algbw" not in head and "algbw" in rest and rest.endswith("</details>")
        # the sentence under the table says whether the pick changes between the two sizes
        small, big = (predict(state[0], state[2], state[3], size, nodes=state[4], algo=state[1]) for size in (8, 2**30))
        changes = (small.algo, small.proto) != (big.algo, big.proto)
        assert ("Look at how the pick changes from 8 B to 1 GiB" in head) == changes
        assert ("The pick is the same at both sizes" in head) == (not changes)


def test_building_blocks_table_shows_b_and_the_ring_and_folds_the_nics_and_alpha():
    # section 2: "Compare the ring column with $B$: equal everywhere but on the PCIe server."
    import json
    import re
    from pathlib import Path

    from nvcourse.chapters.ch04b_predicting import BUILDING_BLOCK_SYSTEMS, building_blocks_html
    from nvcourse.costmodel import configure
    from nvcourse.units import format_rate, format_time

    head, rest = building_blocks_html().split("<details>")
    assert head.count("<tr>") == 1 + len(BUILDING_BLOCK_SYSTEMS) and "NICs per GPU" not in head
    assert "NICs per GPU" in rest and "α per step (Simple)" in rest and rest.endswith("</details>")
    for sid in BUILDING_BLOCK_SYSTEMS:
        s = catalog.get_system(sid)
        c = configure(sid, max(s.gpus_per_host, s.gpus_per_domain))
        assert format_rate(c.dom.gpu_Bps) in head and format_rate(c.dom.ring_Bps) in head
        assert format_rate(c.nic_Bps_per_gpu) in rest and format_time(c.dom.alpha_s) in rest
        assert (abs(c.dom.ring_Bps - c.dom.gpu_Bps) < 1e-6 * c.dom.gpu_Bps) == (sid != "pcie-8gpu"), sid
    nb = json.loads((Path(__file__).parents[1] / "notebooks" / "04b_predicting_collectives.ipynb").read_text())
    md = {c["id"]: re.sub(r"\s+", " ", "".join(c["source"])) for c in nb["cells"]}
    assert "Compare the ring column with $B$: equal everywhere but on the PCIe server." in md["b4c06a01"]
    assert "ch.building_blocks_html()" in md["c005"]
