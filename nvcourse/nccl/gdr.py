"""GPUDirect RDMA (GDR) in an NCCL log: what each kind of line proves, by NCCL version.

Three kinds of line speak about GDR, and only one of them says whether a connection uses it:

* **the channel lines** (``Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA``, INIT/NET, every version):
  ``/GDRDMA`` (with ``(PCI)`` after it on C2C systems from 2.26) on a connection that uses GDR, nothing on one that
  does not. They are the evidence, per connection (src/transport/net.cc).
* **the per-GPU distance line**, printed where NCCL decides: up to 2.28 ``GPU Direct RDMA Disabled for GPU ca000 /
  HCA 0 (distance 7 > 4)`` (INFO); 2.29 ``GPU Direct RDMA Disabled for GPU/0-110592 (rank 0) - NET/0-0 (distance
  9 > 6)`` (INFO; from 2.29 the default limit is P2C, 6, while NCCL_NET_GDR_C2C is 1, its default); from 2.30.3
  the same line at TRACE level, so absent from every ``NCCL_DEBUG=INFO`` log of a release build
  (src/graph/paths.cc at v2.28.9-1, v2.29.2-1, v2.30.3-1).
* **the NIC line** ``NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_0'`` (src/graph/topo.cc, every version):
  only whether the NIC can register GPU memory (a peer-memory module or DMA-BUF). "Enabled" there does not mean
  any connection uses GDR: the distance rule may still turn it off per GPU.

So the channel lines decide; without them the distance lines; the NIC line alone decides only "off" (a NIC that
cannot register GPU memory cannot do GDR for anyone). Read ``[send]`` and ``[receive]`` lines apart: NCCL decides GDR
for sends (a GDR *read* of GPU memory) on its own, under NCCL_NET_GDR_READ (default: on from Ampere; before Ampere
only when the GPU has an NVLink peer or is alone; src/graph/paths.cc ncclTopoCheckGdr). Receive lines with
``/GDRDMA`` and send lines without it therefore prove the peer-memory path works: the sends are off by that policy.
"""

from __future__ import annotations

import re

from .. import i18n
from ..i18n import ngettext
from ..i18n import translate as _

__all__ = ["read_gdr_line", "count_connection", "decide", "describe", "off_by_distance_problem", "off_problem",
           "unknown_cause_problem",
           "read_policy_problem"]

_DIST_OLD = re.compile(r"GPU Direct RDMA (Disabled|Enabled) for GPU ([0-9a-fA-F]+) / HCA ([0-9a-fA-Fx]+) "
                       r"\(distance (\d+) (>|<=) (\d+)\)")
_DIST_NEW = re.compile(r"GPU Direct RDMA (Disabled|Enabled) for GPU/(\d+-\d+) \(rank (\d+)\) - NET/(\d+-\d+) "
                       r"\((?:\s*using PXN via GPU/\d+-\d+, )?distance (\d+) (>|<=) (\d+)")
_HCA = re.compile(r"NET/[^:]+?\s*: GPU Direct RDMA (Enabled|Disabled) for HCA (\d+)")


def read_gdr_line(log, msg: str) -> None:
    """Record a distance line (``log.gdr_distance``) or a NIC line (``log.gdr_hca``) from one INFO message."""
    if mm := _DIST_OLD.search(msg):
        on, gpu, hca, dist, _, limit = mm.groups()
        entry = {"gpu": gpu, "net": hca, "gdr": on == "Enabled", "distance": int(dist), "limit": int(limit),
                 "format": "up to 2.28"}
    elif mm := _DIST_NEW.search(msg):
        on, gpu, rank, net, dist, _, limit = mm.groups()
        entry = {"gpu": f"GPU/{gpu} (rank {rank})", "net": f"NET/{net}", "gdr": on == "Enabled",
                 "distance": int(dist), "limit": int(limit), "format": "2.29 and later"}
    else:
        if mm := _HCA.search(msg):
            on = mm.group(1) == "Enabled"
            log.gdr_hca = on if log.gdr_hca is None else (log.gdr_hca or on)
        return
    if entry not in log.gdr_distance:
        log.gdr_distance.append(entry)


def count_connection(log, via: str, direction: str | None = None) -> None:
    """Count one ``via NET/...`` connection as with or without ``/GDRDMA`` (``GDRDMA(PCI)`` counts as with), in all
    and, when the line says ``[send]`` or ``[receive]``, per direction (``log.gdr_by_direction``)."""
    with_gdr = any(p.startswith("GDRDMA") for p in via.split("/"))
    key = "gdrdma" if with_gdr else "without"
    log.gdr_connections[key] = log.gdr_connections.get(key, 0) + 1
    if direction:
        per = log.gdr_by_direction.setdefault(direction, {})
        per[key] = per.get(key, 0) + 1


