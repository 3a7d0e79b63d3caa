"""Write a learner copy of the course: everything a learner needs, without the worked solutions.

    python3 tasks.py release --learners DIR [--solutions-url URL]

The copy holds the files git tracks (so nothing local, no virtual environment, no artefacts), minus
``solutions/`` and the files that only make sense with them (the tests, which execute the solutions, and
the CI entry point). Every link into ``solutions/`` in a notebook is rewritten to point
where the instructor will publish the solutions (``--solutions-url``), or to a sentence saying they come
after the session. The copy can be pushed as its own repository for Binder or copied into a hub's homes.

Exit status: 0 on success, 2 for bad usage (the target exists and is not empty, not a git checkout).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Left out of a learner copy: the answers, and what only runs with them.
#: Not in a learner copy: the worked solutions, what only makes sense with them (the tests, which execute the
#: solutions, and CI), and the instructor guide (agendas, misconceptions with their answers, the quiz's answers).
WITHHELD = ("solutions/", "tests/", ".ci/", "docs/instructor-guide.md")
INSTRUCTOR_ONLY = "for instructors; not in the learner copy"
_GUIDE_LINK_RE = re.compile(r"\[([^\]]*)\]\((?:\.\./)*docs/instructor-guide\.md[^)]*\)")
PENDING = "published by your instructor after the session"
_MD_LINK_RE = re.compile(r"\[([^\]]*)\]\((?:\.\./)*solutions/([^)\s]*)\)")
_CODE_PATH_RE = re.compile(r"`(?:\.\./)*solutions/([^`]*)`")
NOTE_FILE = "LEARNER_COPY.md"


class ReleaseError(ValueError):
    """Bad usage: reported as one line, exit status 2."""


def tracked_files(root: Path = ROOT) -> list[str]:
    """Paths (POSIX, relative to ``root``) that git tracks in the work tree."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise ReleaseError(f"--learners needs a git checkout of the course at {root}: {exc}") from exc
    return [p for p in out.decode().split("\0") if p]


def is_withheld(path: str) -> bool:
    return any(path.startswith(prefix) for prefix in WITHHELD)


def rewrite_solution_links(text: str, solutions_url: str | None) -> str:
    """Point every Markdown link and code-quoted path into ``solutions/`` at the published solutions.

    With ``solutions_url`` a link keeps its text and points to the same file under that URL; without
    one, the link becomes its text followed by a note that the solutions come after the session.
    """
    def link(m: re.Match[str]) -> str:
        text, rel = _CODE_PATH_RE.sub(r"`\1`", m.group(1)), m.group(2)  # `../solutions/x` → `x`
        return f"[{text}]({solutions_url.rstrip('/')}/{rel})" if solutions_url else f"{text} ({PENDING})"

    def code(m: re.Match[str]) -> str:
        rel = m.group(1)
        return f"<{solutions_url.rstrip('/')}/{rel}>" if solutions_url else f"the solutions ({PENDING})"

    return _CODE_PATH_RE.sub(code, _MD_LINK_RE.sub(link, text))


def _rewrite_notebook(raw: str, solutions_url: str | None) -> str:
    nb = json.loads(raw)
    for cell in nb.get("cells", []):
        src = cell.get("source", "")
        joined = "".join(src) if isinstance(src, list) else src
        if "solutions/" in joined or "instructor-guide.md" in joined:
            text = rewrite_solution_links(joined, solutions_url)
            cell["source"] = _GUIDE_LINK_RE.sub(rf"\1 ({INSTRUCTOR_ONLY})", text)
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def release_learners(target: Path, solutions_url: str | None = None, root: Path = ROOT) -> list[str]:
    """Write the learner copy into ``target`` (created; must be absent or empty). Returns the files written."""
    if target.exists() and any(target.iterdir()):
        raise ReleaseError(f"--learners: {target} exists and is not empty; give a new or empty folder")
    if target.resolve() == root.resolve() or root.resolve() in target.resolve().parents:
        raise ReleaseError(f"--learners: {target} is inside the course checkout; give a folder outside it")
    written: list[str] = []
    for rel in tracked_files(root):
        if is_withheld(rel):
            continue
        src, dst = root / rel, target / rel
        if not src.is_file():  # deleted in the work tree but still in the index
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        if rel.endswith(".ipynb"):
            dst.write_text(_rewrite_notebook(src.read_text(encoding="utf-8"), solutions_url), encoding="utf-8")
        elif rel.endswith(".md"):  # the README and docs link the solutions and the guide: no dead links
            text = rewrite_solution_links(src.read_text(encoding="utf-8"), solutions_url)
            dst.write_text(_GUIDE_LINK_RE.sub(rf"\1 ({INSTRUCTOR_ONLY})", text), encoding="utf-8")
        else:
            shutil.copy2(src, dst)
        written.append(rel)
    where = solutions_url or PENDING
    (target / NOTE_FILE).write_text(
        "# Learner copy\n\nThis copy of the course has the chapters and the exercise notebooks with their "
        f"checkers; the worked solutions are not in it: {where}.\n", encoding="utf-8")
    written.append(NOTE_FILE)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tasks.py release", description=__doc__.splitlines()[0])
    parser.add_argument("--learners", metavar="DIR", required=True, type=Path,
                        help="folder to write the learner copy into (new or empty)")
    parser.add_argument("--solutions-url", metavar="URL",
                        help="where you will publish the solutions (links in the copy point there)")
    args = parser.parse_args(argv)
    try:
        written = release_learners(args.learners, args.solutions_url)
    except ReleaseError as exc:
        print(f"release: error: {exc}", file=sys.stderr)
        return 2
    print(f"release: wrote {len(written)} files to {args.learners} (no solutions/, tests/ or .ci/)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
