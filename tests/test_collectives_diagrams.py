"""Collective pictures (collectives.draw), the ring replay (collectives.draw_ring) and chapter 04's module."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest

from nvcourse.chapters import ch04_collectives as lab
from nvcourse.collectives import LinkEmulation, ProcessGroup, model
from nvcourse.collectives.draw import COLLECTIVES, Block, collective_blocks, draw_collective, draw_collectives
from nvcourse.collectives.draw_ring import RingReplay, draw_ring_step, render_ring, ring_states


# -- diagrams --------------------------------------------------------------------------------------
def test_allreduce_gives_everyone_the_sum():
    before, after = collective_blocks("allreduce", 4)
    assert before[2] == [Block((2,), c) for c in range(4)]
    assert all(after[r] == [Block((0, 1, 2, 3), c) for c in range(4)] for r in range(4))


def test_reducescatter_and_allgather_compose_to_allreduce():
    _, rs = collective_blocks("reducescatter", 3)
    assert rs[1] == [None, Block((0, 1, 2), 1), None]
    before_ag, after_ag = collective_blocks("allgather", 3)
    assert before_ag[2] == [None, None, Block((2,), 2)]
    assert after_ag[0] == [Block((0,), 0), Block((1,), 1), Block((2,), 2)]


def test_alltoall_is_a_transpose_and_rooted_ops():
    before, after = collective_blocks("alltoall", 4)
    for r in range(4):
        for j in range(4):
            assert after[r][j] == before[j][r]
    _, red = collective_blocks("reduce", 4)
    assert red[0][3] == Block((0, 1, 2, 3), 3) and red[1] == [None] * 4
    b_before, b_after = collective_blocks("broadcast", 2)
    assert b_before[1] == [None, None] and b_after[1] == b_before[0]


def test_labels_and_errors():
    assert Block((1,), 2).label(4) == "B2"
    assert Block((0, 2), 1).label(4) == "AC1"
    assert Block((0, 1, 2, 3), 0).label(4) == "Σ0"
    with pytest.raises(ValueError, match="op must be one of"):
        collective_blocks("gather")
    with pytest.raises(ValueError, match="nprocs"):
        collective_blocks("allreduce", 1)


def test_drawings_render():
    fig = draw_collectives()
    assert len(fig.axes) == len(COLLECTIVES)
    plt.close(fig)
    ax = draw_collective("alltoall", 3)
    assert "all-to-all" in ax.get_title()
    plt.close(ax.figure)


# -- ring replay -----------------------------------------------------------------------------------
def test_ring_states_follow_reduce_scatter_then_all_gather():
    p = 4
    states, written = ring_states(p, 64)
    assert len(states) == 2 * (p - 1) + 1 and len(written) == 2 * (p - 1)
    assert states[0][2] == [Block((2,), c) for c in range(p)]
    # after p-1 steps each rank holds exactly one complete chunk (reduce-scatter)
    full = [[c for c, b in enumerate(states[p - 1][r]) if len(b.sources) == p] for r in range(p)]
    assert sorted(len(f) for f in full) == [1] * p and sorted(f[0] for f in full) == list(range(p))
    assert all(len(b.sources) == p for r in range(p) for b in states[-1][r])
    # every rank writes one chunk per step, the one its left neighbour wrote the step before
    for k in range(1, len(written)):
        for r in range(p):
            assert written[k][r] == written[k - 1][(r - 1) % p]


def _pixels(png: bytes):
    import io

    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)))


def test_replay_of_a_real_trace_and_its_pictures():
    with ProcessGroup(4, timeout_s=30) as pg:
        res = pg.run("allreduce", 64, algo="ring", iters=1, warmup=1, trace=True)
    assert res.correct
    rp = RingReplay.from_result(res)
    assert rp.nsteps == 6 and rp.iteration == max(e.iteration for e in res.trace)
    figures_before = plt.get_fignums()
    view = render_ring(rp)
    for k in (0, 3, 6):
        live, text = view(k)
        assert "step" in text or "Move the slider" in text
        live.png()
    # the kept figure, moved through other steps, shows what a fresh one shows
    again, _ = render_ring(rp)(6)
    assert np.array_equal(_pixels(live.png()), _pixels(again.png()))
    assert live.full_draws == 1 and plt.get_fignums() == figures_before  # no pyplot figure left behind
    assert view.ax.title.get_text().startswith("step 6 of 6 — all-gather")
    fig = draw_ring_step(rp, 3)  # the static picture of one step
    assert fig.axes[0].get_title().startswith("step 3 of 6 — reduce-scatter")  # p − 1 = 3 steps of it
    plt.close(fig)
    with pytest.raises(ValueError):
        draw_ring_step(rp, 7)
    with pytest.raises(ValueError):
        view(7)
    # a trace that contradicts the plan is refused
    bad = res.trace[:]
    i = next(i for i, e in enumerate(bad) if e.iteration == rp.iteration and e.peer >= 0)
    bad[i] = type(bad[i])(**{**bad[i].__dict__, "chunk": (bad[i].chunk + 1) % 4})
    res.trace = bad
    with pytest.raises(ValueError, match="ring plan"):
        RingReplay.from_result(res)


# -- notebook helpers ------------------------------------------------------------------------------
def test_formula_terms_add_up_to_the_model():
    for algo in lab.algorithms_for("allreduce", 4):
        lat, bw = lab.formula_terms("allreduce", algo, 4, 2**20, 5e-6, 1e10)
        assert lat + bw == pytest.approx(model.predict("allreduce", algo, 4, 2**20, 5e-6, 1e10))
    lat, bw = lab.formula_terms("allreduce", "ring", 4, 2**20, 5e-6, 1e10)
    assert lat == pytest.approx(6 * 5e-6) and bw == pytest.approx(1.5 * 2**20 / 1e10)
    assert "rhd" not in lab.algorithms_for("allreduce", 6)


def test_emulated_link_keeps_half_bandwidth_size():
    emu, lp = lab.emulated_link("nvlink4", links=18, slowdown=1000)
    assert isinstance(emu, LinkEmulation)
    assert emu.latency_s * emu.bandwidth_Bps == pytest.approx(lp.alpha_s * lp.beta_Bps)
    with pytest.raises(ValueError):
        lab.emulated_link("pcie4", slowdown=0.5)


def test_ring_and_tree_trade_places_in_the_model():
    """The notebook's claim, from the model alone: 256 KiB on 4 ranks, ring wins on PCIe Gen4, tree on 18 NVLink 4."""
    out = {}
    for link, links in (("pcie4", 1), ("nvlink4", 18)):
        emu, _ = lab.emulated_link(link, links=links)
        t = {a: model.predict("allreduce", a, 4, 2**18, emu.latency_s, emu.bandwidth_Bps) for a in ("ring", "tree")}
        out[link] = min(t, key=t.get)
    assert out == {"pcie4": "ring", "nvlink4": "tree"}


