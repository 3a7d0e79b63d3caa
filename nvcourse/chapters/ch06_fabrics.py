"""Chapter 06 (multi-node fabrics): figures and the fabric dashboard's renderer.

Each ``*_view`` function takes the dashboard's control values and returns ``(Figure, html)``.
"""

from __future__ import annotations

import html as _html

import numpy as np
from matplotlib.figure import Figure

from .. import catalog, costmodel
from ..fabric import data, ecmp
from ..fabric.builders import fat_tree, superpod
from ..fabric.collectives import allreduce_on_fabric, allreduce_scaling
from ..fabric.draw import draw_fabric
from ..i18n import language, localize_numbers, ngettext, number, whole
from ..i18n import translate as _
from ..plots import ALGO_COLOURS, KIND_COLOURS, new_figure, time_axis
from ..tables import table_html
from ..units import format_size, format_time

__all__ = ["ALGO_LABELS", "ROUTING_CHOICES", "ROUTING_NAMES", "allreduce_view", "cable_sharing", "routing_title",
           "scaling_figure", "ecmp_figure", "fabric_dashboard", "scale_out_links_lines", "superpod_lines",
           "layout_title", "ecmp_line", "first_faster_line", "oversubscription_lines"]

#: Legend text of each algorithm of :func:`nvcourse.fabric.allreduce_scaling` (colours:
# :data:`nvcourse.plots.ALGO_COLOURS`). The labels below are read in the language the kernel has when the module
# is imported (a kernel speaks one language: NVCOURSE_LANG is set before it starts).
ALGO_LABELS = {
    "ring": _("NCCL ring (flat, one per rail)"),
    "tree": _("NCCL tree (chain in node, double binary tree across)"),
    "hierarchical": _("hierarchical, phases in series (course's; not NCCL's)"),
    "sharp": _("SHARP / CollNet (switches add; pipelined)"),
}
#: Marker and line style of each algorithm: the ring's blue and the tree's green print alike in greyscale.
ALGO_STYLES = {"ring": "o-", "tree": "s--", "hierarchical": "^-.", "sharp": "D:"}
#: Routing a fabric offers, by NIC kind: InfiniBand switches follow the routes its subnet manager computed
#: (deterministic, by destination), or adaptive routing; Ethernet switches hash each flow (ECMP), or spray packets.
#: Short names of the simulator's routings, for figure titles.
ROUTING_NAMES = {"ecmp": _("ECMP hashing (Ethernet)"), "dmodk": _("static routes (InfiniBand)"),
                 "ideal": _("adaptive routing")}
ROUTING_CHOICES = {
    "infiniband": ((_("static routes from the subnet manager (D-mod-k)"), "dmodk"),
                   (_("adaptive routing (AR)"), "ideal")),
    "ethernet": ((_("per-flow ECMP hashing"), "ecmp"), (_("packet spraying / adaptive (e.g. Spectrum-X)"), "ideal")),
}


def _pct(fraction: float, spec: str = ".0%") -> str:
    """``0.85`` as ``85%`` (English, as Python writes it with ``spec``) or ``85 %`` (French)."""
    return format(fraction, spec) if language() != "fr" else number(100 * fraction, spec.replace("%", "f")) + "\u00a0%"


def _time(seconds: float) -> str:
    return localize_numbers(format_time(seconds))


def _rate(GBps: float) -> str:
    """A rate in GB/s with three significant figures (``{:.3g}``), in the current language's style."""
    return number(GBps, ".3g")


def scaling_figure(nodes, nbytes: float, *, width: float = 9.0, **kw) -> tuple[Figure, dict]:
    """All-reduce time and bus bandwidth vs node count for the three algorithms."""
    res = allreduce_scaling(list(nodes), nbytes, **kw)
    fig, (ax1, ax2) = new_figure(width, 4.2, ncols=2)
    for a, rows in res.items():
        t = [r.time_s for r in rows]
        bb = [r.busbw_GBps for r in rows]
        style = ALGO_STYLES.get(a, "o-")
        ax1.plot(nodes, t, style, color=ALGO_COLOURS[a], label=ALGO_LABELS[a])
        ax2.plot(nodes, bb, style, color=ALGO_COLOURS[a], label=ALGO_LABELS[a])
    for ax in (ax1, ax2):
        ax.set_xscale("log", base=2)
        ax.set_xlabel(_("nodes (8 GPUs each)"))
    time_axis(ax1, "y", _("all-reduce time"))
    ax2.set_ylabel(_("bus bandwidth, GB/s (nccl-tests definition)"))
    ax2.set_ylim(bottom=0)
    ax1.set_title(_("all-reduce of {size} per GPU").format(size=localize_numbers(format_size(nbytes))), fontsize=10)
    # below both panels: inside either one it hid points (the flat ring's low busbw at 64 MiB)
    fig.legend(*ax2.get_legend_handles_labels(), fontsize=8, ncols=3, loc="outside lower center")
    return fig, res


