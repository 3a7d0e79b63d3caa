"""Read the topology XML NCCL writes (``NCCL_TOPO_DUMP_FILE``) or reads (``NCCL_TOPO_FILE``).

NCCL's format (``src/graph/xml.cc``): ``<system version="1">`` holding one ``<cpu numaid affinity arch vendor>``
per NUMA node; under it a tree of ``<pci busid class link_speed link_width>`` bridges (class ``0x0604..``)
ending in devices; a GPU is ``<pci ...><gpu dev sm rank gdr>`` with ``<nvlink target count tclass>`` children
(``tclass 0x068000``: the target is an NVSwitch; ``0x030200``: another GPU) and, on Grace systems, ``<c2c bw
count>``; a NIC is ``<pci ...><nic><net name dev speed port gdr .../></nic>`` (``speed`` in Mb/s), or a ``<nic>``
straight under ``<cpu>`` for a NIC NCCL could not place on the PCIe tree (sockets, VMs).

:func:`parse_xml` returns the same :class:`~nvcourse.topology.topo_result.TopoResult` as ``nvidia-smi topo -m``, with
that command's path codes, worked out from the tree: ``NV#`` (links to each other, or to the same NVSwitches: the
smaller of the two GPUs' switch links), ``PIX`` (same bridge), ``PXB`` (a common bridge below the CPU), ``PHB`` (they
meet only at their CPU), ``SYS`` (different CPUs). The tree is NCCL's: the lower level of a Broadcom PEX Gen4/Gen5
switch is merged into the upper one as NCCL does (:func:`~.topo_pcie.bcm_flatten`), so two devices below one such
switch are PIX, as to NCCL, where the file's nesting reads PXB (``xml['bcm_switches']``). ``PHB`` is NCCL's own path
type for two devices that meet at the CPU (``src/graph/paths.cc`` ``ncclTopoSetPaths``: any PCI hop to or from the CPU
node); ``nvidia-smi`` prints ``NODE`` instead when the two sit under different PCIe host bridges of one NUMA node,
which NCCL's XML cannot show: its tree skips the root ports and names no host bridge (``src/graph/xml.cc``
``ncclTopoGetXmlFromSys`` climbs two sysfs levels at a time and stops at the ``pci0000:xx`` root). GPUs are numbered
in PCI bus order as ``nvidia-smi`` does, NICs in NCCL's ``dev`` order, then the NICs listed as PCI devices only in bus
order. What only the XML says is kept in ``TopoResult.xml``: per GPU its bus id, ``dev``/``rank``/``sm``, NVLink
targets and counts and C2C; per NIC its speed (Gb/s) and GDR flag; the PCIe tree with each link's speed and width; the
bridges whose uplink NCCL models slower than a device below them (:mod:`.topo_pcie`); per GPU, the NICs NCCL takes as
its local ones, by path bandwidth then path type, where the file gives every NIC's speed (``xml['local_nics']``,
:mod:`.topo_local`). A dump cut at the end of a tag (as pasted in issues) is read up to the cut, with a note; other
malformed XML raises one ValueError naming the line.

The ``NCCL_TOPO_FILE`` files clouds ship for their VMs (AWS p4d, Azure ND, Nebius) often list a GPU as a bare
``<pci>`` of a display class (``0x03..``, NVIDIA's or of no stated vendor) with no ``<gpu>`` element, since NCCL
fills in the GPU when it runs: such a GPU is read from its place in the PCIe tree, marked ``pci_only`` (no ``sm``,
``dev`` or NVLinks known), with a note. Their NICs are often bare ``<pci>`` elements of a network class (``0x02..``:
Ethernet ``0x0200..``, InfiniBand ``0x0207..``) with no ``<nic><net>``: NCCL attaches each network device it finds
to the ``<pci>`` of its bus id when it runs (``src/graph/xml.cc`` ``ncclTopoFillNet``), so such a NIC is placed
from the tree too, in ``TopoResult.xml['pci_nics']`` (bus id, class, vendor, device, NUMA node) and never in
``xml['nics']``, with no name, speed or GDR flag, which only NCCL's run knows.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import NamedTuple

from nvcourse import catalog

from .topo_graph import build_graph
from .topo_local import inter_cpu_GBps, local_nic_notes, local_nics
from .topo_nets import c2c_notes, gpu_gdr_notes, is_socket_net, net_notes
from .topo_pcie import bcm_flatten, nccl_pci_GBps, slow_uplinks
from .topo_result import TopoResult

__all__ = ["looks_like_xml", "parse_xml", "switch_links_to_peers", "NVSWITCH_CLASS"]

NVSWITCH_CLASS = "0x068000"
_GPU_CLASS = re.compile(r"^0x03")  # a display controller: NCCL takes any class 0x03.. for a GPU (xml.h kvDictPciClass)
_NIC_CLASS = "0x02"  # a network controller: NCCL takes any class 0x02.. for a NIC (topo.cc kvDictPciClass)
_NVIDIA = "0x10de"


def looks_like_xml(text: str) -> bool:
    """True when ``text`` reads as NCCL's topology XML (what :mod:`.cli` uses to pick the reader)."""
    head = text.lstrip("\ufeff \t\r\n")[:4096]
    return head.startswith("<") and ("<system" in head or "<?xml" in head)


