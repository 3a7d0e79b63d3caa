"""Load benchmark of the classroom hub: N simulated learners run chapter 04's demos at the same time.

    .venv/bin/python benchmarks/hub_load.py [--learners 8] [--out benchmarks/HUB_LOAD.md]

Starts the hub of ``tasks.py hub`` on a free loopback port, makes N learners start their servers through
the REST API and run chapter 04's real multi-process all-reduces at once, then stops everything and
checks: every result correct, no two learners' shared-memory names in common, no /dev/shm entry and no
process left. Memory per learner is the PSS of each learner's server with its kernel, measured while
all are up. Writes a Markdown report.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nvcourse.devtools.hub import Hub  # noqa: E402
from nvcourse.devtools.hub_load import simulate  # noqa: E402


def learner_pss_MiB(hub_pid: int) -> dict[str, float]:
    """PSS (MiB) of each learner's single-user server and everything under it, by learner name."""
    out: dict[str, float] = {}
    for proc in psutil.Process(hub_pid).children(recursive=True):
        try:
            cmd = " ".join(proc.cmdline())
            if "jupyterhub.singleuser" not in cmd:
                continue
            user = proc.environ().get("JUPYTERHUB_USER", "?")
            tree = [proc, *proc.children(recursive=True)]
            out[user] = sum(p.memory_full_info().pss for p in tree) / 2**20
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=8)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "HUB_LOAD.md")
    args = parser.parse_args()
    shm_before = set(os.listdir("/dev/shm"))
    with tempfile.TemporaryDirectory(prefix="nvcourse-hub-") as tmp:
        t0 = time.monotonic()
        with Hub(Path(tmp), users=args.learners) as hub:
            up_s = time.monotonic() - t0
            runs = simulate(hub, args.learners)
            pss = learner_pss_MiB(hub.proc.pid)  # servers and their kernels still up
            hub_pid = hub.proc.pid
        left = [p for p in psutil.process_iter(["pid", "cmdline"])
                if any("jupyterhub" in c or tmp in c for c in (p.info["cmdline"] or []))]
    names = [n for r in runs for n in r.shm_names]
    # Only the learners' own segments count: other programs on the machine may create /dev/shm entries meanwhile.
    prefixes = {n[:11] for n in names}  # "nvc" + 8 hex digits: one ProcessGroup
    new_entries = sorted(set(os.listdir("/dev/shm")) - shm_before)
    shm_left = [n for n in new_entries if n[:11] in prefixes]
    collisions = len(names) - len(set(names))
    ok = [r for r in runs if r.correct and not r.error]
    rows = "\n".join(f"| {r.name} | {r.start_s:.1f} | {r.demo_s:.1f} | {'yes' if r.correct else 'NO'} | "
                     f"{pss.get(r.name, float('nan')):.0f} | {r.error or ''} |" for r in runs)
    per_learner = statistics.median(pss.values()) if pss else float("nan")
    total_gib = psutil.virtual_memory().total / 2**30
    lines = [
        "# Classroom hub under load",
        "",
        f"Measured {time.strftime('%Y-%m-%d')} on {os.cpu_count()} CPUs, {total_gib:.0f} GiB "
        f"(`benchmarks/hub_load.py --learners {args.learners}`): the hub of `tasks.py hub` on loopback, "
        f"{args.learners} learners starting their servers and running chapter 04's all-reduces (4 processes "
        "each, ring and tree, 1 MiB) at the same time.",
        "",
        f"- hub up in {up_s:.1f} s; results correct: **{len(ok)} of {len(runs)}**",
        f"- shared-memory names seen: {len(names)}, in common between learners: **{collisions}**",
        f"- left after shutdown: **{len(shm_left)}** of the learners' /dev/shm entries, **{len(left)}** processes "
        f"(hub pid was {hub_pid}; new /dev/shm entries from anything on the machine: {len(new_entries)})",
        f"- memory per learner (server + kernel after the demo, PSS): median **{per_learner:.0f} MiB**; "
        f"at that rate, leaving 2 GiB to the system: a 16 GB machine holds about "
        f"{int((16e9 / 2**20 - 2048) // per_learner) if pss else 0} learners and a 64 GB one about "
        f"{int((64e9 / 2**20 - 2048) // per_learner) if pss else 0} by memory",
        f"- CPU is what limits a room: each demo runs 4 processes, so {args.learners} learners at once on "
        f"{os.cpu_count()} CPUs took {min(r.demo_s for r in runs):.1f}-{max(r.demo_s for r in runs):.1f} s"
        "; plan one core per 2-4 learners who run demos at the same moment",
        "",
        "| learner | server start (s) | demo (s) | correct | PSS (MiB) | error |",
        "|---|---|---|---|---|---|",
        rows,
        "",
    ]
    args.out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    return 0 if len(ok) == len(runs) and not collisions and not shm_left and not left else 1


if __name__ == "__main__":
    sys.exit(main())
