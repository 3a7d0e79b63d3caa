"""Helpers for notebook 03: metric tables, the system explorer and the topo-paste box.

Every number shown comes from :mod:`nvcourse.catalog` through the builders and :mod:`.metrics`; all
bandwidths are GB/s per direction.
"""

from __future__ import annotations

import html
from functools import lru_cache

from nvcourse import catalog

from ..i18n import localize_numbers, number
from ..i18n import translate as _
from ..markup import details_html
from ..tables import table_html
from ..topology import metrics, rings
from ..topology.builders import build_system_graph
from ..topology.topo_parser import CODE_MEANING, PCIE_CODES, example_files, parse_topo

__all__ = [
    "mesh_lines",
    "switch_links_line",
    "bisection_lines",
    "ring_lines",
    "nvl72_line",
    "rebuilt_line",
    "control",
    "system_rows",
    "metrics_table_html",
    "metrics_summary_html",
    "codes_table_html",
    "render_system",
    "ring_busbw_GBps",
    "socket_cap_GBps",
    "socket_capped_bisection_GBps",
    "socket_capped_rate",
    "render_pasted",
    "CPU_LABEL",
    "records_table_html",
    "example_text",
    "far_from_nics",
    "FAR_FROM_NIC",
    "NCCL_ONLY_PATHS",
]


def system_rows(system_ids=None) -> list[dict]:
    """One dict of headline metrics per system (GB/s per direction)."""
    rows = []
    for sid in system_ids or list(catalog.systems()):
        s = catalog.get_system(sid)
        G, bis, rings = _system_facts(sid)  # cached: the explorer below shows the same systems
        hops = metrics.hop_stats(G)
        link = s.link
        rows.append({
            "system": sid,
            "GPUs": len(metrics.gpu_nodes(G)),
            "GPU link GB/s": s.scaleup_GBps_dir,
            "bisection GB/s": bis.GBps_dir,
            "bisection per GPU GB/s": bis.GBps_dir / (len(bis.side_a)),
            "max hops": hops["max"],
            "all-to-all per GPU GB/s": _pattern_facts(sid, "all-to-all")[0],
            "rings": rings.n_rings,
            "ring total GB/s": rings.total_GBps_dir,
            "ring x efficiency GB/s": rings.total_GBps_dir * link.efficiency,
            "ring busbw GB/s": ring_busbw_GBps(sid),
        })
    return rows


def socket_cap_GBps(system: str) -> float | None:
    """NCCL's model rate of the CPU-to-CPU link (GB/s per direction) when the system's rings cross it, else None.

    Only a ring over PCIe spans both sockets: NVLink rings (the DGX-1's included) never leave the NVLink mesh."""
    s = catalog.get_system(system)
    if s.link.kind != "pcie" or not s.inter_socket_GBps_dir or len(set(s.gpu_socket or ())) < 2:
        return None
    return s.inter_socket_GBps_dir


def ring_busbw_GBps(system: str) -> float:
    """The ring all-reduce bus bandwidth NCCL's model reaches on all of a system's GPUs (GB/s): rings x per-ring
    bandwidth x the link's efficiency, capped at the CPU-to-CPU link's model rate where the rings cross it."""
    rings = _system_facts(system)[2]
    total = rings.total_GBps_dir * catalog.get_system(system).link.efficiency
    cap = socket_cap_GBps(system)
    return total if cap is None else min(total, cap)


def _header(key: str) -> str:
    """A record key as a column header in the current language (the keys themselves stay English: an API)."""
    return {"system": _("system"), "GPUs": _("GPUs"), "GPU link GB/s": _("GPU link GB/s"),
            "bisection GB/s": _("bisection GB/s"), "bisection per GPU GB/s": _("bisection per GPU GB/s"),
            "max hops": _("max hops"), "all-to-all per GPU GB/s": _("all-to-all per GPU GB/s"), "rings": _("rings"),
            "ring total GB/s": _("ring total GB/s"), "ring x efficiency GB/s": _("ring x efficiency GB/s"),
            "ring busbw GB/s": _("ring busbw GB/s"),
            "code": _("code"), "path": _("path"), "what bounds a copy": _("what bounds a copy")}.get(key, key)


