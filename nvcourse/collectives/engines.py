"""The same measurement with real engines: torch.distributed (gloo on CPU, NCCL on GPUs) and MPI.

Both are optional. :func:`run_torch` and :func:`run_mpi` return the same rows as
:meth:`nvcourse.collectives.RunResult.row` and raise :class:`EngineUnavailable` (a runtime failure:
the command line prints one line and exits with status 1) with install instructions when the engine
is missing, and :class:`nvcourse.errors.RuntimeFailure` when a rank fails. An interrupt (Ctrl-C,
SIGTERM) ends every rank at once (the mpirun process group, the spawned torch processes) and is re-raised.

Method (the same as the shared-memory group): per size, one verified call, ``warmup`` calls, then
``iters`` calls each preceded by a barrier; a call's time is the slowest rank's; the row's time is
the median over calls.

Launch modes:

* spawned here: ``nvcourse bench allreduce --backend torch --procs 4`` starts 4 processes itself;
  ``--backend mpi`` runs ``mpirun -n 4 python -m nvcourse.collectives.engines mpi SPEC``;
* already launched: under ``torchrun --nproc-per-node 4 -m nvcourse bench allreduce --backend torch``
  or ``mpirun -n 4 nvcourse bench allreduce --backend mpi`` each process runs its part and rank 0
  prints.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.util import find_spec
from multiprocessing import connection

import numpy as np

from .._validate import choice
from ..errors import RuntimeFailure
from . import plan as _plan
from .resources import start_blocking_signals

__all__ = ["EngineUnavailable", "run_torch", "run_mpi", "torch_available", "mpi_available", "under_torchrun",
           "under_mpirun"]

TORCH_HINT = (
    "pip install nvcourse[torch] (CPU-only build: pip install torch --index-url https://download.pytorch.org/whl/cpu)"
)
MPI_HINT = (
    "pip install nvcourse[mpi] plus Open MPI (Debian/Ubuntu: apt-get install libopenmpi-dev openmpi-bin; "
    "macOS: brew install open-mpi; conda: conda install -c conda-forge mpi4py openmpi)"
)


class EngineUnavailable(RuntimeFailure, ValueError):
    """The requested engine (torch, mpi4py, mpirun) is not installed; the message says how to install it.

    Exit status 1 on the command line (a ``ValueError`` too, for callers that caught it as one)."""


def torch_available() -> bool:
    """True when PyTorch is installed; looked up without importing it (seconds, and a slow exit after)."""
    try:
        return find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


def mpi_available() -> bool:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return shutil.which("mpirun") is not None or shutil.which("mpiexec") is not None


def under_torchrun() -> bool:
    return "TORCHELASTIC_RUN_ID" in os.environ or all(k in os.environ for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR"))


def under_mpirun() -> bool:
    return any(k in os.environ for k in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"))


# -- shared loop ---------------------------------------------------------------------------------
def _inputs(op: str, p: int, rank: int, count: int, dtype: str):
    """(input, output, expected output) as numpy arrays: small integers, exact sums in every dtype."""
    m = count // p if op in ("reducescatter", "allgather") else count
    n_in = m if op == "allgather" else count
    n_out = m if op == "reducescatter" else count
    base = (np.arange(count) % 7).astype(dtype)
    x = (base[:n_in] + (rank % 5)).astype(dtype)
    if op == "allreduce":
        exp = base * p + sum(q % 5 for q in range(p))
    elif op == "reducescatter":
        exp = (base * p + sum(q % 5 for q in range(p)))[rank * m:(rank + 1) * m]
    elif op == "allgather":
        exp = np.concatenate([base[:m] + (q % 5) for q in range(p)])
    else:
        exp = base.copy() if rank != 0 else x.copy()
        if rank != 0:
            x = np.zeros(n_in, dtype=dtype)
    return x, np.zeros(n_out, dtype=dtype), exp.astype(dtype)


def _loop(rank: int, p: int, spec: dict, call, barrier, allmax, allsum, emit=None) -> list[dict]:
    """Measure every size of ``spec``; ``call(x, y)`` runs one collective from x into y; rank 0 passes
    each finished row to ``emit`` (so that an interrupted run keeps them)."""
    rows = []
    for op, nbytes in [(o, n) for o in spec["ops"] for n in spec["sizes"]]:
        spec = dict(spec, op=op)
        spec["cur"]["op"] = op
        itemsize = np.dtype(spec["dtype"]).itemsize
        count = _plan.normalize_count(spec["op"], p, nbytes, itemsize)
        x, y, exp = _inputs(spec["op"], p, rank, count, spec["dtype"])
        xs, ys = spec["wrap"](x), spec["wrap"](y)
        barrier()
        call(xs, ys)
        got = spec["unwrap"](ys if spec["op"] != "broadcast" else xs)
        wrong = int(allsum(float(np.count_nonzero(got != exp))))
        for _ in range(spec["warmup"]):
            call(xs, ys)
        times = []
        for _ in range(spec["iters"]):
            barrier()
            t0 = time.perf_counter()
            call(xs, ys)
            spec["sync"]()
            times.append(time.perf_counter() - t0)
        times = allmax(times)
        t = statistics.median(times)
        S = count * itemsize
        algbw = S / t / 1e9 if t > 0 else float("inf")
        rows.append({
            "op": spec["op"], "algo": spec["algo"], "backend": spec["backend"], "procs": p, "bytes": S,
            "count": count, "dtype": spec["dtype"], "time_s": t, "algbw_GBps": algbw,
            "busbw_GBps": algbw * _plan.busbw_factor(spec["op"], p), "correct": wrong == 0, "wrong": wrong,
            "iters": len(times),
        })
        if rank == 0 and emit is not None:
            emit(rows[-1])
        if rank == 0 and spec.get("progress"):
            total = len(spec["sizes"]) * len(spec["ops"])
            print(f"bench: {spec['backend']} {len(rows)}/{total} sizes", file=sys.stderr, flush=True)
    return rows


def _ops(op) -> list[str]:
    ops = [op] if isinstance(op, str) else list(op)
    for o in ops:
        choice("op", o, _plan.OPERATIONS)
    return ops


# -- torch.distributed ---------------------------------------------------------------------------
def _torch_rank(rank: int, p: int, spec: dict, init_method: str | None, emit=None) -> list[dict] | None:
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    use_cuda = torch.cuda.is_available() and torch.cuda.device_count() >= p and spec.get("allow_gpu", True)
    backend = "nccl" if use_cuda else "gloo"
    kw = {"init_method": init_method, "rank": rank, "world_size": p} if init_method else {}
    if "store" in spec:  # a spawned group: the store made by _torch_spawned (loopback only)
        kw = {"store": spec.pop("store"), "rank": rank, "world_size": p}
    dist.init_process_group(backend, **kw)
    dev = torch.device(f"cuda:{rank % max(1, torch.cuda.device_count())}") if use_cuda else torch.device("cpu")
    if use_cuda:
        torch.cuda.set_device(dev)
    cur = spec["cur"] = {}

    def call(x, y):
        op = cur["op"]
        if op == "allreduce":
            y.copy_(x)
            dist.all_reduce(y)
        elif op == "reducescatter":
            dist.reduce_scatter_tensor(y, x)
        elif op == "allgather":
            dist.all_gather_into_tensor(y, x)
        else:
            dist.broadcast(x, src=0)

    def allmax(times):
        t = torch.tensor(times, dtype=torch.float64, device=dev)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return t.cpu().tolist()

    def allsum(v):
        t = torch.tensor([v], dtype=torch.float64, device=dev)
        dist.all_reduce(t)
        return t.item()

    spec = dict(
        spec, algo=backend, backend="torch",
        wrap=lambda a: torch.from_numpy(a).to(dev),
        unwrap=lambda t: t.cpu().numpy(),
        sync=(torch.cuda.synchronize if use_cuda else (lambda: None)),
    )
    try:
        try:
            rows = _loop(rank, p, spec, call, dist.barrier, allmax, allsum, emit)
        except RuntimeError as exc:  # e.g. an op the backend does not implement
            raise EngineUnavailable(f"torch.distributed ({backend}) cannot run {cur.get('op')}: {exc}") from exc
    finally:
        dist.destroy_process_group()
    return rows if rank == 0 else None


def _loopback_listener(port: int) -> socket.socket:
    """A socket listening on 127.0.0.1:port only, for rank 0's TCPStore (``master_listen_fd``).

    Given host 127.0.0.1, torch's TCPStore server still listens on every interface ([::]): anyone on the
    network could reach this unauthenticated store (chapter 08b). Handing it a socket bound to loopback
    keeps the demo's control plane on this machine; GLOO_SOCKET_IFNAME keeps gloo's pairs there too.
    """
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(128)
    return s


def _torch_spawned(rank: int, p: int, spec: dict, port: int, conn) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and ends every rank
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        if sys.platform.startswith("linux"):
            os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
        import torch.distributed as dist

        listener = _loopback_listener(port) if rank == 0 else None  # referenced until the end: it is the store's socket
        fd = listener.fileno() if listener else None
        store = dist.TCPStore("127.0.0.1", port, p, rank == 0, master_listen_fd=fd)
        rows = _torch_rank(rank, p, dict(spec, store=store), f"tcp://127.0.0.1:{port}",
                           lambda row: conn.send(("row", row)))
        conn.send(("ok", rows))
    except BaseException as exc:  # reported to the parent
        conn.send(("err", f"{type(exc).__name__}: {exc}"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_torch(op: str | list[str], sizes: list[int], procs: int, *, iters: int = 20, warmup: int = 5,
              dtype: str = "float32", progress: bool = False, timeout_s: float = 600.0,
              on_row=None) -> list[dict] | None:
    """Measure ``op`` (one name or a list) with torch.distributed; rows on rank 0 (None on other ranks under
    torchrun). ``on_row(row)`` is called as each size finishes."""
    if not torch_available():
        raise EngineUnavailable(f"backend 'torch' needs PyTorch, which is not installed: {TORCH_HINT}")
    spec = {"ops": _ops(op), "sizes": list(sizes), "iters": iters, "warmup": warmup, "dtype": dtype,
            "progress": progress}
    if dtype == "float16":
        spec["allow_gpu"] = True
    if under_torchrun():
        world = int(os.environ["WORLD_SIZE"])
        if procs not in (None, world):
            raise ValueError(f"procs must equal torchrun's WORLD_SIZE={world}; got {procs}")
        return _torch_rank(int(os.environ["RANK"]), world, spec, None, on_row)
    ctx = mp.get_context("spawn")
    port = _free_port()
    pipes, procs_ = [], []
    for r in range(procs):
        a, b = ctx.Pipe(duplex=False)
        pr = ctx.Process(target=_torch_spawned, args=(r, procs, spec, port, b), daemon=True)
        start_blocking_signals(pr)
        b.close()
        pipes.append(a)
        procs_.append(pr)
    finished = False
    try:
        results: dict[int, tuple] = {}
        deadline = time.monotonic() + timeout_s
        while len(results) < procs:
            ready = connection.wait([c for i, c in enumerate(pipes) if i not in results], timeout=1.0)
            for c in ready:
                i = pipes.index(c)
                try:
                    msg = c.recv()
                    if msg[0] == "row":  # rank 0 finished a size
                        if on_row is not None:
                            on_row(msg[1])
                        continue
                    results[i] = msg
                except EOFError:
                    procs_[i].join(0.5)
                    results[i] = ("err", f"rank {i} died with exit code {procs_[i].exitcode}")
            if any(r[0] == "err" for r in results.values()):
                break  # a failed rank leaves the others blocked in gloo: stop waiting for them
            if time.monotonic() > deadline:
                raise RuntimeFailure(f"torch benchmark timed out after {timeout_s:g} s")
        for i in sorted(results):
            if results[i][0] == "err":
                msg = results[i][1]
                if msg.startswith("EngineUnavailable: "):
                    raise EngineUnavailable(msg.split(": ", 1)[1])
                raise RuntimeFailure(f"torch rank {i}: {msg}")
        finished = True
        return results[0][1]
    finally:  # after success the ranks exit by themselves; after an error or an interrupt they are killed now
        for pr in procs_:
            pr.join(5.0 if finished else 0.0)
        for pr in procs_:
            if pr.exitcode is None:
                pr.kill()
        for pr in procs_:
            pr.join(2.0)


# -- MPI -----------------------------------------------------------------------------------------
def _mpi_rank(spec: dict, emit=None) -> list[dict] | None:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank, p = comm.Get_rank(), comm.Get_size()
    cur = spec["cur"] = {}

    def call(x, y):
        op = cur["op"]
        if op == "allreduce":
            comm.Allreduce(x, y, op=MPI.SUM)
        elif op == "reducescatter":
            comm.Reduce_scatter_block(x, y, op=MPI.SUM)
        elif op == "allgather":
            comm.Allgather(x, y)
        else:
            comm.Bcast(x, root=0)

    def allmax(times):
        t = np.asarray(times, dtype=np.float64)
        out = np.empty_like(t)
        comm.Allreduce(t, out, op=MPI.MAX)
        return out.tolist()

    spec = dict(spec, algo="mpi", backend="mpi", wrap=lambda a: a, unwrap=lambda a: a, sync=lambda: None)
    rows = _loop(rank, p, spec, call, comm.Barrier, allmax, lambda v: comm.allreduce(v), emit)
    return rows if rank == 0 else None


def mpirun_command(procs: int) -> list[str]:
    """``mpirun -n N`` with the flags Open MPI needs as root and with more ranks than cores."""
    exe = shutil.which("mpirun") or shutil.which("mpiexec")
    if exe is None:
        raise EngineUnavailable(f"backend 'mpi' needs mpirun, which was not found: {MPI_HINT}")
    cmd = [exe, "-n", str(procs)]
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    if "Open MPI" in out or "OpenRTE" in out:
        cmd.append("--oversubscribe")
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
    return cmd


def run_mpi(op: str | list[str], sizes: list[int], procs: int, *, iters: int = 20, warmup: int = 5,
            dtype: str = "float32", progress: bool = False, timeout_s: float = 600.0, on_row=None) -> list[dict] | None:
    """Measure ``op`` with MPI (mpi4py); under mpirun runs in place, otherwise launches mpirun.
    ``on_row(row)`` gets each finished size (after an interrupt: those mpirun had printed)."""
    if not mpi_available():
        raise EngineUnavailable(f"backend 'mpi' needs mpi4py and mpirun, which are not installed: {MPI_HINT}")
    spec = {"ops": _ops(op), "sizes": list(sizes), "iters": iters, "warmup": warmup, "dtype": dtype,
            "progress": progress}
    if under_mpirun():
        return _mpi_rank(spec, on_row)
    cmd = [*mpirun_command(procs), sys.executable, "-m", "nvcourse.collectives.engines", "mpi", json.dumps(spec)]
    proc = _run_mpirun(cmd, timeout_s, on_row)
    if proc.returncode != 0:
        raise RuntimeFailure(f"mpirun failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
    if progress and proc.stderr:
        sys.stderr.write(proc.stderr)
    for line in proc.stdout.splitlines():
        if line.startswith("NVCOURSE_ROWS "):
            rows = json.loads(line[len("NVCOURSE_ROWS "):])
            for row in rows if on_row is not None else []:
                on_row(row)
            return rows
    raise RuntimeFailure(f"mpirun printed no result: {proc.stdout.strip()[-2000:]}")


def _run_mpirun(cmd: list[str], timeout_s: float, on_row=None) -> subprocess.CompletedProcess:
    """Run mpirun in its own process group, so that an interrupt or a timeout ends mpirun *and* its ranks:
    SIGTERM to the group (mpirun forwards it), SIGKILL 0.5 s later for whatever is left."""
    popen_kw = {"start_new_session": True} if os.name == "posix" else {}
    shm_dir = _private_shm_dir()
    env = dict(os.environ, OMPI_MCA_btl_vader_backing_directory=shm_dir)
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, **popen_kw)
        return _wait_mpirun(proc, cmd, timeout_s, on_row)
    finally:  # ranks killed by a signal never unlink their segments: the whole folder goes with the run
        shutil.rmtree(shm_dir, ignore_errors=True)


def _private_shm_dir() -> str:
    """A folder of this run's own for Open MPI's shared-memory segments (on tmpfs where there is one), so
    that a rank ended by a signal or a timeout cannot leave ``vader_segment.*`` files in /dev/shm."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    return tempfile.mkdtemp(prefix="nvcourse-mpi-", dir=base)


