"""The code rules of docs/architecture.md, enforced on the package (``nvcourse/``).

1. Checkers and models never import a chapter module or a CLI module: a chapter is the top of the house, a CLI a
   door to it; nothing below may depend on them.
2. No import circles: the graph of imports between nvcourse modules (at any level of a module, a function-level
   import included) has no cycle.
3. A function-level import is for an optional heavy package (matplotlib, ipywidgets, torch, ...) or a module of
   the UI layer that imports one; everything else is imported at the top, where a reader looks for it.
4. No function over 100 lines.
5. A choice among named values is checked by ``nvcourse._validate.choice``: no hand-written "must be one of".

Each rule is a function over a package folder, run on the real package and on a small bad one (each rule can fail).
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "nvcourse"

MAX_FUNCTION_LINES = 100
#: Optional packages a function may import where it needs them: not every learner or machine has them, and the
#: models must import without them.
OPTIONAL_HEAVY = {"matplotlib", "ipywidgets", "IPython", "PIL", "torch", "mpi4py", "psutil", "nbformat", "nbconvert",
                  "nbclient", "playwright", "pypdfium2", "requests", "websocket", "jupyterlab", "jupyter_server"}

#: Known exceptions, each with the reason it is there. Remove an entry when its module is fixed: a test fails
#: when an entry is no longer needed.
CIRCLES_KNOWN: dict[frozenset[str], str] = {
}
_LATE = "imports inside functions, written before this rule; moving them to the top is that module's next change"
FUNCTION_IMPORTS_KNOWN: dict[str, str] = {
    "nvcourse/cli.py": "the sub-commands' modules load once main() has installed the SIGTERM and Ctrl-C handlers, "
                       "so a signal during start-up still ends with one line and status 143 or 130",
    "nvcourse/costmodel/cli.py": "the NCCL tuning-table reader loads only for --tuning",
    "nvcourse/chapters/ch04_collectives.py": _LATE,
    "nvcourse/chapters/ch04b_predicting.py": _LATE,
    "nvcourse/chapters/ch06b_nccl_in_practice.py": _LATE,
    "nvcourse/costmodel/sweeps.py": _LATE,
    "nvcourse/nccl/diagnose.py": _LATE,
    "nvcourse/nccl/ncclog.py": _LATE,
    "nvcourse/nccl/signatures.py": _LATE,
}
LONG_FUNCTIONS_KNOWN: dict[str, str] = {}
_OWN_WORDS = ("hand-written choice messages, written before _validate.choice had note=; converting them changes "
              "wording that tests pin")
CHOICES_KNOWN: dict[str, str] = {
    path: _OWN_WORDS for path in (
        "nvcourse/costmodel/config.py", "nvcourse/costmodel/launch.py",
        "nvcourse/costmodel/model.py", "nvcourse/costmodel/prediction.py", "nvcourse/costmodel/sweeps.py",
        "nvcourse/costmodel/tuning.py", "nvcourse/nccl/cli.py", "nvcourse/nccl/format.py",
    )
}


def _modules(package: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(module: str, path: Path, modules: dict[str, Path]) -> list[tuple[ast.AST, str, bool]]:
    """(node, imported nvcourse module or external top-level package, inside a function) for every import."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    inside: set[int] = set()
    for f in ast.walk(tree):
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inside |= {id(n) for n in ast.walk(f) if n is not f}
    out = []
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                base = ".".join([*base, node.module] if node.module else base)
            else:
                base = node.module or ""
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        for t in targets:
            if t.split(".")[0] == PACKAGE.name:
                while t not in modules and "." in t:
                    t = t.rsplit(".", 1)[0]
            else:
                t = t.split(".")[0]
            out.append((node, t, id(node) in inside))
    return out


def _is_cli(module: str) -> bool:
    name = module.rsplit(".", 1)[-1]
    return name in ("cli", "__main__", "catalog_cli", "doctor")


def _is_chapter(module: str) -> bool:
    return ".chapters.ch" in module


def _is_ui(module: str) -> bool:
    name = module.rsplit(".", 1)[-1]
    return _is_chapter(module) or name in ("plots", "widgets", "draw") or name.startswith("draw_")


def layering_violations(package: Path) -> list[str]:
    """Checkers and models (everything but chapters, CLIs and devtools) that import a chapter module or a CLI."""
    modules = _modules(package)
    out = []
    for module, path in modules.items():
        if _is_chapter(module) or _is_cli(module) or ".devtools" in module:
            continue
        for node, target, _ in _imports(module, path, modules):
            if _is_chapter(target) or (target in modules and _is_cli(target)):
                out.append(f"{module}:{node.lineno} imports {target}")
    return out


def import_graph(package: Path) -> dict[str, set[str]]:
    modules = _modules(package)
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in modules.items():
        for _, target, _ in _imports(module, path, modules):
            # a module importing its own package's __init__ (from . import x) is not a circle of two modules
            if target in modules and target != module and not module.startswith(target + "."):
                graph[module].add(target)
    return graph


def import_circles(package: Path, known=None) -> list[str]:
    """Each group of modules that import each other (a strongly connected component of the import graph)."""
    graph, known = import_graph(package), known or {}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [" <-> ".join(c) for c in sorted(circles) if frozenset(c) not in known]


