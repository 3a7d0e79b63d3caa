"""What an NCCL log shows, what looks wrong and what is worth noting but no fault, in words (:mod:`.ncclog`'s
paragraph, problem list and remarks; the facts beyond NCCL's INFO lines come from :mod:`.ncclog_faults`).

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
from . import ncclog_faults as _faults
from .diagnose import cases
from .ncclog_lines import tc_problems
from .signatures import records
from .tuning_table import agreement

#: an :class:`~nvcourse.nccl.ncclog.NcclLog`, typed loosely (as in :mod:`.ncclog_lines`) so this module does not import
#: the one that imports it
NcclLog = Any

__all__ = ["explain", "problems", "remarks"]


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


#: variables whose setting turns a part of NCCL off or forces one on: a problem when set to a non-default value; any
#: other NCCL_* variable (NCCL_ALGO, NCCL_P2P_LEVEL, NCCL_NET_GDR_LEVEL, ...) is a choice, shown as information
#: variables whose value is a fault unless one node makes it moot (an InfiniBand transport turned off)
_MOOT_ON_ONE_NODE = ("NCCL_IB_DISABLE", "NCCL_IBEXT_DISABLE")
ENV_REMARK_SOURCE = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html"


def _one_node(log: NcclLog) -> bool:
    """The communicator is one rank or one node (NCCL printed nranks 1 or nNodes 1): no traffic between nodes."""
    return log.nranks == 1 or log.nnodes == 1


def _env_findings(log: NcclLog, covered: str) -> tuple[list[dict], list[dict]]:
    """(problems, remarks) for the NCCL_* variables set by the environment: any *_DISABLE set to other than 0 (or
    NVLS forced) turns off something NCCL would use, a problem unless one node makes it moot (IB); the rest is
    listed to be checked, a remark marked ``setting`` (no claim that it is harmless). ``covered``: the text of what
    is already said (signatures, problems with their causes and fixes), whose variables are not repeated."""
    out, shown = [], []
    for var, value in log.env.items():
        if var in covered or (var.endswith("_DISABLE") and value.strip() == "0"):
            # *_DISABLE=0 is NCCL's default (docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html): no change
            continue
        fault = var.endswith("_DISABLE") or var == "NCCL_NVLS_ENABLE"
        if fault and not (var in _MOOT_ON_ONE_NODE and _one_node(log)):
            out.append({"problem": _("{var}={value} set by the environment: results differ from NCCL's defaults; "
                                     "remove it unless it is there on purpose").format(var=var, value=value),
                        "case": None, "cause": None, "source": None})
        else:
            shown.append(f"{var}={value}")
    if not shown:
        return out, []
    listed = ", ".join(shown[:8]) + (", ..." if len(shown) > 8 else "")
    return out, [{"remark": _("set by the environment (these change NCCL's defaults; check each is intended): "
                              "{list}").format(list=listed), "source": ENV_REMARK_SOURCE, "setting": True}]


def _as_remark(problem: dict, why: str) -> dict:
    return {"remark": f"{problem['problem']} ({why})", "source": problem.get("source")}


def _network_findings(log: NcclLog, matched: set[str], fatal: bool) -> tuple[list[dict], list[dict]]:
    """(problems, remarks) about the network: sockets, mixed IB/RoCE ports, peer memory and GPUDirect RDMA."""
    out: list[dict] = []
    info: list[dict] = []
    if log.net_kind == "Socket":
        if any(d.startswith("lo:") or d == "lo" for d in log.net_devices):
            out.append({"problem": _("sockets bound to the loopback interface lo"), **_case("socket_loopback")})
        elif log.ib_found is False and _one_node(log):
            where = (_("this communicator has 1 rank (nranks 1)") if log.nranks == 1 else
                     _("this communicator's ranks are all on one node (nNodes 1)"))
            info.append({"remark": _("no RDMA device found, so NCCL would use TCP sockets between nodes; {where}, so "
                                     "no traffic goes over the network here").format(where=where),
                         "source": cases()["socket_fallback"]["source"]})
        elif log.ib_found is False:
            out.append({"problem": _("no RDMA device found: traffic between nodes goes over TCP sockets"),
                        **_case("socket_fallback")})
    p, r = _faults.mixed_link_layer_findings(log)
    out, info = out + p, info + r
    if "no_peermem" not in matched:
        p, r = _faults.peer_memory_findings(log, _case("no_peermem_but_ib"))
        out, info = out + p, info + r
    has_net = any(k.startswith("NET/") for k in log.transports)
    if gdr_off := _gdr.off_problem(log, matched, records().get("gdr_distance", {}), _case("no_gdr"), has_net):
        if fatal:
            info.append(_as_remark(gdr_off, _("beside the error above, not what stops this run")))
        else:
            out.append(gdr_off)
    info += _faults.graph_path_remarks(log)
    return out, info


def _assess(log: NcclLog) -> tuple[list[dict], list[dict]]:
    """(problems, remarks): what looks wrong, a fatal error first, then matched runbook signatures; and what is worth
    saying but is no fault here."""
    fatal = _faults.fatal_problem(log)
    lib_problems, info = _faults.library_findings(log)
    out: list[dict] = ([fatal] if fatal else []) + _signature_problems(log) + lib_problems + _shm_problem(log)
    if log.p2p_disabled_pairs:
        pairs = ", ".join(f"{a}-{b}" for a, b in log.p2p_disabled_pairs[:6])
        more = ", ..." if len(log.p2p_disabled_pairs) > 6 else ""
        n = len(log.p2p_disabled_pairs)
        out.append({"problem": ngettext("NCCL says P2P is disabled between {n} GPU pair ({pairs})",
                                        "NCCL says P2P is disabled between {n} GPU pairs ({pairs})", n).format(
            n=i18n.whole(n), pairs=pairs + more), **_case("p2p_disabled_pair")})
    if any("ACS is enabled" in h or "error 4" in h for h in log.hints):
        acs = {"problem": _("IB completion error 4 (a local protection error): PCIe ACS breaking GPUDirect RDMA is "
                            "the usual cause"), **_case("acs_hint")}
        if fix := _faults.vm_fix(log.vm_evidence):
            acs["fix"] = fix
        out.append(acs)
    matched = {s["signature"] for s in log.signatures}
    covered = " ".join(s["line"] for s in log.signatures)
    net_problems, net_info = _network_findings(log, matched, fatal is not None)
    out += net_problems + tc_problems(log)
    info += net_info
    if log.nvls["supported"] is False or log.nvls["channels"] == 0:
        # NCCL prints the line on any machine; it is a fault only where NVLS exists (Hopper or newer on NVSwitch),
        # which a log rarely states, so the problem says where it matters
        out.append({"problem": _("NVLS unavailable (no multicast support or 0 nvls channels): a fault only on "
                                 "Hopper or newer GPUs behind NVSwitch, expected anywhere else"),
                    **_case("nvls_missing")})
    said = " ".join(str(p.get(k) or "") for p in out for k in ("problem", "cause", "fix"))
    env_problems, env_info = _env_findings(log, covered + " " + said)
    out += env_problems
    info += env_info
    if log.warnings and not fatal:
        n = len(log.warnings)
        out.append({"problem": ngettext("{n} WARN line: {line}", "{n} WARN lines: {line}", n).format(
                        n=i18n.whole(n), line=log.warnings[0][:120]),
                    "case": None, "cause": None, "source": None})
    nodes = log.nnodes or (len(log.hosts) if log.hosts else None)
    has_net = any(k.startswith("NET/") for k in log.transports)
    net_warn = any(w.startswith("NET/") for w in log.warnings)  # "NET/IB : Got completion ...": a network line too
    if nodes and nodes > 1 and log.net_kind is None and not has_net and not log.net_devices and not net_warn:
        # NET/IB or NET/Socket "Using" lines name the devices even where "Using network ..." was not pasted
        out.append({"problem": _("several nodes but no network line in the log (filtered paste?)"), "case": None,
                    "cause": None, "source": None})
    return out, info


def problems(log: NcclLog) -> list[dict]:
    """What looks wrong, each with a cited case where one exists: a fatal error (a WARN with NCCL's error-return
    trail) first, then matched runbook signatures."""
    return _assess(log)[0]


def remarks(log: NcclLog) -> list[dict]:
    """What is worth saying but is no fault here (``{"remark", "source"}``): GPUDirect RDMA off beside a fatal error,
    a socket fallback on one node, a library's retried query, the variables set by the environment."""
    return _assess(log)[1]


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


