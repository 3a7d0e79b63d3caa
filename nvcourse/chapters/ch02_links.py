"""Figures, tables and dashboards for chapter 02 (PCIe vs NVLink and the alpha-beta model).

The model itself is :mod:`nvcourse.linkmodel`; the figures come from :mod:`nvcourse.catalog` and the
published measurements in ``data/link_measurements.toml``.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from .. import catalog, linkmodel
from ..i18n import data_text, localize_numbers, number
from ..i18n import translate as _
from ..linkmodel import link_measurements
from ..markup import details_html
from ..plots import bytes_axis, colour_for_link, new_figure, rate_axis, time_axis
from ..tables import table_html
from ..units import format_rate, format_size, format_time
from ..widgets import Dashboard, LiveFigure, log_slider, new_live_figure, size_slider

__all__ = [
    "link_table_html",
    "spec_vs_measured_html",
    "plot_effective_bandwidth",
    "plot_spec_vs_measured",
    "alpha_beta_dashboard",
    "link_chooser_dashboard",
    "PER_GPU_CHOICES",
    "BETA_GRID",
    "REGIME_FACTOR",
    "regime_of",
    "alpha_beta_lines",
]

SIZES = np.logspace(0, np.log10(16 * 2**30), 400)  # 1 B .. 16 GiB

def _gpu_choice(short: str, gpu_id: str) -> tuple[str, tuple[str, int]]:
    """("H100: 18 x NVLink 4", ("nvlink4", 18)): a GPU's NVLink links, as the catalog counts them."""
    g = catalog.get_gpu(gpu_id)
    return f"{short}: {g.nvlink_links} x NVLink {catalog.get_link(g.nvlink).generation}", (g.nvlink, g.nvlink_links)


#: The α-β dashboard starts at one H100's NVLink (18 links), as the catalog gives it.
_H100 = linkmodel.link_params("nvlink4", links=catalog.get_gpu("h100").nvlink_links)

#: (label, link id, links used together) for "one GPU's worth" of each interconnect.
PER_GPU_CHOICES: dict[str, tuple[str, int]] = {
    "PCIe Gen4 x16": ("pcie4", 1),
    "PCIe Gen5 x16": ("pcie5", 1),
    **dict(_gpu_choice(short, gpu_id) for short, gpu_id in (("V100", "v100"), ("A100", "a100"), ("H100", "h100"),
                                                             ("B200", "b200"))),
    "InfiniBand HDR (1 NIC)": ("ib-hdr", 1),
    "InfiniBand NDR (1 NIC)": ("ib-ndr", 1),
    "RoCE 400 GbE (1 NIC)": ("roce-400g", 1),
}


def link_table_html(kinds: tuple[str, ...] = catalog.LINK_KINDS) -> str:
    """The catalog's links as an HTML table: line rate per direction and both ways, and the achievable rate
    (GB/s); each link's efficiency, α (µs) and n½ sit behind a collapsed note, since §1 of chapter 02 asks only how
    a rate is quoted and α and n½ are defined in its §2."""
    rows, detail = [], []
    for link in catalog.links().values():
        if link.kind not in kinds:
            continue
        bidir = link.line_GBps_bidir if link.line_GBps_bidir is not None else 2 * link.line_GBps_dir
        name = html.escape(link.name)
        rows.append([name, number(link.line_GBps_dir, "g"), number(bidir, "g"),
                     number(link.achievable_GBps_dir, ".1f")])
        detail.append([name, number(link.efficiency, ".3f"), number(link.alpha_us, "g"),
                       localize_numbers(format_size(link.alpha_s * link.beta_Bps))])
    headers = [_("link"), _("line GB/s per direction"), _("line GB/s both directions"),
               _("achievable GB/s per direction")]
    note = table_html([_("link"), _("efficiency"), _("α (µs)"), "n½ = αβ"], detail)
    return table_html(headers, rows) + details_html(_("efficiency, α and n½ of each link (α and n½: section 2)"),
                                                    note)


