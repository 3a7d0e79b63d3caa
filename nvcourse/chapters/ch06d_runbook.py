"""Chapter 06d — bring-up and fault runbook: the checks from the host up, the drill, the cloud fabrics table.

Everything here is read from ``nvcourse/data/runbook.toml`` (one record per check, each with its command, healthy
and broken output, NCCL/nccl-tests signature, cause, fix and the public case where it was seen). The arithmetic of
a down-trained PCIe link (:func:`pcie_GBps_dir`, :func:`link_fraction`) is the one number the chapter computes; it
and the drill's grading live in :mod:`nvcourse.runbook`, which the checkers use too.
"""

from __future__ import annotations

import html

from nvcourse._validate import choice
from nvcourse.nccl.signatures import match_text
from nvcourse.runbook import (
    LAYERS,
    drill_data,
    drill_verdict,
    link_fraction,
    pcie_GBps_dir,
    raw,
    read_lnk,
    signatures,
)
from nvcourse.tables import table_html

__all__ = ["LAYERS", "raw", "signatures", "checks_table_html", "cloud_table_html", "pcie_GBps_dir", "link_fraction",
           "read_lnk", "drill_story_html", "drill_step_html", "drill_signatures", "drill_verdict", "drill_box",
           "sources_html"]


def _link(url: str, text: str = "seen here") -> str:
    return f'<a href="{html.escape(url)}" target="_blank">{html.escape(text)}</a>'


def checks_table_html(layer: str) -> str:
    """One layer's checks: what to run, healthy vs broken, the signature in NCCL's or nccl-tests' words, the fix."""
    rows = []
    for s in signatures(layer):
        rows.append([f"<b>{html.escape(s['title'])}</b>", f"<code>{html.escape(s['command'])}</code>",
                     html.escape(s["healthy"]), html.escape(s["broken"]), html.escape(s["nccl_tests"]),
                     html.escape(s["cause"]), html.escape(s["fix"]), _link(s["source_url"])])
    return table_html(["check", "run", "healthy", "broken", "what nccl-tests / the job shows", "cause", "fix",
                       "source"], rows, caption=f"Runbook: {LAYERS[layer]}", align_numbers=False)


def cloud_table_html() -> str:
    """The cloud fabrics: transport, NCCL's path, what the log says, what differs from on-premises IB/RoCE."""
    rows = [[html.escape(c["name"]), html.escape(c["transport"]), html.escape(c["nccl_path"]),
             f"<code>{html.escape(c['log_says'])}</code>", html.escape(c["differs"])] for c in raw()["cloud"].values()]
    return table_html(["fabric", "transport", "NCCL reaches it through", "how the log shows it", "what differs"],
                      rows, caption="Cloud fabrics", align_numbers=False)


def drill_story_html() -> str:
    """The drill's symptom, as the on-call engineer hears it."""
    d = drill_data()
    return f"<p><b>The page:</b> {html.escape(d['story'])}</p>"


def drill_signatures(step: str) -> list[str]:
    """The runbook signatures the course's log reader (``nvcourse ncclog``) finds in one step's output."""
    steps = drill_data()["steps"]
    choice("step", step, list(steps))
    return [m["signature"] for m in match_text(steps[step]["output"])]


def drill_step_html(step: str) -> str:
    """What one step (a command on the broken cluster) prints: real output quoted from a public case, and what the
    course's reader (``nvcourse ncclog``) recognises in it."""
    steps = drill_data()["steps"]
    choice("step", step, list(steps))
    s = steps[step]
    titles = [raw()["signatures"][f]["title"] for f in drill_signatures(step)]
    reader = ("signature: " + "; ".join(html.escape(t) for t in titles)) if titles else "no failure signature"
    return (f"<p><code>$ {html.escape(s['command'])}</code></p>"
            f"<pre style='white-space:pre-wrap'>{html.escape(s['output'].expandtabs(8))}</pre>"
            f"<p><i>nvcourse ncclog on this output: {reader}</i></p>")


def drill_box():
    """A dropdown of the commands you can run on the broken cluster; each shows its real output."""
    import ipywidgets as W

    from nvcourse.widgets import Dashboard

    steps = list(drill_data()["steps"])
    pick = W.Dropdown(options=steps, value=steps[0], description="run")

    def render(step):
        return drill_story_html() + drill_step_html(step)

    return Dashboard({"step": pick}, render, columns=1)


def sources_html() -> str:
    """Every source the runbook cites, once, with its link."""
    rows = [[html.escape(k), _link(v["url"], v["title"])] for k, v in raw()["sources"].items()]
    return table_html(["key", "source"], rows, caption="Sources (nvcourse/data/runbook.toml)", align_numbers=False)
