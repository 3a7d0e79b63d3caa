"""CPU collectives: plans, the shared-memory process group, faults and cleanup, and ``nvcourse bench``."""

from __future__ import annotations

import contextlib
import glob
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from nvcourse import cli
from nvcourse.collectives import (
    ALGORITHMS,
    OPERATIONS,
    SUPPORTED,
    CollectiveError,
    Fault,
    LinkEmulation,
    ProcessGroup,
    busbw_factor,
)
from nvcourse.collectives import plan as P

ROOT = Path(__file__).resolve().parents[1]
POSIX = os.name == "posix"


def expected_outputs(op, ins, p):
    total = sum(x.astype(np.float64) for x in ins) if op in ("allreduce", "reducescatter") else None
    m = (len(ins[0]) // p) if op == "reducescatter" else None
    if op == "allreduce":
        return [total] * p
    if op == "reducescatter":
        return [total[r * m:(r + 1) * m] for r in range(p)]
    if op == "allgather":
        return [np.concatenate(ins)] * p
    return [ins[0]] * p


def all_cases(max_p=8):
    for op in OPERATIONS:
        for algo in SUPPORTED[op]:
            for p in range(1, max_p + 1):
                if algo == "rhd" and p & (p - 1):
                    continue
                yield op, algo, p


def run_interleaved(plan, ins, seed, use_deps=True):
    """Execute a plan with ranks advancing in a random order that respects only the derived waits."""
    rng = random.Random(seed)
    p = plan.nprocs
    bufs = {
        "in": [x.copy() for x in ins],
        "out": [np.full(plan.counts["out"], np.nan) for _ in range(p)],
        "tmp": [np.full(plan.counts["tmp"], np.nan) for _ in range(p)],
    }
    done = [0] * p
    view = lambda ref: bufs[ref.kind][ref.owner][ref.lo:ref.hi]  # noqa: E731
    while min(done) < plan.nsteps:
        ready = [
            r for r in range(p)
            if done[r] < plan.nsteps and (not use_deps or all(done[q] >= k for q, k in plan.deps[r][done[r]]))
        ]
        assert ready, "deadlock: no rank can proceed"
        r = rng.choice(ready)
        for a in plan.steps[r][done[r]]:
            if a.dsts:
                acc = view(a.srcs[0]).copy()
                for s in a.srcs[1:]:
                    acc = acc + view(s)
                for d in a.dsts:
                    view(d)[...] = acc
        done[r] += 1
    return bufs["out"]


# -- plans (no processes) --------------------------------------------------------------------------
@pytest.mark.parametrize("op, algo, p", list(all_cases()))
def test_plan_gives_numpy_answer_in_any_allowed_order(op, algo, p):
    for nbytes in (4, 4 * p * 5 + 4 * 3, 4 * 16 * 4 * p * 3):
        count = P.normalize_count(op, p, nbytes, 4)
        plan = P.build_plan(op, algo, p, count)
        rng = np.random.default_rng(count + p)
        ins = [rng.integers(-9, 9, plan.counts["in"]).astype(np.float64) for _ in range(p)]
        exp = expected_outputs(op, ins, p)
        for seed in range(4):
            outs = run_interleaved(plan, ins, seed)
            for r in range(p):
                np.testing.assert_array_equal(outs[r], exp[r], err_msg=f"{op}/{algo} p={p} rank {r}")


@pytest.mark.parametrize("op, algo, p", [("allreduce", "ring", 4), ("allreduce", "rhd", 8), ("allgather", "direct", 3)])
def test_simulate_reports_each_data_step_and_gives_numpy_answer(op, algo, p):
    count = P.normalize_count(op, p, 4 * p * 6, 4)
    plan = P.build_plan(op, algo, p, count)
    ins = [np.arange(plan.counts["in"], dtype=np.float64) + 100 * r for r in range(p)]
    seen = []

    def on_step(s, wrote, bufs):
        for r in range(p):  # each rank's chunks written in step s, as the plan says
            assert sorted(wrote.get(r, [])) == sorted(a.chunk for a in plan.steps[r][s] if a.dsts)
        seen.append((s, sorted(wrote)))

    bufs = P.simulate(plan, ins, fill=0, on_step=on_step)
    data_steps = [s for s in range(plan.nsteps) if any(a.dsts for r in range(p) for a in plan.steps[r][s])]
    assert [s for s, _ in seen] == data_steps  # the final "read my output" step moves nothing: not reported
    exp = expected_outputs(op, ins, p)
    for r in range(p):
        np.testing.assert_array_equal(bufs["out"][r], exp[r])


def test_interleaving_checker_catches_missing_waits():
    plan = P.build_plan("allreduce", "ring", 4, 4 * 64)
    ins = [np.full(plan.counts["in"], float(r + 1)) for r in range(4)]
    exp = expected_outputs("allreduce", ins, 4)
    failures = 0
    for seed in range(20):
        try:
            outs = run_interleaved(plan, ins, seed, use_deps=False)
        except AssertionError:
            failures += 1
            continue
        failures += any(not np.array_equal(o, e) for o, e in zip(outs, exp))
    assert failures > 0


def test_ring_allreduce_waits_only_on_left_neighbour():
    p = 5
    plan = P.build_plan("allreduce", "ring", p, 1000)
    assert plan.nsteps == 2 * (p - 1) + 1  # + the final "read my output" step
    for r in range(p):
        peers = {q for step in plan.deps[r][:-1] for q, _ in step}
        assert peers <= {(r - 1) % p, (r + 1) % p}


def test_step_counts_match_the_textbook():
    assert P.build_plan("allreduce", "rhd", 8, 800).nsteps - 1 == 2 * 3
    assert P.build_plan("allreduce", "direct", 8, 800).nsteps - 1 == 1
    assert P.build_plan("allreduce", "naive", 8, 800).nsteps - 1 == 2
    assert P.build_plan("allreduce", "tree", 7, 800).nsteps - 1 == 2 * 2  # depth 2 up, 2 down
    assert P.build_plan("allgather", "ring", 6, 600).nsteps - 1 == 5


@pytest.mark.parametrize(
    "op, n, factor",
    [("allreduce", 4, 1.5), ("allreduce", 2, 1.0), ("reducescatter", 4, 0.75), ("allgather", 8, 0.875),
     ("broadcast", 4, 1.0), ("allreduce", 1, 0.0)],
)
def test_busbw_factor_is_nccl_tests(op, n, factor):
    assert busbw_factor(op, n) == pytest.approx(factor)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(op="allreduse", algo="ring", nprocs=2), ["op", "allreduce", "broadcast"]),
        (dict(op="allreduce", algo="butterfly", nprocs=2), ["algo", "ring", "direct"]),
        (dict(op="broadcast", algo="rhd", nprocs=2), ["algo", "tree"]),
        (dict(op="allreduce", algo="rhd", nprocs=3), ["power of two", "procs=3", "ring"]),
        (dict(op="allreduce", algo="ring", nprocs=0), ["procs", "1"]),
        (dict(op="allreduce", algo="ring", nprocs=2, dtype="bf16"), ["dtype", "float32"]),
    ],
)
def test_bad_arguments_name_parameter_and_allowed_values(kwargs, words):
    with pytest.raises(ValueError) as exc:
        P.check_args(**kwargs)
    for w in words:
        assert w in str(exc.value)


