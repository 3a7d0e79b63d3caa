"""The bring-up and fault runbook as data and arithmetic (``nvcourse/data/runbook.toml``): the checks by layer, the
line rate of a PCIe link as trained, and the drill's answer. Chapter 06d shows it; its checkers grade against it.
"""

from __future__ import annotations

import re

from . import _data
from ._validate import choice, integer, number
from .i18n import npgettext, pgettext

__all__ = ["LAYERS", "raw", "signatures", "ib_tc", "roce_qos_example", "pcie_GBps_dir", "link_fraction", "read_lnk",
           "drill_data", "drill_verdict"]

#: The runbook's layers in the order a bring-up walks them, with the words the chapter uses for each.
LAYERS: dict[str, str] = {
    "host": "host (clocks, power, NUMA)",
    "pcie": "PCIe (ACS, link training)",
    "nvlink": "NVLink and NVSwitch (Fabric Manager, links, IMEX)",
    "gpu_nic": "GPU to NIC (GPUDirect RDMA)",
    "fabric": "fabric (RoCE, InfiniBand)",
    "nccl": "NCCL (environment, slow ranks)",
    "cloud": "cloud fabrics",
}


def raw() -> dict:
    """The runbook data file, parsed (cached by ``_data.load``: read-only)."""
    return _data.load("runbook")


def signatures(layer: str | None = None) -> list[dict]:
    """The signature records in file order (copies, their displayed texts in the reader's language), optionally
    those of one ``layer`` (a key of :data:`LAYERS`)."""
    sigs = [_data.shown("runbook", "signatures", s) for s in raw()["signatures"].values()]  # texts: reader's language
    if layer is None:
        return sigs
    choice("layer", layer, list(LAYERS))
    return [s for s in sigs if s["layer"] == layer]


def ib_tc(dscp: int, ecn: int = 0) -> int:
    """The value of ``NCCL_IB_TC`` that sends packets with ``dscp`` (0-63) and ECN bits ``ecn`` (0-3): NCCL puts the
    number into the IP header's whole traffic-class byte, DSCP in the upper six bits. Hand check: DSCP 26, ECN 2
    (``10``, ECN-capable) -> 26 × 4 + 2 = 106."""
    return integer("dscp", dscp, minimum=0, maximum=63) * 4 + integer("ecn", ecn, minimum=0, maximum=3)


def roce_qos_example() -> dict:
    """The worked RoCE QoS example (``[roce_qos]`` in the data): its DSCP, ECN bits and priority, the ``NCCL_IB_TC``
    they need (``ib_tc``), and what the DSCP value set as ``NCCL_IB_TC`` by mistake would send (``wrong_dscp``,
    ``wrong_ecn``)."""
    q = raw()["roce_qos"]
    wrong = int(q["dscp"])
    return {"dscp": q["dscp"], "ecn": q["ecn"], "priority": q["priority"], "ib_tc": ib_tc(q["dscp"], q["ecn"]),
            "wrong_dscp": wrong >> 2, "wrong_ecn": wrong & 3}


def _encoding(speed_GTps: float) -> float:
    # 8b/10b at 2.5 and 5 GT/s (PCIe 1.x/2.x), 128b/130b from 8 GT/s (3.0-5.0): runbook.toml [sources.pcie-encoding]
    return 8 / 10 if speed_GTps <= 5.0 else 128 / 130


def pcie_GBps_dir(speed_GTps: float, width: int) -> float:
    """Line rate of a PCIe link in GB/s per direction: ``width × speed × encoding / 8``.

    Hand check: 16 GT/s × 16 lanes × 128/130 / 8 = 31.5 GB/s (PCIe 4.0 x16); 2.5 GT/s × 16 × 8/10 / 8 = 4.0 GB/s.
    Gen6 (64 GT/s, FLIT mode) is outside this formula and refused.
    """
    speed = number("speed_GTps", speed_GTps, positive=True)
    if not 2.5 <= speed <= 32.0:
        raise ValueError(f"speed_GTps must be between 2.5 and 32 (PCIe 1.0-5.0); got {speed_GTps!r}")
    width = integer("width", width, minimum=1, maximum=32)
    return width * speed * _encoding(speed) / 8


def link_fraction(cap_GTps: float, cap_width: int, sta_GTps: float, sta_width: int) -> float:
    """Share of its capable per-direction bandwidth a link keeps after training at ``sta`` instead of ``cap``."""
    return pcie_GBps_dir(sta_GTps, sta_width) / pcie_GBps_dir(cap_GTps, cap_width)


_LNK = re.compile(r"Lnk(Cap|Sta):.*?Speed ([0-9.]+)GT/s.*?Width x(\d+)")


def read_lnk(text: str) -> dict[str, tuple[float, int]]:
    """``{'cap': (GT/s, lanes), 'sta': (GT/s, lanes)}`` from ``lspci -vv`` LnkCap/LnkSta lines (those present)."""
    out: dict[str, tuple[float, int]] = {}
    for m in _LNK.finditer(text):
        out.setdefault(m.group(1).lower(), (float(m.group(2)), int(m.group(3))))
    return out


def drill_data() -> dict:
    """The drill's record: story, steps (command and real output), answer and fewest steps."""
    return raw()["drill"]


def drill_verdict(cause: str, steps: list[str]) -> tuple[bool, str]:
    """Is ``cause`` the drill's answer, and how did ``steps`` (the commands run, in order) compare with the fewest?"""
    d = drill_data()
    right = cause == d["answer"]
    best = d["best_steps"]
    # "step" here is a step of the runbook's drill (French: étape), not a training step (pas): hence the context
    if not right:
        return False, pgettext("runbook", "not {cause}: look again at what the first step that names a layer "
                                          "says").format(cause=cause)
    extra = [s for s in steps if s not in best]
    words = (npgettext("runbook", "found in {n} step; the fewest is {best} ({names})",
                       "found in {n} steps; the fewest is {best} ({names})", len(steps)).format(
                 n=len(steps), best=len(best), names=", ".join(best))
             + (pgettext("runbook", "; not needed: {names}").format(names=", ".join(extra)) if extra else ""))
    return True, words