def _id_ranges(ids: list[int]) -> str:
    """``[0, 1, 2, 3, 8, 12]`` -> ``'0-3, 8, 12'`` (runs of three or more as a range), at most eight items."""
    items: list[str] = []
    start = prev = None
    for i in [*ids, None]:
        if start is not None and (i is None or i != prev + 1):
            items += [f"{start}-{prev}"] if prev - start >= 2 else [str(x) for x in range(start, prev + 1)]
            start = None
        if i is not None and start is None:
            start = i
        prev = i
    return ", ".join(items[:8]) + (", ..." if len(items) > 8 else "")


def _channels_text(log: NcclLog) -> str | None:
    """NCCL's channel count where it printed one (src/graph/rings.cc "Channel 00/NN", init.cc "N coll channels");
    else a lower bound from the channel ids the paste shows, which a filtered or cut paste leaves incomplete."""
    if log.channels_printed:
        n = log.channels_printed
        return ngettext("{n} channel.", "{n} channels.", n).format(n=i18n.whole(n))
    if not log.channel_ids:
        return None
    n = max(log.channel_ids) + 1
    return ngettext("At least {n} channel (channel ids seen: {ids}; NCCL's count is not in the paste).",
                    "At least {n} channels (channel ids seen: {ids}; NCCL's count is not in the paste).", n).format(
        n=i18n.whole(n), ids=_id_ranges(log.channel_ids))


