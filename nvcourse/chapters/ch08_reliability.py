"""Chapter 08's goodput dashboard: cluster size, checkpoint and restart cost → goodput vs checkpoint interval.

The model is :mod:`nvcourse.reliability` (interruption rate from the Llama 3 record, Young/Daly intervals,
expected segment time); this module only wires controls to it and draws the curve.
"""

from __future__ import annotations

import ipywidgets as w
import numpy as np
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

from .. import reliability as rel
from ..widgets import Dashboard, LiveFigure, new_live_figure

__all__ = ["INTERVALS_S", "GPU_COUNTS", "GoodputView", "goodput_dashboard"]

#: Checkpoint intervals plotted: 30 s .. 48 h of compute between checkpoints.
INTERVALS_S = np.geomspace(30, 48 * 3600, 200)
GPU_COUNTS = [2**k for k in range(6, 18)]  # 64 .. 131,072


class GoodputView:
    """Goodput against the checkpoint interval, with Young's and Daly's intervals marked.

    The axes (log minutes, goodput 0–1) never change, so the figure is drawn once and only the curve,
    the two markers and the legend are redrawn on a change (:class:`~nvcourse.widgets.LiveFigure`).
    """

    def __init__(self) -> None:
        self.live, ax = new_live_figure(7, 3.2)
        self.ax = ax
        minutes = INTERVALS_S / 60
        (self.curve,) = ax.plot(minutes, minutes, color="#0072B2")
        (self.young,) = ax.plot([1.0], [0.5], "s", color="#E69F00")
        (self.daly,) = ax.plot([1.0], [0.5], "o", color="#009E73")
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: f"{x:g}"))  # plain numbers: no mathtext
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xlim(minutes[0], minutes[-1])
        ax.set_ylim(0, 1)
        ax.set_xlabel("compute between checkpoints (min)")
        ax.set_ylabel("goodput")
        self.legend = None
        self.live.animate(self.curve, self.young, self.daly)

    def __call__(
        self, gpus: int, checkpoint_s: float, restart_min: float, rate_factor: float
    ) -> tuple[LiveFigure, str]:
        """Update for ``gpus`` GPUs, a checkpoint costing ``checkpoint_s`` s, a restart ``restart_min`` min and
        an interruption rate ``rate_factor`` × Llama 3's; return the figure and the readout."""
        lam = rel.failure_rate_per_gpu_hour() * rate_factor
        mtbf_s = rel.cluster_mtbf_hours(gpus, rate_per_gpu_hour=lam) * 3600
        restart_s = restart_min * 60

        def goodput(tau: float) -> float:
            return rel.goodput(tau, checkpoint_s=checkpoint_s, restart_s=restart_s, mtbf_s=mtbf_s)

        self.curve.set_ydata([goodput(t) for t in INTERVALS_S])
        labels = []
        for marker, name, tau in ((self.young, "Young", rel.young_interval(checkpoint_s, mtbf_s)),
                                  (self.daly, "Daly", rel.daly_interval(checkpoint_s, mtbf_s))):
            marker.set_data([tau / 60], [goodput(tau)])
            labels.append(f"{name}: {tau / 60:.0f} min")
        if self.legend is not None:
            self.live.forget(self.legend)
        self.legend = self.ax.legend([self.young, self.daly], labels, loc="best")
        self.live.animate(self.legend)
        tau, best = rel.best_goodput(checkpoint_s=checkpoint_s, restart_s=restart_s, mtbf_s=mtbf_s)
        text = (f"MTBI {mtbf_s / 3600:.2f} h · best goodput {best:.1%} at {tau / 60:.0f} min · "
                f"{24 * 3600 / mtbf_s:.1f} interruptions per day")
        return self.live, text


def goodput_dashboard() -> Dashboard:
    """Sliders for GPUs, checkpoint cost (s), restart cost (min) and interruption rate × Llama 3's."""
    return Dashboard(
        {
            "gpus": w.SelectionSlider(options=GPU_COUNTS, value=16384, description="GPUs", continuous_update=False),
            "checkpoint_s": w.IntSlider(value=60, min=5, max=1200, step=5, description="checkpoint (s)",
                                        continuous_update=False),
            "restart_min": w.IntSlider(value=10, min=1, max=120, description="restart (min)", continuous_update=False),
            "rate_factor": w.FloatLogSlider(value=1.0, base=10, min=-1, max=1, description="rate × Llama 3",
                                            continuous_update=False),
        },
        GoodputView(),
    )