def spec_vs_measured_html() -> str:
    """Datasheet line rate vs the model vs published measurements, with links to the sources."""
    rows = []
    for m in link_measurements():
        rows.append(
            [
                html.escape(data_text(m.what)),
                number(m.line_GBps_dir, "g"),
                number(m.model_GBps_dir, ".1f"),
                f"<b>{number(m.measured_GBps_dir, 'g')}</b>",
                localize_numbers(f"{100 * m.measured_GBps_dir / m.line_GBps_dir:.0f} %"),
                f'<a href="{html.escape(m.source)}" target="_blank">' + _("source") + "</a>",
            ]
        )
    headers = [_("measurement"), _("line rate GB/s/dir"), _("model GB/s/dir"), _("measured GB/s/dir"),
               _("measured / line"), ""]
    return table_html(headers, rows)


@dataclass(frozen=True)
class _Curve:
    """What is drawn for one entry of :data:`PER_GPU_CHOICES`."""

    label: str
    params: linkmodel.LinkParams
    peak_Bps: float
    colour: str
    style: str
    shade: float


def _curve(label: str) -> _Curve:
    if label not in PER_GPU_CHOICES:
        raise ValueError(f"unknown link choice {label!r}; allowed: {', '.join(PER_GPU_CHOICES)}")
    link_id, count = PER_GPU_CHOICES[label]
    link = catalog.get_link(link_id)
    newest = max(x.generation for x in catalog.links().values() if x.kind == link.kind)
    return _Curve(
        label=label,
        params=linkmodel.link_params(link_id, links=count),
        peak_Bps=linkmodel.link_params(link_id, links=count, use_efficiency=False).beta_Bps,
        colour=colour_for_link(link.kind),
        # one line style per generation of a family (newest solid), so the curves of one family, drawn in one
        # colour, stay apart in greyscale too
        style=("-", "--", ":", "-.")[min(3, newest - link.generation)],
        # older generations lighter, so the family reads as one colour from faint to strong
        shade=0.35 + 0.65 * link.generation / newest,
    )


def _check_choices(choices) -> list[_Curve]:
    if not choices:
        raise ValueError(_("choose at least one link; allowed: {allowed}").format(allowed=", ".join(PER_GPU_CHOICES)))
    return [_curve(label) for label in choices]


def _bandwidth_axes(ax) -> None:
    bytes_axis(ax, label=_("message size"))
    rate_axis(ax, label=_("effective bandwidth, one direction"))
    ax.set_xlim(SIZES[0], SIZES[-1])
    ax.set_ylim(1e6, 2e12)
    ax.set_title(_("Effective bandwidth n / (α + n/β); dots mark n½ = αβ"))


def plot_effective_bandwidth(choices: list[str], *, line_rate: bool = False, mark_half: bool = True) -> Figure:
    """Effective bandwidth vs message size (log-log) for entries of :data:`PER_GPU_CHOICES`."""
    curves = _check_choices(choices)
    fig, ax = new_figure(8.5, 4.4)
    for c in curves:
        p = c.params
        ax.plot(SIZES, p.bandwidth(SIZES), c.style, color=c.colour, lw=2, label=c.label, alpha=c.shade)
        if line_rate:
            ax.axhline(c.peak_Bps, color=c.colour, lw=0.8, ls=":")
        if mark_half:
            ax.plot([p.half_bandwidth_bytes], [p.beta_Bps / 2], "o", color=c.colour, ms=5)
    _bandwidth_axes(ax)
    ax.legend(fontsize=8, loc="lower right", ncols=2)
    return fig


