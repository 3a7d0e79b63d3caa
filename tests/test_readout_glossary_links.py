"""A chapter's readout that links the glossary reaches it from the notebook that shows it, in each edition: English
chapters sit in notebooks/ and link docs/glossary.md; the French ones sit in notebooks/fr/ and link docs/fr/glossary.md,
whose entries keep the English anchors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nvcourse.chapters import ch01_one_gpu, ch04_collectives, ch08_reliability
from nvcourse.i18n import glossary_href

ROOT = Path(__file__).resolve().parents[1]
_HREF = re.compile(r"href='([^']*glossary\.md)#([\w-]+)'")


def _readouts() -> str:
    foot = ch01_one_gpu._render("llama3-8b", "h100", 1, 1, 4, 1)[1]
    formulas = ch04_collectives.render_formulas(8, 1.0, 100.0, 256 * 2**20)[1]  # direct wins: NVLS is linked
    return foot + formulas + ch08_reliability.more_signals_html() + ch08_reliability.alerts_table_html()


@pytest.mark.parametrize("lang, folder", [("en", "notebooks"), ("fr", "notebooks/fr")])
def test_readout_glossary_links_resolve_from_their_notebook(monkeypatch, lang, folder):
    monkeypatch.setenv("NVCOURSE_LANG", lang)
    links = _HREF.findall(_readouts())
    assert {anchor for _, anchor in links} >= {"line-rate", "nvls", "ufm", "gsp"}
    for path, anchor in links:
        page = (ROOT / folder / path).resolve()
        assert page.exists(), f"{lang}: {path} does not exist from {folder}/"
        assert f'id="{anchor}"' in page.read_text(encoding="utf-8"), f"{lang}: no #{anchor} in {page.name}"
        assert ("/fr/" in path) == (lang == "fr")


def test_glossary_href_keeps_the_english_address_in_english(monkeypatch):
    monkeypatch.setenv("NVCOURSE_LANG", "en")
    assert glossary_href("nvls") == "../docs/glossary.md#nvls" and glossary_href() == "../docs/glossary.md"
