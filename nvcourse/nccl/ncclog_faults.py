"""What a pasted NCCL log says beyond its INFO facts: NCCL's error-return trail, the warnings of the libraries under
NCCL, a shell's ``lsmod | grep`` for the peer-memory modules, and signs of a virtual machine; the problems and the
remarks (informational lines) :mod:`.ncclog_explain` builds from them.

* **The error-return trail.** Where a call fails NCCL prints a WARN, then every function the error passes through
  prints ``file:line -> N`` at INFO level (NCCLCHECK and its siblings, src/include/checks.h; from 2.30.7 with
  the function's name, ``file:line (func) -> N``). N is an ``ncclResult_t`` (src/nccl.h.in). A WARN with such a trail is
  the error to read first; a trail with no WARN is often one NCCL recovered from (a net plugin that did not load).
* **Libraries under NCCL** print in their own format, so NCCL's line pattern never sees them: libfabric
  (``libfabric:PID:TIME:PREFIX:PROVIDER:SUBSYS:FUNC():LINE<warn> message``, src/log.c, under the OFI net plugin),
  UCX (``... UCX  WARN  message``) and PMIx (``PMIX ERROR: ...``, the launcher's layer).
* **``lsmod | grep nvidia_peermem``** typed into a shell and pasted with its (empty) answer: whether a peer-memory
  module is loaded, the only way to GPUDirect RDMA before NCCL 2.13 added DMA-BUF (src/init.cc "Detect DMA-BUF
  support", first in v2.13.4-1).

>>> trail = read_error_return("include/net.h:24 -> 2")
>>> trail["where"], trail["code"], trail["result"]
('include/net.h:24', 2, 'ncclSystemError')
"""

from __future__ import annotations

import re
from typing import Any

from .. import _data
from ..i18n import ngettext, whole
from ..i18n import translate as _
from .paste import clean_line

#: an :class:`~nvcourse.nccl.ncclog.NcclLog`, typed loosely (as in :mod:`.ncclog_lines`) so this module does not import
#: the one that imports it
NcclLog = Any

__all__ = ["read_error_return", "library_warnings", "peer_memory_lsmod", "vm_evidence", "fatal_problem",
           "library_findings", "peer_memory_findings", "mixed_link_layer_findings", "vm_fix", "graph_path_remarks",
           "version_tuple", "RESULTS_URL", "SHELL_PROMPT"]

#: NCCL's documentation of ncclResult_t, the codes of the trail
RESULTS_URL = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/api/types.html"
_FABRIC_URL = "https://github.com/ofiwg/libfabric/blob/main/src/fabric.c"
_LOG_URL = "https://github.com/ofiwg/libfabric/blob/main/src/log.c"
_UCX_URL = "https://github.com/openucx/ucx"
_PMIX_URL = "https://github.com/openpmix/openpmix"
_IB_MIX_URL = "https://github.com/NVIDIA/nccl/issues/302"
_VM_GUIDE = ("https://docs.nvidia.com/ai-enterprise/planning-resource/optimizing-vm-configuration-ai-inference/"
             "latest/appendix.html")

# the trail, every form (src/include/checks.h, debug.h): NCCLCHECK's "%s:%d -> %d" (up to 2.30.4), NEQCHECK's and
# EQCHECK's "%s:%d -> %d (%s)" with strerror (2.18.3 to 2.30.4), a thread's "[Async thread]" / "[Proxy Thread]", and
# 2.30.7's INFO_LOC "%s:%d (%s) -> %d". One exception to N being an ncclResult_t: 2.30.7's CUDACHECKTHREAD prints the
# cudaError_t after "-> " (with "[Async thread]"), which this reader cannot tell from NCCLCHECKTHREAD's
_TRAIL = re.compile(r"^(?P<where>[\w./+-]+:\d+)(?:\s+\((?P<func>[^()]*)\))?\s+->\s+(?P<code>\d+)"
                    r"(?:\s+\((?P<why>[^()]*)\))?(?:\s+\[[^\]]*\])?\s*$")
#: ncclResult_t by code (data/nccl_readers.toml [nccl_results], from src/nccl.h.in, with the release that added
#: each); 0 and 7 are not errors (NCCLCHECK lets both through)
_RESULTS = {int(code): name for code, name in _data.load("nccl_readers")["nccl_results"]["names"].items()}