def test_sizes_round_down_like_nccl_tests():
    assert P.normalize_count("allreduce", 4, 10, 4) == 2
    assert P.normalize_count("allreduce", 4, 1, 4) == 1
    assert P.normalize_count("reducescatter", 4, 100, 4) == 24
    assert P.normalize_count("allgather", 3, 8, 4) == 3


# -- the process group ----------------------------------------------------------------------------
def shm_entries(prefix):
    return glob.glob(f"/dev/shm/{prefix}*")


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purpose
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def assert_cleaned(pg, wait_s=5.0):
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and (any(alive(p) for p in pg.pids) or shm_entries(pg.name_prefix)):
        time.sleep(0.05)
    assert not [p for p in pg.pids if alive(p)]
    if POSIX and os.path.isdir("/dev/shm"):
        assert shm_entries(pg.name_prefix) == []


@pytest.fixture(scope="module")
def pg4():
    with ProcessGroup(4, timeout_s=20) as pg:
        yield pg
    assert_cleaned(pg)


@pytest.mark.parametrize("op", OPERATIONS)
def test_every_algorithm_is_correct_on_real_processes(pg4, op):
    for algo in SUPPORTED[op]:
        for nbytes in (4, 1000, 3 * 2**20 + 12):
            res = pg4.run(op, nbytes, algo=algo, iters=2, warmup=1)
            assert res.correct and res.wrong == 0, (op, algo, nbytes)
            assert res.procs == 4 and res.algo == algo and len(res.times_s) == 2
            assert res.nbytes == P.normalize_count(op, 4, nbytes, 4) * 4


