"""Close the instructor's checkout to the learners' accounts while the classroom hub runs.

Learners get their own copy of the course (no solutions) under the hub's state folder; the checkout the hub is
started from holds what they must not read: ``solutions/``, ``.git`` (every solution is in its history),
``artifacts/`` (the printed answer key), the tests and the instructor guide. Their servers still run the
course's Python from it, so the checkout stays passable (o+x, not listable) and only what those servers run
stays open: the virtual environment, the ``nvcourse`` package and its translations. Everything else at the top
of the checkout is closed to other users (``chmod o-rwx``). The change is left in place after the hub stops
(other users may share the machine); :func:`reopen_command` is the command that undoes it.
"""

from __future__ import annotations

import stat
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: What the learners' servers run from the checkout (the package, its translations), besides the interpreter.
RUNTIME = ("nvcourse", "locales")


def runtime_entries(root: Path = ROOT) -> set[str]:
    """Top-level names of ``root`` the learners' servers need: :data:`RUNTIME` and the virtual environment."""
    names = set(RUNTIME)
    for path in (Path(sys.prefix), Path(sys.executable).parent):
        try:
            names.add(path.resolve().relative_to(root.resolve()).parts[0])
        except (ValueError, IndexError):
            continue  # the interpreter lives outside the checkout
    return names


def close_checkout(root: Path = ROOT) -> list[Path]:
    """Make ``root`` passable but not listable by others and close every top-level entry but the runtime
    (``o-rwx``); returns what was changed (empty when it was already closed)."""
    changed = []
    mode = stat.S_IMODE(root.stat().st_mode)
    if mode & 0o006:
        root.chmod(mode & ~0o006)
        changed.append(root)
    keep = runtime_entries(root)
    for entry in sorted(root.iterdir()):
        if entry.name in keep or entry.is_symlink():
            continue
        mode = stat.S_IMODE(entry.lstat().st_mode)
        if mode & 0o007:
            entry.chmod(mode & ~0o007)
            changed.append(entry)
    return changed


def reopen_command(root: Path = ROOT) -> str:
    """The command that opens the checkout to other users again (after the session)."""
    return f"chmod o+rX {root} {root}/* {root}/.[!.]*"
