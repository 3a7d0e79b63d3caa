"""Read ``NCCL_DEBUG=INFO`` output as people paste it, and say what it shows and what looks wrong.

Accepts any ``NCCL_DEBUG_SUBSYS``; ``host:pid:tid [dev]`` prefixes present or stripped; every launcher or
collector prefix :mod:`.paste` knows (srun ``0: ``, mpirun ``[1,N]<stdout>:``, torchrun, Ray, kubectl, pdsh,
timestamps); grep-filtered fragments; several jobs in one file; old (2.7:
``Channel 00 : 0[87000] -> ...``) and new (2.2x: ``Channel 00/0 : 0[0] -> ...``, ``P2P/CUMEM``) wording.
Lines starting with ``%%`` are comments (the course's fixtures carry their source there). The TUNING
subsystem's algorithm x protocol table is read by :mod:`.tuning_table` into ``tuning_tables``.

>>> log = read_text("h:1:2 [0] NCCL INFO Using network Socket\\nNCCL version 2.19.3+cuda12.3\\n")
>>> log.version, log.net
('2.19.3', 'Socket')
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .. import i18n
from . import gdr as _gdr
from .ncclog_explain import explain, problems, remarks
from .ncclog_faults import library_warnings, peer_memory_lsmod, read_error_return, vm_evidence
from .ncclog_lines import bare_message, has_prefixed_lines, read_p2p_and_hints
from .paste import clean_line
from .tuning_table import TableReader

__all__ = ["NcclLog", "read_text", "explain"]

# a WARN carries where it was printed: "file:line NCCL WARN" up to 2.30.4, "file:line (func) NCCL WARN" from
# 2.30.7 (src/debug.cc ncclDebugLogInternal)
_LINE = re.compile(r"^(?:(?P<host>[^\s:\[\]]+):(?P<pid>\d+):(?P<tid>\d+)\s+\[(?P<dev>\d+)\]\s+)?"
                   r"(?:(?P<src>\S+:\d+)(?:\s+\([^()\s]*\))?\s+)?NCCL\s+(?P<level>INFO|WARN|TRACE|ABORT)\s?(?P<msg>.*)$")
_VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+)(?:\+cuda(\d+\.\d+))?")
# a connection: "Channel 00/0 : 0[0] -> 1[1] via P2P/IPC" (2.x); NCCL 2.4 and older: "Ring 00 : 26[2] -> 30[6] via
# P2P/IPC", "Ring 00 : 7 -> 8 [send] via NET/AWS Libfabric/0" (no device in brackets on network lines)
_CONN = re.compile(r"(?:Channel|Ring) (\d+)(?:/\d+)?\s*:\s*(\d+)(?:\[([0-9a-fA-Fx]+)\])?\s*->\s*"
                   r"(\d+)(?:\[([0-9a-fA-Fx]+)\])?(?:\s*\[(send|receive)\])?\s+via\s+(.+?)\s*$")
_RING = re.compile(r"^Channel (\d+)/(\d+)\s*:\s*((?:\d+\s*)+)$")
_RING_OLD = re.compile(r"^Channel (\d+)\s*:\s*((?:\d+\s+)+\d+)\s*$")
_COMM = re.compile(r"\bcomm 0x[0-9a-f]+ rank (\d+) n[Rr]anks (\d+)(?: nNodes (\d+))?")
_TREES = re.compile(r"\[(\d+)\]\s+(-?\d+)/(-?\d+)/(-?\d+)->(-?\d+)->(-?\d+)")
_ENV = re.compile(r"^(NCCL_[A-Z0-9_]+) set by environment to (.*?)\.?$")
# a topology-search result (src/graph/search.cc line 1319; "speed" instead of "bw" before NCCL 2.12)
_GRAPH = re.compile(r"^Pattern (\d+), crossNic (\d+), nChannels (\d+), (?:bw|speed) ([\d.]+)/([\d.]+), "
                    r"type (\w+)/(\w+), sameChannels (\d+)")
# NCCL's pick per call (TUNING): "Broadcast: 1024 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}" (2.2x);
# "4096 Bytes -> Algo 0 proto 0 time 25.874907" (older: indices into NCCL's algorithm and protocol lists)
_PICK = re.compile(r"^(?:(\w+):\s*)?(\d+) Bytes -> Algo\s+(\w+)\s+proto\s+(\w+)(?:\s+time ([\d.]+))?")
_ALGO_INDEX = {"0": "Tree", "1": "Ring"}  # the first two algorithms kept their indices in every release
_PROTO_INDEX = {"0": "LL", "1": "LL128", "2": "Simple"}
#: NCCL's graph patterns (src/include/graph.h lines 163-169 at NCCL 2.30.7)
GRAPH_PATTERNS = {1: "balanced tree", 2: "split tree", 3: "tree", 4: "ring", 5: "NVLS", 6: "CollNet direct"}


@dataclass
class NcclLog:
    version: str | None = None
    cuda: str | None = None
    #: the CUDA driver's version code ("cudaDriverVersion 12020" = CUDA 12.2 driver), when printed
    cuda_driver: int | None = None
    nranks: int | None = None
    ranks: list[int] = field(default_factory=list)
    #: ranks whose "... rank R nranks N ... - Init COMPLETE" line is in the paste, in the order printed
    init_complete_ranks: list[int] = field(default_factory=list)
    nnodes: int | None = None
    hosts: list[str] = field(default_factory=list)
    devices: list[dict] = field(default_factory=list)
    net: str | None = None
    net_kind: str | None = None  # "IB", "Socket" or "plugin"
    net_devices: list[str] = field(default_factory=list)
    net_devices_per_gpu: dict[str, list[str]] = field(default_factory=dict)
    #: ports NCCL merged into one network device ("[0]={[0] mlx5_7:1/RoCE, [1] mlx5_6:1/RoCE}"), one list each
    net_merged: list[list[str]] = field(default_factory=list)
    ib_found: bool | None = None
    #: the net plugin NCCL loaded and its version ("NET/OFI Initializing aws-ofi-nccl 1.7.3-aws"; "NET/Plugin:
    #: Loaded net plugin NAME (vN)" names it without a version), and the Libfabric provider, fabric and NIC
    #: count aws-ofi-nccl selected ("NET/OFI Selected provider is efa, fabric is efa (found 4 nics)")
    net_plugin: str | None = None
    net_plugin_version: str | None = None
    net_provider: str | None = None
    net_fabric: str | None = None
    net_nics: int | None = None
    #: GPUDirect RDMA: True when every network connection printed goes /GDRDMA, False when one does not (or, with no
    #: channel line, a distance line or every NIC line says Disabled), None when the paste does not show it (see
    #: :mod:`.gdr`: the NIC line "GPU Direct RDMA Enabled for HCA" alone is not evidence that GDR is used)
    gdr: bool | None = None
    #: the NIC lines ("NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_0'"): can a NIC register GPU memory at all
    gdr_hca: bool | None = None
    #: network connections ("via NET/...") with and without /GDRDMA: {"gdrdma": n, "without": m}
    gdr_connections: dict[str, int] = field(default_factory=dict)
    #: the same per direction, from "[send]" / "[receive]" lines: {"send": {...}, "receive": {...}} (see :mod:`.gdr`)
    gdr_by_direction: dict[str, dict[str, int]] = field(default_factory=dict)
    #: NCCL's per-GPU distance decisions, both formats (up to 2.28; 2.29 and later, TRACE-only from 2.30.3):
    #: gpu, net, gdr, distance, limit (NCCL's path types), format
    gdr_distance: list[dict] = field(default_factory=list)
    dmabuf: bool | None = None
    transports: dict[str, int] = field(default_factory=dict)
    #: the communicator's channel count where NCCL prints one (channels_printed), else the highest channel id seen + 1
    #: (a lower bound: a filtered paste shows only some channels), else None
    channels: int | None = None
    #: the count as NCCL printed it: "Channel 00/24 : 0 1 ..." (src/graph/rings.cc, 2.5 on) or "24 coll channels, ..."
    #: (2.7 on); the largest where several communicators print one; None when no such line is in the paste
    channels_printed: int | None = None
    #: the distinct channel ids the paste shows (connection, ring and tree lines), sorted
    channel_ids: list[int] = field(default_factory=list)
    rings: dict[int, list[int]] = field(default_factory=dict)
    trees: dict[int, list[dict]] = field(default_factory=dict)
    nvls: dict = field(default_factory=lambda: {"supported": None, "channels": None, "heads": 0})
    #: distinct topology-search results ("Pattern 4, crossNic 0, nChannels 12, bw 30/30, ..."), in order seen:
    #: pattern, name, channels, bw_intra_GBps / bw_inter_GBps (per channel, as NCCL plans), types, cross_nic
    graphs: list[dict] = field(default_factory=list)
    mnnvl: bool | None = None
    env: dict[str, str] = field(default_factory=dict)
    tuning: list[str] = field(default_factory=list)
    #: the TUNING subsystem's algorithm x protocol tables (see :mod:`.tuning_table`), one per communicator printed
    tuning_tables: list[dict] = field(default_factory=list)
    #: NCCL's own pick per call, when the TUNING subsystem printed it ("Broadcast: 1024 Bytes -> Algo RING proto
    #: LL ..."): op, bytes, algo, proto (as printed), and time_us where NCCL printed its estimate; one per distinct call
    tuning_picks: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: NCCL's error-return trail ("include/net.h:24 -> 2", src/include/checks.h): where, code, result (the
    #: ncclResult_t name), detail (strerror, 2.18.3 on) and count, one per distinct (where, code) in the order seen
    error_returns: list[dict] = field(default_factory=list)
    #: warnings of the libraries under NCCL (libfabric <warn>, UCX WARN/ERROR, PMIx ERROR), not NCCL WARN lines:
    #: library, level, provider (libfabric's), message, count (see :func:`.ncclog_faults.library_warnings`)
    library_warnings: list[dict] = field(default_factory=list)
    #: a pasted "lsmod | grep" for the peer-memory modules: {"nvidia_peermem": bool, "nv_peer_mem": bool} for the
    #: modules it covers (False: the answer was empty)
    peer_memory_lsmod: dict[str, bool] = field(default_factory=dict)
    #: what in the paste shows a virtual machine: {"line": hypervisor line} or {"hosts": names with a "vm" word}
    vm_evidence: dict | None = None
    jobs: int = 1
    lines: int = 0
    problems: list[dict] = field(default_factory=list)
    #: GPU pairs NCCL said it cannot reach by P2P ("P2P is disabled between connected GPUs 0 and 1"), as printed
    p2p_disabled_pairs: list[list[int]] = field(default_factory=list)
    #: NCCL's own "HINT: ..." lines (printed after an IB completion error), in order seen
    hints: list[str] = field(default_factory=list)
    #: failure signatures from the runbook data whose patterns match a line (see :mod:`.signatures`)
    signatures: list[dict] = field(default_factory=list)
    #: cumulative counters found (pause frames, link retrains): signature, counter, values (one per reading), delta
    counters: list[dict] = field(default_factory=list)
    #: what the reader recognised that is not a fault, or that one paste cannot decide (a counter read once)
    notes: list[str] = field(default_factory=list)
    #: informational lines: facts worth saying that are not faults here ("remark", "source"), e.g. GPUDirect RDMA off
    #: beside a fatal error, a socket fallback on one node, variables set by the environment
    remarks: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        """The fields, with ``problems`` and ``explanation`` in English whatever the language (``--json`` is a
        stable interface); ``problems`` on the object and :func:`explain` speak the reader's language."""
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["rings"] = {str(k): v for k, v in self.rings.items()}
        d["trees"] = {str(k): v for k, v in self.trees.items()}
        with i18n.english():
            d["problems"] = problems(self)
            d["remarks"] = remarks(self)
            d["explanation"] = explain(self)
        return d


