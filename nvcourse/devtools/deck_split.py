"""Cut a chapter's lists and tables into pieces that fit a 1280×720 slide, for :mod:`.deck_plan`.

A list keeps each item's whole first sentence (the whole item when it is short; a check-yourself question whole,
its answer going to the speaker notes), and a long list or table goes on over continuation slides rather than
off the bottom of the slide. The sizes are estimated from the deck's fonts (30 px text, 20 px tables; see the
``nvcourse_reveal`` template); the workshop-kit test measures the built decks in Chromium.
"""

from __future__ import annotations

import html
import math
import re

LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_ORDERED = re.compile(r"^\s*(\d+)[.)]\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(“\"«À-ÖØ-Þ])")  # French sentences too: « À É
#: Word breaks: ASCII white space only, so French no-break spaces (before : ; ? ! %, a unit) stay in a bullet.
_SPACES = re.compile(r"[ \t\r\n\f\v]+")


def _words(text: str) -> list[str]:
    return [w for w in _SPACES.split(text) if w]

#: An item this short (words) is kept whole; a longer one keeps its first sentence.
WHOLE_ITEM_WORDS = 30
#: The longest sentence a slide shows (words); a longer one is cut with "…" (the whole is in the notes).
ITEM_WORD_CAP = 45
#: A parenthetical aside longer than this (words) is left to the notes when a sentence is over the cap: the
#: sentence keeps its end (02's LL item lost "at the price of half the bandwidth" to a cut).
ASIDE_WORDS = 6
_ASIDE = re.compile(r"\s*\([^()]*\)")
#: Visible words of list text one slide holds (30 px text, about 13 words a line, 10 lines under a title).
LIST_WORDS_PER_SLIDE = 64
LIST_ITEMS_PER_SLIDE = 6

#: Height (px of the 1280×720 slide) a table may take under the title, and its text's metrics at the 20 px
#: table font: line height, cell padding, and the characters a full-width line holds.
TABLE_HEIGHT = 540
TABLE_LINE_PX = 25
TABLE_ROW_PAD_PX = 8
TABLE_CHARS_PER_LINE = 105


def _plain(md: str) -> str:
    """Markdown without pictures, links' targets and bold marks; code spans kept (a ``#`` in one is not a heading)."""
    md = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", md)
    md = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", md)
    return md.replace("**", "")


def list_items(block: str) -> list[tuple[str, str]]:
    """A Markdown list as (marker, text) items, continuation lines joined to their item."""
    items: list[tuple[str, str]] = []
    for line in block.splitlines():
        m = LIST_ITEM.match(line)
        if m:
            num = _ORDERED.match(line)
            items.append((f"{num.group(1)}." if num else "-", line[m.end():].strip()))
        elif items:
            items[-1] = (items[-1][0], f"{items[-1][1]} {line.strip()}")
    return items


def item_text(item: str) -> str:
    """What a slide shows of one list item: the item without an answer (``<details>``), whole when at most
    :data:`WHOLE_ITEM_WORDS` words, else its first sentence; at most :data:`ITEM_WORD_CAP` words, its long asides in
    parentheses dropped first, then cut ("…" marks a cut)."""
    text = re.sub(r"<details>.*?(</details>|$)", "", item, flags=re.S)
    text = " ".join(_words(re.sub(r"<[^>]+>", " ", _plain(text))))
    if len(_words(text)) > WHOLE_ITEM_WORDS:
        text = _SENTENCE_END.split(text, maxsplit=1)[0]
    if len(_words(text)) > ITEM_WORD_CAP:  # an aside in parentheses goes before the sentence's own end does
        text = " ".join(_words(_ASIDE.sub(lambda m: "" if len(m.group().split()) > ASIDE_WORDS else m.group(), text)))
        text = re.sub(r"\s+([,;:.])", r"\1", text)
    ws = _words(text)
    if len(ws) <= ITEM_WORD_CAP:
        return text
    shown = " ".join(ws[:ITEM_WORD_CAP]).rstrip(",;:")
    return shown + ("`" if shown.count("`") % 2 else "") + " …"  # a cut code span closed


def bullet_slides(block: str) -> list[str]:
    """A Markdown list as the Markdown of one or more slides' bullets (every item kept, in order)."""
    chunks: list[list[str]] = [[]]
    used = 0
    for marker, item in list_items(block):
        text = item_text(item)
        n = len(text.split())
        if chunks[-1] and (used + n > LIST_WORDS_PER_SLIDE or len(chunks[-1]) >= LIST_ITEMS_PER_SLIDE):
            chunks.append([])
            used = 0
        chunks[-1].append(f"{marker} {text}")
        used += n
    return ["\n".join(c) for c in chunks if c]