def records_table_html(rows: list[dict], caption: str = "") -> str:
    """A table of records (one dict per row, the keys of the first as headers); text cells are escaped."""
    if not rows:
        return ""
    cells = [[number(v, ".4g") if isinstance(v, float) else html.escape(str(v)) for v in r.values()] for r in rows]
    return table_html([_header(k) for k in rows[0]], cells, caption=caption)


def metrics_table_html(system_ids=None) -> str:
    return records_table_html(system_rows(system_ids), _(
        "GB/s per direction, at line rate. 'ring x efficiency': × the link's efficiency in NCCL's model; "
        "'ring busbw': what NCCL's model reaches for large messages, without the per-step latency (chapter 05 adds "
        "it); on the PCIe server the CPU-to-CPU link caps it (chapter 04b)."))


#: The columns of the short table section 2 shows: what answers "does the fabric limit a GPU?".
SUMMARY_COLUMNS = ("system", "GPU link GB/s", "all-to-all per GPU GB/s", "max hops")


def metrics_summary_html(system_ids=None) -> str:
    """Section 2's table: per system a GPU's link bandwidth beside its all-to-all rate and the hop count (GB/s per
    direction), one sentence on what to compare, and the full :func:`metrics_table_html` behind a collapsed
    ``<details>``."""
    rows = system_rows(system_ids)
    short = records_table_html([{k: r[k] for k in SUMMARY_COLUMNS} for r in rows])
    note = _("GB/s per direction, at line rate. All-to-all below the GPU link: the wiring is the bottleneck.")
    for sid in system_ids or list(catalog.systems()):  # a CPU-to-CPU link drawn unbounded: say what NCCL's rate does
        if (cap := socket_cap_GBps(sid)) is not None:
            note += " " + _("{name}: all-to-all {capped} GB/s at NCCL's {cap} GB/s for the CPU-to-CPU link (drawn "
                            "unbounded, §5).").format(
                name=catalog.get_system(sid).name.split(" (")[0], cap=f"{cap:g}",
                capped=f"{socket_capped_rate(sid, 'all-to-all'):.3g}")
    every = _("every metric")  # outside the f-string, where the extractor sees it
    return (short + f"<div>{html.escape(note)}</div><details><summary>{html.escape(every)}</summary>"
            + metrics_table_html(system_ids) + "</details>")


def codes_table_html() -> str:
    rows = [{"code": "NV#", "path": _meaning("NV#"),
             "what bounds a copy": _("# x the NVLink generation's per-link rate (no PCIe involved)")}]
    bound = {
        "PIX": _("one PCIe x16 link; the switch may be shared"),
        "PXB": _("PCIe links through a tree of switches: shared uplinks"),
        "PHB": _("PCIe through the CPU's root complex; NCCL copies through host memory here by default (via SHM)"),
        "NODE": _("PCIe plus the fabric between root complexes in one socket; NCCL copies through host memory by "
                  "default"),
        "SYS": _("PCIe plus the CPU-CPU link; NCCL copies through host memory by default, and many platforms "
                 "disable P2P here"),
    }
    for code in PCIE_CODES:
        rows.append({"code": code, "path": _meaning(code), "what bounds a copy": bound[code]})
    nccl = [{"code": _("{code} (NCCL only)").format(code=code), "path": _(path), "what bounds a copy": _(what)}
            for code, path, what in NCCL_ONLY_PATHS]
    # nvidia-smi's six codes answer the section's question; NCCL's own path types (reference, section 8) wait
    # behind a collapsed toggle
    return records_table_html(
        rows,
        _("nvidia-smi's path codes, from fastest (NV#) to slowest (SYS). NCCL uses GPU peer-to-peer only up to PXB "
          "by default, up to SYS on an AMD host with only two GPUs (NCCL_P2P_LEVEL overrides both)."),
    ) + details_html(
        _("NCCL's own path types, which its logs print: NVB, C2C, P2C, PXN"),
        records_table_html(nccl, _("Path types only NCCL's own topology uses. NCCL's order, fastest first: NVL, NVB, "
                                   "C2C, PIX, PXB, P2C, PXN, PHB, SYS; NODE is nvidia-smi's only.")),
    )