def _via_kind(via: str) -> str:
    """'NET/IB/14/GDRDMA' -> 'NET/IB/GDRDMA', 'P2P/CUMEM/read' kept, 'NET/AWS Libfabric/0' -> 'NET/AWS Libfabric'."""
    parts = via.split("/")
    if parts[0] == "NET":
        # the device number, or "dev(proxyRank)" when another GPU proxies the connection (PXN)
        kept = [p for p in parts[1:] if not re.fullmatch(r"\d+(?:\(\d+\))?", p)]
        return "/".join(["NET", *kept])
    return via


@dataclass
class _Scan:
    """What :func:`read_text` gathers across lines before it fills the :class:`NcclLog`."""

    hosts: dict = field(default_factory=dict)
    devices: dict = field(default_factory=dict)
    channel_ids: set = field(default_factory=set)
    comm_ids: set = field(default_factory=set)
    versions: set = field(default_factory=set)
    per_gpu: dict = field(default_factory=dict)
    ranks: set = field(default_factory=set)
    table: TableReader = field(default_factory=TableReader)


def read_text(text: str) -> NcclLog:
    """Parse ``text``; ValueError (saying what was expected) when it holds no NCCL debug line."""
    if not isinstance(text, str):
        raise ValueError("NCCL log input must be text")
    log, scan = NcclLog(), _Scan()
    bare = not has_prefixed_lines(text)  # NCCL's "host:pid:tid [dev] NCCL INFO" stripped from every line
    for raw in text.splitlines():
        line = clean_line(raw)
        if not line or line.startswith("%%"):
            continue
        if m := _VERSION.search(line):
            scan.versions.add(m.group(1))
            log.version = log.version or m.group(1)
            log.cuda = log.cuda or m.group(2)
            log.lines += 1
            if "NCCL INFO" not in line and "NCCL WARN" not in line:
                continue
        m = _LINE.match(line)
        if not m:
            if bare and (msg := bare_message(line)):
                log.lines += 1
                read_p2p_and_hints(log, msg)
                _read_message(log, scan, None, None, msg)
            continue
        log.lines += 1
        host, dev, msg = m.group("host"), m.group("dev"), m.group("msg").strip()
        if host:
            scan.hosts.setdefault(host)
            scan.devices.setdefault((host, int(dev)), {"host": host, "cuda_dev": int(dev), "bus_id": None})
        read_p2p_and_hints(log, msg)
        if m.group("level") == "WARN":
            log.warnings.append(msg)
            continue
        if trail := read_error_return(msg):
            _add_error_return(log, trail)
            continue
        _read_message(log, scan, host, dev, msg, f"{host}:{m.group('pid')}" if host else "")
    from .signatures import counter_readings, match_text, reading_notes

    log.signatures = match_text(text)
    log.counters = counter_readings(text)
    log.library_warnings = library_warnings(text)
    log.peer_memory_lsmod = peer_memory_lsmod(text)
    log.vm_evidence = vm_evidence(text, list(scan.hosts))
    with i18n.english():  # the field (and --json) in English, a stable interface
        log.notes = reading_notes(log.counters, text)
    # the same notes in the reader's language, for the paragraph a person reads (not a field: not in --json)
    log.notes_shown = {"en": log.notes, i18n.language(): reading_notes(log.counters, text)}
    if log.lines == 0 and not log.signatures and not log.notes and not log.library_warnings:
        raise ValueError(
            "input is not an NCCL log: expected NCCL_DEBUG=INFO lines such as "
            "'host:1234:1250 [0] NCCL INFO Using network IB' or 'NCCL version 2.21.5+cuda12.4'; found none"
        )
    _finish(log, scan)
    return log


