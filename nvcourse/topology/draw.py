"""Drawings of interconnect graphs that show structure: the DGX-1 cube, GPUs and NVSwitch chips in two rows,
the NVL72's trays, the PCIe tree.

Nodes sit at their ``pos`` layout hints (set by the builders and by the ``topo -m`` reader). Edge width grows
with the bundle's bandwidth (GB/s per direction); colour says the link family. With ``pattern=`` the edges are
coloured by utilisation when every GPU injects at the pattern's maximal rate (computed by
:func:`nvcourse.topology.metrics.busiest_links`, not here), and the busiest ones are labelled.

The NVL72 (1,296 GPU-switch links) is drawn per tray: one line per compute tray x switch tray bundle
(4 GPUs x 2 chips = 8 links), which is what the rack's cable cartridges really group.
"""

from __future__ import annotations

import html
import math
from collections import defaultdict
from dataclasses import dataclass

import matplotlib.pyplot as plt
import networkx as nx
import numpy as np
from matplotlib.collections import LineCollection, PatchCollection
from matplotlib.colors import Normalize, to_rgba
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyBboxPatch, Patch, Rectangle

from ..i18n import language, localize_numbers
from ..i18n import translate as _
from ..plots import KIND_COLOURS
from . import metrics

__all__ = [
    "draw_topology",
    "topology_figure",
    "legend_html",
    "LegendEntry",
    "save_topology",
    "tray_graph",
    "NODE_STYLE",
]

#: kind -> (marker, face colour, size)
NODE_STYLE = {
    "gpu": ("s", "#76B900", 620),
    "nvswitch": ("D", "#0072B2", 520),
    "pcie_switch": ("o", "#E69F00", 380),
    "host_bridge": ("h", "#F0E442", 380),
    "cpu": ("8", "#999999", 700),
    "nic": ("^", "#CC79A7", 420),
}
_CMAP = "YlOrRd"


def _kind_name(kind: str) -> str:
    """The legend's name of a node kind (a key of :data:`NODE_STYLE`) in the current language."""
    return {"gpu": _("GPU"), "nvswitch": _("NVSwitch chip"), "pcie_switch": _("PCIe switch"),
            "host_bridge": _("root port"), "cpu": _("CPU / NUMA node"), "nic": _("NIC")}.get(kind, kind)


def _tray_note() -> str:
    """The note under an NVL72 drawing (one line per bundle of links between two trays)."""
    return _("one line per compute tray x switch tray bundle")


@dataclass(frozen=True)
class LegendEntry:
    """One line of a topology legend, drawn by matplotlib (:func:`draw_topology`) or as HTML (:func:`legend_html`).

    ``kind``: ``"marker"`` (a node shape), ``"line"`` (a link family or a bandwidth, ``width`` in points),
    ``"patch"`` (a colour) or ``"text"`` (a note).
    """

    label: str
    kind: str
    colour: str | tuple = "#555555"
    marker: str = ""
    width: float = 2.5
    dashed: bool = False


#: The legend's name for links inside a CPU and between sockets, which the graphs draw without a bandwidth; not
#: "not limiting": NCCL's model rates the CPU-to-CPU link (16 GB/s on AMD hosts) and a ring crossing it is capped there.
CPU_LINK_LABEL = "inside CPU / CPU-CPU (no limit drawn)"


def _cpu_link_name(label: str) -> str:
    """``label`` for the CPU links in the current language (the default, :data:`CPU_LINK_LABEL`, translated)."""
    return _("inside CPU / CPU-CPU (no limit drawn)") if label == CPU_LINK_LABEL else label


def _colour_bar_label(pattern: str, rate: float) -> str:
    return localize_numbers(_("link utilisation at the maximal {pattern} rate ({rate} GB/s per GPU per "
                              "direction)").format(pattern=pattern, rate=f"{rate:.4g}"))


def _edge_family(data: dict) -> str:
    link = data.get("link") or ""
    kind = data.get("kind") or ""
    if link.startswith("nvlink") or kind == "nvlink":
        return "nvlink"
    if link.startswith("pcie") or kind == "pcie":
        return "pcie"
    return "cpu"


