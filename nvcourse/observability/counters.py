"""Which counter finds which fault, how to read a saturating counter, and alert thresholds derived from
the course's models so that a degraded link is caught before a job slows by a set fraction (10 %).

The counters, tools and the alert policy's assumptions are in ``data/observability.toml`` (sources there).

Thresholds. A synchronous step is compute plus the exposed communication; a ring runs at its slowest link
(chapter 08), so a link that delivers ``1 - f`` of its bandwidth stretches the bandwidth-bound part ``c``
of the step (as a fraction of the step) by ``1 / (1 - f)``. The step slows by ``s = c · f / (1 - f)``, so
the largest loss the job tolerates for a slowdown ``s`` is ``f* = s / (c + s)``. Warn at a margin of it.

>>> round(tolerable_link_loss(0.3, 0.10), 3)     # 30 % of the step is bandwidth-bound communication
0.25
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import _data, costmodel
from .._validate import choice
from ..i18n import data_text, number
from ..i18n import translate as _

__all__ = [
    "raw", "signals", "counter_bits", "CounterDelta", "counter_delta", "tolerable_link_loss",
    "Thresholds", "alert_thresholds", "AlertPolicy", "alert_policy", "bandwidth_fraction", "dcgm_diag_levels",
    "ib_link_rule",
]


def raw() -> dict[str, Any]:
    """The parsed ``data/observability.toml`` (cached by ``_data.load``: treat it as read-only)."""
    return _data.load("observability")


def signals(layer: str | None = None) -> list[dict[str, str]]:
    """Fault class → counters, kind (error / congestion / health / config), tool, how to read it."""
    rows = [_data.shown("observability", "signals", s) for s in raw()["signals"]]  # fault, reading: reader's language
    if layer is None:
        return rows
    choice("layer", layer, sorted({s["layer"] for s in rows}))
    return [s for s in rows if s["layer"] == layer]


def ib_link_rule() -> list[dict[str, str]]:
    """The course's one InfiniBand link-health rule (``[[ib_link_rule]]``): per counter, what it counts, whether to
    ``alert`` or only ``trend`` it, and when. An alert row's ``when`` is filled from its ``policy``'s levels, so
    chapters 06d, 08 and 08b print the same words."""
    pol = alert_policy()
    levels = {
        "symbol_errors": _("warn at ≥ {warn} new per hour per port, {window}; critical at ≥ {critical} per hour"
                           ).format(warn=number(pol.symbol_errors_warn_per_hour, "g"), window=pol.symbol_errors_window,
            critical=number(pol.symbol_errors_critical_per_hour, "g")),
        "link_downed": _("warn at the first flap in a day ({warn}), critical at {critical} in a day").format(
            warn=number(pol.link_downed_warn_per_day, "g"), critical=number(pol.link_downed_critical_per_day, "g")),
    }
    return [dict(_data.shown("observability", "ib_link_rule", r),
                 when=levels[r["policy"]] if "policy" in r else data_text(r["when"]))
            for r in raw()["ib_link_rule"]]


def counter_bits(name: str) -> int:
    """Width in bits of an InfiniBand PortCounters field (it saturates at ``2**bits - 1``)."""
    bits = {k: v for k, v in raw()["ib_counter_bits"].items() if k != "src"}
    choice("name", name, sorted(bits))
    return int(bits[name])


@dataclass(frozen=True)
class CounterDelta:
    """Growth of a counter between two reads. ``saturated``: the second read is the counter's maximum,
    so ``delta`` is only a lower bound (reset it with ``perfquery -r`` and read again)."""

    name: str
    delta: int
    saturated: bool


def counter_delta(name: str, before: int, after: int) -> CounterDelta:
    """How much an IB PortCounters field grew between two reads, knowing that it saturates (no wrap)."""
    top = (1 << counter_bits(name)) - 1
    for label, v in (("before", before), ("after", after)):
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= top:
            raise ValueError(f"{label} must be an integer in 0..{top} ({name} is {counter_bits(name)} bits); got {v!r}")
    if after < before:  # counters saturate, never wrap: a smaller value means a reset
        msg = f"after ({after}) < before ({before}): the counter was reset between the reads; read it twice again"
        raise ValueError(msg)
    return CounterDelta(name, after - before, after == top)


def tolerable_link_loss(bandwidth_fraction: float, slowdown: float | None = None) -> float:
    """Largest fraction ``f`` of a link's bandwidth that can be lost before the step slows by ``slowdown``.

    ``bandwidth_fraction``: share ``c`` of the step spent in bandwidth-bound communication on the critical
    path (0 < c <= 1). ``f* = s / (c + s)``; with c -> 0 any loss is tolerable (f* -> 1).
    """
    s = float(raw()["alert_policy"]["max_job_slowdown"]) if slowdown is None else float(slowdown)
    c = float(bandwidth_fraction)
    if not 0 < c <= 1:
        raise ValueError(f"bandwidth_fraction must be in (0, 1] (share of the step); got {bandwidth_fraction!r}")
    if not s > 0:
        raise ValueError(f"slowdown must be > 0 (e.g. 0.10 for 10 %); got {slowdown!r}")
    return s / (c + s)


def bandwidth_fraction(system: str, gpus: int, nbytes: float, compute_s: float, nodes: int = 1) -> float:
    """Share of a step (``compute_s`` + one exposed all-reduce of ``nbytes``) that is bandwidth-bound
    communication, from :func:`nvcourse.costmodel.predict`."""
    if not compute_s >= 0:
        raise ValueError(f"compute_s must be >= 0 (seconds of compute per step); got {compute_s!r}")
    p = costmodel.predict("allreduce", system, gpus, nbytes, nodes=nodes)
    return p.bandwidth_s / (compute_s + p.time_s)


@dataclass(frozen=True)
class Thresholds:
    """Alert levels for one job. Ratios are to the job's own healthy baseline."""

    bandwidth_fraction: float
    tolerable_loss: float
    busbw_ratio_warn: float
    busbw_ratio_critical: float
    step_ratio_warn: float
    step_ratio_critical: float
    xmit_wait_fraction_warn: float
    link_downed_warn_per_day: float = 1.0
    link_downed_critical_per_day: float = 3.0
    symbol_errors_warn_per_hour: float = 1.0
    symbol_errors_critical_per_hour: float = 100.0
    symbol_errors_window: str = "three hours running"

    def rows(self) -> list[tuple[str, str, str, str]]:
        """(metric, warn, critical, why) for a table."""
        f = self.tolerable_loss

        def lt(x: float) -> str:
            return "< " + number(x, ".3f")

        def gt(x: float) -> str:
            return "> " + number(x, ".3f")

        past = _("past") if f < 0.5 else _("within")
        return [
            (_("busbw / baseline"), lt(self.busbw_ratio_warn), lt(self.busbw_ratio_critical),
             _("a link losing {loss} of its bandwidth slows the step by the target").format(loss=number(f, ".1%"))),
            (_("step time / baseline"), gt(self.step_ratio_warn), gt(self.step_ratio_critical),
             _("the target itself, and a margin of it")),
            (_("PortXmitWait share of time on a job link"), gt(self.xmit_wait_fraction_warn), "",
             _("a port waiting for credits this share of the time sends that much less")),
            (_("link width or speed below nominal (ibdiagnet)"), _("any"), _("any"),
             _("a 4x link at 2x loses half its bandwidth: {past} this job's tolerable loss ({loss}); alert anyway: "
               "a down-trained link is a fault (cable, port) that can get worse").format(
                 past=past, loss=number(f, ".0%"))),
            (_("SymbolError growth on a port"),
             _("≥ {n} new per hour, {window}").format(n=number(self.symbol_errors_warn_per_hour, "g"),
                                                     window=self.symbol_errors_window),
             _("≥ {n} new per hour").format(n=number(self.symbol_errors_critical_per_hour, "g")),
             _("errors no FEC or retransmission corrected: judged as a rate, not a single increment; a real fault "
               "(cable, transceiver) that predicts a flap (a job crash), not a slowdown: act before it")),
            (_("raw or effective BER on a port (mlxlink -c)"), _("rising trend"), "",
             _("errors FEC corrected (raw) or left for the link's retransmission (effective): no fault yet, but the "
               "link's margin; trend it, do not page; replace the part before symbol errors start")),
            (_("LinkDowned (flaps) on a port"), _("≥ {n} per day").format(n=number(self.link_downed_warn_per_day, "g")),
             _("≥ {n} per day").format(n=number(self.link_downed_critical_per_day, "g")),
             _("any flap can kill a collective; repeated flaps: replace the cable")),
        ]