def _add_error_return(log: NcclLog, trail: dict) -> None:
    """Count one trail line under its (where, code)."""
    for seen in log.error_returns:
        if (seen["where"], seen["code"]) == (trail["where"], trail["code"]):
            seen["count"] += 1
            return
    log.error_returns.append({**trail, "count": 1})


def _finish(log: NcclLog, scan: _Scan) -> None:
    log.channel_ids = sorted(scan.channel_ids | set(log.rings) | set(log.trees))
    log.channels = log.channels_printed
    if log.channels is None and log.channel_ids:
        log.channels = max(log.channel_ids) + 1
    log.hosts = list(scan.hosts)
    log.devices = list(scan.devices.values())
    log.ranks = sorted(scan.ranks)
    log.net_devices_per_gpu = {k: sorted(v, key=int) for k, v in scan.per_gpu.items()}
    log.jobs = max(1, len(scan.comm_ids), len(scan.versions))
    log.tuning_tables = scan.table.tables()
    log.gdr = _gdr.decide(log)
    log.problems = problems(log)
    log.remarks = remarks(log)


def _read_message(log: NcclLog, scan: _Scan, host: str | None, dev: str | None, msg: str,
                  source: str = "") -> None:
    """One INFO message (the text after ``NCCL INFO``); ``source`` is ``host:pid`` when printed."""
    if mm := re.search(r"commId (0x[0-9a-f]+)", msg):
        scan.comm_ids.add(mm.group(1))
    if mm := _COMM.search(msg):
        scan.ranks.add(int(mm.group(1)))
        if msg.rstrip().endswith("Init COMPLETE"):
            log.init_complete_ranks.append(int(mm.group(1)))
        log.nranks = max(log.nranks or 0, int(mm.group(2)))
        if mm.group(3):
            log.nnodes = int(mm.group(3))
        if host and (bm := re.search(r"busId ([0-9a-f]+)", msg)):
            scan.devices[(host, int(dev))]["bus_id"] = bm.group(1)
    if mm := re.search(r"\bMNNVL (\d)", msg):
        log.mnnvl = mm.group(1) == "1"
    _read_network(log, msg)
    _read_plugin(log, msg)
    _read_tuning(log, scan, msg, source)
    if mm := _GRAPH.match(msg):
        pat, cross, nch, bw_in, bw_out, t_in, t_out, same = mm.groups()
        graph = {"pattern": int(pat), "name": GRAPH_PATTERNS.get(int(pat), f"pattern {pat}"),
                 "channels": int(nch), "bw_intra_GBps": float(bw_in), "bw_inter_GBps": float(bw_out),
                 "type_intra": t_in, "type_inter": t_out, "cross_nic": int(cross), "same_channels": int(same)}
        if graph not in log.graphs:
            log.graphs.append(graph)
        return
    if mm := _ENV.match(msg):
        log.env[mm.group(1)] = mm.group(2)
        if mm.group(1) in ("NCCL_ALGO", "NCCL_PROTO") and msg not in log.tuning:
            log.tuning.append(msg)
    _read_channels(log, scan, host, dev, msg)


