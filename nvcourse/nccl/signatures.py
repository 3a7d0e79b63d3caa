"""Failure signatures as data: patterns in pasted text that name a cause, its fix and where it was seen.

The records live in ``nvcourse/data/runbook.toml`` (the runbook chapter's data), one ``[signatures.<id>]`` per
cause with ``title``, ``cause``, ``fix``, ``source_url`` and ``log_patterns``: Python regular expressions
tried on every line of a paste, as pasted and after :func:`~nvcourse.nccl.paste.clean_line` has removed
launcher prefixes (searched anywhere in the line, case-sensitive). An optional ``nccl_tests_patterns`` list
is tried the same way on nccl-tests output. Adding a cause is adding a record: ``nvcourse ncclog`` and
``nvcourse nccl-tests`` report every signature whose patterns match (``signatures`` in their JSON). Without
the data file there are no signatures.

Cumulative counters (pause frames, link-down counts) count since the driver loaded or the last clear, so one
reading says nothing about now: a record's ``counter_patterns`` (each with two groups, the counter's name and its
value) fire only when the paste holds two readings of the same counter and the second is larger
(:func:`counter_readings`); a single reading is reported as a reading, not as a fault. ``healthy_patterns`` name
lines that a reader recognises as this check's output in its healthy state (``notes`` in the reader's JSON);
``margin_patterns`` name lines that show a link's margin (raw or effective BER): a trend to watch, never a fault.
``peer_patterns`` (groups: a field's name and its state) fire only when GPUs in one paste differ (one GPU at its
power cap while its peers are not); the same state on every GPU is a note. A record with ``fault = false`` names
what a line is (a cloud fabric) without calling it wrong: readers list it as a note, not a problem.

A pattern that does not compile is a data error and raises ValueError naming the record (the data's tests catch
it before a learner does).
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

from ..i18n import data_text, ngettext, whole
from ..i18n import translate as _
from .paste import clean_line

__all__ = ["records", "match_text", "counter_readings", "healthy_readings", "reading_notes"]


@cache
def _compiled() -> tuple[tuple[str, dict, tuple[re.Pattern, ...], tuple[re.Pattern, ...]], ...]:
    out = []
    for sid, rec in records().items():
        try:
            logs = tuple(re.compile(p) for p in rec.get("log_patterns", []))
            tests = tuple(re.compile(p) for p in rec.get("nccl_tests_patterns", []))
            for key in ("counter_patterns", "healthy_patterns", "peer_patterns", "margin_patterns"):
                [re.compile(p) for p in rec.get(key, [])]
        except re.error as exc:
            raise ValueError(f"runbook.toml [signatures.{sid}]: pattern does not compile ({exc})") from None
        out.append((sid, rec, logs, tests))
    return tuple(out)


def records() -> dict[str, dict]:
    """``{id: record}`` from ``nvcourse/data/runbook.toml``; empty when the file or its table is absent."""
    if not resources.files("nvcourse").joinpath("data/runbook.toml").is_file():
        return {}
    from .. import _data

    return dict(_data.load("runbook").get("signatures", {}))


def match_text(text: str, *, kind: str = "log") -> list[dict]:
    """Signatures whose patterns match a line of ``text``: ``{"signature", "title", "cause", "fix", "source",
    "line", "lines"}`` (``line``: the first matching line as cleaned, ``lines``: how many matched), in the data
    file's order. ``kind="nccl-tests"`` also tries each record's ``nccl_tests_patterns``."""
    # each line as pasted and without its launcher prefixes: a "Key: value" line (lspci's "LnkSta: ...") reads
    # like a pdsh host prefix to clean_line, so a pattern may need the line as it was
    pairs = [(raw.strip(), clean_line(raw)) for raw in text.splitlines()]
    pairs = [(r, c) for r, c in pairs if r and not r.startswith("%%")]
    found = []
    for sid, rec, logs, tests in _compiled():
        pats = logs + (tests if kind == "nccl-tests" else ())
        hits = [c if any(p.search(c) for p in pats) else r for r, c in pairs
                if any(p.search(r) or p.search(c) for p in pats)] if pats else []
        if hits:
            found.append({"signature": sid, "title": rec.get("title"), "cause": rec.get("cause"),
                          "fix": rec.get("fix"), "source": rec.get("source_url"), "line": hits[0][:300],
                          "lines": len(hits)})
    for hit in _differing_peers(text):
        rec = records()[hit["signature"]]
        found.append({"signature": hit["signature"], "title": rec.get("title"), "cause": rec.get("cause"),
                      "fix": rec.get("fix"), "source": rec.get("source_url"), "line": hit["line"], "lines": 1})
    for hit in _growing_counters(text):
        rec = records()[hit["signature"]]
        found.append({"signature": hit["signature"], "title": rec.get("title"), "cause": rec.get("cause"),
                      "fix": rec.get("fix"), "source": rec.get("source_url"),
                      "line": f"{hit['counter']} rose by {hit['delta']} between two readings "
                              f"({hit['values'][0]} -> {hit['values'][-1]})", "lines": 1})
    return found


def _readings(text: str, key: str) -> dict[tuple[str, str], list[str]]:
    """``{(signature, name): [value per reading]}`` for the records' ``key`` patterns (groups: name, value)."""
    seen: dict[tuple[str, str], list[str]] = {}
    for raw in text.splitlines():
        line = clean_line(raw)
        if not line or line.startswith("%%"):
            continue
        for sid, rec in records().items():
            for pat in rec.get(key, []):
                if m := re.search(pat, raw) or re.search(pat, line):
                    seen.setdefault((sid, m.group(1)), []).append(m.group(2))
    return seen