class _ChooserView:
    """Every choice's curve, line rate and n½ dot drawn once; a change toggles which are visible."""

    def __init__(self) -> None:
        self.live, ax = new_live_figure(8.5, 4.4)
        self.ax = ax
        self.artists: dict[str, tuple] = {}
        for label in PER_GPU_CHOICES:
            c = _curve(label)
            p = c.params
            (curve,) = ax.plot(SIZES, p.bandwidth(SIZES), c.style, color=c.colour, lw=2, label=c.label, alpha=c.shade)
            peak = ax.axhline(c.peak_Bps, color=c.colour, lw=0.8, ls=":")
            (dot,) = ax.plot([p.half_bandwidth_bytes], [p.beta_Bps / 2], "o", color=c.colour, ms=5)
            self.artists[label] = (curve, peak, dot)
            self.live.animate(curve, peak, dot)
        _bandwidth_axes(ax)
        self.legend = None

    def __call__(self, links: tuple[str, ...], show_line_rate: bool) -> LiveFigure:
        _check_choices(links)
        for label, (curve, peak, dot) in self.artists.items():
            on = label in links
            curve.set_visible(on)
            dot.set_visible(on)
            peak.set_visible(on and show_line_rate)
        if self.legend is not None:
            self.live.forget(self.legend)
        shown = [self.artists[label][0] for label in PER_GPU_CHOICES if label in links]
        self.legend = self.ax.legend(handles=shown, fontsize=8, loc="lower right", ncols=2)
        self.live.animate(self.legend)
        return self.live


def _measurement_label(m) -> str:
    """A reader's name for a measurement ('12 × NVLink 3: all-reduce busbw'), not its catalog id."""
    link = catalog.get_link(m.link).name.split(" (")[0]
    what = m.what.lower()
    per_nic = False
    if "all_reduce" in what or "all-reduce" in what or "busbw" in what:
        kind = _("all-reduce busbw")
    elif "host_to_device" in what:
        kind = _("host → GPU copy")
    elif "nccl" in what:
        kind, per_nic = _("NCCL per NIC"), True
    else:
        kind = _("measured")
    gpus = re.search(r"\b(\d+)\s?x?\s?(?:[abh]\d{3}|gpus)", what)  # "8x a100", "2 a100 pcie", "3 gpus"
    kind += _(", {n} GPUs").format(n=gpus.group(1)) if gpus and not per_nic else ""
    return f"{m.links} × {link}: {kind}" if m.links > 1 else f"{link}: {kind}"


def plot_spec_vs_measured() -> Figure:
    """Horizontal bars: line rate, model and measurement for each published measurement."""
    ms = link_measurements()
    fig, ax = new_figure(8.5, 0.5 * len(ms) + 1.2)
    y = np.arange(len(ms))
    ax.barh(y + 0.27, [m.line_GBps_dir for m in ms], 0.27, color="#cccccc", label=_("line rate (datasheet)"))
    ax.barh(y, [m.model_GBps_dir for m in ms], 0.27, color="#56B4E9", label=_("model: line x efficiency"))
    ax.barh(y - 0.27, [m.measured_GBps_dir for m in ms], 0.27, color="#D55E00", label=_("published measurement"))
    ax.set_yticks(y, [_measurement_label(m) for m in ms], fontsize=8)
    ax.set_xlabel(_("GB/s, one direction"))
    ax.invert_yaxis()
    ax.legend(fontsize=8, loc="lower right")
    return fig