_TAG = re.compile(r"<(/?)([A-Za-z][\w.-]*)[^<>]*?(/?)>")


def _closed(text: str) -> str | None:
    """``text`` with the elements a cut paste left open closed again, or None when the cut is not at a tag's end
    or the tags do not nest (then the error is real)."""
    body = text.rstrip()
    if not body.endswith(">"):
        return None
    stack: list[str] = []
    for m in _TAG.finditer(re.sub(r"<!--.*?-->", "", body, flags=re.S)):
        closing, name, empty = m.groups()
        if empty:
            continue
        if closing:
            if not stack or stack[-1] != name:
                return None
            stack.pop()
        else:
            stack.append(name)
    return body + "".join(f"</{name}>" for name in reversed(stack)) if stack else None


def _root(text: str, notes: list[str]) -> ET.Element:
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise ValueError("NCCL topology XML: a DOCTYPE/ENTITY declaration is not part of NCCL's format")
    text = text.strip().lstrip("\ufeff")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        line, col = exc.position
        fixed = _closed(text) if line >= text.count("\n") + 1 else None  # only a cut at the very end is mended
        try:
            root = ET.fromstring(fixed) if fixed else None
        except ET.ParseError:
            root = None
        if root is None:
            raise ValueError(f"line {line}: malformed NCCL topology XML ({str(exc).split(':')[0]}, column {col})") \
                from None
        notes.append(f"the XML stops after line {text.count(chr(10)) + 1} (a cut paste): read what is there, "
                     "devices after the cut are missing")
    if root.tag != "system":
        raise ValueError(f"line 1: NCCL topology XML must start with <system version=...>; found <{root.tag}>")
    return root


class _At(NamedTuple):
    """Where the walk is: the bus ids from the CPU down as NCCL models them (without the bridges it merges into a
    Broadcom switch above, :func:`~.topo_pcie.bcm_flatten`), NCCL's GB/s for each one's link up, and the bus ids as
    the file nests them."""
    path: tuple[str, ...] = ()
    links: tuple[float | None, ...] = ()
    file_path: tuple[str, ...] = ()

    def down(self, pci: ET.Element, merged: set[ET.Element]) -> _At:
        bus = pci.get("busid", "?")
        if pci in merged:
            return self._replace(file_path=(*self.file_path, bus))
        return _At((*self.path, bus), (*self.links, nccl_pci_GBps(pci.get("link_speed"), pci.get("link_width"))),
                   (*self.file_path, bus))

    def above(self) -> dict:
        """A device whose own ``<pci>`` ends the path: the bridges above it and its own link."""
        return {"path": self.path[:-1], "links": self.links[:-1], "own_GBps": self.links[-1] if self.links else None,
                "file_path": self.file_path[:-1]}


