"""NCCL's model of the PCIe links in its topology XML, and the bridges whose uplink is slower than a device below.

When NCCL builds its system from the XML (``src/graph/topo.cc`` ``ncclTopoAddPci``) every ``<pci>`` element gets one
link to its parent of ``width x rate / 80`` GB/s, from that element's own ``link_width`` and ``link_speed``: the
rate is a per-lane figure in units of 100 Mb/s looked up by the start of ``link_speed`` (``kvDictPciGen``: 2.5 GT/s
is 15, 5 GT/s 30, 8 GT/s 60, 16 GT/s 120, 32 GT/s 240, 64 GT/s 480; anything else, an empty string included, 60),
and a width of 0 counts as 16. A PCIe switch's link to the CPU is therefore the bandwidth NCCL gives every path that
leaves the switch upward; when it is slower than a GPU or NIC below it, NCCL rates those paths at the lower figure.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from .. import _data

__all__ = ["nccl_pci_GBps", "nccl_width", "slow_uplinks"]

#: NCCL's figures for the links of its topology XML (nvcourse/data/nccl_tuning.toml [topology_xml], with the source)
_XML = _data.load("nccl_tuning")["topology_xml"]
#: (start of link_speed, per-lane rate in 100 Mb/s) in NCCL's order: the first prefix that matches wins (kvDictPciGen,
#: read with kvConvertToInt, a strncmp on the entry's length)
_LANE_RATE = tuple((e["prefix"], int(e["rate"])) for e in _XML["pci_lane_rate_100Mbps"])
_DEFAULT_LANE_RATE = int(_XML["pci_default_lane_rate_100Mbps"])  # an empty or unknown link_speed
_LEADING_INT = re.compile(r"\s*[+-]?\d+")
# NCCL's node types by class (topo.cc kvDictPciClass): NVSwitch and CPU classes are no PCIe device of ours
_NOT_PCIE = ("0x068000", "0x068001")


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


def _fastest_below(pci: ET.Element, out: list[dict]) -> float | None:
    """The fastest NCCL link (GB/s) of the GPUs and NICs at or below ``pci``; bridges slower than it go to ``out``."""
    kind = _kind(pci)
    own = nccl_pci_GBps(pci.get("link_speed"), pci.get("link_width"))
    if kind != "bridge":
        return own if kind == "device" else None
    below = [v for child in pci.findall("pci") if (v := _fastest_below(child, out)) is not None]
    fastest = max(below, default=None)
    if own is not None and fastest is not None and own < fastest:
        out.append({"bus_id": pci.get("busid"), "link_speed": pci.get("link_speed"),
                    "link_width": nccl_width(_width_attr(pci.get("link_width") or "")), "nccl_GBps": own,
                    "below_GBps": fastest})
    return fastest


def slow_uplinks(root: ET.Element) -> list[dict]:
    """The PCIe bridges (switches, root ports NCCL kept) whose link up to their parent NCCL models slower than a GPU
    or NIC below them, slowest first (file order among equals): ``{'bus_id', 'link_speed', 'link_width'`` (the
    lanes NCCL counts), ``'nccl_GBps'`` (that link, GB/s per direction), ``'below_GBps'`` (the fastest device's
    own link below it)``}``. Attributes a file leaves out are skipped: NCCL fills them in from the system."""
    out: list[dict] = []
    for cpu in root.iter("cpu"):
        for pci in cpu.findall("pci"):
            _fastest_below(pci, out)
    return sorted(out, key=lambda u: u["nccl_GBps"])