def tray_graph(G: nx.Graph) -> tuple[nx.Graph, dict[str, str]]:
    """Collapse an NVL72 graph to trays: ``CT<i>`` compute trays, ``ST<j>`` switch trays.

    Returns the tray graph (bundles add their ``count`` and ``GBps_dir``) and the node -> tray map.
    """
    member: dict[str, str] = {}
    T = nx.Graph(**G.graph)
    groups: dict[str, list[str]] = defaultdict(list)
    for n, d in G.nodes(data=True):
        prefix = "CT" if d["kind"] == "gpu" else "ST"
        t = f"{prefix}{d.get('tray', 0)}"
        member[n] = t
        groups[t].append(n)
    for t, nodes in groups.items():
        xs = [G.nodes[n]["pos"][0] for n in nodes]
        y = G.nodes[nodes[0]]["pos"][1]
        T.add_node(t, kind="gpu" if t.startswith("CT") else "nvswitch", members=sorted(nodes, key=metrics.natural_key),
                   pos=(sum(xs) / len(xs), y), span=(min(xs), max(xs)))
    for u, v, d in G.edges(data=True):
        a, b = member[u], member[v]
        if T.has_edge(a, b):
            T.edges[a, b]["count"] += d.get("count", 1)
            T.edges[a, b]["GBps_dir"] += d.get("GBps_dir") or 0.0
        else:
            T.add_edge(a, b, link=d.get("link"), count=d.get("count", 1), GBps_dir=d.get("GBps_dir") or 0.0)
    return T, member


def _utilisation(G: nx.Graph, pattern: str | None, member: dict[str, str] | None,
                 report: tuple[float, list[dict]] | None = None) -> tuple[dict, float]:
    """Utilisation per undirected edge of the drawn graph (aggregated to trays if ``member``) and the rate."""
    if pattern is None:
        return {}, math.nan
    rate, rows = report if report is not None else metrics.pattern_report(G, pattern)
    if member is None:
        return {frozenset((r["a"], r["b"])): r["utilisation"] for r in rows}, rate
    load: dict[frozenset, float] = defaultdict(float)
    cap: dict[frozenset, float] = defaultdict(float)
    for r in rows:
        key = frozenset((member[r["a"]], member[r["b"]]))
        load[key] += r["load_GBps_dir"]
        cap[key] += r["capacity_GBps_dir"]
    return {k: load[k] / cap[k] for k in load if cap[k]}, rate


def draw_topology(G: nx.Graph, ax=None, *, pattern: str | None = None, top: int = 4, title: str | None = None,
                  legend: bool = True, figsize: tuple[float, float] = (9.0, 4.6),
                  report: tuple[float, list[dict]] | None = None, cpu_label: str = CPU_LINK_LABEL) -> Figure:
    """Draw a topology graph; return the Figure.

    Args:
        G: a graph from :func:`~nvcourse.topology.build_system_graph` or from the ``topo -m`` reader.
        pattern: ``'ring'``, ``'all-to-all'`` or ``'one-to-all'`` to colour edges by utilisation at the
            pattern's maximal rate and label the ``top`` busiest bundles.
        title: figure title (default: the system name).
        legend: draw the legend and, with ``pattern``, the utilisation colour bar.
        report: ``metrics.pattern_report(G, pattern)`` if already computed (saves the routing).
        cpu_label: the legend's name for the links inside a CPU and between sockets (drawn without a bandwidth).
    """
    if ax is None:
        fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    else:
        fig = ax.figure
    is_trays = G.graph.get("topology") == "nvl72"
    name = title if title is not None else G.graph.get("name", "")
    if is_trays and title is None:
        name += "\n" + _tray_note()
    entries, rate = _draw(G, ax, pattern=pattern, top=top, title=name, report=report, cpu_label=cpu_label)
    if legend:
        ax.legend(handles=[_mpl_handle(e) for e in entries], loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8,
                  frameon=False)
        if pattern is not None:
            norm = Normalize(0.0, 1.0)
            sm = plt.cm.ScalarMappable(norm=norm, cmap=plt.get_cmap(_CMAP))
            cb = fig.colorbar(sm, ax=ax, shrink=0.6, pad=0.01, location="bottom", aspect=40)
            cb.set_label(_colour_bar_label(pattern, rate), fontsize=8)
            cb.set_ticks([0.0, 0.25, 0.5, 0.75, 1.0], labels=["0 %", "25 %", "50 %", "75 %", "100 %"], fontsize=8)
    return fig


