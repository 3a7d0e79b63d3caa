"""``nvcourse topo FILE [--json] [--draw OUT.png] [--nvlink ID] [--pcie ID]``: read ``nvidia-smi topo -m`` output
or NCCL's topology XML (``NCCL_TOPO_DUMP_FILE``), told apart by the first element."""

from __future__ import annotations

import argparse

from nvcourse import catalog
from nvcourse.i18n import translate as _
from nvcourse.textio import print_json

from . import metrics
from .topo_local import code_nearest
from .topo_parser import read_topo
from .topo_pcie import nccl_width
from .topo_xml import NVSWITCH_CLASS, switch_links_to_peers

__all__ = ["register", "run_topo"]


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "topo",
        help=_("read `nvidia-smi topo -m` output: GPUs, NICs, links; metrics and a drawing"),
        description=_("Read the text printed by `nvidia-smi topo -m`, or the XML NCCL writes with NCCL_TOPO_DUMP_FILE "
                      "(FILE, or - for standard input; the format is detected). "
                      "Bandwidths are GB/s (10^9 B/s) per direction."),
    )
    p.add_argument("file", metavar="FILE", help=_("a file with the output of `nvidia-smi topo -m`, or - for stdin"))
    p.add_argument("--json", action="store_true", help=_("print JSON: gpus, nics, links (one per device pair), graph"))
    p.add_argument("--draw", metavar="OUT.png", help=_("write a drawing of the rebuilt topology"))
    nv = [k for k, v in catalog.links().items() if v.kind == "nvlink"]
    pc = [k for k, v in catalog.links().items() if v.kind == "pcie"]
    p.add_argument("--nvlink", choices=nv, help=_("NVLink generation, to give NVLink edges a bandwidth"))
    p.add_argument("--pcie", choices=pc, help=_("PCIe generation, to give PCIe edges a bandwidth"))
    p.set_defaults(handler=run_topo)


def _metrics(result) -> dict | None:
    """Metrics of the NVLink fabric (when --nvlink was given), else of the whole graph (when --pcie was)."""
    G = result.graph
    if any(d.get("kind") == "nvlink" for *_, d in G.edges(data=True)):
        keep = [n for n, k in G.nodes(data="kind") if k in ("gpu", "nvswitch")]
        H = G.subgraph(keep).copy()
        H.remove_edges_from([(u, v) for u, v, d in H.edges(data=True) if d.get("kind") != "nvlink"])
        scope = "NVLink fabric"
    else:
        H, scope = G, "PCIe tree"
    try:
        out = metrics.summary(H)
    except (ValueError, KeyError):
        return None
    out["scope"] = scope
    return out


#: nvidia-smi's codes from nearest to farthest (PIX: same PCIe switch ... SYS: across CPUs)
_NEAR = ("PIX", "PXB", "PHB", "NODE", "SYS")


def _nearest_nics(result) -> list[str]:
    """'GPU0 mlx5_7 (PIX)' per GPU: its nearest NICs (ties listed together, joined by '/'), the NIC's name where the
    legend or the XML gives one. Rails and NCCL_IB_HCA lists are built from this, not from indices. Where NCCL's XML
    rates every path (``xml['local_nics']``, :func:`~.topo_local.local_nics`), the NICs NCCL takes as the GPU's local
    ones: the most path bandwidth first, then the nearest code; else, as for ``nvidia-smi topo -m`` text, which gives
    no speeds, those at the nearest PCIe code."""
    out = []
    local = result.xml.get("local_nics", {}) if result.xml is not None else {}
    for g in result.gpus:
        if g in local:
            picks, code = local[g]["nics"], local[g]["path"]
        elif found := code_nearest(g, result.nics, result.codes):
            picks, code = found
        else:
            continue
        out.append(f"{g} {'/'.join(result.nic_names.get(n, n) for n in picks)} ({code})")
    return out