def function_import_violations(package: Path, known=None) -> list[str]:
    """Function-level imports of anything but an optional heavy package or a UI-layer module."""
    modules, known = _modules(package), known or {}
    out = []
    for module, path in modules.items():
        rel = path.relative_to(package.parent).as_posix()
        if rel in known:
            continue
        for node, target, in_function in _imports(module, path, modules):
            if in_function and target not in OPTIONAL_HEAVY and not _is_ui(target):
                out.append(f"{rel}:{node.lineno} imports {target} inside a function")
    return out


def long_functions(package: Path, known=None, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    known = known or {}
    out = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package.parent).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > limit and f"{rel}::{node.name}" not in known:
                    out.append(f"{rel}::{node.name}: {n} lines (limit {limit})")
    return out


# a message wrapped for translation (raise ValueError(_("... must be one of ..."))) is still written by hand
HAND_CHOICE = re.compile(r"""raise ValueError\(\s*(?:_\(\s*)?f?["'][^"'\n]*must be one of""")


def hand_written_choices(package: Path, known=None) -> list[str]:
    known = known or {}
    out = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package.parent).as_posix()
        if rel == f"{package.name}/_validate.py" or rel in known:
            continue
        text = path.read_text(encoding="utf-8")
        for m in HAND_CHOICE.finditer(text):
            out.append(f"{rel}:{text.count(chr(10), 0, m.start()) + 1}: use _validate.choice")
    return out


# ---------------------------------------------------------------- the real package


def test_checkers_and_models_never_import_a_chapter_module_or_a_cli():
    assert layering_violations(PACKAGE) == []


def test_no_import_circles():
    assert import_circles(PACKAGE, CIRCLES_KNOWN) == []


def test_function_level_imports_only_for_optional_heavy_packages():
    assert function_import_violations(PACKAGE, FUNCTION_IMPORTS_KNOWN) == []


def test_no_function_over_100_lines():
    assert long_functions(PACKAGE, LONG_FUNCTIONS_KNOWN) == []


def test_choices_are_checked_by_the_one_helper():
    assert hand_written_choices(PACKAGE, CHOICES_KNOWN) == []


def test_known_exceptions_are_still_needed():
    """An entry left after its module is fixed would hide the next slip."""
    assert set(CIRCLES_KNOWN) <= {frozenset(c.split(" <-> ")) for c in import_circles(PACKAGE)}
    assert set(FUNCTION_IMPORTS_KNOWN) <= {v.split(":")[0] for v in function_import_violations(PACKAGE)}
    assert set(LONG_FUNCTIONS_KNOWN) <= {v.split(":")[0] + "::" + v.split("::")[1].split(":")[0]
                                         for v in long_functions(PACKAGE)}
    assert set(CHOICES_KNOWN) <= {v.split(":")[0] for v in hand_written_choices(PACKAGE)}


# ---------------------------------------------------------------- a bad package: every rule can fail


@pytest.fixture
def bad_package(tmp_path: Path) -> Path:
    pkg = tmp_path / "nvcourse"
    files = {
        "__init__.py": "",
        "cli.py": "from . import linkmodel\n",
        "linkmodel.py": "from .chapters import ch02_links\n\ndef go():\n    from . import training\n"
                        "    import matplotlib\n    return training, matplotlib\n",
        "training.py": "from . import linkmodel\nfrom .cli import main\n",
        "checks/__init__.py": "",
        "checks/ch02.py": "from ..chapters.ch02_links import x\n",
        "chapters/__init__.py": "",
        "chapters/ch02_links.py": "from .. import cli\n",
        "reliability.py": "def long():\n" + "    x = 1\n" * MAX_FUNCTION_LINES
                          + "\ndef pick(v):\n    raise ValueError(f'v must be one of a, b; got {v!r}')\n",
    }
    for name, text in files.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(text)
    return pkg


def test_layering_rule_names_models_and_checkers_that_reach_up(bad_package):
    assert layering_violations(bad_package) == [
        "nvcourse.checks.ch02:1 imports nvcourse.chapters.ch02_links",
        "nvcourse.linkmodel:1 imports nvcourse.chapters.ch02_links",
        "nvcourse.training:2 imports nvcourse.cli",
    ]


def test_circle_rule_finds_a_circle_through_a_function_level_import(bad_package):
    circles = import_circles(bad_package)  # linkmodel -> training is inside a function
    assert circles == ["nvcourse.chapters.ch02_links <-> nvcourse.cli <-> nvcourse.linkmodel <-> nvcourse.training"]
    assert import_circles(bad_package, {frozenset(c.split(" <-> ")) for c in circles}) == []


def test_function_import_rule_allows_matplotlib_only(bad_package):
    assert function_import_violations(bad_package) == [
        "nvcourse/linkmodel.py:4 imports nvcourse.training inside a function"]


def test_long_function_and_choice_rules(bad_package):
    assert long_functions(bad_package) == [f"nvcourse/reliability.py::long: {MAX_FUNCTION_LINES + 1} lines (limit 100)"]
    assert hand_written_choices(bad_package) == ["nvcourse/reliability.py:104: use _validate.choice"]