class _AlphaBetaView:
    """t(n) and the effective bandwidth for one (α, β): the axes are drawn once, the curves move."""

    def __init__(self) -> None:
        self.live, (ax_t, ax_b) = new_live_figure(9.5, 3.8, ncols=2)
        (self.t,) = ax_t.plot(SIZES, SIZES, color="#0072B2", lw=2, label="t(n) = α + n/β")
        (self.alpha_only,) = ax_t.plot(SIZES, SIZES, ":", color="#999999", label=_("α alone"))
        (self.beta_only,) = ax_t.plot(SIZES, SIZES, "--", color="#999999", label=_("n/β alone"))
        (self.t_dot,) = ax_t.plot([1.0], [1.0], "o", color="#D55E00", clip_on=False)  # whole at the range's end
        bytes_axis(ax_t, label=_("message size"))
        time_axis(ax_t, label=_("transfer time"))
        ax_t.set_xlim(SIZES[0], SIZES[-1])
        ax_t.set_ylim(1e-8, 10)
        ax_t.legend(fontsize=8, loc="upper left")  # fixed: "best" would depend on the first state
        (self.bw,) = ax_b.plot(SIZES, SIZES, color="#009E73", lw=2)
        self.beta_line = ax_b.axhline(1.0, ls=":", color="#999999")
        self.half_line = ax_b.axvline(1.0, ls="--", color="#999999")
        (self.bw_dot,) = ax_b.plot([1.0], [1.0], "o", color="#D55E00", clip_on=False)
        bytes_axis(ax_b, label=_("message size"))
        rate_axis(ax_b, label=_("effective bandwidth"))
        ax_b.set_xlim(SIZES[0], SIZES[-1])
        ax_b.set_ylim(1e5, 2e12)
        self.live.animate(self.t, self.alpha_only, self.beta_only, self.t_dot, self.bw, self.beta_line,
                          self.half_line, self.bw_dot)

    def __call__(self, alpha_us: float, beta_GBps: float, size: int) -> tuple[LiveFigure, str]:
        p = linkmodel.LinkParams(alpha_s=alpha_us * 1e-6, beta_Bps=beta_GBps * 1e9)
        n_half = p.half_bandwidth_bytes
        self.t.set_ydata(p.time(SIZES))
        self.alpha_only.set_ydata(np.full_like(SIZES, p.alpha_s))
        self.beta_only.set_ydata(SIZES / p.beta_Bps)
        self.t_dot.set_data([size], [p.time(size)])
        self.bw.set_ydata(p.bandwidth(SIZES))
        self.beta_line.set_ydata([p.beta_Bps, p.beta_Bps])
        self.half_line.set_xdata([n_half, n_half])
        self.bw_dot.set_data([size], [p.bandwidth(size)])
        regime = {"latency": _("latency-bound (α dominates)"), "between": _("in between (α and n/β both count)"),
                  "bandwidth": _("bandwidth-bound (n/β dominates)")}[regime_of(size, n_half)]
        text = _("<b>{size}</b> takes <b>{time}</b> → effective <b>{rate}</b> = {share} of β. "
                 "n½ = αβ = <b>{half}</b>; this message is {regime}.").format(
            size=format_size(size), time=format_time(p.time(size)), rate=format_rate(p.bandwidth(size)),
            share=_percent(p.bandwidth(size) / p.beta_Bps), half=format_size(n_half), regime=regime)
        return self.live, localize_numbers(text)


#: The readout's regimes: latency-bound below n½ / REGIME_FACTOR (under a fifth of β reached), bandwidth-bound above
#: n½ × REGIME_FACTOR (over four fifths), in between otherwise; chapter 02 §2 states the same lines.
REGIME_FACTOR = 4


def regime_of(size: float, n_half: float) -> str:
    """Where a message of ``size`` bytes sits against the half-bandwidth size ``n_half`` (bytes): "latency"
    below n½/4, where it reaches under 1/5 of β; "bandwidth" above 4·n½, over 4/5 of β; "between" otherwise."""
    if size < n_half / REGIME_FACTOR:
        return "latency"
    return "bandwidth" if size > n_half * REGIME_FACTOR else "between"


def _percent(fraction: float) -> str:
    """A share as a percentage a reader can use, in HTML: '85 %', '3.2 %', '0.32 %' (never '0 %' for 1.2 of 370),
    and '&lt; 0.01 %' below a hundredth of a percent (never scientific notation such as '7.9e-05 %')."""
    pct = 100 * fraction
    if pct < 0.01:
        return "&lt; 0.01 %"
    return f"{pct:.0f} %" if pct >= 10 else f"{pct:.2g} %"


