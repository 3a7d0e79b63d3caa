"""What NCCL makes of the network devices and the C2C links in its topology XML: notes for :mod:`.topo_xml`.

- Several ``<net>`` under one ``<nic>`` (one ``<pci>``): ``src/graph/topo.cc`` ``ncclTopoAddPci`` makes one NIC node
  per ``<pci>`` holding a ``<nic>`` and links it to its parent once, at ``width x rate / 80`` GB/s
  (:func:`~.topo_pcie.nccl_pci_GBps`); ``ncclTopoAddNet`` hangs every ``<net>`` off that node at ``speed / 8000``
  GB/s (``speed`` in Mb/s). So all of them share that one PCIe link. NCCL's search shares a net's own bandwidth only
  among nets of the same GUID and port (``src/graph/search.cc`` ``ncclTopoSearchRecNet``); nets of different GUIDs
  are different adapters, which one PCI device does not hold: NCCL puts a net under the ``<pci>`` whose bus id ends
  its sysfs path (``src/graph/xml.cc`` ``ncclTopoFillNet``), so it is that path (a VM's, say) that puts them together.
- NICs of different speeds: NCCL takes as a GPU's local NICs those it reaches with the most bandwidth, the nearest
  path type among them (``topo.cc`` ``ncclTopoGetLocal``); its search skips a net slower than the channel bandwidth
  it is trying (``ncclTopoSearchRecNet``).
- NCCL's socket transport (``src/transport/net_socket.cc`` ``ncclNetSocketGetProperties``) reports guid = its device
  index, port 0, maxconn 65536 and host memory only (gdr 0); its speed is ``/sys/class/net/NAME/speed``, or 10000
  Mb/s ("Defaulting to 10 Gbps") when that cannot be read (Wi-Fi and tunnel interfaces often give none).
- ``<c2c bw count>``: ``bw`` is NVML's bandwidth of one C2C link in MB/s, ``count`` the active links
  (``xml.cc``); ``ncclTopoAddC2c`` links the GPU to its CPU at ``bw x count / 1000`` GB/s, a better path type than
  the PCIe one (``src/graph/paths.cc`` ``ncclTopoSetPaths``: C2C comes before PHB), so NCCL's GPU-CPU path is C2C.
- A GPU's ``gdr`` is CUDA's GPUDirect RDMA attribute for it (``src/plugin/net.cc`` ``ncclGpuGdrSupport``);
  ``ncclTopoCheckGdr`` (``paths.cc``) turns GPUDirect RDMA off when either the GPU's or the NIC's flag is 0.
"""

from __future__ import annotations

from .. import _data
from .topo_pcie import nccl_pci_GBps, nccl_width

__all__ = ["net_notes", "c2c_notes", "gpu_gdr_notes", "is_socket_net"]

# what NCCL's socket transport reports (nccl_tuning.toml [topology_xml]: ncclNetSocketGetProperties' maxComms,
# ncclNetSocketGetSpeed's fallback when sysfs gives no speed)
_SOCKET_MAXCONN = int(_data.load("nccl_tuning")["topology_xml"]["socket_max_comms"])
_SOCKET_DEFAULT_MBPS = int(_data.load("nccl_tuning")["topology_xml"]["socket_default_speed_Mbps"])


def _guid(raw: str | None) -> int | None:
    try:
        return int(raw, 16) if raw else None
    except ValueError:
        return None


def is_socket_net(n: dict) -> bool:
    """True when a ``<net>`` (as :mod:`.topo_xml` reads it: ``dev``, ``port``, ``guid``, ``maxconn``, ``gdr``) carries
    the properties NCCL's socket transport reports: guid = dev, port 0, maxconn 65536, gdr 0."""
    return (n.get("gdr") == "0" and n.get("port") == 0 and n.get("dev") is not None
            and _guid(n.get("guid")) == n["dev"] and n.get("maxconn") == _SOCKET_MAXCONN)


def _names(items: list[str]) -> str:
    return ", ".join(items)


def _shared_pci(nets: list[dict], pci: dict | None) -> tuple[list[float], set[int], float | None, bool]:
    """(speeds in Gb/s, GUIDs, NCCL's GB/s for the ``<pci>`` link or None, whether their total line rate is over it)."""
    speeds = [n["speed_Gbps"] for n in nets if n["speed_Gbps"] is not None]
    guids = {g for n in nets if (g := _guid(n.get("guid"))) is not None}
    link = nccl_pci_GBps(pci["link_speed"], str(pci["link_width"])) if pci and pci["link_width"] is not None else None
    return speeds, guids, link, link is not None and len(speeds) == len(nets) and sum(speeds) / 8 > link


