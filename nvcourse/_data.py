"""The one reader of ``nvcourse/data/*.toml``: every model's ``raw()`` calls :func:`load`.

Each data file holds figures with their source (``src``) and units in the field names; see docs/architecture.md.
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["load"]


@cache
def load(name: str) -> dict[str, Any]:
    """The parsed ``nvcourse/data/<name>.toml`` (cached: treat it as read-only)."""
    return tomllib.loads(resources.files("nvcourse").joinpath(f"data/{name}.toml").read_text(encoding="utf-8"))