# libfabric's own log line (src/log.c fi_log_: "%s:%d:%ld:%s:%s:%s:%s():%d<%s> %s"); warn is its most severe level
_LIBFABRIC = re.compile(r"libfabric:\d+:\d+:[^:]*:(?P<prov>[^:]*):(?P<subsys>[^:]*):(?P<func>[^:()]*)\(\):\d+"
                        r"<(?P<level>warn)>\s*(?P<msg>.*)$")
# UCX: "[1748937999.151440] [host:173504:0]     ucp_context.c:1951 UCX  WARN  message" (ucs/debug/log.c)
# (the source file and line before "UCX" keep prose that names UCX out)
_UCX = re.compile(r"\S+\.c:\d+\s+UCX\s+(?P<level>WARN|ERROR)\s+(?P<msg>.*)$")
# PMIx: "[host:3158360] PMIX ERROR: BAD-PARAM in file base/bfrop_base_unpack.c at line 692"
_PMIX = re.compile(r"\[[^\]]+\]\s+PMIX (?P<level>ERROR): (?P<msg>.*)$")
# a libfabric provider that answered fi_getinfo with nothing (src/fabric.c fi_getinfo_)
_EMPTY_LIST = re.compile(r"fi_getinfo: provider (\S+) output empty list")

_MODULES = ("nvidia_peermem", "nv_peer_mem")
_LSMOD = re.compile(r"\blsmod\s*\|\s*grep\s+(?P<args>.+?)\s*$")
_LSMOD_ROW = re.compile(r"^(?P<module>[\w-]+)\s+\d+\s+\d+")
#: a shell prompt, alone or before a command: "(pytorch) [root@gpu3 ~]#", "user@host:~$ lsmod", "$ lsmod"
SHELL_PROMPT = re.compile(r"^(?:\([^)]*\)\s*)?(?:\[[^\]]*\]|[\w.-]+@[\w.-]+(?::[^\s#$]*)?)?\s*[#$](?:\s|$)")
# what only a virtual machine prints: lscpu's "Hypervisor vendor: KVM", the kernel's "Hypervisor detected: KVM"
_HYPERVISOR = re.compile(r"Hypervisor (?:vendor|detected):\s*\S+")
_VM_HOST = re.compile(r"(?:^|[-_.])vm\d*(?:$|[-_.])", re.IGNORECASE)


def version_tuple(version: str | None) -> tuple[int, ...] | None:
    """``"2.12.9"`` (or ``"2.12.9+cuda11.6"``, ``"2.12"``) -> ``(2, 12, 9)``; None when the version is not known.
    The one NCCL-version reader of the nccl-tests and ncclog readers (:mod:`.forced`, :mod:`.known_bugs` use it)."""
    m = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", version or "")
    return tuple(int(x) for x in m.groups() if x is not None) if m else None


def read_error_return(msg: str) -> dict | None:
    """One trail line (the text after ``NCCL INFO``) as ``{"where", "code", "result", "detail"}``; None for any
    other message. ``detail`` is the strerror NCCL adds after a failed system call (2.18.3 on), else None."""
    if not (m := _TRAIL.match(msg.strip())):
        return None
    code = int(m.group("code"))
    return {"where": m.group("where"), "code": code, "result": _RESULTS.get(code), "detail": m.group("why")}


def library_warnings(text: str) -> list[dict]:
    """Warnings of the libraries under NCCL in ``text``: libfabric ``<warn>`` lines, UCX WARN/ERROR, PMIx ERROR, as
    ``{"library", "level", "provider", "message", "count"}`` (``provider``: libfabric's, else None), one per distinct
    message in the order seen. A collector that prints a line twice ("msg | msg", CloudWatch) counts once."""
    found: dict[tuple[str, str], dict] = {}
    for raw in text.splitlines():
        if raw.lstrip().startswith("%%"):
            continue
        if m := _LIBFABRIC.search(raw):
            lib, prov = "libfabric", m.group("prov")
        elif m := _UCX.search(raw):
            lib, prov = "UCX", None
        elif m := _PMIX.search(raw):
            lib, prov = "PMIx", None
        else:
            continue
        msg = re.split(r"\s+\|\s+(?=\S*(?:libfabric:|UCX|PMIX))", m.group("msg"))[0].strip()
        entry = found.setdefault((lib, msg), {"library": lib, "level": m.group("level"), "provider": prov,
                                              "message": msg, "count": 0})
        entry["count"] += 1
    return list(found.values())