def _differing_peers(text: str) -> list[dict]:
    out = []
    for (sid, name), vals in _readings(text, "peer_patterns").items():
        if len(set(vals)) > 1:
            counts = ", ".join(f"{v} on {vals.count(v)}" for v in dict.fromkeys(vals))
            out.append({"signature": sid, "line": f"{name} differs between the {len(vals)} GPUs: {counts}"})
    return out


def counter_readings(text: str) -> list[dict]:
    """Every cumulative counter the records' ``counter_patterns`` find, in order of first sight: ``{"signature",
    "counter", "values"}`` (one value per reading in the paste) and ``delta`` (last minus first; None for one
    reading). Two readings of one interface pasted one after the other are what makes a rate."""
    seen = {k: [int(v) for v in vals] for k, vals in _readings(text, "counter_patterns").items()}
    return [{"signature": sid, "counter": name, "values": vals,
             "delta": vals[-1] - vals[0] if len(vals) > 1 else None} for (sid, name), vals in seen.items()]


def _growing_counters(text: str) -> list[dict]:
    """One entry per signature: its counter that grew most between the first and last reading."""
    best: dict[str, dict] = {}
    for c in counter_readings(text):
        if c["delta"] and c["delta"] > 0 and c["delta"] > best.get(c["signature"], {}).get("delta", 0):
            best[c["signature"]] = c
    return list(best.values())


def healthy_readings(text: str) -> list[dict]:
    """Lines recognised as a check's output in its healthy state: ``{"signature", "title", "lines"}``."""
    out = []
    for sid, rec in records().items():
        pats = [re.compile(p) for p in rec.get("healthy_patterns", [])]
        n = sum(1 for raw in text.splitlines() if any(p.search(raw) for p in pats))
        if n:
            out.append({"signature": sid, "title": rec.get("title"), "lines": n})
    return out


def reading_notes(counters: list[dict], text: str) -> list[str]:
    """What a reader recognised that is not a fault, or that one paste cannot decide: counters read once (cumulative,
    so no rate), counters unchanged between two readings, and lines that show a check healthy; in the current
    language (a check's title through its translation)."""
    notes = []
    if once := [c for c in counters if c["delta"] is None and c["values"][0] > 0]:
        shown = ", ".join(f"{c['counter']} {c['values'][0]}" for c in once[:4]) + (", ..." if len(once) > 4 else "")
        notes.append(_("counters read once ({counters}): cumulative since the driver loaded or the last clear (and "
                       "pauses on a lossless priority are normal), so one reading cannot tell a fault from health; "
                       "paste two readings taken a few seconds apart during the run").format(counters=shown))
    if still := [c for c in counters if c["delta"] == 0]:
        notes.append(ngettext("{count} counter unchanged between two readings ({counter})",
                              "{count} counters unchanged between two readings ({counter})", len(still)).format(
            count=whole(len(still)), counter=", ".join(c["counter"] for c in still)))
    for h in healthy_readings(text):
        notes.append(ngettext("{count} line read as healthy for the check '{title}'",
                              "{count} lines read as healthy for the check '{title}'", h["lines"]).format(
            count=whole(h["lines"]), title=data_text(h["title"])))
    for rec in records().values():
        margin = [p for p in rec.get("margin_patterns", []) if re.search(p, text, re.M)]
        if margin:
            notes.append(_("link margin lines (raw or effective BER) for the check '{title}': a trend to watch "
                           "across readings, not a fault to page on").format(title=data_text(rec["title"])))
    for (_sid, name), vals in _readings(text, "peer_patterns").items():
        if len(set(vals)) == 1:
            notes.append(ngettext("{name} {value} on all {count} GPU reading: a fault only when one GPU differs from "
                                  "its peers (at its power limit under load, every GPU may show it)",
                                  "{name} {value} on all {count} GPU readings: a fault only when one GPU differs from "
                                  "its peers (at its power limit under load, every GPU may show it)", len(vals)).format(
                name=name, value=vals[0], count=whole(len(vals))))
    for rec in records().values():
        if rec.get("fault") is False and any(re.search(p, text) for p in rec.get("log_patterns", [])):
            notes.append(_("recognised, not a fault: {title}").format(title=data_text(rec["title"])))
    return notes