#: one device of a "NET/IB : Using" or "NET/Socket : Using" line: "[0]mlx5_0:1/IB", or "[0] mlx5_7:1/RoCE" inside a
#: merged device's braces
_NET_PORT = re.compile(r"\[\d+\]\s*([^\s\[;,{}=]+)")


def _read_network(log: NcclLog, msg: str) -> None:
    """Network, RDMA devices, GPUDirect RDMA, DMA-BUF, NVLS support, P2P and link-state lines."""
    if mm := re.match(r"Using network (.+?)\s*$", msg):
        log.net = mm.group(1)
        low = log.net.lower()
        log.net_kind = "IB" if low.startswith("ib") else "Socket" if low == "socket" else "plugin"
    if msg.startswith("NET/OFI") and log.net is None:
        # the aws-ofi-nccl plugin's own lines ("NET/OFI Selected Provider is efa"): its network is "AWS
        # Libfabric", named so by "Using network AWS Libfabric" when that line is in the paste
        log.net, log.net_kind = "AWS Libfabric", "plugin"
    if mm := re.match(r"NET/(IB|Socket)\s*:\s*Using (.*)$", msg):
        # a merged device lists its ports inside braces, "[0]={[0] mlx5_7:1/RoCE, [1] mlx5_6:1/RoCE}" (NCCL 2.20 on,
        # src/transport/net_ib.cc, where NCCL_IB_MERGE_NICS defaults to 1): its ports are the devices
        devs = [re.sub(r"<\d+>$", "", d) for d in _NET_PORT.findall(mm.group(2))]
        for group in re.findall(r"\[\d+\]=\{([^}]*)\}", mm.group(2)):
            if (ports := _NET_PORT.findall(group)) and ports not in log.net_merged:
                log.net_merged.append(ports)
        if mm.group(1) == "IB" and devs:
            log.ib_found = True
            # the RDMA ports are the network's devices, not the interfaces other ranks' NET/Socket lines list
            log.net_devices = [d for d in log.net_devices if re.search(r"/(?:IB|RoCE)$", d)]
        elif mm.group(1) == "Socket" and log.ib_found:
            devs = []
        log.net_devices = list(dict.fromkeys([*log.net_devices, *devs]))
    if "NET/IB : No device found" in msg:
        log.ib_found = False if log.ib_found is None else log.ib_found
    if "GPU Direct RDMA" in msg:
        _gdr.read_gdr_line(log, msg)
    if "DMA-BUF is available" in msg:
        log.dmabuf = True
    if mm := re.search(r"NVLS multicast support is (not )?available", msg):
        avail = mm.group(1) is None
        log.nvls["supported"] = avail if log.nvls["supported"] is None else (log.nvls["supported"] and avail)
    if msg.startswith("NVLS Head"):
        log.nvls["heads"] += 1


