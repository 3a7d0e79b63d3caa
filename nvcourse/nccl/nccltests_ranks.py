"""The rank count of an nccl-tests run pasted without its device lines, from what else the paste shows.

Used by :mod:`.nccltests` after the device lines (and the per-rank count column) had their say:

* :func:`nranks_from_command`: a ``*_perf`` binary pasted with a command line that starts it directly (no
  launcher: :func:`starts_directly`) runs as one process, so its ranks are its threads (``-t``) times its GPUs
  (``-g``);
* :func:`nranks_from_ratio`: busbw/algbw is 2(n-1)/n for allreduce and (n-1)/n for the split operations
  (nccl-tests ``doc/PERFORMANCE.md``), solved for n when the printed rounding cannot move it.

>>> from types import SimpleNamespace
>>> run = SimpleNamespace(nranks=None, notes=[], launch={"launcher": None, "binary": "sendrecv_perf",
...                                                      "args": ["-b", "128M", "-g", "8"]})
>>> nranks_from_command(run, starts_directly("$ ./build/sendrecv_perf -b 128M -g 8", "sendrecv_perf")); run.nranks
8
"""

from __future__ import annotations

import re
from typing import Any

from .paste import clean_line

__all__ = ["option_counts", "starts_directly", "nranks_from_command", "nranks_from_launcher", "nranks_from_ratio"]

# ``run`` below is a :class:`~nvcourse.nccl.nccltests.NcclTestsRun`, typed loosely so this module does not import
# the one that imports it

#: nccl-tests' options for threads per process and GPUs per thread (short and long forms; both default to 1)
_OPTS = {"-t": "t", "--nthreads": "t", "-g": "g", "--ngpus": "g"}


def option_counts(args: list[str]) -> dict[str, int]:
    """{'g': GPUs, 't': threads} as the args set them: '-g 8', '-g8', '--ngpus 8', '--ngpus=8'."""
    got: dict[str, int] = {}
    for i, tok in enumerate(args):
        name, eq, val = tok.partition("=")
        if name in _OPTS and not eq:
            name, val = tok, args[i + 1] if i + 1 < len(args) else ""
        elif tok[:2] in ("-g", "-t") and tok[2:].isdigit():
            name, val = tok[:2], tok[2:]
        if name in _OPTS and val.isdigit():
            got[_OPTS[name]] = int(val)
    return got


def starts_directly(text: str, binary: str | None) -> bool:
    """Whether a line of ``text`` starts ``binary`` itself (after a shell prompt and ``VAR=VAL`` assignments): a
    command such as ``./build/sendrecv_perf -g 8``, not ``srun ... all_reduce_perf`` nor a sentence naming it."""
    if not binary:
        return False
    for raw in text.splitlines():
        toks = re.sub(r"^(?:\S*[@:]\S*[$#]\s+|\$\s+)", "", clean_line(raw)).split()
        while toks and re.fullmatch(r"[A-Za-z_]\w*=\S*", toks[0]):
            toks = toks[1:]
        if toks and toks[0].rsplit("/", 1)[-1] == binary:
            return True
    return False


def nranks_from_command(run: Any, direct: bool) -> None:
    """Set ``run.nranks`` to threads x GPUs when the pasted command starts the binary directly (``direct``, see
    :func:`starts_directly`) and sets ``-g`` or ``-t``; left alone when the rank count is known, a launcher
    starts the processes, or no command was pasted."""
    launch = run.launch or {}
    if run.nranks is not None or not direct or launch.get("launcher") or not launch.get("binary"):
        return
    got = option_counts(list(launch.get("args") or []))
    if got:
        run.nranks = got.get("g", 1) * got.get("t", 1)
        run.notes.append(f"no device lines: {run.nranks} ranks from the command (one process, no launcher)")


