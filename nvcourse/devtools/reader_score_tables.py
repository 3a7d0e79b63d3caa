"""Fields :mod:`.reader_score` checks on NCCL's TUNING table (``kind = "tuning"``) and on NCCL's topology XML
(``kind = "topo-xml"``), each taken from what the reader reports.

An EXPECTED.toml entry of kind ``tuning`` may give: ``nccl_version``, ``tables`` (how many tables the text holds),
``truncated`` (the first one is cut), ``algorithms`` and ``protocols`` (the first table's header, in order),
``max_threads`` (``{algo = [LL, LL128, Simple]}``), ``cells`` (``[{collective, algo, proto, latency_us, bw_GBps}]``
as printed, one field each) and ``picks`` (NCCL's printed per-call choices ``[{collective, bytes, algo, proto}]``,
one field each). Of kind ``topo-xml``: ``gpus``, ``gpu_sms``, ``gpu_bus_ids``, ``nvlinks_first_gpu`` and
``nvlink_targets_first_gpu`` (the GPU of the first bus id listed), ``pci_gpus`` (GPUs found as PCI devices of
a display class, with or without a ``<gpu>`` element), ``nics``, ``nic_names``, ``nic_speeds_Mbps``,
``nic_gdr``, ``c2c`` and ``cut``; ``gpus``, ``gpu_sms`` and ``gpu_bus_ids`` count ``<gpu>`` elements only. Lists
whose order the file does not fix (names, bus ids, distinct values) are compared as sets. Kept as read but not
scored: ``cpus``, ``cpu_numaids``, ``xml_kind``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._validate import choice
from ..nccl import ncclog
from ..nccl.tuning_table import FUNCTIONS
from ..topology.topo_parser import parse_topo

__all__ = ["TUNING_FIELDS", "TOPO_FIELDS", "read_tuning", "read_topo", "expand"]

#: NCCL's algorithm numbers in "-> Algo N proto P" lines, NCCL 2.19+ (src/include/device.h NCCL_ALGO_*)
_ALGO_IDS = {"0": "TREE", "1": "RING", "2": "COLLNET_DIRECT", "3": "COLLNET_CHAIN", "4": "NVLS", "5": "NVLS_TREE",
             "6": "PAT"}
_PROTO_IDS = {"0": "LL", "1": "LL128", "2": "SIMPLE"}


def read_tuning(text: str) -> dict:
    """What the ncclog reader reports that the tuning fields check."""
    log = ncclog.read_text(text)
    return {"version": log.to_json()["version"], "tables": log.tuning_tables, "picks": log.tuning_picks}


def read_topo(text: str) -> dict:
    """What ``nvcourse topo`` reports on an XML text, keyed for the topo fields."""
    res = parse_topo(text)
    return {"xml": res.xml, "notes": res.notes}


def _first(d: dict) -> dict:
    return d["tables"][0] if d["tables"] else {}


def _op_key(name: str) -> str:
    """NCCL's printed collective name ("AllReduce") as the reader's key ("allreduce"); "" stays ""."""
    return FUNCTIONS.get(name, name.lower())


def _cell(d: dict, c: dict) -> list[float] | None:
    cell = _first(d).get("collectives", {}).get(_op_key(c["collective"]), {}).get(c["algo"], {}).get(c["proto"])
    return None if cell is None else [cell["latency_us"], cell["algbw_GBps"]]


def _norm_algo(a: Any) -> str:
    s = str(a).upper().replace("_", "")
    return _ALGO_IDS.get(str(a), s).replace("_", "") if str(a).isdigit() else s


def _norm_proto(p: Any) -> str:
    return (_PROTO_IDS.get(str(p), str(p)) if str(p).isdigit() else str(p)).upper()


def _pick(d: dict, p: dict) -> list[Any] | None:
    # NCCL 2.19-2.20 print "1024 Bytes -> Algo 1 proto 0" without the collective: "" read, None reported
    want = (_op_key(p["collective"]) or None, int(p["bytes"]))
    for q in d["picks"]:
        if (q["op"] or None, q["bytes"]) == want:
            return [q["op"], q["bytes"], _norm_algo(q["algo"]), _norm_proto(q["proto"])]
    return None


def _gpu_elements(d: dict) -> list[dict]:
    """The GPUs the reader found as ``<gpu>`` elements (not those listed only as PCI devices)."""
    return [g for g in d["xml"]["gpus"].values() if not g.get("pci_only", False)]


def _gpu_by_bus(d: dict, bus: str) -> dict:
    for g in d["xml"]["gpus"].values():
        if (g["bus_id"] or "").lower() == bus.lower():
            return g
    return {}


TUNING_FIELDS: dict[str, Callable[[dict], Any]] = {
    "nccl_version": lambda d: d["version"],
    "tables": lambda d: len(d["tables"]),
    "truncated": lambda d: bool(_first(d).get("truncated")),
    "algorithms": lambda d: _first(d).get("algorithms"),
    "protocols": lambda d: _first(d).get("protocols"),
}

TOPO_FIELDS: dict[str, Callable[[dict], Any]] = {
    # a GPU the reader found only as a PCI device (a hand-written NCCL_TOPO_FILE) counts in pci_gpus, not in gpus
    "gpus": lambda d: len(_gpu_elements(d)),
    "pci_gpus": lambda d: len(d["xml"]["gpus"]),
    # a <gpu> without an sm attribute states no SM version: nothing to count (as a NIC without speed or gdr)
    "gpu_sms": lambda d: sorted({g["sm"] for g in _gpu_elements(d) if g["sm"] is not None}, key=str),
    "gpu_bus_ids": lambda d: sorted((g["bus_id"] or "").lower() for g in _gpu_elements(d)),
    "nics": lambda d: len(d["xml"]["nics"]),
    "nic_names": lambda d: sorted(n["name"] or "" for n in d["xml"]["nics"].values()),
    "nic_speeds_Mbps": lambda d: sorted({round(n["speed_Gbps"] * 1000) for n in d["xml"]["nics"].values()
                                         if n["speed_Gbps"] is not None}),
    "nic_gdr": lambda d: sorted({n["gdr"] for n in d["xml"]["nics"].values() if n["gdr"] is not None}),
    "c2c": lambda d: any(g["c2c"] for g in d["xml"]["gpus"].values()),
    "cut": lambda d: any("stops after line" in n for n in d["notes"]),
}

#: fields compared as sets (sorted on both sides)
_SETS = {"gpu_sms", "gpu_bus_ids", "nic_names", "nic_speeds_Mbps", "nic_gdr"}


def expand(kind: str, entry: dict, got: dict | None) -> list[tuple[str, Any, Any]]:
    """(field, expected, got) for every value ``entry`` gives; ``got`` None (the reader refused the text) gives None
    for each."""
    out: list[tuple[str, Any, Any]] = []
    for name, expected in entry.items():
        if name in ("file", "kind", "xml_kind", "source", "note", "notes", "prefix", "cpus", "cpu_numaids"):
            continue
        out += _expand_one(kind, name, expected, got, (entry.get("gpu_bus_ids") or [""])[0])
    return out


def _expand_one(kind: str, name: str, expected: Any, d: dict | None, bus: str) -> list[tuple[str, Any, Any]]:
    if kind == "tuning" and name == "cells":
        return [(f"cell {c['collective']}/{c['algo']}/{c['proto']}", [c["latency_us"], c["bw_GBps"]],
                 None if d is None else _cell(d, c)) for c in expected]
    if kind == "tuning" and name == "picks":
        return [(f"pick {p['collective']} {p['bytes']}",
                 [_op_key(p["collective"]), int(p["bytes"]), _norm_algo(p["algo"]), _norm_proto(p["proto"])],
                 None if d is None else _pick(d, p)) for p in expected]
    if kind == "tuning" and name == "max_threads":
        mt = {} if d is None else _first(d).get("max_threads", {})
        return [(f"max_threads {a}", list(v),
                 [mt[a][p] for p in ("LL", "LL128", "Simple")] if a in mt else None) for a, v in expected.items()]
    if kind == "topo-xml" and name in ("nvlinks_first_gpu", "nvlink_targets_first_gpu"):
        if isinstance(expected, list):
            expected = sorted({str(x).lower() for x in expected})
        return [(name, expected, None if d is None else _first_gpu_links(d, name, bus))]
    fields = TUNING_FIELDS if kind == "tuning" else TOPO_FIELDS
    extra = ("cells", "picks", "max_threads") if kind == "tuning" else ("nvlinks_first_gpu", "nvlink_targets_first_gpu")
    choice(f"a field of {kind}", name, [*sorted(fields), *extra])
    if name in _SETS and isinstance(expected, list):
        # bus ids are hex, printed in either case; interface names (wlP9s9) are case-sensitive
        low = name == "gpu_bus_ids"
        expected = sorted({x.lower() if low and isinstance(x, str) else x for x in expected}, key=str)
    return [(name, expected, None if d is None else fields[name](d))]


def _first_gpu_links(d: dict, name: str, bus: str) -> Any:
    """The nvlink count or targets of the GPU at ``bus`` (the first the entry lists), else of the reader's first."""
    g = _gpu_by_bus(d, bus) or next(iter(d["xml"]["gpus"].values()), {})
    links = g.get("nvlinks") or []
    if name == "nvlinks_first_gpu":
        return sum(x["count"] or 0 for x in links)
    return sorted({(x["target"] or "").lower() for x in links})