def _wait_mpirun(proc: subprocess.Popen, cmd: list[str], timeout_s: float, on_row=None) -> subprocess.CompletedProcess:
    """Wait for mpirun; on an interrupt or a timeout end its process group and pass on the rows it printed."""
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except BaseException as exc:
        for sig, wait_s in ((getattr(signal, "SIGTERM", None), 0.5), (getattr(signal, "SIGKILL", None), 2.0)):
            try:
                if os.name == "posix" and sig is not None:
                    os.killpg(proc.pid, sig)
                else:
                    proc.kill()
            except (ProcessLookupError, PermissionError):
                pass
            try:
                proc.wait(wait_s)
                break
            except subprocess.TimeoutExpired:
                continue
        try:  # rows rank 0 finished before the interrupt ("NVCOURSE_ROW {json}" lines)
            out = proc.communicate(timeout=1.0)[0] or ""
        except (subprocess.TimeoutExpired, OSError, ValueError):
            out = ""
        for line in out.splitlines() if on_row is not None else []:
            if line.startswith("NVCOURSE_ROW "):
                on_row(json.loads(line[len("NVCOURSE_ROW "):]))
        if isinstance(exc, subprocess.TimeoutExpired):
            raise RuntimeFailure(f"mpirun timed out after {timeout_s:g} s") from None
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


if __name__ == "__main__":  # mpirun -n N python -m nvcourse.collectives.engines mpi SPEC
    if len(sys.argv) == 3 and sys.argv[1] == "mpi":
        rows = _mpi_rank(json.loads(sys.argv[2]), lambda row: print("NVCOURSE_ROW " + json.dumps(row), flush=True))
        if rows is not None:
            print("NVCOURSE_ROWS " + json.dumps(rows), flush=True)
    else:
        sys.exit("usage: python -m nvcourse.collectives.engines mpi SPEC_JSON")