def _meaning(code: str) -> str:
    """nvidia-smi's own legend line for ``code`` (:data:`CODE_MEANING`), in the current language."""
    french = {"NV#": _("a bonded set of # NVLinks"), "PIX": _("at most one PCIe bridge (same PCIe switch)"),
              "PXB": _("several PCIe bridges, without the CPU's host bridge"),
              "PHB": _("through a PCIe host bridge (the CPU)"),
              "NODE": _("through the interconnect between PCIe host bridges within one NUMA node"),
              "SYS": _("through the SMP interconnect between NUMA nodes (QPI/UPI/xGMI)")}
    english = CODE_MEANING[code]
    # a translation only while the legend is the one translated: an edited legend shows in English, never stale
    return french[code] if _ENGLISH_MEANINGS.get(code) == english else english


_ENGLISH_MEANINGS = {"NV#": "a bonded set of # NVLinks", "PIX": "at most one PCIe bridge (same PCIe switch)",
                     "PXB": "several PCIe bridges, without the CPU's host bridge",
                     "PHB": "through a PCIe host bridge (the CPU)",
                     "NODE": "through the interconnect between PCIe host bridges within one NUMA node",
                     "SYS": "through the SMP interconnect between NUMA nodes (QPI/UPI/xGMI)"}


def _nccl_paths_marked() -> tuple[str, ...]:
    """The texts of :data:`NCCL_ONLY_PATHS`, marked for the translation catalog (looked up with ``_(path)``)."""
    return (_("NVLink through an intermediate GPU"), _("two NVLink hops; the middle GPU's links are shared"),
            _("a GPU to its CPU over the chip-to-chip link (Grace Hopper, Grace Blackwell)"), _("the C2C link"),
            _("a GPU to a NIC over the C2C link to the CPU, then the CPU's PCIe to the NIC (GB200/GB300 trays)"),
            _("the CPU's PCIe link to the NIC"),
            _("a GPU to a NIC through a peer GPU over NVLink (so the data leaves on the right rail)"),
            _("the peer GPU's PCIe link to its NIC"))


#: The path types NCCL adds to nvidia-smi's (NCCL's topology code): (code, path, what bounds a copy).
NCCL_ONLY_PATHS: tuple[tuple[str, str, str], ...] = (
    ("NVB", "NVLink through an intermediate GPU", "two NVLink hops; the middle GPU's links are shared"),
    ("C2C", "a GPU to its CPU over the chip-to-chip link (Grace Hopper, Grace Blackwell)", "the C2C link"),
    ("P2C", "a GPU to a NIC over the C2C link to the CPU, then the CPU's PCIe to the NIC (GB200/GB300 trays)",
     "the CPU's PCIe link to the NIC"),
    ("PXN", "a GPU to a NIC through a peer GPU over NVLink (so the data leaves on the right rail)",
     "the peer GPU's PCIe link to its NIC"),
)

@lru_cache(maxsize=None)
def _system_facts(system: str) -> tuple:
    """The graph, bisection and rings of a catalog system (pure functions of the catalog: computed once).

    The graph is shared by later calls: only this module's read-only renders use it."""
    G = build_system_graph(system)
    return G, metrics.bisection_bandwidth(G), rings.nccl_rings(G)


