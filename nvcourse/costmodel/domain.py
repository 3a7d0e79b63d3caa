"""Bandwidth of communication patterns inside one node (one NVLink domain, or one PCIe host).

A *pattern* is a set of simultaneous flows ``(src GPU, dst GPU) -> bytes``. Every flow follows a fixed
path of *resources* (a GPU's NVLink ports, one NVLink bundle, a PCIe x16 link, the CPU-to-CPU link),
each with a capacity in bytes/s per direction. The time of the pattern is the load of the busiest
resource divided by its capacity: ``t = max_r load_r / cap_r`` (flows share a resource fairly and
nothing else slows them). Three kinds of node:

* ``switch`` (NVSwitch, NVL72): each GPU has one egress and one ingress port of ``links_per_gpu`` x
  per-link β; the switch is non-blocking, so only the GPU ports can be busy.
* ``mesh`` (DGX-1 hybrid cube-mesh): each GPU pair with NVLink has a bundle of 1 or 2 links (one
  resource per direction); pairs without NVLink go over PCIe and the CPUs.
* ``pcie`` (pcie-8gpu): GPU x16 links, the x16 uplinks of the leaf switches, the root-switch uplinks
  and the CPU-to-CPU link.

The ``g`` GPUs of a prediction are the first ``g`` of the node (GPU 0..g-1).

Rings: NCCL builds several rings (channels) whose links do not collide. For a switch one ring already
fills every GPU port; in the PCIe tree one ring in GPU order already fills the x16 links (or the
CPU-to-CPU link, which every ring over both sockets must cross). For the DGX-1 mesh we enumerate the
directed Hamiltonian cycles (NVLink-only ones when there are any, as NCCL does) and pack them greedily,
each at the rate its busiest resource still allows;
:attr:`Domain.ring_Bps` is the sum, i.e. the bus bandwidth a ring algorithm can reach.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from .. import catalog

__all__ = ["Domain", "domain", "max_gpus_per_node"]

Flow = tuple[int, int]


def max_gpus_per_node(system: catalog.System) -> int:
    """GPUs in one *node* of the cost model: the NVLink domain, or the host when the domain is smaller."""
    return max(system.gpus_per_host, system.gpus_per_domain)


def _kind(system: catalog.System) -> str:
    if system.topology in ("nvswitch", "nvl72"):
        return "switch"
    if system.topology == "hybrid-cube-mesh":
        return "mesh"
    if system.topology == "pcie-tree":
        return "pcie"
    raise ValueError(f"system {system.id!r}: topology {system.topology!r} has no cost model")


class _Fabric:
    """Resources and paths of one node kind."""

    def __init__(self, system: catalog.System, g: int) -> None:
        self.system = system
        self.g = g
        self.kind = _kind(system)
        link = system.link
        self.cap: dict[tuple, float] = {}
        if self.kind == "switch":
            port = system.links_per_gpu * link.beta_Bps
            for i in range(g):
                self.cap[("out", i)] = port
                self.cap[("in", i)] = port
        elif self.kind == "mesh":
            nvl = system.nvlink_map
            per_gpu = [0] * system.gpus_per_host
            for (a, b), m in nvl.items():
                per_gpu[a] += m
                per_gpu[b] += m
            if any(p != system.links_per_gpu for p in per_gpu):
                raise ValueError("the catalog's nvlink_pairs disagree with its links_per_gpu")
            for (a, b), m in nvl.items():
                if a < g and b < g:
                    self.cap[("nvl", a, b)] = self.cap[("nvl", b, a)] = m * link.beta_Bps
            pcie = catalog.get_link(system.gpu_spec.pcie).beta_Bps
            for i in range(g):
                self.cap[("up", i)] = self.cap[("down", i)] = pcie
            qpi = system.inter_socket_GBps_dir * 1e9
            self.cap[("sys", 0, 1)] = self.cap[("sys", 1, 0)] = qpi
        else:  # pcie tree
            pcie = link.beta_Bps
            for i in range(g):
                self.cap[("up", i)] = self.cap[("down", i)] = pcie
            for leaf in set(system.gpu_pcie_leaf):
                self.cap[("leafup", leaf)] = self.cap[("leafdown", leaf)] = pcie
            for s in set(system.gpu_socket):
                self.cap[("rootup", s)] = self.cap[("rootdown", s)] = pcie
            qpi = system.inter_socket_GBps_dir * 1e9
            self.cap[("sys", 0, 1)] = self.cap[("sys", 1, 0)] = qpi

    def path(self, i: int, j: int) -> tuple[tuple, ...]:
        if self.kind == "switch":
            return (("out", i), ("in", j))
        if self.kind == "mesh":
            if ("nvl", i, j) in self.cap:
                return (("nvl", i, j),)
            si, sj = self.system.gpu_socket[i], self.system.gpu_socket[j]
            hops: list[tuple] = [("up", i)]
            if si != sj:
                hops.append(("sys", si, sj))
            hops.append(("down", j))
            return tuple(hops)
        li, lj = self.system.gpu_pcie_leaf[i], self.system.gpu_pcie_leaf[j]
        si, sj = self.system.gpu_socket[i], self.system.gpu_socket[j]
        hops = [("up", i)]
        if li != lj:
            hops.append(("leafup", li))
            if si != sj:
                hops += [("rootup", si), ("sys", si, sj), ("rootdown", sj)]
            hops.append(("leafdown", lj))
        hops.append(("down", j))
        return tuple(hops)

    def pattern_time(self, flows: dict[Flow, float]) -> float:
        """Seconds for all ``flows`` (bytes) to finish when they run at the same time."""
        load: dict[tuple, float] = {}
        for (i, j), nbytes in flows.items():
            if i == j or nbytes == 0:
                continue
            for r in self.path(i, j):
                load[r] = load.get(r, 0.0) + nbytes
        return max((v / self.cap[r] for r, v in load.items()), default=0.0)

    def ring_rate(self) -> float:
        """Bytes/s one ring link can carry when NCCL runs as many rings as fit (see module doc)."""
        g = self.g
        if g < 2:
            return math.inf
        if self.kind in ("switch", "pcie"):  # one ring already fills the GPU ports / the shared links
            order = list(range(g))
            return 1.0 / self.pattern_time({(order[k], order[(k + 1) % g]): 1.0 for k in range(g)})
        cycles = [(0, *p) for p in itertools.permutations(range(1, g))]
        if self.kind == "mesh":  # NCCL builds NVLink-only rings when they exist
            nvl = [c for c in cycles if all(len(self.path(c[k], c[(k + 1) % g])) == 1 for k in range(g))]
            cycles = nvl or cycles
        names = list(self.cap)
        index = {r: k for k, r in enumerate(names)}
        uses = np.zeros((len(cycles), len(names)))
        for row, c in enumerate(cycles):
            for k in range(g):
                for r in self.path(c[k], c[(k + 1) % g]):
                    uses[row, index[r]] += 1
        residual = np.array([self.cap[r] for r in names])
        total = 0.0
        with np.errstate(divide="ignore", invalid="ignore"):
            for _ in range(64):  # each round saturates at least one resource: bounded by their number
                rates = np.where(uses > 0, residual[None, :] / uses, np.inf).min(axis=1)
                best = int(np.argmax(rates))
                if rates[best] <= 1e-6 * max(total, 1.0):
                    break
                total += rates[best]
                residual = np.maximum(residual - rates[best] * uses[best], 0.0)
        return total


@dataclass(frozen=True)
class Domain:
    """Seconds-per-byte of the patterns the algorithms use inside one node of ``gpus`` GPUs.

    All ``*_inv`` fields are seconds per byte of the collective's size ``S`` for one pattern
    (0 when there is nothing to send, e.g. one GPU).
    """

    system_id: str
    gpus: int
    kind: str
    alpha_s: float
    #: achievable scale-up bandwidth of one GPU, bytes/s per direction (links x per-link β)
    gpu_Bps: float
    #: bus bandwidth a ring can reach (sum over the rings NCCL can build), bytes/s
    ring_Bps: float
    #: all-to-all with 1 byte from every GPU to every other one: seconds
    a2a_pair_inv: float
    #: every GPU sends 1 byte to the next one (i -> i+1): seconds
    shift_inv: float
    #: GPU 0 sends 1 byte to every other GPU (direct broadcast; reduce is the mirror): seconds
    root_inv: float
    #: pairwise exchange at XOR distance 1, 2, 4, ... (recursive halving/doubling), 1 byte each: seconds
    rhd_inv: tuple[float, ...]

    @property
    def ring_inv(self) -> float:
        return 0.0 if math.isinf(self.ring_Bps) else 1.0 / self.ring_Bps


@cache
def domain(system_id: str, gpus: int) -> Domain:
    """The :class:`Domain` of ``gpus`` GPUs (GPU 0..gpus-1) of catalog system ``system_id`` (cached)."""
    system = catalog.get_system(system_id)
    fab = _Fabric(system, gpus)
    g = gpus
    others = [(i, j) for i in range(g) for j in range(g) if i != j]
    rhd = []
    d = 1
    while d < g:
        rhd.append(fab.pattern_time({(i, i ^ d): 1.0 for i in range(g) if (i ^ d) < g}))
        d *= 2
    return Domain(
        system_id=system_id,
        gpus=g,
        kind=fab.kind,
        alpha_s=system.link.alpha_s,
        gpu_Bps=system.links_per_gpu * system.link.beta_Bps,
        ring_Bps=fab.ring_rate(),
        a2a_pair_inv=fab.pattern_time(dict.fromkeys(others, 1.0)),
        shift_inv=fab.pattern_time({(i, (i + 1) % g): 1.0 for i in range(g)}) if g > 1 else 0.0,
        root_inv=fab.pattern_time({(0, j): 1.0 for j in range(1, g)}),
        rhd_inv=tuple(rhd),
    )