def topology_figure(G: nx.Graph, *, pattern: str | None = None, top: int = 4, title: str | None = None,
                    figsize: tuple[float, float] = (8.0, 4.4),
                    report: tuple[float, list[dict]] | None = None,
                    cpu_label: str = CPU_LINK_LABEL) -> tuple[Figure, str]:
    """The picture of :func:`draw_topology` for a dashboard: ``(figure, legend as HTML)``.

    The legend and the utilisation colour bar go into the HTML (next to the readout) instead of the
    image: text is the most expensive thing matplotlib draws, and a legend drawn by the browser is
    sharp at any zoom and can be translated. The figure has no pyplot manager (nothing to close).
    """
    fig = Figure(figsize=figsize, layout="constrained")
    ax = fig.subplots()
    name = title if title is not None else G.graph.get("name", "")
    entries, rate = _draw(G, ax, pattern=pattern, top=top, title=name, report=report, cpu_label=cpu_label)
    if G.graph.get("topology") == "nvl72":
        entries.append(LegendEntry(_tray_note(), "text"))
    return fig, legend_html(entries, colour_bar=None if pattern is None else _colour_bar_label(pattern, rate))


def _mpl_handle(entry: LegendEntry):
    if entry.kind == "marker":
        return Line2D([], [], marker=entry.marker, ls="", markerfacecolor=entry.colour, markeredgecolor="black",
                      markersize=9, label=entry.label)
    if entry.kind == "line":
        return Line2D([], [], color=entry.colour, ls="--" if entry.dashed else "-", lw=entry.width, label=entry.label)
    if entry.kind == "patch":
        return Patch(facecolor=entry.colour, edgecolor="black", label=entry.label)
    return Line2D([], [], ls="", label=entry.label)


# CSS shapes for matplotlib's markers (clip-path polygons, in % of a 12 px box)
_CSS_SHAPES = {
    "s": "none",
    "D": "polygon(50% 0, 100% 50%, 50% 100%, 0 50%)",
    "o": "circle(50%)",
    "h": "polygon(50% 0, 93% 25%, 93% 75%, 50% 100%, 7% 75%, 7% 25%)",
    "8": "polygon(30% 0, 70% 0, 100% 30%, 100% 70%, 70% 100%, 30% 100%, 0 70%, 0 30%)",
    "^": "polygon(50% 0, 100% 100%, 0 100%)",
}


def legend_html(entries: list[LegendEntry], colour_bar: str | None = None) -> str:
    """A legend as one wrapped row of HTML swatches; ``colour_bar``: the caption of a utilisation scale
    (the colours of the drawing's colormap, 0 to 100 %)."""
    items = []
    for e in entries:
        colour = html.escape(_css_colour(e.colour))
        if e.kind == "marker":
            swatch = (f"<span style='display:inline-block;width:12px;height:12px;background:{colour};"
                      f"clip-path:{_CSS_SHAPES.get(e.marker, 'none')};vertical-align:middle'></span>")
        elif e.kind == "line":
            px = max(1.0, e.width * 100 / 72)  # points at the figures' 100 dpi
            swatch = (f"<span style='display:inline-block;width:24px;border-top:{px:.1f}px "
                      f"{'dashed' if e.dashed else 'solid'} {colour};vertical-align:middle'></span>")
        elif e.kind == "patch":
            swatch = (f"<span style='display:inline-block;width:12px;height:12px;background:{colour};"
                      "border:1px solid black;vertical-align:middle'></span>")
        else:
            swatch = ""
        label = html.escape(e.label) if e.kind != "text" else f"<i>{html.escape(e.label)}</i>"
        items.append(f"<span style='margin-right:14px;white-space:nowrap'>{swatch} {label}</span>")
    if colour_bar is not None:
        cmap = plt.get_cmap(_CMAP)
        stops = ", ".join(f"{_css_colour(cmap(0.15 + 0.85 * u))} {100 * u:.0f}%" for u in np.linspace(0, 1, 11))
        items.append(
            "<span style='white-space:nowrap'>0 % <span style='display:inline-block;width:140px;height:10px;"
            f"background:linear-gradient(to right, {stops});border:1px solid #999;vertical-align:middle'></span>"
            f" 100 %</span>: {html.escape(colour_bar)}"
        )
    # items joined by spaces: without a space between two nowrap spans the whole legend is one unbreakable
    # line, and the NVL72 readout ran 265 px past the notebook's edge at 1400 px
    return "<div class='nvcourse-legend' style='font-size:85%;line-height:1.9'>" + " ".join(items) + "</div>"