def ecmp_figure(
    links: int = 32, *, sim_mean: tuple | None = None, sim_slowest: tuple | None = None, width: float = 8.0
) -> Figure:
    """Closed-form ECMP collision curves against the number of flows hashed onto ``links`` up-links.

    ``sim_mean`` / ``sim_slowest``: optional ``(flows, values)`` from a flow simulation, the mean flow rate and the
    slowest flow's rate as fractions of the link rate; each is drawn with its own marker in the colour of the
    closed-form curve it checks (mean rate: circles; slowest flow: squares).
    """
    m = np.arange(1, 2 * links + 1)
    fig, ax = new_figure(width, 3.6)
    ax.plot(
        m,
        [ecmp.collision_probability(int(x), links) for x in m],
        label=_("P(a given flow shares its link)"),
        color=KIND_COLOURS["ethernet"],
    )
    ax.plot(
        m,
        [ecmp.mean_rate_fraction(int(x), links) for x in m],
        label=_("mean rate / link rate"),
        color=KIND_COLOURS["infiniband"],
    )

    def slowest(x: int) -> float:
        pmf = ecmp.max_load_pmf(x, links)
        j = np.arange(1, pmf.size)
        return float(np.sum(pmf[1:] / j))

    ax.plot(m, [slowest(int(x)) for x in m], label=_("slowest flow: E[1 / max load]"), color=KIND_COLOURS["pcie"])
    for sim, marker, colour, label in ((sim_mean, "o", KIND_COLOURS["infiniband"], _("simulated: mean rate")),
                                       (sim_slowest, "s", KIND_COLOURS["pcie"], _("simulated: slowest flow"))):
        if sim is not None:
            xs, ys = sim
            ax.plot(
                xs,
                ys,
                marker,
                ls="none",
                markersize=7,
                markerfacecolor="none",
                markeredgewidth=1.6,
                color=colour,
                label=label,
            )
    ax.axvline(links, color="#999999", ls=":", lw=1)
    ax.set_xlabel(_("flows hashed onto {links} up-links").format(links=links))
    ax.set_ylabel(_("probability, or rate / link rate"))
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # outside: the curves fill the axes
    return fig


def _above_100(eff: float, est, base) -> str:
    """Why a bus-bandwidth ratio can pass 100 %: busbw = algbw × 2(p−1)/p, and that factor grows with p."""
    if eff <= 1.0:
        return ""
    return _(" Efficiency above 100 %: bus bandwidth is algbw (algorithm bandwidth: the buffer's size ÷ the time) × "
             "2(p−1)/p, and that factor grows from {base} on {gpus} GPUs to {here} here; the time is {ratio}× the "
             "2-node time.").format(
        base=number(2 * (base.gpus - 1) / base.gpus, ".2f"), gpus=base.gpus,
        here=number(2 * (est.gpus - 1) / est.gpus, ".2f"), ratio=number(est.time_s / base.time_s, ".2f"))


#: The switch-to-switch tiers of a fat-tree, both directions of each, with the name the readout gives them.
_SWITCH_TIERS = ((("leaf→spine", "spine→leaf"), _("leaf–spine")), (("spine→core", "core→spine"), _("spine–core")))


def _busiest_cable(sim) -> tuple[int, float, str, bool]:
    """The most flows on one switch-to-switch cable over every tier (leaf–spine and, on three levels, spine–core),
    the busiest such cable's utilisation, the tier holding the most flows, and whether the fabric has a core tier."""
    tiers = sim.tier_summary()
    worst, busiest, where, three = 0, 0.0, _SWITCH_TIERS[0][1], False
    for names, label in _SWITCH_TIERS:
        found = [tiers[n] for n in names if n in tiers]
        three = three or (bool(found) and label == _SWITCH_TIERS[1][1])
        flows = max((t.get("max_flows", 0) for t in found), default=0)
        busiest = max([busiest] + [t.get("max_util", 0.0) for t in found])
        if flows > worst:
            worst, where = flows, label
    return worst, busiest, where, three