@dataclass(frozen=True)
class AlertPolicy:
    """The course's alert levels, one place (``[alert_policy]`` in ``data/observability.toml``).

    Step time is a ratio to the job's healthy baseline; LinkDowned is in flaps per day per port."""

    max_job_slowdown: float
    warn_margin: float
    link_downed_warn_per_day: float
    link_downed_critical_per_day: float
    symbol_errors_warn_per_hour: float
    symbol_errors_critical_per_hour: float
    symbol_errors_window: str

    @property
    def step_ratio_warn(self) -> float:
        """Step time / baseline above which to warn (1 + margin × slowdown)."""
        return 1 + self.warn_margin * self.max_job_slowdown

    @property
    def step_ratio_critical(self) -> float:
        """Step time / baseline above which the job has slowed by the target itself."""
        return 1 + self.max_job_slowdown


def alert_policy() -> AlertPolicy:
    """The course's alert policy from ``data/observability.toml`` (chapters 08, 08b and 09 use these levels)."""
    pol = raw()["alert_policy"]
    return AlertPolicy(
        max_job_slowdown=float(pol["max_job_slowdown"]),
        warn_margin=float(pol["warn_margin"]),
        link_downed_warn_per_day=float(pol["link_downed_warn_per_day"]),
        link_downed_critical_per_day=float(pol["link_downed_critical_per_day"]),
        symbol_errors_warn_per_hour=float(pol["symbol_errors_warn_per_hour"]),
        symbol_errors_critical_per_hour=float(pol["symbol_errors_critical_per_hour"]),
        # shown to learners: in their language (the data file keeps the English, the one source)
        symbol_errors_window=data_text(str(pol["symbol_errors_window"])),
    )


