"""The package's layout, enforced (docs/architecture.md says why).

1. Only chapter modules (``nvcourse/chapters/``), ``widgets``, ``plots`` and drawing modules (``draw.py``,
   ``draw_*.py``) import ipywidgets or matplotlib: models stay importable and testable without a UI.
2. No module imports another module's private name (``from .x import _y``, or ``x._y`` on an imported module).
3. Every notebook ``notebooks/NN_*.ipynb`` that shows a dashboard imports its chapter module
   ``nvcourse.chapters.chNN_*``, and every chapter module has its notebook.
4. No package module is over 500 lines.
5. Each shared helper is written once: TOML is parsed only by ``_data.py``, HTML tables are built only by
   ``tables.py``, the colour of an algorithm is defined only in ``plots.py``.

Each rule is a function over a tree (a package folder and a notebooks folder), so the tests below run them
on the real tree and on a small synthetic bad tree, which shows that each rule can fail.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "nvcourse"
NOTEBOOKS = ROOT / "notebooks"

UI_LIBRARIES = ("ipywidgets", "matplotlib")
MAX_LINES = 500
#: Modules over the limit that another issue is splitting (remove the entry when it lands).
OVER_LIMIT_OWNED_ELSEWHERE = {
}
#: What marks a notebook as having a dashboard.
DASHBOARD_MARKERS = re.compile(r"\bDashboard\(|_dashboard\(|\bimport ipywidgets\b")


def _modules(package: Path) -> list[Path]:
    return sorted(p for p in package.rglob("*.py") if "__pycache__" not in p.parts)


def _rel(path: Path, package: Path) -> str:
    return path.relative_to(package).as_posix()


def may_import_ui(rel: str) -> bool:
    """Chapter modules, ``widgets``, ``plots``, ``alt_text`` and drawing modules may import ipywidgets/matplotlib."""
    name = rel.rsplit("/", 1)[-1]
    return (rel.startswith("chapters/") or rel in ("widgets.py", "plots.py", "alt_text.py")
            or name == "draw.py" or name.startswith("draw_"))


def _imported_roots(tree: ast.AST) -> set[str]:
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def ui_import_violations(package: Path) -> list[str]:
    """``path: library`` for every module outside the UI layer that imports a UI library (anywhere in it)."""
    out = []
    for path in _modules(package):
        rel = _rel(path, package)
        if may_import_ui(rel):
            continue
        for lib in sorted(_imported_roots(ast.parse(path.read_text(encoding="utf-8"))) & set(UI_LIBRARIES)):
            out.append(f"{rel}: imports {lib}")
    return out


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _resolve(path: Path, package: Path, node: ast.ImportFrom) -> Path | None:
    """The folder or file an ``ImportFrom`` inside the package points at (None: outside the package)."""
    if node.level == 0:
        if not node.module or node.module.split(".")[0] != package.name:
            return None
        base, parts = package.parent, node.module.split(".")
    else:
        base = path.parent
        for _ in range(node.level - 1):
            base = base.parent
        parts = node.module.split(".") if node.module else []
    return base.joinpath(*parts)


def _is_module(target: Path, name: str) -> bool:
    return (target / f"{name}.py").exists() or (target / name / "__init__.py").exists()


def private_import_violations(package: Path) -> list[str]:
    """Imports of another module's private names: ``from .x import _y`` (``_y`` not a submodule), ``x._y``."""
    out = []
    for path in _modules(package):
        rel = _rel(path, package)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module_aliases: set[str] = set()  # local names bound to nvcourse modules
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = _resolve(path, package, node)
                if target is None:
                    continue
                for a in node.names:
                    if target.is_dir() and _is_module(target, a.name):
                        module_aliases.add(a.asname or a.name)  # a (possibly private) submodule: fine
                    elif _is_private(a.name):
                        out.append(f"{rel}:{node.lineno}: from {'.' * node.level}{node.module or ''} import {a.name}")
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] == package.name and a.asname:
                        module_aliases.add(a.asname)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and _is_private(node.attr) and isinstance(node.value, ast.Name)
                    and node.value.id in module_aliases):
                out.append(f"{rel}:{node.lineno}: {node.value.id}.{node.attr}")
    return out