@pytest.mark.parametrize("dtype", ["float64", "float16", "int32", "int64"])
def test_other_dtypes(pg4, dtype):
    res = pg4.run("allreduce", 4096 + 8, algo="ring", dtype=dtype, iters=1, warmup=0)
    assert res.correct and res.dtype == dtype


def test_verification_detects_a_wrong_result(pg4, monkeypatch):
    orig = pg4._prepare

    def corrupting_prepare(op, counts, count, dtype, verify):
        orig(op, counts, count, dtype, verify)
        pg4._expected = [e + 1 for e in pg4._expected]  # numpy's answer off by one: every element "wrong"

    monkeypatch.setattr(pg4, "_prepare", corrupting_prepare)
    res = pg4.run("allreduce", 64, algo="direct", iters=1, warmup=0)
    assert res.correct is False and res.wrong == 4 * 16


def test_result_row_and_bandwidths(pg4):
    res = pg4.run("allreduce", "1MiB", algo="ring", iters=3)
    row = res.row()
    for key in ("op", "algo", "backend", "procs", "bytes", "time_s", "algbw_GBps", "busbw_GBps", "correct"):
        assert key in row
    assert row["time_s"] == pytest.approx(sorted(res.times_s)[1])
    assert row["algbw_GBps"] == pytest.approx(2**20 / row["time_s"] / 1e9)
    assert row["busbw_GBps"] == pytest.approx(row["algbw_GBps"] * 1.5)
    assert all(t == max(rt) for t, rt in zip(res.times_s, res.rank_times_s))


def test_ring_trace_records_each_step(pg4):
    res = pg4.run("allreduce", 4 * 1024, algo="ring", iters=2, warmup=1, trace=True)
    assert {e.iteration for e in res.trace} == {0, 1}
    for it in (0, 1):
        for r in range(4):
            ev = sorted((e for e in res.trace if e.rank == r and e.iteration == it), key=lambda e: e.step)
            assert [e.step for e in ev] == list(range(6))
            assert {e.peer for e in ev} == {(r - 1) % 4}
            assert all(e.nbytes == 1024 and e.end >= e.start >= 0 for e in ev)
            assert [e.chunk for e in ev[:3]] == [(r - 1 - s) % 4 for s in range(3)]


def test_link_emulation_makes_every_step_at_least_latency(pg4):
    emu = LinkEmulation(latency_s=0.004, bandwidth_Bps=1e12)
    res = pg4.run("allreduce", 4096, algo="ring", iters=1, warmup=0, emulation=emu, trace=True)
    assert res.correct
    assert min(e.end - e.start for e in res.trace) >= 0  # the work itself
    assert min(res.rank_times_s[0]) >= 6 * 0.004  # 2(p-1) steps, each held for the latency


def test_bad_run_arguments_keep_the_group_usable(pg4):
    for kwargs in (dict(op="allreduce", algo="rhd", nbytes=8, iters=0), dict(op="allgather", algo="tree"),
                   dict(op="x"), dict(op="allreduce", nbytes="3 parsecs")):
        with pytest.raises(ValueError):
            pg4.run(**kwargs)
    assert pg4.run("allreduce", 64).correct


def test_three_and_one_process_groups():
    with ProcessGroup(3) as pg:
        for op in OPERATIONS:
            for algo in SUPPORTED[op]:
                if algo != "rhd":
                    assert pg.run(op, 3 * 1000 + 4, algo=algo, iters=1, warmup=0).correct, (op, algo)
        with pytest.raises(ValueError, match="power of two"):
            pg.run("allreduce", 64, algo="rhd")
    with ProcessGroup(1) as pg:
        for op in OPERATIONS:
            assert pg.run(op, 1000, iters=1).correct
    assert_cleaned(pg)