def alert_thresholds(bandwidth_fraction: float, slowdown: float | None = None) -> Thresholds:
    """Warn / critical levels that fire before a job slows by ``slowdown`` (default: the policy's 10 %)."""
    pol = alert_policy()
    s = pol.max_job_slowdown if slowdown is None else float(slowdown)
    m = pol.warn_margin
    f = tolerable_link_loss(bandwidth_fraction, s)
    return Thresholds(
        bandwidth_fraction=float(bandwidth_fraction),
        tolerable_loss=f,
        busbw_ratio_warn=1 - m * f,
        busbw_ratio_critical=1 - f,
        step_ratio_warn=1 + m * s,
        step_ratio_critical=1 + s,
        xmit_wait_fraction_warn=m * f,
        link_downed_warn_per_day=pol.link_downed_warn_per_day,
        link_downed_critical_per_day=pol.link_downed_critical_per_day,
        symbol_errors_warn_per_hour=pol.symbol_errors_warn_per_hour,
        symbol_errors_critical_per_hour=pol.symbol_errors_critical_per_hour,
        symbol_errors_window=pol.symbol_errors_window,
    )


def dcgm_diag_levels() -> dict[int, float]:
    """``dcgmi diag -r N``: approximate duration in seconds of each run level (dcgmi reference; NaN: none given)."""
    d = raw()["dcgm_diag"]
    return {int(k): float(v) for k, v in zip(d["levels"], d["level_duration_s"], strict=True)}
