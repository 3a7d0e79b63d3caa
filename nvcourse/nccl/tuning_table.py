"""NCCL's TUNING table (``NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING``) and the pick it implies per size.

Rank 0 of each communicator prints, per collective, a ``latency/bandwidth`` cell for every algorithm x
protocol (``src/graph/tuning.cc``, ``ncclTopoTuneModel``). Two layouts:

* NCCL 2.8 to 2.17, one block, the header names each cell::

      Latency/AlgBw |    Tree/    LL |    Tree/ LL128 |    Tree/Simple |    Ring/    LL | ...
       Max NThreads |            512 |            640 |            512 |            512 | ...
          AllReduce |    10.4/  18.0 |    17.3/ 120.0 |    36.0/ 160.0 |     8.4/  20.1 | ...

* NCCL 2.18 on, blocks of three algorithms, names on two rows (the Protocol row always lists nine cells)::

        Algorithm   |                 Tree                 |                 Ring                 | ...
        Protocol    |             LL |          LL128 |         Simple |             LL | ...
       Max NThreads |            512 |            640 |            512 |            512 | ...
          AllReduce |    10.4/  18.0 |    17.3/ 120.0 |    36.0/ 160.0 |     8.4/  20.1 | ...

Units as NCCL uses them: latency in microseconds, bandwidth in GB/s of *algorithm* bandwidth (bytes of the
call / time, 10^9 B/s), so NCCL's estimate of a call of S bytes is ``latency + S / (1000 x bandwidth)`` us
(``ncclTopoGetAlgoTime``); a bandwidth of 0 means the pair is disabled. NCCL corrects that estimate for tree
all-reduce by a size table (``[size_correction]`` in ``nvcourse/data/nccl_tuning.toml``), applied here too;
the ring plateau correction needs the communicator's channel count and is applied when the log gives it.
"""

from __future__ import annotations

import math
import re

from .. import _data

__all__ = ["TableReader", "agreement", "pick", "picks", "switch_points", "FUNCTIONS"]

#: NCCL's function names in the table -> the course's operation names
FUNCTIONS = {"Broadcast": "broadcast", "Reduce": "reduce", "AllGather": "allgather",
             "ReduceScatter": "reducescatter", "AllReduce": "allreduce"}
_CELL = re.compile(r"^\s*(-?[\d.]+)\s*/\s*(-?[\d.]+)\s*$")
_OLD_HEAD = re.compile(r"^\s*([A-Za-z]+)\s*/\s*([A-Za-z0-9]+)\s*$")


class TableReader:
    """Fed INFO messages in order; :meth:`tables` gives one dict per table printed.

    A table: ``{"layout": "2.8-2.17" | "2.18+", "algorithms": [...], "protocols": [...], "max_threads":
    {algo: {proto: n}}, "collectives": {"allreduce": {algo: {proto: {"latency_us", "algbw_GBps"}}}},
    "truncated": bool}``.
    """

    def __init__(self) -> None:
        self._tables: list[dict] = []
        # per printing process ("host:pid"): the columns, algorithms and table in progress, so that tables two
        # processes print at the same time do not mix
        self._state: dict[str, dict] = {}

    def _new(self, st: dict, layout: str) -> dict:
        t = {"layout": layout, "algorithms": [], "protocols": [], "max_threads": {}, "collectives": {},
             "truncated": False}
        self._tables.append(t)
        st["table"] = t
        return t

    def _current(self, st: dict, layout: str, algos: list[str]) -> dict:
        """The table these algorithms belong to: a new one when one of them is already in the current one."""
        t = st.get("table")
        if t is None or t["layout"] != layout or any(a in t["algorithms"] for a in algos):
            t = self._new(st, layout)
        t["algorithms"] += [a for a in algos if a not in t["algorithms"]]
        return t

    def feed(self, msg: str, source: str = "") -> None:
        """One INFO message; ``source`` names the process that printed it (``host:pid``), when known."""
        st = self._state.setdefault(source, {"cols": [], "algos": [], "table": None})
        cells = [c.strip() for c in msg.split("|")]
        head, rest = cells[0], cells[1:]
        if rest and rest[-1] == "":
            rest = rest[:-1]
        if head == "Latency/AlgBw":
            pairs = [m.groups() for c in rest if (m := _OLD_HEAD.match(c))]
            t = self._current(st, "2.8-2.17", list(dict.fromkeys(a for a, _ in pairs)))
            st["cols"] = [(a, p) for a, p in pairs]
            t["protocols"] = list(dict.fromkeys([*t["protocols"], *(p for _, p in pairs)]))
        elif head == "Algorithm":
            st["algos"] = [c for c in rest if c]
            self._current(st, "2.18+", st["algos"])
            st["cols"] = []
        elif head == "Protocol" and st["algos"] and st["table"]:
            protos = [c for c in rest if c]
            # one algorithm's protocols end where the first name comes round again (NCCL prints three algorithm
            # slots' worth even when the block has fewer algorithms; an author may trim the row)
            per = protos.index(protos[0], 1) if protos and protos[0] in protos[1:] else len(protos)
            st["cols"] = [(a, protos[i * per + k]) for i, a in enumerate(st["algos"]) for k in range(per)
                          if i * per + k < len(protos)]
            t = st["table"]
            t["protocols"] = list(dict.fromkeys([*t["protocols"], *(p for _, p in st["cols"])]))
        elif head == "Max NThreads" and st["cols"] and st["table"]:
            for (a, p), c in zip(st["cols"], rest, strict=False):
                if c.isdigit():
                    st["table"]["max_threads"].setdefault(a, {})[p] = int(c)
        elif head in FUNCTIONS and st["cols"] and st["table"]:
            self._row(st, FUNCTIONS[head], rest)

    def _row(self, st: dict, op: str, cells: list[str]) -> None:
        if not cells or not _CELL.match(cells[0]):  # not a latency/bandwidth row (e.g. NCCL's enable matrix)
            return
        t = st["table"]
        row = t["collectives"].setdefault(op, {})
        for (a, p), c in zip(st["cols"], cells, strict=False):
            m = _CELL.match(c)
            if not m:  # a cell cut by the paste ("0.0/")
                t["truncated"] = True
                break
            row.setdefault(a, {})[p] = {"latency_us": float(m.group(1)), "algbw_GBps": float(m.group(2))}
        if len(cells) < len(st["cols"]):
            t["truncated"] = True

    def tables(self) -> list[dict]:
        return [t for t in self._tables if t["collectives"]]