def nranks_from_launcher(run: Any) -> None:
    """Raise ``run.nranks`` to what the launcher asked for (``-np`` processes x GPUs x threads per process, from
    the header or the flags) when the pasted device lines stop short of it: a paste cut in its device lines. Left
    alone when no launcher count was pasted or every process printed rank 0 (a build without MPI=1, where each
    process is a test of its own)."""
    launch = run.launch or {}
    if not launch.get("launcher") or not str(launch.get("np") or "").isdigit() or not run.ranks:
        return
    if len({r["rank"] for r in run.ranks}) < len(run.ranks):
        return
    per_process = _ranks_per_process(run)
    asked = int(launch["np"]) * per_process
    if run.nranks is not None and asked > run.nranks:
        gpus = f"{per_process} GPU{'s' if per_process > 1 else ''}"
        starts = (f"{launch['np']} processes of {gpus} each" if int(launch["np"]) > 1 else f"1 process of {gpus}")
        run.notes.append(f"device lines for {asked - run.nranks} of {asked} ranks are not in the paste "
                         f"({launch['launcher']} starts {starts})")
        run.nranks = asked


def _ranks_per_process(run: Any) -> int:
    """GPUs x threads each process drives: the header's nGpus and nThread, else the command's -g and -t, else 1."""
    got = option_counts(list((run.launch or {}).get("args") or []))
    header = run.header or {}
    return header.get("ngpus", got.get("g", 1)) * header.get("nthread", got.get("t", 1))


def nranks_from_launcher_alone(run: Any) -> None:
    """With no device lines, and no rank count from the rows: the launcher's processes x GPUs x threads per process
    (``mpirun -np 40 ... -g 1``), said in a note. Called last, so a busbw that shows one rank per process (a build
    without MPI=1) has already been read."""
    launch = run.launch or {}
    if run.nranks is not None or run.ranks or not str(launch.get("np") or "").isdigit():
        return
    per_process = _ranks_per_process(run)
    run.nranks = int(launch["np"]) * per_process
    run.notes.append(f"no device lines: {run.nranks} ranks from the command ({launch['launcher']} -np {launch['np']} "
                     f"x {per_process} GPU{'s' if per_process > 1 else ''} per process)")


def nranks_from_ratio(run: Any, big: dict) -> None:
    """With no device lines and no count hint: the rank count from busbw/algbw (allreduce 2(n-1)/n, the
    (n-1)/n operations), on the row with the largest algbw (GB/s), only when the 2-decimal rounding cannot move
    it to another integer."""
    alg, bus = big["oop_algbw_GBps"], big["oop_busbw_GBps"]
    timed = [r for r in run.rows if (r.get("oop_algbw_GBps") or 0) >= 0.5]
    if (bus == 0 and alg >= 0.5 and run.op in ("allreduce", "allgather", "reducescatter", "alltoall")
            and all(not r.get("oop_busbw_GBps") for r in timed)):
        _one_rank(run, alg)  # on 2 ranks or more busbw would be at least alg / 2: printed, not 0.00
        return
    r = bus / alg
    if run.op == "allreduce" and 1.0 <= r < 2.0:  # 2(n-1)/n = 1 exactly on 2 ranks
        n, slope = 2 / (2 - r), 2 / (2 - r) ** 2
    elif run.op in ("allgather", "reducescatter", "alltoall", "scatter", "gather") and 0.0 < r < 1.0:
        n, slope = 1 / (1 - r), 1 / (1 - r) ** 2
    else:
        return
    err = slope * r * (0.005 / alg + 0.005 / bus)  # how far the printed rounding can move n
    if abs(n - round(n)) < 0.1 and err < 0.3 and round(n) >= 2:
        run.nranks = int(round(n))
        run.notes.append(f"no device lines: {run.nranks} ranks inferred from busbw/algbw = {r:.4f} ({run.op})")


def _one_rank(run: Any, alg: float) -> None:
    """busbw 0.00 where algbw is not: these operations' busbw factor (2(n-1)/n, (n-1)/n) is 0 on one rank only.
    Under a launcher that starts several processes, each of them ran a test of its own (a build without MPI=1)."""
    run.nranks = 1
    run.notes.append(f"no device lines: 1 rank inferred from busbw 0.00 where algbw is {alg:g} GB/s ({run.op}'s "
                     "busbw is 0 on one rank only)")
    launch = run.launch or {}
    if str(launch.get("np") or "").isdigit() and int(launch["np"]) > 1:
        run.notes.append(f"busbw 0.00 under {launch['launcher']} -np {launch['np']}: nccl-tests was likely built "
                         "without MPI=1, so each process ran its own 1-rank test")
