"""Chapter 08's figures and goodput dashboard: cluster size, checkpoint and restart cost → goodput vs checkpoint
interval; interruptions, stragglers and alerts against cluster size and time.

The model is :mod:`nvcourse.reliability` (interruption rate from the Llama 3 record, Young/Daly intervals,
expected segment time, stragglers, alert rules); this module only wires controls to it and draws the curves.
"""

from __future__ import annotations

import re
from html import escape

import ipywidgets as w
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

from .. import catalog
from .. import reliability as rel
from ..i18n import glossary_href, language, localize_numbers, ngettext, number
from ..i18n import translate as _
from ..observability import counters
from ..plots import new_figure
from ..tables import table_html
from ..widgets import Dashboard, LiveFigure, new_live_figure

__all__ = [
    "INTERVALS_S", "GPU_COUNTS", "JOB_SIZES", "RECOVERY_SCENARIOS", "DEGRADED_LINK_PROBABILITIES", "ALERT_COLOURS",
    "GoodputView", "goodput_dashboard", "mtbf_figure", "goodput_by_size_figure", "hero_busbw_figure",
    "drift_alert_figure", "quiet_failure_lines", "alerts_table_html", "signals_table_html", "more_signals_html",
    "fault_message", "failure_record_lines", "checkpoint_lines", "checkpoint_saved_line", "restart_line", "done_line",
]  # fmt: skip

#: Checkpoint intervals plotted: 30 s .. 48 h of compute between checkpoints.
INTERVALS_S = np.geomspace(30, 48 * 3600, 200)
GPU_COUNTS = [2**k for k in range(6, 18)]  # 64 .. 131,072
#: GPUs in the job, for the figures against cluster size: 8 .. 131,072.
JOB_SIZES = np.array([2**k for k in range(3, 18)])
#: (checkpoint s, restart s, colour) of :func:`goodput_by_size_figure`: slow, typical and fast recovery.
RECOVERY_SCENARIOS = ((300, 1800, "#D55E00"), (60, 600, "#0072B2"), (10, 120, "#009E73"))
#: (probability that an inter-node link is degraded, colour) of :func:`hero_busbw_figure`.
DEGRADED_LINK_PROBABILITIES = ((1e-4, "#009E73"), (1e-3, "#0072B2"), (1e-2, "#D55E00"))
#: Colour of each alert level in :func:`drift_alert_figure`.
ALERT_COLOURS = {"ok": "#009E73", "warn": "#E69F00", "critical": "#D55E00"}


def _pct(fraction: float, spec: str = ".0") -> str:
    """``0.75`` as ``75%`` (English, as Python writes it) or ``75 %`` (French); ``spec`` the decimals (``.1``)."""
    if language() != "fr":
        return format(fraction, spec + "%")
    return number(100 * fraction, spec + "f") + "\u00a0%"


def mtbf_figure(sizes=JOB_SIZES, labelled=(1024, 16384, 131072)) -> tuple[Figure, str]:
    """Mean time between interruptions (hours, log) against GPUs in the job (log₂), at the Llama 3 failure rate;
    the ``labelled`` counts carry their value. Returns the figure and one line: minutes between interruptions at
    the largest labelled count."""
    fig, ax = new_figure(7, 3.4)
    mtbf = [rel.cluster_mtbf_hours(int(n)) for n in sizes]
    ax.loglog(sizes, mtbf, marker="o", color="#0072B2")
    ax.margins(x=0.1)  # room right of the last point for its label (to its upper left it covered the 65,536 marker)
    for n in labelled:
        ax.annotate(
            localize_numbers(f"{rel.cluster_mtbf_hours(n):.2g} h"),
            (n, rel.cluster_mtbf_hours(n)),
            textcoords="offset points",
            xytext=(5, 5),
        )
    ax.set_xscale("log", base=2)
    ax.set_xlabel(_("GPUs in the job"))
    ax.set_ylabel(_("mean time between interruptions (h)"))
    ax.set_title(_("At the Llama 3 failure rate"))
    n = max(labelled)
    return fig, _("{gpus} GPUs: one interruption every {minutes} min").format(
        gpus=number(n, ","), minutes=number(rel.cluster_mtbf_hours(n) * 60, ".0f"))