def cable_sharing(sim, routing: str) -> str:
    """How the step's flows share the switch-to-switch cables, in words: the most flows on one cable (hashed or
    static routes), or the busiest cable's load (adaptive routing, where every flow is spread over all up-links).
    Every tier counts (a three-level fabric's spine–core cables too), and there the tier is named."""
    worst, busiest, where, three = _busiest_cable(sim)
    if worst == 0 or busiest == 0:
        return _("no flow crosses a leaf–spine cable")
    if routing not in ("ecmp", "dmodk"):
        return _("every flow spread over all up-links, busiest cable at {load}").format(load=_pct(busiest))
    if routing == "ecmp":
        text = ngettext("up to {n} flow hashed onto one cable", "up to {n} flows hashed onto one cable",
                        worst).format(n=worst)
    else:
        text = ngettext("up to {n} flow routed onto one cable", "up to {n} flows routed onto one cable",
                        worst).format(n=worst)
    return text + (f" ({where})" if three else "")


def routing_title(routing: str, sim) -> str:
    """A short figure title for one routing of the same ring step: the slowest flow and how cables are shared."""
    return _("{routing}: slowest flow {rate} GB/s\n{sharing}").format(
        routing=ROUTING_NAMES[routing], rate=_rate(sim.min_rate_GBps), sharing=cable_sharing(sim, routing))


def _step_text(est, fab, routing: str, algorithm: str) -> str:
    """The readout's detail line about the network: the simulated step, or SHARP's in-network reduction."""
    sim = est.sim
    if sim is None:
        return _("In-network reduction: each NIC sends its shard once to its leaf switch; the switches reduce "
                 "(no ring traffic drawn).")
    step = (_("Ring step across nodes") if algorithm != "tree" else
            _("Network rate, from the ring-ordered node pairs (the tree's flows are node pairs too; their own "
              "pattern is not simulated)"))
    return _("{step}: slowest flow {rate} GB/s of {line} GB/s line rate; {sharing} (thickest lines, in orange: "
             "the hottest cables).").format(step=step, rate=_rate(sim.min_rate_GBps),
                                            line=number(fab.port_GBps_dir, "g"), sharing=cable_sharing(sim, routing))


def _how_parts_add(est, algorithm: str) -> str:
    """One sentence on how the two parts of the time make the whole, as the fabric model composes them: the tree
    reports its NVLink chain alone and what the network adds to it; the ring the same with a network as fast as NVLink;
    the hierarchical scheme its phases in series; SHARP its two phases, which overlap (pipelined)."""
    intra, inter = _time(est.intra_s), _time(est.inter_s)
    if algorithm == "sharp":
        text = _("The two overlap: NVLink and network phases run pipelined, so the time is the slower phase plus "
                 "the latencies, not {intra} + {inter}.")
    elif algorithm == "tree":
        # one statement, true at every setting: the model's tree time is the chain alone plus what the network
        # costs on top of it (pipelined: its latencies always add, its transfer only where it is the slower)
        text = _("The two add up to the time: {intra} is the NVLink chain alone, {inter} the extra time the network "
                 "costs on top of it. Chain and network run pipelined, so the network's latencies always add, but "
                 "its transfer adds only where the network is slower than the chain.")
    elif algorithm == "ring":
        # a pipelined ring runs at its slowest link's pace: the network's part is what it adds, not its steps
        text = _("The two add up to the time: {intra} is NVLink alone (the same ring with NVLink's latency and "
                 "bandwidth on every step), {inter} what the real network adds (its latency per step, and its slower "
                 "links: a ring runs at the pace of its slowest link).")
    else:
        text = _("The two add up to the time: the NVLink phases ({intra}) and the network phase ({inter}) run one "
                 "after the other.")
    return text.format(intra=intra, inter=inter)


