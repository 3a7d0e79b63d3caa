#!/usr/bin/env python3
"""Run the whole course as a Binder visitor would, and check it fits mybinder.org.

    python3 tasks.py budget                        # = .venv/bin/python benchmarks/binder_budget.py
    .venv/bin/python benchmarks/binder_budget.py notebooks/02_pcie_vs_nvlink.ipynb   # just these
    .venv/bin/python benchmarks/binder_budget.py --no-write --cpu 1

mybinder.org gives a user 1 CPU and at most 2 GB of memory (mybinder.org-deploy values.yaml). Every
notebook in ``notebooks/`` and then ``solutions/`` is executed top to bottom with nbclient in a fresh
kernel (working directory: the notebook's folder; cells tagged ``skip-execution`` skipped, as in
``tasks.py execute``). This process and everything it starts are pinned to ONE CPU
(``os.sched_setaffinity``; kernels and their worker processes inherit it). A sampler thread, running on
the other CPUs so that it takes nothing from the notebook's, adds up the
memory of every process below this one, kernel and its workers, every 20 ms; the peak is reported per
notebook. The judged figure is the sum of PSS (proportional set size: a page shared by n processes counts
1/n in each, so shared-memory buffers count once, as in the container's cgroup); the sum of RSS, which
counts them in every process, is shown as an upper bound. JupyterLab itself (about 150-250 MB on Binder)
is not included.

Targets: the whole course in <= 5 min, and no notebook's kernel tree above 1.5 GB (10^9 B). Exit 1
when a target is missed or a notebook fails. A markdown table is written to benchmarks/BINDER_BUDGET.md.
Timings on a shared, busy machine are inflated: the load average is printed with the results.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from nvcourse.doctor import cpu_model

ROOT = Path(__file__).resolve().parents[1]
DIRS = ("notebooks", "solutions")
TIME_BUDGET_S = 300.0
MEM_BUDGET_B = 1.5e9
SAMPLE_S = 0.02
MiB = 2**20


def course_notebooks() -> list[Path]:
    found: list[Path] = []
    for d in DIRS:
        found += sorted(p for p in (ROOT / d).glob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    return found


# ---------------------------------------------------------------- memory of the process tree
def _tree_mem_psutil(me) -> tuple[int, int]:
    """(sum of RSS, sum of PSS) over all descendants. PSS splits shared pages among the processes
    mapping them, so its sum counts a shared-memory buffer once, as the container's cgroup does."""
    import psutil

    rss = pss = 0
    for child in me.children(recursive=True):
        try:
            info = child.memory_full_info()
            rss += info.rss
            pss += getattr(info, "pss", info.rss)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            pass
    return rss, pss


def _tree_rss_proc(pid: int) -> int:
    """The same from /proc, for systems without psutil (Linux only)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    page = os.sysconf("SC_PAGE_SIZE")
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            p = int(stat.parent.name)
            children.setdefault(int(fields[1]), []).append(p)
            rss[p] = int(fields[21]) * page
        except (OSError, IndexError, ValueError):
            continue
    total, todo = 0, [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            total += rss.get(c, 0)
            todo.append(c)
    return total


class TreeSampler:
    """Samples the summed RSS of all descendants of this process in a background thread."""

    def __init__(self, interval: float = SAMPLE_S, cpus: set[int] | None = None) -> None:
        """``cpus``: where the sampling thread runs (not the notebook's CPU, so sampling costs it nothing)."""
        self.interval = interval
        self.cpus = cpus
        self.peak_rss = self.peak_pss = 0
        self._stop = threading.Event()
        try:
            import psutil

            me = psutil.Process()
            self._measure = lambda: _tree_mem_psutil(me)
            self.method = "psutil, PSS from /proc/PID/smaps_rollup"
        except ImportError:
            self._measure = lambda: (_tree_rss_proc(os.getpid()),) * 2
            self.method = "/proc, RSS only (install psutil for PSS)"
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def peak(self) -> int:
        """The judged figure: peak summed PSS (RSS when PSS is unavailable)."""
        return self.peak_pss

    def _sample(self) -> None:
        rss, pss = self._measure()
        self.peak_rss, self.peak_pss = max(self.peak_rss, rss), max(self.peak_pss, pss)

    def _run(self) -> None:
        if self.cpus:
            os.sched_setaffinity(0, self.cpus)  # 0 = this thread only
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.interval)

    def __enter__(self) -> TreeSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()


