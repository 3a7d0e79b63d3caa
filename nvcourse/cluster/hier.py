"""Flat vs hierarchical all-reduce across the emulated cluster's nodes (run under ``cluster run``).

    nvcourse cluster run -- python -m nvcourse.cluster.hier --min-bytes 1MiB --max-bytes 256MiB

Every rank runs this under torchrun (gloo on CPU). Per size: a flat ``all_reduce`` over all ranks, then
a hierarchical one — ``reduce`` to the node's first rank, ``all_reduce`` among those leaders across the
network, ``broadcast`` inside the node — each phase timed. A call's time is the slowest rank's; the row
keeps the median over calls. Rank 0 prints one line ``NVCOURSE_HIER {json}`` with ``nodes,
ranks_per_node, alpha_s`` (from a 4-byte flat all-reduce: ``t / 2(P−1)``) and ``rows`` of ``bytes,
flat_s, hier_s, hier_local_s, hier_network_s, correct`` (``--flat-only``: ``bytes, flat_s, correct``;
``--start-at T``: all ranks start at Unix time T, so that two jobs share the fabric for the whole run).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

from ..units import parse_size


def _sizes(lo: int, hi: int, factor: int) -> list[int]:
    out, s = [], lo
    while s <= hi:
        out.append(s)
        s *= factor
    return out


def measure(sizes: list[int], iters: int, warmup: int, *, flat_only: bool = False,
            start_at: float = 0.0) -> dict | None:
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    r = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    nodes, node = world // r, rank // r
    local = [dist.new_group(list(range(n * r, (n + 1) * r))) for n in range(nodes)][node]
    leaders = dist.new_group([n * r for n in range(nodes)])
    leader = node * r

    def slowest(values: list[float]) -> list[float]:
        t = torch.tensor(values, dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return t.tolist()

    def flat(x):
        dist.all_reduce(x)

    def hier(x, marks):
        dist.reduce(x, dst=leader, group=local)
        if rank == leader:  # the leaders line up first, so the network phase excludes waiting for a slower node
            dist.barrier(group=leaders)
        marks.append(time.perf_counter())
        if rank == leader:
            dist.all_reduce(x, group=leaders)
        marks.append(time.perf_counter())
        dist.broadcast(x, src=leader, group=local)

    if start_at:  # two jobs at once: start together so that they share the fabric for the whole run
        time.sleep(max(0.0, start_at - time.time()))
        dist.barrier()
    tiny = torch.ones(1)
    for _ in range(3):
        flat(tiny)
    small = []
    for _ in range(20):
        dist.barrier()
        t0 = time.perf_counter()
        flat(tiny)
        small.append(time.perf_counter() - t0)
    alpha = statistics.median(slowest(small)) / (2 * (world - 1))
    rows = []
    for nbytes in sizes:
        n = nbytes // 4
        base = torch.arange(n, dtype=torch.float32).remainder_(7)
        want = base * world + sum(q % 5 for q in range(world))
        f, h, hn, ok = [], [], [], True
        for i in range(warmup + iters):
            x = base + rank % 5
            dist.barrier()
            t0 = time.perf_counter()
            flat(x)
            t1 = time.perf_counter()
            ok = ok and bool(torch.equal(x, want))
            if flat_only:
                f.append(t1 - t0) if i >= warmup else None
                continue
            x = base + rank % 5
            marks: list[float] = []
            dist.barrier()
            t2 = time.perf_counter()
            hier(x, marks)
            t3 = time.perf_counter()
            ok = ok and bool(torch.equal(x, want))
            if i >= warmup:
                f.append(t1 - t0)
                h.append(t3 - t2)
                hn.append(marks[1] - marks[0] if rank == leader else 0.0)  # the leaders' network phase
        good = slowest([0.0 if ok else 1.0])[0] == 0.0
        if flat_only:
            rows.append({"bytes": nbytes, "flat_s": statistics.median(slowest(f)), "correct": good})
            continue
        f, h, hn = (slowest(v) for v in (f, h, hn))
        t_h, t_n = statistics.median(h), statistics.median(hn)
        rows.append({"bytes": nbytes, "flat_s": statistics.median(f), "hier_s": t_h,
                     "hier_local_s": max(0.0, t_h - t_n), "hier_network_s": t_n, "correct": good})
        if rank == 0:
            print(f"hier: {nbytes} B done", file=sys.stderr, flush=True)
    dist.destroy_process_group()
    if rank != 0:
        return None
    return {"nodes": nodes, "ranks_per_node": r, "alpha_s": alpha, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m nvcourse.cluster.hier")
    ap.add_argument("--min-bytes", default="1MiB")
    ap.add_argument("--max-bytes", default="256MiB")
    ap.add_argument("--step-factor", type=int, default=4)
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--flat-only", action="store_true", help="only the flat all-reduce")
    ap.add_argument("--start-at", type=float, default=0.0, help="Unix time to start at (two jobs at once)")
    args = ap.parse_args(argv)
    lo, hi = parse_size(args.min_bytes, what="min-bytes"), parse_size(args.max_bytes, what="max-bytes")
    if lo > hi or args.step_factor < 2 or args.iters < 1 or args.warmup < 0:
        raise SystemExit("hier: need min-bytes <= max-bytes, step-factor >= 2, iters >= 1, warmup >= 0")
    if "WORLD_SIZE" not in os.environ:
        raise SystemExit("hier: run me under torchrun, e.g. nvcourse cluster run -- python -m nvcourse.cluster.hier")
    out = measure(_sizes(lo, hi, args.step_factor), args.iters, args.warmup, flat_only=args.flat_only,
                  start_at=args.start_at)
    if out is not None:
        print("NVCOURSE_HIER " + json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