def _grep_modules(args: str) -> set[str]:
    """The peer-memory modules a ``grep ARGS`` would print: its pattern's alternatives as substrings."""
    words = [w.strip("'\"") for w in args.split() if not w.startswith("-")]
    alternatives = [p for w in words for p in re.split(r"\\?\|", w) if p]
    return {mod for mod in _MODULES if any(p in mod for p in alternatives)}


def peer_memory_lsmod(text: str) -> dict[str, bool]:
    """What a pasted ``lsmod | grep ...`` says of the peer-memory modules: ``{"nvidia_peermem": False, ...}`` for each
    module the grep covers, True where a row of lsmod names it, False where the answer was empty (the next line is a
    prompt or an NCCL line). A command at the end of the paste says nothing (the answer may be cut)."""
    # a launcher's or collector's prefix (srun, mpirun, a timestamp) is not part of the shell's line
    lines = [clean_line(raw) for raw in text.splitlines() if not raw.lstrip().startswith("%%")]
    seen: dict[str, bool] = {}
    for i, line in enumerate(lines):
        if not (m := _LSMOD.search(line)) or not (covered := _grep_modules(m.group("args"))):
            continue
        rows, after = [], None
        for nxt in lines[i + 1:]:
            if not nxt:
                continue
            if (row := _LSMOD_ROW.match(nxt)) and "NCCL" not in nxt:
                rows.append(row.group("module"))
                continue
            after = nxt
            break
        if rows:
            for mod in covered:
                seen[mod] = seen.get(mod, False) or mod in rows
        elif after is not None and (SHELL_PROMPT.match(after) or "NCCL" in after):
            for mod in covered:
                seen.setdefault(mod, False)
    return seen


def vm_evidence(text: str, hosts: list[str]) -> dict | None:
    """What in the paste shows a virtual machine: ``{"line": ...}`` for a hypervisor line (lscpu, dmesg), else
    ``{"hosts": [...]}`` for host names with a "vm" word (a hint only), else None. NCCL itself never says."""
    if m := _HYPERVISOR.search(text):
        return {"line": m.group(0)}
    named = [h for h in hosts if _VM_HOST.search(h)]
    return {"hosts": named} if named else None


def fatal_problem(log: NcclLog) -> dict | None:
    """A WARN beside NCCL's error-return trail (a code other than 0 or 7): the error that stopped the run, to read
    before anything else. None without a WARN (a trail alone is often an error NCCL recovered from)."""
    errors = [e for e in log.error_returns if e["code"] not in (0, 7)]
    if not errors or not log.warnings:
        return None
    n = sum(e["count"] for e in errors)
    trail = ", ".join(f"{e['where']} -> {e['code']}" for e in errors[:3]) + (", ..." if len(errors) > 3 else "")
    codes = "; ".join(f"{code} = {_RESULTS.get(code, '?')}" for code in dict.fromkeys(e["code"] for e in errors))
    warn = log.warnings[0][:160]
    nw = len(log.warnings)
    # the WARN count in the words the generic WARN problem uses ("2 WARN lines: ..."), which this one replaces
    warns = ngettext("{n} WARN line: {line}", "{n} WARN lines: {line}", nw).format(n=whole(nw), line=f"'{warn}'")
    fix = _("start from the first WARN: it names what failed; the lines just before it from the same process say "
            "what NCCL was doing")
    if warn.startswith("NET/OFI"):
        # aws-ofi-nccl prints "NET/OFI " before its own lines (NCCL_OFI_WARN); its README lists per release the
        # libfabric it was tested with
        fix += _("; a NET/OFI WARN comes from the aws-ofi-nccl plugin, which runs on libfabric: check the libfabric "
                 "version against the one the plugin's release lists in its README")
    return {"problem": ngettext("NCCL returned an error: {warns}, and {n} error return up NCCL's calls ({trail}; "
                                "{codes})",
                                "NCCL returned an error: {warns}, and {n} error returns up NCCL's calls ({trail}; "
                                "{codes})", n).format(warns=warns, n=whole(n), trail=trail, codes=codes),
            "case": None, "signature": None,
            "cause": _("NCCL prints a WARN where a call fails, then 'file:line -> N' in each function the error "
                       "passes through on its way up; N is NCCL's result code: 1 a CUDA call failed, 2 a system or "
                       "library call failed, 3 an internal check failed, 4 an invalid argument, 5 invalid usage (a "
                       "wrong call sequence, or a setting NCCL refuses: an unknown NCCL_ALGO or NCCL_PROTO value, two "
                       "ranks on one GPU), 6 a network error or a peer process that exited, 8 a timeout (2.30.3 and "
                       "later)"),
            "fix": fix, "source": RESULTS_URL}