def _pace(est, fab, link, system: str, algorithm: str) -> tuple[float, float, float]:
    """For NCCL's pipelined ring and tree, the time in three parts that add up to it (seconds): NVLink alone (the
    readout's "inside nodes", the same part its details name), what the network's latencies add, and what its
    bandwidth adds (the rest: zero where a network with unlimited bandwidth, same protocol and latencies, would be as
    fast). One computation for the sentence and the details, so the two agree at every setting."""
    g, N = fab.rails, fab.nodes
    real = costmodel.configure(system, g, N, fabric=link.id, net_Bps_per_gpu=est.net_rate_GBps * 1e9)
    fast = costmodel.configure(system, g, N, fabric=link.id, net_Bps_per_gpu=1e18)
    proto = min(("LL", "LL128", "Simple"),
                key=lambda pr: costmodel.pair_cost("allreduce", algorithm, pr, real).time(est.nbytes))
    unlimited = float(costmodel.pair_cost("allreduce", algorithm, proto, fast).time(est.nbytes))
    alone = est.intra_s
    latency = min(max(unlimited - alone, 0.0), est.time_s - alone)
    return alone, latency, est.time_s - alone - latency


def _look_at(est, fab, link, system: str, algorithm: str) -> str:
    """The one sentence under the readout's table: for the pipelined ring and tree, NVLink alone, what the network's
    latency and bandwidth add, and so what sets the pace (the latency terms where they are over half the time;
    otherwise the network's bandwidth where it adds time, else NVLink); for the hierarchical scheme (phases in series)
    and SHARP, which part of the time is the larger."""
    if algorithm in ("ring", "tree") and est.sim is not None and fab.rails > 1:
        alone, latency, bandwidth = _pace(est, fab, link, system, algorithm)
        # the latency terms first: over half the time, they are the largest part, whatever the bandwidth adds
        if est.latency_s > est.time_s / 2 and bandwidth > 1e-3 * est.time_s:
            text = _("Look at the time and what sets its pace: NVLink alone would take {alone}{means}, the network's "
                     "latency adds {latency} and its bandwidth {bandwidth}; the latency terms (NVLink's and the "
                     "network's steps) are {terms} of it, so latency sets the pace.")
        elif bandwidth > 1e-3 * est.time_s:
            text = _("Look at the time and what sets its pace: NVLink alone would take {alone}{means}, the network's "
                     "latency adds {latency} and its bandwidth {bandwidth}, so this network sets the pace.")
        elif est.latency_s > est.time_s / 2:
            text = _("Look at the time and what sets its pace: NVLink alone would take {alone}{means} and the "
                     "network's latency adds {latency}; more network bandwidth would not shorten it, and the latency "
                     "terms (NVLink's and the network's steps) are {terms} of it, so latency sets the pace.")
        else:
            text = _("Look at the time and what sets its pace: NVLink alone would take {alone}{means} and the "
                     "network's latency adds {latency}; more network bandwidth would not shorten it, so NVLink sets "
                     "the pace.")
        # what "NVLink alone" is: the same ring with NVLink's bandwidth and per-step latency on every step, or the
        # tree's chain through the node's GPUs on its own (the readout's "inside nodes" in both cases)
        means = (_(" (the same ring with NVLink's bandwidth and latency on every step)") if algorithm == "ring" else
                 _(" (the chain through one node's GPUs)"))
        return text.format(alone=_time(alone), means=means, latency=_time(latency), bandwidth=_time(bandwidth),
                           terms=_time(est.latency_s))
    parts = {_("between nodes"): est.inter_s, _("inside nodes"): est.intra_s}
    big, small = sorted(parts, key=parts.get, reverse=True)
    return (_("Look at the time and where it goes: the part {big} is the larger one ({big_time}, against {small_time} "
              "{small}).") if algorithm != "sharp" else
            _("Look at the time and where it goes: the part {big} is the larger one ({big_time}, against {small_time} "
              "{small}); the two overlap, so the time is less than their sum.")).format(
        big=big, big_time=_time(parts[big]), small_time=_time(parts[small]), small=small)