def _plain_multiport_note(groups: list[tuple[str, list[dict], dict]]) -> str:
    """One note for the ordinary multi-port NICs (one GUID, one speed) whose ports together exceed NCCL's figure for
    their PCIe link: ``groups`` holds (bus id, nets, ``<pci>``) of each."""
    _bus, nets, pci = groups[0]
    speeds, _g, link, _o = _shared_pci(nets, pci)
    said = ", ".join(f"{'+'.join(n['name'] or '?' for n in ns)} ({bus})" for bus, ns, _p in groups)
    one = len(groups) == 1
    whose = "their" if one else "each NIC's"
    return (f"{said}: {'its ports sit' if one else 'the ports of each sit'} under one PCI device, which NCCL makes one "
            f"NIC with a single PCIe link to its parent ({pci['link_speed'] or 'no stated speed'} "
            f"x{nccl_width(pci['link_width'])}), modelled at {link:g} GB/s against {sum(speeds):g} Gb/s "
            f"({sum(speeds) / 8:g} GB/s) of line rate in total: NCCL's search plans {whose} channels within "
            f"{link:g} GB/s per direction (a planning budget, not a rate limit)")


def _shared_pci_note(bus: str, nets: list[dict], pci: dict | None) -> str | None:
    """The note for several nets under the ``<pci>`` ``bus`` that are not one ordinary adapter (several GUIDs or
    speeds): one NIC node, one PCIe link. None for an ordinary multi-port NIC (:func:`_plain_multiport_note`)."""
    speeds, guids, link, over = _shared_pci(nets, pci)
    total = sum(speeds)
    if len(guids) < 2 and len(set(speeds)) < 2:
        return None
    text = (f"{_names([n['name'] or '?' for n in nets])} sit under one PCI device ({bus}): NCCL makes them ports of "
            "one NIC with a single PCIe link to its parent")
    if link is not None:
        width = nccl_width(pci["link_width"])
        text += f" ({pci['link_speed'] or 'no stated speed'} x{width}), which it models at {link:g} GB/s"
    if speeds and len(speeds) == len(nets):
        text += f", against {total:g} Gb/s ({total / 8:g} GB/s) of line rate in total"
        if over:
            text += (f", so NCCL's search plans their channels together within {link:g} GB/s per direction (a "
                     "planning budget, not a rate limit)")
    rates = sorted(set(speeds))
    if len(rates) > 1:
        text += f"; their speeds differ ({'/'.join(f'{r:g}' for r in rates)} Gb/s)"
    if len(guids) > 1:
        text += (f"; they carry {len(guids)} different GUIDs, so {len(guids)} adapters (NCCL shares bandwidth only "
                 "among nets of one GUID and port), which one PCI device does not hold: NCCL places each net under "
                 "the bus id its sysfs path ends in, so that path (a VM's, say) put them together, and NCCL still "
                 "models the one link")
    return text


def _mixed_speed_note(nics: list[dict]) -> str | None:
    """NICs of different speeds (socket interfaces aside): what NCCL picks."""
    rates = sorted({n["speed_Gbps"] for n in nics if n["speed_Gbps"] is not None and not is_socket_net(n)})
    if len(rates) < 2:
        return None
    slow = [n["name"] or "?" for n in nics if n["speed_Gbps"] is not None and n["speed_Gbps"] < rates[-1]
            and not is_socket_net(n)]
    return (f"NICs of different speeds ({'/'.join(f'{r:g}' for r in rates)} Gb/s): NCCL takes as a GPU's local NICs "
            "those it reaches with the most bandwidth, then by the nearest path, and its search skips a NIC slower "
            f"than the channel bandwidth it tries, so {_names(slow)} {'is' if len(slow) == 1 else 'are'} no GPU's "
            "local NIC where the GPU reaches another with more bandwidth, and serve only channels no faster than "
            f"{'it is' if len(slow) == 1 else 'they are'}; front-end or storage ports can be left out with "
            "NCCL_IB_HCA")