def _libfabric_empty(log: NcclLog, w: dict, provider: str) -> tuple[list[dict], list[dict]]:
    """``fi_getinfo: provider X output empty list``: X matched nothing for one query (src/fabric.c fi_getinfo_).
    aws-ofi-nccl asks again with older API versions before it gives up (nccl_ofi_sendrecv.cpp), so the line is a
    fault only when no ``NET/OFI Selected provider is X`` line shows a later query found it."""
    line = f"'{w['message'][:120]}'"
    if (log.net_provider or "").lower() == provider.lower():
        return [], [{"remark": _("libfabric warning {line}: aws-ofi-nccl then selected {provider}, so a query it "
                                 "retried, not a fault").format(line=line, provider=provider), "source": _FABRIC_URL}]
    return [{"problem": _("libfabric warning {line}: its {provider} provider matched nothing for a query, and no "
                          "'NET/OFI Selected provider' line in the paste shows that a later one found it").format(
                              line=line, provider=provider),
             "case": None, "signature": None,
             "cause": _("libfabric's {provider} provider answered with an empty list: either no {provider} device "
                        "is visible to this process (a container the device was not passed into, a driver not "
                        "loaded), or none of its devices offers what the query asks (capabilities such as GPU memory "
                        "registration)").format(provider=provider),
             "fix": _("check that the device is visible where NCCL runs ('fi_info -p {provider}' lists it) and that "
                      "the libfabric under aws-ofi-nccl is the one its release lists; FI_LOG_LEVEL=info prints "
                      "libfabric's reasons").format(provider=provider),
             "source": _FABRIC_URL}], []


def library_findings(log: NcclLog) -> tuple[list[dict], list[dict]]:
    """(problems, remarks) for the warnings of libfabric, UCX and PMIx the paste holds (``log.library_warnings``)."""
    problems: list[dict] = []
    remarks: list[dict] = []
    for w in log.library_warnings:
        quoted = f"'{w['message'][:120]}'"
        if w["library"] == "libfabric" and (m := _EMPTY_LIST.search(w["message"])):
            p, r = _libfabric_empty(log, w, m.group(1))
            problems += p
            remarks += r
        elif w["library"] == "libfabric":
            problems.append({"problem": _("libfabric warning from its {provider} provider: {line}").format(
                                 provider=w["provider"], line=quoted), "case": None, "signature": None,
                             "cause": _("a warning from libfabric, the library under the OFI net plugin "
                                        "(aws-ofi-nccl); warn is libfabric's most severe log level"),
                             "fix": _("read it beside the NET/OFI lines around it; FI_LOG_LEVEL=info prints "
                                      "libfabric's detail"), "source": _LOG_URL})
        elif w["library"] == "UCX":
            problems.append({"problem": _("UCX {level}: {line}").format(level=w["level"], line=quoted),
                             "case": None, "signature": None,
                             "cause": _("a message from UCX, the transport library of MPI (or of a UCX net plugin), "
                                        "not from NCCL's own transports"), "source": _UCX_URL})
        else:
            problems.append({"problem": _("PMIx {level}: {line}").format(level=w["level"], line=quoted),
                             "case": None, "signature": None,
                             "cause": _("a message from PMIx, the process-management layer of the launcher (srun, "
                                        "mpirun), not from NCCL"), "source": _PMIX_URL})
    return problems, remarks


def _rdma_ports(log: NcclLog) -> list[str]:
    return [d for d in log.net_devices if re.search(r":\d+/(?:IB|RoCE)\b", d)]