@lru_cache(maxsize=None)
def socket_capped_rate(system: str, pattern: str) -> float:
    """The most each GPU sends under ``pattern`` (GB/s per direction) with the CPU-to-CPU link at NCCL's model
    rate (:func:`socket_cap_GBps`) instead of unbounded; the unbounded rate where no ring crosses sockets."""
    cap = socket_cap_GBps(system)
    if cap is None:
        return _pattern_facts(system, pattern)[0]
    return metrics.pattern_report(build_system_graph(system, smp_GBps_dir=cap), pattern)[0]


@lru_cache(maxsize=None)
def socket_capped_bisection_GBps(system: str) -> float:
    """Bisection bandwidth (GB/s per direction) with the CPU-to-CPU link at NCCL's model rate
    (:func:`socket_cap_GBps`); the unbounded graph's bisection where no ring crosses sockets."""
    cap = socket_cap_GBps(system)
    if cap is None:
        return _system_facts(system)[1].GBps_dir
    return metrics.bisection_bandwidth(build_system_graph(system, smp_GBps_dir=cap)).GBps_dir


@lru_cache(maxsize=None)
def _pattern_facts(system: str, pattern: str) -> tuple[float, list[dict]]:
    return metrics.pattern_report(_system_facts(system)[0], pattern)


#: The legend's name for the links inside a CPU and between sockets: the graphs give them no bandwidth, but NCCL's
#: model rates the CPU-to-CPU link (16 GB/s on AMD hosts), so they are not called "not limiting" here.
CPU_LABEL = "inside CPU / CPU-CPU (no limit drawn)"


def render_system(system: str, pattern: str):
    """Dashboard render function: the topology with the busiest links of ``pattern``; a readout and the legend."""
    from ..topology.draw import topology_figure

    G, bis, rings = _system_facts(system)
    report = _pattern_facts(system, pattern)
    rate, rows = report
    fig, legend = topology_figure(G, pattern=pattern, report=report, cpu_label=CPU_LABEL)
    top = rows[0]
    cap = socket_cap_GBps(system)
    template = _(
        "<b>{name}</b> — per GPU, per direction: <b>{pattern}</b> at most <b>{rate} GB/s</b> (busiest link "
        "{a}–{b}); bisection <b>{bis} GB/s</b> ({bidir} both directions); "
        "NCCL-style rings side by side: {n} × {ring} = {total} GB/s."
    ) if cap is None else _(
        "<b>{name}</b> — per GPU, per direction: <b>{pattern}</b> at most <b>{rate} GB/s</b> (busiest link "
        "{a}–{b}); bisection <b>{bis} GB/s</b> ({bidir} both directions) with the CPU-to-CPU link unbounded, "
        "{capped_bis} GB/s at NCCL's rate for it; NCCL-style rings side by side: {n} × {ring} = {total} GB/s."
    )
    text = template.format(
        name=html.escape(G.graph["name"]), pattern=_("one ring") if pattern == "ring" else pattern,
        rate=f"{rate:.4g}", a=html.escape(_node_label(G, top["a"])), b=html.escape(_node_label(G, top["b"])),
        bis=f"{bis.GBps_dir:.5g}",
        bidir=f"{bis.GBps_bidir:.5g}", n=rings.n_rings, ring=f"{rings.ring_GBps_dir:g}",
        total=f"{rings.total_GBps_dir:g}", capped_bis=f"{socket_capped_bisection_GBps(system):.5g}")
    if cap is not None:
        text += " " + _socket_note(system, pattern, cap)
    return fig, localize_numbers(text) + legend


def _node_label(G, node: str) -> str:
    """The name the drawing gives ``node`` (its label on one line), so the readout names what the learner sees."""
    return " ".join(str(G.nodes[node].get("label", node)).replace("NVSwitch", "NVS").split())