# ---------------------------------------------------------------- one notebook
@dataclass
class Result:
    path: Path
    wall_s: float
    peak_b: int
    peak_rss_b: int
    cells: int
    error: str | None = None

    @property
    def name(self) -> str:
        return str(self.path.relative_to(ROOT)) if self.path.is_relative_to(ROOT) else str(self.path)


def run_notebook(path: Path, timeout: int, sampler_cpus: set[int] | None = None) -> Result:
    import nbformat

    from nvcourse.devtools.kernel_run import notebook_client  # nbclient's, without its lost wake-up

    nb = nbformat.read(path, as_version=4)
    cells = sum(1 for c in nb.cells if c.cell_type == "code")
    client = notebook_client(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        store_widget_state=True,  # False trips nbclient 0.11 on Output widgets (KeyError in output_widget.py)
    )
    error = None
    # Reading PSS costs about 1 ms per process: off the notebook's CPU every 20 ms, else every 100 ms.
    interval = SAMPLE_S if sampler_cpus else 0.1
    with TreeSampler(interval, sampler_cpus) as sampler:
        start = time.perf_counter()
        try:
            client.execute()
        except Exception as exc:  # CellExecutionError, timeout, dead kernel
            first = str(exc).strip().splitlines()
            error = f"{type(exc).__name__}: {first[-1] if first else ''}"[:300]
        wall = time.perf_counter() - start
    return Result(path, wall, sampler.peak, sampler.peak_rss, cells, error)


# ---------------------------------------------------------------- reporting
def fmt_mib(b: float) -> str:
    return f"{b / MiB:,.0f}"


def table(results: list[Result]) -> list[str]:
    rows = [
        "| notebook | code cells | wall time (s) | peak memory, PSS (MiB) | peak RSS sum (MiB) | status |",
        "|---|--:|--:|--:|--:|---|",
    ]
    for r in results:
        status = "ok" if not r.error else f"**failed**: {r.error.replace('|', '/')}"
        if not r.error and r.peak_b > MEM_BUDGET_B:
            status = "**over memory target**"
        rows.append(
            f"| `{r.name}` | {r.cells} | {r.wall_s:.1f} | {fmt_mib(r.peak_b)} | {fmt_mib(r.peak_rss_b)} | {status} |"
        )
    return rows