def _readout(est, base, fab, link, routing: str, algorithm: str, system: str = "dgx-h100") -> str:
    """Four or five figures in a table, one sentence on what to look at, the rest behind ``<details>``."""
    eff = est.busbw_GBps / base.busbw_GBps
    rows = [[_("all-reduce time"), f"<b>{_time(est.time_s)}</b>"],
            [_("bus bandwidth"), localize_numbers(f"{est.busbw_GBps:.3g} GB/s")],
            [_("scaling efficiency vs 2 nodes"),
             _pct(eff) if eff <= 1.0 else _("{pct} (over 100 %: bus bandwidth counts 2(p−1)/p of the buffer, a "
                                            "factor that grows with the GPU count p)").format(pct=_pct(eff))]]
    if est.sim is not None:
        rows += [[_("slowest network flow"), _("{rate} of {line} GB/s").format(
                     rate=_rate(est.sim.min_rate_GBps), line=number(fab.port_GBps_dir, "g"))],
                 [_("switch-to-switch cables"), cable_sharing(est.sim, routing)]]
    how = _how_parts_add(est, algorithm)
    return (
        # the NIC named: two NICs of the same line rate (NDR, RoCE 400) give the same numbers, and without
        # its name the readout did not change when the learner switched between them
        _("<b>{algorithm}</b>, {size} per GPU on {gpus} GPUs, {nic} NICs:").format(
            algorithm=ALGO_LABELS[algorithm], size=localize_numbers(format_size(est.nbytes)), gpus=est.gpus,
            nic=_html.escape(link.name)) + table_html(["", ""], rows)
        + _look_at(est, fab, link, system, algorithm)
        # one sentence visible; how the parts combine and why a ratio can pass 100 % open on demand
        + _("<details><summary>the fabric, the time split and the model</summary>")
        + f"{how}{_above_100(eff, est, base)}<br>"
        + f"<i>{_html.escape(fab.describe())}</i><br>"
        # the latency terms count every step, NVLink's too: more than the sentence's "the network's latency adds"
        + _("Time inside nodes {intra}, between nodes {inter}; latency terms {latency} (the latencies of every "
            "step, NVLink's as well as the network's).").format(
            intra=_time(est.intra_s), inter=_time(est.inter_s), latency=_time(est.latency_s)) + "<br>"
        + _step_text(est, fab, routing, algorithm)
        + _("<br><i>Model: flows share each cable max-min fairly (no congestion control, no adaptive routing unless "
            "chosen); SHARP is modelled with its NVLink and network phases perfectly pipelined.</i></details>")
    )


def allreduce_view(
    nodes: int,
    nic: str,
    oversubscription: float,
    routing: str,
    placement: str = "random",
    algorithm: str = "hierarchical",
    nbytes: float = 2**30,
    *,
    system: str = "dgx-h100",
    seed: int = 0,
) -> tuple[Figure, str]:
    """Dashboard of chapter 06: build the fabric, simulate the ring step, draw link loads, report time.

    ``nbytes`` per GPU; ``oversubscription`` as leaf down:up ports (1.0 = non-blocking)."""
    link = catalog.get_link(nic)
    sysm = catalog.get_system(system)
    kw = dict(algorithm=algorithm, system=system, nic_link=nic, routing=routing, placement=placement, seed=seed)
    fab = fat_tree(
        int(nodes), rails=sysm.nics_per_host, port_GBps_dir=link.line_GBps_dir, oversubscription=float(oversubscription)
    )
    est = allreduce_on_fabric(fab, nbytes, **kw)
    base = allreduce_on_fabric(fat_tree(2, rails=sysm.nics_per_host, port_GBps_dir=link.line_GBps_dir), nbytes, **kw)
    fig = Figure(figsize=(9.0, 3.6), layout="constrained")  # no pyplot manager: the dashboard shows it once
    # The fabric's description goes in the readout, not a title: matplotlib lays out and rasterises text glyph
    # by glyph, and a two-line title was ~15 ms of every slider change.
    draw_fabric(fab, fig.subplots(), est.sim)
    return fig, _readout(est, base, fab, link, routing, algorithm, system)