def _notebook_code(nb: Path) -> str:
    cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


def chapter_map_violations(package: Path, notebooks: Path) -> list[str]:
    """Notebooks with a dashboard that do not import their chapter module; chapter modules without a notebook."""
    out = []
    chapters = {p.stem for p in (package / "chapters").glob("ch*_*.py")}
    numbers = set()
    for nb in sorted(notebooks.glob("[0-9]*_*.ipynb")):
        number = nb.name.split("_", 1)[0]  # "04b"
        numbers.add(number)
        code = _notebook_code(nb)
        if not DASHBOARD_MARKERS.search(code):
            continue
        mine = {c for c in chapters if c.startswith(f"ch{number}_")}
        imported = re.search(rf"nvcourse\.chapters(\.| import )ch{number}_\w+", code)
        if not mine:
            out.append(f"{nb.name}: has a dashboard but nvcourse/chapters/ch{number}_*.py does not exist")
        elif not imported:
            out.append(f"{nb.name}: has a dashboard but does not import nvcourse.chapters.ch{number}_*")
    for c in sorted(chapters):
        if c[2:].split("_", 1)[0] not in numbers:
            out.append(f"chapters/{c}.py: no notebooks/{c[2:].split('_', 1)[0]}_*.ipynb")
    return out


def size_violations(package: Path, exempt: dict[str, str] | None = None) -> list[str]:
    exempt = exempt or {}
    out = []
    for path in _modules(package):
        rel = _rel(path, package)
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_LINES and rel not in exempt:
            out.append(f"{rel}: {n} lines (limit {MAX_LINES})")
    return out


#: (what, pattern, the one module allowed to hold it)
ONE_HOME = (
    ("TOML parsing", re.compile(r"\btomllib\b"), "_data.py"),
    ("a hand-built HTML table", re.compile(r"<table\b"), "tables.py"),
    ("an algorithm colour table", re.compile(r"^ALGO_COLOURS\s*[:=]", re.M), "plots.py"),
)
#: Copies that another issue removes (remove the entry when it lands).
ONE_HOME_OWNED_ELSEWHERE: dict[str, str] = {
    # Not a data file: it reads pyproject.toml, and must run with the standard library before any install.
    "devtools/wheelhouse.py": "reads pyproject.toml's requirements with tomllib",
    # Not a copy: it parses the tables the notebooks printed (tables.py's) to continue them over slides.
    "devtools/deck_split.py": "parses printed HTML tables to split them over slides; builds none",
}


def helper_copies(package: Path, exempt: dict[str, str] | None = None) -> list[str]:
    """Modules that re-implement a shared helper instead of calling it."""
    exempt = exempt or {}
    out = []
    for path in _modules(package):
        rel = _rel(path, package)
        text = path.read_text(encoding="utf-8")
        for what, pattern, home in ONE_HOME:
            if rel != home and rel not in exempt and pattern.search(text):
                out.append(f"{rel}: {what} (use {home})")
    return out


# ---------------------------------------------------------------- the real tree


def test_only_the_ui_layer_imports_ipywidgets_or_matplotlib():
    assert ui_import_violations(PACKAGE) == []


def test_no_module_imports_another_modules_private_names():
    assert private_import_violations(PACKAGE) == []


def test_every_notebook_with_a_dashboard_imports_its_chapter_module():
    assert chapter_map_violations(PACKAGE, NOTEBOOKS) == []


def test_no_package_module_over_500_lines():
    assert size_violations(PACKAGE, OVER_LIMIT_OWNED_ELSEWHERE) == []


def test_each_shared_helper_has_one_home():
    assert helper_copies(PACKAGE, ONE_HOME_OWNED_ELSEWHERE) == []


# ---------------------------------------------------------------- a bad tree: every rule can fail


