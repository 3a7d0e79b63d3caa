"""Alpha-beta model of the CPU collectives, the α/β fit, and the trace plots."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nvcourse.collectives import LinkEmulation, ProcessGroup
from nvcourse.collectives.draw import plot_timeline, ring_frames
from nvcourse.collectives.fit import fit_alpha_beta, least_squares_alpha_beta
from nvcourse.collectives.model import predict, predict_table


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
        # p=4: the root has 2 children, rank 1 has one (rank 3), rank 2 none:
        # reduce (α + 2n/β) + (α + n/β) = 3 + 2 ms, broadcast 2(α + n/β) = 4 ms -> 9 ms
        ("allreduce", "tree", 4, 1e3, 1e-3, 1e6, None, 9e-3),
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


# -- machine model (nvcourse.collectives.machine): hand-worked cases -----------------------------

from nvcourse.collectives import machine as M  # noqa: E402
from nvcourse.collectives import plan as P  # noqa: E402
from nvcourse.collectives import probes  # noqa: E402
from nvcourse.collectives.draw import plot_measured_vs_machine  # noqa: E402
from nvcourse.collectives.fit import measured_vs_model, median_abs_error  # noqa: E402


def test_plan_work_counts_copies_adds_and_streams():
    # ring, p=2, 8 float32: chunks of 4 elements = 16 B; step 0 adds, step 1 copies, step 2 is the exit read
    work = M.plan_work(P.build_plan("allreduce", "ring", 2, 8), 4)
    # step 1 copies the chunk the peer wrote in step 0: 16 B read from another rank's fresh writes
    for r in range(2):
        assert work[r] == [M.StepWork(add_bytes=16, calls=1), M.StepWork(copy_bytes=16, calls=1, remote_dirty_bytes=16),
                           M.StepWork()]
    # direct, p=4, 16 elements: each rank sums 4 sources of 16 B into 4 destinations:
    # first add 16 B, then 2 more adds and 3 copies that each stream one more array (5 x 16 B), 6 numpy calls
    for row in M.plan_work(P.build_plan("allreduce", "direct", 4, 16), 4):
        assert row[0] == M.StepWork(add_bytes=16, extra_streams_bytes=80, calls=6)
    # naive, p=3, 10 elements (40 B): root adds 3 inputs (one add + one extra stream), then copies to 2 peers
    work = M.plan_work(P.build_plan("allreduce", "naive", 3, 10), 4)
    assert work[0][:2] == [
        M.StepWork(add_bytes=40, extra_streams_bytes=40, calls=2),
        M.StepWork(copy_bytes=80, calls=2),
    ]
    assert all(w.empty for r in (1, 2) for w in work[r])
    # pieces: 16-byte pieces, 8-element (32 B) chunks -> every kernel runs twice
    work = M.plan_work(P.build_plan("allreduce", "ring", 2, 16), 4, piece_bytes=16)
    assert [w.calls for w in work[0]] == [2, 2, 0]


def test_remote_dirty_bytes_by_hand():
    """Bytes a rank reads that another rank wrote last (steady state, inputs never dirty), float32."""
    # ring p=2, 64 elements: step 1 copies the peer's reduced half (32 x 4 B), both ranks
    assert M.remote_dirty_bytes(P.build_plan("allreduce", "ring", 2, 64), 4) == [[0, 128, 0], [0, 128, 0]]
    # tree p=2: rank 1 copies rank 0's full sum in step 1; rank 0 only reads inputs
    assert M.remote_dirty_bytes(P.build_plan("allreduce", "tree", 2, 64), 4) == [[0, 0, 0], [0, 256, 0]]
    # naive and direct read only inputs: nothing another rank wrote
    for algo in ("naive", "direct"):
        assert all(b == 0 for row in M.remote_dirty_bytes(P.build_plan("allreduce", algo, 2, 64), 4) for b in row)
    # ring p=4, 64 elements (chunks of 16): every data step but the first reads one chunk the left neighbour wrote
    ring4 = M.remote_dirty_bytes(P.build_plan("allreduce", "ring", 4, 64), 4)
    assert all(row == [0, 64, 64, 64, 64, 64, 0] for row in ring4)


def test_remote_rate_slows_only_fresh_foreign_bytes():
    w = M.StepWork(copy_bytes=1000, calls=0, remote_dirty_bytes=1000)
    base = M.MachineParams(0.0, 1, [1], [[1e9]], [[1e9]])
    slow = M.MachineParams(0.0, 1, [1], [[1e9]], [[1e9]], remote_Bps=2.5e8)
    fast = M.MachineParams(0.0, 1, [1], [[1e9]], [[1e9]], remote_Bps=4e9)
    assert M.step_seconds(w, 1, 1, base) == pytest.approx(1e-6)
    assert M.step_seconds(w, 1, 1, slow) == pytest.approx(4e-6)  # 1000 B at 0.25 GB/s instead of 1 GB/s
    assert M.step_seconds(w, 1, 1, fast) == pytest.approx(1e-6)  # never faster than a local copy
    with pytest.raises(ValueError, match="remote_Bps"):
        M.MachineParams(0.0, 1, [1], [[1e9]], [[1e9]], remote_Bps=0.0)


def test_shared_alpha_prices_only_plans_with_more_ranks_than_cores():
    base = M.MachineParams.flat(1e-6, 1e9, 5e8, cores=2)
    shared = M.MachineParams(1e-6, 2, [1], [[1e9]] * 2, [[5e8]] * 2, shared_alpha_s={4: 2e-5})
    assert shared.alpha_for(4) == 2e-5
    assert shared.alpha_for(2) == 1e-6  # 2 ranks on 2 cores: each has its core, the ping-pong's α applies
    assert shared.alpha_for(3) == 1e-6  # not measured: falls back to α
    assert shared.for_procs(2) is shared
    # a 4-rank plan on 2 cores is priced exactly as with α = 20 µs everywhere
    plan4 = P.build_plan("allreduce", "ring", 4, 1024)
    slow = M.MachineParams.flat(2e-5, 1e9, 5e8, cores=2)
    assert M.predict_plan(plan4, 4, shared) == pytest.approx(M.predict_plan(plan4, 4, slow), rel=1e-12)
    # ring, 4 ranks: the critical path holds 6 α (5 waits on the left neighbour and the barrier's skew),
    # so each costs 19 µs more
    assert M.predict_plan(plan4, 4, shared) == pytest.approx(M.predict_plan(plan4, 4, base) + 6 * 1.9e-5, rel=1e-9)
    plan2 = P.build_plan("allreduce", "ring", 2, 1024)
    assert M.predict_plan(plan2, 4, shared) == pytest.approx(M.predict_plan(plan2, 4, base), rel=1e-12)
    for bad in ({2: 1e-6}, {4: -1.0}, {"four": 1e-6}, {3.5: 1e-6}):
        with pytest.raises(ValueError, match="shared_alpha_s"):
            M.MachineParams(1e-6, 2, [1], [[1e9]] * 2, [[5e8]] * 2, shared_alpha_s=bad)


def test_shared_alpha_survives_json_and_raises_a_notice_table():
    import json

    shared = M.MachineParams(1e-6, 2, [1], [[1e9]] * 2, [[5e8]] * 2, shared_alpha_s={np.int64(4): 2e-5},
                             notice_waits_s=[0.0, 1e-3], notice_s=[1e-6, 5e-5])
    back = M.MachineParams(**json.loads(json.dumps(shared.to_dict())))  # JSON keys are strings: "4"
    assert back.shared_alpha_s == {4: 2e-5} and back.alpha_for(4) == 2e-5
    four = shared.for_procs(4)
    # a short wait is noticed no sooner than the 4-rank α; a long one keeps its (larger) measured cost
    assert four.notice(0.0) == 2e-5 and four.notice(1e-3) == 5e-5
    assert shared.for_procs(2).notice(0.0) == 1e-6


def test_footprint_counts_every_touched_region_once():
    # allreduce ring p=2, 8 elements: both inputs and both outputs, whole = 4 x 8 x 4 B
    assert M.footprint_bytes(P.build_plan("allreduce", "ring", 2, 8), 4) == 128
    # allgather ring p=2, 8 elements: inputs of 4, outputs of 8 -> (2x4 + 2x8) x 4 B
    assert M.footprint_bytes(P.build_plan("allgather", "ring", 2, 8), 4) == 96


def test_rates_interpolate_in_log_log_and_share_cores():
    mp_ = M.MachineParams(0.0, 1, [1000, 100000], [[1e9, 1e7]], [[2e9, 2e7]])
    assert mp_.copy_rate(10000) == pytest.approx(1e8)  # halfway in log footprint -> geometric mean
    assert mp_.add_rate(10000) == pytest.approx(2e8)
    assert mp_.copy_rate(10) == 1e9 and mp_.copy_rate(1e9) == 1e7  # constant beyond the ends
    assert mp_.copy_rate(1000, k=4) == pytest.approx(1e9 / 4)  # 4 ranks on 1 core: a quarter each
    two = M.MachineParams(0.0, 2, [1], [[8e9], [6e9]], [[4e9], [3e9]])
    assert two.copy_rate(1, k=2) == 6e9 and two.copy_rate(1, k=4) == pytest.approx(3e9)


def test_machine_params_reject_bad_tables():
    with pytest.raises(ValueError):
        M.MachineParams(0.0, 1, [2, 1], [[1.0, 1.0]], [[1.0, 1.0]])
    with pytest.raises(ValueError):
        M.MachineParams(0.0, 1, [1, 2], [[1.0]], [[1.0, 1.0]])
    with pytest.raises(ValueError):
        M.MachineParams(0.0, 0, [1], [[1.0]], [[1.0]])
    with pytest.raises(ValueError):
        M.MachineParams(0.0, 1, [1], [[0.0]], [[1.0]])


def test_predict_plan_ring_two_ranks_by_hand():
    # α = 1 µs, β = 1 GB/s, γ = 0.5 GB/s; 256 float32 -> chunks of 512 B: add 1.024 µs, copy 0.512 µs.
    # Rank 1 leaves the barrier α after rank 0 and adds until 2.024 µs; rank 0 (add done at 1.024)
    # notices at 3.024 and copies until 3.536 µs. Rank 1 needs rank 0's step 0 (noticed at 2.024),
    # finishes at 2.536 = 1.536 µs after its start. Both finish together next round: same answer.
    params = M.MachineParams.flat(1e-6, 1e9, 5e8, cores=2)
    t = M.predict_plan(P.build_plan("allreduce", "ring", 2, 256), 4, params)
    assert t == pytest.approx(3.536e-6, rel=1e-9)
    assert M.predict_machine("allreduce", "ring", 2, 1024, params) == pytest.approx(3.536e-6, rel=1e-9)


def test_predict_plan_naive_root_is_late_after_the_barrier():
    # naive p=3, 256 float32 (1024 B), α = 1 µs, β = γ = 1 GB/s: root adds 3 inputs
    # (1.024 + 1.024/3 µs) and copies to 2 peers (2.048 µs) = W = 3.41333 µs. The root finishes first
    # and waits at the barrier, so in steady state it leaves α after the others, who wait for its
    # last copy and notice it α later: time = α + W + α.
    params = M.MachineParams.flat(1e-6, 1e9, 1e9, cores=4)
    W = 1.024e-6 + 1.024e-6 / 3 + 2.048e-6
    t = M.predict_plan(P.build_plan("allreduce", "naive", 3, 256), 4, params)
    assert t == pytest.approx(2e-6 + W, rel=1e-9)
    # one round only (rank 0 = root leaves the barrier first, the others α later): the root takes W;
    # the others start at α and notice the root's last copy at W + α: W as well
    t1 = M.predict_plan(P.build_plan("allreduce", "naive", 3, 256), 4, params, rounds=1)
    assert t1 == pytest.approx(W, rel=1e-9)


def test_predict_plan_time_sharing_slows_every_rank():
    # same ring, 4 ranks on 1 core vs 4 cores: the kernels (not α) take 4x as long
    plan = P.build_plan("allreduce", "ring", 4, 4096)
    fast = M.predict_plan(plan, 4, M.MachineParams.flat(0.0, 1e9, 1e9, cores=4))
    slow = M.predict_plan(plan, 4, M.MachineParams.flat(0.0, 1e9, 1e9, cores=1))
    assert slow == pytest.approx(4 * fast, rel=1e-9)


def test_measured_vs_model_table_and_plot():
    class FakeResult:
        def __init__(self, nbytes):
            self.nbytes, self.time_s, self.correct = nbytes, 2 * 3.536e-6, True

    class FakeGroup:
        nprocs = 2

        def run(self, op, nbytes, **kw):
            return FakeResult(nbytes)

    params = M.MachineParams.flat(1e-6, 1e9, 5e8, cores=2)
    rows = measured_vs_model(FakeGroup(), [1024], ["ring"], params=params, alpha_beta=(1e-6, 1e9, 5e8))
    assert len(rows) == 1 and rows[0]["algo"] == "ring" and rows[0]["procs"] == 2
    assert rows[0]["model_s"] == pytest.approx(3.536e-6) and rows[0]["error"] == pytest.approx(-0.5)
    # closed form ring p=2: 2α + n/β + n/(2γ) = 2 + 1.024 + 1.024 µs
    assert rows[0]["alpha_beta_s"] == pytest.approx(4.048e-6)
    assert median_abs_error([{"error": 0.1}, {"error": -0.5}, {"error": 0.2}]) == pytest.approx(0.2)
    rows2 = rows + [dict(rows[0], procs=4)]
    ax = plot_measured_vs_machine(rows2)
    assert len(ax.lines) == 4  # model line + measured markers, for each N
    import matplotlib.pyplot as plt

    plt.close(ax.figure)


def test_measure_machine_and_measured_vs_model_on_real_processes():
    params = probes.measure_machine(alpha_s=1e-6, footprints=[2**16, 2**18], max_procs=1, reps=1, min_time_s=1e-4)
    assert params.alpha_s == 1e-6 and params.footprints == [2**16, 2**18]
    assert len(params.copy_Bps) == 1 and all(v > 0 for v in params.copy_Bps[0] + params.add_Bps[0])
    assert params.remote_Bps is None  # no group to ping-pong in
    with ProcessGroup(2) as pg:
        rows = measured_vs_model(pg, [2**16], ["direct"], params=params, iters=2)
        with_group = probes.measure_machine(
            pg, footprints=[2**16], max_procs=1, reps=1, min_time_s=1e-4, pingpong_iters=5
        )
    assert rows[0]["correct"] and rows[0]["measured_s"] > 0 and rows[0]["model_s"] > 0
    # on a loaded machine an 8 B ping-pong can take a scheduler's quantum, as long as a 1 MiB one: the rate is then
    # not measured (None), never made up; how it is computed is checked on given times below
    assert with_group.remote_Bps is None or with_group.remote_Bps > 0
    assert with_group.alpha_s > 0 and with_group.shared_alpha_s == {}  # not asked for


class _PingPong:
    """A two-rank group whose ping-pong takes ``alpha_s`` + bytes / ``rate_Bps`` one way (``None``: ``alpha_s``)."""

    nprocs = 2

    def __init__(self, alpha_s: float, rate_Bps: float | None):
        self.alpha_s, self.rate_Bps = alpha_s, rate_Bps

    def pingpong(self, nbytes, iters=50, warmup=5):
        return self.alpha_s + (nbytes / self.rate_Bps if self.rate_Bps else 0.0)


def test_measure_machine_reads_the_remote_rate_off_the_ping_pongs_beyond_alpha():
    kw = dict(footprints=[2**16], max_procs=1, reps=1, min_time_s=1e-4)
    params = probes.measure_machine(_PingPong(5e-6, 4e9), **kw)
    assert params.alpha_s == pytest.approx(5e-6 + 8 / 4e9)
    assert params.remote_Bps == pytest.approx(4e9, rel=1e-4)  # m / (t(m) - t(8 B)), 256 KiB and 1 MiB alike
    # big ping-pongs no slower than the 8-byte one (a loaded machine): no rate rather than an invented one
    assert probes.measure_machine(_PingPong(2e-3, None), **kw).remote_Bps is None


def test_shared_alpha_is_measured_only_where_ranks_outnumber_cores():
    # cores=1 pretends a 1-CPU machine (Binder): 3 ranks then share it, and α for 3 ranks is measured (in a group
    # started for it); 2 ranks are the ping-pong's business, 1 rank hands nothing off
    with ProcessGroup(2) as pg:
        params = probes.measure_machine(pg, footprints=[2**16], max_procs=1, reps=1, min_time_s=1e-4, pingpong_iters=5,
                                        cores=1, shared_procs=(1, 2, 3))
        roomy = probes.measure_machine(pg, footprints=[2**16], max_procs=1, reps=1, min_time_s=1e-4, pingpong_iters=5,
                                       cores=4, shared_procs=(2, 3))
        with pytest.raises(ValueError, match="at least 3 ranks"):
            probes.measure_shared_alpha(pg)
        with pytest.raises(ValueError, match="at least 3 ranks"):
            probes.measure_shared_alpha(_OneRank())
    assert sorted(params.shared_alpha_s) == [3]
    assert all(a >= 0 for a in params.shared_alpha_s.values())
    assert params.alpha_for(3) == params.shared_alpha_s[3] and params.alpha_for(2) == params.alpha_s
    assert roomy.shared_alpha_s == {}  # every rank has a core


def test_shared_alpha_probe_removes_the_models_other_costs_and_divides_by_its_alpha_count():
    # 4 ranks: each rank copies its own element, then forwards 3 (4 steps, each one numpy copy and one
    # bookkeeping call: 8 calls on the critical path) and waits 3 times (N - 1 α). A group whose calls take
    # 8 x 0.5 µs + 3 x 10 µs = 34 µs gives α = 10 µs; with no call overhead priced, 34 / 3 µs.
    class _Timed:
        nprocs = 4

        def run(self, op, nbytes, **kw):
            assert (op, nbytes, kw["algo"]) == ("allgather", 16, "ring")
            return type("R", (), {"time_s": 34e-6})()

    assert probes.measure_shared_alpha(_Timed(), call_s=0.5e-6) == pytest.approx(10e-6)
    assert probes.measure_shared_alpha(_Timed()) == pytest.approx(34e-6 / 3)


class _OneRank:
    nprocs = 1


class _BusyGroup:
    """A group whose first sweeps are timed on a busy machine (times fall with size), then quietly."""

    def __init__(self, busy_sweeps: int, sizes: int):
        self.calls, self.busy, self.sizes = 0, busy_sweeps, sizes

    def pingpong(self, n: int, iters: int, warmup: int) -> float:
        sweep = self.calls // self.sizes
        self.calls += 1
        quiet = 2e-6 + n / 5e9
        if sweep < self.busy:  # interference only adds time, most to the first (small) sizes: times fall with size
            return quiet + 1.0 / (1 + n) ** 0.1
        return quiet


def test_fit_measures_again_on_a_busy_machine_and_says_why_when_it_stays_busy():
    from nvcourse.collectives import fit

    sizes = [2**k for k in range(6, 25, 2)]
    alpha, beta = fit.fit_alpha_beta(_BusyGroup(1, len(sizes)), sizes=sizes)
    assert alpha == pytest.approx(2e-6, rel=1e-6) and beta == pytest.approx(5e9, rel=1e-6)
    with pytest.raises(ValueError, match=f"did not grow with the size in {fit.FIT_TRIES} sweeps.*quieter"):
        fit.fit_alpha_beta(_BusyGroup(fit.FIT_TRIES, len(sizes)), sizes=sizes)
