"""Turn a "percent"-format Python script into a notebook (an authoring convenience).

    python -m nvcourse.devtools.pct2nb draft.py notebooks/05_nvl72.ipynb

Cells start with ``# %%`` (code) or ``# %% [markdown]`` (markdown, each line prefixed by ``# ``).
Tags go after the marker: ``# %% tags=["nbval-ignore-output"]``. The .ipynb is the source of truth
once written: edit it in JupyterLab afterwards, then run ``python3 tasks.py execute``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat

MARKER = re.compile(r"^# %%(?P<md> \[markdown\])?(?:\s+tags=(?P<tags>\[.*\]))?\s*$")


def convert(text: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata.update(
        kernelspec={"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        language_info={"name": "python"},
    )
    current: dict | None = None
    lines: list[str] = []

    def flush() -> None:
        if current is None:
            return
        body = "\n".join(lines).strip("\n")
        if current["md"]:
            body = "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#") for line in body.split("\n"))
            cell = nbformat.v4.new_markdown_cell(body)
        else:
            cell = nbformat.v4.new_code_cell(body)
        if current["tags"]:
            cell.metadata["tags"] = current["tags"]
        nb.cells.append(cell)

    for line in text.splitlines():
        m = MARKER.match(line)
        if m:
            flush()
            current = {"md": bool(m.group("md")), "tags": json.loads(m.group("tags")) if m.group("tags") else []}
            lines = []
        elif current is not None:
            lines.append(line)
    flush()
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"c{i:03d}"
    return nb


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    nb = convert(Path(argv[0]).read_text(encoding="utf-8"))
    nbformat.write(nb, argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
