"""Chapter 06d — bring-up and fault runbook: the checks from the host up, the drill, the cloud fabrics table.

Everything here is read from ``nvcourse/data/runbook.toml`` (one record per check, each with its command, healthy
and broken output, NCCL/nccl-tests signature, cause, fix and the public case where it was seen). The arithmetic of
a down-trained PCIe link (:func:`pcie_GBps_dir`, :func:`link_fraction`) is the one number the chapter computes.
"""

from __future__ import annotations

import html
import re

from nvcourse import _data
from nvcourse._validate import choice, integer, number
from nvcourse.tables import table_html

__all__ = ["LAYERS", "raw", "signatures", "checks_table_html", "cloud_table_html", "pcie_GBps_dir", "link_fraction",
           "read_lnk", "drill_story_html", "drill_step_html", "drill_verdict", "drill_box", "sources_html"]

#: The runbook's layers in the order a bring-up walks them, with the words the chapter uses for each.
LAYERS: dict[str, str] = {
    "host": "host (clocks, power, NUMA)",
    "pcie": "PCIe (ACS, link training)",
    "gpu_nic": "GPU to NIC (GPUDirect RDMA)",
    "fabric": "fabric (RoCE, InfiniBand)",
    "nccl": "NCCL (environment, slow ranks)",
    "cloud": "cloud fabrics",
}


def raw() -> dict:
    """The runbook data file, parsed (cached by ``_data.load``: read-only)."""
    return _data.load("runbook")


def signatures(layer: str | None = None) -> list[dict]:
    """The signature records in file order, optionally those of one ``layer`` (a key of :data:`LAYERS`)."""
    sigs = list(raw()["signatures"].values())
    if layer is None:
        return sigs
    choice("layer", layer, list(LAYERS))
    return [s for s in sigs if s["layer"] == layer]


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


def _encoding(speed_GTps: float) -> float:
    # 8b/10b at 2.5 and 5 GT/s (PCIe 1.x/2.x), 128b/130b from 8 GT/s (3.0-5.0): runbook.toml [sources.pcie-encoding]
    return 8 / 10 if speed_GTps <= 5.0 else 128 / 130


def pcie_GBps_dir(speed_GTps: float, width: int) -> float:
    """Line rate of a PCIe link in GB/s per direction: ``width × speed × encoding / 8``.

    Hand check: 16 GT/s × 16 lanes × 128/130 / 8 = 31.5 GB/s (PCIe 4.0 x16); 2.5 GT/s × 16 × 8/10 / 8 = 4.0 GB/s.
    Gen6 (64 GT/s, FLIT mode) is outside this formula and refused.
    """
    speed = number("speed_GTps", speed_GTps, positive=True)
    if not 2.5 <= speed <= 32.0:
        raise ValueError(f"speed_GTps must be between 2.5 and 32 (PCIe 1.0-5.0); got {speed_GTps!r}")
    width = integer("width", width, minimum=1, maximum=32)
    return width * speed * _encoding(speed) / 8


def link_fraction(cap_GTps: float, cap_width: int, sta_GTps: float, sta_width: int) -> float:
    """Share of its capable per-direction bandwidth a link keeps after training at ``sta`` instead of ``cap``."""
    return pcie_GBps_dir(sta_GTps, sta_width) / pcie_GBps_dir(cap_GTps, cap_width)


_LNK = re.compile(r"Lnk(Cap|Sta):.*?Speed ([0-9.]+)GT/s.*?Width x(\d+)")


def read_lnk(text: str) -> dict[str, tuple[float, int]]:
    """``{'cap': (GT/s, lanes), 'sta': (GT/s, lanes)}`` from ``lspci -vv`` LnkCap/LnkSta lines (those present)."""
    out: dict[str, tuple[float, int]] = {}
    for m in _LNK.finditer(text):
        out.setdefault(m.group(1).lower(), (float(m.group(2)), int(m.group(3))))
    return out


def _drill() -> dict:
    return raw()["drill"]


def drill_story_html() -> str:
    """The drill's symptom, as the on-call engineer hears it."""
    d = _drill()
    return f"<p><b>The page:</b> {html.escape(d['story'])}</p>"


def drill_step_html(step: str) -> str:
    """What one step (a command on the broken cluster) prints: real output quoted from a public case."""
    steps = _drill()["steps"]
    choice("step", step, list(steps))
    s = steps[step]
    return (f"<p><code>$ {html.escape(s['command'])}</code></p>"
            f"<pre style='white-space:pre-wrap'>{html.escape(s['output'].expandtabs(8))}</pre>")


def drill_verdict(cause: str, steps: list[str]) -> tuple[bool, str]:
    """Is ``cause`` the drill's answer, and how did ``steps`` (the commands run, in order) compare with the fewest?"""
    d = _drill()
    right = cause == d["answer"]
    best = d["best_steps"]
    if not right:
        return False, f"not {cause}: look again at what the first step that names a layer says"
    extra = [s for s in steps if s not in best]
    words = (f"found in {len(steps)} step(s); the fewest is {len(best)} ({', '.join(best)})"
             + (f"; not needed: {', '.join(extra)}" if extra else ""))
    return True, words


def drill_box():
    """A dropdown of the commands you can run on the broken cluster; each shows its real output."""
    import ipywidgets as W

    from nvcourse.widgets import Dashboard

    steps = list(_drill()["steps"])
    pick = W.Dropdown(options=steps, value=steps[0], description="run")

    def render(step):
        return drill_story_html() + drill_step_html(step)

    return Dashboard({"step": pick}, render, columns=1)


def sources_html() -> str:
    """Every source the runbook cites, once, with its link."""
    rows = [[html.escape(k), _link(v["url"], v["title"])] for k, v in raw()["sources"].items()]
    return table_html(["key", "source"], rows, caption="Sources (nvcourse/data/runbook.toml)", align_numbers=False)