def goodput_by_size_figure(sizes=JOB_SIZES, scenarios=RECOVERY_SCENARIOS) -> Figure:
    """Goodput (0–1) at Daly's checkpoint interval against GPUs in the job (log₂), one curve per
    ``(checkpoint s, restart s, colour)`` scenario."""
    fig, ax = new_figure(7, 3.4)
    for delta, restart, colour in scenarios:
        g = [
            rel.best_goodput(checkpoint_s=delta, restart_s=restart, mtbf_s=rel.cluster_mtbf_hours(int(n)) * 3600)[1]
            for n in sizes
        ]
        ax.plot(sizes, g, marker="o", color=colour, label=_("checkpoint {delta} s with restart {restart} min").format(
            delta=delta, restart=restart // 60))
    ax.set_xscale("log", base=2)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel(_("GPUs in the job"))
    ax.set_ylabel(_("goodput at the best interval"))
    ax.legend(fontsize=8)
    return fig


def hero_busbw_figure(nodes=(2, 4, 16, 64, 256, 1024, 4096), probabilities=DEGRADED_LINK_PROBABILITIES) -> Figure:
    """Expected busbw of a ring over ``nodes`` nodes, as a fraction of the 2-node hero number, when each
    inter-node link is independently at half speed with probability q (one curve per ``(q, colour)``)."""
    fig, ax = new_figure(7, 3.4)
    nodes = np.asarray(nodes)
    for q, colour in probabilities:
        expected = [1 / rel.straggler_slowdown(int(n), p_slow=q, slow_factor=2.0) for n in nodes]
        ax.plot(nodes, expected, marker="o", color=colour, label=_("q = {q} per link").format(q=number(q, "g")))
    ax.set_xscale("log", base=2)
    ax.set_ylim(0.45, 1.02)
    ax.set_xlabel(_("nodes in the ring"))
    ax.set_ylabel(_("expected busbw / hero busbw"))
    ax.legend(fontsize=8)
    ax.set_title(_("A 2-node benchmark cannot see what a {nodes}-node job sees").format(nodes=number(1024, ",")))
    return fig


def drift_alert_figure(
    *, days: int = 60, drift_from_day: int = 20, drift_per_day: float = 0.006, noise: float = 0.015, seed: int = 7
) -> tuple[Figure, str]:
    """A job's busbw relative to its baseline over ``days`` days (a slow drift, e.g. a transceiver ageing, of
    ``drift_per_day`` of the baseline per day from ``drift_from_day`` on, plus normal noise of sd ``noise``), each
    day coloured by the first alert rule of :func:`nvcourse.reliability.alerts`, its thresholds dashed. Returns the
    figure and the days the first warning and the first critical alert fire (None: never)."""
    rng = np.random.default_rng(seed)  # seeded: the days printed are quoted in the chapter
    day = np.arange(days)
    busbw = 1.0 - drift_per_day * np.clip(day - drift_from_day, 0, None) + rng.normal(0, noise, day.size)
    rule = rel.alerts()[0]
    levels = [rel.evaluate_alert(rule, v) for v in busbw]
    fig, ax = new_figure(7, 3.2)
    ax.scatter(day, busbw, c=[ALERT_COLOURS[lvl] for lvl in levels], s=14)
    ax.axhline(rule.warn, color="#E69F00", ls="--", lw=1,
               label=_("warn < {level}").format(level=number(rule.warn, "")))
    ax.axhline(rule.critical, color="#D55E00", ls="--", lw=1,
               label=_("critical < {level}").format(level=number(rule.critical, "")))
    ax.set_xlabel(_("day"))
    ax.set_ylabel(_("busbw / baseline"))
    ax.legend(fontsize=8)
    first = {lvl: int(day[levels.index(lvl)]) for lvl in ("warn", "critical") if lvl in levels}
    return fig, _("first warning on day {warn} · first critical on day {critical}").format(
        warn=first.get("warn"), critical=first.get("critical"))


def quiet_failure_lines(link: str = "ib-ndr", ranks: int = 64, seed: int = 0) -> list[str]:
    """Section 3's readout: a ring all-reduce over ``ranks`` ranks with one ``link`` (catalog α, line rate ×
    efficiency) at 75/50/25 % speed, for 1 GiB and 64 KiB; stragglers and jitter at 8, 1,024 and 16,384 GPUs; and a
    seeded simulation of 2 % jitter at 8 GPUs (the large-N formula overstates small groups)."""
    lk = catalog.get_link(link)
    beta = lk.line_GBps_dir * lk.efficiency * 1e9
    out = [_("{link}: α {alpha} µs, achievable {rate} GB/s per direction").format(
        link=link, alpha=number(lk.alpha_s * 1e6, "g"), rate=number(beta / 1e9, ".0f"))]
    for f in (0.75, 0.5, 0.25):
        big, small = (rel.degraded_link_slowdown(n, ranks, alpha_s=lk.alpha_s, beta_Bps=beta, slowest_link_factor=f)
                      for n in (2**30, 2**16))
        out.append(_("one link at {speed} speed: 1 GiB all-reduce over {ranks} ranks takes {big}x longer; "
                     "a 64 KiB one {small}x").format(speed=_pct(f), ranks=ranks, big=number(big, ".2f"),
                                                     small=number(small, ".2f")))
    out.append("")
    for n in (8, 1024, 16384):
        out.append(_("{gpus} GPUs, each slow {slow}x with probability 1e-4 per step: step x{straggler}; with "
                     "2 % random jitter: x{jittered}").format(
            gpus=number(n, ">6"), slow=number(1.5, ""),
            straggler=number(rel.straggler_slowdown(n, p_slow=1e-4, slow_factor=1.5), ".3f"),
            jittered=number(rel.jitter_slowdown(n, cv=0.02), ".3f")))
    sim = 1 + 0.02 * np.random.default_rng(seed).standard_normal((200_000, 8)).max(axis=1).mean()
    out.append(_("8 GPUs, 2 % jitter simulated ({steps} steps): x{sim}").format(
        steps=number(200_000, ","), sim=number(sim, ".3f")))
    return out


#: The process ids a :class:`~nvcourse.collectives.CollectiveError` names for operators: " (pid 123)" and
#: "(pids [1, 2]; ". They change on every run and tell a learner nothing, so the chapter leaves them out. French
#: typography puts a no-break space before the semicolon ("pids [1, 2]\u00a0; "), which ``\s`` matches.
_PIDS = re.compile(r" \(pid \d+\)|pids \[[\d, ]*\]\s*;?\s?")


def fault_message(err: BaseException) -> str:
    """The error's message without process ids: which rank failed, how, and during which call."""
    return _PIDS.sub("", str(err))


def _code(text: str) -> str:
    # long counter names and paths may break anywhere: unbroken, they pushed the table past the notebook's edge
    return f'<code style="overflow-wrap:anywhere">{escape(text)}</code>'


def _counter_cell(counter: str) -> str:
    """A counter's name as code; an explanation after its first ``": "`` goes behind a closed ``<details>``."""
    name, sep, note = counter.partition(": ")
    name = name.rstrip()  # French writes a no-break space before the colon
    if not sep:
        return _code(counter)
    summary = _("what it counts")
    return _code(name) + f"<details><summary>{summary}</summary>{escape(note)}</details>"


def _action_cell(action: str) -> str:
    """An alert's action, short: its parenthesised details (commands, examples) go behind a closed ``<details>``."""
    details = re.findall(r"\s*\(([^()]*)\)", action)
    if not details:
        return escape(action)
    short = re.sub(r"\s*\([^()]*\)", "", action)
    summary = _("how")
    return escape(short) + f"<details><summary>{summary}</summary>{escape('; '.join(details))}</details>"


def _levels(policy: str | None, alert: rel.Alert) -> tuple[str, str, str]:
    """(warn, critical, unit) cells of one rule, written as chapters 08b and 09 apply the course's alert policy:
    step time is over a level when strictly above it (``>``), a symbol-error rate warns when it holds for the
    policy's window and is critical in any one hour; every other rule as :func:`nvcourse.reliability.alerts` has it."""
    sign = "<" if alert.direction == "below" else ">" if policy == "step_ratio" else "≥"
    warn, critical = f"{sign} " + number(alert.warn, "g"), f"{sign} " + number(alert.critical, "g")
    if policy != "symbol_errors":
        return warn, critical, alert.unit
    window = counters.alert_policy().symbol_errors_window
    return (_("{level}, {window}").format(level=warn, window=window),
            _("{level} in any one hour").format(level=critical),
            _("new errors per hour per port (a rate, not one increment)"))


def alerts_table_html() -> str:
    """The monitoring rules (:func:`nvcourse.reliability.alerts`): metric, counter, warn and critical levels.

    A long explanation of a counter is collapsed under its name; one line under the table says where a job's own
    busbw levels come from, one what UFM is."""
    rows = []
    for raw, a in zip(rel.raw()["alerts"], rel.alerts(), strict=True):
        warn, critical, unit = _levels(raw.get("policy"), a)
        rows.append([a.metric, _counter_cell(a.counter), warn, critical, unit, _action_cell(a.action)])
    table = table_html([_("metric"), _("counter"), _("warn"), _("critical"), _("unit"), _("action")], rows,
                       escape=True, html_cols=[1, 5])
    busbw, pol = rel.alerts()[0], counters.alert_policy()
    derived = _("<p>The busbw levels ({warn} and {critical}) are a starting default: chapter 08b (§4.1) derives a "
                "job's own from how much of its step is bandwidth-bound (warn at 1 − {margin}·f*, critical at 1 − f*, "
                "f* being the link loss that slows the step by {slowdown}), and chapter 09 applies those.</p>")
    return table + derived.format(
        warn=number(busbw.warn, "g"), critical=number(busbw.critical, "g"), margin=number(pol.warn_margin, "g"),
        slowdown=_pct(pol.max_job_slowdown)) + _(
        "<p>UFM, in the counter names, is NVIDIA's Unified Fabric Manager, the management server of an "
        "InfiniBand fabric (<a href='{glossary}#ufm'>glossary</a>).</p>").format(glossary=glossary_href())


def signals_table_html() -> str:
    """The counter and tool for each fault class (:func:`nvcourse.observability.counters.signals`)."""
    rows = [[s["layer"], s["fault"], _code(s["counter"]), s["kind"], _code(s["tool"])] for s in counters.signals()]
    return table_html([_("layer"), _("fault"), _("counters"), _("kind"), _("tool")], rows, escape=True,
                      html_cols=[2, 4])


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
        ax.set_xlabel(_("compute between checkpoints (min)"))
        ax.set_ylabel(_("goodput"))
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
        daly_applies = checkpoint_s < 2 * mtbf_s  # Daly's formula holds only for δ < 2M
        for marker, name, tau in ((self.young, "Young", rel.young_interval(checkpoint_s, mtbf_s)),
                                  (self.daly, "Daly", rel.daly_interval(checkpoint_s, mtbf_s))):
            if marker is self.daly and not daly_applies:  # no marker for a formula that does not apply
                marker.set_data([], [])
                labels.append(_("{name}: n/a").format(name=name))
                continue
            marker.set_data([tau / 60], [goodput(tau)])
            labels.append(_("{name}: {minutes} min").format(name=name, minutes=number(tau / 60, ".0f")))
        if self.legend is not None:
            self.live.forget(self.legend)
        self.legend = self.ax.legend([self.young, self.daly], labels, loc="best")
        self.live.animate(self.legend)
        tau, best = rel.best_goodput(checkpoint_s=checkpoint_s, restart_s=restart_s, mtbf_s=mtbf_s)
        text = (_("MTBI {mtbi} h · best goodput {best} at {minutes} min · {per_day} interruptions per day")
                if daly_applies else
                _("MTBI {mtbi} h · best goodput {best}, no useful interval · {per_day} interruptions per day")).format(
            mtbi=number(mtbf_s / 3600, ".2f"), best=_pct(best, ".1"), minutes=number(tau / 60, ".0f"),
            per_day=number(24 * 3600 / mtbf_s, ".1f" if mtbf_s <= 240 * 3600 else ".2g"))  # 0.03, not 0.0
        if not daly_applies:  # outside Daly's formula (δ < 2M): say so rather than show its fallback
            text += _("<br>The checkpoint takes at least twice the time between interruptions: Daly's formula no "
                      "longer applies, and no interval keeps even 5 % of the time as progress.")
        return self.live, text


def goodput_dashboard() -> Dashboard:
    """Sliders for GPUs, checkpoint cost (s), restart cost (min) and interruption rate × Llama 3's."""
    return Dashboard(
        {
            "gpus": w.SelectionSlider(options=GPU_COUNTS, value=16384, description=_("GPUs"),
                                        continuous_update=False),
            "checkpoint_s": w.IntSlider(value=60, min=5, max=1200, step=5, description=_("checkpoint (s)"),
                                        continuous_update=False),
            "restart_min": w.IntSlider(value=10, min=1, max=120, description=_("restart (min)"),
                                       continuous_update=False),
            "rate_factor": w.FloatLogSlider(value=1.0, base=10, min=-1, max=1, description=_("rate × Llama 3"),
                                            continuous_update=False),
        },
        GoodputView(),
    )


def more_signals_html() -> str:
    """:func:`signals_table_html` under one line that points to chapter 08b (thresholds and a fault-finding drill)."""
    return _("<p>More signals, by fault class (details, thresholds and a fault-finding drill: "
             "<a href='08b_security_and_observability.ipynb'>chapter 08b</a>). In the table, GSP is the GPU System "
             "Processor, which runs much of the driver on the GPU itself "
             "(<a href='{glossary}#gsp'>glossary</a>).</p>").format(glossary=glossary_href()) + signals_table_html()


def _category(name: str) -> str:
    """A failure category of the record (``data/reliability.toml``) in the current language."""
    names = {"gpu": _("gpu"), "software": _("software"), "network": _("network"), "maintenance": _("maintenance"),
             "host": _("host"), "unknown": _("unknown")}
    return names.get(name, name)


def failure_record_lines() -> str:
    """The published failure record: its unexpected interruptions and mean time between them (h), the rate per GPU
    (per GPU-year of 8,766 h) and per 8-GPU server (per 1,000 node-days), then the count and share of each
    category of cause, largest first."""
    r = rel.failure_record()
    by_cat: dict[str, int] = {}
    for _component, category, count in r.causes:
        by_cat[category] = by_cat.get(category, 0) + count
    lines = [_("{name}: {n} unexpected interruptions, one every {hours} h").format(
                 name=r.name, n=r.unexpected_interruptions, hours=number(r.mtbf_hours, ".2f")),
             _("per GPU: {gpu_year} per GPU-year; per 8-GPU server: {node} per 1,000 node-days").format(
                 gpu_year=number(r.rate_per_gpu_hour() * 8766, ".2f"), node=number(r.per_1000_node_days(), ".1f"))]
    for cat, n in sorted(by_cat.items(), key=lambda kv: -kv[1]):
        lines.append(f"  {_category(cat):>11}: {n:3d} ({_pct(n / r.unexpected_interruptions, '5.1')})")
    return "\n".join(lines)


def checkpoint_lines(gpus: int = 16384, checkpoints_s: tuple[int, ...] = (60, 300), restart_s: int = 600) -> str:
    """For a cluster of ``gpus`` GPUs at the record's failure rate (mean time between interruptions M, h) and each
    checkpoint time (s): Young's and Daly's checkpoint intervals (min) and the best goodput with ``restart_s``."""
    m = rel.cluster_mtbf_hours(gpus) * 3600
    return "\n".join(_("M = {m} h, checkpoint {checkpoint} min: Young {young} min, Daly {daly} min, best goodput "
                       "{goodput} (restart {restart} min)").format(
        m=number(m / 3600, ".2f"), checkpoint=delta // 60, young=number(rel.young_interval(delta, m) / 60, ".1f"),
        daly=number(rel.daly_interval(delta, m) / 60, ".1f"),
        goodput=_pct(rel.best_goodput(checkpoint_s=delta, restart_s=restart_s, mtbf_s=m)[1], ".1"),
        restart=restart_s // 60) for delta in checkpoints_s)


def checkpoint_saved_line(step: int) -> str:
    """The training loop's line when it saves a checkpoint after ``step``."""
    return _("step {step}: checkpoint saved").format(step=f"{step:2d}")


def restart_line(step: int, err: Exception, checkpoint_step: int) -> str:
    """The training loop's lines when a collective fails at ``step``: the failure, then where it restarts from."""
    return _("step {step}: {error}\n         -> restart from the checkpoint of step {checkpoint}").format(
        step=f"{step:2d}", error=fault_message(err), checkpoint=checkpoint_step)


def done_line(steps: int, attempts: int, lost: int) -> str:
    """The training loop's last line: steps done, attempts, and the steps of work lost to failures."""
    return ngettext("done: {steps} steps, {attempts} attempts, work lost: {lost} step",
                    "done: {steps} steps, {attempts} attempts, work lost: {lost} steps", lost).format(
        steps=steps, attempts=attempts, lost=lost)
