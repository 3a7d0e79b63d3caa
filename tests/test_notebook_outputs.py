"""What a reader without a kernel sees: no committed output of a course notebook is a bare Python repr.

GitHub, nbviewer and a notebook just opened in JupyterLab (untrusted, before Run All) show an output's
best *safe* representation: HTML, an image, or, failing those, its ``text/plain`` repr. A repr such as
``Text(0.5, 1.0, '...')`` (a plot call's return value left as a cell's last expression),
``<matplotlib.legend.Legend at 0x...>`` or ``Dashboard(children=(HBox(...`` (a widget with no static
view beside it) is noise to a learner. :func:`bare_reprs` lists them; it is also the function to run on
freshly executed copies (``python tests/test_notebook_outputs.py /tmp/executed/*.ipynb``).
"""

from __future__ import annotations

import io
import re
import sys
import tokenize
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted([*ROOT.glob("notebooks/*.ipynb"), *ROOT.glob("solutions/*.ipynb")])

# Reprs of objects that are not results: matplotlib artists and containers, widgets, generic <... at 0x...>.
BARE_REPR = re.compile(
    r"^(?:Text\(|Line2D\(|\[<matplotlib\.|<matplotlib\.|<Figure size |<Axes: |<BarContainer |"
    r"<ErrorbarContainer |"
    r"[A-Za-z_.]+\(children=|<[A-Za-z_.]+ (?:object )?at 0x)"
)
VIEWABLE = ("text/html", "image/png", "image/svg+xml", "image/jpeg", "text/markdown", "text/latex")


def bare_reprs(nb: nbformat.NotebookNode) -> list[str]:
    """'cell N: repr' for each output whose only kernel-less view is a repr of a plotting or widget object."""
    found = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            if out.get("output_type") not in {"execute_result", "display_data"}:
                continue
            data = out.get("data", {})
            if any(k in data for k in VIEWABLE):
                continue
            text = data.get("text/plain", "")
            text = "".join(text) if isinstance(text, list) else text
            if BARE_REPR.match(text.strip()):
                found.append(f"cell {i}: {text.strip()[:100]}")
            elif "application/vnd.jupyter.widget-view+json" in data:
                found.append(f"cell {i}: a widget with no static view (HTML or image) for GitHub/nbviewer: {text[:60]}")
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_no_committed_output_is_a_bare_repr(path: Path):
    problems = bare_reprs(nbformat.read(path, as_version=4))
    assert not problems, f"{path.relative_to(ROOT)}:\n  " + "\n  ".join(problems) + (
        "\n(end the plotting line with ';', or give the object a static view; then re-execute the notebook)"
    )


def test_the_check_flags_what_a_reader_saw():
    nb = nbformat.v4.new_notebook()
    def out(data):
        return nbformat.v4.new_output("execute_result", data=data, execution_count=1)
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [
        out({"text/plain": "Text(0.5, 1.0, 'median |error| = 2.0%')"}),
        out({"text/plain": "<matplotlib.legend.Legend at 0x7fea877dec90>"}),
        out({"text/plain": "Dashboard(children=(HBox(children=(FloatLogSlider(",
             "application/vnd.jupyter.widget-view+json": {"model_id": "a"}}),
        out({"text/plain": "Dashboard: run it", "text/html": "<img src='data:image/png;base64,AA'/>",
             "application/vnd.jupyter.widget-view+json": {"model_id": "b"}}),
        out({"text/plain": "42.0"}),
        out({"text/plain": "<Figure size 640x480 with 1 Axes>", "image/png": "AA"}),
    ]
    nb.cells = [cell]
    assert [p.split(":")[1].strip()[:8] for p in bare_reprs(nb)] == ["Text(0.5", "<matplot", "Dashboar"]


if __name__ == "__main__":  # check executed copies: python tests/test_notebook_outputs.py /tmp/x/*.ipynb
    bad = {p: bare_reprs(nbformat.read(p, as_version=4)) for p in sys.argv[1:]}
    for p, problems in bad.items():
        print(p, "OK" if not problems else "\n  " + "\n  ".join(problems))
    sys.exit(1 if any(bad.values()) else 0)


def trailing_semicolons(nb: nbformat.NotebookNode) -> list[str]:
    """'cell N: line' for each code cell whose last statement ends in ';'.

    IPython drops the result of a last line ending in ';', but nbval's kernels do not, so such a cell shows
    an output under ``pytest --nbval`` that the committed notebook lacks, and the test fails. Write
    ``_ = plot(...)`` instead.
    """
    found = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        last = _last_code_token(cell.source)
        if last is not None and last.string == ";":
            found.append(f"cell {i}: {last.line.strip()}")
    return found


def _last_code_token(source: str) -> tokenize.TokenInfo | None:
    """The last token that is code (not a comment, newline or end marker); None if the cell has none."""
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT}
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type not in skip]
    except (tokenize.TokenError, IndentationError, SyntaxError):  # IPython magics and shell escapes
        return None
    return tokens[-1] if tokens else None


def test_trailing_semicolon_is_caught():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("fig = plot()\nax.set_title('x');")])
    assert trailing_semicolons(nb) == ["cell 0: ax.set_title('x');"]
    nb.cells[0].source = "_ = ax.set_title('x')  # ok;"
    assert trailing_semicolons(nb) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_cell_relies_on_a_trailing_semicolon(path):
    assert trailing_semicolons(nbformat.read(path, as_version=4)) == []
