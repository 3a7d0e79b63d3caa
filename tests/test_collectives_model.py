"""Alpha-beta model of the CPU collectives, the α/β fit, and the trace plots."""

from __future__ import annotations

import math

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from nvcourse.collectives import LinkEmulation, ProcessGroup  # noqa: E402
from nvcourse.collectives.fit import fit_alpha_beta, least_squares_alpha_beta  # noqa: E402
from nvcourse.collectives.model import predict, predict_table  # noqa: E402
from nvcourse.collectives.plots import plot_timeline, ring_frames  # noqa: E402


@pytest.mark.parametrize(
    "op, algo, p, n, alpha, beta, gamma, expected",
    [
        # 2(p-1)α + 2(p-1)/p n/β = 6e-5 + 1.5e-3
        ("allreduce", "ring", 4, 1e6, 1e-5, 1e9, None, 1.56e-3),
        # ... + (p-1)/p n/γ = + 0.75e6 / 2e9
        ("allreduce", "ring", 4, 1e6, 1e-5, 1e9, 2e9, 1.935e-3),
        # 2 log2(8) α + 2·7/8·8e6/1e10
        ("allreduce", "rhd", 8, 8e6, 1e-6, 1e10, None, 6e-6 + 1.4e-3),
        ("allreduce", "direct", 2, 1e6, 2e-6, 1e9, None, 1.002e-3),
        # p=7: L=2 levels, 2 children: 2(α + 2n/β) + 2(α + n/β) with n/β = 1 ms, α = 1 ms
        ("allreduce", "tree", 7, 1e3, 1e-3, 1e6, None, 1e-2),
        ("allreduce", "naive", 4, 1e6, 0.0, 1e9, None, 6e-3),
        ("reducescatter", "ring", 4, 4e6, 1e-5, 1e9, None, 3e-5 + 3e-3),
        ("allgather", "rhd", 4, 4e6, 1e-5, 1e9, None, 2e-5 + 3e-3),
        ("allgather", "naive", 4, 4e6, 0.0, 1e9, None, 3e-3 + 12e-3),
        # chain with 8 chunks on 4 ranks: (4+8-2) steps of α + n/(8β)
        ("broadcast", "ring", 4, 8e6, 0.0, 1e9, None, 1e-2),
        ("broadcast", "tree", 8, 1e6, 1e-3, 1e9, None, 3 * 2e-3),
        ("allreduce", "ring", 1, 1e6, 1e-3, 1e9, None, 0.0),
    ],
)
def test_hand_worked_predictions(op, algo, p, n, alpha, beta, gamma, expected):
    assert predict(op, algo, p, n, alpha, beta, gamma) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_tree_beats_ring_for_small_messages_and_loses_for_large():
    small = predict_table("allreduce", 8, [8], 1e-3, 1e6)
    large = predict_table("allreduce", 8, [10**8], 1e-3, 1e6)
    assert small["tree"][0] < small["ring"][0]
    assert large["ring"][0] < large["tree"][0]
    assert "rhd" not in predict_table("allreduce", 6, [8], 1e-3, 1e6)


def test_predict_rejects_bad_input():
    with pytest.raises(ValueError, match="power of two"):
        predict("allreduce", "rhd", 6, 1e6, 1e-6, 1e9)
    with pytest.raises(ValueError):
        predict("allreduce", "ring", 4, 1e6, 1e-6, 0.0)


def test_least_squares_recovers_alpha_beta():
    sizes = [8, 1024, 65536, 2**20, 2**24]
    times = [2e-6 + s / 5e9 for s in sizes]
    alpha, beta = least_squares_alpha_beta(sizes, times)
    assert alpha == pytest.approx(2e-6, rel=1e-6)
    assert beta == pytest.approx(5e9, rel=1e-6)
    with pytest.raises(ValueError):
        least_squares_alpha_beta([8, 8], [1.0, 1.0])


def test_fit_alpha_beta_uses_the_group_pingpong():
    class FakeGroup:
        def __init__(self):
            self.asked = []

        def pingpong(self, nbytes, iters, warmup):
            self.asked.append(nbytes)
            return 3e-6 + nbytes / 8e9

    g = FakeGroup()
    alpha, beta = fit_alpha_beta(g, [8, 4096, 2**20, 2**24])
    assert g.asked == [8, 4096, 2**20, 2**24]
    assert alpha == pytest.approx(3e-6, rel=1e-6) and beta == pytest.approx(8e9, rel=1e-6)


def test_pingpong_on_an_emulated_link_takes_at_least_the_latency():
    with ProcessGroup(2, emulation=LinkEmulation(latency_s=2e-3, bandwidth_Bps=1e8)) as pg:
        one_way = pg.pingpong(2**16, iters=2, warmup=0)
    assert one_way >= 2e-3 + 2**16 / 1e8  # each direction is held for α + n/β
    assert math.isfinite(one_way)


def test_timeline_and_ring_frames_from_a_real_trace():
    with ProcessGroup(4) as pg:
        res = pg.run("allreduce", 4 * 4096, algo="ring", iters=1, warmup=0, trace=True)
    assert res.correct
    ax = plot_timeline(res.trace)
    assert len(ax.patches) == len(res.trace) == 4 * 6
    frames = ring_frames(res.trace, 4)
    assert [f["step"] for f in frames] == list(range(6))
    assert [f["phase"] for f in frames] == ["reduce-scatter"] * 3 + ["all-gather"] * 3
    for f in frames:
        assert sorted(t["dst"] for t in f["transfers"]) == [0, 1, 2, 3]
        assert all(t["src"] == (t["dst"] - 1) % 4 and t["nbytes"] == 4096 for t in f["transfers"])
        assert 0 <= f["start"] <= f["end"]
    np.testing.assert_array_less(-1e-12, [f["start"] for f in frames])
