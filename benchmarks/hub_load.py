"""Load benchmark of the classroom hub: N simulated learners (default 30) through the login form, each opening
chapter 04, its exercises and the quiz, and running the chapter.

    sudo .venv/bin/python benchmarks/hub_load.py [--learners 30] [--arrival 600] [--first-cell-only]

Starts the hub of ``tasks.py hub`` (as root: one Unix account per learner, TLS, limits) on a free loopback port.
The learners arrive at random within ``--arrival`` seconds, as a room does after the instructor gives the
address (default 600: logins staggered over 10 minutes, as the instructor guide advises for a small machine;
180 is a room let in at once). Each logs in through the form, opens three notebooks (three kernels), runs every
code cell of
chapter 04 (``--first-cell-only``: its imports) and the chapter's live all-reduce (4 processes, ring and tree,
checked against numpy), then probes from its own kernel what it can reach of another learner's home and of
the hub's secrets (:mod:`nvcourse.devtools.hub_load`).

Measured while every learner's three kernels are still up: PSS (proportional set size: shared pages split
between the processes that share them) and CPU time of each learner's processes, the machine's memory in use
and its CPU time over the whole run. Then the hub is stopped and nothing may be left (accounts, homes, the
learners' shared memory, processes). Writes a Markdown report (``--out``, default benchmarks/HUB_LOAD.md) and
exits 1 when any learner failed or any isolation check did not hold.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nvcourse.devtools import hub_accounts  # noqa: E402
from nvcourse.devtools.hub import Hub, teardown  # noqa: E402
from nvcourse.devtools.hub_load import secrets_seen, simulate, usage  # noqa: E402

ISOLATION = ("list_other_home", "read_other_file", "read_secrets", "read_hub_environ", "write_course")


class MemorySampler(threading.Thread):
    """The machine's memory in use (GiB), sampled every second; ``peak`` after ``stop``."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak = 0.0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(1.0):
            vm = psutil.virtual_memory()
            self.peak = max(self.peak, (vm.total - vm.available) / 2**30)

    def stop(self) -> float:
        self.done.set()
        self.join(5)
        return self.peak


def _used_gib() -> float:
    vm = psutil.virtual_memory()
    return (vm.total - vm.available) / 2**30


def _pct(values: list[float], q: float) -> float:
    vals = sorted(values)
    return vals[min(len(vals) - 1, int(round(q * (len(vals) - 1))))] if vals else float("nan")


def measure(args: argparse.Namespace) -> dict:
    hub_dir = Path(tempfile.mkdtemp(prefix="nvcourse-hub-load-"))  # mkdtemp is 0700; the hub opens it to learners
    mem_before = _used_gib()
    cpu0 = psutil.cpu_times()
    sampler = MemorySampler()
    sampler.start()
    t0 = time.monotonic()
    try:
        with Hub(hub_dir, users=args.learners, startup_s=300) as hub:
            up_s = time.monotonic() - t0
            runs = simulate(hub, args.learners, full_chapter=not args.first_cell_only, arrival_s=args.arrival,
                            timeout_s=args.timeout)
            wall_s = time.monotonic() - t0 - up_s
            per = usage(hub)
            mem_all_up = _used_gib()
            seen = secrets_seen(hub, runs)
            uids = {a.pw_uid for a in hub_accounts.ours(hub_dir)}
            accounts = hub.prepared.accounts
            limits = hub.prepared.limits
        stop_s = time.monotonic() - t0 - up_s - wall_s
        left_accounts = len(hub_accounts.ours(hub_dir))
        left_homes = len(list((hub_dir / "homes").iterdir())) if (hub_dir / "homes").exists() else 0
        left_procs = len([p for p in psutil.process_iter(["uids"]) if p.info["uids"] and p.info["uids"].real in uids])
    finally:
        peak = sampler.stop()
        teardown(hub_dir)
        shutil.rmtree(hub_dir, ignore_errors=True)
    cpu1 = psutil.cpu_times()
    busy = sum(getattr(cpu1, f) - getattr(cpu0, f) for f in ("user", "system", "nice"))
    names = [n for r in runs for n in r.shm_names]
    return {"runs": runs, "per": per, "seen": seen, "up_s": up_s, "wall_s": wall_s, "stop_s": stop_s,
            "mem_before": mem_before, "mem_all_up": mem_all_up, "peak": peak, "busy_cpu_s": busy,
            "accounts": accounts, "limits": limits, "left_accounts": left_accounts, "left_homes": left_homes,
            "left_procs": left_procs, "shm_left": sorted(set(names) & set(os.listdir("/dev/shm"))),
            "collisions": len(names) - len(set(names))}


