"""The French course glossary (docs/fr/glossary.md) kept in step with docs/glossary.md: the same rows (anchors) in
the same order, each naming the same chapter (its French notebook where there is one) and keeping its numbers,
units, code and URLs; the French build points the chapters' glossary links at it."""

import re
from pathlib import Path

import pytest

from nvcourse.devtools import i18n_build
from nvcourse.devtools.i18n_checks import entry_problems

ROOT = Path(__file__).resolve().parents[1]
ROW = re.compile(r'^\| <a id="([^"]+)"></a>\*\*(.+?)\*\* \| \[(\w+)\]\(([^)]+)\) \| (.+) \|$', re.MULTILINE)


def rows(path: Path) -> list[tuple[str, str, str, str, str]]:
    """(anchor, term, chapter, link, meaning) of every row."""
    return ROW.findall(path.read_text(encoding="utf-8"))


EN, FR = rows(ROOT / "docs" / "glossary.md"), rows(ROOT / "docs" / "fr" / "glossary.md")


def test_the_french_glossary_has_the_english_rows_in_order():
    assert len(EN) > 80
    # a row added to or removed from docs/glossary.md: translate it into docs/fr/glossary.md, same place, same anchor
    assert [r[0] for r in FR] == [r[0] for r in EN]


@pytest.mark.parametrize("en, fr", list(zip(EN, FR)), ids=[r[0] for r in EN[:len(FR)]])
def test_each_row_names_the_same_chapter_and_keeps_numbers_code_and_urls(en, fr):
    assert fr[2] == en[2]
    english_notebook = (ROOT / "docs" / en[3]).resolve()
    french_notebook = english_notebook.parent / "fr" / english_notebook.name
    want = french_notebook if french_notebook.exists() else english_notebook
    assert (ROOT / "docs" / "fr" / fr[3]).resolve() == want
    assert entry_problems(en[4], fr[4]) == []
    assert fr[4] != en[4] or len(en[4]) < 20  # translated


def test_the_french_build_links_the_french_glossary():
    src = ROOT / "notebooks" / "01_why_one_gpu_is_not_enough.ipynb"
    dst = ROOT / "notebooks" / "fr" / src.name
    _, present = i18n_build.edition("fr", i18n_build.translations("fr", ROOT), ROOT)
    text = "see [HBM](../docs/glossary.md#hbm) and [the sheet](../docs/cheatsheet.md)"
    assert i18n_build._relink(text, src, dst, "fr", present, ROOT) == (
        "see [HBM](../../docs/fr/glossary.md#hbm) and [the sheet](../../docs/fr/cheatsheet.md)")