def _walk(el: ET.Element, cpu: ET.Element, at: _At, found: dict, merged: set[ET.Element]) -> None:
    """Collect GPUs and NICs with their PCI path (bus ids from the CPU down) and the bridges on the way; ``merged``:
    the bridges NCCL merges into the Broadcom switch above them."""
    for child in el:
        if child.tag == "pci":
            bus = child.get("busid", "?")
            found["pci"].append({"bus_id": bus, "class": child.get("class"),
                                 "parent": at.file_path[-1] if at.file_path else None,
                                 "numa": cpu.get("numaid"), "link_speed": child.get("link_speed"),
                                 "link_width": _int(child.get("link_width"))})
            below = at.down(child, merged)
            if _bare_gpu(child):
                found["gpus"].append(_pci_gpu(child, cpu, at.path) | below.above())
            elif (child.get("class") or "").startswith(_NIC_CLASS) and child.find("nic") is None:
                found["pci_nics"].append(_pci_nic(child, cpu, at.path) | below.above())
            _walk(child, cpu, below, found, merged)
        elif child.tag == "gpu":
            found["gpus"].append(_gpu(child, el, cpu, at.path) | at.above())
        elif child.tag == "nic":
            for net in child.iter("net"):
                found["nics"].append(_nic(net, cpu, at.path) | at.above())
        elif child.tag in ("nvs", "nvswitch"):
            continue


def _int(v: str | None) -> int | None:
    try:
        return int(v) if v is not None else None
    except ValueError:
        return None


def _gpu(g: ET.Element, parent: ET.Element, cpu: ET.Element, path: tuple[str, ...]) -> dict:
    links = [{"target": n.get("target"), "count": _int(n.get("count")) or 0, "tclass": n.get("tclass")}
             for n in g.findall("nvlink")]
    c2c = [{"bw": _int(c.get("bw")), "count": _int(c.get("count"))} for c in g.findall("c2c")]
    return {"bus_id": parent.get("busid") if parent.tag == "pci" else None, "dev": _int(g.get("dev")),
            "rank": _int(g.get("rank")), "sm": _int(g.get("sm")), "gdr": g.get("gdr"), "numa": cpu.get("numaid"),
            "host": cpu.get("host_hash"),
            "cpu_affinity": cpu.get("affinity"), "path": path[:-1] if path else (), "nvlinks": links, "c2c": c2c}


def _bare_gpu(pci: ET.Element) -> bool:
    """A ``<pci>`` of a display class with no ``<gpu>`` inside, from NVIDIA or of no stated vendor (a BMC's VGA
    device names its own vendor and is not taken for a GPU)."""
    vendor = (pci.get("vendor") or _NVIDIA).lower()
    return bool(_GPU_CLASS.match(pci.get("class") or "")) and pci.find("gpu") is None and vendor == _NVIDIA


def _pci_gpu(pci: ET.Element, cpu: ET.Element, path: tuple[str, ...]) -> dict:
    """A GPU a hand-written NCCL_TOPO_FILE lists only as a PCI device: its place in the tree, nothing else."""
    return {"bus_id": pci.get("busid"), "dev": None, "rank": None, "sm": None, "gdr": None, "numa": cpu.get("numaid"),
            "host": cpu.get("host_hash"), "cpu_affinity": cpu.get("affinity"), "path": path, "nvlinks": [],
            "c2c": [], "pci_only": True}


def _pci_nic(pci: ET.Element, cpu: ET.Element, path: tuple[str, ...]) -> dict:
    """A NIC a hand-written NCCL_TOPO_FILE lists only as a PCI device of a network class: its place in the tree.
    NCCL gives it a name, speed and GDR flag only when it runs (src/graph/xml.cc ncclTopoFillNet attaches the
    <nic><net> of the network device whose sysfs bus id is this one), so none is made up here."""
    return {"bus_id": pci.get("busid"), "class": pci.get("class"), "vendor": pci.get("vendor"),
            "device": pci.get("device"), "name": None, "gdr": None, "numa": cpu.get("numaid"),
            "host": cpu.get("host_hash"), "path": path, "pci_only": True}


def _nic(net: ET.Element, cpu: ET.Element, path: tuple[str, ...]) -> dict:
    speed = _int(net.get("speed"))
    return {"name": net.get("name"), "dev": _int(net.get("dev")), "speed_Gbps": speed / 1000 if speed else None,
            "port": _int(net.get("port")), "gdr": net.get("gdr"), "guid": net.get("guid"),
            "maxconn": _int(net.get("maxconn")), "numa": cpu.get("numaid"),
            "host": cpu.get("host_hash"),
            "path": path[:-1] if path else (), "bus_id": path[-1] if path else None}


