"""Files the project generates and commits (templates, exercises, the cheat sheet): write them, or check them.

One rule for every generator's ``--check``: a generated file is stale when it is missing or its text differs from
what the generator would write now; CI runs the check so a committed file never drifts from its source.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["is_stale", "refresh"]


def is_stale(path: Path, text: str) -> bool:
    """True when ``path`` is missing or does not hold exactly ``text`` (UTF-8)."""
    return not path.is_file() or path.read_text(encoding="utf-8") != text


def refresh(path: Path, text: str, check: bool) -> bool:
    """With ``check``, only say whether ``path`` is stale; otherwise write ``text`` there (folders created) and say
    whether it changed."""
    stale = is_stale(path, text)
    if not check and stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return stale