@pytest.fixture
def bad_tree(tmp_path: Path) -> tuple[Path, Path]:
    pkg = tmp_path / "nvcourse"
    (pkg / "chapters").mkdir(parents=True)
    (pkg / "topology").mkdir()
    files = {
        "__init__.py": "",
        "linkmodel.py": "import ipywidgets as widgets\n\ndef _alpha():\n    return 1\n",
        "training.py": "def go():\n    from matplotlib.figure import Figure\n    return Figure\n",
        "reliability.py": "from .linkmodel import _alpha\nfrom . import linkmodel as lm\nx = lm._alpha()\n",
        "capstone.py": "from nvcourse.linkmodel import _alpha\nfrom . import _validate\n",
        "_validate.py": "def integer():\n    pass\n",
        "plots.py": "import matplotlib\n",
        "topology/__init__.py": "",
        "topology/draw.py": "import matplotlib\nfrom ..linkmodel import _alpha\n",
        "topology/metrics.py": "x = 1\n" * (MAX_LINES + 1),
        "chapters/__init__.py": "",
        "chapters/ch02_links.py": "import ipywidgets\n",
        "chapters/ch07_training.py": "import ipywidgets\n",
        "_data.py": "import tomllib\n",
        "catalog.py": "import tomllib\nALGO_COLOURS = {}\n",
        "tables.py": "T = '<table>'\n",
    }
    for name, text in files.items():
        (pkg / name).write_text(text)
    nbs = tmp_path / "notebooks"
    nbs.mkdir()

    def notebook(name: str, *sources: str) -> None:
        cells = [{"cell_type": "code", "source": s, "metadata": {}, "outputs": [], "execution_count": None}
                 for s in sources]
        (nbs / name).write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))

    notebook("02_links.ipynb", "from nvcourse.chapters import ch02_links as linkviz\n", "linkviz.dashboard()")
    notebook("03_topology.ipynb", "import ipywidgets as w\nfrom nvcourse.widgets import Dashboard\n",
             "Dashboard({}, f)")
    notebook("04_collectives.ipynb", "from nvcourse import linkmodel\n", "print(linkmodel)")  # no dashboard
    notebook("06b_nccl.ipynb", "from nvcourse.chapters import ch06_fabrics\n", "ch06_fabrics.x_dashboard()")
    return pkg, nbs


def test_ui_rule_names_each_model_that_imports_a_ui_library(bad_tree):
    pkg, _ = bad_tree
    assert ui_import_violations(pkg) == ["linkmodel.py: imports ipywidgets", "training.py: imports matplotlib"]


def test_private_rule_names_each_reach_in_but_not_private_modules(bad_tree):
    pkg, _ = bad_tree
    assert private_import_violations(pkg) == [
        "capstone.py:1: from nvcourse.linkmodel import _alpha",
        "reliability.py:1: from .linkmodel import _alpha",
        "reliability.py:3: lm._alpha",
        "topology/draw.py:2: from ..linkmodel import _alpha",
    ]


def test_chapter_rule_names_notebooks_without_their_module_and_modules_without_a_notebook(bad_tree):
    pkg, nbs = bad_tree
    assert chapter_map_violations(pkg, nbs) == [
        "03_topology.ipynb: has a dashboard but nvcourse/chapters/ch03_*.py does not exist",
        "06b_nccl.ipynb: has a dashboard but nvcourse/chapters/ch06b_*.py does not exist",
        "chapters/ch07_training.py: no notebooks/07_*.ipynb",
    ]
    (pkg / "chapters" / "ch06b_nccl.py").write_text("")
    assert "06b_nccl.ipynb: has a dashboard but does not import nvcourse.chapters.ch06b_*" in chapter_map_violations(
        pkg, nbs)


def test_size_rule_names_long_modules_unless_exempt(bad_tree):
    pkg, _ = bad_tree
    assert size_violations(pkg) == [f"topology/metrics.py: {MAX_LINES + 1} lines (limit {MAX_LINES})"]
    assert size_violations(pkg, {"topology/metrics.py": "being split"}) == []


def test_helper_rule_names_copies_outside_their_home(bad_tree):
    pkg, _ = bad_tree
    assert helper_copies(pkg) == ["catalog.py: TOML parsing (use _data.py)",
                                  "catalog.py: an algorithm colour table (use plots.py)"]


# ---------------------------------------------------------------- the chapter registry (nvcourse.chapters.CHAPTERS)

