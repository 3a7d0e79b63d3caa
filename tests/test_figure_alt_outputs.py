"""Every figure a notebook stores carries its description, so decks, handouts and screen readers have it."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
BOOKS = sorted([*(ROOT / "notebooks").glob("*.ipynb"), *(ROOT / "solutions").glob("*.ipynb")])


@pytest.mark.parametrize("path", BOOKS, ids=lambda p: p.stem)
def test_every_stored_figure_has_alt_text(path: Path):
    nb = nbformat.read(path, as_version=4)
    missing = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if "image/png" in out.get("data", {}):
                alt = out.get("metadata", {}).get("image/png", {}).get("alt", "")
                if not alt.startswith("Figure"):
                    missing.append(cell.get("id"))
    assert missing == [], f"{path.name}: figures without alt text in cells {missing} (re-execute the notebook)"