def _css_colour(colour) -> str:
    r, g, b, a = to_rgba(colour)
    return f"rgba({round(255 * r)},{round(255 * g)},{round(255 * b)},{a:.3g})"


def _draw(G: nx.Graph, ax, *, pattern: str | None, top: int, title: str,
          report: tuple[float, list[dict]] | None, cpu_label: str = CPU_LINK_LABEL) -> tuple[list[LegendEntry], float]:
    """Draw everything but the legend and the colour bar; return the legend's entries and the pattern's rate."""
    member = None
    D = G
    if G.graph.get("topology") == "nvl72":
        D, member = tray_graph(G)
    util, rate = _utilisation(G, pattern, member, report)
    pos = {n: d["pos"] for n, d in D.nodes(data=True)}
    bws = [d.get("GBps_dir") for *_, d in D.edges(data=True) if d.get("GBps_dir")]
    max_bw = max(bws) if bws else 1.0
    cmap = plt.get_cmap(_CMAP)
    busiest, note = _pick_busiest(util, top)
    _draw_edges(ax, D, pos, util, busiest, cmap, max_bw, trays=member is not None)
    if member is None and D.number_of_edges() <= 24 and not util:  # small point-to-point or tree graphs
        _edge_labels(ax, D, pos)
    if member is not None:
        _draw_trays(ax, D)
    else:
        _draw_nodes(ax, D, pos)
    ax.autoscale_view()
    entries = _legend_entries(D, bws, max_bw, trays=member is not None, util=util, pattern=pattern, note=note,
                              cmap=cmap, cpu_label=cpu_label)
    ax.set_title(title, fontsize=10, y=1.0)  # a fixed y skips matplotlib's search for tick labels above the axes
    ax.set_axis_off()
    ax.margins(0.08)
    return entries, rate


def _draw_edges(ax, D: nx.Graph, pos: dict, util: dict, busiest: list, cmap, max_bw: float, *, trays: bool) -> None:
    """Every bundle as a line (width: bandwidth; colour: link family or, with a pattern, utilisation); the
    busiest outlined in black and labelled with their utilisation."""
    busiest_keys = {k for k, _ in busiest}
    # one colormap call for every utilisation (a call per edge was a fifth of building the NVL72 picture)
    util_keys = list(util)
    util_colour = dict(zip(util_keys, cmap(0.15 + 0.85 * np.array([util[k] for k in util_keys])))) if util else {}
    # One LineCollection per layer instead of one Line2D per bundle: a redraw of the NVL72 (162 bundles)
    # or a DGX (up to 48) costs a few draw calls, not hundreds of artists.
    layers: dict[str, dict[str, list]] = {name: {"segments": [], "colors": [], "linewidths": [], "linestyles": []}
                                          for name in ("edges", "outline", "busiest")}

    def add(layer: str, segment, colour, alpha: float, width: float, style: str) -> None:
        d = layers[layer]
        d["segments"].append(segment)
        d["colors"].append(to_rgba(colour, alpha))
        d["linewidths"].append(width)
        d["linestyles"].append({"-": "solid", ":": "dotted", "--": "dashed"}[style])

    for u, v, d in D.edges(data=True):
        segment = [pos[u], pos[v]]
        bw = d.get("GBps_dir")
        width = _width(bw, max_bw, trays)
        style = "-" if bw else (":" if not d.get("unbounded") else "--")
        colour = KIND_COLOURS.get(_edge_family(d), "#555555")
        alpha = 0.85
        key = frozenset((u, v))
        if util:
            if key in util:
                colour = util_colour[key]
            else:
                colour, alpha = "#cccccc", 0.6
        if trays and not util:
            alpha = 0.35
        if key in busiest_keys:
            add("busiest", segment, colour, alpha, width, style)
            add("outline", segment, "black", 0.9, width + 2.2, "-")
        else:
            add("edges", segment, colour, alpha, width, style)
    for zorder, name in ((1, "edges"), (1.5, "outline"), (2, "busiest")):
        d = layers[name]
        if d["segments"]:
            ax.add_collection(LineCollection(d.pop("segments"), capstyle="round", zorder=zorder, **d))
    for key, u_val in busiest:
        a, b = tuple(key)
        (x1, y1), (x2, y2) = pos[a], pos[b]
        ax.text((x1 + x2) / 2, (y1 + y2) / 2, _percent(u_val), fontsize=8, ha="center", va="center", zorder=5,
                bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="black", lw=0.6))


