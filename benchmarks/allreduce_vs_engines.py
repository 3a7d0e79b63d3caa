#!/usr/bin/env python3
"""Our best shared-memory allreduce vs gloo (torch.distributed) vs Open MPI, side by side in one run.

    .venv/bin/python benchmarks/allreduce_vs_engines.py [--procs 2 4] [--sizes 8 64KiB 1MiB 16MiB 64MiB]

Same method for every engine: per size one verified call, warm-up, then calls each preceded by a
barrier; a call's time is the slowest rank's; the median over calls is reported. busbw = S/t ×
2(n-1)/n (nccl-tests). Also prints the machine's memory-copy ceiling (one process, np.copyto).
Engines that are not installed are skipped (pip install torch / mpi4py + Open MPI).

Targets (float32, 2-core VM): at 64 MiB, N = 2 and 4, busbw >= 1.0x Open MPI and >= 2x gloo;
8-byte latency at N = 2 <= 100 us.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nvcourse.collectives import engines  # noqa: E402
from nvcourse.collectives.cli import run_shm  # noqa: E402
from nvcourse.units import format_size, parse_size  # noqa: E402


def memcpy_ceiling(nbytes: int, reps: int = 7) -> tuple[float, float]:
    """(median, best) GB/s of np.copyto of one nbytes array into another (S/t), one process."""
    a = np.ones(nbytes // 4, dtype=np.float32)
    b = np.empty_like(a)
    np.copyto(b, a)
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        np.copyto(b, a)
        ts.append(time.perf_counter() - t0)
    return nbytes / statistics.median(ts) / 1e9, nbytes / min(ts) / 1e9


def iters_for(nbytes: int) -> tuple[int, int]:
    return (10, 3) if nbytes >= 16 * 2**20 else (30, 5)


def measure(engine: str, procs: int, sizes: list[int], algo: str) -> dict[int, dict]:
    rows = {}
    for s in sizes:
        iters, warmup = iters_for(s)
        if engine == "shm":
            r = run_shm("allreduce", [s], procs, algo=algo, iters=iters, warmup=warmup, timeout_s=60)
        elif engine == "gloo":
            r = engines.run_torch("allreduce", [s], procs, iters=iters, warmup=warmup)
        else:
            r = engines.run_mpi("allreduce", [s], procs, iters=iters, warmup=warmup)
        rows[s] = r[0]
        print(f"  {engine:>4} n={procs} {format_size(s):>8}: {r[0]['time_s'] * 1e6:10.1f} us  "
              f"busbw {r[0]['busbw_GBps']:6.3f} GB/s  correct={r[0]['correct']}", file=sys.stderr, flush=True)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--procs", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--sizes", nargs="+", default=["8", "64KiB", "1MiB", "16MiB", "64MiB"])
    ap.add_argument("--algo", default="direct", help="our algorithm (default direct)")
    ap.add_argument("--json", default=None, help="also write all rows to this file")
    args = ap.parse_args()
    sizes = [parse_size(s) for s in args.sizes]
    available = ["shm"]
    available += ["gloo"] if engines.torch_available() else []
    available += ["mpi"] if engines.mpi_available() else []
    missing = sorted({"gloo", "mpi"} - set(available))

    med64, best64 = memcpy_ceiling(64 * 2**20)
    med256, best256 = memcpy_ceiling(256 * 2**20)
    print("# CPU allreduce: nvcourse shm vs engines (float32, SUM)\n")
    print(f"Memory-copy ceiling, one process, np.copyto (S/t): 64 MiB {med64:.2f} GB/s median "
          f"({best64:.2f} best); 256 MiB {med256:.2f} GB/s median ({best256:.2f} best).\n")
    if missing:
        print(f"Not installed, skipped: {', '.join(missing)}.\n")
    all_rows = []
    results: dict[tuple[str, int], dict[int, dict]] = {}
    for p in args.procs:
        for eng in available:
            results[(eng, p)] = measure(eng, p, sizes, args.algo)
            all_rows += list(results[(eng, p)].values())
    for p in args.procs:
        print(f"## N = {p}\n")
        head = "| size | " + " | ".join(f"{e} µs | {e} busbw" for e in available)
        ratios = [e for e in ("mpi", "gloo") if e in available]
        head += "".join(f" | shm/{e} busbw" for e in ratios) + " | correct |"
        print(head)
        print("|" + "---|" * (2 + 2 * len(available) + len(ratios)))
        for s in sizes:
            cells = [format_size(s)]
            for e in available:
                r = results[(e, p)][s]
                cells += [f"{r['time_s'] * 1e6:.1f}", f"{r['busbw_GBps']:.3f}"]
            shm = results[("shm", p)][s]["busbw_GBps"]
            cells += [f"{shm / results[(e, p)][s]['busbw_GBps']:.2f}x" for e in ratios]
            cells.append("yes" if all(results[(e, p)][s]["correct"] for e in available) else "NO")
            print("| " + " | ".join(cells) + " |")
        print()
    print("## Targets\n")
    big = 64 * 2**20
    if big in sizes:
        for p in args.procs:
            shm = results[("shm", p)][big]["busbw_GBps"]
            for e, goal in (("mpi", 1.0), ("gloo", 2.0)):
                if e in available:
                    ratio = shm / results[(e, p)][big]["busbw_GBps"]
                    print(f"- N={p}, 64 MiB: shm busbw {shm:.2f} GB/s = {ratio:.2f}x {e} "
                          f"(target >= {goal:g}x): {'MET' if ratio >= goal else 'MISSED'}")
            print(f"- N={p}, 64 MiB: shm busbw = {shm / med64:.2f} of the one-process memcpy median")
    if 8 in sizes and 2 in args.procs:
        lat = results[("shm", 2)][8]["time_s"] * 1e6
        print(f"- N=2, 8 B latency: {lat:.1f} µs (target <= 100 µs): {'MET' if lat <= 100 else 'MISSED'}")
    if args.json:
        Path(args.json).write_text(json.dumps(all_rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