def fabric_dashboard(*, system: str = "dgx-h100"):
    """Chapter 06's dashboard: the routing choices follow the NIC picked (InfiniBand: subnet-manager routes or
    adaptive routing; Ethernet: ECMP hashing or packet spraying), SHARP only where the switches can reduce."""
    import ipywidgets as w

    from ..widgets import Dashboard, size_slider

    nics = [(catalog.get_link(i).name, i) for i in ("ib-hdr", "ib-ndr", "ib-xdr", "roce-400g")]
    nic_w = w.Dropdown(options=nics, value="ib-ndr", description=_("NIC"))
    # wide enough for the longest choice: ipywidgets' default width cut "NCCL tree (chain in node, doubl"
    wide = w.Layout(width="480px")
    routing_w = w.Dropdown(options=ROUTING_CHOICES["infiniband"], value="dmodk", description=_("routing"),
                           layout=wide)
    algo_w = w.Dropdown(options=[(ALGO_LABELS[a], a) for a in ALGO_LABELS], value="tree", description=_("algorithm"),
                        layout=w.Layout(width="480px"))

    def sync(_=None) -> None:
        kind = catalog.get_link(nic_w.value).kind
        choices = ROUTING_CHOICES["infiniband" if kind == "infiniband" else "ethernet"]
        if tuple(map(tuple, routing_w.options)) != choices:  # reload the menu whenever the NIC kind changes:
            # both kinds offer "ideal", so checking the value alone kept the other kind's labels (and choices)
            keep = routing_w.value if routing_w.value in [v for _, v in choices] else choices[0][1]
            routing_w.options = choices
            routing_w.value = keep
        algos = [(ALGO_LABELS[a], a) for a in ALGO_LABELS if a != "sharp" or kind == "infiniband"]
        keep = algo_w.value if algo_w.value in [v for _, v in algos] else "tree"
        if list(algo_w.options) != algos:
            algo_w.options = algos
        algo_w.value = keep

    nic_w.observe(sync, names="value")  # registered before the dashboard's observers: runs first
    sync()
    controls = {
        "nodes": w.SelectionSlider(options=[2, 4, 8, 16, 32, 64, 128, 256, 512], value=128, description=_("nodes"),
                                   continuous_update=False),
        "nic": nic_w,
        "oversubscription": w.Dropdown(options=[(_("1:1 (non-blocking)"), 1.0), ("2:1", 2.0), ("4:1", 4.0)],
                                       value=1.0, description=_("oversub.")),
        "routing": routing_w,
        "placement": w.Dropdown(options=[(_("random nodes"), "random"), (_("packed"), "packed")],
                                value="random", description=_("placement")),
        "algorithm": algo_w,
        "nbytes": size_slider(_("message"), min_exp=16, max_exp=32, value_exp=30),
    }
    return Dashboard(controls, lambda **kw: allreduce_view(system=system, **kw))



def _factor(ratio: float) -> str:
    """A ratio as a whole multiplier after its number: English ``9x`` (as the chapter printed it), French ``9×``."""
    return number(ratio, ".0f") + ("×" if language() == "fr" else "x")


def scale_out_links_lines() -> str:
    """The scale-out links of the catalog (port speed in Gb/s, line and achievable rate in GB/s per direction, NCCL's
    per-step latency α in µs), then a DGX H100's NVLink against its NIC per GPU and per direction (GB/s)."""
    link_, port, line, achievable = _("link"), _("port"), _("line GB/s"), _("achievable")  # column heads
    lines = [f"{link_:<34} {port:>10} {line:>10} {achievable:>11} {'α (NCCL)':>9}"]
    for link in catalog.links().values():
        if link.kind in ("infiniband", "ethernet"):
            lines.append(localize_numbers(
                f"{link.name:<34} {link.line_Gbps_dir:>7.0f} Gb/s {link.line_GBps_dir:>10.1f} "
                f"{link.achievable_GBps_dir:>11.1f} {link.alpha_us:>7.0f} µs"))
    s = catalog.get_system("dgx-h100")
    nvl = catalog.get_link(s.scale_up_link).achievable_GBps_dir * s.links_per_gpu
    nic = catalog.get_link(s.nic_link).achievable_GBps_dir
    text = _("DGX H100, per GPU and per direction: NVLink {nvlink} GB/s vs its NIC {nic} GB/s -> {line} at line rate; "
             "achievable {nvl} vs {nic_achievable} GB/s -> {achievable}")
    lines.append("\n" + text.format(
        nvlink=number(s.scaleup_GBps_dir, ".0f"), nic=number(s.scaleout_GBps_dir_per_gpu, ".0f"),
        line=_factor(s.scaleup_GBps_dir / s.scaleout_GBps_dir_per_gpu), nvl=number(nvl, ".0f"),
        nic_achievable=number(nic, ".0f"), achievable=_factor(nvl / nic)))
    return "\n".join(lines)


