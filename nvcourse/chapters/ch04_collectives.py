"""Chapter 04 (collectives and all-reduce): sweeps, model-vs-measurement plots, emulated links scaled from
the catalog, the formula explorer and the ring replay dashboard.

Every prediction comes from :func:`nvcourse.collectives.model.predict`; every measurement from a
:class:`~nvcourse.collectives.ProcessGroup`. The pictures of collectives and traces are in
:mod:`nvcourse.collectives.draw` and :mod:`nvcourse.collectives.draw_ring`. Times in seconds, sizes in bytes,
GB/s = 1e9 B/s.
"""

from __future__ import annotations

import html
import os

import ipywidgets as widgets
import numpy as np

from ..collectives import model as _model
from ..collectives.draw_ring import RingReplay, RingView
from ..collectives.group import LinkEmulation
from ..collectives.plan import SUPPORTED
from ..collectives.results import format_table
from ..i18n import glossary_href, language, localize_numbers, number
from ..i18n import translate as _
from ..plots import ALGO_COLOURS
from ..tables import table_html
from ..widgets import Dashboard, log_slider, size_slider
from .ch04_lines import (
    algorithms_for,
    busbw_lines,
    emulated_label,
    emulated_link_line,
    exchange_lines,
    model_table_lines,
    no_engine_lines,
    ring_trace_lines,
    run_lines,
    sweep_title,
    timeline_title,
)

__all__ = [
    "ALGO_COLOURS",
    "ASSUMES",
    "ordering_note",
    "tradeoff_note",
    "tradeoff_lines",
    "algorithms_for",
    "measure",
    "workers_started",
    "workers_stopped",
    "sweep_table",
    "formula_terms",
    "fit_link",
    "machine_line",
    "plot_measured_vs_model",
    "emulated_link",
    "plot_link_tradeoff",
    "render_formulas",
    "FormulasView",
    "formulas_dashboard",
    "formula_settings",
    "RingReplay",
    "ring_dashboard",
    "exchange_lines",
    "ring_trace_lines",
    "model_table_lines",
    "busbw_lines",
    "run_lines",
    "sweep_title",
    "timeline_title",
    "emulated_label",
    "emulated_link_line",
    "no_engine_lines",
]


def measure(group, op: str, sizes, algos=None, *, iters: int = 3, warmup: int = 1,
            emulation: LinkEmulation | None = None) -> list[dict]:
    """Run ``op`` at every size with every algorithm on ``group``; one ``nvcourse bench --json`` row each."""
    algos = algorithms_for(op, group.size) if algos is None else list(algos)
    rows = []
    for algo in algos:
        for s in sizes:
            res = group.run(op, int(s), algo=algo, iters=iters, warmup=warmup, emulation=emulation)
            rows.append(res.row())
    return rows


def workers_started(group) -> str:
    """One line on a running :class:`~nvcourse.collectives.ProcessGroup`: how many workers started, by rank.

    Process ids are left out on purpose: they change on every run and mean nothing to a learner.
    """
    ranks = ", ".join(str(r) for r in range(len(group.pids)))
    return _("{count} worker processes started (ranks {ranks}), one per simulated GPU").format(count=len(group.pids),
                                                                                                ranks=ranks)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else (the pid was reused)
        return True
    return True


def workers_stopped(group) -> str:
    """One line after a group's ``with`` block: are all its workers gone and all its shared memory removed?"""
    alive = sum(_alive(p) for p in group.pids)
    segments = group.segment_names()
    workers = (_("all {count} worker processes stopped").format(count=len(group.pids)) if not alive
               else _("{alive} of {count} worker processes still running").format(alive=alive, count=len(group.pids)))
    left = _("none") if not segments else f"{len(segments)} ({', '.join(segments)})"
    return _("group closed: {closed}; {workers}; shared-memory segments left: {left}").format(
        closed=_("True") if group.closed else _("False"), workers=workers, left=left)


def sweep_table(rows: list[dict], title: str) -> str:
    """The rows as nccl-tests prints them (the table of ``nvcourse bench``)."""
    return format_table(rows, title)


