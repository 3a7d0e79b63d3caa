"""Every course notebook, run in real JupyterLab in headless Chromium, as a learner would.

For each ``notebooks/*.ipynb`` (a copy without outputs, see conftest.py):

1. open it, wait for its kernel, and run all cells through the menu (Run → Run All Cells);
2. no cell may show an error: no ``error`` output in the notebook model and no stderr output with a
   Traceback in the page (cells tagged ``raises-exception`` are allowed to raise), no widget that failed
   to render;
3. for EVERY ``Dashboard`` (CSS class ``nvcourse-dashboard``): no readout, label or control overflows its
   box or the notebook (``scrollWidth <= clientWidth``, right edge inside the output area), every label
   is shown whole or has its full text in a tooltip; then move EVERY control once (a slider one keyboard
   step, a dropdown / multi-select another option, a checkbox flipped, a number field edited) and check
   that each move changed the readout or the picture, and that nothing overflows afterwards. Every
   chapter must have a Dashboard; only 00 (start here) may have none.

Screenshots of each Dashboard before and after its moves (``<stem>_d<k>_before/after.png``), and of the
page on failure, are written to ``artifacts/browser/``.

    .venv/bin/python -m pytest -q tests/browser          # about 10-20 s per notebook
    NVCOURSE_BROWSER_HEADED=1 ... -k 02                  # watch one notebook (needs a display)
"""

from __future__ import annotations

import re
import time
import warnings
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

RUN_ALL_TIMEOUT_MS = 240_000  # a chapter should run in < 30 s (docs/authoring.md); this is a hang guard
UPDATE_TIMEOUT_MS = 30_000
ALLOWED_TO_RAISE = {"raises-exception", "nbval-raises-exception"}

# The notebook model as nbformat JSON (JupyterLab is started with expose_app_in_browser).
NOTEBOOK_JSON = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  return w && w.context ? w.context.model.toJSON() : null;
}"""

# Run-all is over when the kernel is idle, nothing is queued ([*]) and every non-empty code cell has an
# execution count, or when a cell raised (JupyterLab then drops the rest of the queue).
RUN_ALL_DONE = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  if (!w || !w.context) return false;
  const panel = w.node;
  const idle = panel.querySelector(".jp-Notebook-ExecutionIndicator[data-status='idle']");
  if (!idle) return false;
  if ([...panel.querySelectorAll('.jp-InputPrompt')].some(p => p.textContent.includes('[*]'))) return false;
  const cells = w.context.model.toJSON().cells.filter(c => c.cell_type === 'code');
  const raised = cells.some(c => (c.outputs || []).some(o => o.output_type === 'error'));
  const src = c => Array.isArray(c.source) ? c.source.join('') : c.source;
  const done = cells.every(c => !src(c).trim() || c.execution_count !== null);
  return raised || done;
}"""

# What the learner sees of a Dashboard: its readout (HTML widget) and its plot area (Output widget).
DASHBOARD_STATE = """el => {
  const kids = [...el.children];
  const readout = kids.filter(k => k.classList.contains('widget-html')).map(k => k.innerHTML).join('|');
  const plot = kids.filter(k => k.classList.contains('widget-output')).map(k => {
    const imgs = [...k.querySelectorAll('img')].map(i => i.getAttribute('src') || '');
    return imgs.length ? imgs.join('|') : k.innerText;
  }).join('|');
  return {readout, plot};
}"""

STATE_CHANGED = """([el, old]) => {
  const kids = [...el.children];
  const readout = kids.filter(k => k.classList.contains('widget-html')).map(k => k.innerHTML).join('|');
  const imgs = kids.filter(k => k.classList.contains('widget-output'))
                   .flatMap(k => [...k.querySelectorAll('img')].map(i => i.getAttribute('src') || ''));
  return readout !== old.readout || (imgs.length > 0 && !old.plot.includes(imgs[0]));
}"""