def _pcie_code(a: dict, b: dict, tree: str = "path") -> str:
    """The path code of two devices from where they sit in the tree. Two that meet only at their CPU are PHB:
    NCCL types any path through the CPU node so (src/graph/paths.cc ncclTopoSetPaths), and the XML cannot tell
    nvidia-smi's NODE (different host bridges of one NUMA node) from its PHB, as it records no host bridge.
    ``tree``: ``'path'``, NCCL's tree (Broadcom switch levels merged), or ``'file_path'``, the file's nesting."""
    if a["host"] != b["host"] or a["numa"] != b["numa"]:  # another host (multi-node NVLink domain) or socket
        return "SYS"
    pa, pb = a[tree], b[tree]
    if a["bus_id"] is not None and a["bus_id"] == b["bus_id"]:
        return "PIX"  # two ports of one NIC (one PCI device)
    if pa and pb and pa[-1] == pb[-1]:
        return "PIX"
    if pa and pb and pa[0] == pb[0]:
        return "PXB"
    return "PHB"


def _nv_code(a: dict, b: dict) -> str | None:
    direct = sum(link["count"] for link in a["nvlinks"] if link["target"] == b["bus_id"])
    if direct:
        return f"NV{direct}"
    sw_a = {link["target"]: link["count"] for link in a["nvlinks"] if link["tclass"] == NVSWITCH_CLASS}
    sw_b = {link["target"]: link["count"] for link in b["nvlinks"] if link["tclass"] == NVSWITCH_CLASS}
    if sw_a and sw_b and set(sw_a) & set(sw_b):
        return f"NV{min(sum(sw_a.values()), sum(sw_b.values()))}"
    return None