def _edge_labels(ax, D: nx.Graph, pos: dict) -> None:
    """NVLink counts (NV12) on GPU-GPU and multi-link bundles, GB/s on PCIe links."""
    for u, v, d in D.edges(data=True):
        if d.get("GBps_dir") and (
            D.nodes[u]["kind"] == "gpu"
            and D.nodes[v]["kind"] == "gpu"
            or d.get("count", 1) > 1
            or _edge_family(d) == "pcie"
        ):
            (x1, y1), (x2, y2) = pos[u], pos[v]
            label = f"{d['GBps_dir']:g}" if _edge_family(d) == "pcie" else f"NV{d.get('count', 1)}"
            # NVLink: a third of the way along, not half: crossing links (the DGX-1's diagonals) share a
            # midpoint, and their labels were drawn on top of each other. PCIe trees do not cross: halfway,
            # clear of the node names under the switches
            f = 0.5 if _edge_family(d) == "pcie" else 1 / 3
            ax.text(
                x1 + (x2 - x1) * f,
                y1 + (y2 - y1) * f,
                label,
                fontsize=7,
                ha="center",
                va="center",
                color="#333333",
                zorder=4,
                bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none", alpha=0.8),
            )


def _draw_nodes(ax, D: nx.Graph, pos: dict) -> None:
    """Each node kind with its marker; a name inside the marker when it fits, else below it on white."""
    for kind, (marker, face, size) in NODE_STYLE.items():
        nodes = [n for n, k in D.nodes(data="kind") if k == kind]
        if not nodes:
            continue
        xs = [pos[n][0] for n in nodes]
        ys = [pos[n][1] for n in nodes]
        ax.scatter(xs, ys, marker=marker, s=size, c=face, edgecolors="black", linewidths=0.8, zorder=3)
        for n in nodes:
            label = D.nodes[n].get("label", n).replace("NVSwitch", "NVS")
            fontsize = 6.5 if len(label) > 5 else 7.5
            widest = max(len(line) for line in label.splitlines())
            if widest * 0.6 * fontsize <= 0.85 * size**0.5:  # fits inside the marker (its side is √s points)
                ax.text(*pos[n], label, fontsize=fontsize, ha="center", va="center", zorder=4)
            else:  # below it, on white: written over a small marker ("NIC0 / mlx5_1") it could not be read
                ax.annotate(label, pos[n], xytext=(0, -(size**0.5) / 2 - 1), textcoords="offset points",
                            fontsize=fontsize, ha="center", va="top", zorder=4, clip_on=False,
                            bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none", alpha=0.85))


def _legend_entries(D: nx.Graph, bws: list, max_bw: float, *, trays: bool, util: dict, pattern: str | None,
                    note: str, cmap, cpu_label: str = CPU_LINK_LABEL) -> list[LegendEntry]:
    """The legend: node kinds, link families (without a pattern), up to three line widths, the busiest colour."""
    entries = []
    kinds = {k for _n, k in D.nodes(data="kind")}
    for kind, (marker, face, _size) in NODE_STYLE.items():
        if kind in kinds:
            entries.append(LegendEntry(_kind_name(kind), "marker", face, "s" if trays else marker))
    families = {_edge_family(d) for *_, d in D.edges(data=True)}
    for fam, name in (("nvlink", "NVLink"), ("pcie", "PCIe"), ("cpu", _cpu_link_name(cpu_label))):
        if fam in families and not util:
            entries.append(LegendEntry(name, "line", KIND_COLOURS.get(fam, "#555555"), dashed=fam == "cpu"))
    distinct = sorted(set(bws))
    if len(distinct) > 3:
        distinct = [distinct[0], distinct[len(distinct) // 2], distinct[-1]]
    for bw in distinct:
        per_direction = localize_numbers(_("{rate} GB/s per direction").format(rate=f"{bw:g}"))
        entries.append(LegendEntry(per_direction, "line", "#555555", width=_width(bw, max_bw, trays)))
    if util:
        entries.append(LegendEntry(_("busiest ({pattern})").format(pattern=pattern), "patch", to_rgba(cmap(1.0))))
        if note:
            entries.append(LegendEntry(note, "text"))
    return entries


def _width(bw: float | None, max_bw: float, trays: bool) -> float:
    if not bw:
        return 1.0
    return (0.5 + 1.3 * bw / max_bw) if trays else (0.8 + 5.0 * bw / max_bw)


def _pick_busiest(util: dict, top: int) -> tuple[list, str]:
    """The bundles to label: all those tied at the maximum (when few), else the ``top`` busiest."""
    if not util:
        return [], ""
    ranked = sorted(util.items(), key=lambda kv: -kv[1])
    peak = ranked[0][1]
    tied = [kv for kv in ranked if kv[1] >= peak - 1e-6]
    if len(tied) == len(ranked) and len(ranked) > 1:
        return [], _("every link equally busy ({peak})").format(peak=_percent(peak))
    if len(tied) > 12:
        return [], _("{count} links tied at {peak}").format(count=len(tied), peak=_percent(peak))
    return (tied if len(tied) >= top else ranked[:top]), ""


def _percent(fraction: float) -> str:
    """``0.47`` as ``47%`` (English, as Python writes it) or ``47 %`` (French)."""
    return f"{fraction:.0%}" if language() != "fr" else f"{100 * fraction:.0f}\u00a0%"


def _draw_trays(ax, T: nx.Graph) -> None:
    trays, chips = [], []
    for n, d in T.nodes(data=True):
        x0, x1 = d["span"]
        y = d["pos"][1]
        is_gpu = d["kind"] == "gpu"
        face = NODE_STYLE["gpu" if is_gpu else "nvswitch"][1]
        trays.append(FancyBboxPatch((x0 - 0.45, y - 0.6), x1 - x0 + 0.9, 1.2, boxstyle="round,pad=0.05"))
        members = d["members"]
        width = (x1 - x0 + 0.9) / len(members)
        chips += [Rectangle((x0 - 0.45 + i * width + 0.08, y - 0.45), width - 0.16, 0.9, fc=face)
                  for i in range(len(members))]
        ax.text(d["pos"][0], y + (-0.9 if is_gpu else 0.9), n[2:], fontsize=7, ha="center",
                va="top" if is_gpu else "bottom", zorder=4)
    # one name per row, its trays numbered (27 short labels read better than 27 rotated phrases and draw faster)
    left = min(d["span"][0] for _, d in T.nodes(data=True)) - 0.9
    for kind, name in (("gpu", _("compute trays")), ("nvswitch", _("switch trays"))):
        ys = [d["pos"][1] for _, d in T.nodes(data=True) if d["kind"] == kind]
        if ys:
            # not clipped to the axes: laid out with them instead (clipped, a right-aligned label left of the
            # first tray was cut to "witch trays" whenever the axes reached the figure's edge)
            ax.text(left, ys[0], name, fontsize=8, ha="right", va="center", zorder=4, clip_on=False)
    # 27 trays and their 90 chips (72 GPUs, 18 NVSwitch chips) as two collections: two artists to draw, not 117
    ax.add_collection(PatchCollection(trays, facecolor="white", edgecolor="black", linewidth=0.8, zorder=2.5))
    ax.add_collection(PatchCollection(chips, match_original=True, edgecolor="black", linewidth=0.4, zorder=3))


def save_topology(G: nx.Graph, path: str, **kwargs) -> None:
    """Draw and write to ``path`` (PNG, SVG or PDF by extension)."""
    fig = draw_topology(G, **kwargs)
    try:
        fig.savefig(path, dpi=120)
    finally:
        plt.close(fig)
