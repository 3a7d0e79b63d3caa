"""Figures and dashboard renderers for chapters 05 (NVL72, rack scale) and 06 (multi-node fabrics).

Each ``*_view`` function takes the dashboard's control values and returns ``(Figure, html)``.
"""

from __future__ import annotations

import html as _html

import numpy as np
from matplotlib.figure import Figure

from .. import catalog
from ..plots import KIND_COLOURS, new_figure, time_axis
from ..units import format_size, format_time
from . import ecmp
from .builders import fat_tree
from .collectives import allreduce_on_fabric, allreduce_scaling
from .draw import draw_fabric
from .moe import MoEConfig, moe_alltoall_time

__all__ = ["ALGO_COLOURS", "ALGO_LABELS", "allreduce_view", "scaling_figure", "ecmp_figure", "moe_view", "moe_figure"]

ALGO_COLOURS = {"ring": KIND_COLOURS["pcie"], "hierarchical": KIND_COLOURS["infiniband"], "sharp": KIND_COLOURS["nvlink"]}
ALGO_LABELS = {"ring": "flat ring (NCCL rings, one per rail)", "hierarchical": "hierarchical (NVLink + per-rail rings)", "sharp": "in-network reduction (SHARP)"}


def scaling_figure(nodes, nbytes: float, *, width: float = 9.0, **kw) -> tuple[Figure, dict]:
    """All-reduce time and bus bandwidth vs node count for the three algorithms."""
    res = allreduce_scaling(list(nodes), nbytes, **kw)
    fig, (ax1, ax2) = new_figure(width, 4.2, ncols=2)
    for a, rows in res.items():
        t = [r.time_s for r in rows]
        bb = [r.busbw_GBps for r in rows]
        ax1.plot(nodes, t, "o-", color=ALGO_COLOURS[a], label=ALGO_LABELS[a])
        ax2.plot(nodes, bb, "o-", color=ALGO_COLOURS[a], label=ALGO_LABELS[a])
    for ax in (ax1, ax2):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("nodes (8 GPUs each)")
    time_axis(ax1, "y", "all-reduce time")
    ax2.set_ylabel("bus bandwidth, GB/s (nccl-tests definition)")
    ax2.set_ylim(bottom=0)
    ax1.set_title(f"all-reduce of {format_size(nbytes)} per GPU", fontsize=10)
    # below both panels: inside either one it hid points (the flat ring's low busbw at 64 MiB)
    fig.legend(*ax2.get_legend_handles_labels(), fontsize=8, ncols=3, loc="outside lower center")
    return fig, res


def ecmp_figure(links: int = 32, *, sim_mean: tuple | None = None, sim_slowest: tuple | None = None, width: float = 8.0) -> Figure:
    """Closed-form ECMP collision curves against the number of flows hashed onto ``links`` up-links.

    ``sim_mean`` / ``sim_slowest``: optional ``(flows, values)`` from a flow simulation, the mean flow rate and the
    slowest flow's rate as fractions of the link rate; each is drawn with its own marker in the colour of the
    closed-form curve it checks (mean rate: circles; slowest flow: squares).
    """
    m = np.arange(1, 2 * links + 1)
    fig, ax = new_figure(width, 3.6)
    ax.plot(m, [ecmp.collision_probability(int(x), links) for x in m], label="P(a given flow shares its link)", color=KIND_COLOURS["ethernet"])
    ax.plot(m, [ecmp.mean_rate_fraction(int(x), links) for x in m], label="mean rate / link rate", color=KIND_COLOURS["infiniband"])
    def slowest(x: int) -> float:
        pmf = ecmp.max_load_pmf(x, links)
        j = np.arange(1, pmf.size)
        return float(np.sum(pmf[1:] / j))

    ax.plot(m, [slowest(int(x)) for x in m], label="slowest flow: E[1 / max load]", color=KIND_COLOURS["pcie"])
    for sim, marker, colour, label in ((sim_mean, "o", KIND_COLOURS["infiniband"], "simulated: mean rate"),
                                       (sim_slowest, "s", KIND_COLOURS["pcie"], "simulated: slowest flow")):
        if sim is not None:
            xs, ys = sim
            ax.plot(xs, ys, marker, ls="none", markersize=7, markerfacecolor="none", markeredgewidth=1.6, color=colour, label=label)
    ax.axvline(links, color="#999999", ls=":", lw=1)
    ax.set_xlabel(f"flows hashed onto {links} up-links")
    ax.set_ylabel("probability, or rate / link rate")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # outside: the curves fill the axes
    return fig