def _nvlinks_per_gpu(result) -> str | None:
    """'GPU0 18, GPU1 18, ...' with what a reader must know to read them, or None when no GPU lists an NVLink to
    another device. A line whose target is the GPU itself is not counted (NCCL links the GPU to itself: src/graph/
    topo.cc ncclTopoAddNvLinks). A GPU that lists its links once per peer GPU with the NVSwitch class (a hand-written
    file) shows one line's count: NCCL adds the lines up (ncclTopoConnectNodes), which the suffix says."""
    gpus = result.xml["gpus"]
    shown, total, peers_seen, selfish = [], 0, 0, False
    for g, d in gpus.items():
        others = {x["bus_id"] for k, x in gpus.items() if k != g}
        links = [link for link in d["nvlinks"] if link["target"] != d["bus_id"]]
        selfish |= len(links) < len(d["nvlinks"])
        peers = switch_links_to_peers(links, others)
        if len(peers) > 1:
            counts = sorted({link["count"] for link in peers})
            shown.append((g, "/".join(map(str, counts))))
            if not peers_seen:
                total = sum(link["count"] for link in links if link["tclass"] == NVSWITCH_CLASS)
                peers_seen = len(peers)
        else:
            shown.append((g, sum(link["count"] for link in links)))
    if not any(n not in (0, "0") for _g, n in shown):
        return None
    line = ", ".join(f"{g} {n}" for g, n in shown)
    if peers_seen:
        line += _(" -- listed once for each of {peers} peer GPUs, with the NVSwitch class: NCCL adds the lines up to "
                  "{total} links per GPU (see the note)").format(peers=peers_seen, total=total)
    if selfish:
        line += _(" -- NVLinks whose target is the GPU itself not counted")
    return line


def _pci_only_nics(result) -> str | None:
    """'NIC0 0000:10:1b.0 (PIX: GPU0, GPU1), ...' for the NICs a file lists as PCI devices only: bus id, then the
    nearest GPUs by path code. No name: NCCL gives one when it runs (src/graph/xml.cc ncclTopoFillNet)."""
    out = []
    for nic, d in result.xml.get("pci_nics", {}).items():
        codes = {g: result.codes[(nic, g)] for g in result.gpus}
        ranked = [(_NEAR.index(c), g) for g, c in codes.items() if c in _NEAR]
        best = min((r for r, _g in ranked), default=None)
        near = f" ({_NEAR[best]}: {', '.join(g for r, g in ranked if r == best)})" if best is not None else ""
        out.append(f"{nic} {d['bus_id']}{near}")
    return ", ".join(out) or None


def _pcie_links(result) -> str | None:
    """The GPUs' and NICs' PCIe links, counted by speed and width as NCCL reads them (a width of 0 is x16: src/graph/
    topo.cc ncclTopoAddPci), with what a difference or an odd value means."""
    ends = [p for p in result.xml["pcie"] if p["class"] and p["class"].startswith(("0x03", "0x02"))]
    # a GPU on C2C reaches its CPU by C2C, not by this link (src/graph/paths.cc: C2C is the better path type), so its
    # PCIe figures are no difference that matters
    on_c2c = {d["bus_id"]: g for g, d in result.xml["gpus"].items() if d["c2c"]}
    links: dict[str, int] = {}
    counted: set[str] = set()
    zero = empty = 0
    for p in ends:
        width = p["link_width"]
        zero += width == 0
        empty += p["link_speed"] == ""
        key = f"{p['link_speed'] or 'speed ?'} x{nccl_width(width) if width is not None else '?'}"
        links[key] = links.get(key, 0) + 1
        if p["bus_id"] not in on_c2c:
            counted.add(key)
    if not links:
        return None
    line = ", ".join(f"{k} ({n})" for k, n in links.items())
    if c2c_gpus := [g for bus, g in on_c2c.items() if any(p["bus_id"] == bus for p in ends)]:
        line += _(" -- C2C, not PCIe, joins {gpus} to the CPU (see the note)").format(gpus=", ".join(c2c_gpus))
    if len(counted) > 1:
        # NCCL writes sysfs max_link_speed/max_link_width, the lower of the device's and its port's (src/graph/xml.cc);
        # from 2.30.7 a GPU's come from NVML's current link instead
        line += _(" -- they differ: NCCL writes each device's widest and fastest link (the lower of the device's and "
                  "its slot's; from NCCL 2.30.7 a GPU's current one), so, in a file written before 2.30.7, a narrower "
                  "or older device or slot, not a link that trained lower")
    if zero:
        line += _(" -- the file gives width 0 for {n} of them, which NCCL reads as x16").format(n=zero)
    if empty:
        # kvDictPciGen's fallback (60 x 100 Mb/s per lane) is the entry of 8 GT/s
        line += _(" -- an empty speed for {n} of them, which NCCL rates as 8 GT/s").format(n=empty)
    return line


