"""Sourced scale-out data: switch radices, DGX SuperPOD tables, in-network-reduction latency.

Read from ``data/fabrics.toml`` (same conventions as the catalog: every figure carries a source there).

>>> from nvcourse.fabric import data
>>> data.get_switch("quantum-2").ports
64
>>> [r.spine for r in data.superpod_rows("h100")]
[4, 8, 16, 16]
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from .. import _data, catalog

__all__ = [
    "Switch",
    "SuperPodRow",
    "raw",
    "switches",
    "get_switch",
    "superpod_rows",
    "superpods",
    "collnet_alpha_s",
    "describe_source",
]


@dataclass(frozen=True)
class Switch:
    """A scale-out switch: ``ports`` is its radix at the rate of ``port_link`` (a catalog link id)."""

    id: str
    name: str
    ports: int
    port_link: str
    in_network_reduction: bool
    notes: str = ""

    @property
    def link(self) -> catalog.Link:
        return catalog.get_link(self.port_link)


@dataclass(frozen=True)
class SuperPodRow:
    """One row of a DGX SuperPOD reference-architecture table (compute fabric)."""

    pod: str
    su: int
    nodes: int
    gpus: int
    leaf: int
    spine: int
    core: int


def raw() -> dict[str, Any]:
    """The parsed ``data/fabrics.toml``."""
    return _data.load("fabrics")


@cache
def switches() -> dict[str, Switch]:
    out = {}
    for key, rec in raw()["switches"].items():
        fields = {k: v for k, v in rec.items() if k != "src"}
        out[key] = Switch(id=key, **fields)
    return out


def get_switch(switch_id: str) -> Switch:
    table = switches()
    if switch_id not in table:
        raise ValueError(f"unknown switch {switch_id!r}; allowed: {', '.join(table)}")
    return table[switch_id]


def superpods() -> dict[str, dict[str, Any]]:
    return raw()["superpods"]


def superpod_rows(pod: str) -> list[SuperPodRow]:
    """The published rows of a SuperPOD table (``'h100'`` or ``'b200'``)."""
    pods = superpods()
    if pod not in pods:
        raise ValueError(f"unknown SuperPOD table {pod!r}; allowed: {', '.join(pods)}")
    return [SuperPodRow(pod=pod, **row) for row in pods[pod]["rows"]]


def collnet_alpha_s() -> float:
    """Latency NCCL's cost model charges for an in-network (SHARP/CollNet) reduction, seconds."""
    return raw()["in_network"]["collnet_alpha_us"] * 1e-6


def describe_source(ref: str) -> str:
    """Text for a ``src`` entry of fabrics.toml (its own sources first, then the catalog's)."""
    own = raw()["sources"]
    if ref in own:
        return f"{own[ref]['title']} <{own[ref]['url']}>"
    return catalog.describe_source(ref)
