#!/usr/bin/env python3
"""How quickly does every Dashboard of the course respond to a control change? (target <= 150 ms)

    .venv/bin/python benchmarks/widget_latency.py                 # notebooks/, writes WIDGET_LATENCY.md
    .venv/bin/python benchmarks/widget_latency.py notebooks/02_pcie_vs_nvlink.ipynb --no-write
    .venv/bin/python benchmarks/widget_latency.py --cpu 0         # pinned to one CPU, as on Binder

Notebooks build their Dashboards inline, so each notebook is executed in a fresh kernel (nbclient, the
notebook's folder as working directory, the inline matplotlib backend as in JupyterLab) and one extra
cell is run at the end. That cell takes every ``nvcourse.widgets.Dashboard`` alive in the kernel, in
creation order, picks its first control whose values can be enumerated (slider range, options,
checkbox), and sets it to up to 12 values spread over the range. Each assignment is timed: it fires the
Dashboard's observer, i.e. ``Dashboard.update()``: the model evaluation, the figure drawn and encoded to
PNG, and the messages to the front end. The browser's own repaint is not included (the browser test
checks that one works). The first change is a warm-up and is not counted. Values that end in the
Dashboard's error note are counted: a range that lets learners reach an invalid state is worth a look.

Target: the 90th percentile of each Dashboard's changes <= 150 ms of kernel CPU time (on Binder the
kernel has its core to itself, so CPU time is what the learner waits for; wall time on a busy shared
machine is shown too, not judged). Exit 1 when a Dashboard misses it.
Writes benchmarks/WIDGET_LATENCY.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
from pathlib import Path

from nvcourse.doctor import cpu_model

ROOT = Path(__file__).resolve().parents[1]
TARGET_MS = 150.0
N_VALUES = 12
MARK = "@@NVCOURSE_LATENCY@@"

# Runs inside the notebook's kernel after its own cells.
PROBE = r'''
def __nvcourse_latency_probe(n_values, mark):
    import gc, json, math, time
    import ipywidgets as _w
    import matplotlib.pyplot as plt
    from nvcourse.widgets import Dashboard

    from ipywidgets.widgets import widget as _wmod

    registry = getattr(_wmod, "_instances", {})  # creation order (Widget.widgets is deprecated)
    dashboards = [d for d in list(registry.values()) if isinstance(d, Dashboard)]
    seen = {id(d) for d in dashboards}
    dashboards += [o for o in gc.get_objects() if isinstance(o, Dashboard) and id(o) not in seen]

    def spread(seq, n):
        seq = list(seq)
        if len(seq) <= n:
            return seq
        return [seq[round(i * (len(seq) - 1) / (n - 1))] for i in range(n)]

    def candidates(w):
        if getattr(w, "disabled", False):
            return None
        if hasattr(w, "_options_values"):
            return spread(w._options_values, n_values)
        if isinstance(w, _w.FloatLogSlider):
            return [w.base ** (w.min + (w.max - w.min) * i / (n_values - 1)) for i in range(n_values)]
        if isinstance(w.value, bool):
            return [not w.value, w.value] * (n_values // 2)
        if isinstance(w.value, (int, float)) and hasattr(w, "min") and hasattr(w, "max"):
            vals = [w.min + (w.max - w.min) * i / (n_values - 1) for i in range(n_values)]
            if isinstance(w.value, int):
                step = getattr(w, "step", 1) or 1
                vals = sorted({int(w.min + round((v - w.min) / step) * step) for v in vals})
            return vals
        return None

    rows = []
    for k, d in enumerate(dashboards):
        row = {"index": k, "controls": list(d.controls)}
        for name, w in d.controls.items():
            vals = candidates(w)
            if vals and len(set(map(repr, vals))) > 1:
                break
        else:
            row["skipped"] = "no control with enumerable values"
            rows.append(row)
            continue
        start = w.value
        # every step changes the value (the observer fires only on a change); the first change is a warm-up
        order = [v for v in vals if v != start] + [start]
        if isinstance(start, bool):
            order = [not start, start] * (n_values // 2 + 1)
        wall, cpu, render, errors, first = [], [], [], 0, True
        for v in order:
            if v == w.value:
                continue
            t, c = time.perf_counter(), time.process_time()
            w.value = v  # fires Dashboard._on_change -> update()
            dt, dc = (time.perf_counter() - t) * 1e3, (time.process_time() - c) * 1e3
            if first:
                row["warmup_ms"], first = dt, False
                continue
            wall.append(dt)
            cpu.append(dc)
            errors += d.last_error is not None
            # the same values once more through render() alone: model + figure, without PNG and messages
            t = time.perf_counter()
            try:
                out = d._render(**d.values)
            except Exception:
                out = None
            render.append((time.perf_counter() - t) * 1e3)
            plt.close("all")
        row.update(control=name, kind=type(w).__name__, times_ms=wall, cpu_ms=cpu, render_ms=render, errors=errors,
                   error_example=None)
        if errors:  # show one value that ends in the note
            for v in order:
                w.value = v
                if d.last_error is not None:
                    row["error_example"] = f"{name}={v!r}: {d.last_error}"
                    break
            w.value = start
        rows.append(row)
    print(mark + json.dumps(rows) + mark)

__nvcourse_latency_probe(%d, %r)
'''


def course_notebooks(dirs=("notebooks",)) -> list[Path]:
    found: list[Path] = []
    for d in dirs:
        found += sorted(p for p in (ROOT / d).glob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    return found


def probe_notebook(path: Path, timeout: int = 600) -> list[dict]:
    import nbformat

    from nvcourse.devtools.kernel_run import notebook_client  # nbclient's, without its lost wake-up

    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(PROBE % (N_VALUES, MARK)))
    client = notebook_client(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        store_widget_state=True,  # nbclient 0.11 needs it to route Output widgets
    )
    client.execute()
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("output_type") == "stream")
    if MARK not in text:
        raise RuntimeError(f"the probe printed nothing: {text[-500:]}")
    return json.loads(text.split(MARK)[1])


def p90(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(0.9 * (len(xs) - 1))))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", type=Path, help="notebooks (default: notebooks/*.ipynb)")
    parser.add_argument("--solutions", action="store_true", help="also the notebooks in solutions/")
    parser.add_argument("--cpu", type=int, help="pin to this one CPU, as on Binder (default: not pinned)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "WIDGET_LATENCY.md")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)

    paths = [p.resolve() for p in args.paths] or course_notebooks(
        ("notebooks", "solutions") if args.solutions else ("notebooks",)
    )
    pinned = "not pinned"
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
        pinned = f"pinned to CPU {args.cpu}"
    os.environ.setdefault("PYTHONHASHSEED", "0")
    os.environ.pop("MPLBACKEND", None)  # the inline backend, as in JupyterLab
    load = os.getloadavg()[0]

    rows, failures, missed = [], [], 0
    for path in paths:
        rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        try:
            found = probe_notebook(path)
        except Exception as exc:
            import traceback

            failures.append(
                f"`{rel}`: {type(exc).__name__}: {str(exc).strip().splitlines()[-1] if str(exc).strip() else ''}"
            )
            print(f"{rel}: FAILED {failures[-1]}", flush=True)
            traceback.print_exc(file=sys.stderr)  # the table keeps one line; the whole story goes to stderr
            continue
        if not found:
            print(f"{rel}: no Dashboard", flush=True)
            rows.append((str(rel), None))
        for d in found:
            rows.append((str(rel), d))
            if "skipped" in d:
                print(f"{rel} #{d['index']}: skipped ({d['skipped']})", flush=True)
                continue
            t, c, r = d["times_ms"], d["cpu_ms"], d["render_ms"]
            ok = p90(c) <= TARGET_MS
            missed += not ok
            print(f"{rel} #{d['index']} {d['control']} ({d['kind']}): wall median {statistics.median(t):.0f} ms "
                  f"p90 {p90(t):.0f} ms, CPU p90 {p90(c):.0f} ms, render() median {statistics.median(r):.0f} ms, "
                  f"{len(t)} changes"
                  + (f", {d['errors']} error notes" if d["errors"] else "") + ("" if ok else "  MISSED"), flush=True)

    lines = [
        "# Widget latency",
        "",
        "Generated by `benchmarks/widget_latency.py`; do not edit by hand.",
        "",
        "For every `Dashboard` in the course notebooks: the kernel-side time of one control change, i.e. "
        "`Dashboard.update()` (model evaluation, figure drawn and encoded to PNG, messages to the front end). "
        f"The first enumerable control of each Dashboard is set to up to {N_VALUES} values across its range "
        f"(first change = warm-up, not counted). Target: 90th percentile ≤ {TARGET_MS:.0f} ms of the kernel's "
        "**CPU time** per change. On Binder the kernel has its one core to itself, so CPU time is what the "
        "learner waits for; on a shared machine the wall time also counts time spent waiting for a core, "
        "so it is shown but not judged. *render() median*: the Dashboard's `render` function alone "
        "(model + building the figure, not drawing it); the rest of a change is drawing the figure, encoding "
        "the PNG and sending it — drawing usually dominates. "
        "*Error notes* counts values in the control's range for which the Dashboard shows its yellow note "
        "instead of a result.",
        "",
        "| notebook | # | control moved | changes | wall median (ms) | wall p90 (ms) | **CPU p90 (ms)** | render() "
        "median (ms) | error notes | |",
        "|---|--:|---|--:|--:|--:|--:|--:|--:|---|",
    ]
    for rel, d in rows:
        if d is None:
            lines.append(f"| `{rel}` | – | no Dashboard | | | | | | | |")
        elif "skipped" in d:
            lines.append(f"| `{rel}` | {d['index']} | ({d['skipped']}: {', '.join(d['controls'])}) | | | | | | | |")
        else:
            t, c, r = d["times_ms"], d["cpu_ms"], d["render_ms"]
            ok = p90(c) <= TARGET_MS
            lines.append(
                f"| `{rel}` | {d['index']} | `{d['control']}` ({d['kind']}) | {len(t)} | {statistics.median(t):.0f} "
                f"| {p90(t):.0f} | **{p90(c):.0f}** | {statistics.median(r):.0f} | {d['errors']} | "
                f"{'✅' if ok else '❌'} |"
            )
    examples = [f"- `{rel}` #{d['index']}: {d['error_example']}" for rel, d in rows if d and d.get("error_example")]
    if examples:
        lines += ["", "Values that show the error note (one example per Dashboard):", "", *examples]
    if failures:
        lines += ["", "Notebooks that failed to execute:", "", *[f"- {f}" for f in failures]]
    measured = [d for _, d in rows if d and "times_ms" in d]
    lines += [
        "",
        f"{len(measured)} Dashboards measured, {missed} over target. Machine: {cpu_model()}, "
        f"{os.cpu_count()} CPUs ({pinned}), Python {platform.python_version()}, load average {load:.1f} at the start "
        f"(a busy machine inflates the times). Run on {datetime.date.today().isoformat()}."
        + (" Only some notebooks were run." if args.paths else ""),
        "",
    ]
    text = "\n".join(lines)
    print()
    print(text)
    if not args.no_write:
        args.out.write_text(text, encoding="utf-8")
    return 1 if missed or failures else 0


if __name__ == "__main__":
    sys.exit(main())