#: Top-level modules a chapter may use without listing them among its models: the catalog every chapter reads,
#: and the shared helpers and UI of docs/architecture.md's layers.
NOT_MODELS = {"catalog", "model_shapes", "widgets", "plots", "units", "tables", "markup", "chapters", "checks",
              "_data", "_validate", "errors", "i18n"}


def _nvcourse_roots(source: str, relative_base: tuple[str, ...]) -> set[str]:
    """Top-level ``nvcourse`` modules a source imports (``relative_base``: the importing module's package)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0:
                parts = (node.module or "").split(".")
                if parts[0] != "nvcourse":
                    continue
                parts = parts[1:]
            else:
                base = relative_base[: len(relative_base) - (node.level - 1)]
                parts = [*base, *(node.module.split(".") if node.module else [])]
            found |= {parts[0]} if parts else {a.name for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("nvcourse.")}
    return found


def registry_violations(root: Path, chapters) -> list[str]:
    """Notebooks without an entry, entries naming files that do not exist, solutions that belong to no chapter."""
    out = []
    listed = {c.notebook for c in chapters}
    for nb in sorted((root / "notebooks").glob("*.ipynb")):
        if f"notebooks/{nb.name}" not in listed:
            out.append(f"notebooks/{nb.name}: no entry in nvcourse.chapters.CHAPTERS")
    for c in chapters:
        files = [c.notebook, c.solution, c.exercise, *c.tests,
                 c.module and f"nvcourse/chapters/{c.module}.py", c.checker and f"nvcourse/checks/{c.checker}.py"]
        files += [m for m in c.models if not (root / "nvcourse" / f"{m}.py").exists()
                  and not (root / "nvcourse" / m / "__init__.py").exists()]
        out += [f"{c.number}: {f} does not exist" for f in files if f and not (root / f).exists()]
    solutions = {c.solution for c in chapters}
    for sol in sorted((root / "solutions").glob("*.ipynb")):
        if f"solutions/{sol.name}" not in solutions and not sol.name.startswith("quiz_"):
            out.append(f"solutions/{sol.name}: belongs to no chapter")
    return out


def models_violations(root: Path, chapters) -> list[str]:
    """Chapters whose listed models differ from what their module and notebook import."""
    out = []
    for c in chapters:
        used = set()
        if c.module:  # the chapter module and any of its own helper modules (chNN_*.py, e.g. ch07c_serving)
            for path in {root / "nvcourse/chapters" / f"{c.module}.py",
                         *(root / "nvcourse/chapters").glob(f"ch{c.number}_*.py")}:
                used |= _nvcourse_roots(path.read_text(encoding="utf-8"), ("chapters",))
        code = "\n".join(line for line in _notebook_code(root / c.notebook).splitlines()
                         if not line.lstrip().startswith(("%", "!")))
        used |= _nvcourse_roots(code, ())
        used -= NOT_MODELS
        if used != set(c.models):
            out.append(f"{c.number}: models {sorted(c.models)}, but the module and notebook import {sorted(used)}")
    return out


def test_every_notebook_has_a_registry_entry_and_every_entry_its_files():
    from nvcourse.chapters import CHAPTERS

    assert registry_violations(ROOT, CHAPTERS) == []


def test_each_chapters_models_are_what_its_module_and_notebook_import():
    from nvcourse.chapters import CHAPTERS

    assert models_violations(ROOT, CHAPTERS) == []


def test_registry_rules_can_fail(tmp_path: Path):
    from nvcourse.chapters import Chapter

    for folder in ("notebooks", "solutions", "nvcourse/chapters", "nvcourse/checks"):
        (tmp_path / folder).mkdir(parents=True)
    cells = [{"cell_type": "code", "source": "from nvcourse import linkmodel, units\n", "metadata": {}, "outputs": []}]
    for nb in ("notebooks/01_a.ipynb", "notebooks/02_b.ipynb", "solutions/03_c_exercises.ipynb"):
        (tmp_path / nb).write_text(json.dumps({"cells": cells}))
    (tmp_path / "nvcourse/chapters/ch01_a.py").write_text("from ..fabric import moe\nfrom .. import plots\n")
    entry = Chapter("01", "notebooks/01_a.ipynb", "A", "ch01_a", ("linkmodel",), "ch01", None, ("tests/test_a.py",))
    assert registry_violations(tmp_path, [entry]) == [
        "notebooks/02_b.ipynb: no entry in nvcourse.chapters.CHAPTERS",
        "01: tests/test_a.py does not exist",
        "01: nvcourse/checks/ch01.py does not exist",
        "01: linkmodel does not exist",
        "solutions/03_c_exercises.ipynb: belongs to no chapter",
    ]
    assert models_violations(tmp_path, [entry]) == [
        "01: models ['linkmodel'], but the module and notebook import ['fabric', 'linkmodel']"]


def test_architecture_page_chapter_table_is_generated_from_the_registry():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "nvcourse.devtools.architecture", "--check"], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr

    from nvcourse.devtools import architecture

    stale = (ROOT / "docs/architecture.md").read_text(encoding="utf-8").replace("| `ch02_links` |", "| `x` |")
    assert architecture.render(stale) != stale


# ---------------------------------------------------------------- one import spelling in notebooks

def import_spelling_violations(root: Path, chapters) -> list[str]:
    """A notebook imports its chapter module as ``from nvcourse.chapters import chNN_topic as ch`` and nothing else
    from ``nvcourse.chapters``; an exercise (solution) notebook imports its checker as
    ``from nvcourse.checks import chNN as check`` and no other way into ``nvcourse.checks``."""
    out = []
    for c in chapters:
        pairs = [(c.notebook, "chapters", c.module, "ch")] + [(nb, "checks", c.checker, "check")
                                                               for nb in (c.solution, c.exercise) if nb]
        for nb, package, module, alias in pairs:
            if not (root / nb).exists():
                continue
            code = _notebook_code(root / nb)
            pattern = rf"^\s*(from nvcourse\.{package}(\.\S+)? import .*|from nvcourse import .*\b{package}\b.*|" \
                      rf"import nvcourse\.{package}.*)$"
            imports = [m.group(0).strip() for m in re.finditer(pattern, code, re.M)]
            want = f"from nvcourse.{package} import {module} as {alias}"
            for line in imports:
                if line.split("#")[0].strip() != want:
                    out.append(f"{nb}: {line!r}; write {want!r}")
    return out


def test_notebooks_import_their_chapter_module_and_checker_one_way():
    from nvcourse.chapters import CHAPTERS

    assert import_spelling_violations(ROOT, CHAPTERS) == []


def test_import_spelling_rule_can_fail(tmp_path: Path):
    from nvcourse.chapters import Chapter

    def notebook(path: str, source: str) -> None:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        cell = {"cell_type": "code", "source": source, "metadata": {}, "outputs": []}
        (tmp_path / path).write_text(json.dumps({"cells": [cell]}))

    notebook("notebooks/05_a.ipynb", "from nvcourse.chapters.ch05_a import moe_view\nfrom nvcourse import catalog\n")
    notebook("solutions/05_a_exercises.ipynb", "from nvcourse import checks as check\n")
    notebook("notebooks/06_b.ipynb", "from nvcourse.chapters import ch06_b as ch\n")
    notebook("solutions/06_b_exercises.ipynb", "from nvcourse.checks import ch06 as check  # the checkers\n")
    chapters = [Chapter("05", "notebooks/05_a.ipynb", "A", "ch05_a", (), "ch05", "solutions/05_a_exercises.ipynb", ()),
                Chapter("06", "notebooks/06_b.ipynb", "B", "ch06_b", (), "ch06", "solutions/06_b_exercises.ipynb", ())]
    assert import_spelling_violations(tmp_path, chapters) == [
        "notebooks/05_a.ipynb: 'from nvcourse.chapters.ch05_a import moe_view'; "
        "write 'from nvcourse.chapters import ch05_a as ch'",
        "solutions/05_a_exercises.ipynb: 'from nvcourse import checks as check'; "
        "write 'from nvcourse.checks import ch05 as check'",
    ]