def _socket_note(system: str, pattern: str, cap: float) -> str:
    """The readout's sentence on the CPU-to-CPU link the drawing leaves unbounded: what NCCL's rate for it does."""
    if pattern == "ring":
        return _("The CPU-to-CPU link is drawn without a limit; every ring crosses it, and at NCCL's model rate for "
                 "it, {cap} GB/s, a ring falls to {cap} GB/s (chapter 04b).").format(cap=f"{cap:g}")
    return _("The CPU-to-CPU link is drawn without a limit; at NCCL's model rate for it, {cap} GB/s, {pattern} "
             "falls to {capped} GB/s, and every ring, which crosses it, to {cap} GB/s (chapter 04b).").format(
        cap=f"{cap:g}", pattern=pattern, capped=f"{socket_capped_rate(system, pattern):.3g}")


def _crosses_sockets_note(res, pcie_only: bool) -> str:
    """The qualifier after a PCIe-only readout whose GPU pairs cross sockets (``SYS``): the drawing leaves the
    CPU-to-CPU link unbounded, as §5's readout says; NCCL's model rate for it (GB/s per direction) is the catalog's
    two-socket PCIe server's. Empty where the GPUs have NVLink or share a socket."""
    if not pcie_only or not any(code == "SYS" for (a, b), code in res.codes.items()
                                if a in res.gpus and b in res.gpus):
        return ""
    cap = catalog.get_system("pcie-8gpu").inter_socket_GBps_dir
    return localize_numbers(_(" (CPU-to-CPU link unbounded; NCCL's model rates it {cap} GB/s per direction on AMD "
                              "hosts)").format(cap=f"{cap:g}"))


def render_pasted(text: str, nvlink: str | None = None, pcie: str | None = None):
    """Dashboard render function for pasted ``nvidia-smi topo -m`` output: the picture; a readout and the legend."""
    from ..topology.draw import topology_figure

    nvlink = nvlink or None
    pcie = pcie or None
    res = parse_topo(text, nvlink=nvlink, pcie=pcie)
    counts: dict[str, int] = {}
    for link in res.links():
        if link["a"] in res.gpus and link["b"] in res.gpus:
            counts[link["type"]] = counts.get(link["type"], 0) + 1
    head = _("{gpus} GPUs, {nics} NICs; GPU pairs: ") if len(res.nics) != 1 else _("{gpus} GPUs, 1 NIC; GPU pairs: ")
    parts = [head.format(gpus=len(res.gpus), nics=len(res.nics))
             + ", ".join(f"{k} × {v}" for k, v in sorted(counts.items()))]
    if res.nvswitch_inferred:
        parts.append(_("NVSwitch inferred (more NVLinks per GPU than any GPU has)"))
    far = far_from_nics(res.codes, res.gpus, res.nics)
    if far:
        parts.append(_("<b>{gpus}</b> reach their nearest NIC only across the CPU "
                       "(PHB, NODE or SYS): GPUDirect RDMA (the NIC reading and writing GPU memory directly) from "
                       "them is slow or off").format(gpus=", ".join(far)))
    G = res.graph
    fabric = G
    if any(d.get("kind") == "nvlink" for *_, d in G.edges(data=True)):
        keep = [n for n, k in G.nodes(data="kind") if k in ("gpu", "nvswitch")]
        fabric = G.subgraph(keep).copy()
        fabric.remove_edges_from([(u, v) for u, v, d in fabric.edges(data=True) if d.get("kind") != "nvlink"])
    try:
        bis = metrics.bisection_bandwidth(fabric, closed_form_first=True)  # live widget: skip 35 max-flows when exact
        a2a = metrics.alltoall_throughput(fabric)
        parts.append(localize_numbers(_("bisection {bis} GB/s per direction, all-to-all {a2a} GB/s per GPU").format(
            bis=f"{bis.GBps_dir:.5g}", a2a=f"{a2a:.4g}")) + _crosses_sockets_note(res, fabric is G))
    except ValueError as exc:
        # an unknown link generation: the learner answers with the menus, not with a keyword argument
        unknown = "has no known bandwidth" in str(exc)
        missing = _("pick an NVLink generation in the menu above") if fabric is not G else _(
            "pick a PCIe generation in the menu above")
        note = _("the links have no bandwidth until you pick their generation: {missing}").format(
            missing=missing) if unknown else str(exc)
        parts.append(f"<i>{html.escape(note)}</i>")
    fig, legend = topology_figure(G, title=_("your nvidia-smi topo -m"), cpu_label=CPU_LABEL)
    return fig, _("; ").join(parts) + legend