def parse_xml(text: str, *, nvlink: str | None = None, pcie: str | None = None):
    """A :class:`TopoResult` from NCCL's topology XML; ``nvlink``/``pcie`` as in :func:`parse_topo`."""

    nv_link = catalog.get_link(nvlink) if nvlink is not None else None
    pcie_link = catalog.get_link(pcie) if pcie is not None else None
    cut_notes: list[str] = []
    root = _root(text, cut_notes)
    found: dict = {"gpus": [], "nics": [], "pci_nics": [], "pci": []}
    merged, bcm = bcm_flatten(root)
    for cpu in root.iter("cpu"):
        _walk(cpu, cpu, _At(), found, merged)
    if not found["gpus"]:
        raise ValueError("line 1: NCCL topology XML without any GPU (no <gpu> element and no NVIDIA <pci> of a "
                         "display class 0x03..)")
    gpus = sorted(found["gpus"], key=lambda g: (g["bus_id"] or "", g["rank"] or 0, g["dev"] or 0))
    nics = sorted(found["nics"], key=lambda n: (n["dev"] if n["dev"] is not None else 1 << 30, n["name"] or ""))
    # NICs known only as PCI devices come after the named ones, in bus order: NCCL numbers them when it runs
    pci_nics = sorted(found["pci_nics"], key=lambda n: (n["host"] or "", n["bus_id"] or ""))
    names = {f"GPU{i}": g for i, g in enumerate(gpus)} | {f"NIC{i}": n for i, n in enumerate(nics + pci_nics)}
    devices = list(names)
    codes: dict[tuple[str, str], str] = {}
    for a in devices:
        for b in devices:
            if a != b:
                da, db = names[a], names[b]
                nv = _nv_code(da, db) if a.startswith("GPU") and b.startswith("GPU") else None
                codes[(a, b)] = nv or _pcie_code(da, db)
    uplinks = slow_uplinks(root, merged)
    gpu_d = {k: v for k, v in names.items() if k.startswith("GPU")}
    # NCCL's pick of local NICs needs every named NIC's speed; NICs known as PCI devices only are rated when it runs
    local = {} if pci_nics or any(n["speed_Gbps"] is None for n in nics) else local_nics(
        gpu_d, {k: v for k, v in names.items() if k.startswith("NIC")}, codes,
        {(cpu.get("host_hash"), cpu.get("numaid")): inter_cpu_GBps(cpu) for cpu in root.iter("cpu")})
    c2c = {k for k, v in names.items() if k.startswith("GPU") and v["c2c"]}
    # a GPU whose own gdr flag is 0 gets no GPUDirect RDMA over P2C either (ncclTopoCheckGdr checks that flag first)
    gdr_off = {k for k, v in names.items() if k.startswith("GPU") and v["gdr"] == "0"}
    # NICs no NCCL_NET_GDR_LEVEL helps: gdr 0, or a socket interface (host memory only)
    no_gdr = {k for k, v in names.items() if k.startswith("NIC") and (v.get("gdr") == "0" or is_socket_net(v))}
    nic_labels = [d for d in devices if d.startswith("NIC")]
    notes = (cut_notes + _notes(gpus, nics, pci_nics) + gpu_gdr_notes(names)
             + _bcm_notes(bcm, names, codes) + net_notes(nics, found["pci"], len(pci_nics))
             + c2c_notes(names, found["pci"])
             + local_nic_notes(local, nic_labels, codes, {k: v["name"] for k, v in names.items() if k in nic_labels
                                                          and v.get("name")})
             + _phb_notes(codes, c2c, gdr_off, local) + _uplink_notes(uplinks)
             + _cpu_only_notes(codes, c2c, no_gdr, cut=bool(cut_notes), local=local))
    res = TopoResult(devices, [d for d in devices if d.startswith("GPU")], [d for d in devices if d.startswith("NIC")],
                     codes, {f"NIC{i}": n["name"] for i, n in enumerate(nics) if n["name"]},
                     {f"GPU{i}": {"cpu_affinity": g["cpu_affinity"], "numa_affinity": g["numa"]}
                      for i, g in enumerate(gpus) if g["cpu_affinity"] is not None},
                     has_legend=False, notes=notes)
    res.source_format = "nccl-xml"
    # the file names its NVSwitch (tclass 0x068000): the graph need not infer one from the link counts
    res.nvswitch_stated = any(link["tclass"] == NVSWITCH_CLASS for g in gpus for link in g["nvlinks"])
    res.xml = {"version": root.get("version"),
               "gpus": {k: {x: v[x] for x in ("bus_id", "dev", "rank", "sm", "gdr", "numa", "nvlinks", "c2c")}
                        | {"pci_only": v.get("pci_only", False)} for k, v in names.items() if k.startswith("GPU")},
               "nics": {k: {x: v[x] for x in ("name", "dev", "speed_Gbps", "port", "gdr", "numa", "bus_id", "guid")}
                        for k, v in names.items() if k.startswith("NIC") and not v.get("pci_only")},
               "pci_nics": {k: {x: v[x] for x in ("bus_id", "class", "vendor", "device", "numa")}
                            for k, v in names.items() if k.startswith("NIC") and v.get("pci_only")},
               "pcie": found["pci"], "slow_uplinks": uplinks, "bcm_switches": bcm, "local_nics": local}
    build_graph(res, nv_link, pcie_link)
    return res