def _socket_note(nics: list[dict], pci_nics: int) -> str | None:
    """Nets that carry the socket transport's properties: TCP, no RDMA; a speed of 10 Gb/s may be NCCL's default."""
    socks = [n for n in nics if is_socket_net(n)]
    if not socks:
        return None
    one = len(socks) == 1
    names = _names([n["name"] or "?" for n in socks])
    text = (f"{names} {'carries' if one else 'carry'} what NCCL's socket transport reports (guid = device index, "
            "port 0, maxconn 65536, gdr 0): TCP through host memory, no RDMA")
    if len(socks) == len(nics) and not pci_nics:
        text += "; the file lists no RDMA NIC"
    if default := [n["name"] or "?" for n in socks if n["speed_Gbps"] == _SOCKET_DEFAULT_MBPS / 1000]:
        text += (f"; the 10 Gb/s given for {_names(default)} is also what NCCL reports when it cannot read "
                 "/sys/class/net/NAME/speed (Wi-Fi and tunnel interfaces often give none), so it may be NCCL's "
                 "default, not the link's speed")
    return text


def net_notes(nics: list[dict], pci: list[dict], pci_nics: int) -> list[str]:
    """Notes on the named nets ``nics`` (:mod:`.topo_xml`'s dicts, with ``guid`` and ``maxconn``), ``pci`` the
    ``<pci>`` elements read (``bus_id``, ``link_speed``, ``link_width``), ``pci_nics`` how many NICs are PCI only."""
    by_bus: dict[str, list[dict]] = {}
    for n in nics:
        if n["bus_id"] is not None:
            by_bus.setdefault(n["bus_id"], []).append(n)
    pcis = {p["bus_id"]: p for p in pci}
    out, plain = [], {}
    for bus, nets in by_bus.items():
        if len(nets) < 2:
            continue
        if note := _shared_pci_note(bus, nets, pcis.get(bus)):
            out.append(note)
        elif (got := _shared_pci(nets, pcis.get(bus)))[3]:
            # ordinary multi-port NICs over their link: one note per (link, line rate), not one per NIC
            key = (pcis[bus]["link_speed"], pcis[bus]["link_width"], got[2], sum(got[0]))
            plain.setdefault(key, []).append((bus, nets, pcis[bus]))
    out += [_plain_multiport_note(groups) for groups in plain.values()]
    return out + [note for note in (_mixed_speed_note(nics), _socket_note(nics, pci_nics)) if note]


def c2c_notes(names: dict[str, dict], pci: list[dict]) -> list[str]:
    """The GPUs joined to their CPU by C2C: NCCL's bandwidth for it, and the PCIe link it is used instead of;
    ``names`` maps GPU labels to :mod:`.topo_xml`'s GPU dicts."""
    pcis = {p["bus_id"]: p for p in pci}
    out = []
    for g, d in names.items():
        links = [c for c in d.get("c2c", []) if c["bw"] and c["count"]]
        if not g.startswith("GPU") or not links:
            continue
        c = links[0]  # NCCL's dump writes one <c2c> per GPU
        text = (f"{g} is joined to its CPU by C2C ({c['count']} links of {c['bw']} MB/s as NVML gives them): NCCL "
                f"models it at bw x count / 1000 = {c['bw'] * c['count'] / 1000:g} GB/s and takes it for the "
                "GPU's path to the CPU")
        p = pcis.get(d["bus_id"])
        if p and (own := nccl_pci_GBps(p["link_speed"], None if p["link_width"] is None else str(p["link_width"]))):
            text += (f", not its PCIe link ({p['link_speed'] or 'no stated speed'} x{nccl_width(p['link_width'])}, "
                     f"{own:g} GB/s in NCCL's model), whose figures therefore do not limit it")
        out.append(text)
    return out


def gpu_gdr_notes(names: dict[str, dict]) -> list[str]:
    """The GPUs whose ``gdr`` is 0: NCCL uses GPUDirect RDMA with none of the NICs for them (``ncclTopoCheckGdr``
    checks the GPU's flag as well as the NIC's)."""
    off = [g for g, d in names.items() if g.startswith("GPU") and d.get("gdr") == "0"]
    if not off:
        return []
    one = len(off) == 1
    return [f"{_names(off)} {'reports' if one else 'report'} gdr 0 (CUDA's GPUDirect RDMA attribute for "
            f"{'it' if one else 'them'} as the file was written): NCCL turns GPUDirect RDMA off between "
            f"{'it' if one else 'them'} and every NIC, as it checks the GPU's flag as well as the NIC's, so network "
            "data is staged through host memory"]