def _text(cell: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", cell)).split())


def _shown(cell: str) -> str:
    """A cell as a slide shows it: a closed ``<details>`` shows its summary line only."""
    return re.sub(r"<details[^>]*>\s*<summary[^>]*>(.*?)</summary>.*?</details>", r"\1<br>", cell, flags=re.S)


def _width_chars(cell: str) -> float:
    """A cell's text length in characters of the table font: code (HTML or Markdown) is monospace, wider."""
    cell = _shown(cell)
    spans = re.findall(r"<code[^>]*>(.*?)</code>|`([^`]*)`", cell, flags=re.S)  # <code style=...> too
    code = sum(len(_text(html_span or md_span)) for html_span, md_span in spans)
    return len(_text(cell).replace("`", "")) + 0.3 * code


def _widths(rows: list[list[str]]) -> list[float]:
    """Each column's width in characters of a line, shared as a browser's automatic table layout roughly does:
    in proportion to the column's longest cell (capped, since long cells wrap)."""
    n = max(len(r) for r in rows)
    longest = [min(60, max([_width_chars(r[i]) for r in rows if i < len(r)] + [3])) for i in range(n)]
    return [TABLE_CHARS_PER_LINE * w / sum(longest) for w in longest]


def _row_px(cells: list[str], widths: list[float]) -> int:
    """Estimated height of a table row (px): its longest-wrapping cell's lines, with a margin for wrapping
    at word boundaries."""
    lines = max([math.ceil(1.25 * _width_chars(c) / max(4.0, w)) for c, w in zip(cells, widths)] + [1])
    return lines * TABLE_LINE_PX + TABLE_ROW_PAD_PX


def _chunks(rows: list[str], heights: list[int], budget: int) -> list[list[str]]:
    out: list[list[str]] = [[]]
    used = 0
    for row, h in zip(rows, heights):
        if out[-1] and used + h > budget:
            out.append([])
            used = 0
        out[-1].append(row)
        used += h
    return [c for c in out if c]


def split_markdown_table(table: str) -> list[str]:
    """A Markdown table as one or more tables that each fit a slide, the header repeated on each."""
    lines = table.strip().splitlines()
    head, body = lines[:2], lines[2:]
    cells = [[_plain(c) for c in line.strip().strip("|").split("|")] for line in lines]
    widths = _widths([cells[0], *cells[2:]])
    header_px = _row_px(cells[0], widths)
    heights = [_row_px(c, widths) for c in cells[2:]]
    return ["\n".join(head + chunk) for chunk in _chunks(body, heights, TABLE_HEIGHT - header_px)]


def split_html_table(table_html: str) -> list[str]:
    """A printed HTML table (one ``<table>`` with ``<thead>`` and ``<tbody>``, then maybe prose and folded
    ``<details>``) as one or more pieces that each fit a slide: head and caption repeated, what follows the
    table on the last piece; anything else is returned whole."""
    end = table_html.find("</table>")
    fold = table_html.find("<details", end if end >= 0 else 0)  # a <details> inside a cell is part of its row
    main, folded = (table_html, "") if fold < 0 else (table_html[:fold], table_html[fold:])
    m = re.search(r"^(.*?<tbody[^>]*>)(.*?)(</tbody>.*)$", main, flags=re.S)
    if not m or main.count("<table") != 1:
        return [table_html]
    head, body, tail = m.groups()
    rows = re.findall(r"<tr[^>]*>.*?</tr>", body, flags=re.S)
    caption = re.search(r"<caption[^>]*>(.*?)</caption>", head, flags=re.S)
    table_end = tail.index("</table>") + len("</table>")
    cells = [re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r, flags=re.S) for r in [head, *rows]]
    widths = _widths(cells)
    full = [float(TABLE_CHARS_PER_LINE)]
    before, after = _text(head[:head.find("<table")]), _text(tail[table_end:] + folded)
    after_px = _row_px([after], full) if after else 0
    apart = after_px > TABLE_HEIGHT // 2  # long prose after the table: a continuation slide of its own
    fixed = (_row_px(cells[0], widths) + (_row_px([caption.group(1)], full) if caption else 0)
             + (_row_px([before], full) if before else 0) + (0 if apart else after_px))
    heights = [_row_px(c, widths) for c in cells[1:]]
    chunks = _chunks(rows, heights, TABLE_HEIGHT - fixed)
    pieces = [head + "".join(chunk) + (tail + folded if i == len(chunks) - 1 and not apart else tail[:table_end])
              for i, chunk in enumerate(chunks)]
    return pieces + ([tail[table_end:] + folded] if apart else [])