# What overflows in a Dashboard: readouts, labels and controls wider than their box or than the output area;
# labels cut short ("checkpoin…") with no tooltip that holds the full text.
DASHBOARD_LAYOUT = """el => {
  const area = el.closest('.jp-OutputArea-output') || el.parentElement;
  const right = area.getBoundingClientRect().right;
  const found = [];
  const name = e => (e.innerText || e.textContent || '').trim().slice(0, 60);
  const readouts = [...el.children].filter(k => k.classList.contains('widget-html'));
  const boxes = [...readouts, ...readouts.flatMap(r => [...r.querySelectorAll('.widget-html-content, table, div')])];
  for (const e of boxes) {
    if (e.scrollWidth > e.clientWidth + 1)
      found.push(`readout scrolls: ${e.scrollWidth} > ${e.clientWidth} px: ${name(e)}`);
    if (e.getBoundingClientRect().right > right + 1)
      found.push(`readout past the notebook's edge by ${Math.round(e.getBoundingClientRect().right - right)} px: `
                 + name(e));
  }
  const controls = [...el.querySelectorAll(':scope > .widget-hbox > *')];
  for (const c of controls) {
    if (c.getBoundingClientRect().right > right + 1)
      found.push(`control past the notebook's edge by ${Math.round(c.getBoundingClientRect().right - right)} px: `
                 + name(c));
    const label = c.querySelector('.widget-label');
    if (!label || !label.textContent.trim()) continue;
    const full = label.textContent.trim();
    const cut = label.scrollWidth > label.clientWidth + 1;
    const tips = [label.title, c.title, ...[...c.querySelectorAll('[title]')].map(t => t.title)];
    if (cut && !tips.some(t => t && t.trim() === full))
      found.push(`label cut short, no tooltip holds it: '${full}' (${label.scrollWidth} > ${label.clientWidth} px)`);
  }
  return found;
}"""


def _src(cell: dict) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def _problems(nb_json: dict) -> list[str]:
    """Errors in the executed notebook model, as 'cell N: message' lines."""
    found = []
    for i, cell in enumerate(nb_json["cells"]):
        if cell["cell_type"] != "code" or set(cell.get("metadata", {}).get("tags", [])) & ALLOWED_TO_RAISE:
            continue
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                tb = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(out.get("traceback", [])))
                found.append(f"cell {i}: {out.get('ename')}: {out.get('evalue')}\n{tb[-1500:]}")
            elif (
                out.get("output_type") == "stream"
                and out.get("name") == "stderr"
                and "Traceback" in _text(out.get("text"))
            ):
                found.append(f"cell {i}: stderr shows a traceback:\n{_text(out.get('text'))[-1500:]}")
    return found


def _open_notebook(page, lab, name: str) -> None:
    page.goto(lab.url(f"/lab/tree/notebooks/{name}?reset"))
    page.locator(".jp-NotebookPanel").first.wait_for(state="visible", timeout=60_000)
    # Wait for the kernel to be idle, accepting a "Select Kernel" dialog should one appear anyway.
    page.wait_for_function(
        """() => document.querySelector('.jp-Dialog') ||
                 [...document.querySelectorAll('.jp-StatusBar-Widget')].some(e => e.textContent.includes('| Idle'))""",
        timeout=60_000,
        polling=100,
    )
    dialog = page.locator(".jp-Dialog")
    if dialog.count():
        select = dialog.get_by_role("button", name="Select", exact=True)
        if select.count():
            select.click()
        else:
            dialog.get_by_role("button").last.click()
        dialog.wait_for(state="detached")
    page.locator(".jp-NotebookPanel-toolbar .jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for(
        timeout=60_000
    )
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-StatusBar-Widget')].some(e => e.textContent.includes('| Idle'))",
        timeout=60_000,
        polling=100,
    )


def _run_all(page) -> None:
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    page.wait_for_function(RUN_ALL_DONE, timeout=RUN_ALL_TIMEOUT_MS, polling=200)


def _wait_idle(page) -> None:
    page.locator(".jp-NotebookPanel-toolbar .jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for(
        timeout=UPDATE_TIMEOUT_MS
    )