# -- faults and cleanup ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "fault, words",
    [
        (Fault(rank=1, step=1, iteration=0, action="kill"), ["rank 1", "died", "exit code -9", "allreduce"]),
        (Fault(rank=2, step=3, iteration=2, action="kill"), ["rank 2", "exit code -9"]),
        (Fault(rank=0, step=0, iteration=1, action="exit"), ["rank 0", "exit code 3"]),
        (Fault(rank=3, step=2, iteration=0, action="raise"), ["rank 3", "RuntimeError", "injected fault"]),
        (Fault(rank=1, step=2, iteration=0, action="hang"), ["timed out", "no progress"]),
    ],
)
def test_faults_raise_clear_error_and_leave_nothing_behind(fault, words):
    pg = ProcessGroup(4, timeout_s=1.0)
    t0 = time.monotonic()
    with pytest.raises(CollectiveError) as exc:
        pg.run("allreduce", 64 * 1024, algo="ring", iters=3, warmup=1, fault=fault)
    assert time.monotonic() - t0 < 10
    msg = str(exc.value)
    for w in words:
        assert w in msg
    assert pg.closed
    assert_cleaned(pg)
    with pytest.raises(CollectiveError, match="closed"):
        pg.run("allreduce", 64)


def test_kill_worker_between_calls_repeatedly():
    for rank in (0, 2):
        with ProcessGroup(3, timeout_s=2) as pg:
            assert pg.run("allreduce", 4096, algo="tree").correct
            pg.kill_worker(rank)
            with pytest.raises(CollectiveError, match=f"rank {rank} .*died"):
                pg.run("allreduce", 4096, algo="tree")
        assert_cleaned(pg)


SCRIPT = textwrap.dedent(
    """
    import json, sys, time
    from nvcourse.collectives import ProcessGroup, LinkEmulation
    if __name__ == "__main__":
        mode = sys.argv[1]
        pg = ProcessGroup(3, timeout_s=60, recover_on_interrupt=mode != "interrupt-close")
        print(json.dumps({"pids": pg.pids, "prefix": pg.name_prefix}), flush=True)
        if mode.startswith("interrupt"):
            for _ in range(2):  # twice: the group recovers from an interrupt more than once
                try:  # "calling" tells the test the long call (~100 s) is about to start: no race with a sleep
                    print("calling", flush=True)
                    pg.run("allreduce", 4096, algo="ring", iters=1000, emulation=LinkEmulation(latency_s=0.05))
                except KeyboardInterrupt:
                    print("interrupted", pg.closed, flush=True)
                if pg.closed:
                    sys.exit(5)
                ok = pg.run("allreduce", 1 << 16, algo="ring", iters=3).correct  # still usable, still right
                print("usable", ok, flush=True)
            pg.close()
            sys.exit(5)
        elif mode == "work":
            ok = all(pg.run("allreduce", 1 << 16, algo=a, iters=20).correct for a in ("ring", "direct", "tree") * 3)
            print("ok" if ok else "wrong", flush=True)
            pg.close()
        else:
            time.sleep(60)
    """
)


@contextlib.contextmanager
def group_script(tmp_path, mode):
    """The script above in ``mode``: yields (process, its group's pids and shm prefix); the process is killed
    on the way out whatever the test's outcome, so a failing test leaves nothing running."""
    path = tmp_path / "group_script.py"
    path.write_text(SCRIPT)
    # Ctrl-C's default action in the script, as a terminal's foreground job has it: a suite started in the
    # background of a non-interactive shell inherits SIGINT ignored, and the script would never see the interrupt
    proc = subprocess.Popen([sys.executable, str(path), mode], stdout=subprocess.PIPE, text=True, cwd=ROOT,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        yield proc, json.loads(proc.stdout.readline())
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)


def interrupt_the_call(proc) -> None:
    """SIGINT once the script is inside its long call: after its "calling" line, and a margin a loaded
    machine needs to get from the print into the call (the call itself lasts about 100 s)."""
    assert proc.stdout.readline().strip() == "calling"
    time.sleep(2.0)
    proc.send_signal(signal.SIGINT)


def info_cleaned(info, wait_s=10.0):
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if not any(alive(p) for p in info["pids"]) and not shm_entries(info["prefix"]):
            return True
        time.sleep(0.1)
    return False


