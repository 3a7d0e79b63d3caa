"""Speed of the models behind the sliders (a benchmark, not a test).

Targets: the 10^4-size sweep of every catalog link evaluates in milliseconds (issue: link model);
one collective prediction well under a millisecond, a 64-size x 7-algorithm sweep < 50 ms (cost model).

    .venv/bin/python benchmarks/model_speed.py
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from nvcourse import catalog, costmodel, linkmodel


def best_of(fn, repeat: int = 20) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def fresh_sizes(n: int = 64) -> np.ndarray:
    """A new size grid each call, so no cache can answer for the model."""
    return np.logspace(3, 10, n) * (1 + np.random.default_rng().random())


def main() -> int:
    sizes = np.logspace(0, 11, 10_000)
    rows = [
        ("linkmodel: 10^4 sizes x every link", lambda: linkmodel.sweep_all_links(sizes), 0.010),
        (
            "costmodel: one prediction (auto)",
            lambda: costmodel.predict("allreduce", "dgx-h100", 8, int(fresh_sizes(1)[0])),
            0.001,
        ),
        (
            "costmodel: 64 sizes, all algorithms",
            lambda: costmodel.predict_sweep("allreduce", "dgx-h100", 8, fresh_sizes()),
            0.050,
        ),
        (
            "costmodel: 64 sizes, 4 nodes",
            lambda: costmodel.predict_sweep("allreduce", "dgx-h100", 8, fresh_sizes(), nodes=4),
            0.050,
        ),
    ]
    print(f"{len(catalog.links())} links in the catalog")
    print(f"{'what':<40} {'best':>10} {'median':>10} {'target':>10}  verdict")
    failed = 0
    for name, fn, target in rows:
        best, median = best_of(fn)
        ok = median <= target
        failed += not ok
        print(
            f"{name:<40} {best * 1e3:>8.3f}ms {median * 1e3:>8.3f}ms {target * 1e3:>8.1f}ms  {'OK' if ok else 'SLOW'}"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
