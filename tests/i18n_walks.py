"""Helpers of the tests that walk what a chapter shows in each language (tests/test_i18n.py, test_i18n_rest.py).

A walk is a small script run in a fresh interpreter (questions are registered, so their ``_()`` strings read, when
their module is imported) that writes everything a learner could be shown; a catalog entry is shown when each of
its fixed parts (between ``{field}`` placeholders) is found in that text.
"""

from __future__ import annotations

import ast
import html
import os
import re
import subprocess
import sys
from pathlib import Path

import polib
from babel.messages.extract import extract_from_file

from nvcourse.devtools import i18n_catalog

ROOT = Path(__file__).resolve().parents[1]


def run_walk(script: str, language: str) -> str:
    """What ``script`` writes to stdout with the kernel's language set to ``language``, HTML entities read too."""
    env = {**os.environ, "NVCOURSE_LANG": language, "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout + html.unescape(done.stdout)


def walk(frame: str, script: str, language: str) -> str:
    """``run_walk`` of ``frame`` (the helpers a walk's script uses, and its ``out`` list) then ``script``, which
    appends what a learner would see to ``out``: everything in ``out``, one item per line."""
    return run_walk(frame + script + "\nsys.stdout.write('\\n'.join(map(str, out)))", language)


def entries(*paths: str) -> list[polib.POEntry]:
    """The French catalog's live entries extracted from any of ``paths`` (``nvcourse/...py``)."""
    po = polib.pofile(str(i18n_catalog.po_path("fr", "nvcourse")))
    return [e for e in po if not e.obsolete and any(o[0] in paths for o in e.occurrences)]


def fragments(text: str) -> list[str]:
    """The fixed parts of a message (between its ``{field}`` placeholders), those long enough to look for."""
    return [f for f in re.split(r"\{\w+\}", text) if len(f.strip()) > 2]


def speaks(shown: str, language: str, paths: tuple[str, ...], unreachable: frozenset[str] = frozenset(),
            least: int = 10, english_over: int = 20) -> None:
    """Every entry of ``paths`` is shown in ``language`` (its fixed parts); in French, no English one longer than
    ``english_over`` characters (shorter ones can be words French shares, such as a unit)."""
    entries_ = [e for e in entries(*paths) if e.msgid not in unreachable]
    assert len(entries_) >= least
    for e in entries_:
        forms = [e.msgid, *([e.msgid_plural] if e.msgid_plural else [])]
        if language == "fr":
            assert e.msgstr or any(e.msgstr_plural.values()), f"not translated: {e.msgid!r}"
            forms = list(e.msgstr_plural.values()) if e.msgid_plural else [e.msgstr]
        for form in forms:
            for fragment in fragments(form):
                assert fragment in shown, f"{language}: never shown: {fragment!r} (of {e.msgid!r})"
        if language == "fr" and e.msgstr != e.msgid and "{" not in e.msgid and len(e.msgid) > english_over:
            assert e.msgid not in shown, f"English left: {e.msgid!r}"


def messages(path: str, functions: set[str]) -> list[tuple[str, ...]]:
    """The ``_()`` and ``ngettext()`` messages inside ``functions`` of ``path`` (Babel, the extractor's keywords):
    ``(msgid,)`` or ``(singular, plural)``."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    spans = [(n.lineno, n.end_lineno) for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name in functions]
    assert len(spans) == len(functions), f"{path}: missing one of {sorted(functions)}"
    found = []
    for line, message, _comments, _ctx in extract_from_file("python", ROOT / path, keywords=i18n_catalog.KEYWORDS):
        if any(a <= line <= b for a, b in spans):
            found.append(message if isinstance(message, tuple) else (message,))
    return found


def french_entries() -> dict[str, polib.POEntry]:
    """The French catalog's live entries by msgid."""
    po = polib.pofile(str(i18n_catalog.po_path("fr", "nvcourse")))
    return {e.msgid: e for e in po if not e.obsolete}


def shows_each_message(found: list[tuple[str, ...]], shown: str, language: str, french: dict[str, polib.POEntry],
                       skip: frozenset[str] | set[str] = frozenset()) -> None:
    """Each message of ``found`` (from :func:`messages`, whether or not the catalog holds it yet) is shown in
    ``language``: in French, translated and its English (a long fixed sentence) nowhere in ``shown``."""
    for forms in found:
        if forms[0] in skip:
            continue
        if language == "fr":
            entry = french.get(forms[0])
            assert entry is not None and not entry.fuzzy, f"not in the French catalog yet: {forms[0]!r}"
            forms = tuple(entry.msgstr_plural.values()) if len(forms) == 2 else (entry.msgstr,)
            assert all(forms), f"not translated: {entry.msgid!r}"
            if "{" not in entry.msgid and len(entry.msgid) > 20:
                assert entry.msgid not in shown, f"English left: {entry.msgid!r}"
        for form in forms:
            for fragment in fragments(form):
                assert fragment in shown, f"{language}: never shown: {fragment!r} (of {forms[0]!r})"


def printed_lines_speak(functions: dict[str, set[str]], frame: str, script: str, language: str,
                        unreached: set[str] | frozenset[str] = frozenset(), least: int = 1) -> str:
    """The walk of the cells that print ``functions``' messages (path -> function names), checked from both sides:
    the catalog's (each message of those modules the cells print, nothing else of them) and the source's (every
    message of those functions, whether or not the catalog holds it yet). Returns what the walk showed."""
    found = [forms for path, names in functions.items() for forms in messages(path, names)]
    assert len(found) >= least
    shown = walk(frame, script, language)
    printed = {forms[0] for forms in found}
    others = frozenset(e.msgid for e in entries(*functions) if e.msgid not in printed) | frozenset(unreached)
    speaks(shown, language, tuple(functions), others, least=0)
    shows_each_message(found, shown, language, french_entries(), skip=unreached)
    return shown