def formula_terms(
    op: str, algo: str, nprocs: int, nbytes: float, alpha_s: float, beta_Bps: float
) -> tuple[float, float]:
    """``(latency term, bandwidth term)`` of the model's time, both in seconds: the time with
    ``nbytes = 0`` and the time with ``α = 0`` (their sum is :func:`~nvcourse.collectives.model.predict`)."""
    lat = _model.predict(op, algo, nprocs, 0, alpha_s, beta_Bps)
    bw = _model.predict(op, algo, nprocs, nbytes, 0.0, beta_Bps)
    return lat, bw


def fit_link(group, sizes, *, iters: int = 5, warmup: int = 1) -> tuple[float | None, float | None, str | None]:
    """``(α in s, β in B/s, None)`` from this machine's ping-pong (:func:`nvcourse.collectives.fit.fit_alpha_beta`).

    On a machine too busy to time, the fit gives up after ``FIT_TRIES`` sweeps with a ValueError; then this
    returns ``(None, None, note)``, the note one line that says why, so the notebook prints it instead of a
    traceback."""
    from ..collectives.fit import fit_alpha_beta

    try:
        alpha, beta = fit_alpha_beta(group, sizes=sizes, iters=iters, warmup=warmup)
    except ValueError as exc:
        return None, None, _("⚠ no ping-pong fit this time: {why}").format(why=exc)
    return alpha, beta, None


def machine_line(alpha_s: float | None, beta_Bps: float | None, gamma_Bps: float, note: str | None = None) -> str:
    """One line: this machine's CPU count, the ping-pong fit (α in s, β in B/s) or the note of a failed fit, and γ
    (the numpy add rate, B/s)."""
    from ..units import format_rate, format_time

    fit = note or _("ping-pong fit alpha = {alpha}, beta = {beta}").format(
        alpha=localize_numbers(format_time(alpha_s)), beta=localize_numbers(format_rate(beta_Bps)))
    return _("this machine: {cpus} CPUs; {fit}; gamma (numpy add) = {gamma}").format(
        cpus=os.cpu_count(), fit=fit, gamma=localize_numbers(format_rate(gamma_Bps)))


def plot_measured_vs_model(rows: list[dict], alpha_s: float, beta_Bps: float, gamma_Bps: float | None = None,
                           *, title: str | None = None):
    """Measured time per size (markers) against the model's prediction (lines), one colour per algorithm.

    Returns the Figure (fixed size, two panels: time, and measured/predicted ratio).
    """
    from ..plots import bytes_axis, new_figure, time_axis

    if not rows:
        raise ValueError("no rows to plot")
    op, p = rows[0]["op"], rows[0]["procs"]
    sizes = np.array(sorted({r["bytes"] for r in rows}), dtype=float)
    grid = np.geomspace(sizes.min(), sizes.max(), 60)
    fig, (ax, ax2) = new_figure(10, 4.2, ncols=2)
    ratios: list[float] = []
    for algo in dict.fromkeys(r["algo"] for r in rows):
        mine = sorted((r for r in rows if r["algo"] == algo), key=lambda r: r["bytes"])
        n = np.array([r["bytes"] for r in mine], dtype=float)
        t = np.array([r["time_s"] for r in mine])
        colour = ALGO_COLOURS.get(algo, "#555555")
        pred_grid = [_model.predict(op, algo, p, s, alpha_s, beta_Bps, gamma_Bps) for s in grid]
        pred = np.array([_model.predict(op, algo, p, s, alpha_s, beta_Bps, gamma_Bps) for s in n])
        ax.plot(grid, pred_grid, color=colour, lw=1.5, label=_("{algo} model").format(algo=algo))
        ax.plot(n, t, "o", color=colour, ms=5, mfc="white", mew=1.5, label=_("{algo} measured").format(algo=algo))
        ax2.plot(n, t / pred, "o-", color=colour, ms=4, lw=1, label=algo)
        ratios.extend(t / pred)
    bytes_axis(ax, label=_("message size"))
    time_axis(ax, label=_("time"))
    ax.legend(fontsize=7, ncols=2, loc="upper left")
    ax.set_title(title or _("{op}, {procs} processes: measured (dots) vs model (lines)").format(op=op, procs=p),
                 fontsize=10)
    bytes_axis(ax2, label=_("message size"))
    ax2.set_yscale("log")
    ax2.axhline(1.0, color="black", lw=1)
    ax2.set_ylabel(_("measured / predicted"))
    # measured times depend on this machine and its load: widen the range rather than clip a point, and keep the
    # legend under the panel, where no ratio can land
    finite = [x for x in ratios if np.isfinite(x) and x > 0]
    ax2.set_ylim(min(0.1, min(finite, default=1.0) / 2), max(30.0, max(finite, default=1.0) * 2))
    ax2.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=6, frameon=False)
    ax2.set_title(_("ratio (1 = the model is exact)"), fontsize=10)
    return fig