def report(results: list[Result], pinned: str, load: tuple, method: str, partial: bool) -> tuple[str, bool]:
    total = sum(r.wall_s for r in results)
    peak = max((r.peak_b for r in results), default=0)
    failed = [r for r in results if r.error]
    time_ok, mem_ok = total <= TIME_BUDGET_S, peak <= MEM_BUDGET_B
    ok = time_ok and mem_ok and not failed
    by_dir = {d: sum(r.wall_s for r in results if r.path.parent.name == d) for d in DIRS}
    mark = lambda good: "✅" if good else "❌"  # noqa: E731
    lines = [
        "# Binder budget",
        "",
        "Generated by `python3 tasks.py budget` (`benchmarks/binder_budget.py`); do not edit by hand.",
        "",
        "Every notebook of the course is executed top to bottom in a fresh kernel, as a Binder visitor would run it, "
        f"with this process, the kernels and their workers pinned to **one CPU** ({pinned}). Peak memory is the "
        "memory of the kernel and every process it starts, summed and sampled every 20 ms "
        f"({method}): PSS counts a page shared by several processes (the shared-memory buffers of the "
        "multi-process demos) once, as the container's memory limit does, and is the judged figure; the RSS "
        "sum counts it in every process and is an upper bound. JupyterLab itself (about 150–250 MB on Binder) "
        "is not included. "
        "mybinder.org gives 1 CPU and at most 2 GB per user.",
        "",
        "| target | limit | measured | |",
        "|---|--:|--:|---|",
        f"| whole course, wall time | {TIME_BUDGET_S / 60:.0f} min | {total:.0f} s ({total / 60:.1f} min) | "
        f"{mark(time_ok)} |",
        f"| peak memory of any notebook | 1.5 GB ({fmt_mib(MEM_BUDGET_B)} MiB) | {fmt_mib(peak)} MiB | "
        f"{mark(mem_ok)} |",
        f"| notebooks that fail | 0 | {len(failed)} | {mark(not failed)} |",
        "",
        *table(results),
        f"| **total** ({len(results)} notebooks) | {sum(r.cells for r in results)} | **{total:.1f}** | "
        f"**{fmt_mib(peak)}** (max) "
        f"| {fmt_mib(max((r.peak_rss_b for r in results), default=0))} (max) | {'ok' if ok else '**target missed**'} |",
        "",
        "Time per folder: " + ", ".join(f"`{d}/` {s:.1f} s" for d, s in by_dir.items()) + ".",
        "",
        f"Machine: {cpu_model()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
        f"load average {load[0]:.1f} at the start and {load[1]:.1f} at the end "
        "(a busy machine inflates the times; the targets are for a quiet one). "
        f"Run on {datetime.date.today().isoformat()}." + (" Only some notebooks were run." if partial else ""),
        "",
    ]
    return "\n".join(lines), ok


def pin_to_one_cpu(cpu: int | None) -> tuple[str, set[int] | None]:
    """Pin this thread (and so every kernel it starts) to one CPU; return the other CPUs for the sampler."""
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned: this OS has no sched_setaffinity", None
    allowed = sorted(os.sched_getaffinity(0))
    chosen = cpu if cpu is not None else allowed[-1]
    if chosen not in allowed:
        sys.exit(f"--cpu {chosen} is not one of the CPUs this process may use: {allowed}")
    os.sched_setaffinity(0, {chosen})
    others = set(allowed) - {chosen}
    return f"CPU {chosen}; memory sampled from " + (
        f"CPU {sorted(others)}" if others else "the same CPU"
    ), others or None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", type=Path, help="notebooks to run (default: notebooks/ then solutions/)")
    parser.add_argument("--cpu", type=int, help="the CPU to pin to (default: the first allowed)")
    parser.add_argument("--no-pin", action="store_true", help="do not pin to one CPU")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell before giving up (default 600)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "BINDER_BUDGET.md")
    parser.add_argument("--no-write", action="store_true", help="print the table only")
    args = parser.parse_args(argv)

    paths = [p.resolve() for p in args.paths] or course_notebooks()
    if not paths:
        print("no notebooks found in notebooks/ or solutions/")
        return 1
    pinned, sampler_cpus = ("not pinned (--no-pin)", None) if args.no_pin else pin_to_one_cpu(args.cpu)
    os.environ.setdefault("PYTHONHASHSEED", "0")
    os.environ.pop("MPLBACKEND", None)  # the kernel uses the inline backend, as in JupyterLab
    load_start = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"running {len(paths)} notebooks, {pinned}, load average {load_start:.1f}", flush=True)

    results = []
    for path in paths:
        rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        r = run_notebook(path, args.timeout, sampler_cpus)
        results.append(r)
        print(
            f"  {str(rel):60s} {r.wall_s:6.1f} s {fmt_mib(r.peak_b):>6s} MiB"
            + (f"  FAILED {r.error}" if r.error else ""),
            flush=True,
        )
    method = TreeSampler().method
    load_end = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")

    text, ok = report(results, pinned, (load_start, load_end), method, partial=bool(args.paths))
    print()
    print(text)
    if not args.no_write:
        args.out.write_text(text, encoding="utf-8")
        print(f"written: {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    if not ok:
        print("BINDER BUDGET MISSED", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