def test_plots_and_formula_render():
    rows = [{"op": "allreduce", "procs": 4, "algo": a, "bytes": s, "time_s": 1e-4 + s / 1e9}
            for a in ("ring", "tree") for s in (1024, 2**20)]
    fig = lab.plot_measured_vs_model(rows, 1e-5, 1e9)
    plt.close(fig)
    fig = lab.plot_link_tradeoff({"x": rows[:1]}, {"x": LinkEmulation(1e-5, 1e9)})
    plt.close(fig)
    fig, text = lab.render_formulas(4, 3.4, 370.0, 2**18)
    plt.close(fig)
    assert "fastest" in text and "ring" in text
    with pytest.raises(ValueError):
        lab.plot_measured_vs_model([], 1e-5, 1e9)


def test_formulas_view_matches_render_formulas_and_its_axes_hold_every_control_value():
    view = lab.FormulasView()
    for state in [(2, 0.1, 1000.0, 64), (64, 1000.0, 0.1, 2**30), (8, 3.4, 370.8, 2**18)]:
        view(*state)[0].png()
    live, text = view(4, 10.0, 50.0, 2**20)
    fig, fig_text = lab.render_formulas(4, 10.0, 50.0, 2**20)
    assert text == fig_text
    drawn = {name for name, line in view.curves.items() if line.get_visible()}
    assert drawn == set(lab.algorithms_for("allreduce", 4))
    for line in fig.axes[0].lines:
        if line.get_label() in drawn:
            np.testing.assert_allclose(view.curves[line.get_label()].get_ydata(), line.get_ydata())
    plt.close(fig)
    assert live.full_draws == 1
    lo, hi = lab.FORMULA_TIME_LIMITS_S
    for p in (2, 4, 8, 16, 32, 64):
        for a in (0.1, 1000.0):
            for b in (0.1, 1000.0):
                for _algo, t, _lat, _bw in lab._formula_rows("allreduce", p, a * 1e-6, b * 1e9, 2**18):
                    assert lo <= min(t) and max(t) <= hi
