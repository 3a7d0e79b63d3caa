"""Cut a notebook's markdown cell into the units a translator translates, and put translations back.

A unit is a paragraph, a heading, a list item or a whole table, never a cell: a one-word English edit re-opens one
unit, not a page. What is not prose stays out of the catalog and is copied as it is: blank lines, fenced code,
display math (``$$ ... $$`` alone), HTML comments alone (solution markers), and the marks in front of a unit
(``## ``, ``- ``, ``1. ``, ``> ``, with their indentation). Joining the pieces back gives the cell unchanged, so
an untranslated unit stays English and a cell with no translation is byte-identical.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

__all__ = ["Piece", "split", "join", "units"]

_HEADING = re.compile(r"^(#{1,6}[ \t]+)")
_ITEM = re.compile(r"^([ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+)")
_QUOTE = re.compile(r"^((?:>[ \t]?)+)")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_TABLE = re.compile(r"^[ \t]*\|")


@dataclass(frozen=True)
class Piece:
    """A run of text: ``kind`` is ``"paragraph"``, ``"heading"``, ``"item"`` or ``"table"`` (to translate) or
    ``"keep"`` (copied as it is)."""

    kind: str
    text: str

    @property
    def translatable(self) -> bool:
        return self.kind != "keep" and any(ch.isalpha() for ch in self.text)


def _blocks(lines: list[str]) -> list[list[str]]:
    """Group lines (ends kept) into blocks: a fence, a blank line, a heading, a table, a list item, a paragraph."""
    blocks: list[list[str]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if _FENCE.match(line):
            j = i + 1
            while j < len(lines) and not _FENCE.match(lines[j]):
                j += 1
            blocks.append(lines[i:j + 1])
            i = j + 1
            continue
        if not line.strip() or _HEADING.match(line):
            blocks.append([line])
            i += 1
            continue
        table = bool(_TABLE.match(line))
        j = i + 1
        while j < len(lines):
            nxt = lines[j]
            if not nxt.strip() or _HEADING.match(nxt) or _FENCE.match(nxt) or bool(_TABLE.match(nxt)) != table:
                break
            if not table and _ITEM.match(nxt):
                break
            j += 1
        blocks.append(lines[i:j])
        i = j
    return blocks


def _kind(block: list[str]) -> str:
    text = "".join(block).strip()
    if not text or _FENCE.match(block[0]) or (text.startswith("$$") and text.endswith("$$")):
        return "keep"
    if re.fullmatch(r"<!--.*?-->", text, re.DOTALL):
        return "keep"
    if _HEADING.match(block[0]):
        return "heading"
    if _TABLE.match(block[0]):
        return "table"
    if _ITEM.match(block[0]):
        return "item"
    return "paragraph"


def split(source: str) -> list[Piece]:
    """``source`` as pieces whose texts, joined, give ``source`` back; a unit's text has no mark, no final newline."""
    pieces: list[Piece] = []
    for block in _blocks(source.splitlines(keepends=True)):
        kind, text = _kind(block), "".join(block)
        if kind == "keep":
            pieces.append(Piece("keep", text))
            continue
        mark = {"heading": _HEADING, "item": _ITEM, "paragraph": _QUOTE}.get(kind)
        m = mark.match(text) if mark else None
        if m:
            pieces.append(Piece("keep", m.group(1)))
            text = text[m.end():]
        body = text.rstrip("\n")
        pieces.append(Piece(kind, body))
        if len(text) > len(body):
            pieces.append(Piece("keep", text[len(body):]))
    return pieces


def units(source: str) -> list[Piece]:
    """The pieces of ``source`` a translator sees."""
    return [p for p in split(source) if p.translatable]


def join(source: str, translate: Callable[[str], str | None]) -> tuple[str, int, int]:
    """``source`` with each unit replaced by ``translate(unit)`` (None: kept in English).

    Returns the new source, the number of units and the number of them translated.
    """
    out, total, done = [], 0, 0
    for piece in split(source):
        if not piece.translatable:
            out.append(piece.text)
            continue
        total += 1
        new = translate(piece.text)
        if new:
            done += 1
        out.append(new or piece.text)
    return "".join(out), total, done
