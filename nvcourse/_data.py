"""The one reader of ``nvcourse/data/*.toml``: every model's ``raw()`` calls :func:`load`.

Each data file holds figures with their source (``src``) and units in the field names; see docs/architecture.md.
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from .i18n import data_text

__all__ = ["load", "load_file", "shown", "displayed_records", "DISPLAYED", "TOMLDecodeError"]

#: what a malformed TOML file raises (callers catch it without importing tomllib themselves)
TOMLDecodeError = tomllib.TOMLDecodeError


#: The string fields of the data files shown to learners: file -> ((table, fields), ...); each record of the table
#: (or of the array of tables, located by its index; a table that holds the fields itself is one record) gives
#: one catalog entry per field. The extractor (``devtools/i18n_catalog``) collects them into nvcourse.pot;
#: :func:`shown` gives a record with them translated.
DISPLAYED: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "nccl_cases.toml": (("cases", ("cause",)),),
    "link_measurements.toml": (("measurement", ("what",)),),
    "catalog.toml": (("systems", ("name",)), ("links", ("name",))),
    "runbook.toml": (("signatures", ("title", "command", "cause", "fix", "healthy", "broken", "broken_short",
                                     "nccl_tests")),
                     ("cloud", ("name", "transport", "nccl_path", "log_says", "differs")), ("drill", ("story",)),
                     ("sources", ("title",))),
    "ethernet_ai.toml": (("facts", ("topic", "fact")), ("llama3_roce", ("name",))),
    "nccl_env.toml": (("vars", ("what", "when")),),
    "observability.toml": (("signals", ("fault", "tool", "reading", "kind")), ("ib_link_rule", ("counts", "when")),
                           ("alert_policy", ("symbol_errors_window",))),
    "security.toml": (("cc_measurements", ("what", "label")), ("nvlink_partitions", ("manager",))),
    "reliability.toml": (("alerts", ("metric", "counter", "unit", "action")), ("runs", ("name",))),
    "interconnects.toml": (("sources", ("title",)),),
    "costs.toml": (("sources", ("title",)),),
}


def displayed_records(data: dict[str, Any], table: str, fields: tuple[str, ...]) -> list[tuple[Any, dict[str, Any]]]:
    """(key, record) of ``table`` in a parsed data file: a table of records by key, an array of tables (keyed by
    position), or a table that holds ``fields`` itself (one record, key ``""``), as :data:`DISPLAYED` names them."""
    records = data[table]
    if isinstance(records, dict) and any(isinstance(records.get(f), str) for f in fields):
        return [("", records)]
    return list(records.items() if isinstance(records, dict) else enumerate(records))


@cache
def load(name: str) -> dict[str, Any]:
    """The parsed ``nvcourse/data/<name>.toml`` (cached: treat it as read-only)."""
    return tomllib.loads(resources.files("nvcourse").joinpath(f"data/{name}.toml").read_text(encoding="utf-8"))


def load_file(path: str | Path) -> dict[str, Any]:
    """A TOML file outside the package's data (e.g. a fixture set's ``EXPECTED.toml``), parsed (not cached)."""
    return tomllib.loads(Path(path).read_text(encoding="utf-8"))


def shown(name: str, table: str, record: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``record`` (of ``table`` in ``data/<name>.toml``) whose displayed fields (:data:`DISPLAYED`) are in
    the reader's language (:func:`nvcourse.i18n.data_text`); the same values in English."""
    fields = dict(DISPLAYED.get(f"{name}.toml", ())).get(table, ())
    return {k: data_text(v) if k in fields and isinstance(v, str) else v for k, v in record.items()}