def _tree_factor(proto: str, nbytes: int) -> float:
    """NCCL's tree all-reduce bandwidth correction at ``nbytes`` (index log2i(nbytes >> 6), as tuning.cc)."""
    sc = _data.load("nccl_tuning")["size_correction"]
    shifted = nbytes >> 6
    if shifted <= 0:
        return 1.0
    idx = int(math.floor(math.log2(shifted)))
    table = sc["tree_allreduce"].get(proto)
    if table is None or idx >= int(sc["tree_max_log"]) or idx >= len(table):
        return 1.0
    return float(table[idx])


def estimate_us(cell: dict, op: str, algo: str, proto: str, nbytes: int, *, nodes: int | None = None,
                channels: int | None = None, ranks: int | None = None, ampere_or_later: bool = True) -> float | None:
    """NCCL's time estimate (us) for one cell at ``nbytes``; None when the pair is disabled (bandwidth 0)."""
    bw, lat = cell["algbw_GBps"], cell["latency_us"]
    if bw <= 0:
        return None
    if algo == "Tree" and op == "allreduce":
        bw *= _tree_factor(proto, nbytes)
    if (algo == "Ring" and proto == "Simple" and op == "allreduce" and nodes and nodes > 1 and channels and ranks
            and nbytes / (channels * ranks) >= _data.load("nccl_tuning")["size_correction"]["ring_plateau_min_bytes"]):
        plateau = _data.load("nccl_tuning")["size_correction"]["ring_plateau"]
        lat *= plateau["ampere_and_later" if ampere_or_later else "before_ampere"]
    return lat + nbytes / (1000.0 * bw)


def pick(table: dict, op: str, nbytes: int, **ctx) -> dict | None:
    """NCCL's pick for ``op`` at ``nbytes``: ``{"algo", "proto", "time_us"}`` with the smallest estimate."""
    best = None
    for algo, protos in table["collectives"].get(op, {}).items():
        for proto, cell in protos.items():
            t = estimate_us(cell, op, algo, proto, nbytes, **ctx)
            if t is not None and (best is None or t < best["time_us"]):
                best = {"algo": algo, "proto": proto, "time_us": t}
    return best


def picks(table: dict, op: str, sizes: list[int], **ctx) -> list[dict | None]:
    """:func:`pick` at each size."""
    return [pick(table, op, int(s), **ctx) for s in sizes]


def switch_points(sizes: list[int], chosen: list[dict | None]) -> list[dict]:
    """Where the pick changes between consecutive sizes: ``{"from_bytes", "to_bytes", "before", "after"}``."""
    out = []
    for i in range(1, len(sizes)):
        a, b = chosen[i - 1], chosen[i]
        ka = (a["algo"], a["proto"]) if a else None
        kb = (b["algo"], b["proto"]) if b else None
        if ka != kb:
            out.append({"from_bytes": int(sizes[i - 1]), "to_bytes": int(sizes[i]),
                        "before": "/".join(ka) if ka else None, "after": "/".join(kb) if kb else None})
    return out


def agreement(table: dict, printed: list[dict]) -> dict:
    """How often the table's cheapest pair is the pick NCCL printed for a call: ``{"matches", "calls",
    "differ"}`` (``differ``: the first few calls where they do not agree, with both picks). Calls of an operation
    the table has no row for are not counted."""
    calls = [p for p in printed if p["op"] in table["collectives"]]
    differ = []
    for p in calls:
        mine = pick(table, p["op"], p["bytes"])
        if mine is None or (mine["algo"].upper(), mine["proto"].upper()) != (p["algo"].upper(), p["proto"].upper()):
            differ.append({"op": p["op"], "bytes": p["bytes"], "nccl": f"{p['algo']}/{p['proto']}",
                           "table": f"{mine['algo']}/{mine['proto']}" if mine else None})
    return {"matches": len(calls) - len(differ), "calls": len(calls), "differ": differ[:5]}

