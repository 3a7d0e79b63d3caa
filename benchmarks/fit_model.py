#!/usr/bin/env python3
"""Measured vs alpha-beta model for every allreduce algorithm, on raw shared memory and on emulated links.

    .venv/bin/python benchmarks/fit_model.py [--procs 2 4] [--quick]

1. Fit α and β from a ping-pong between two workers (least squares on t = α + n/β, 8 B to 16 MiB)
   and γ from np.add in one process.
2. For N in --procs, every allreduce algorithm, sizes 64 KiB to 64 MiB: measured time (median over
   calls of the slowest rank) vs :func:`nvcourse.collectives.model.predict`; relative error.
3. The same on an emulated link (LinkEmulation, "PCIe-like" scaled to CPU: 100 µs, 1 GB/s), where the
   model's α and β are the emulation's parameters: there ring and tree trade places as predicted.
Target: median |error| <= 30 %.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nvcourse.collectives import SUPPORTED, LinkEmulation, ProcessGroup  # noqa: E402
from nvcourse.collectives.fit import fit_alpha_beta, measure_gamma  # noqa: E402
from nvcourse.collectives.model import predict  # noqa: E402
from nvcourse.units import format_size  # noqa: E402


def sweep(p: int, sizes: list[int], alpha: float, beta: float, gamma: float | None, emulation=None) -> list[tuple]:
    out = []
    algos = [a for a in SUPPORTED["allreduce"] if not (a == "rhd" and p & (p - 1))]
    with ProcessGroup(p, timeout_s=60, emulation=emulation) as pg:
        for s in sizes:
            for a in algos:
                iters = 3 if s >= 16 * 2**20 else 7
                r = pg.run("allreduce", s, algo=a, iters=iters, warmup=1)
                pred = predict("allreduce", a, p, r.nbytes, alpha, beta, gamma)
                out.append((p, a, r.nbytes, r.time_s, pred, r.correct))
                print(f"  n={p} {a:>6} {format_size(s):>8}: measured {r.time_s * 1e6:10.1f} us, "
                      f"model {pred * 1e6:10.1f} us", file=sys.stderr, flush=True)
    return out


def report(title: str, rows: list[tuple]) -> None:
    print(f"## {title}\n")
    print("| N | algo | size | measured µs | model µs | error |")
    print("|---|---|---|---|---|---|")
    errs: dict[int, list[float]] = {}
    for p, a, s, t, pred, ok in rows:
        e = (pred - t) / t
        errs.setdefault(p, []).append(abs(e))
        print(f"| {p} | {a} | {format_size(s)} | {t * 1e6:.1f} | {pred * 1e6:.1f} | {e * 100:+.0f} %{'' if ok else ' WRONG'} |")
    print()
    for p, es in errs.items():
        print(f"- N={p}: median |error| {statistics.median(es) * 100:.0f} % over {len(es)} points")
    allerr = [e for es in errs.values() for e in es]
    print(f"- all: median |error| {statistics.median(allerr) * 100:.0f} % (target <= 30 %)\n")
    for p in errs:
        for s in sorted({r[2] for r in rows if r[0] == p}):
            pts = [r for r in rows if r[0] == p and r[2] == s]
            best_m = min(pts, key=lambda r: r[3])[1]
            best_p = min(pts, key=lambda r: r[4])[1]
            print(f"- N={p} {format_size(s)}: fastest measured {best_m}, fastest predicted {best_p}")
    print()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--procs", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--quick", action="store_true", help="fewer sizes")
    args = ap.parse_args()
    sizes = [64 * 2**10 * 4**k for k in range(6)]  # 64 KiB .. 64 MiB
    emu_sizes = [2**10 * 4**k for k in range(7)]  # 1 KiB .. 4 MiB
    if args.quick:
        sizes, emu_sizes = sizes[::2], emu_sizes[::2]
    with ProcessGroup(2) as pg:
        alpha, beta = fit_alpha_beta(pg)
    gamma = measure_gamma()
    print("# Measured vs alpha-beta model (allreduce, float32)\n")
    print(f"Ping-pong fit: α = {alpha * 1e6:.2f} µs, β = {beta / 1e9:.2f} GB/s; np.add rate γ = {gamma / 1e9:.2f} GB/s.\n")
    rows = []
    for p in args.procs:
        rows += sweep(p, sizes, alpha, beta, gamma)
    report("Raw shared memory (model: fitted α, β, γ)", rows)
    emu = LinkEmulation(latency_s=100e-6, bandwidth_Bps=1e9)
    rows = []
    for p in args.procs:
        rows += sweep(p, emu_sizes, emu.latency_s, emu.bandwidth_Bps, None, emulation=emu)
    report("Emulated link: 100 µs per hop, 1 GB/s per link (model: α = 100 µs, β = 1 GB/s, no γ)", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
