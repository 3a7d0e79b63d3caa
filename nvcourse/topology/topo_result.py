"""The result of reading a topology: ``nvidia-smi topo -m`` (:mod:`.topo_parser`) or NCCL's topology XML
(:mod:`.topo_xml`) give the same :class:`TopoResult`, so the two readers share it without importing each other."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import networkx as nx

_NV = re.compile(r"^NV([1-9]\d{0,2})$")


@dataclass
class TopoResult:
    """A parsed ``nvidia-smi topo -m`` matrix.

    Attributes:
        devices: row/column labels in matrix order; ``gpus`` and ``nics`` split them.
        codes: ``{(a, b): code}`` for every ordered pair of distinct devices (``'NV12'``, ``'PIX'`` ...); ``'?'``
            for a pair the input does not give and the other codes do not fix (two NICs of a paste whose NIC
            columns were cut: see :mod:`.topo_parser`).
        nic_names: NIC label -> device name from the NIC legend (``{'NIC0': 'mlx5_0'}``), when printed.
        affinity: per GPU, ``cpu_affinity`` / ``numa_affinity`` / ``gpu_numa_id`` strings when printed.
        graph: a networkx graph for :mod:`nvcourse.topology.metrics` and :mod:`~nvcourse.topology.draw`
            (node kinds gpu, nic, nvswitch, pcie_switch, host_bridge, cpu). Bandwidths are known only when
            ``nvlink=`` / ``pcie=`` link ids were given; otherwise those edges have ``GBps_dir=None``.
        nvswitch_inferred: True when the NVLink counts imply a switch (one node stands for all the chips).
        nvswitch_stated: True when the input names its NVSwitch (NCCL's XML, ``tclass 0x068000``), so nothing
            needs to be inferred about it.
        notes: what was inferred or assumed.
        p2p: ``{(a, b): status}`` per ordered GPU pair from an ``nvidia-smi topo -p2p`` matrix pasted after the
            ``topo -m`` one (``'OK'``, ``'NS'``, ``'CNS'`` ...); empty when there is none.
    """

    devices: list[str]
    gpus: list[str]
    nics: list[str]
    codes: dict[tuple[str, str], str]
    nic_names: dict[str, str] = field(default_factory=dict)
    affinity: dict[str, dict[str, str]] = field(default_factory=dict)
    graph: nx.Graph = field(default_factory=nx.Graph, repr=False)
    nvswitch_inferred: bool = False
    nvswitch_stated: bool = False
    has_legend: bool = False
    notes: list[str] = field(default_factory=list)
    #: "nvidia-smi topo -m" or "nccl-xml" (NCCL's topology XML, read by :mod:`.topo_xml`)
    source_format: str = "nvidia-smi topo -m"
    #: what only NCCL's XML says (bus ids, NVLink targets and counts, NIC speeds, the PCIe tree, the Broadcom switches
    #: NCCL merges, each GPU's local NICs as NCCL picks them); None otherwise
    xml: dict | None = None
    p2p: dict[tuple[str, str], str] = field(default_factory=dict)

    def links(self) -> list[dict[str, str]]:
        """One ``{'a', 'b', 'type'}`` per unordered device pair, in matrix order."""
        out = []
        for i, a in enumerate(self.devices):
            for b in self.devices[i + 1:]:
                out.append({"a": a, "b": b, "type": self.codes[(a, b)]})
        return out

    def nvlink_pairs(self) -> dict[tuple[str, str], int]:
        """``{(a, b): links}`` for GPU pairs joined by NVLink (a before b in matrix order)."""
        out = {}
        for i, a in enumerate(self.devices):
            for b in self.devices[i + 1:]:
                m = _NV.match(self.codes[(a, b)])
                if m:
                    out[(a, b)] = int(m.group(1))
        return out

    def to_json(self) -> dict:
        G = self.graph
        return {
            "gpus": list(self.gpus),
            "nics": list(self.nics),
            "nic_names": dict(self.nic_names),
            "links": self.links(),
            "affinity": {g: dict(v) for g, v in self.affinity.items()},
            "nvswitch_inferred": self.nvswitch_inferred,
            "notes": list(self.notes),
            "source_format": self.source_format,
            **({"nccl_xml": self.xml} if self.xml is not None else {}),
            # one entry per GPU pair, and the other way round too where the matrix is not symmetric
            **({"p2p": [{"a": a, "b": b, "status": s} for (a, b), s in self.p2p.items()
                        if self.devices.index(a) < self.devices.index(b) or self.p2p.get((b, a)) != s]}
               if self.p2p else {}),
            "graph": {
                "nodes": [{"id": n, "kind": d["kind"]} for n, d in G.nodes(data=True)],
                "edges": [
                    {"a": u, "b": v, "link": d.get("link"), "count": d.get("count", 1), "GBps_dir": d.get("GBps_dir"),
                     "unbounded": bool(d.get("unbounded"))}
                    for u, v, d in G.edges(data=True)
                ],
            },
        }