# aws-ofi-nccl's own lines: NCCL_OFI_INFO puts "NET/OFI " before each; "Using " PACKAGE_STRING (2021-10 to
# 2023-07), then "Initializing " PACKAGE_STRING (autoconf: "aws-ofi-nccl 1.7.3-aws"); "Selected Provider is %s
# (found %d nics)" (2018 to 2025-02), then "Selected provider is %s, fabric is %s (found %d nics)"
# (aws-ofi-nccl src/nccl_ofi_net.c, .cpp since 2024)
_OFI_INIT = re.compile(r"^NET/OFI (?:Initializing|Using) (aws-ofi-nccl) (\S+)")
_OFI_PROVIDER = re.compile(r"^NET/OFI Selected [Pp]rovider is ([^,\s]+)(?:, fabric is (.+?))?"
                           r"(?: \(found (\d+) nics\))?\s*$")
# NCCL's plugin loader: "NET/Plugin: Loaded net plugin %s (v%d)" (src/plugin/net/net_v*.cc)
_NET_PLUGIN = re.compile(r"^NET/Plugin\s*:\s*Loaded net plugin (.+?) \(v\d+\)")


def _read_plugin(log: NcclLog, msg: str) -> None:
    """The net plugin, its version and (aws-ofi-nccl) its Libfabric provider and NIC count; the CUDA driver."""
    if mm := re.match(r"cudaDriverVersion (\d+)", msg):
        log.cuda_driver = int(mm.group(1))
    if mm := _OFI_INIT.match(msg):
        log.net_plugin, log.net_plugin_version = mm.group(1), mm.group(2)
    elif mm := _OFI_PROVIDER.match(msg):
        log.net_provider, log.net_fabric = mm.group(1), mm.group(2)
        log.net_nics = int(mm.group(3)) if mm.group(3) else log.net_nics
    elif (mm := _NET_PLUGIN.match(msg)) and log.net_plugin is None:
        log.net_plugin = mm.group(1)


