"""What a translation must keep from the English: numbers, units, code spans, URLs, LaTeX (pofilter-style).

translate-toolkit's checker compares numbers and URLs; the French decimal comma and the U+202F thousands separator
(docs/fr/glossaire.md) are mapped back to the English forms first, so ``1,12`` matches ``1.12``. Code spans
(`` `...` ``), inline and display LaTeX (``$...$``), ``{field}`` placeholders and unit symbols must be
identical, as multisets (the French may reorder a sentence).
"""

from __future__ import annotations

import re
from collections import Counter

import polib
from translate.filters import checks

__all__ = ["entry_problems", "catalog_problems"]

_CHECKER = checks.StandardChecker(checks.CheckerConfig(targetlanguage="fr"))
#: a code span may wrap onto the next line of its paragraph (Markdown reads the line break as a space)
_CODE = re.compile(r"`[^`]+`")
_FIELD = re.compile(r"\{[A-Za-z_]\w*\}")  # str.format fields of the _() strings
_MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$", re.DOTALL)
#: ``\$`` is a dollar sign in Markdown, not LaTeX (prices: ``\$2.84 M``, ``2,84 M\$`` in French): out before LaTeX
_ESCAPED_DOLLAR = re.compile(r"\\\$")
_UNIT = re.compile(r"(?<![\w/])(?:[kMGTP]i?B/s|[kMGT]b/s|GT/s|[kMGTP]i?B|ns|µs|ms|kW|MW)(?![\w/])")
_FR_DECIMAL = re.compile(r"(?<=\d),(?=\d)")
_FR_GROUP = re.compile(r"(?<=\d)[\u202f\u00a0 ](?=\d{3}(?!\d))")
_EN_GROUP = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


def _plain_numbers(text: str, french: bool) -> str:
    """Numbers without thousands separators and with a decimal point (``16 384,5`` → ``16384.5``)."""
    if french:
        return _FR_DECIMAL.sub(".", _FR_GROUP.sub("", text))
    return _EN_GROUP.sub("", text)


def _one_line(span: str) -> str:
    """A span as Markdown renders it: a line break and the indentation after it read as one space."""
    return re.sub(r"\s*\n\s*", " ", span)


def _strip(text: str) -> str:
    """Prose only: code spans and LaTeX out (they are compared whole)."""
    return _MATH.sub(" ", _CODE.sub(" ", text))


def entry_problems(source: str, target: str) -> list[str]:
    """What ``target`` (a translation of ``source``) lost or changed; empty when it keeps everything."""
    out = []
    source, target = _ESCAPED_DOLLAR.sub(" ", source), _ESCAPED_DOLLAR.sub(" ", target)
    for what, pattern in (("code spans", _CODE), ("LaTeX", _MATH), ("placeholders", _FIELD)):
        if Counter(map(_one_line, pattern.findall(source))) != Counter(map(_one_line, pattern.findall(target))):
            out.append(f"{what} differ")
    src, tgt = _plain_numbers(_strip(source), False), _plain_numbers(_strip(target), True)
    if Counter(_UNIT.findall(src)) != Counter(_UNIT.findall(tgt)):
        out.append("units differ")
    for name in ("numbers", "urls"):
        try:
            getattr(_CHECKER, name)(src, tgt)
        except checks.FilterFailure as exc:
            out.append(f"{name}: {exc}")
    return out


def catalog_problems(po: polib.POFile) -> list[str]:
    """``msgid: problem`` for every translated entry (fuzzy too) that changed what must stay identical."""
    out = []
    for e in po:
        if e.obsolete or not e.msgstr:
            continue
        out += [f"{e.msgid[:60]!r}: {p}" for p in entry_problems(e.msgid, e.msgstr)]
    return out
