"""Build a language edition of the course from the English notebooks and the catalog ``notebooks.po``.

``notebooks/<lang>/`` and ``solutions/<lang>/`` hold copies of the English notebooks of the edition
(:func:`planned`): each markdown unit (:mod:`.i18n_markdown`) translated and not fuzzy is replaced, the others stay
English and are counted. Code cells, cell ids, tags and metadata are the English ones; a code cell whose source is
unchanged keeps the outputs of the edition's previous build (the French outputs of its last execution). Relative
links go to the edition's copy when there is one, else to the English notebook or file.
``exercises/<lang>/`` is generated from ``solutions/<lang>/`` by the course's exercise generator.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat
import polib

from . import i18n_catalog
from .execute_notebooks import execute as execute_notebook
from .i18n_markdown import join, units
from .make_exercises import sync

ROOT = i18n_catalog.ROOT
_LINK = re.compile(r"(\]\(|href=\"|src=\")([^)\"\s]+)")


@dataclass
class Built:
    """One edition notebook: where, how many units, how many translated."""

    path: Path
    units: int
    translated: int


def translations(lang: str, root: Path = ROOT) -> dict[str, str]:
    """English unit → translation, for the entries translated and not fuzzy."""
    path = i18n_catalog.po_path(lang, "notebooks", root)
    if not path.exists():
        return {}
    return {e.msgid: e.msgstr for e in polib.pofile(str(path)) if i18n_catalog.done(e)}


def edition_path(src: Path, lang: str) -> Path:
    return src.parent / lang / src.name


def planned(lang: str, table: dict[str, str], root: Path = ROOT) -> list[Path]:
    """The notebooks of the edition: those already in it (their copy exists) and those fully translated.

    A chapter joins the edition once every unit is translated (the shared headings alone do not bring it in);
    after that it stays, and an English edit leaves its changed units in English, counted, until translated.
    """
    out = []
    for src in i18n_catalog.source_notebooks(root):
        if edition_path(src, lang).exists():
            out.append(src)
            continue
        nb = nbformat.read(src, as_version=4)
        if all(u.text in table for c in nb.cells if c.cell_type == "markdown" for u in units(c.source)):
            out.append(src)
    return out


def _relink(text: str, src: Path, dst: Path, lang: str, present: set[Path], root: Path) -> str:
    """Relative links of ``src`` rewritten for ``dst``: to the edition's copy when it exists, else the English."""
    def fix(m: re.Match[str]) -> str:
        target = m.group(2)
        if re.match(r"^([a-z]+:|#|/)", target):
            return m.group(0)
        path, _, anchor = target.partition("#")
        english = (src.parent / path).resolve()
        if not english.is_relative_to(root):
            return m.group(0)
        edition = english.parent / lang / english.name
        goal = edition if edition in present else english
        new = os.path.relpath(goal, dst.parent).replace(os.sep, "/")
        return m.group(1) + new + (f"#{anchor}" if anchor else "")

    return _LINK.sub(fix, text)


def _old_outputs(dst: Path) -> dict[str, nbformat.NotebookNode]:
    if not dst.exists():
        return {}
    return {c.get("id"): c for c in nbformat.read(dst, as_version=4).cells if c.cell_type == "code"}


def translated(src: Path, dst: Path, table: dict[str, str], lang: str, present: set[Path],
               root: Path = ROOT) -> tuple[nbformat.NotebookNode, int, int]:
    """The edition's copy of ``src`` (to be written at ``dst``), its number of units and of units translated."""
    nb = nbformat.read(src, as_version=4)
    old = _old_outputs(dst)
    total = done = 0
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            text, n, k = join(cell.source, table.get)
            cell.source = _relink(text, src, dst, lang, present, root)
            total, done = total + n, done + k
        elif cell.cell_type == "code":
            prev = old.get(cell.get("id"))
            if prev is not None and prev.source == cell.source:
                cell.outputs, cell.execution_count = prev.outputs, prev.execution_count
    return nb, total, done


def build_notebook(src: Path, dst: Path, table: dict[str, str], lang: str, present: set[Path],
                   root: Path = ROOT) -> Built:
    """Write the edition's copy of ``src`` at ``dst``."""
    nb, total, done = translated(src, dst, table, lang, present, root)
    dst.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, dst)
    return Built(dst, total, done)


def edition(lang: str, table: dict[str, str], root: Path = ROOT) -> tuple[list[Path], set[Path]]:
    """The English sources of the edition and every path the edition will have (its notebooks and exercises, and
    the translated pages of ``docs/<lang>/``, such as the glossary: a chapter's link goes to them)."""
    sources = planned(lang, table, root)
    present = {edition_path(s, lang) for s in sources} | set((root / "docs" / lang).glob("*.md"))
    present |= {root / "exercises" / lang / s.name for s in sources
                if s.parent.name == "solutions" and s.name.endswith("_exercises.ipynb")}
    return sources, present


def build(lang: str, root: Path = ROOT) -> list[Built]:
    """Every notebook of the edition, then ``exercises/<lang>/`` from ``solutions/<lang>/``."""
    table = translations(lang, root)
    sources, present = edition(lang, table, root)
    built = [build_notebook(s, edition_path(s, lang), table, lang, present, root) for s in sources]
    if (root / "solutions" / lang).is_dir():
        for problem in sync(root / "solutions" / lang, root / "exercises" / lang, check=False):
            print(problem)
    return built


def execute(paths: list[Path], lang: str) -> None:
    """Run the edition's notebooks in place with the kernel speaking ``lang`` (NVCOURSE_LANG)."""
    os.environ["NVCOURSE_LANG"] = lang  # the kernel inherits it
    for path in paths:
        print(f"executing {path.relative_to(ROOT)} ...", end=" ", flush=True)
        print(f"{execute_notebook(path):.1f} s", flush=True)
