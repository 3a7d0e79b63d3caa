"""Chapter 09 (capstone: design a cluster): the comparison table and the design dashboard.

The model is :mod:`nvcourse.capstone` (targets, designs, gates, decision log) on top of
:mod:`nvcourse.training` and :mod:`nvcourse.reliability`. Times in seconds, money in US dollars.
"""

from __future__ import annotations

import ipywidgets as w
from matplotlib.figure import Figure

from .. import capstone
from ..markup import mark_html
from ..plots import new_figure
from ..tables import table_html
from ..widgets import Dashboard

__all__ = ["comparison_table_html", "design_view", "design_dashboard"]

#: Systems offered by the design dashboard.
SYSTEMS = ("pcie-8gpu", "dgx-h100", "hgx-h200", "dgx-b200", "gb200-nvl72")
#: One colour per part of a step (the order of :meth:`nvcourse.training.StepTime.breakdown`).
STEP_COLOURS = ("#999999", "#dddddd", "#009E73", "#E69F00", "#0072B2")


def comparison_table_html(reports: list[capstone.Report]) -> str:
    """One row per evaluated design: size, parallelism, days, $M, efficiency, goodput, MW and the gates.

    Text is escaped (no TeX from "$M"); the gates are marked in colour and words, not emoji (which need an
    emoji font).
    """
    rows = [[r.design.system, r.design.gpus, f"{r.design.tp}×{r.design.pp}×{r.step.dp}",
             f"{r.cost.hours / 24:.1f}", f"{r.cost.usd / 1e6:.2f}", f"{r.step.efficiency:.0%}", f"{r.goodput:.1%}",
             f"{r.MW:.2f}",
             mark_html(True, "all pass") if r.passed else mark_html(False, ", ".join(g.name for g in r.failed))]
            for r in reports]
    return table_html(["system", "GPUs", "TP×PP×DP", "days", "$M", "efficiency", "goodput", "MW", "gates"], rows,
                      escape=True, html_cols=[8])


def design_view(targets: capstone.Targets, gpus: int, system: str, tp: int, pp: int, checkpoint_s: float,
                restart_min: float, price: float) -> tuple[Figure, str]:
    """Evaluate one design against ``targets``: a bar of seconds per step by part, and the report's HTML.

    ``price`` in $/GPU-hour; 0 means the data file's price for ``system``.
    """
    d = capstone.Design(system=system, gpus=gpus, tp=tp, pp=pp, checkpoint_s=checkpoint_s, restart_s=restart_min * 60,
                        usd_per_gpu_hour=price or None)
    r = capstone.evaluate(d, targets)
    fig, ax = new_figure(7, 2.6)
    left = 0.0
    for (part, sec), colour in zip(r.step.breakdown().items(), STEP_COLOURS, strict=False):
        ax.barh(0, sec, left=left, color=colour, label=part)
        left += sec
    ax.set_yticks([])
    ax.set_xlabel("seconds per step")
    fig.legend(fontsize=7, ncols=5, loc="outside lower center")  # laid out below the axes, never cut off
    return fig, r.html()


def design_dashboard(targets: capstone.Targets) -> Dashboard:
    """Controls for system, size, TP, PP, checkpoint interval, restart time and price, driving :func:`design_view`."""

    def render(gpus, system, tp, pp, checkpoint_s, restart_min, price):
        return design_view(targets, gpus, system, tp, pp, checkpoint_s, restart_min, price)

    return Dashboard(
        {
            "gpus": w.SelectionSlider(options=[2**k for k in range(6, 13)], value=512, description="GPUs",
                                      continuous_update=False),
            "system": w.Dropdown(options=list(SYSTEMS), value="dgx-h100", description="system"),
            "tp": w.Dropdown(options=[1, 2, 4, 8, 16, 32], value=8, description="TP"),
            "pp": w.Dropdown(options=[1, 2, 4, 8, 16], value=2, description="PP"),
            "checkpoint_s": w.IntSlider(value=60, min=5, max=1200, step=5, description="checkpoint (s)",
                                        continuous_update=False),
            "restart_min": w.IntSlider(value=10, min=1, max=120, description="restart (min)", continuous_update=False),
            "price": w.BoundedFloatText(value=0.0, min=0.0, max=50.0, step=0.1, description="$/GPU-h (0 = data file)"),
        },
        render,
        columns=3,
    )