def report(args: argparse.Namespace, m: dict) -> tuple[str, bool]:
    runs, per = m["runs"], m["per"]
    ok = [r for r in runs if r.correct and not r.error and r.kernels == 3 and r.news_off]
    leaks = [r.name for r in runs if r.probe and any(r.probe.get(k) for k in ISOLATION)]
    probed = [r for r in runs if r.probe]
    root_uid = [r.name for r in probed if r.probe.get("uid") == 0]
    pss = [v["pss_MiB"] for v in per.values()]
    cpu = [v["cpu_s"] for v in per.values()]
    ncpu, total_gib = os.cpu_count() or 1, psutil.virtual_memory().total / 2**30
    p90 = _pct(pss, 0.9)
    machine_per = (m["mem_all_up"] - m["mem_before"]) / max(1, len(runs)) * 1024
    rows = "\n".join(
        f"| {r.name} | {r.login_s:.1f} | {r.open_s:.1f} | {r.demo_s:.1f} | {'yes' if r.correct else 'NO'} | "
        f"{per.get(r.name, {}).get('pss_MiB', float('nan')):.0f} | {per.get(r.name, {}).get('cpu_s', float('nan')):.1f}"
        f" | {'ok' if r.probe and not any(r.probe.get(k) for k in ISOLATION) else 'NO'} | {r.error} |" for r in runs)
    passed = (len(ok) == len(runs) and not leaks and not root_uid and len(probed) == len(runs) and not m["seen"]
              and not m["collisions"] and not m["shm_left"] and not m["left_accounts"] and not m["left_procs"]
              and not m["left_homes"])
    work = "every code cell of chapter 04" if not args.first_cell_only else "chapter 04's first code cell"
    lines = [
        "# Classroom hub under load",
        "",
        f"Measured {time.strftime('%Y-%m-%d')} on {ncpu} CPUs, {total_gib:.0f} GiB, shared with other work "
        f"(`sudo .venv/bin/python benchmarks/hub_load.py --learners {args.learners} --arrival {args.arrival:g}"
        f"{' --first-cell-only' if args.first_cell_only else ''}`). The hub of `tasks.py hub` as root "
        f"({'one Unix account per learner' if m['accounts'] else 'NO accounts: not root'}, TLS; {m['limits']}). "
        f"{args.learners} learners arrive at random within {args.arrival:g} s; each logs in through the form, "
        f"opens chapter 04, its exercises and the misconceptions quiz (three kernels, the exercises' and the "
        f"quiz's first cell run), runs {work} and its live all-reduce (4 processes, ring and tree, 1 MiB, "
        "checked against numpy), then probes from its own kernel what it can reach.",
        "",
        f"- **{len(ok)} of {len(runs)}** learners logged in, got three kernels, JupyterLab without the news "
        f"pop-up, and correct all-reduce results; hub up in {m['up_s']:.0f} s; all arrivals served in "
        f"{m['wall_s']:.0f} s; stopped in {m['stop_s']:.0f} s; server starts asked again after a failed start "
        f"(what a learner does by reloading the page): **{sum(r.retries for r in runs)}**; kernel websockets the "
        f"server dropped and the learner reopened, as a browser does: **{sum(r.reconnects for r in runs)}**",
        f"- isolation, checked from each learner's kernel ({len(probed)} probed): another learner's home listed "
        f"or read, the hub's secrets file or its /proc environ read, the course copy written: **{len(leaks)}** "
        f"learners could; kernels running as root: **{len(root_uid)}**; a hub secret in a learner's environment: "
        f"**{len(m['seen'])}**",
        f"- **memory per learner** (server + three kernels, PSS, after the chapter ran): median "
        f"**{statistics.median(pss) if pss else float('nan'):.0f} MiB**, 90th percentile **{p90:.0f} MiB**, max "
        f"{max(pss) if pss else float('nan'):.0f} MiB; the machine's memory in use grew by "
        f"{m['mem_all_up'] - m['mem_before']:.1f} GiB ({machine_per:.0f} MiB per learner, hub and proxy "
        f"included; peak {m['peak']:.1f} GiB in use, from {m['mem_before']:.1f} GiB before)",
        f"- **CPU per learner** (login, server start, three kernels, the chapter and its demo): median "
        f"**{statistics.median(cpu) if cpu else float('nan'):.1f} CPU-s**, max {max(cpu) if cpu else float('nan'):.1f}"
        f" CPU-s; the whole machine was busy {m['busy_cpu_s']:.0f} CPU-s over the run "
        f"({m['busy_cpu_s'] / max(1, len(runs)):.1f} per learner, hub included, other work on the machine too)",
        f"- left after stop: accounts **{m['left_accounts']}**, homes **{m['left_homes']}**, learners' processes "
        f"**{m['left_procs']}**, learners' /dev/shm segments **{len(m['shm_left'])}**; shared-memory names in "
        f"common between learners: **{m['collisions']}**",
        "",
        "| learner | login + server (s) | open 3 notebooks (s) | chapter + demo (s) | correct | PSS (MiB) | "
        "CPU (s) | isolation | error |",
        "|---|---|---|---|---|---|---|---|---|",
        rows,
        "",
    ]
    return "\n".join(lines), passed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=30)
    parser.add_argument("--arrival", type=float, default=600.0,
                        help="learners arrive within this many seconds (default 600: staggered logins)")
    parser.add_argument("--first-cell-only", action="store_true", help="run chapter 04's first cell, not all")
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds a learner's step may take")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "HUB_LOAD.md")
    args = parser.parse_args()
    text, passed = report(args, measure(args))
    args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