def _settled_state(page, dashboard) -> dict:
    """The Dashboard's state once it stops changing (the kernel has redrawn and the page has rendered)."""
    _wait_idle(page)
    state = dashboard.evaluate(DASHBOARD_STATE)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        page.wait_for_timeout(250)  # settle delay between two identical readings
        again = dashboard.evaluate(DASHBOARD_STATE)
        if again == state:
            return state
        state = again
    return state


def _move_slider(page, slider) -> str:
    """Move a slider one keyboard step (away from the end it sits at); return what was done."""
    slider.scroll_into_view_if_needed()
    handle = slider.locator(".noUi-handle").first
    readout = slider.locator(".widget-readout").first
    before = readout.inner_text()
    now = float(handle.get_attribute("aria-valuenow") or 0)
    top = float(handle.get_attribute("aria-valuemax") or 0)
    key = "ArrowLeft" if now >= top else "ArrowRight"
    handle.focus()
    handle.press(key)
    page.wait_for_function(
        "([el, old]) => el.innerText !== old", arg=[readout.element_handle(), before], timeout=10_000, polling=100
    )
    return f"slider {_label(slider)!r}: {before!r} -> {readout.inner_text()!r} ({key})"


def _move_dropdown(page, dropdown) -> str:
    """Pick the last option of a Dropdown (the first if it is on the last)."""
    select = dropdown.locator("select").first
    select.scroll_into_view_if_needed()
    options = select.locator("option").all_inner_texts()
    current = select.evaluate("el => el.selectedIndex")
    target = len(options) - 1 if current != len(options) - 1 else 0  # the far end: long names, big systems
    assert len(options) > 1, f"dropdown {_label(dropdown)!r} has a single option"
    select.select_option(index=target)
    return f"dropdown {_label(dropdown)!r}: {options[current]!r} -> {options[target]!r}"


def _move_control(page, control) -> str | None:
    """Move one control of any kind once; what was done, or None for free text (nothing to move to)."""
    classes = control.get_attribute("class") or ""
    if "widget-slider" in classes or control.locator(".noUi-handle").count():
        return _move_slider(page, control)
    if "widget-dropdown" in classes:
        return _move_dropdown(page, control)
    if "widget-checkbox" in classes:
        box = control.locator("input[type=checkbox]").first
        box.scroll_into_view_if_needed()
        was = box.is_checked()
        box.click()
        return f"checkbox {_label(control)!r}: {was} -> {not was}"
    if "widget-select-multiple" in classes:
        select = control.locator("select").first
        select.scroll_into_view_if_needed()
        options = select.locator("option").all_inner_texts()
        chosen = select.evaluate("el => [...el.selectedOptions].map(o => o.index)")
        keep = [i for i in range(len(options)) if i in chosen][:1] or [0]
        target = keep + [i for i in range(len(options)) if i not in chosen][:1]  # one more selected
        if set(target) == set(chosen):
            target = keep
        select.select_option(index=target)
        return f"multi-select {_label(control)!r}: {len(chosen)} -> {len(target)} selected"
    number = control.locator("input[type=number]")
    if number.count():
        field = number.first
        field.scroll_into_view_if_needed()
        old = float(field.input_value() or 0)
        step = float(field.get_attribute("step") or 1) or 1
        top = field.get_attribute("max")
        new = old - step if top is not None and old + step > float(top) else old + step
        field.fill(f"{new:g}")
        field.press("Enter")
        return f"number {_label(control)!r}: {old:g} -> {new:g}"
    return None


def _label(widget) -> str:
    label = widget.locator(".widget-label").first
    return label.inner_text().strip() if label.count() else "(no description)"


