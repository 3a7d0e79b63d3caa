"""Write measurement rows in nccl-tests' output format, so `nvcourse nccl-tests` (or any nccl-tests tool) reads them.

Used by ``nvcourse bench ... --format nccl-tests``. Only the out-of-place columns are printed: the bench measures
one buffer layout, and inventing in-place figures would be wrong. ``count`` follows nccl-tests' convention
(elements per rank for allgather, reducescatter and alltoall; elements of S otherwise).
"""

from __future__ import annotations

import os
import socket

__all__ = ["format_nccl_tests"]

_BINARY = {"allreduce": "all_reduce", "allgather": "all_gather", "reducescatter": "reduce_scatter",
           "broadcast": "broadcast", "reduce": "reduce", "alltoall": "alltoall", "sendrecv": "sendrecv"}
_TYPE = {"float32": ("float", 4), "float64": ("double", 8), "float16": ("half", 2), "int32": ("int32", 4),
         "int64": ("int64", 8)}
_REDUCING = ("allreduce", "reducescatter", "reduce")


def format_nccl_tests(rows: list[dict], op: str, procs: int, *, iters: int, warmup: int, factor: int = 2,
                      device: str = "nvcourse CPU process (shared memory)") -> str:
    """nccl-tests text for ``rows`` (``nvcourse bench`` rows: bytes, dtype, time_s, algbw_GBps, busbw_GBps, wrong)."""
    if op not in _BINARY:
        raise ValueError(f"op must be one of {', '.join(_BINARY)} for --format nccl-tests; got {op!r}")
    sizes = [r["bytes"] for r in rows] or [0]
    host = socket.gethostname() or "localhost"
    pid = os.getpid()
    out = [
        f"# Collective test starting: {_BINARY[op]}_perf",
        f"# nThread 1 nGpus 1 minBytes {min(sizes)} maxBytes {max(sizes)} step: {factor}(factor) warmup iters: "
        f"{warmup} iters: {iters} agg iters: 1 validation: 1 graph: 0",
        "#",
        "# Using devices",
    ]
    for rank in range(procs):
        out.append(f"#  Rank {rank:2d} Group  0 Pid {pid:6d} on {host:>10s} device {rank:2d} [cpu] {device}")
    out += [
        "#",
        "#                                                              out-of-place",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)",
    ]
    bad = 0
    for r in rows:
        tname, tsize = _TYPE.get(r["dtype"], (r["dtype"], 4))
        count = r["bytes"] // tsize // (procs if op in ("allgather", "reducescatter", "alltoall") else 1)
        redop = "sum" if op in _REDUCING else "none"
        root = 0 if op in ("broadcast", "reduce") else -1
        wrong = "N/A" if r.get("wrong") is None else str(r["wrong"])
        bad += r.get("wrong") or 0
        out.append(f"{r['bytes']:12d}  {count:12d}  {tname:>8s}  {redop:>6s}  {root:6d}  {r['time_s'] * 1e6:7.2f}  "
                   f"{r['algbw_GBps']:6.2f}  {r['busbw_GBps']:6.2f}  {wrong:>5s}")
    avg = sum(r["busbw_GBps"] for r in rows) / len(rows) if rows else 0.0
    out += [f"# Out of bounds values : {bad} {'FAILED' if bad else 'OK'}", f"# Avg bus bandwidth    : {avg:g} ", "#"]
    return "\n".join(out)