def _notes(gpus: list[dict], nics: list[dict], pci_nics: list[dict]) -> list[str]:
    """What the file says or leaves out: ``nics`` are the named ones (``<nic><net>``), ``pci_nics`` the PCI-only."""
    out = ["read from NCCL's topology XML: path codes worked out from its PCIe tree and NVLink counts"]
    if any(link["tclass"] == NVSWITCH_CLASS for g in gpus for link in g["nvlinks"]):
        out.append("NVLinks go to NVSwitches (tclass 0x068000): NV# is each GPU's link count to them")
    if note := _switch_class_to_gpus(gpus):
        out.append(note)
    if len({g["host"] for g in gpus}) > 1:
        out.append(f"{len({g['host'] for g in gpus})} hosts in one file (a multi-node NVLink domain): devices on "
                   "different hosts without NVLink between them are marked SYS (nvidia-smi has no code across hosts)")
    if bare := sum(g.get("pci_only", False) for g in gpus):
        out.append(f"{bare} of the GPUs are PCI devices only (a hand-written NCCL_TOPO_FILE: no <gpu> element, so no "
                   "SM version, NVLinks or rank; NCCL fills them in when it runs): their codes come from the PCIe tree")
    if plain := sum(not g.get("pci_only", False) and not g["nvlinks"] for g in gpus):
        out.append(f"{plain} <gpu> {'element lists' if plain == 1 else 'elements list'} no NVLink: given as "
                   "NCCL_TOPO_FILE, such a file leaves NCCL to ask "
                   "the driver for them when it runs (and for a missing SM version), so NVLinks the GPUs may have are "
                   "not in these codes (NCCL's own dump lists none where there are none)")
    if selfish := sum(any(link["target"] == g["bus_id"] for link in g["nvlinks"]) for g in gpus):
        out.append(f"{selfish} {'GPU lists' if selfish == 1 else 'GPUs list'} NVLinks whose target is the GPU "
                   "itself: NCCL links the GPU to itself, so these are no links to another GPU")
    if off := [n["name"] or "?" for n in nics if n["gdr"] == "0"]:
        one = len(off) == 1
        out.append(f"{', '.join(off)} {'reports' if one else 'report'} gdr 0: NCCL does not use GPUDirect RDMA "
                   f"through {'it' if one else 'them'}, so network data is staged through host memory (an RDMA NIC "
                   "says gdr 0 when nvidia-peermem or DMA-BUF was missing as the file was written; a socket "
                   "interface always does)")
    if pci_nics:
        one = len(pci_nics) == 1
        out.append(f"{len(pci_nics)} {'NIC is a PCI device' if one else 'NICs are PCI devices'} only (a network "
                   "class 0x02.. with no <nic><net>): NCCL attaches each network device it finds to the <pci> of its "
                   "bus id when it runs, so names, port speeds and GDR support are known only then; "
                   f"{'its codes come' if one else 'their codes come'} from the PCIe tree")
    elif not nics:
        out.append("no NIC as NCCL names one (<nic><net>): a NCCL_TOPO_FILE may list NICs as PCI devices only, which "
                   "NCCL matches to its network devices when it runs")
    if len({(g["host"], g["bus_id"]) for g in gpus}) < len(gpus):
        out.append("several ranks share a GPU (same bus id): each is listed")
    return out


def switch_links_to_peers(links: list[dict], peers: set[str]) -> list[dict]:
    """The NVLink lines (``{'target', 'count', 'tclass'}``) that carry the NVSwitch class but name another GPU's bus
    id (one of ``peers``): a hand-written file's way of listing a GPU's switch links once per peer, which NCCL adds
    up (src/graph/topo.cc ncclTopoAddNvLinks goes by the class, ncclTopoConnectNodes adds the bandwidths)."""
    return [link for link in links if link["tclass"] == NVSWITCH_CLASS and link["target"] in peers]


def _switch_class_to_gpus(gpus: list[dict]) -> str | None:
    """The note for a file whose GPUs list NVLinks to other GPUs' bus ids with the NVSwitch class: NCCL goes by the
    class (src/graph/topo.cc ncclTopoAddNvLinks: tclass 0x068000 is the one NVSwitch node, whatever the target) and
    adds the bandwidth of every line to the same switch (ncclTopoConnectNodes), so it sees their sum."""
    buses = {g["bus_id"] for g in gpus}
    for g in gpus:
        peers = switch_links_to_peers(g["nvlinks"], buses - {g["bus_id"]})
        if len(peers) > 1:
            total = sum(link["count"] for link in g["nvlinks"] if link["tclass"] == NVSWITCH_CLASS)
            counts = sorted({link["count"] for link in peers})
            each = f"count {counts[0]} each" if len(counts) == 1 else "counts " + "/".join(map(str, counts))
            return (f"a GPU lists NVLinks to {len(peers)} other GPUs ({each}) with the NVSwitch class (tclass "
                    f"0x068000): NCCL goes by the class, reads every such line as links to the one NVSwitch and adds "
                    f"them up, so it sees {total} links per GPU; the pair codes here count each pair's own links, as "
                    "nvidia-smi does. NCCL's own dumps list each of a GPU's links once (per switch chip, or all "
                    "under one switch id)")
    return None


