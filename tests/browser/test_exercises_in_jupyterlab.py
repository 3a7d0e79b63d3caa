"""Every exercise notebook, run unanswered in real JupyterLab in headless Chromium, as a learner first sees it.

For each ``exercises/*.ipynb`` (generated without outputs from ``solutions/``): open it in the served copy of
the repository, Run All, then check what the page shows:

* no cell raised, no traceback on the page;
* every check box (``.nvcourse-check``) says "not done yet": an unanswered stub is never green ("Correct"),
  never red, never "cannot check"; and its text shows no raw Markdown backticks;
* no output is a bare repr (``Text(``, ``<matplotlib``, ``Dashboard(children=`` ...);
* no output and no code line is wider than its cell (a line cut off at the right edge of a code cell).

Answering the exercises (wrong and right) is covered by the checker tests in ``tests/test_checks*.py``; this
test is the cheap browser pass over the notebooks themselves (about 5-10 s each). Screenshots of failures go
to ``artifacts/browser/exercise_<stem>_failure.png``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_widgets_in_jupyterlab import NOTEBOOK_JSON, _problems, _run_all

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = sorted(p for p in (ROOT / "exercises").glob("*.ipynb"))

# What an unanswered exercise notebook shows, read from the page after Run All.
PAGE_FINDINGS = """() => {
  const nb = window.jupyterapp.shell.currentWidget.content.node;
  const text = e => (e.innerText || '').trim().slice(0, 100);
  const found = [];
  for (const box of nb.querySelectorAll('.nvcourse-check')) {
    const status = [...box.classList].find(c => c.startsWith('nvcourse-check-') && c !== 'nvcourse-check');
    if (status !== 'nvcourse-check-todo') found.push(`check box ${status}, not 'not done yet': ${text(box)}`);
    if (box.innerText.includes('`')) found.push(`raw backticks in a check box: ${text(box)}`);
  }
  for (const o of nb.querySelectorAll('.jp-OutputArea-output')) {
    if (/^(Text\\(|<matplotlib|Dashboard\\(children|<Figure size|<IPython)/.test((o.innerText || '').trim()))
      found.push(`bare repr: ${text(o)}`);
    if (o.scrollWidth > o.clientWidth + 1) found.push(`output wider than the cell: ${text(o)}`);
  }
  for (const s of nb.querySelectorAll('.jp-CodeCell .cm-scroller')) {
    if (s.scrollWidth > s.clientWidth + 1) {
      const lines = [...s.querySelectorAll('.cm-line')].map(l => l.textContent);
      const widest = lines.reduce((a, b) => (b.length > a.length ? b : a), '');
      found.push(`code line cut off at the cell's edge (${s.scrollWidth} > ${s.clientWidth} px): `
                 + widest.slice(0, 100));
    }
  }
  return {found, boxes: nb.querySelectorAll('.nvcourse-check').length};
}"""


@pytest.fixture(scope="module")
def lab_tab(browser_context, lab):
    """One JupyterLab page for all the exercise notebooks: each is opened in it (not a fresh page load), its
    kernel shut down after it, which keeps this pass cheap."""
    page = browser_context.new_page()
    try:
        page.goto(lab.url("/lab?reset"))
        page.locator(".jp-LabShell").first.wait_for(state="visible", timeout=60_000)
        yield page
    finally:
        page.close()
        lab.shutdown_sessions()


OPEN = "(path) => window.jupyterapp.commands.execute('docmanager:open', {path, factory: 'Notebook'}).then(() => true)"
# close without the "save your work?" dialog: nothing is saved (the served copies stay as committed)
CLOSE = """() => {
  for (const w of [...window.jupyterapp.shell.widgets('main')]) {
    if (w.context) w.context.model.dirty = false;
    w.dispose();
  }
  return true;
}"""
KERNEL_IDLE = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  return !!(w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel
            && w.sessionContext.session.kernel.status === 'idle' && w.content && w.content.widgets.length);
}"""


@pytest.mark.parametrize("exercise", EXERCISES, ids=[p.stem for p in EXERCISES])
def test_unanswered_exercise_notebook_reads_right(exercise: Path, lab, lab_tab, artifacts_dir):
    page = lab_tab
    rel = f"exercises/{exercise.name}"
    assert (lab.root / rel).exists(), f"the served copy has no {rel}"
    try:
        page.evaluate(OPEN, rel)
        page.wait_for_function(KERNEL_IDLE, timeout=60_000, polling=100)
        _run_all(page)
        problems = _problems(page.evaluate(NOTEBOOK_JSON))
        assert not problems, f"{exercise.name} raised during Run All:\n" + "\n\n".join(problems)
        page.wait_for_timeout(300)  # the last outputs render
        seen = page.evaluate(PAGE_FINDINGS)
        assert seen["boxes"] > 0, f"{exercise.name}: no check box rendered"
        assert not seen["found"], f"{exercise.name}:\n  " + "\n  ".join(seen["found"][:20])
    except BaseException:
        page.screenshot(path=str(artifacts_dir / f"exercise_{exercise.stem}_failure.png"))
        raise
    finally:
        page.evaluate(CLOSE)
        lab.shutdown_sessions()
