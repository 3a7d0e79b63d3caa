"""What an NCCL log shows and what looks wrong, in words (:mod:`.ncclog`'s paragraph and problem list).

The words are in the reader's language (``_()``; causes and fixes from the data files through
:func:`~nvcourse.i18n.data_text`); :meth:`.NcclLog.to_json` builds them inside :func:`~nvcourse.i18n.english`, so
``--json`` stays English in every language.
"""

from __future__ import annotations

from typing import Any

from .. import i18n
from ..i18n import ngettext
from ..i18n import translate as _
from . import gdr as _gdr
from .diagnose import cases
from .ncclog_lines import tc_problems
from .signatures import records
from .tuning_table import agreement

#: an :class:`~nvcourse.nccl.ncclog.NcclLog`, typed loosely (as in :mod:`.ncclog_lines`) so this module does not import
#: the one that imports it
NcclLog = Any

__all__ = ["explain", "problems"]


def _num(value: float) -> str:
    return i18n.number(value, "g")


def _join(items) -> str:
    """Items of a list in a sentence, ``a; b`` (French: a no-break space before the semicolon)."""
    return (f"{i18n.NBSP}; " if i18n.language() == "fr" else "; ").join(items)


def _case(case_id: str) -> dict:
    c = cases()[case_id]
    return {"case": case_id, "cause": i18n.data_text(c["cause"]), "source": c["source"]}


def _signature_problems(log: NcclLog) -> list[dict]:
    faults = [s for s in log.signatures if records().get(s["signature"], {}).get("fault", True)]
    return [{"problem": f"{i18n.data_text(s['title'])}: '{s['line'][:160]}'", "case": None,
             "signature": s["signature"], "cause": i18n.data_text(s["cause"]), "fix": i18n.data_text(s["fix"]),
             "source": s["source"]} for s in faults]


def _shm_problem(log: NcclLog) -> list[dict]:
    """Connections through host memory (SHM) join GPUs of one node: NCCL found no P2P path between them."""
    # NCCL up to 2.12 wrote an SHM connection as "via direct shared memory" (src/transport/shm.cc; no "SHM/")
    shm = sum(v for k, v in log.transports.items() if k.startswith("SHM") or k == "direct shared memory")
    if not shm or any(s["signature"] == "p2p_forced_off" for s in log.signatures):
        return []
    acs = records().get("acs_redirect", {})
    return [{"problem": ngettext("{n} connection between GPUs of one node goes via SHM (host memory): P2P is off "
                                 "for it (NCCL_P2P_DISABLE or NCCL_P2P_LEVEL, PCIe ACS/IOMMU, a VM, or GPUs without "
                                 "P2P support)",
                                 "{n} connections between GPUs of one node go via SHM (host memory): P2P is off "
                                 "for them (NCCL_P2P_DISABLE or NCCL_P2P_LEVEL, PCIe ACS/IOMMU, a VM, or GPUs "
                                 "without P2P support)", shm).format(n=i18n.whole(shm)),
             "case": None, "signature": "acs_redirect" if acs else None, "cause": i18n.data_text(acs.get("cause")),
             "source": acs.get("source_url")}]


def _env_problems(log: NcclLog, covered: str) -> list[dict]:
    out = []
    for var in ("NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_NET_GDR_LEVEL", "NCCL_P2P_LEVEL", "NCCL_ALGO",
                "NCCL_PROTO", "NCCL_IB_DISABLE", "NCCL_NVLS_ENABLE"):
        if var in log.env and not (var.endswith("_DISABLE") and log.env[var].strip() == "0") and var not in covered:
            # *_DISABLE=0 is NCCL's default (docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html): no change
            out.append({"problem": _("{var}={value} set by the environment: results differ from NCCL's defaults; "
                                     "remove it unless it is there on purpose").format(var=var, value=log.env[var]),
                        "case": None, "cause": None, "source": None})
    return out