def allreduce_view(nodes: int, nic: str, oversubscription: float, routing: str, placement: str = "random", algorithm: str = "hierarchical", nbytes: float = 2**30, *, system: str = "dgx-h100", seed: int = 0) -> tuple[Figure, str]:
    """Dashboard of chapter 06: build the fabric, simulate the ring step, draw link loads, report time."""
    link = catalog.get_link(nic)
    sysm = catalog.get_system(system)
    fab = fat_tree(int(nodes), rails=sysm.nics_per_host, port_GBps_dir=link.line_GBps_dir, oversubscription=float(oversubscription))
    est = allreduce_on_fabric(fab, nbytes, algorithm=algorithm, system=system, nic_link=nic, routing=routing, placement=placement, seed=seed)
    base_fab = fat_tree(2, rails=sysm.nics_per_host, port_GBps_dir=link.line_GBps_dir)
    base = allreduce_on_fabric(base_fab, nbytes, algorithm=algorithm, system=system, nic_link=nic, routing=routing, placement=placement, seed=seed)
    eff = est.busbw_GBps / base.busbw_GBps
    fig = Figure(figsize=(9.0, 3.6), layout="constrained")  # no pyplot manager: the dashboard shows it once
    ax = fig.subplots()
    sim = est.sim
    # The fabric's description goes in the readout, not a title: matplotlib lays out and rasterises text glyph
    # by glyph, and a two-line title was ~15 ms of every slider change.
    draw_fabric(fab, ax, sim)
    hot = ""
    if sim is not None:
        tiers = sim.tier_summary()
        up = tiers.get("leaf→spine")
        down = tiers.get("spine→leaf")
        worst = max((up or {}).get("max_flows", 0), (down or {}).get("max_flows", 0))
        share = (
            f"up to <b>{worst}</b> flows hashed onto one leaf–spine cable"
            if routing == "ecmp"
            else f"every flow spread over all up-links, busiest leaf–spine cable at {max((up or {}).get('max_util', 0), (down or {}).get('max_util', 0)):.0%}"
        )
        hot = (
            f"<br>Ring step: slowest flow {sim.min_rate_GBps:.3g} GB/s of {fab.port_GBps_dir:g} GB/s line rate; "
            f"{share} (orange: the hottest cables)."
        )
    else:
        hot = "<br>In-network reduction: each NIC sends its shard once to its leaf switch; the switches reduce (no ring traffic drawn)."
    text = (
        f"<i>{_html.escape(fab.describe())}</i><br>"
        # the NIC named: two NICs of the same line rate (NDR, RoCE 400) give the same numbers, and without
        # its name the readout did not change when the learner switched between them
        f"<b>{ALGO_LABELS[algorithm]}</b> of {format_size(nbytes)} per GPU on {est.gpus} GPUs, "
        f"{_html.escape(link.name)} NICs: "
        f"<b>{format_time(est.time_s)}</b> (inside nodes {format_time(est.intra_s)}, between nodes {format_time(est.inter_s)}; "
        f"latency terms {format_time(est.latency_s)}). Bus bandwidth <b>{est.busbw_GBps:.3g} GB/s</b>; "
        f"scaling efficiency vs 2 nodes <b>{eff:.0%}</b>." + hot
    )
    return fig, text