def superpod_lines() -> str:
    """Switch counts of each DGX SuperPOD reference architecture (H100, B200) per scalable unit (SU), built by the
    course's builder against the published counts, then the leaf switch and its radix (ports)."""
    nodes, leaf, spine, core = _("nodes"), _("leaf"), _("spine"), _("core")  # column heads
    lines = [f"{'RA':<6}{'SU':>4}{nodes:>7}{'GPUs':>7}   {leaf:>9}{spine:>9}{core:>9}   " + _("(built / published)")]
    for pod in ("h100", "b200"):
        for row in data.superpod_rows(pod):
            c = superpod(pod, row.su).counts()
            lines.append(f"{pod:<6}{row.su:>4}{c['nodes']:>7}{c['gpus']:>7}   {c['leaf']:>4}/{row.leaf:<4}"
                         f"{c['spine']:>4}/{row.spine:<4}{c['core']:>4}/{row.core:<4}")
    sw = data.get_switch("quantum-2")
    lines.append("\n" + _("switch: {name}, radix {ports}").format(name=sw.name, ports=sw.ports))
    return "\n".join(lines)


def layout_title(layout: str, fab) -> str:
    """A fat tree's title: its layout (``rail``, ``tor``) and its leaf and spine switch counts."""
    return _("{layout}: {leaves} leaf, {spines} spine").format(layout=layout, leaves=fab.n_leaves, spines=fab.n_spines)


def ecmp_line(links: int, slowest_simulated: float) -> str:
    """The closed forms of ECMP hashing for ``links`` flows on ``links`` up-links: a flow's collision probability,
    the mean rate (fraction of the link), the busiest link's expected load (flows), the slowest flow's expected rate,
    against ``slowest_simulated`` (fraction of the link, from the flow simulation)."""
    pmf = ecmp.max_load_pmf(links, links)
    slowest = float(np.sum(pmf[1:] / np.arange(1, pmf.size)))
    return _("m = k = {k}: a flow collides with P = 1 - (1 - 1/k)^(m-1) = {p}; mean rate {mean} of the link; busiest "
             "link {busiest} flows on average, slowest flow E[1/max load] = {slowest} (simulated {simulated})").format(
        k=links, p=_pct(ecmp.collision_probability(links, links), ".1%"),
        mean=_pct(ecmp.mean_rate_fraction(links, links)), busiest=number(ecmp.expected_max_load(links, links), ".2f"),
        slowest=_pct(slowest), simulated=_pct(slowest_simulated))


def first_faster_line(nodes, res: dict) -> str:
    """From :func:`scaling_figure`'s results over ``nodes``: the first node count at which each of the tree, the
    hierarchical all-reduce and SHARP takes less time than the flat ring, or that none of ``nodes`` does."""
    t = {a: [r.time_s for r in rows] for a, rows in res.items()}

    def first(a: str) -> str:
        n = next((n for n, x, y in zip(nodes, t[a], t["ring"]) if x < y), None)
        if n is None:
            return _("not up to {n} nodes").format(n=whole(max(nodes)))
        return _("from {n} nodes").format(n=whole(n))

    return _("faster than the flat ring: tree {tree}, hierarchical {hierarchical}, SHARP {sharp}").format(
        tree=first("tree"), hierarchical=first("hierarchical"), sharp=first("sharp"))


def oversubscription_lines(nbytes: float = 2**30, overs: tuple[int, ...] = (1, 2, 4)) -> str:
    """A hierarchical all-reduce of ``nbytes`` per GPU (bytes) on 128 nodes with adaptive routing, for each
    oversubscription: the spine count, then the time with the nodes packed and placed at random."""
    placements = {"packed": _("packed"), "random": _("random")}
    lines = []
    for over in overs:
        f = fat_tree(128, oversubscription=over)
        times_s = {p: allreduce_on_fabric(f, nbytes, algorithm="hierarchical", routing="ideal", placement=p).time_s
                   for p in placements}
        row = [_("{placement}: {time}").format(placement=placements[p], time=f"{_time(t):>8}")
               for p, t in times_s.items()]
        lines.append(_("{over}:1  {spines} spines  ").format(over=over, spines=f"{f.n_spines:>2}") + "   ".join(row))
    return "\n".join(lines)