#: Paths from a GPU to a NIC that cross a CPU's host bridge or socket link (slow or no GPUDirect RDMA).
FAR_FROM_NIC = ("PHB", "NODE", "SYS")


def far_from_nics(codes: dict[tuple[str, str], str], gpus: list[str], nics: list[str]) -> list[str]:
    """The GPUs whose nearest NIC (best path code in ``codes``) is PHB, NODE or SYS; none when there is no NIC."""
    if not nics:
        return []
    return [g for g in gpus if all(codes.get((g, n), "SYS") in FAR_FROM_NIC for n in nics)]


def example_text(name: str) -> str:
    """An example ``nvidia-smi topo -m`` output as a learner would paste it: the file's leading ``#`` lines
    (where it came from, notes for maintainers) are left out; the table and its legend stay."""
    lines = example_files()[name].read_text().splitlines()
    while lines and lines[0].lstrip().startswith("#"):
        lines.pop(0)
    return "\n".join(lines) + "\n"


def mesh_lines(system: str = "dgx-1-v100", gpu: str = "V100") -> str:
    """Section 1's readout of a switchless mesh: links per GPU and their rate (GB/s per direction), how many GPU
    pairs have NVLink, and the pairs without."""
    G = build_system_graph(system)
    s = catalog.get_system(system)
    gpus = metrics.gpu_nodes(G)
    no_link = [(a, b) for i, a in enumerate(gpus) for b in gpus[i + 1:] if not G.has_edge(a, b)]
    return localize_numbers("\n".join([
        _("links per {gpu}: {links}, each {rate} GB/s per direction").format(
            gpu=gpu, links=s.links_per_gpu, rate=f"{s.link.line_GBps_dir:g}"),
        _("GPU pairs: {pairs}, with NVLink: {linked}, without: {unlinked}").format(
            pairs=len(gpus) * (len(gpus) - 1) // 2, linked=G.number_of_edges(), unlinked=len(no_link)),
        _("pairs without NVLink:") + " " + ", ".join(f"{a}-{b}" for a, b in no_link)]))


def switch_links_line(system: str = "dgx-h100") -> str:
    """An NVSwitch system's links from each GPU to each switch chip and the GPU's total (GB/s per direction)."""
    s = catalog.get_system(system)
    return localize_numbers(_("{name}: links per GPU to each switch chip {links}, {rate} GB/s per link per direction "
                              "-> {total} GB/s per GPU per direction").format(
        name=s.name, links=list(s.switch_links_per_gpu), rate=f"{s.link.line_GBps_dir:g}",
        total=f"{s.scaleup_GBps_dir:g}"))


def bisection_lines(systems: tuple[str, ...] = ("dgx-1-v100", "dgx-h100", "gb200-nvl72")) -> str:
    """Each system's bisection bandwidth (GB/s per direction and both directions), how it was found and one worst
    split (its first four GPUs), one line each."""
    lines = []
    for sid in systems:
        b = metrics.bisection_bandwidth(build_system_graph(sid))
        split = ", ".join(b.side_a[:4]) + (" ..." if len(b.side_a) > 4 else "")
        lines.append(_("{system} bisection {dir} GB/s per direction = {bidir} GB/s both directions  ({method}; one "
                       "worst split: {split})").format(system=f"{sid:12s}", dir=f"{b.GBps_dir:8.5g}",
                                                        bidir=f"{b.GBps_bidir:8.5g}", method=b.method, split=split))
    return localize_numbers("\n".join(lines))


def ring_lines(systems: tuple[str, ...] = ("dgx-1-v100", "dgx-a100", "dgx-h100", "dgx-b200"),
               capped: str = "pcie-8gpu", orders: str = "dgx-1-v100") -> str:
    """NCCL-style rings per system: rings x per-ring rate = total, then x the link's efficiency (GB/s per
    direction); the ``capped`` system's ring at its CPU-to-CPU link; the ring orders of ``orders`` (one a line)."""
    lines = []
    for sid in systems:
        plan = rings.nccl_rings(build_system_graph(sid))
        eff = catalog.get_system(sid).link.efficiency
        lines.append(_("{system} {rings} rings x {ring} GB/s = {total} GB/s per direction; x efficiency {eff} -> "
                       "{busbw} GB/s").format(
            system=f"{sid:11s}", rings=f"{plan.n_rings:2d}", ring=f"{plan.ring_GBps_dir:g}",
            total=f"{plan.total_GBps_dir:5g}", eff=f"{eff:g}", busbw=f"{plan.total_GBps_dir * eff:6.1f}"))
    lines.append(_("{system} ring capped by the CPU-to-CPU link: {rate} GB/s").format(
        system=f"{capped:11s}", rate=f"{ring_busbw_GBps(capped):g}"))
    plan = rings.nccl_rings(build_system_graph(orders))
    name = "DGX-1" if orders == "dgx-1-v100" else orders
    lines.append(_("{name}: {orders} ring orders, each run both ways = {rings} rings:").format(
        name=name, orders=len(plan.rings), rings=plan.n_rings))
    lines += ["  " + " -> ".join(g[3:] for g in r) for r in plan.rings]
    return localize_numbers("\n".join(lines))


def nvl72_line(system: str = "gb200-nvl72") -> str:
    """A rack-scale NVLink domain's GPUs, trays, switch chips and links per GPU."""
    s = catalog.get_system(system)
    return _("{gpus} GPUs in trays of {per_tray}; {chips} switch chips in {trays} trays; {links} links per GPU, one "
             "to each chip").format(gpus=s.gpus_per_domain, per_tray=s.gpus_per_host, chips=s.nvswitch_count,
                                    trays=s.switch_trays, links=s.links_per_gpu)


def rebuilt_line(graph, pcie_name: str = "PCIe Gen4 x16", system: str = "pcie-8gpu") -> str:
    """The bisection (GB/s per direction) of a graph rebuilt from ``nvidia-smi topo -m`` beside the catalog's
    ``system`` model, unbounded and at NCCL's rate for the CPU-to-CPU link."""
    b = metrics.bisection_bandwidth(graph)
    return localize_numbers(_(
        "rebuilt with {pcie} links: bisection {bis} GB/s per direction with the CPU-to-CPU link unbounded (same as "
        "the catalog's {system} model: {model}; {capped} at NCCL's {cap} GB/s for that link)").format(
        pcie=pcie_name, bis=f"{b.GBps_dir:g}", system=system,
        model=f"{metrics.bisection_bandwidth(build_system_graph(system)).GBps_dir:g}",
        capped=f"{socket_capped_bisection_GBps(system):g}", cap=f"{socket_cap_GBps(system):g}"))


def rebuilt_title() -> str:
    """The title of the drawing rebuilt from the vLLM report's ``nvidia-smi topo -m``."""
    return _("rebuilt from nvidia-smi topo -m (vLLM #11122)")



def control(label: str) -> str:
    """A dashboard control's English label (a description, or the menus' "(unknown)") in the learner's language."""
    return {"system": _("system"), "traffic": _("traffic"), "(unknown)": _("(unknown)")}.get(label, label)
