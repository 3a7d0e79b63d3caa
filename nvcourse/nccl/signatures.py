"""Failure signatures as data: patterns in pasted text that name a cause, its fix and where it was seen.

The records live in ``nvcourse/data/runbook.toml`` (the runbook chapter's data), one ``[signatures.<id>]`` per
cause with ``title``, ``cause``, ``fix``, ``source_url`` and ``log_patterns``: Python regular expressions
tried on every line of a paste, as pasted and after :func:`~nvcourse.nccl.paste.clean_line` has removed
launcher prefixes (searched anywhere in the line, case-sensitive). An optional ``nccl_tests_patterns`` list
is tried the same way on nccl-tests output. Adding a cause is adding a record: ``nvcourse ncclog`` and
``nvcourse nccl-tests`` report every signature whose patterns match (``signatures`` in their JSON). Without
the data file there are no signatures.

A pattern that does not compile is a data error and raises ValueError naming the record (the data's tests catch
it before a learner does).
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

from .paste import clean_line

__all__ = ["records", "match_text"]


@cache
def _compiled() -> tuple[tuple[str, dict, tuple[re.Pattern, ...], tuple[re.Pattern, ...]], ...]:
    out = []
    for sid, rec in records().items():
        try:
            logs = tuple(re.compile(p) for p in rec.get("log_patterns", []))
            tests = tuple(re.compile(p) for p in rec.get("nccl_tests_patterns", []))
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
    return found
