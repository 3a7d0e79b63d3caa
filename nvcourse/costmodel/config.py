"""A validated configuration of the cost model: which system, how many GPUs per node, how many nodes, which NICs.

:class:`Config` is what every formula of :mod:`nvcourse.costmodel` takes; :func:`configure` builds it and says,
in one line, which parameter is wrong. It depends only on the catalog and the node's bandwidth model
(:mod:`.domain`), so every other module of the package can import it without an import circle.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import catalog
from ..i18n import translate as _
from . import cloud, tuning
from .domain import Domain, domain, max_gpus_per_node

__all__ = ["Config", "configure", "tree_network_s_per_byte"]


@dataclass(frozen=True)
class Config:
    """A validated (system, gpus per node, nodes, NIC link) with the quantities the formulas use."""

    system: catalog.System
    gpus: int
    nodes: int
    nic: catalog.Link
    dom: Domain
    #: per-GPU network rate that replaces the catalog's (see :func:`configure`); None = the catalog's
    net_Bps_per_gpu: float | None = None
    #: the NCCL release (``X.Y``) whose tuning tables the formulas use (``data/nccl_versions.toml``)
    nccl_version: str = tuning.DEFAULT_VERSION
    #: NICs per host where the fabric fixes it (a cloud instance, :mod:`.cloud`); None = the system's
    nics_per_host: int | None = None
    #: latency the NIC's net plugin reports to NCCL, µs (0 for NCCL's own IB/RoCE transport; :mod:`.cloud`)
    plugin_latency_us: float = 0.0
    #: time of one LL network step, µs, where the fabric's plugin vendor gives one (:mod:`.cloud`); None = NCCL's
    net_ll_step_us: float | None = None
    #: NCCL reaches a peer's own buffer, so a send/recv inside a node is one copy, with no FIFO stage (registered
    #: buffers or a CUDA graph from NCCL 2.23; one process driving the GPUs in P2P write mode before; ``[p2p_nvlink]``)
    p2p_one_copy: bool = False
    #: NCCL may run NVLS, NVLSTree and the multicast symmetric kernels (False: NCCL_NVLS_ENABLE=0, which clusters set
    #: where the switch's multicast memory is not wanted or IMEX is not set up)
    nvls_enabled: bool = True

    @property
    def ranks(self) -> int:
        return self.gpus * self.nodes

    @property
    def nic_Bps_per_gpu(self) -> float:
        """A GPU's share of its host's NICs, bytes/s per direction (NICs x β / GPUs per host), or the
        ``net_Bps_per_gpu`` given to :func:`configure`."""
        if self.net_Bps_per_gpu is not None:
            return self.net_Bps_per_gpu
        nics = self.nics_per_host if self.nics_per_host is not None else self.system.nics_per_host
        return nics * self.nic.beta_Bps / self.system.gpus_per_host

    @property
    def node_nic_Bps(self) -> float:
        """NIC bandwidth that ``gpus`` GPUs of one node share, bytes/s per direction."""
        return self.gpus * self.nic_Bps_per_gpu

    @property
    def fabric(self) -> str:
        return self.nic.id


def _check_int(name: str, value: Any, minimum: int, maximum: int | None, hint: str = "") -> int:
    bad = isinstance(value, bool) or not isinstance(value, (int, np.integer))
    if bad or value < minimum or (maximum is not None and value > maximum):
        if maximum is not None:
            raise ValueError(_("{name} must be an integer from {minimum} to {maximum}{hint}; got {value}").format(
                name=name, minimum=minimum, maximum=maximum, hint=hint, value=repr(value)))
        raise ValueError(_("{name} must be an integer >= {minimum}{hint}; got {value}").format(
            name=name, minimum=minimum, hint=hint, value=repr(value)))
    return int(value)


_NIC_KINDS = ("infiniband", "ethernet")


def configure(
    system: str, gpus: int, nodes: int = 1, fabric: str | None = None, *, net_Bps_per_gpu: float | None = None,
    nccl_version: str | None = None,
) -> Config:
    """Validate the configuration; ValueError names the parameter and what is allowed.

    ``net_Bps_per_gpu`` (bytes/s per direction) replaces the bandwidth each GPU gets between nodes, which
    is otherwise its share of the catalog NICs at their achievable rate. It is for callers that know
    better what the network delivers, e.g. :mod:`nvcourse.fabric`, whose flow simulation gives the rate
    a step gets on a given fat-tree with contention; every formula of :func:`cost` stays the same.
    ``nccl_version`` (``X.Y`` or ``X.Y.Z``, None = :data:`~nvcourse.costmodel.tuning.DEFAULT_VERSION`) picks
    the release whose tuning tables NCCL's formulas use. ``fabric`` is a catalog NIC link or a cloud fabric
    (:mod:`.cloud`, e.g. ``efa-p5``), which also fixes the NICs per host and the plugin's latency.

    >>> c = configure("dgx-h100", 8, nodes=4, net_Bps_per_gpu=20e9)
    >>> c.nic_Bps_per_gpu, round(configure("dgx-h100", 8, nodes=4).nic_Bps_per_gpu / 1e9)
    (20000000000.0, 47)
    """
    systems = catalog.systems()
    if not isinstance(system, str) or system not in systems:
        raise ValueError(_("system must be one of {allowed}; got {value}").format(allowed=", ".join(systems),
                                                                                 value=repr(system)))
    sysobj = systems[system]
    top = max_gpus_per_node(sysobj)
    gpus = _check_int("gpus", gpus, 1, top, _(" for {system} (GPUs per node: one NVLink domain or host)").format(
        system=system))
    nodes = _check_int("nodes", nodes, 1, None)
    if gpus * nodes < 2:
        raise ValueError(_("a collective needs at least 2 ranks: gpus x nodes = {gpus} x {nodes}; raise gpus or "
                           "nodes").format(gpus=gpus, nodes=nodes))
    nic, nics_per_host, plugin_us = _nic(fabric, sysobj)
    ll_step = cloud.fabric(fabric).ll_step_us if isinstance(fabric, str) and fabric in cloud.fabrics() else None
    if net_Bps_per_gpu is not None and (
        isinstance(net_Bps_per_gpu, bool) or not isinstance(net_Bps_per_gpu, (int, float, np.integer, np.floating))
        or not (math.isfinite(net_Bps_per_gpu) and net_Bps_per_gpu > 0)
    ):
        raise ValueError(
            f"net_Bps_per_gpu must be a number > 0 (bytes/s per direction) or None; got {net_Bps_per_gpu!r}"
        )
    net = None if net_Bps_per_gpu is None else float(net_Bps_per_gpu)
    return Config(
        sysobj, gpus, nodes, nic, domain(system, gpus), net, tuning.resolve_version(nccl_version), nics_per_host,
        plugin_us, ll_step,
    )


def _nic(fabric: str | None, sysobj: catalog.System) -> tuple[catalog.Link, int | None, float]:
    """(NIC link, NICs per host or None for the system's, plugin latency µs) of ``fabric``."""
    if fabric is None:
        return sysobj.nic, None, 0.0
    nics = [k for k, v in catalog.links().items() if v.kind in _NIC_KINDS]
    if isinstance(fabric, str) and fabric in cloud.fabrics():
        f = cloud.fabric(fabric)
        return f.link, f.nics_per_host, f.plugin_latency_us
    if fabric not in nics:
        allowed = ", ".join([*nics, *cloud.fabrics()])
        raise ValueError(_("fabric must be one of {allowed} (or omitted for the system's own NICs); got "
                           "{value}").format(allowed=allowed, value=repr(fabric)))
    return catalog.get_link(fabric), None, 0.0


def tree_network_s_per_byte(c: Config) -> float:
    """Seconds per byte of all-reduce data that NCCL's trees between the nodes of ``c`` cost (tree, NVLSTree):
    each node sends S over its NICs for 2 nodes, 2·S beyond (an inner node of one tree, a leaf of the other)."""
    if c.nodes < 2:
        return 0.0
    return (1.0 if c.nodes == 2 else 2.0) / c.node_nic_Bps