def problems(log: NcclLog) -> list[dict]:
    """What looks wrong, each with a cited case where one exists: matched runbook signatures first."""
    out: list[dict] = _signature_problems(log) + _shm_problem(log)
    if log.p2p_disabled_pairs:
        pairs = ", ".join(f"{a}-{b}" for a, b in log.p2p_disabled_pairs[:6])
        more = ", ..." if len(log.p2p_disabled_pairs) > 6 else ""
        n = len(log.p2p_disabled_pairs)
        out.append({"problem": ngettext("NCCL says P2P is disabled between {n} GPU pair ({pairs})",
                                        "NCCL says P2P is disabled between {n} GPU pairs ({pairs})", n).format(
            n=i18n.whole(n), pairs=pairs + more), **_case("p2p_disabled_pair")})
    if any("ACS is enabled" in h or "error 4" in h for h in log.hints):
        out.append({"problem": _("IB completion error 4 (a local protection error): PCIe ACS breaking GPUDirect "
                                 "RDMA is the usual cause"), **_case("acs_hint")})
    matched = {s["signature"] for s in log.signatures}
    covered = " ".join(s["line"] for s in log.signatures)
    nodes = log.nnodes or (len(log.hosts) if log.hosts else None)
    if log.net_kind == "Socket":
        if any(d.startswith("lo:") or d == "lo" for d in log.net_devices):
            out.append({"problem": _("sockets bound to the loopback interface lo"), **_case("socket_loopback")})
        elif log.ib_found is False:
            out.append({"problem": _("no RDMA device found: traffic between nodes goes over TCP sockets"),
                        **_case("socket_fallback")})
    has_net = any(k.startswith("NET/") for k in log.transports)
    if gdr_off := _gdr.off_problem(log, matched, records().get("gdr_distance", {}), _case("no_gdr"), has_net):
        out.append(gdr_off)
    out += tc_problems(log)
    if log.nvls["supported"] is False or log.nvls["channels"] == 0:
        # NCCL prints the line on any machine; it is a fault only where NVLS exists (Hopper or newer on NVSwitch),
        # which a log rarely states, so the problem says where it matters
        out.append({"problem": _("NVLS unavailable (no multicast support or 0 nvls channels): a fault only on "
                                 "Hopper or newer GPUs behind NVSwitch, expected anywhere else"),
                    **_case("nvls_missing")})
    out += _env_problems(log, covered)
    if log.warnings:
        n = len(log.warnings)
        out.append({"problem": ngettext("{n} WARN line: {line}", "{n} WARN lines: {line}", n).format(
                        n=i18n.whole(n), line=log.warnings[0][:120]),
                    "case": None, "cause": None, "source": None})
    if nodes and nodes > 1 and log.net_kind is None and not has_net and not log.net_devices:
        # NET/IB or NET/Socket "Using" lines name the devices even where "Using network ..." was not pasted
        out.append({"problem": _("several nodes but no network line in the log (filtered paste?)"), "case": None,
                    "cause": None, "source": None})
    return out


def _graph_text(g: dict) -> str:
    """'ring: 12 channels x 30 GB/s = 360 GB/s (paths NVL/PIX)'; NVLS counts heads, which share each GPU's
    links, so no total."""
    bw, n = g["bw_intra_GBps"], g["channels"]
    paths = _(" (paths {intra}/{inter})").format(intra=g["type_intra"], inter=g["type_inter"])
    if n == 0:
        return _("{name}: none found").format(name=g["name"]) + paths
    if g["pattern"] == 5:
        text = ngettext("NVLS: {n} head x {bw} GB/s", "NVLS: {n} heads x {bw} GB/s", n).format(
            n=i18n.whole(n), bw=_num(bw))
    else:
        text = ngettext("{name}: {n} channel x {bw} GB/s", "{name}: {n} channels x {bw} GB/s", n).format(
            name=g["name"], n=i18n.whole(n), bw=_num(bw)) + (
            _(" = {total} GB/s").format(total=_num(n * bw)) if n > 1 else "")
    if g["bw_inter_GBps"] != bw:
        text += _(", {bw} GB/s inter").format(bw=_num(g["bw_inter_GBps"]))
    return text + paths


def _notes(log: NcclLog) -> list[str]:
    """The reader's notes in the current language where the reader kept them in it, else as read (English)."""
    return getattr(log, "notes_shown", {}).get(i18n.language(), log.notes)


def _empty(log: NcclLog) -> str:
    """The paragraph of a paste with no NCCL debug line (signatures or counters only)."""
    found = (ngettext("; it matches failure signature: {list}", "; it matches failure signatures: {list}",
                      len(log.signatures)).format(list=_join(
        f"{i18n.data_text(s['title'])} ('{s['line'][:120]}')" for s in log.signatures)) if log.signatures else "")
    notes = (" " + _("Read: {notes}.").format(notes=_join(_notes(log)))) if log.notes else ""
    return _("No NCCL debug line in the paste{found}.").format(found=found) + notes


def _opening(log: NcclLog) -> str:
    """'NCCL 2.19.3 with 16 ranks on 2 hosts seen (a, b).'"""
    who = _("NCCL {version}").format(version=log.version) if log.version else _("NCCL (version not in the paste)")
    scale = []
    if log.nranks:
        scale.append(ngettext("{n} rank", "{n} ranks", log.nranks).format(n=i18n.whole(log.nranks)))
    if log.hosts:
        more = ", ..." if len(log.hosts) > 4 else ""
        scale.append(ngettext("{n} host seen ({hosts})", "{n} hosts seen ({hosts})", len(log.hosts)).format(
            n=i18n.whole(len(log.hosts)), hosts=", ".join(log.hosts[:4]) + more))
    return who + ((_(" with ") + _(" on ").join(scale)) if scale else "") + "."


