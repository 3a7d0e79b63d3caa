"""A workshop's load: N Jupyter kernels at once (default 8), each executing chapter 04's notebook with its own
process groups, as on a small shared JupyterHub (a benchmark, not a test).

Each kernel runs ``notebooks/04_collectives_and_allreduce.ipynb`` through ``jupyter nbconvert --execute`` (into a
scratch folder: the notebook itself is not touched). Checks: every run ends without error, no output says
``correct: False``, no shared-memory name collides (segment names carry the owner's pid, ``nvc<pid>_...``; a
collision would be a FileExistsError in a kernel), and after the kernels shut down no process they started and
no /dev/shm segment of theirs is left. Reports each kernel's wall time.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/workshop_load.py [-n 8]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "04_collectives_and_allreduce.ipynb"
SHM = Path("/dev/shm")


def _descendants(pids: set[int]) -> set[int]:
    """Every live process whose parent chain reaches one of ``pids`` (Linux /proc)."""
    parent = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            parent[int(d.name)] = int(stat[stat.rindex(")") + 2:].split()[1])
    out = set()
    for pid in parent:
        p, hops = pid, 0
        while p in parent and hops < 64:
            if p in pids:
                out.add(pid)
                break
            p, hops = parent[p], hops + 1
    return out - pids


def _alive(pid: int) -> bool:
    try:
        stat = (Path("/proc") / str(pid) / "stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def _segments_of(pids: set[int]) -> list[str]:
    if not SHM.is_dir():
        return []
    return sorted(e.name for e in SHM.iterdir() if any(e.name.startswith(f"nvc{p}_") for p in pids))


def run(n: int = 8, timeout_s: float = 1800.0) -> dict:
    out_dir = Path(tempfile.mkdtemp(prefix="nvcourse-workshop-"))
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    jupyter = Path(sys.executable).with_name("jupyter")
    procs, started = [], {}
    for i in range(n):
        cmd = [str(jupyter), "nbconvert", "--to", "notebook", "--execute", str(NOTEBOOK), "--output-dir",
               str(out_dir), "--output", f"kernel{i}.ipynb", "--ExecutePreprocessor.timeout=900"]
        p = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(p)
        started[p.pid] = time.monotonic()
    roots = {p.pid for p in procs}
    seen: set[int] = set()
    names: set[str] = set()
    wall: dict[int, float] = {}
    deadline = time.monotonic() + timeout_s
    while len(wall) < n and time.monotonic() < deadline:
        seen |= _descendants(roots)
        names.update(_segments_of(seen))
        for i, p in enumerate(procs):
            if i not in wall and p.poll() is not None:
                wall[i] = time.monotonic() - started[p.pid]
        time.sleep(0.2)
    errors = []
    for i, p in enumerate(procs):
        if p.poll() is None:
            for pid in _descendants({p.pid}):  # its kernel and the kernel's workers
                try:
                    os.kill(pid, 9)
                except ProcessLookupError:
                    pass
            p.kill()
            errors.append(f"kernel {i}: still running after {timeout_s:g} s")
        _, err = p.communicate()
        if p.returncode != 0:
            errors.append(f"kernel {i}: nbconvert exit {p.returncode}: {err.strip()[-600:]}")
            continue
        nb = json.loads((out_dir / f"kernel{i}.ipynb").read_text())
        for cell in nb["cells"]:
            for o in cell.get("outputs", []):
                text = "".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
                if "correct: False" in text or o.get("output_type") == "error":
                    errors.append(f"kernel {i}: {text.strip()[:200] or o.get('ename')}")
    time.sleep(2.0)  # workers exit by themselves once their kernel has gone
    left_procs = sorted(pid for pid in seen if _alive(pid))
    left_segments = _segments_of(seen)
    owners = {name.split("_")[0] for name in names}
    return {"kernels": n, "wall_s": [wall.get(i, float("nan")) for i in range(n)], "errors": errors,
            "segment_names_seen": len(names), "segment_owners": len(owners), "processes_left": left_procs,
            "segments_left": left_segments, "load": os.getloadavg(), "cpus": os.cpu_count()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=8, help="kernels at once (default 8)")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds before a kernel counts as stuck")
    a = ap.parse_args(argv)
    t0 = time.monotonic()
    r = run(a.n, a.timeout)
    w = [x for x in r["wall_s"] if x == x]
    print(f"{r['kernels']} kernels on {r['cpus']} CPUs: wall per kernel median {statistics.median(w):.0f} s, "
          f"min {min(w):.0f} s, max {max(w):.0f} s (all {time.monotonic() - t0:.0f} s); load after {r['load']}")
    print(f"errors: {len(r['errors'])}; segment names seen {r['segment_names_seen']} from "
          f"{r['segment_owners']} owners; processes left {r['processes_left']}; segments left {r['segments_left']}")
    for e in r["errors"]:
        print("  " + e)
    ok = not r["errors"] and not r["processes_left"] and not r["segments_left"]
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