def ordering_note(rows: list[dict], alpha_s: float | None, beta_Bps: float | None,
                  gamma_Bps: float | None = None) -> str:
    """One sentence: at the largest measured size, does this run rank the algorithms as the model does?

    The model ranks by its predicted time; the run by its measured time. Both orders are printed, so the prose
    next to the figure can stay true on any machine. Without a fit (``alpha_s`` None) there is no model to rank
    by, and the sentence says so."""
    if not rows:
        raise ValueError("no rows")
    if alpha_s is None or beta_Bps is None:
        return _("No model to rank the algorithms by: the ping-pong fit above did not succeed this time; run that "
                 "cell again when the machine is quieter.")
    op, p = rows[0]["op"], rows[0]["procs"]
    size = max(r["bytes"] for r in rows)
    at = {r["algo"]: r["time_s"] for r in rows if r["bytes"] == size}
    model = sorted(at, key=lambda a: _model.predict(op, a, p, size, alpha_s, beta_Bps, gamma_Bps))
    measured = sorted(at, key=at.get)
    verdict = _("the same order") if model == measured else _("a different order")
    return _("At {size} MiB the model ranks {model}; this run measured {measured}: {verdict}.").format(
        size=number(size / 2**20, "g"), model=" < ".join(model), measured=" < ".join(measured), verdict=verdict)


def tradeoff_note(tradeoff: dict[str, list[dict]]) -> str:
    """One line per emulated link: which algorithm this run measured faster, and by how much."""
    lines = []
    for label, rows in tradeoff.items():
        fast, slow = sorted(rows, key=lambda r: r["time_s"])[:2]
        lines.append(_("{link}: {fast} measured {ratio}× faster than {slow}").format(
            link=label, fast=fast["algo"], ratio=number(slow["time_s"] / fast["time_s"], ".2f"), slow=slow["algo"]))
    return _("; ").join(lines) + "."


def tradeoff_lines(tradeoff: dict[str, list[dict]]) -> str:
    """One line per emulated link: its label, then each algorithm's measured time (``time_s``, seconds) in the
    current language. The labels are padded to the longest one plus a space, so a long (translated) label never
    touches the first algorithm's name."""
    from ..units import format_time

    width = max((len(label) for label in tradeoff), default=0) + 1
    return "\n".join(f"{label:<{width}}" + "   ".join(
        f"{r['algo']} {localize_numbers(format_time(r['time_s']))}" for r in rows) for label, rows in tradeoff.items())


def emulated_link(link_id: str, *, links: int = 1, slowdown: float = 1000.0) -> tuple[LinkEmulation, object]:
    """A :class:`LinkEmulation` that behaves like catalog link ``link_id`` (``links`` of them), ``slowdown`` times
    slower.

    Both α and the time per byte are multiplied by ``slowdown`` (α·k, β/k), so the half-bandwidth
    size αβ — and with it which algorithm wins at a given message size — is the real link's.
    Returns ``(emulation, link_params)`` where ``link_params`` are the real link's α and β
    (:func:`nvcourse.linkmodel.link_params`).
    """
    from ..linkmodel import link_params

    if not slowdown >= 1:
        raise ValueError(f"slowdown must be >= 1; got {slowdown!r}")
    lp = link_params(link_id, links=links)
    return LinkEmulation(latency_s=lp.alpha_s * slowdown, bandwidth_Bps=lp.beta_Bps / slowdown), lp