def _near_codes(g: str, codes: dict[tuple[str, str], str], local: dict[str, dict]) -> set[str]:
    """The path codes GPU ``g`` has to its nearest NICs: that of NCCL's pick where it is known (``local``, from
    :func:`~.topo_local.local_nics`), else those of every NIC."""
    if g in local:
        return {local[g]["path"]}
    return {c for (a, b), c in codes.items() if a == g and b.startswith("NIC")}


def _bcm_notes(merges: list[dict], names: dict[str, dict], codes: dict[tuple[str, str], str]) -> list[str]:
    """The Broadcom PEX switches NCCL merges from two levels into one (:func:`~.topo_pcie.bcm_flatten`), and the
    device pairs that are PIX to NCCL (one PCI node between them) though the file nests them as PXB. Both are within
    NCCL's default GPUDirect RDMA level (src/graph/paths.cc ncclTopoCheckGdr at v2.30.7-1: PATH_P2C with
    NCCL_NET_GDR_C2C at its default 1, else PATH_PXB; PIX < PXB < P2C in src/include/graph.h), so that is unchanged."""
    if not merges:
        return []
    devs = list(names)
    changed = [(a, b) for i, a in enumerate(devs) for b in devs[i + 1:]
               if codes[(a, b)] == "PIX" and _pcie_code(names[a], names[b], "file_path") == "PXB"]
    kinds: dict[str, int] = {}
    for a, b in changed:
        kind = "-".join(sorted((a[:3], b[:3])))  # GPU-GPU, GPU-NIC, NIC-NIC
        kinds[kind] = kinds.get(kind, 0) + 1
    out = []
    for gen in sorted({m["gen"] for m in merges}):
        ups = [m for m in merges if m["gen"] == gen]
        one = len(ups) == 1
        ids = "/".join(sorted({f"{m['vendor']}:{m['device']}" for m in ups}))
        out.append(f"{len(ups)} Broadcom PEX Gen{gen} {'switch' if one else 'switches'} ({ids}: "
                   f"{', '.join(m['bus_id'] for m in ups)}) {'appears' if one else 'appear'} in the file as two "
                   f"levels of bridges; NCCL {ups[0]['nccl_from']} and later merge the lower level into the upper "
                   "one, and the codes here follow NCCL")
    said = (f"{' and '.join(f'{n} {k}' for k, n in sorted(kinds.items()))} {'pair' if len(changed) == 1 else 'pairs'}"
            f" below one such switch {'is' if len(changed) == 1 else 'are'} PIX, not the PXB the nested bridges read as"
            if changed else "no device pair changes code")
    return out[:-1] + [f"{out[-1]}: {said}. GPUDirect RDMA is the same either way: NCCL's default "
                       "NCCL_NET_GDR_LEVEL admits PIX and PXB paths alike"]


def _phb_notes(codes: dict[tuple[str, str], str], c2c: set[str], gdr_off: set[str] = frozenset(),
               local: dict[str, dict] | None = None) -> list[str]:
    """Say what PHB stands for here, where some pair meets only at a CPU: NCCL's type for any path through the CPU
    node (src/graph/paths.cc ncclTopoSetPaths), which is nvidia-smi's PHB or NODE; the XML cannot tell the two. A GPU
    on C2C (``c2c``) reaches a nearest NIC on its CPU by P2C in NCCL (ncclTopoComputePaths, mergePathType), a type
    nvidia-smi has not: it stays PHB in the codes and the note names it."""
    if "PHB" not in codes.values():
        return []
    # P2C only where such a NIC is the GPU's nearest (ncclTopoGetLocal): a GPU with a NIC on its PCIe switch keeps PHB
    on_c2c = sorted((g for g in c2c if (near := _near_codes(g, codes, local or {}))
                     and "PHB" in near and not near & {"PIX", "PXB"}), key=lambda g: int(g[3:]))
    return ["devices that meet only at their CPU (no PCIe switch in common) are PHB, NCCL's path type for them; "
            "nvidia-smi prints NODE instead for two devices under different PCIe host bridges of one NUMA node, "
            "which the XML does not record"
            + ("" if not on_c2c else
               f"; {', '.join(on_c2c)}, joined to {'its CPU' if len(on_c2c) == 1 else 'their CPUs'} by C2C, "
               f"{'reaches' if len(on_c2c) == 1 else 'reach'} the nearest NIC on that CPU by what NCCL (2.27 and "
               "later) calls P2C, "
               + ("which keeps GPUDirect RDMA at the default level (2.26: only with NCCL_NET_GDR_C2C=1; earlier NCCL "
                  "types the path PHB and turns GPUDirect RDMA off)" if not set(on_c2c) & gdr_off else
                  "which the default GPUDirect RDMA level allows from 2.27, though a GPU that reports gdr 0 gets "
                  "none"))]


