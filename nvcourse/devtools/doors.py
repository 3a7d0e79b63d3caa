"""Ways into the course without the instructor's machine: the Binder link, built from where the course is
published, never typed by hand.

    python -m nvcourse.devtools.doors binder [--repo OWNER/REPO] [--ref TAG]

The repository comes from ``--repo``, else from the checkout's ``origin`` remote when it is on GitHub; the ref
from ``--ref``, else the tag of the checked-out commit (Binder caches one image per commit: teach from a tag, not
a moving branch). Prints the link that opens chapter 00 in JupyterLab on mybinder.org, and the Markdown badge.
Exit status 2 when no GitHub repository or no tag is known (the line says which option to give).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
START = "lab/tree/notebooks/00_start_here.ipynb"
_GITHUB = re.compile(r"github\.com[:/](?P<repo>[\w.-]+/[\w.-]+?)(?:\.git)?/?$")


def _git(*args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def github_repo(remote_url: str) -> str | None:
    """OWNER/REPO of a GitHub remote URL (https or ssh), else None."""
    m = _GITHUB.search(remote_url.strip())
    return m.group("repo") if m else None


def binder_url(repo: str, ref: str) -> str:
    """The mybinder.org link that builds ``repo`` at ``ref`` and opens chapter 00."""
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
        raise ValueError(f"repo must be OWNER/REPO, e.g. jdoe/nvcourse; got {repo!r}")
    if not re.fullmatch(r"[\w.-][\w./-]*", ref or ""):
        raise ValueError(f"ref must be a tag or commit, e.g. workshop-2026-12-10; got {ref!r}")
    return f"https://mybinder.org/v2/gh/{repo}/{ref}?urlpath={START}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nvcourse.devtools.doors", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="door", required=True)
    b = sub.add_parser("binder", help="the Binder link and badge for the published course")
    b.add_argument("--repo", default=None, help="OWNER/REPO on GitHub (default: the origin remote)")
    b.add_argument("--ref", default=None, help="tag or commit (default: the checked-out commit's tag)")
    args = parser.parse_args(argv)
    repo = args.repo or github_repo(_git("remote", "get-url", "origin"))
    ref = args.ref or _git("describe", "--tags", "--exact-match")
    if repo is None:
        print("doors: error: repo: this checkout has no GitHub 'origin' remote; publish the course and give "
              "--repo OWNER/REPO", file=sys.stderr)
        return 2
    if not ref:
        print("doors: error: ref: the checked-out commit has no tag; tag it (git tag workshop-YYYY-MM-DD) or give "
              "--ref", file=sys.stderr)
        return 2
    try:
        url = binder_url(repo, ref)
    except ValueError as exc:
        print(f"doors: error: {exc}", file=sys.stderr)
        return 2
    print(url)
    print(f"[![Binder](https://mybinder.org/badge_logo.svg)]({url})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