def peer_memory_findings(log: NcclLog, case: dict) -> tuple[list[dict], list[dict]]:
    """(problems, remarks) from a pasted ``lsmod | grep`` that found neither peer-memory module: before NCCL 2.13 (no
    DMA-BUF) that means no GPUDirect RDMA over the RDMA ports the log lists; from 2.13 GDR needs DMA-BUF instead.
    ``case`` is the cited case (``no_peermem_but_ib``)."""
    mods = log.peer_memory_lsmod
    if set(mods) != set(_MODULES) or any(mods.values()):
        return [], []
    ports = _rdma_ports(log)
    version = version_tuple(log.version)
    if version and version < (2, 13):
        fix = _("load nvidia-peermem on the host (modprobe nvidia-peermem; a container uses the host's modules), or "
                "use NCCL 2.13 or later where DMA-BUF can replace it")
        if not ports:
            return [], [{"remark": _("lsmod shows neither nvidia_peermem nor nv_peer_mem loaded, and NCCL {version} "
                                     "has no DMA-BUF path (added in 2.13): no GPUDirect RDMA through NCCL's IB "
                                     "transport (InfiniBand, RoCE) on this host; a network plugin such as aws-ofi-nccl "
                                     "decides this itself").format(
                                         version=log.version), "source": case.get("source")}]
        return [{"problem": ngettext(
                    "lsmod shows neither nvidia_peermem nor nv_peer_mem loaded, and NCCL {version} has no DMA-BUF "
                    "path (added in 2.13): no GPUDirect RDMA over the {n} RDMA port NCCL lists; network data is "
                    "staged through host memory",
                    "lsmod shows neither nvidia_peermem nor nv_peer_mem loaded, and NCCL {version} has no DMA-BUF "
                    "path (added in 2.13): no GPUDirect RDMA over the {n} RDMA ports NCCL lists; network data is "
                    "staged through host memory", len(ports)).format(version=log.version, n=whole(len(ports))),
                 **case, "fix": fix}], []
    if log.dmabuf:
        text = _("lsmod shows neither nvidia_peermem nor nv_peer_mem loaded; DMA-BUF is available, so GPUDirect RDMA "
                 "can go through it")
    else:
        text = _("lsmod shows neither nvidia_peermem nor nv_peer_mem loaded: GPUDirect RDMA then needs DMA-BUF "
                 "(NCCL 2.13 or later; the log says 'DMA-BUF is available' where it can be used)")
    return [], [{"remark": text, "source": case.get("source")}]


def _used_roce(log: NcclLog, roce: list[str]) -> bool | None:
    """Whether a network connection shown ("via NET/IB/<dev>") uses a RoCE port: True or False, None when no connection
    names its device or merged devices make the index ambiguous. <dev> is the index in NCCL's "NET/IB : Using" list
    (src/transport/net.cc prints the connection's netDev)."""
    used = {int(d) for devs in log.net_devices_per_gpu.values() for d in devs}
    if not used or log.net_merged:
        return None
    return any(i < len(log.net_devices) and log.net_devices[i] in roce for i in used)


def mixed_link_layer_findings(log: NcclLog) -> tuple[list[dict], list[dict]]:
    """(problems, remarks) for InfiniBand and RoCE ports in one ``NET/IB : Using`` list. NCCL addresses a peer by LID
    when the peer's port is InfiniBand and by GID when it is RoCE (src/transport/net_ib.cc ncclIbRtrQp), so a
    connection whose two ends land on different kinds of port cannot be set up (NVIDIA/nccl#302: 'Call to
    ibv_modify_qp failed'). A problem unless the connections shown use InfiniBand ports only."""
    ib = [d for d in log.net_devices if re.search(r":\d+/IB\b", d)]
    roce = [d for d in log.net_devices if re.search(r":\d+/RoCE\b", d)]
    if not ib or not roce:
        return [], []
    shown = ", ".join(roce[:4]) + (", ..." if len(roce) > 4 else "")
    names = ",".join(d.split("/")[0] for d in roce[:4])
    fix = _("restrict NCCL_IB_HCA to the ports of the fabric the nodes share, e.g. NCCL_IB_HCA=^={names} to leave out "
            "the RoCE ports").format(names=names)
    if _used_roce(log, roce) is False:
        return [], [{"remark": ngettext(
            "NCCL's IB transport lists InfiniBand and RoCE (Ethernet) ports together ({roce} beside {n} InfiniBand "
            "port), but the network connections shown use InfiniBand ports only; NCCL_IB_HCA=^={names} keeps it so",
            "NCCL's IB transport lists InfiniBand and RoCE (Ethernet) ports together ({roce} beside {n} InfiniBand "
            "ports), but the network connections shown use InfiniBand ports only; NCCL_IB_HCA=^={names} keeps it so",
            len(ib)).format(roce=shown, n=whole(len(ib)), names=names), "source": _IB_MIX_URL}]
    return [{"problem": ngettext("NCCL's IB transport lists InfiniBand and RoCE (Ethernet) ports together: {roce} "
                                 "beside {n} InfiniBand port",
                                 "NCCL's IB transport lists InfiniBand and RoCE (Ethernet) ports together: {roce} "
                                 "beside {n} InfiniBand ports", len(ib)).format(roce=shown, n=whole(len(ib))),
             "case": None, "signature": None,
             "cause": _("NCCL's topology search may place channels on any port it lists; a connection with an "
                        "InfiniBand port at one end and a RoCE port at the other cannot be set up (NCCL addresses an "
                        "InfiniBand peer by LID, a RoCE one by GID), and the two fabrics do not reach each other "
                        "without a gateway"),
             "fix": fix, "source": _IB_MIX_URL}], []