def plot_link_tradeoff(results: dict[str, list[dict]], emulations: dict[str, LinkEmulation]):
    """Bars of measured time per algorithm for each emulated link, with the model's prediction as a tick.

    ``results[label]`` are rows of :func:`measure` at one size; ``emulations[label]`` the link used.
    Returns the Figure.
    """
    from ..plots import new_figure

    fig, ax = new_figure(8, 3.8)
    labels = list(results)
    algos = list(dict.fromkeys(r["algo"] for rows in results.values() for r in rows))
    width = 0.8 / max(1, len(algos))
    for i, label in enumerate(labels):
        emu = emulations[label]
        for j, algo in enumerate(algos):
            row = next(r for r in results[label] if r["algo"] == algo)
            x = i + (j - (len(algos) - 1) / 2) * width
            pred = _model.predict(row["op"], algo, row["procs"], row["bytes"], emu.latency_s, emu.bandwidth_Bps)
            ax.bar(x, row["time_s"] * 1e3, width * 0.9, color=ALGO_COLOURS.get(algo, "#555555"),
                   label=algo if i == 0 else None)
            ax.plot([x - width * 0.45, x + width * 0.45], [pred * 1e3] * 2, color="black", lw=2,
                    label=_("model") if i == 0 and j == 0 else None)
    ax.set_xticks(range(len(labels)), labels)
    ax.set_ylabel(_("time per call (ms, emulated)"))
    ax.legend(fontsize=8)
    ax.grid(False, axis="x")
    return fig


#: Fixed axes of the formulas dashboard: its controls (α 0.1–1000 µs, β 0.1–1000 GB/s, p 2–64) reach
#: 0.1 µs .. 1,400 s over 64 B .. 1 GiB; one frame for all, so moving α or β visibly moves the curves.
FORMULA_SIZES = 2.0 ** np.arange(6, 31)
FORMULA_TIME_LIMITS_S = (5e-8, 3e3)


def _formula_rows(op: str, procs: int, alpha: float, beta: float, size: int):
    """Per algorithm that can run: (name, times over FORMULA_SIZES, latency term, bandwidth term at ``size``)."""
    rows = []
    for algo in algorithms_for(op, procs):
        t = [_model.predict(op, algo, procs, s, alpha, beta) for s in FORMULA_SIZES]
        lat, bw = formula_terms(op, algo, procs, size, alpha, beta)
        rows.append((algo, t, lat, bw))
    return rows


#: What each formula assumes, shown in the dashboard's readout next to its time: on paper the
#: algorithm with the fewest steps and bytes wins, but each one needs something of the hardware.
ASSUMES: dict[str, str] = {
    "naive": "one rank gathers everything and sends it back: its link carries (p − 1) × S twice",
    "ring": "links to two neighbours only: runs on any topology",
    "tree": "a binary tree, not pipelined (this toy; NCCL pipelines its tree)",
    "rhd": "p a power of two; in every step all pairs at full rate at once (a switch)",
    "direct": "needs a crossbar (all p − 1 peers at full rate at once); one α only in this shared-memory engine: "
              "2α with messages, and p − 1 messages at once cost more than α on real links",
}


def _assumes(algo: str) -> str:
    """:data:`ASSUMES` of ``algo`` in the current language ('' for an algorithm it does not list)."""
    return {
        "naive": _("one rank gathers everything and sends it back: its link carries (p − 1) × S twice"),
        "ring": _("links to two neighbours only: runs on any topology"),
        "tree": _("a binary tree, not pipelined (this toy; NCCL pipelines its tree)"),
        "rhd": _("p a power of two; in every step all pairs at full rate at once (a switch)"),
        "direct": _("needs a crossbar (all p − 1 peers at full rate at once); one α only in this shared-memory "
                    "engine: 2α with messages, and p − 1 messages at once cost more than α on real links"),
    }.get(algo, "")