def _beta_grid(low: float = 25.0, high: float | None = None) -> dict[str, float]:
    """The β slider's range and step (a log slider moves in steps of ``step`` in log10), chosen so that both
    values the text asks for, ``low`` (about a PCIe Gen4 slot) and ``high`` (an H100's NVLinks), are slider
    positions: from about 1 GB/s to about 2 TB/s."""
    high = _H100.beta_Bps / 1e9 if high is None else high
    span = math.log10(high) - math.log10(low)
    step = span / round(span / 0.01)
    below = math.ceil(math.log10(low) / step)  # steps from ~1 GB/s up to `low`
    above = math.floor((math.log10(2000.0) - math.log10(low)) / step)
    return {"minimum": 10 ** (math.log10(low) - below * step), "maximum": 10 ** (math.log10(low) + above * step),
            "step": step}


#: The β slider's minimum, maximum and step: 25 GB/s and an H100's 370.8 GB/s are both positions on it.
BETA_GRID = _beta_grid()


def alpha_beta_dashboard() -> Dashboard:
    """Sliders for α (µs), β (GB/s) and the message size; plots t(n) and the effective bandwidth."""
    return Dashboard(
        {
            "alpha_us": log_slider(_("α latency (µs)"), minimum=0.1, maximum=100.0,
                                   value=round(_H100.alpha_s * 1e6, 3)),
            "beta_GBps": log_slider(_("β bandwidth (GB/s)"), value=round(_H100.beta_Bps / 1e9, 3), **BETA_GRID),
            "size": size_slider(_("message size"), min_exp=0, max_exp=34, value_exp=20),
        },
        _AlphaBetaView(),
    )


def link_chooser_dashboard() -> Dashboard:
    """Pick interconnects (one GPU's worth of links) and compare their effective-bandwidth curves."""
    chooser = widgets.SelectMultiple(
        options=list(PER_GPU_CHOICES),
        value=("PCIe Gen4 x16", "PCIe Gen5 x16", "H100: 18 x NVLink 4", "InfiniBand NDR (1 NIC)"),
        rows=9,
        # a plain click on one link drops the others: say how to keep several, on screen and in the tooltip
        description=_("links (Ctrl/Cmd-click: several)"),
        tooltip=_("Ctrl-click (Cmd-click on a Mac) adds or removes one link; Shift-click selects a range; "
                  "a plain click keeps only the link clicked"),
        style={"description_width": "initial"},
        layout=widgets.Layout(width="460px"),  # room for the label AND the longest option, "InfiniBand NDR (1 NIC)"
    )
    return Dashboard(
        {"show_line_rate": widgets.Checkbox(value=True, description=_("show line rates (dotted)")), "links": chooser},
        _ChooserView(),
    )


def alpha_beta_lines(link_id: str = "nvlink4", links: int = 18,
                     sizes: tuple[int, ...] = (4 * 2**10, 2**20, 64 * 2**20, 2**30)) -> str:
    """The alpha-beta readout of ``links`` x ``link_id``: alpha (µs), beta (GB/s per direction), n_1/2 (bytes), then
    the time and effective bandwidth of each message size in ``sizes`` (bytes), one line each."""
    p = linkmodel.link_params(link_id, links=links)
    lines = [_("alpha = {alpha}, beta = {beta} per direction").format(alpha=format_time(p.alpha_s),
                                                                      beta=format_rate(p.beta_Bps)),
             _("n_1/2 = alpha x beta = {size}").format(size=format_size(p.half_bandwidth_bytes))]
    for n in sizes:
        lines.append(_("{size}: t = {time}, effective {rate}").format(
            size=f"{format_size(n):>8}", time=f"{format_time(p.time(n)):>9}",
            rate=f"{format_rate(p.bandwidth(n)):>10}"))
    return localize_numbers("\n".join(lines))
