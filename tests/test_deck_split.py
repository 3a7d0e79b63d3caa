"""A long list item on a slide keeps its sentence's end: a long aside in parentheses goes to the notes first,
and only a sentence still too long is cut (chapter 02's protocol list, as printed in its section 2)."""

from __future__ import annotations

from pathlib import Path

import nbformat

from nvcourse.devtools import deck_plan, deck_split

ROOT = Path(__file__).resolve().parents[1]


def _protocol_slides() -> list[str]:
    nb = nbformat.read(ROOT / "notebooks" / "02_pcie_vs_nvlink.ipynb", as_version=4)
    return [s.lead for s in deck_plan.plan(nb) if "LL" in s.lead and "Simple" in s.lead]


def test_chapter_02s_ll_bullet_ends_as_the_chapter_says():
    (lead,) = _protocol_slides()
    ll = next(line for line in lead.splitlines() if line.startswith("- LL "))
    assert ll.endswith("at the price of half the bandwidth.")  # the chapter's words, not a cut
    assert "…" not in ll and "16-byte store" not in ll  # the aside is in the speaker notes
    assert len(ll.split()) <= deck_split.ITEM_WORD_CAP


def test_a_short_aside_stays_and_a_sentence_too_long_without_asides_is_still_cut():
    kept = deck_split.item_text("**LL** (small messages): " + "word " * 20 + "end.")
    assert kept.startswith("LL (small messages):") and kept.endswith("end.")
    cut = deck_split.item_text("A sentence " + "word " * 60 + "end.")
    assert cut.endswith("…") and len(cut.split()) == deck_split.ITEM_WORD_CAP + 1


def test_a_details_block_inside_a_cell_stays_in_its_row_and_counts_as_its_summary():
    # chapter 08's alert table folds a long note into its counter cell: that <details> belongs to the row (it is
    # not the folded prose after the table), and a slide shows only its summary line, so the rows are split by
    # what a slide shows, and no row is cut from its note
    note = "<details><summary>what it counts</summary>" + "a long explanation " * 60 + "</details>"
    rows = "".join(f"<tr><td>metric {i}</td><td><code style='overflow-wrap:anywhere'>Counter_{i}</code>{note}</td>"
                   f"<td>{'an action to take ' * 12}</td></tr>" for i in range(8))
    head = "<thead><tr><th>metric</th><th>counter</th><th>action</th></tr></thead>"
    table = f"<table>{head}<tbody>{rows}</tbody></table>"
    pieces = deck_split.split_html_table(table)
    assert len(pieces) > 1  # split, not returned whole
    assert all(p.count("<details>") == p.count("</details>") == p.count("<tr>") - 1 for p in pieces)
    assert sum(p.count("<tr>") - 1 for p in pieces) == 8
    assert deck_split._width_chars(f"<code style='x'>{'y' * 10}</code>{note}") < 40  # the summary, code wider