def _network_text(log: NcclLog) -> str | None:
    """'Network: IB over 8 devices (a, b, c, d, ...).'; without a 'Using network' line (NCCL 2.5 and older print
    none), the devices NCCL's NET/IB or NET/Socket line lists."""
    devices = _nccl_devices(log)
    listed = ", ".join(devices[:4]) + (", ..." if len(devices) > 4 else "")
    if log.net:
        nd = ngettext(" over {n} device ({devices})", " over {n} devices ({devices})", len(devices)).format(
            n=i18n.whole(len(devices)), devices=listed) if devices else ""
        return _("Network: {net}{devices}.").format(net=log.net, devices=nd)
    if devices:
        kind = "NET/IB" if log.ib_found else "NET/Socket"
        return ngettext("{kind} lists {n} device ({devices}).", "{kind} lists {n} devices ({devices}).",
                        len(devices)).format(kind=kind, n=i18n.whole(len(devices)), devices=listed)
    return None


def explain(log: NcclLog) -> str:
    """One paragraph: what the log says, what looks wrong, and what is worth noting but is no fault here, in the
    reader's language."""
    if log.lines == 0:
        return _empty(log)
    parts = [_opening(log)]
    if net := _network_text(log):
        parts.append(net)
    if gdr_words := _gdr.describe(log):
        parts.append(gdr_words)
    if log.dmabuf:
        parts.append(_("DMA-BUF is available for GPU memory registration."))
    if log.transports:
        t = ", ".join(f"{k} {i18n.times(i18n.whole(v))}" for k, v in sorted(log.transports.items(),
                                                                              key=lambda kv: -kv[1]))
        parts.append(_("Connections by transport: {list}.").format(list=t))
    if channels := _channels_text(log):
        parts.append(channels)
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
    # in the reader's language (log.problems and log.remarks may be English)
    shown, info = _assess(log) if log.problems or log.remarks else ([], [])
    if shown:
        parts.append(_("What looks wrong: {list}.").format(list=_join(p["problem"] for p in shown)))
    else:
        parts.append(_("Nothing in these lines looks wrong."))
    harmless = [r["remark"] for r in info if not r.get("setting")]
    if harmless:
        parts.append(_("Also noted, no fault here: {list}.").format(list=_join(harmless)))
    parts += [_("Also {remark}.").format(remark=r["remark"]) for r in info if r.get("setting")]
    return " ".join(parts)