def moe_figure(cfg: MoEConfig, eps=(8, 16, 32, 64), systems=("dgx-b200", "gb200-nvl72"), *, width: float = 8.0) -> Figure:
    """Time of one MoE all-to-all (dispatch) vs EP size on an 8-GPU domain + InfiniBand and on NVL72."""
    fig, ax = new_figure(width, 3.6)
    styles = {"dgx-b200": KIND_COLOURS["infiniband"], "gb200-nvl72": KIND_COLOURS["nvlink"]}
    for s in systems:
        t = [moe_alltoall_time(cfg, e, s).time_s for e in eps]
        ax.plot(eps, t, "o-", color=styles.get(s, "#555555"), label=catalog.get_system(s).name)
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(eps), [str(e) for e in eps])
    ax.set_xlabel("expert-parallel GPUs (EP)")
    time_axis(ax, "y", "one dispatch all-to-all")
    ax.legend(fontsize=8)
    return fig


def moe_view(hidden: int, tokens: int, experts: int, top_k: int, ep: int = 64, moe_layers: int = 58, bytes_per_elem: float = 2.0) -> tuple[Figure, str]:
    """Dashboard of chapter 05: the MoE all-to-all on an 8-GPU domain + InfiniBand vs one NVL72 domain."""
    cfg = MoEConfig(hidden=int(hidden), tokens=int(tokens), experts=int(experts), top_k=int(top_k), bytes_per_elem=bytes_per_elem, moe_layers=int(moe_layers))
    ep = min(int(ep), cfg.experts)
    rows = []
    fig, (ax1, ax2) = new_figure(9.0, 3.6, ncols=2)
    names, per_layer, per_step, colours = [], [], [], []
    for s, colour in (("dgx-b200", KIND_COLOURS["infiniband"]), ("gb200-nvl72", KIND_COLOURS["nvlink"])):
        one = moe_alltoall_time(cfg, ep, s)
        layer = 4 * one.time_s
        names.append("8-GPU domain\n+ InfiniBand" if s == "dgx-b200" else "72-GPU domain\n(NVL72)")
        per_layer.append(layer)
        per_step.append(layer * cfg.moe_layers)
        colours.append(colour)
        rows.append(
            f"<tr><td>{_html.escape(catalog.get_system(s).name)}</td><td>{format_size(one.nvlink_bytes)}</td>"
            f"<td>{format_size(one.network_bytes)}</td><td>{format_time(one.time_s)}</td><td>{format_time(layer)}</td>"
            f"<td>{format_time(layer * cfg.moe_layers)}</td><td>{one.bottleneck}</td></tr>"
        )
    ax1.bar(names, np.array(per_layer) * 1e3, color=colours)
    ax1.set_ylabel("ms per MoE layer (4 all-to-alls)")
    ax1.set_ylim(bottom=0)
    ax2.bar(names, per_step, color=colours)
    ax2.set_ylabel("seconds per step (all MoE layers)")
    ax2.set_ylim(bottom=0)
    # The configuration heads the readout rather than the figure: matplotlib lays out and rasterises text glyph by
    # glyph, and the figure is redrawn on every slider change.
    table = (
        f"<p><b>EP = {ep} GPUs</b>, {cfg.tokens} tokens/GPU, hidden {cfg.hidden}, top-{cfg.top_k} of {cfg.experts} experts, "
        f"{cfg.moe_layers} MoE layers</p>"
        "<table><tr><th>system</th><th>NVLink bytes/GPU</th><th>network bytes/GPU</th><th>one all-to-all</th>"
        "<th>per layer (4)</th><th>per step</th><th>bound by</th></tr>" + "".join(rows) + "</table>"
        f"<p>The NVL72 domain is <b>{per_layer[0] / per_layer[1]:.1f}×</b> faster for this layer.</p>"
    )
    return fig, table
