"""Chapter 07's step-time dashboard: model, cluster and parallelism → step breakdown, efficiency, cost.

The model is :mod:`nvcourse.training`; this module only wires controls to it and draws the bar.
"""

from __future__ import annotations

import ipywidgets as w
from matplotlib.figure import Figure

from .. import training
from ..plots import new_figure
from ..widgets import Dashboard

__all__ = ["STEP_COLOURS", "GPU_COUNTS", "step_breakdown_bar", "step_dashboard"]

#: One colour per part of a training step, shared by every figure of chapter 07.
STEP_COLOURS = {
    "compute": "#999999",
    "pipeline bubble": "#dddddd",
    "TP comm": "#009E73",
    "PP comm": "#E69F00",
    "EP comm": "#CC79A7",
    "DP comm (exposed)": "#0072B2",
}
GPU_COUNTS = [2**k for k in range(3, 15)]  # 8 .. 16,384


def step_breakdown_bar(step: training.StepTime) -> Figure:
    """One horizontal stacked bar: where the seconds of a training step go."""
    fig, ax = new_figure(8, 2.4)
    left = 0.0
    for part, sec in step.breakdown().items():
        ax.barh(0, sec, left=left, color=STEP_COLOURS[part], label=part)
        left += sec
    ax.set_yticks([])
    ax.set_xlabel("seconds per step")
    ax.legend(fontsize=7, ncols=5, loc="upper center", bbox_to_anchor=(0.5, -0.35))
    return fig


def _render(gpus, model, system, tp, pp, placement, efficiency, tokens_T, price):
    s = training.step_time(model, system, gpus, tp=tp, pp=pp, placement=placement,
                           compute_efficiency=efficiency, virtual_stages=1)
    cost = training.run_cost(s, tokens_T * 1e12, usd_per_gpu_hour=price or None)
    fit = "fits" if s.fits else "<b>does not fit</b>"
    text = (
        f"step {s.total:.2f} s · MFU {s.mfu:.1%} · scaling efficiency {s.efficiency:.0%} · dp = {s.dp}, "
        f"m = {s.micro_batches}<br>memory per GPU {s.memory.total / 1e9:.0f} GB of {s.memory_capacity_GB:.0f} GB "
        f"({fit}) · run: {cost.hours / 24:.1f} days, ${cost.usd / 1e6:.2f} M, {cost.energy_MWh:.0f} MWh"
    )
    return step_breakdown_bar(s), text


def step_dashboard(*, models: list[str], systems: list[str], compute_efficiency: float,
                   tokens_T: float = 15.6) -> Dashboard:
    """GPUs, model, cluster, TP, PP, placement, compute efficiency, tokens and price → step time and run cost.

    The GPU slider only offers counts that are multiples of TP × PP, so no setting is invalid.
    """
    controls = {
        "gpus": w.SelectionSlider(options=GPU_COUNTS, value=1024, description="GPUs", continuous_update=False),
        "model": w.Dropdown(options=models, value=models[min(1, len(models) - 1)], description="model"),
        "system": w.Dropdown(options=systems, value=systems[min(1, len(systems) - 1)], description="cluster"),
        "tp": w.Dropdown(options=[1, 2, 4, 8, 16, 32, 64], value=8, description="TP"),
        "pp": w.Dropdown(options=[1, 2, 4, 8, 16], value=4, description="PP"),
        "placement": w.Dropdown(options=list(training.PLACEMENTS), value="tp-first", description="placement"),
        "efficiency": w.FloatSlider(value=compute_efficiency, min=0.2, max=0.8, step=0.05,
                                    description="compute eff.", continuous_update=False),
        "tokens_T": w.FloatSlider(value=tokens_T, min=0.5, max=30, step=0.5, description="tokens (T)",
                                  continuous_update=False),
        "price": w.BoundedFloatText(value=0.0, min=0.0, max=100.0, step=0.1, description="$/GPU-h"),
    }

    def restrict_gpus(_change=None) -> None:
        # Registered before the Dashboard's own observers, so the GPU count is valid before it re-renders.
        need = controls["tp"].value * controls["pp"].value
        options = [g for g in GPU_COUNTS if g >= need and g % need == 0]
        if list(controls["gpus"].options) != options:
            value = controls["gpus"].value if controls["gpus"].value in options else options[0]
            controls["gpus"].options = options
            controls["gpus"].value = value

    for name in ("tp", "pp"):
        controls[name].observe(restrict_gpus, names="value")
    restrict_gpus()
    return Dashboard(controls, _render, columns=3)