def vm_fix(evidence: dict | None) -> str | None:
    """The fix of a PCIe ACS problem where the paste shows (or its host names suggest) a virtual machine: ACS and ATS
    are set on the hypervisor host, not in the guest (NVIDIA AI Enterprise, VM configuration, ATS and ACS)."""
    if not evidence:
        return None
    todo = _("on the hypervisor host, enable ATS on the NIC and set ACS on the bridges above the passed-through GPU "
             "and NIC so that it allows ATS ({url}); in the VM, NCCL_NET_GDR_LEVEL=0 only confirms the "
             "diagnosis").format(url=_VM_GUIDE)
    if "line" in evidence:
        return _("the paste shows a virtual machine ('{line}'): ACS cannot be changed from inside it; {todo}").format(
            line=evidence["line"], todo=todo)
    return _("the host names ({hosts}) suggest virtual machines: if so, ACS cannot be changed from inside them; "
             "{todo}").format(hosts=", ".join(evidence["hosts"][:4]), todo=todo)


def graph_path_remarks(log: NcclLog) -> list[dict]:
    """A topology search that reached the NICs over PHB or SYS paths (``type NVL/PHB``): traffic between GPU and NIC
    crosses the CPU. Either the NICs sit behind the host bridge, beyond NCCL's default GDR limit (PXB; from 2.27
    also a C2C GPU's P2C path, NCCL_NET_GDR_C2C=1 by default: src/graph/paths.cc ncclTopoCheckGdr), or GDR was
    unavailable and NCCL routed the traffic through the CPU on purpose (ncclTopoComputePaths), which makes the path
    PHB; sockets never use GDR."""
    far = [g for g in log.graphs if g["type_inter"] in ("PHB", "SYS") and g["channels"] > 0]
    if not far or log.net_kind == "Socket":
        return []
    g = far[0]
    # NCCL's own words on the search line ("type NVL/PHB"), after the graph's name
    graph = _("{name}, type {intra}/{inter}").format(name=g["name"], intra=g["type_intra"], inter=g["type_inter"])
    level = log.env.get("NCCL_NET_GDR_LEVEL")
    if log.gdr is True:
        env = _(" (NCCL_NET_GDR_LEVEL={level})").format(level=level) if level else ""
        return [{"remark": _("the topology search reached the NICs over {type} paths ({graph}) and GPUDirect RDMA is "
                             "on there{env}: GDR across the CPU is not always faster than staging through host "
                             "memory; measure with and without").format(type=g["type_inter"], graph=graph, env=env),
                 "source": None}]
    if log.net_kind is None and not _rdma_ports(log):
        # no line names the network: an Ethernet NIC without RDMA is as likely as an RDMA one (NVIDIA/nccl#601)
        return [{"remark": _("the topology search reached the NICs over {type} paths ({graph}): traffic between GPU "
                             "and NIC crosses the CPU; the paste does not name the network, and on an RDMA one "
                             "(InfiniBand, RoCE) this means GPUDirect RDMA is not used at NCCL's default limit (PXB; "
                             "from 2.27 also a C2C GPU's P2C path)").format(type=g["type_inter"], graph=graph),
                 "source": None}]
    return [{"remark": _("the topology search reached the NICs over {type} paths ({graph}): traffic between GPU and "
                         "NIC crosses the CPU, either because the NICs sit behind the host bridge, beyond NCCL's "
                         "default GPUDirect RDMA limit (PXB; from 2.27 also a C2C GPU's P2C path), or because GDR "
                         "was unavailable and NCCL routed it through the CPU; network data is then staged in host "
                         "memory unless the channel lines show /GDRDMA").format(type=g["type_inter"], graph=graph),
             "source": None}]
