"""``nvcourse doctor``: is this environment ready for the course?

Checks Python and package versions, that ipywidgets' front-end extension is installed for JupyterLab,
the CPU count (the multi-process demos use one process per rank) and free shared memory (the CPU
collectives exchange data through shared memory). Each check is OK, WARN (the course runs, with a
caveat) or FAIL (something will break), with what to do about it.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import os
import platform
import re
import shutil
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from .textio import print_json

__all__ = ["Check", "run_checks", "register"]

#: package -> (minimum version, maximum major version or None)
REQUIREMENTS: dict[str, tuple[str, int | None]] = {
    "jupyterlab": ("4.2", 4),
    "ipywidgets": ("8.1", 8),
    "matplotlib": ("3.8", None),
    "numpy": ("1.26", None),
    "networkx": ("3.2", None),
}
OPTIONAL = {  # what a learner may want; the test suite's tools (nbval) are the maintainers' (pyproject's dev extra)
    "torch": "optional engine for `nvcourse bench --backend torch` (pip install 'nvcourse[torch]')",
    "mpi4py": "optional engine for `nvcourse bench --backend mpi` (pip install 'nvcourse[mpi]' and Open MPI)",
}
MIN_SHM_BYTES = 256 * 2**20  # the largest default demo uses 4 ranks x 2 buffers x 16 MiB


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # "OK", "WARN" or "FAIL"
    detail: str


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


def _package_check(name: str, minimum: str, max_major: int | None) -> Check:
    try:
        version = md.version(name)
    except md.PackageNotFoundError:
        return Check(name, "FAIL", f"not installed: pip install '{name}>={minimum}'")
    v = _version_tuple(version)
    if v < _version_tuple(minimum):
        return Check(name, "FAIL", f"{version} is older than {minimum}: pip install -U '{name}>={minimum}'")
    if max_major is not None and v[0] > max_major:
        return Check(name, "WARN", f"{version}: the course is tested with {max_major}.x")
    return Check(name, "OK", version)


def _widgets_frontend() -> Check:
    try:
        version = md.version("jupyterlab_widgets")
    except md.PackageNotFoundError:
        return Check("widgets in JupyterLab", "FAIL", "jupyterlab_widgets missing: pip install 'ipywidgets>=8.1'")
    return Check("widgets in JupyterLab", "OK", f"jupyterlab_widgets {version} (sliders will render)")


def _shared_memory() -> Check:
    shm = Path("/dev/shm")
    if sys.platform.startswith("linux"):
        if not shm.exists():
            return Check("shared memory", "FAIL", "/dev/shm is missing: the CPU collectives need POSIX shared memory")
        free = shutil.disk_usage(shm).free
        status = "OK" if free >= MIN_SHM_BYTES else "WARN"
        hint = "" if status == "OK" else " — demos need ~256 MiB; in Docker use --shm-size=1g"
        return Check("shared memory", status, f"{free / 2**20:.0f} MiB free in /dev/shm{hint}")
    return Check("shared memory", "OK", f"{platform.system()}: multiprocessing.shared_memory (no /dev/shm to measure)")


def cpu_model() -> str:
    """The CPU's marketing name (Linux: /proc/cpuinfo), else what :mod:`platform` knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _cpus() -> Check:
    n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if n >= 2:
        return Check(
            "CPU cores", "OK", f"{n} usable ({cpu_model()}): demos with up to {min(n, 8)} ranks run in parallel"
        )
    return Check(
        "CPU cores", "WARN", f"1 usable core ({cpu_model()}; Binder?): multi-process demos still run, ranks take turns"
    )


def _short_path(path: str) -> str:
    """A path as a learner reads it: relative to the course folder if inside it, '~/...' under home."""
    p = Path(path)
    root = Path(__file__).resolve().parents[1]
    for base, prefix in ((root, ""), (Path.home(), "~/")):
        try:
            return prefix + str(p.relative_to(base))
        except ValueError:
            continue
    return str(p)


def run_checks() -> list[Check]:
    """Run every check; never raises."""
    py = sys.version_info
    checks = [
        Check("python", "OK" if py >= (3, 11) else "FAIL",
              f"{platform.python_version()} ({_short_path(sys.executable)})"
              + ("" if py >= (3, 11) else " — the course needs Python 3.11 or newer")),
    ]
    checks += [_package_check(n, *spec) for n, spec in REQUIREMENTS.items()]
    checks.append(_widgets_frontend())
    checks.append(_cpus())
    checks.append(_shared_memory())
    for name, why in OPTIONAL.items():
        try:
            checks.append(Check(name, "OK", f"{md.version(name)} (optional)"))
        except md.PackageNotFoundError:
            checks.append(Check(name, "OK", f"not installed — {why}"))
    return checks


def _doctor(args: argparse.Namespace) -> int:
    checks = run_checks()
    if args.json:
        print_json([asdict(c) for c in checks])
    else:
        for c in checks:
            print(f"[{c.status:<4}] {c.name:<22} {c.detail}")
        worst = (
            "FAIL"
            if any(c.status == "FAIL" for c in checks)
            else "WARN"
            if any(c.status == "WARN" for c in checks)
            else "OK"
        )
        # run from 00_start_here itself (in the kernel, or as `!python -m nvcourse doctor`, whose environment has
        # the kernel's JPY_PARENT_PID / JupyterLab's JPY_SESSION_NAME): do not tell it to open itself
        in_notebook = "ipykernel" in sys.modules or bool({"JPY_PARENT_PID", "JPY_SESSION_NAME"} & set(os.environ))
        print({"OK": "\nAll good." + ("" if in_notebook else " Open notebooks/00_start_here.ipynb."),
               "WARN": "\nThe course will run; see the warnings above.",
               "FAIL": "\nFix the FAIL lines above before starting."}[worst])
    return 1 if any(c.status == "FAIL" for c in checks) else 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("doctor", help="check that this environment can run the course")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=_doctor)