def _print_xml_facts(result) -> None:
    """What only NCCL's XML says: NIC speeds (Gb/s) and GDR, the NICs known as PCI devices only, NVLinks per GPU,
    the GPUs' and NICs' PCIe links."""
    nics = result.xml["nics"]
    speeds = [f"{n['name']} {n['speed_Gbps']:g} Gb/s" + ("" if n["gdr"] in (None, "1") else " (gdr 0)")
              for n in nics.values() if n["speed_Gbps"] is not None]
    if speeds:  # a hand-written file may give its NICs no speed: then there is nothing to list
        print(_("NIC speeds: ") + ", ".join(speeds))
    if pci_nics := _pci_only_nics(result):
        print(_("NICs listed as PCI devices only (NCCL names them when it runs): ") + pci_nics)
    if nvlinks := _nvlinks_per_gpu(result):
        print(_("NVLinks per GPU: ") + nvlinks)
    if pcie := _pcie_links(result):
        print(_("PCIe links of the GPUs and NICs: ") + pcie)


def run_topo(args: argparse.Namespace) -> int:
    result = read_topo(args.file, nvlink=args.nvlink, pcie=args.pcie)
    data = result.to_json()
    m = _metrics(result)
    if m is not None:
        data["metrics"] = m
    if args.draw:
        from . import draw

        draw.save_topology(result.graph, args.draw, title=f"nvidia-smi topo -m: {args.file}")
    if args.json:
        print_json(data)
        return 0
    print(_("GPUs: {n} ({names})").format(n=len(result.gpus), names=", ".join(result.gpus)))
    if result.nics:
        names = [f"{n}={result.nic_names[n]}" if n in result.nic_names else n for n in result.nics]
        print(_("NICs: {n} ({names})").format(n=len(result.nics), names=", ".join(names)))
    counts: dict[str, int] = {}
    for link in result.links():
        if link["a"] in result.gpus and link["b"] in result.gpus:
            counts[link["type"]] = counts.get(link["type"], 0) + 1
    print(_("GPU pairs by connection: ") + ", ".join(f"{k} x{v}" for k, v in sorted(counts.items())))
    if nearest := _nearest_nics(result):
        print(_("Nearest NIC per GPU: ") + ", ".join(nearest))
    if result.xml is not None:
        _print_xml_facts(result)
    for note in result.notes:
        print(_("note: {note}").format(note=note))
    if m is not None:
        scope = {"NVLink fabric": _("NVLink fabric"), "PCIe tree": _("PCIe tree")}.get(m["scope"], m["scope"])
        print(_("metrics ({scope}, GB/s per direction): bisection {bisection}, all-to-all per GPU {alltoall}, "
                "rings {rings} x {ring}, hops {low}-{high}").format(
            scope=scope, bisection=f"{m['bisection_GBps_dir']:g}", alltoall=f"{m['alltoall_GBps_dir_per_gpu']:.4g}",
            rings=m["rings"], ring=f"{m['ring_GBps_dir']:g}", low=m["hops"]["min"], high=m["hops"]["max"]))
    elif not (args.nvlink or args.pcie):
        print(_("(give --nvlink/--pcie generations to compute bandwidth metrics)"))
    if args.draw:
        print(_("drawing written to {path}").format(path=args.draw))
    return 0
