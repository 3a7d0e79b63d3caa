"""How long one simulated collective step takes on rail-optimised fat-trees (a benchmark, not a test).

    .venv/bin/python benchmarks/fabric_speed.py            # 1,024 and 4,096 GPUs
    .venv/bin/python benchmarks/fabric_speed.py --alltoall-4096   # also the 2.1 M-flow ECMP all-to-all (~3 s)

Targets (one core): one step on 1,024 GPUs < 2 s, on 4,096 GPUs < 10 s. A "step" = build the routes
of every flow (ECMP hashing or ideal spreading) and solve max-min fair rates. Building the fabric is
timed apart.
"""

from __future__ import annotations

import argparse
import time

from nvcourse.fabric import fat_tree, simulate
from nvcourse.fabric.collectives import alltoall_flows, node_order, ring_flows


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--alltoall-4096", action="store_true", help="also run the all-to-all on 4,096 GPUs with ECMP")
    args = ap.parse_args()
    print(
        f"{'GPUs':>5} {'pattern':<28} {'routing':<6} {'flows':>9} {'build s':>8} {'step s':>8} {'min GB/s':>9} "
        f"{'target':>7}"
    )
    for nodes, target in ((128, 2.0), (512, 10.0)):
        fab, t_build = timed(lambda nodes=nodes: fat_tree(nodes))
        _ = fab.capacity_GBps, fab.link_tier
        cases = [
            ("ring step, packed", lambda fab=fab: ring_flows(fab)),
            ("ring step, random placement", lambda fab=fab: ring_flows(fab, node_order(fab, "random", seed=1))),
            ("all-to-all, rail-aligned", lambda fab=fab: alltoall_flows(fab)),
        ]
        for name, make in cases:
            for routing in ("ecmp", "ideal"):
                if name.startswith("all-to-all") and nodes == 512 and routing == "ecmp" and not args.alltoall_4096:
                    print(f"{fab.gpus:>5} {name:<28} {routing:<6} {'':>9} {'':>8} {'skipped (--alltoall-4096)':>26}")
                    continue
                flows = make()
                sim, t = timed(
                    lambda fab=fab, flows=flows, routing=routing: simulate(fab, *flows, routing=routing, seed=1)
                )
                ok = "ok" if t < target else "SLOW"
                print(
                    f"{fab.gpus:>5} {name:<28} {routing:<6} {flows[0].size:>9} {t_build:>8.4f} {t:>8.4f} "
                    f"{sim.min_rate_GBps:>9.3g} {ok:>7}"
                )


if __name__ == "__main__":
    main()