@pytest.mark.skipif(not POSIX, reason="sends POSIX signals")
def test_keyboard_interrupt_keeps_the_group_usable(tmp_path):
    # What a Jupyter kernel interrupt does: KeyboardInterrupt in the caller, the workers abandon the call
    # and are re-synchronised, the next call is correct. (Before the abort flag was read at every step,
    # a call on an emulated link never saw it: the group was closed after a 1-2 s wait.)
    with group_script(tmp_path, "interrupt") as (proc, info):
        for _ in range(2):
            interrupt_the_call(proc)
            assert proc.stdout.readline().strip() == "interrupted False"
            assert proc.stdout.readline().strip() == "usable True"
        out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 5
    assert info_cleaned(info)


@pytest.mark.skipif(not POSIX, reason="sends POSIX signals")
def test_keyboard_interrupt_can_close_the_group_instead(tmp_path):
    with group_script(tmp_path, "interrupt-close") as (proc, info):  # recover_on_interrupt=False, as nvcourse bench
        interrupt_the_call(proc)
        out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 5 and "interrupted True" in out
    assert info_cleaned(info)


@pytest.mark.skipif(not POSIX, reason="sends POSIX signals")
def test_workers_exit_when_parent_is_killed(tmp_path):
    with group_script(tmp_path, "sleep") as (proc, info):
        proc.kill()
        proc.wait(30)
    assert info_cleaned(info, wait_s=30.0)


def test_two_groups_in_two_processes_at_once(tmp_path):
    with group_script(tmp_path, "work") as (proc, info), ProcessGroup(2) as pg:
        assert pg.name_prefix != info["prefix"]
        for _ in range(10):
            assert pg.run("allreduce", 1 << 16, algo="ring", iters=10).correct
        out, _ = proc.communicate(timeout=120)
    assert out.strip() == "ok" and proc.returncode == 0
    assert info_cleaned(info)
    assert_cleaned(pg)


# -- the command line -----------------------------------------------------------------------------
def test_bench_json_rows(capsys):
    rc = cli.main(["bench", "allreduce", "--procs", "2", "--algo", "ring", "--min-bytes", "1KiB",
                   "--max-bytes", "4KiB", "--iters", "2", "--warmup", "1", "--json"])
    out = capsys.readouterr()
    assert rc == 0
    rows = json.loads(out.out)
    assert [r["bytes"] for r in rows] == [1024, 2048, 4096]
    for r in rows:
        assert {"op", "algo", "backend", "procs", "bytes", "time_s", "algbw_GBps", "busbw_GBps", "correct"} <= set(r)
        assert (r["op"], r["algo"], r["backend"], r["procs"], r["correct"]) == ("allreduce", "ring", "shm", 2, True)
        assert r["busbw_GBps"] == pytest.approx(r["bytes"] / r["time_s"] / 1e9)
    assert out.err == ""  # progress goes to a terminal only: a log gets the rows and errors alone


def test_bench_table(capsys):
    rc = cli.main(["bench", "broadcast", "--procs", "2", "--bytes", "64KiB", "--iters", "2",
                   "--emulate-latency", "1us", "--emulate-bandwidth", "100GB/s"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "busbw" in out and "#wrong" in out and "65536" in out and "emulated link" in out


@pytest.mark.parametrize(
    "argv, words",
    [
        (["bench", "allreduse"], ["op", "allreduce"]),
        (["bench", "allreduce", "--algo", "fast"], ["algo", "ring"]),
        (["bench", "allreduce", "--procs", "3", "--algo", "rhd"], ["power of two"]),
        (["bench", "allreduce", "--procs", "0"], ["procs"]),
        (["bench", "allreduce", "--bytes", "64Mib"], ["unknown unit"]),
        (["bench", "allreduce", "--bytes", "1KiB", "--min-bytes", "8"], ["either"]),
        (["bench", "allreduce", "--min-bytes", "1MiB", "--max-bytes", "1KiB"], ["min-bytes"]),
        (["bench", "allreduce", "--backend", "nccl"], ["backend", "'shm', 'torch', 'mpi'"]),
        (["bench", "allreduce", "--backend", "mpi", "--algo", "ring"], ["algo"]),
        (["bench", "allreduce", "--emulate-latency", "5 parsecs"], ["emulate-latency"]),
    ],
)
def test_bench_bad_input_exits_2_without_traceback(argv, words, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert "Traceback" not in err
    for w in words:
        assert w in err


def test_algorithm_names_are_complete():
    assert set(ALGORITHMS) == {a for algos in SUPPORTED.values() for a in algos}