def _read_tuning(log: NcclLog, scan: _Scan, msg: str, source: str = "") -> None:
    """Channel counts, thresholds and the TUNING subsystem's algorithm x protocol table."""
    if mm := re.search(r"(\d+) coll channels, (?:(\d+) collnet channels, )?(?:(\d+) nvls channels, )?", msg):
        log.channels_printed = max(log.channels_printed or 0, int(mm.group(1)))
        if mm.group(3) is not None:
            log.nvls["channels"] = int(mm.group(3))
        log.tuning.append(msg)
    if msg.startswith(("threadThresholds", "P2P Chunksize", "Tuner", "Enabled NCCL Func/Proto/Algo")) or \
            msg.count("|") >= 2:
        if msg not in log.tuning:
            log.tuning.append(msg)
        scan.table.feed(msg, source)
    if (mm := _PICK.match(msg)) and (pick := _pick(mm)) not in log.tuning_picks:
        log.tuning_picks.append(pick)


def _pick(mm: re.Match) -> dict:
    op, nbytes, algo, proto, t = mm.groups()
    from .tuning_table import FUNCTIONS

    return {"op": FUNCTIONS.get(op or "", op.lower() if op else None), "bytes": int(nbytes),
            "algo": _ALGO_INDEX.get(algo, algo), "proto": _PROTO_INDEX.get(proto, proto),
            "time_us": float(t) if t else None}


def _read_channels(log: NcclLog, scan: _Scan, host: str | None, dev: str | None, msg: str) -> None:
    """Connections (``Channel 00/0 : 0[0] -> 1[1] via P2P/IPC``), rings and trees."""
    if mm := _CONN.search(msg):
        scan.channel_ids.add(int(mm.group(1)))
        via = mm.group(7)
        kind = _via_kind(via)
        log.transports[kind] = log.transports.get(kind, 0) + 1
        if via.startswith("NET/"):
            parts = via.split("/")
            _gdr.count_connection(log, via, mm.group(6))
            nums = [p for p in parts[1:] if p.isdigit()]
            if host and nums:
                scan.per_gpu.setdefault(f"{host}[{dev}]", set()).add(nums[0])
        return
    if mm := _RING.match(msg):
        log.rings[int(mm.group(1))] = [int(x) for x in mm.group(3).split()]
        log.channels_printed = max(log.channels_printed or 0, int(mm.group(2)))
        return
    if mm := _RING_OLD.match(msg):
        log.rings[int(mm.group(1))] = [int(x) for x in mm.group(2).split()]
        scan.channel_ids.add(int(mm.group(1)))
        return
    if msg.startswith("Trees "):
        for t in _TREES.finditer(msg):
            ch, c0, c1, c2, rank, parent = (int(x) for x in t.groups())
            entry = {"rank": rank, "parent": parent, "children": [c for c in (c0, c1, c2) if c >= 0]}
            if entry not in log.trees.setdefault(ch, []):
                log.trees[ch].append(entry)