def _formula_text(op: str, procs: int, size: int, rows) -> tuple[str, str]:
    from ..units import format_size, format_time

    def t(x: float) -> str:
        return html.escape(localize_numbers(format_time(x)))

    best = min(rows, key=lambda r: r[2] + r[3])[0]
    # the times answer the question; what each algorithm assumes is one click away (a wide text column)
    table = table_html([_("algorithm"), _("total"), _("latency term"), _("bandwidth term")],
                       [["<b>" + a + "</b>" if a == best else a, t(lat + bw), t(lat), t(bw)]
                        for a, _t, lat, bw in rows])
    assumes = table_html([_("algorithm"), _("assumes")], [[a, html.escape(_assumes(a))] for a, *_r in rows])
    shown_size = localize_numbers(format_size(size))
    title = _("{op}, p = {procs}: model time per algorithm (dots at {size})").format(op=op, procs=procs,
                                                                                     size=shown_size)
    # direct wins on paper at every setting: its long caveat (what it assumes, what NCCL runs) sits once behind the
    # toggle instead of leading every readout
    direct = best == "direct"
    caveat = (_(" — on paper, if its assumption holds (it needs a crossbar: see “what each algorithm assumes” "
                "below)") if direct else _(" (it assumes {assumes})").format(
                  assumes=html.escape(_assumes(best) or _("what its row says"))))
    nccl = ("<p>" + _("On ordinary buffers NCCL keeps direct sends for all-to-all and point-to-point and runs rings, "
                      "trees and, on NVLink switches, NVLS for all-reduce; on registered buffers (shared with every "
                      "GPU in advance) its one-shot and two-shot kernels are a direct all-reduce over NVLink "
                      "(chapter 04b)") + " (" + f"<a href='{glossary_href('nvls')}'>" + _("NVLS: the switch adds the "
                      "data itself") + "</a>). " + _("One-shot: every GPU reads all its peers' buffers and adds them "
                      "itself, in one step; two-shot: every GPU sums its own chunk from all peers, then writes it "
                      "into all of them.") + "</p>") if direct else ""
    return title, (_("At {size} the fastest is <b>{best}</b>{caveat}.").format(
        size=html.escape(shown_size), best=best, caveat=caveat) + f" {table}<details><summary>"
        + _("what each algorithm assumes") + f"</summary>{assumes}{nccl}</details>")


def _formula_axes(ax) -> None:
    from ..plots import bytes_axis, time_axis

    bytes_axis(ax)
    time_axis(ax)
    ax.set_xlim(FORMULA_SIZES[0], FORMULA_SIZES[-1])
    ax.set_ylim(*FORMULA_TIME_LIMITS_S)


def render_formulas(procs: int, alpha_us: float, beta_GBps: float, size: int, op: str = "allreduce"):
    """The model's time of every algorithm for ``op`` vs size, and the terms at ``size``, as a new figure.

    Returns ``(Figure, html)``. α in microseconds, β in GB/s per rank's link, ``size`` in bytes.
    The dashboard uses :class:`FormulasView`, which keeps its figure and redraws only the curves.
    """
    from ..plots import new_figure

    rows = _formula_rows(op, procs, alpha_us * 1e-6, beta_GBps * 1e9, size)
    fig, ax = new_figure(8, 4.0)
    for algo, t, lat, bw in rows:
        colour = ALGO_COLOURS.get(algo, "#555555")
        ax.plot(FORMULA_SIZES, t, color=colour, lw=2 if algo != "naive" else 1, label=algo)
        ax.plot([size], [lat + bw], "o", color=colour, ms=7, mec="black")
    ax.axvline(size, color="#555555", lw=1, ls="--")
    _formula_axes(ax)
    ax.legend(fontsize=8, loc="upper left")
    title, text = _formula_text(op, procs, size, rows)
    ax.set_title(title, fontsize=10)
    return fig, text


class FormulasView:
    """The formulas dashboard's figure, kept: axes drawn once, curves, dots, marker line, legend and title
    redrawn on a change (:class:`nvcourse.widgets.LiveFigure`)."""

    def __init__(self, op: str = "allreduce") -> None:
        from ..widgets import new_live_figure

        self.op = op
        self.live, ax = new_live_figure(8, 4.0)
        self.ax = ax
        self.curves, self.dots = {}, {}
        for algo in SUPPORTED[op]:
            colour = ALGO_COLOURS[algo]
            (self.curves[algo],) = ax.plot(FORMULA_SIZES, FORMULA_SIZES, color=colour, lw=2 if algo != "naive" else 1,
                                           label=algo)
            (self.dots[algo],) = ax.plot([1.0], [1.0], "o", color=colour, ms=7, mec="black")
        self.marker = ax.axvline(1.0, color="#555555", lw=1, ls="--")
        _formula_axes(ax)
        ax.set_title(" ", fontsize=10)
        self.live.animate(*self.curves.values(), *self.dots.values(), self.marker, ax.title)
        self.legend = None

    def __call__(self, procs: int, alpha_us: float, beta_GBps: float, size: int):
        rows = _formula_rows(self.op, procs, alpha_us * 1e-6, beta_GBps * 1e9, size)
        shown = {algo for algo, *_ in rows}
        for algo in self.curves:
            self.curves[algo].set_visible(algo in shown)
            self.dots[algo].set_visible(algo in shown)
        for algo, t, lat, bw in rows:
            self.curves[algo].set_ydata(t)
            self.dots[algo].set_data([size], [lat + bw])
        self.marker.set_xdata([size, size])
        if self.legend is not None:
            self.live.forget(self.legend)
        self.legend = self.ax.legend(handles=[self.curves[a] for a, *_ in rows], fontsize=8, loc="upper left")
        self.live.animate(self.legend)
        title, text = _formula_text(self.op, procs, size, rows)
        self.ax.title.set_text(title)
        return self.live, text


