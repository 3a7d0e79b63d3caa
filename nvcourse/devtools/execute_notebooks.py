"""Re-execute the course notebooks in place (the one command that refreshes committed outputs).

    python3 tasks.py execute                 # notebooks/ then solutions/, then regenerate exercises/
    python3 tasks.py execute notebooks/02_pcie_vs_nvlink.ipynb   # just these

Each notebook runs in a fresh kernel of the current environment with its own folder as working
directory. Widget state is not stored (GitHub does not render it and nbval ignores it), so diffs stay
small. A notebook that raises stops the command with a non-zero exit status.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import nbformat

from .kernel_run import notebook_client
from .make_exercises import main as make_exercises

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DIRS = ("notebooks", "solutions")


def course_notebooks(dirs: tuple[str, ...] = DEFAULT_DIRS) -> list[Path]:
    found: list[Path] = []
    for d in dirs:
        found += sorted(p for p in (ROOT / d).glob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    return found


def execute(path: Path, timeout: int = 600) -> float:
    nb = nbformat.read(path, as_version=4)
    os.environ.setdefault("PYTHONHASHSEED", "0")
    client = notebook_client(  # nbclient's, without its lost wake-up (see kernel_run)
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        store_widget_state=True,  # needed by nbclient to route Output widgets; stripped below
        record_timing=False,  # per-cell timestamps would change every cell on every run
    )
    start = time.perf_counter()
    client.execute()
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nbformat.write(nb, path)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", type=Path, help="notebooks to execute (default: all)")
    args = parser.parse_args(argv)
    paths = [p.resolve() for p in args.paths] or course_notebooks()
    for path in paths:
        print(f"executing {path.relative_to(ROOT)} ...", end=" ", flush=True)
        print(f"{execute(path):.1f} s", flush=True)
    if any(p.parent.name == "solutions" for p in paths) or not args.paths:
        make_exercises([])
    return 0


if __name__ == "__main__":
    sys.exit(main())
