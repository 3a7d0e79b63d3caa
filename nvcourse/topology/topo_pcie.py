"""NCCL's model of the PCIe links in its topology XML, and the bridges whose uplink is slower than a device below.

When NCCL builds its system from the XML (``src/graph/topo.cc`` ``ncclTopoAddPci``) every ``<pci>`` element gets one
link to its parent of ``width x rate / 80`` GB/s, from that element's own ``link_width`` and ``link_speed``: the
rate is a per-lane figure in units of 100 Mb/s looked up by the start of ``link_speed`` (``kvDictPciGen``: 2.5 GT/s
is 15, 5 GT/s 30, 8 GT/s 60, 16 GT/s 120, 32 GT/s 240, 64 GT/s 480; anything else, an empty string included, 60),
and a width of 0 counts as 16. A PCIe switch's link to the CPU is therefore the bandwidth NCCL gives every path that
leaves the switch upward; when it is slower than a GPU or NIC below it, NCCL rates those paths at the lower figure.

A Broadcom PEX switch presents itself as two levels of bridges; NCCL merges a lower level into the upper one
(``ncclTopoFlattenBcmSwitches``, :func:`bcm_flatten`), so the merged bridges and their uplinks are not in its model.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from .. import _data

__all__ = ["bcm_flatten", "c_strtol", "nccl_pci_GBps", "nccl_width", "slow_uplinks"]

#: NCCL's figures for the links of its topology XML (nvcourse/data/nccl_tuning.toml [topology_xml], with the source)
_XML = _data.load("nccl_tuning")["topology_xml"]
#: (start of link_speed, per-lane rate in 100 Mb/s) in NCCL's order: the first prefix that matches wins (kvDictPciGen,
#: read with kvConvertToInt, a strncmp on the entry's length)
_LANE_RATE = tuple((e["prefix"], int(e["rate"])) for e in _XML["pci_lane_rate_100Mbps"])
_DEFAULT_LANE_RATE = int(_XML["pci_default_lane_rate_100Mbps"])  # an empty or unknown link_speed
_LEADING_INT = re.compile(r"\s*[+-]?\d+")
_C_INT = re.compile(r"\s*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9]\d*)")
# NCCL's node types by class (topo.cc kvDictPciClass): NVSwitch and CPU classes are no PCIe device of ours
_NOT_PCIE = ("0x068000", "0x068001")
# getBcmGen's figures (nccl_tuning.toml [topology_xml] bcm_*, with the source), kept as hex strings: the mask is above
# TOML's signed 64-bit range
_BCM_MASK = int(_XML["bcm_id_mask"], 16)
_BCM_GEN4 = int(_XML["bcm_gen4_id"], 16)
_BCM_GEN5 = int(_XML["bcm_gen5_id"], 16)
_BCM_LEVEL_STEP = int(_XML["bcm_gen5_level_step"], 16)
_BCM_MARK = int(_XML["bcm_merged_mark"], 16)


def nccl_width(width: int) -> int:
    """The lane count NCCL uses for a ``link_width``: 0 (what a VM or an unreadable sysfs file gives) counts as 16
    (``ncclTopoAddPci``: ``if (width == 0) width = 16``)."""
    return int(_XML["pci_zero_width_lanes"]) if width == 0 else width


def _width_attr(raw: str) -> int:
    """``link_width`` as NCCL reads it (``strtol``): the leading integer, 0 when there is none."""
    m = _LEADING_INT.match(raw)
    return int(m.group()) if m else 0


def nccl_pci_GBps(speed: str | None, width: str | None) -> float | None:
    """GB/s (per direction) NCCL gives the link of a ``<pci>`` with these raw ``link_speed`` / ``link_width``
    attribute values; None when either is absent, since NCCL then reads it from the system when it runs
    (``src/graph/xml.cc`` ``ncclTopoGetXmlFromSys`` fills only missing attributes)."""
    if speed is None or width is None:
        return None
    rate = next((r for start, r in _LANE_RATE if speed.startswith(start)), _DEFAULT_LANE_RATE)
    return nccl_width(_width_attr(width)) * rate / 80.0  # 100 Mb/s per lane -> GB/s: x 1e8 / 8 / 1e9


def _kind(pci: ET.Element) -> str:
    """``'device'`` (a GPU or NIC, listed with its element or as a bare display/network class), ``'skip'`` (an
    NVSwitch or CPU class) or ``'bridge'`` (any other ``<pci>``: NCCL's PCI node, the only kind it descends into)."""
    cls = pci.get("class") or ""
    if pci.find("gpu") is not None or pci.find("nic") is not None or cls.startswith(("0x03", "0x02")):
        return "device"
    return "skip" if cls.startswith(_NOT_PCIE) else "bridge"


def _fastest_below(pci: ET.Element, out: list[dict], merged: set[ET.Element]) -> float | None:
    """The fastest NCCL link (GB/s) of the GPUs and NICs at or below ``pci``; bridges slower than it go to ``out``,
    except those in ``merged``: NCCL drops their uplink with them (:func:`bcm_flatten`)."""
    kind = _kind(pci)
    own = nccl_pci_GBps(pci.get("link_speed"), pci.get("link_width"))
    if kind != "bridge":
        return own if kind == "device" else None
    below = [v for child in pci.findall("pci") if (v := _fastest_below(child, out, merged)) is not None]
    fastest = max(below, default=None)
    if own is not None and fastest is not None and own < fastest and pci not in merged:
        out.append({"bus_id": pci.get("busid"), "link_speed": pci.get("link_speed"),
                    "link_width": nccl_width(_width_attr(pci.get("link_width") or "")), "nccl_GBps": own,
                    "below_GBps": fastest})
    return fastest


def slow_uplinks(root: ET.Element, merged: set[ET.Element] = frozenset()) -> list[dict]:
    """The PCIe bridges (switches, root ports NCCL kept) whose link up to their parent NCCL models slower than a GPU
    or NIC below them, slowest first (file order among equals): ``{'bus_id', 'link_speed', 'link_width'`` (the
    lanes NCCL counts), ``'nccl_GBps'`` (that link, GB/s per direction), ``'below_GBps'`` (the fastest device's
    own link below it)``}``. Attributes a file leaves out are skipped: NCCL fills them in from the system.
    ``merged``: the bridges NCCL merges into a switch above (:func:`bcm_flatten`), whose uplinks it does not model."""
    out: list[dict] = []
    for cpu in root.iter("cpu"):
        for pci in cpu.findall("pci"):
            _fastest_below(pci, out, merged)
    return sorted(out, key=lambda u: u["nccl_GBps"])


def c_strtol(raw: str | None) -> int:
    """An attribute as C's ``strtol(str, NULL, 0)`` reads it (0x.. hex, 0.. octal, else decimal; 0 when none)."""
    m = _C_INT.match(raw or "")
    if not m:
        return 0
    sign, digits = m.groups()
    value = int(digits, 16 if digits[:2] in ("0x", "0X") else 8 if digits[0] == "0" else 10)
    return -value if sign == "-" else value


def _device_id(pci: ET.Element) -> int:
    """NCCL's 64-bit id of a PCI node (ncclTopoGetIntDevice): vendor, device, subsystem vendor, subsystem device."""
    return sum(c_strtol(pci.get(attr)) << shift for attr, shift in
               (("vendor", 48), ("device", 32), ("subsystem_vendor", 16), ("subsystem_device", 0)))


def _bcm_gen(device: int, level: int) -> int:
    """getBcmGen: 4 or 5 for a Broadcom PEX Gen4 (either level) or Gen5 switch at ``level``, else 0."""
    if device & _BCM_MASK == _BCM_GEN4:
        return 4
    return 5 if device & _BCM_MASK == _BCM_GEN5 | level * _BCM_LEVEL_STEP else 0


def _bridges(el: ET.Element, out: list[ET.Element]) -> list[ET.Element]:
    """The bridges below ``el`` in the order NCCL creates its PCI nodes (ncclTopoAddPci: a node, then its subtree;
    it descends into bridges only)."""
    for pci in el.findall("pci"):
        if _kind(pci) == "bridge":
            out.append(pci)
            _bridges(pci, out)
    return out


def bcm_flatten(root: ET.Element) -> tuple[set[ET.Element], list[dict]]:
    """The bridges NCCL merges away, and ``[{'bus_id', 'gen', 'merged': [bus ids], 'vendor', 'device', 'nccl_from'
    (the first NCCL release that merges this generation)}]`` per upper switch that took some:
    ncclTopoFlattenBcmSwitches run on the tree. NCCL scans every link of an upper switch, its parent's included; a
    parent is never a match (a Gen4 parent was merged and marked first, a Gen5 upper switch is level 0), so the
    children alone are looked at here."""
    order = [b for cpu in root.iter("cpu") for b in _bridges(cpu, [])]
    device = {b: _device_id(b) for b in order}
    kids = {b: [c for c in b.findall("pci") if c in device] for b in order}
    removed: set[ET.Element] = set()
    merges: list[dict] = []
    s = 0
    while s < len(order):
        switch = order[s]
        gen = _bcm_gen(device[switch], 0)
        if not gen:
            s += 1
            continue
        subs = [c for c in kids[switch] if _bcm_gen(device[c], 1) == gen]
        # before getBcmGen (2.20.3), a Gen4 sub switch had to carry the upper switch's very id
        exact = all(device[c] == device[switch] for c in subs)
        for sub in subs:  # the sub switch's links move to the upper switch; it leaves the list of PCI nodes
            kids[switch] = [c for c in kids[switch] if c is not sub] + kids[sub]
            removed.add(sub)
            order.remove(sub)
        device[switch] |= _BCM_MARK  # not merged again
        if subs:
            merges.append({"bus_id": switch.get("busid"), "gen": gen, "merged": [c.get("busid") for c in subs],
                           "vendor": switch.get("vendor"), "device": switch.get("device"),
                           "nccl_from": _XML["bcm_from"][str(gen)] if gen == 5 or exact
                           else _XML["bcm_gen4_masked_from"]})
        s = 0  # NCCL starts over, as its list of nodes changed
    return removed, merges