def _uplink_notes(uplinks: list[dict]) -> list[str]:
    """The slowest PCIe bridge uplink, where one is slower than a GPU or NIC below it: NCCL gives every <pci> a link
    of width x rate / 80 GB/s (src/graph/topo.cc ncclTopoAddPci) and rates a path at its slowest link."""
    if not uplinks:
        return []
    u, n = uplinks[0], len(uplinks)
    head = ("a PCIe bridge links up to its parent slower than a GPU or NIC below it: " if n == 1 else
            f"{n} PCIe bridges link up to their parents slower than a GPU or NIC below them; the slowest, ")
    return [f"{head}{u['bus_id']} ({u['link_speed'] or 'no stated speed'} x{u['link_width']}), NCCL models at "
            f"{u['nccl_GBps']:g} GB/s against {u['below_GBps']:g} GB/s for the fastest device below it: NCCL rates "
            "every path through that link (to the CPU and host memory, to a NIC or GPU under another bridge, to the "
            "other socket) at no more. A VM's virtual bridge may state less than the hardware has; NCCL still uses "
            "what is stated"]


def _cpu_only_notes(codes: dict[tuple[str, str], str], c2c: set[str], no_gdr: set[str] = frozenset(),
                    cut: bool = False, local: dict[str, dict] | None = None) -> list[str]:
    """GPUs whose nearest NIC is reached only through a CPU (PHB or SYS): NCCL's default NCCL_NET_GDR_LEVEL is
    PXB, or P2C when NCCL_NET_GDR_C2C is on (its default), and ncclTopoCheckGdr (src/graph/paths.cc) turns GPUDirect
    RDMA off when the GPU-NIC path type is above it, except through another GPU that has a nearer NIC (PXN: it then
    takes that GPU's distance). A GPU joined to its CPU by C2C (``c2c``) is left out: NCCL's P2C path through it
    keeps GPUDirect RDMA at the default level (from 2.27). ``no_gdr``: the NICs that can never do GPUDirect RDMA (gdr
    0, or a socket interface: ncclTopoCheckGdr returns before any level is compared), which no level helps;
    ``cut``: the file was cut, so only the NICs it shows are known; ``local``: NCCL's pick of each GPU's local NICs,
    where known (:func:`~.topo_local.local_nics`), which may be a farther NIC reached with more bandwidth."""
    gpus = sorted({a for a, _b in codes if a.startswith("GPU") and a not in c2c}, key=lambda g: int(g[3:]))
    nics = {b for (_a, b) in codes if b.startswith("NIC")}
    far = [g for g in gpus if (near := _near_codes(g, codes, local or {})) and not near & {"PIX", "PXB"}]
    if not far:
        return []
    one = len(far) == 1
    head = (f"{', '.join(far)} {'reaches its' if one else 'reach their'} nearest NIC"
            f"{' of those in the file' if cut else ''} only through a CPU (PHB or SYS)")
    if nics and nics <= no_gdr:
        return [f"{head}; GPUDirect RDMA is off here anyway: every NIC reports gdr 0 (a socket interface never has "
                "it), so no NCCL_NET_GDR_LEVEL enables it"]
    return [f"{head}: at its default NCCL_NET_GDR_LEVEL (nothing farther than PXB, or P2C on C2C systems) NCCL does "
            "not use GPUDirect RDMA on such a path, so "
            "network data is staged through host memory (it may use GPUDirect RDMA through a GPU with a nearer "
            "NIC, PXN; NCCL_NET_GDR_LEVEL=PHB, or SYS across sockets, allows it)"]