def test_notebook_runs_and_dashboard_responds(notebook: Path, lab, lab_page, artifacts_dir, record_property):
    page, stem = lab_page, notebook.stem
    timings: dict[str, float] = {}
    t0 = time.monotonic()
    try:
        _open_notebook(page, lab, notebook.name)
        timings["open_s"] = time.monotonic() - t0

        t = time.monotonic()
        _run_all(page)
        timings["run_all_s"] = time.monotonic() - t
        nb_json = page.evaluate(NOTEBOOK_JSON)
        problems = _problems(nb_json)
        assert not problems, f"{notebook.name} raised during Run All:\n" + "\n\n".join(problems)
        # the same seen in the page: stderr output areas showing a traceback
        dom_tracebacks = page.locator(
            '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]', has_text="Traceback"
        )
        assert dom_tracebacks.count() == 0, (
            f"{notebook.name}: a Traceback is shown:\n{dom_tracebacks.first.inner_text()[-1500:]}"
        )
        unrun = [
            i for i, c in enumerate(nb_json["cells"])
            if c["cell_type"] == "code" and _src(c).strip() and c.get("execution_count") is None
        ]
        assert not unrun, f"{notebook.name}: code cells {unrun} were not run by Run All"

        # Widgets: every widget output must render; Dashboards are recognised by their CSS class.
        outputs = [o for c in nb_json["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
        has_widgets = any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)
        expects_dashboard = any(_text(o.get("data", {}).get("text/plain")).startswith("Dashboard(") for o in outputs)
        dashboards = page.locator(".nvcourse-dashboard")
        if expects_dashboard or has_widgets:
            try:
                dashboards.first.wait_for(state="attached", timeout=UPDATE_TIMEOUT_MS if expects_dashboard else 5_000)
            except Exception:
                if expects_dashboard:
                    raise AssertionError(
                        f"{notebook.name}: a Dashboard was displayed but never rendered in the page"
                    ) from None
        broken = page.locator(".jp-OutputArea-output", has_text="Error displaying widget")
        assert broken.count() == 0, f"{notebook.name}: a widget failed to render: {broken.first.inner_text()}"

        n_dash = dashboards.count()
        record_property("dashboards", n_dash)
        if n_dash == 0:
            assert stem.startswith("00"), (
                f"{notebook.name} has no live Dashboard (nvcourse.widgets.Dashboard); every chapter after 00 needs one"
            )
            pytest.skip(
                f"{notebook.name}: Run All passed with no errors; no Dashboard in 00 (start here), so no slider to move"
            )

        # Every Dashboard: nothing overflows, every label is whole or in a tooltip, and EVERY control is moved
        # once (a slider one keyboard step, a list another option, a checkbox flipped, a number field edited),
        # each move changing the readout or the picture. Screenshots before and after, per Dashboard.
        layout_problems, moves = [], []
        for k in range(n_dash):
            dashboard = dashboards.nth(k)
            dashboard.scroll_into_view_if_needed()
            before = _settled_state(page, dashboard)
            assert before["readout"] or before["plot"], f"{notebook.name}: Dashboard {k} shows neither readout nor plot"
            dashboard.screenshot(path=str(artifacts_dir / f"{stem}_d{k}_before.png"))
            layout_problems += [f"Dashboard {k}: {p}" for p in dashboard.evaluate(DASHBOARD_LAYOUT)]
            controls = dashboard.locator(":scope > .widget-hbox > *")
            for c in range(controls.count()):
                t = time.monotonic()
                moved = _move_control(page, controls.nth(c))
                if moved is None:  # free text (a paste box): nothing to move
                    continue
                try:
                    page.wait_for_function(STATE_CHANGED, arg=[dashboard.element_handle(), before],
                                           timeout=UPDATE_TIMEOUT_MS, polling=100)
                except Exception:
                    if "nvcourse-note" in before["readout"]:  # an earlier move reached a rejected combination
                        moves.append(f"Dashboard {k}: {moved} (no change: the error note stays)")
                        continue
                    raise AssertionError(f"{notebook.name}: Dashboard {k}: {moved}, but its readout and plot "
                                         "did not change") from None
                after = _settled_state(page, dashboard)
                assert after["readout"] or after["plot"], f"{notebook.name}: Dashboard {k}: {moved} left it empty"
                if "nvcourse-note" in after["readout"] and "nvcourse-note" not in before["readout"]:
                    # a choice the model rejects (TP 8 x PP 1 does not fit): try the other options, so that the
                    # controls after this one are moved in a state that can change
                    select = controls.nth(c).locator("select")
                    n_options = select.locator("option").count() if select.count() else 0
                    for i in range(n_options):
                        select.first.select_option(index=i)
                        after = _settled_state(page, dashboard)
                        if "nvcourse-note" not in after["readout"]:
                            moved += f", then option {i + 1} (the first gave the error note)"
                            break
                if "nvcourse-note" in after["readout"] and "nvcourse-note" not in before["readout"]:
                    warnings.warn(f"{notebook.name}: {moved} shows the Dashboard's error note; ranges should "
                                  "exclude invalid states", stacklevel=2)
                layout_problems += [f"Dashboard {k} after {moved}: {p}" for p in dashboard.evaluate(DASHBOARD_LAYOUT)]
                moves.append(f"Dashboard {k}: {moved} ({time.monotonic() - t:.1f} s)")
                before = after
            dashboard.scroll_into_view_if_needed()
            dashboard.screenshot(path=str(artifacts_dir / f"{stem}_d{k}_after.png"))
        record_property("moved", "; ".join(moves))
        print(f"\n{notebook.name}: " + "\n  ".join(moves), end="")
        unique = list(dict.fromkeys(layout_problems))
        assert not unique, f"{notebook.name}: {len(unique)} layout problem(s):\n  " + "\n  ".join(unique[:20])
    except BaseException as exc:
        if not isinstance(exc, pytest.skip.Exception):
            page.screenshot(path=str(artifacts_dir / f"{stem}_failure.png"), full_page=True)
            if page.console_errors:
                exc.add_note("errors in the page: " + "; ".join(page.console_errors[:5]))
        raise
    finally:
        timings["total_s"] = time.monotonic() - t0
        for k, v in timings.items():
            record_property(k, round(v, 2))
        print(f"\n{notebook.name}: " + ", ".join(f"{k}={v:.1f}" for k, v in timings.items()))


# What a notebook shows BEFORE Run All (and on GitHub / nbviewer): executed outputs, no kernel, untrusted.
STATIC_VIEW = """() => [...document.querySelectorAll('.jp-OutputArea-output')].map(o => ({
  text: (o.innerText || '').slice(0, 80),
  static: !!o.querySelector('.nvcourse-dashboard-static'),
  img: !!o.querySelector('.nvcourse-dashboard-static img'),
}))"""


def test_dashboards_show_a_picture_before_run_all(lab, lab_page, artifacts_dir):
    """Executed outputs opened without running (an untrusted notebook: the widget view cannot render) show
    each Dashboard's static view, its first picture and readout, never ``Dashboard(children=...)``."""
    import nbformat

    from nvcourse.devtools.kernel_run import notebook_client  # nbclient's, without its lost wake-up

    source = Path(__file__).resolve().parents[2] / "notebooks" / "08_reliability_and_operations.ipynb"
    nb = nbformat.read(source, as_version=4)
    notebook_client(nb, timeout=300, kernel_name="python3",
                    resources={"metadata": {"path": str(source.parent)}}).execute()
    nb.metadata.pop("widgets", None)  # as committed: no saved widget state
    nbformat.write(nb, lab.root / "notebooks" / "_static_view.ipynb")
    page = lab_page
    page.goto(lab.url("/lab/tree/notebooks/_static_view.ipynb?reset"))
    page.locator(".jp-NotebookPanel").first.wait_for(state="visible", timeout=60_000)
    page.wait_for_function("() => document.querySelectorAll('.jp-OutputArea-output').length > 3", timeout=60_000)
    page.wait_for_timeout(1500)
    outputs = page.evaluate(STATIC_VIEW)
    static = [o for o in outputs if o["static"]]
    page.screenshot(path=str(artifacts_dir / "static_view_before_run_all.png"))
    assert not [o for o in outputs if o["text"].startswith(("Dashboard(children", "Text(", "<matplotlib"))]
    assert static and all(o["img"] for o in static), f"Dashboards without their picture: {static}"
