"""Line-level helpers of :mod:`.ncclog`: NCCL messages pasted without NCCL's own prefix, and P2P/HINT statements.

A log copied out of a tool that keeps only the message (``Using network IBext_v8`` instead of
``host:1234:1250 [0] NCCL INFO Using network IBext_v8``) has no ``NCCL INFO`` anywhere. Then, and only then,
:func:`bare_message` accepts a line that starts like one of the messages the reader understands; any other line
(prose, a traceback, a framework's own log) is left out.

>>> bare_message("Using network IBext_v8"), bare_message("Loading checkpoint shards: 100%")
('Using network IBext_v8', None)
"""

from __future__ import annotations

import re
from typing import Any

from ..i18n import translate as _
from ..runbook import ib_tc, roce_qos_example

__all__ = ["has_prefixed_lines", "bare_message", "read_p2p_and_hints", "tc_problems"]

# how NCCL's INFO messages start (src/init.cc, src/bootstrap.cc, src/transport/net_ib.cc, src/graph/*.cc,
# src/plugin/*.cc): the ones the reader takes a fact from, and a few common neighbours that carry none
_BARE = re.compile(
    r"^(?:NCCL_[A-Z0-9_]+ set (?:by environment )?to |cudaDriverVersion \d+|Using network |"
    r"NET/(?:IB|Socket|Plugin|OFI)\b|(?:ncclCommInitRank\w*\s+)?comm 0x[0-9a-f]+ rank \d+ n[Rr]anks \d+|"
    r"NVLS multicast support is|NVLS Head|(?:Channel|Ring) \d+(?:/\d+)?\s*:|Trees \[|\d+ coll channels, |"
    r"MNNVL busId|P2P plugin |Plugin Path|DMA-BUF is available|GPU Direct RDMA|Connected all (?:rings|trees)|"
    r"Setting affinity for GPU|Bootstrap\s*: Using |P2P is disabled between|threadThresholds|Pattern \d+, crossNic)"
)


def has_prefixed_lines(text: str) -> bool:
    """Whether any line carries NCCL's ``NCCL INFO`` / ``NCCL WARN`` marker (then bare lines are not read); the
    course's ``%%`` comment lines do not count."""
    return any(("NCCL INFO" in ln or "NCCL WARN" in ln) and not ln.startswith("%%") for ln in text.splitlines())


def bare_message(line: str) -> str | None:
    """``line`` when it reads as an NCCL INFO message printed without its prefix, else None."""
    return line if _BARE.match(line) else None


def read_p2p_and_hints(log: Any, msg: str) -> None:
    """NCCL's own statements that P2P is off for a GPU pair, and its HINT lines (INFO or WARN), into ``log`` (an
    :class:`~nvcourse.nccl.ncclog.NcclLog`; typed loosely so this module does not import the one that imports it)."""
    if mm := re.search(r"P2P is disabled between (?:NVLINK )?connected GPUs (\d+) and (\d+)", msg):
        pair = sorted(int(x) for x in mm.groups())
        if pair not in log.p2p_disabled_pairs:
            log.p2p_disabled_pairs.append(pair)
    if msg.startswith("HINT:") and msg not in log.hints:
        log.hints.append(msg)
    err4 = "IB completion error 4 (IBV_WC_LOC_PROT_ERR)"
    if re.search(r"NET/IB\s*:\s*Got completion (?:from peer \S+ )?with error 4,", msg) and err4 not in log.hints:
        log.hints.append(err4)


# the named DSCP code points: class selectors CS1-CS7 (RFC 2474), assured forwarding AF11-AF43 (RFC 2597), expedited
# forwarding EF (RFC 3246); a value below 64 that is one of them was most likely meant as a DSCP
_NAMED_DSCP = {8, 16, 24, 32, 40, 48, 56, 10, 12, 14, 18, 20, 22, 26, 28, 30, 34, 36, 38, 46}


def tc_problems(log: Any) -> list[dict]:
    """``NCCL_IB_TC`` set to a number that reads as a DSCP: NCCL writes it into the whole traffic-class byte (DSCP × 4
    + ECN bits), so ``NCCL_IB_TC=26`` sends DSCP 6, not 26 (chapter 06d, section 6)."""
    value = str(log.env.get("NCCL_IB_TC", "")).strip()
    if not value.isdigit() or int(value) not in _NAMED_DSCP:
        return []
    tc, ecn = int(value), roce_qos_example()["ecn"]
    return [{"problem": _("NCCL_IB_TC={tc} looks like a DSCP, not the traffic-class byte (DSCP × 4 + ECN): it sends "
                          "DSCP {dscp} (ECN bits {bits}); DSCP {tc} with ECN bits {ecn} is NCCL_IB_TC={meant}").format(
                              tc=tc, dscp=tc >> 2, bits=tc & 3, ecn=ecn, meant=ib_tc(tc, ecn)),
             "case": None, "cause": _("NCCL copies NCCL_IB_TC into the packets' whole traffic-class byte, whose upper "
                                      "six bits are the DSCP"),
             "fix": _("if DSCP {tc} was meant, set NCCL_IB_TC={meant}").format(tc=tc, meant=ib_tc(tc, ecn)),
             "source": "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-ib-tc"}]