def _sends_off_by_read_policy(log) -> bool:
    """Every receive connection goes /GDRDMA and every connection without it is a send."""
    send, recv = log.gdr_by_direction.get("send", {}), log.gdr_by_direction.get("receive", {})
    n_without = log.gdr_connections.get("without", 0)
    return bool(recv.get("gdrdma")) and not recv.get("without") and n_without > 0 and send.get("without") == n_without


def decide(log) -> bool | None:
    """``True`` when every network connection printed goes ``/GDRDMA``, ``False`` when any does not (or, without
    channel lines, a distance line or every NIC line says Disabled), ``None`` when the paste does not show it."""
    conn = log.gdr_connections
    if conn.get("gdrdma", 0) + conn.get("without", 0):
        return conn.get("without", 0) == 0
    if log.gdr_distance:
        return all(d["gdr"] for d in log.gdr_distance)
    return False if log.gdr_hca is False else None


def _distance_text(d: dict) -> str:
    """A distance decision as NCCL prints it: 'GPU 81000 / HCA 0 (distance 7 <= 7)' up to 2.28, 'GPU/0-110592
    (rank 0) - NET/0-0 (distance 9 > 6)' from 2.29."""
    dist = f"(distance {d['distance']} {'<=' if d['gdr'] else '>'} {d['limit']})"
    if d["format"] == "up to 2.28":
        return f"GPU {d['gpu']} / HCA {d['net']} {dist}"
    return f"{d['gpu']} - {d['net']} {dist}"


def describe(log) -> str | None:
    """One sentence on GDR for :func:`~nvcourse.nccl.ncclog.explain`; None when the paste says nothing about it."""
    if log.net_kind == "Socket":
        return _("The network is TCP sockets, which never use GPUDirect RDMA (that needs an RDMA NIC: InfiniBand "
                 "or RoCE).")
    conn = log.gdr_connections
    n_with, n_without = conn.get("gdrdma", 0), conn.get("without", 0)
    if n_with and n_without and _sends_off_by_read_policy(log):
        return ngettext("GPUDirect RDMA is on for every receive connection and off for {n} send connection: NCCL "
                        "decides GDR for sends (GDR read) apart, under NCCL_NET_GDR_READ; the peer-memory path works.",
                        "GPUDirect RDMA is on for every receive connection and off for {n} send connections: NCCL "
                        "decides GDR for sends (GDR read) apart, under NCCL_NET_GDR_READ; the peer-memory path works.",
                        n_without).format(n=i18n.whole(n_without))
    if n_with and n_without:
        return _("GPUDirect RDMA is on for {n_with} of {total} network connections (NET/.../GDRDMA) and off for "
                 "the other {n_without}.").format(n_with=i18n.whole(n_with), total=i18n.whole(n_with + n_without),
                                                   n_without=i18n.whole(n_without))
    if log.gdr is not None and not n_with + n_without and log.gdr_distance:
        # no channel line: the evidence is NCCL's per-GPU distance decision, quoted as it reads
        quote = ", ".join(f"'{_distance_text(d)}'" for d in log.gdr_distance[:2])
        more = len(log.gdr_distance) - 2
        others = ngettext(", and {n} more distance line", ", and {n} more distance lines", more).format(
            n=i18n.whole(more)) if more > 0 else ""
        if log.gdr:
            return _("GPUDirect RDMA is on by NCCL's distance decision: {quote}{others}; no network channel line in "
                     "the paste shows a connection using it (via NET/.../GDRDMA).").format(quote=quote, others=others)
        return _("GPUDirect RDMA is off by NCCL's distance decision: {quote}{others}.").format(quote=quote,
                                                                                             others=others)
    if log.gdr is True:
        return _("GPUDirect RDMA is on (NET/.../GDRDMA).")
    if log.gdr is False:
        return _("GPUDirect RDMA is off.")
    if log.gdr_hca:
        return _("The NIC can register GPU memory ('GPU Direct RDMA Enabled for HCA'); whether a connection uses "
                 "GPUDirect RDMA shows only in the channel lines (via NET/.../GDRDMA), which this paste lacks.")
    return None