def _tuning(log: NcclLog) -> list[str]:
    parts = []
    if log.tuning_tables:
        t = log.tuning_tables[0]
        na, nps = len(t["algorithms"]), len(t["protocols"])
        nt = len(log.tuning_tables)
        parts.append(ngettext("TUNING table ({printed} printed): {algorithms} x {protocols} for {collectives}",
                              "TUNING table ({printed} printed): {algorithms} x {protocols} for {collectives}",
                              nt).format(
                         printed=i18n.whole(nt),
                         algorithms=ngettext("{n} algorithm ({names})", "{n} algorithms ({names})", na).format(
                             n=i18n.whole(na), names=", ".join(t["algorithms"])),
                         protocols=ngettext("{n} protocol", "{n} protocols", nps).format(n=i18n.whole(nps)),
                         collectives=", ".join(t["collectives"]))
                     + (_(" (cut in the paste)") if t["truncated"] else "")
                     + _("; `nvcourse predict OP ... --tuning FILE` shows NCCL's pick per size from it."))
    if log.tuning_picks:
        n = len(log.tuning_picks)
        parts.append(ngettext("NCCL's own pick printed for {n} call.", "NCCL's own pick printed for {n} calls.",
                              n).format(n=i18n.whole(n)))
        if log.tuning_tables and (agree := agreement(log.tuning_tables[0], log.tuning_picks))["calls"]:
            parts.append(ngettext("The table's cheapest (algorithm, protocol) is NCCL's printed pick for {matches} "
                                  "of {calls} call.", "The table's cheapest (algorithm, protocol) is NCCL's printed "
                                  "pick for {matches} of {calls} calls.", agree["calls"]).format(
                matches=i18n.whole(agree["matches"]), calls=i18n.whole(agree["calls"])))
    return parts


def _nccl_devices(log: NcclLog) -> list[str]:
    """The network devices as NCCL counts them: the ports of a merged device joined by '+' (NCCL names a merged
    device so, src/transport/net_ib.cc), then the other ports."""
    merged = [p for group in log.net_merged for p in group]
    return ["+".join(g) for g in log.net_merged] + [d for d in log.net_devices if d not in merged]


def explain(log: NcclLog) -> str:
    """One paragraph: what the log says and what looks wrong, in the reader's language."""
    if log.lines == 0:
        return _empty(log)
    parts = [_opening(log)]
    if log.net:
        devices = _nccl_devices(log)
        nd = ngettext(" over {n} device ({devices})", " over {n} devices ({devices})", len(devices)).format(
            n=i18n.whole(len(devices)), devices=", ".join(devices[:4])) if devices else ""
        parts.append(_("Network: {net}{devices}.").format(net=log.net, devices=nd))
    if gdr_words := _gdr.describe(log):
        parts.append(gdr_words)
    if log.dmabuf:
        parts.append(_("DMA-BUF is available for GPU memory registration."))
    if log.transports:
        t = ", ".join(f"{k} {i18n.times(i18n.whole(v))}" for k, v in sorted(log.transports.items(),
                                                                              key=lambda kv: -kv[1]))
        parts.append(_("Connections by transport: {list}.").format(list=t))
    if log.channels:
        parts.append(ngettext("{n} channel.", "{n} channels.", log.channels).format(n=i18n.whole(log.channels)))
    if log.graphs:
        parts.append(_("Topology search, per channel: {graphs}.").format(
            graphs=_join(_graph_text(g) for g in log.graphs)))
    if log.nvls["supported"] is not None or log.nvls["channels"] is not None:
        s = {True: _("supported"), False: _("NOT supported"), None: _("support not stated")}[log.nvls["supported"]]
        nv = log.nvls["channels"]
        ch = "" if nv is None else ngettext(", {n} nvls channel", ", {n} nvls channels", nv).format(n=i18n.whole(nv))
        parts.append(_("NVLS: {support}{channels}.").format(support=s, channels=ch))
    parts += _tuning(log)
    if log.jobs > 1:
        parts.append(_("The paste mixes {n} jobs or communicators.").format(n=i18n.whole(log.jobs)))
    if log.notes:
        parts.append(_("Read: {notes}.").format(notes=_join(_notes(log))))
    shown = problems(log) if log.problems else []  # in the reader's language (log.problems may be English)
    if shown:
        parts.append(_("What looks wrong: {list}.").format(list=_join(p["problem"] for p in shown)))
    else:
        parts.append(_("Nothing in these lines looks wrong."))
    return " ".join(parts)
