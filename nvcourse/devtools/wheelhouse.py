"""Gather every wheel the course needs onto a folder (a USB stick) for rooms without usable Wi-Fi.

    python3 tasks.py wheelhouse DIR                   # Linux, macOS, Windows; Python 3.11-3.13; x86_64 and arm64
    python3 tasks.py wheelhouse DIR --this-platform   # only what this machine needs (quick)
    python3 tasks.py lab --offline DIR                # on a learner's laptop: install from DIR, no network

Standard library only, so it runs before any virtual environment exists. Each target is one
``pip download --only-binary=:all: --platform ... --python-version ...`` of the course's runtime
requirements (read from pyproject.toml) plus the build backend that installs nvcourse itself. A target
for which some package has no wheel is reported and skipped; the others still land. Nothing here is
committed: the folder is hundreds of MB.

Exit status: 0 when every target landed, 1 when some did not (listed), 2 for bad usage.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHONS = ("3.11", "3.12", "3.13")


@dataclass(frozen=True)
class Target:
    """One operating system and processor, with the wheel platform tags pip should accept for it."""

    name: str
    platforms: tuple[str, ...]


# pip matches --platform tags exactly, so each target lists the tags projects actually publish.
TARGETS = (
    Target("linux-x86_64", ("manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_28_x86_64")),
    Target("linux-aarch64", ("manylinux2014_aarch64", "manylinux_2_17_aarch64", "manylinux_2_28_aarch64")),
    Target("macos-x86_64", ("macosx_10_9_x86_64", "macosx_10_12_x86_64", "macosx_10_13_x86_64",
                            "macosx_10_15_x86_64", "macosx_11_0_x86_64", "macosx_13_0_x86_64",
                            "macosx_14_0_x86_64")),
    Target("macos-arm64", ("macosx_11_0_arm64", "macosx_12_0_arm64", "macosx_13_0_arm64", "macosx_14_0_arm64")),
    Target("windows-amd64", ("win_amd64",)),
    Target("windows-arm64", ("win_arm64",)),
)


def requirements(root: Path = ROOT) -> list[str]:
    """The runtime requirements of nvcourse, its build backend and the French edition's language pack (one small
    wheel, so that ``lab --offline DIR --lang fr`` works in a room without network), as pip specifiers."""
    meta = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    return [*meta["build-system"]["requires"], *meta["project"]["dependencies"],
            *meta["project"]["optional-dependencies"]["fr"]]


def download(target_dir: Path, platforms: tuple[str, ...] | None, python: str | None) -> subprocess.CompletedProcess:
    """One ``pip download`` into ``target_dir``; ``platforms=None`` means this machine's own."""
    cmd = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "-q", "--only-binary=:all:",
           "-d", str(target_dir)]
    if platforms is not None:
        cmd += [arg for tag in platforms for arg in ("--platform", tag)]
        cmd += ["--python-version", python or PYTHONS[0], "--implementation", "cp"]
    return subprocess.run([*cmd, *requirements()], capture_output=True, text=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tasks.py wheelhouse", description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path, help="folder to fill with wheels (created)")
    parser.add_argument("--this-platform", action="store_true", help="only this machine's platform and Python")
    args = parser.parse_args(argv)
    if args.dir.exists() and not args.dir.is_dir():
        print(f"wheelhouse: error: DIR {args.dir} exists and is not a folder", file=sys.stderr)
        return 2
    args.dir.mkdir(parents=True, exist_ok=True)
    jobs = ([("this machine", None, None)] if args.this_platform else
            [(f"{t.name} / Python {py}", t.platforms, py) for t in TARGETS for py in PYTHONS])
    failed = []
    for label, platforms, py in jobs:
        proc = download(args.dir, platforms, py)
        ok = proc.returncode == 0
        print(f"wheelhouse: {label}: {'ok' if ok else 'MISSING WHEELS'}", flush=True)
        if not ok:
            reason = [ln for ln in proc.stderr.splitlines() if "ERROR" in ln][:1] or ["pip failed"]
            failed.append(f"{label}: {reason[0].strip()}")
    wheels = sorted(args.dir.glob("*.whl"))
    size_mb = sum(w.stat().st_size for w in wheels) / 1e6
    print(f"wheelhouse: {len(wheels)} wheels, {size_mb:.0f} MB in {args.dir}; "
          f"{len(jobs) - len(failed)} of {len(jobs)} targets complete")
    for line in failed:
        print(f"wheelhouse: incomplete: {line}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
