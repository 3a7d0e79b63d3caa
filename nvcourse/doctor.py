"""``nvcourse doctor``: is this environment ready for the course?

Checks Python and package versions, that ipywidgets' front-end extension is installed for JupyterLab,
the CPU count (the multi-process demos use one process per rank) and free shared memory (the CPU
collectives exchange data through shared memory). Each check is OK, WARN (the course runs, with a
caveat) or FAIL (something will break), with what to do about it.

The lines print in the learner's language (:mod:`nvcourse.i18n`); ``--json`` keeps the English names and details
(a stable interface), so a check holds its English template and fields and is translated when printed.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import os
import platform
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .i18n import translate
from .textio import print_json

__all__ = ["Check", "run_checks", "register"]


def _(template: str) -> str:
    """Marks an English text for the translation extractor (which looks for ``_("...")``) and returns it unchanged:
    checks keep their English for ``--json``; :meth:`Check.line` translates when printing."""
    return template


#: package -> (minimum version, maximum major version or None)
REQUIREMENTS: dict[str, tuple[str, int | None]] = {
    "jupyterlab": ("4.2", 4),
    "ipywidgets": ("8.1", 8),
    "matplotlib": ("3.8", None),
    "numpy": ("1.26", None),
    "networkx": ("3.2", None),
}
OPTIONAL = {  # what a learner may want; the test suite's tools (nbval) are the maintainers' (pyproject's dev extra)
    "torch": _("not installed — optional engine for `nvcourse bench --backend torch` (pip install 'nvcourse[torch]')"),
    "mpi4py": _("not installed — optional engine for `nvcourse bench --backend mpi` (pip install 'nvcourse[mpi]' "
                "and Open MPI)"),
}
MIN_SHM_BYTES = 256 * 2**20  # the largest default demo uses 4 ranks x 2 buffers x 16 MiB


@dataclass(frozen=True)
class Check:
    """One check: ``name``, ``status`` and ``detail`` in English (the ``--json`` fields); ``template`` and ``fields``
    give the detail again in the learner's language (:meth:`line`)."""

    name: str
    status: str  # "OK", "WARN" or "FAIL"
    detail: str
    template: str = field(default="", compare=False, repr=False)
    fields: dict = field(default_factory=dict, compare=False, repr=False)

    def record(self) -> dict:
        """The ``--json`` record: English name, status and detail."""
        return {"name": self.name, "status": self.status, "detail": self.detail}

    def line(self) -> str:
        """The printed line, ``[STATUS] name detail``, in the learner's language."""
        detail = translate(self.template).format(**self.fields) if self.template else self.detail
        return f"[{self.status:<4}] {translate(self.name):<22} {detail}"


def _check(name: str, status: str, template: str, **fields: object) -> Check:
    """A check whose detail is ``template`` (English, marked with ``_``) filled with ``fields``."""
    return Check(name, status, template.format(**fields), template, fields)


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


def _package_check(name: str, minimum: str, max_major: int | None) -> Check:
    try:
        version = md.version(name)
    except md.PackageNotFoundError:
        return _check(name, "FAIL", _("not installed: {command}"), command=f"pip install '{name}>={minimum}'")
    v = _version_tuple(version)
    if v < _version_tuple(minimum):
        return _check(name, "FAIL", _("{version} is older than {minimum}: {command}"), version=version,
                      minimum=minimum, command=f"pip install -U '{name}>={minimum}'")
    if max_major is not None and v[0] > max_major:
        return _check(name, "WARN", _("{version}: the course is tested with {major}.x"), version=version,
                      major=max_major)
    return Check(name, "OK", version)


def _widgets_frontend() -> Check:
    try:
        version = md.version("jupyterlab_widgets")
    except md.PackageNotFoundError:
        return _check(_("widgets in JupyterLab"), "FAIL", _("jupyterlab_widgets missing: {command}"),
                      command="pip install 'ipywidgets>=8.1'")
    return _check(_("widgets in JupyterLab"), "OK", _("jupyterlab_widgets {version} (sliders will render)"),
                  version=version)


def _shared_memory() -> Check:
    shm = Path("/dev/shm")
    if sys.platform.startswith("linux"):
        if not shm.exists():
            return _check(_("shared memory"), "FAIL",
                          _("/dev/shm is missing: the CPU collectives need POSIX shared memory"))
        free = shutil.disk_usage(shm).free
        if free >= MIN_SHM_BYTES:
            return _check(_("shared memory"), "OK", _("{free} MiB free in /dev/shm"), free=f"{free / 2**20:.0f}")
        return _check(_("shared memory"), "WARN",
                      _("{free} MiB free in /dev/shm — demos need ~256 MiB; in Docker use --shm-size=1g"),
                      free=f"{free / 2**20:.0f}")
    return _check(_("shared memory"), "OK", _("{system}: multiprocessing.shared_memory (no /dev/shm to measure)"),
                  system=platform.system())


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
        return _check(_("CPU cores"), "OK", _("{n} usable ({cpu}): demos with up to {ranks} ranks run in parallel"),
                      n=n, cpu=cpu_model(), ranks=min(n, 8))
    return _check(_("CPU cores"), "WARN",
                  _("1 usable core ({cpu}; Binder?): multi-process demos still run, ranks take turns"), cpu=cpu_model())


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
        _check("python", "OK", "{version} ({path})", version=platform.python_version(),
               path=_short_path(sys.executable)) if py >= (3, 11) else
        _check("python", "FAIL", _("{version} ({path}) — the course needs Python 3.11 or newer"),
               version=platform.python_version(), path=_short_path(sys.executable)),
    ]
    checks += [_package_check(n, *spec) for n, spec in REQUIREMENTS.items()]
    checks.append(_widgets_frontend())
    checks.append(_cpus())
    checks.append(_shared_memory())
    for name, missing in OPTIONAL.items():
        try:
            checks.append(_check(name, "OK", _("{version} (optional)"), version=md.version(name)))
        except md.PackageNotFoundError:
            checks.append(_check(name, "OK", missing))
    return checks


def _doctor(args: argparse.Namespace) -> int:
    checks = run_checks()
    if args.json:
        print_json([c.record() for c in checks])
    else:
        for c in checks:
            print(c.line())
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
        verdict = {"OK": _("All good.") if in_notebook else _("All good. Open notebooks/00_start_here.ipynb."),
                   "WARN": _("The course will run; see the warnings above."),
                   "FAIL": _("Fix the FAIL lines above before starting.")}[worst]
        print("\n" + translate(verdict))
    return 1 if any(c.status == "FAIL" for c in checks) else 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("doctor", help=translate(_("check that this environment can run the course")))
    p.add_argument("--json", action="store_true", help=translate(_("machine-readable output")))
    p.set_defaults(handler=_doctor)
