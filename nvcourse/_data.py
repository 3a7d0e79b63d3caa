"""The one reader of ``nvcourse/data/*.toml``: every model's ``raw()`` calls :func:`load`.

Each data file holds figures with their source (``src``) and units in the field names; see docs/architecture.md.
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = ["load", "load_file", "TOMLDecodeError"]

#: what a malformed TOML file raises (callers catch it without importing tomllib themselves)
TOMLDecodeError = tomllib.TOMLDecodeError


@cache
def load(name: str) -> dict[str, Any]:
    """The parsed ``nvcourse/data/<name>.toml`` (cached: treat it as read-only)."""
    return tomllib.loads(resources.files("nvcourse").joinpath(f"data/{name}.toml").read_text(encoding="utf-8"))


def load_file(path: str | Path) -> dict[str, Any]:
    """A TOML file outside the package's data (e.g. a fixture set's ``EXPECTED.toml``), parsed (not cached)."""
    return tomllib.loads(Path(path).read_text(encoding="utf-8"))
