"""Which edition the workshop kit (``tasks.py slides`` / ``tasks.py handouts``) builds: English or French.

The English edition is the course's own folders (``notebooks/``, ``exercises/``, ``solutions/``) and writes to
``artifacts/slides`` / ``artifacts/handouts``; a translated edition reads the language's subfolders
(``notebooks/fr/``... written by ``tasks.py i18n build``) and writes beside the English, in
``artifacts/slides/fr`` / ``artifacts/handouts/fr``, never over it. While a build runs, the course speaks that
language (``NVCOURSE_LANG``, inherited by the kernels it starts), so the kit's own words and a re-executed
chapter's outputs are in it too.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .._validate import choice

#: --lang values: the English source and the translated editions.
LANGS = ("en", "fr")


def add_lang_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lang", default="en", metavar="{" + ",".join(LANGS) + "}",
                        help="the edition to build: en (default) or fr (the French edition, notebooks/fr/ ...)")


def checked_lang(prog: str, value: str) -> str | None:
    """``value`` when it is an edition; else None after one line on stderr naming ``--lang`` and what is allowed
    (the caller exits 2)."""
    try:
        return choice("--lang", value, LANGS)
    except ValueError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return None


def folder(base: Path, lang: str) -> Path:
    """``base`` for English, its ``lang`` subfolder for a translation (sources and outputs alike)."""
    return base if lang == "en" else base / lang


@contextmanager
def speaking(lang: str) -> Iterator[None]:
    """The course (this process and the kernels it starts) in ``lang`` for the duration; restored after."""
    previous = os.environ.get("NVCOURSE_LANG")
    os.environ["NVCOURSE_LANG"] = lang
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("NVCOURSE_LANG", None)
        else:
            os.environ["NVCOURSE_LANG"] = previous


def not_translated(english: list[Path], edition: list[Path]) -> str:
    """The line that names what the English edition has and a translated one does not yet ("" when nothing)."""
    missing = sorted({p.stem for p in english} - {p.stem for p in edition})
    return f"not translated yet, so left out: {', '.join(missing)}" if missing else ""