def off_by_distance_problem(log, matched: set[str], record: dict) -> dict | None:
    """Connections without ``/GDRDMA`` although the NIC supports GDR and no signature explains it: on NCCL 2.30.3
    and later that is the distance rule, whose own line is TRACE-only; ``record`` is the ``gdr_distance`` record."""
    n_without = log.gdr_connections.get("without", 0)
    if not n_without or not log.gdr_hca or matched & {"no_peermem", "gdr_distance"}:
        return None
    total = n_without + log.gdr_connections.get("gdrdma", 0)
    return {"problem": ngettext(
                "{n} of {total} network connection without /GDRDMA although the NIC supports it ('GPU Direct RDMA "
                "Enabled for HCA'): GPUDirect RDMA is off by distance (NCCL_NET_GDR_LEVEL); from NCCL 2.30.3 the "
                "distance line is printed only at TRACE level, so compare `nvidia-smi topo -m`",
                "{n} of {total} network connections without /GDRDMA although the NIC supports it ('GPU Direct RDMA "
                "Enabled for HCA'): GPUDirect RDMA is off by distance (NCCL_NET_GDR_LEVEL); from NCCL 2.30.3 the "
                "distance line is printed only at TRACE level, so compare `nvidia-smi topo -m`", total).format(
                n=i18n.whole(n_without), total=i18n.whole(total)),
            "case": None, "signature": "gdr_distance" if record else None,
            "cause": i18n.data_text(record.get("cause")), "fix": i18n.data_text(record.get("fix")),
            "source": record.get("source_url")}


def read_policy_problem(log) -> dict | None:
    """Receive connections with ``/GDRDMA``, send connections without: GDR reads off by NCCL's policy, not a fault of
    the peer-memory path (which the receive lines prove works)."""
    if not _sends_off_by_read_policy(log):
        return None
    n_send = log.gdr_by_direction["send"]["without"]
    env = log.env.get("NCCL_NET_GDR_READ")
    why = (_("NCCL_NET_GDR_READ={value} is set").format(value=env) if env is not None else _(
        "NCCL_NET_GDR_READ's default turns GDR reads off on GPUs older than Ampere unless the GPU has an NVLink peer "
        "(or is the only GPU); on Ampere and newer look for NCCL_NET_GDR_READ=0"))
    return {"problem": ngettext(
                "{n} send connection without /GDRDMA while every receive connection has it: GPUDirect RDMA reads "
                "(sends) are off by policy, not a missing peer-memory module",
                "{n} send connections without /GDRDMA while every receive connection has it: GPUDirect RDMA reads "
                "(sends) are off by policy, not a missing peer-memory module", n_send).format(n=i18n.whole(n_send)),
            "case": None, "signature": None,
            "cause": _("NCCL decides GDR for sends apart from receives: {why}").format(why=why),
            "fix": _("nothing to reload; if sends should use GDR, set NCCL_NET_GDR_READ=1 and measure"),
            "source": "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-net-gdr-read"}


def off_problem(log, matched: set[str], record: dict, no_gdr_case: dict, has_net: bool) -> dict | None:
    """The one GDR problem to report, if any: sends off by read policy, else off by distance, else GDR off
    (``no_gdr_case``) on an RDMA network with no matched signature explaining it; TCP sockets never use GDR."""
    if (policy := read_policy_problem(log)) or (policy := off_by_distance_problem(log, matched, record)):
        return policy
    if log.gdr is False and log.net_kind != "Socket" and (has_net or log.net_kind == "IB") and not matched & {
            "no_peermem", "gdr_distance"}:
        if log.gdr_hca is None and not log.gdr_distance:
            return unknown_cause_problem(plugin=log.net_kind == "plugin")
        return {"problem": _("network connections without GDRDMA: GPUDirect RDMA is off"), **no_gdr_case}
    return None


def unknown_cause_problem(plugin: bool = False) -> dict:
    """GDR off in a log taken with NCCL's default debug subsystems: the NIC and distance lines that tell a missing
    peer-memory module from a distance or policy decision are NET lines, absent by default (src/debug.cc: INIT,
    BOOTSTRAP, ENV), so the log cannot say which; chapter 06d's table says to rerun with NET first. On a net plugin
    (``plugin``) the NIC line reports what the plugin offers: "Enabled" only where its ptrSupport includes GPU memory
    (NCCL_PTR_CUDA, or DMA-BUF; src/graph/topo.cc, 2.13 on), which a fabric without GPUDirect RDMA never does."""
    cause = _("the lines that tell a missing peer-memory module from NCCL's distance or read policy ('GPU Direct RDMA "
              "... for HCA', the distance line) are NET-subsystem lines, not printed with the default "
              "NCCL_DEBUG_SUBSYS")
    if plugin:
        cause += _("; over a net plugin GDR also needs the plugin and its fabric to take GPU memory, which some "
                   "never do (aws-ofi-nccl before 1.1.0 offered host memory only): there GDR off is expected")
    return {"problem": _("network connections without GDRDMA: GPUDirect RDMA is off, and this log cannot say why"),
            "case": None, "signature": None,
            "cause": cause,
            "fix": _("rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,NET, then follow what the NIC line says"),
            "source": "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-debug-subsys"}
