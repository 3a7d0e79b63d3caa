"""The cost model's modules import each other without a circle (every import counts: top level, inside a
function, under TYPE_CHECKING), and the public names notebooks import stay importable."""

from __future__ import annotations

import ast
from pathlib import Path

import nvcourse.costmodel as costmodel

PKG = Path(costmodel.__file__).parent


def _imports(path: Path) -> set[str]:
    """Sibling modules of nvcourse.costmodel that ``path`` imports, however it imports them."""
    out: set[str] = set()
    mods = {p.stem for p in PKG.glob("*.py")}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                out.add(node.module.split(".")[0])
            else:
                out.update(a.name for a in node.names if a.name in mods)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("nvcourse.costmodel."):
            out.add(node.module.split(".")[2])
    return out & mods - {path.stem, "__init__"}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state and (found := visit(m)):
                return found
        state[n] = 2
        stack.pop()
        return None

    for n in sorted(graph):
        if n not in state and (found := visit(n)):
            return found
    return None


def test_no_import_circle_in_costmodel():
    graph = {p.stem: _imports(p) for p in PKG.glob("*.py") if p.stem != "__init__"}
    assert graph["protocols"] >= {"model", "config"}  # the scan sees real imports (it cannot pass on nothing)
    assert _cycle(graph) is None, f"import circle: {' -> '.join(_cycle(graph) or [])}"


def test_cycle_finder_finds_a_circle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_public_api_still_imports():
    from nvcourse.costmodel import Config, Cost, configure, cost, predict
    from nvcourse.costmodel.model import Config as C2
    from nvcourse.costmodel.model import configure as conf2

    assert C2 is Config and conf2 is configure
    c = configure("dgx-h100", 8)
    assert isinstance(c, Config) and isinstance(cost("allreduce", "ring", c), Cost)
    assert predict("allreduce", "dgx-h100", 8, 8).algo == "ring"