#: The formulas dashboard's controls: α and β ranges (µs, GB/s), the rank counts, the size exponents (2**6 ..
#: 2**30 bytes) and each one's starting value.
FORMULA_ALPHA_US, FORMULA_BETA_GBPS = (0.1, 1000.0, 3.4), (0.1, 1000.0, 370.8)
FORMULA_PROCS, FORMULA_PROCS_VALUE = (2, 4, 8, 16, 32, 64), 4
FORMULA_SIZE_EXP = (6, 30, 18)


def formulas_dashboard(op: str = "allreduce") -> Dashboard:
    """§3's dashboard: :class:`FormulasView` driven by α (µs), β (GB/s), the rank count and the size, its
    controls labelled in the reader's language (sizes too: ``256 KiB`` with a no-break space in French)."""
    (a_min, a_max, a_val), (b_min, b_max, b_val) = FORMULA_ALPHA_US, FORMULA_BETA_GBPS
    min_exp, max_exp, value_exp = FORMULA_SIZE_EXP
    alpha = log_slider(_("α (µs)"), minimum=a_min, maximum=a_max, value=a_val)
    beta = log_slider(_("β (GB/s)"), minimum=b_min, maximum=b_max, value=b_val)
    size = size_slider(_("size"), min_exp=min_exp, max_exp=max_exp, value_exp=value_exp)
    view = FormulasView(op)
    render = view
    if language() != "en":
        # a log slider's readout writes its value the English way (3.4): hidden, the readout prints α and β instead
        alpha.readout = beta.readout = False
        size.options = [(localize_numbers(label), value) for label, value in size.options]  # 256 KiB, no-break space
        size.value = 2**value_exp  # relabelling resets the value; English keeps the slider exactly as built

        def render(procs: int, alpha_us: float, beta_GBps: float, size: int):
            live, text = view(procs, alpha_us, beta_GBps, size)
            return live, formula_settings(alpha_us, beta_GBps) + text

    return Dashboard({"alpha_us": alpha, "beta_GBps": beta,
                      "procs": widgets.Dropdown(options=list(FORMULA_PROCS), value=FORMULA_PROCS_VALUE,
                                                description=_("p ranks")),
                      "size": size}, render)


def formula_settings(alpha_us: float, beta_GBps: float) -> str:
    """α (µs) and β (GB/s) as the formulas dashboard's readout prints them where its sliders hide their own
    readouts (any language but English): three significant digits, the language's decimal mark; an HTML line."""
    def digits3(value: float) -> str:  # 1000 as 1,000 (French 1 000), never 1e+03
        return f"{value:.3g}" if value < 999.5 else f"{value:,.0f}"

    line = _("α = {alpha} µs, β = {beta} GB/s").format(alpha=digits3(alpha_us), beta=digits3(beta_GBps))
    return f"<div>{html.escape(localize_numbers(line))}</div>"


def ring_dashboard(replay: RingReplay, *, value: int = 0):
    """A :class:`~nvcourse.widgets.Dashboard` with a step slider over the replay."""
    slider = widgets.IntSlider(value=value, min=0, max=replay.nsteps, step=1, description=_("step"),
                               continuous_update=False, layout=widgets.Layout(width="380px"))
    return Dashboard({"step": slider}, RingView(replay), columns=1)
