"""networkx graphs of the catalog's systems.

One entry point, :func:`build_system_graph`, returns an undirected simple :class:`networkx.Graph`.
Parallel links between the same two endpoints are *bundled* into one edge that carries their number,
so a graph edge is "a bundle of ``count`` identical links".

Node attributes
    ``kind``   one of ``gpu``, ``nvswitch``, ``pcie_switch``, ``cpu``, ``nic``, ``host_bridge``
    ``label``  short text for drawings
    ``pos``    ``(x, y)`` layout hint in arbitrary units (drawings use it as is)
    ``tray``   compute tray (GPUs) or switch tray (NVSwitch chips) of an NVL72; ``socket`` for PCIe parts

Edge attributes
    ``link``      catalog link id (``'nvlink4'``, ``'pcie4'`` ...) or ``'on-die'`` / ``'smp'`` for CPU internals
    ``count``     number of parallel links in the bundle
    ``GBps_dir``  bundle bandwidth in GB/s (10^9 B/s) **per direction** = count x link.line_GBps_dir;
                  ``None`` when the catalog has no figure for it
    ``unbounded`` True for connections the model treats as never limiting (inside a CPU package, and the
                  CPU-CPU interconnect unless a bandwidth is given): metrics give them infinite capacity
    ``assumption`` text, present on anything that is not in a source

Every bandwidth is read from :mod:`nvcourse.catalog`; this module holds no hardware figure of its own.
"""

from __future__ import annotations

from collections.abc import Callable

import networkx as nx

from nvcourse import catalog

__all__ = ["build_system_graph", "SYSTEM_BUILDERS", "NODE_KINDS", "gpu_nodes", "natural_key"]

NODE_KINDS = ("gpu", "nvswitch", "pcie_switch", "cpu", "nic", "host_bridge")

SMP_ASSUMPTION = (
    "CPU-CPU interconnect (UPI/xGMI): the catalog has only NCCL's model value for it (inter_socket_GBps_dir), "
    "not a measured rate, so these graphs treat it as never the bottleneck; pass smp_GBps_dir= to explore"
)


def natural_key(name: str) -> tuple:
    """Sort key so that GPU2 < GPU10."""
    head = name.rstrip("0123456789")
    tail = name[len(head):]
    return (head, int(tail) if tail else -1, name)


def gpu_nodes(G: nx.Graph) -> list[str]:
    """The GPU nodes of a graph in natural order (GPU0, GPU1, ... GPU10)."""
    return sorted((n for n, k in G.nodes(data="kind") if k == "gpu"), key=natural_key)


def _bundle(G: nx.Graph, a: str, b: str, link_id: str, count: int, **extra) -> None:
    link = catalog.get_link(link_id)
    G.add_edge(a, b, link=link_id, count=count, GBps_dir=count * link.line_GBps_dir, unbounded=False, **extra)


def _new_graph(system: catalog.System) -> nx.Graph:
    return nx.Graph(system=system.id, name=system.name, topology=system.topology, link=system.scale_up_link)


def _build_pcie_tree(system: catalog.System, smp_GBps_dir: float | None = None) -> nx.Graph:
    """Two sockets; per socket: root port -> PCIe switch -> 2 PCIe switches -> 2 GPUs each; one NIC per socket.

    The fan-out is the catalog's representative design (notes of ``pcie-8gpu``: the PIX/PXB/SYS pattern of a
    real server). Every PCIe hop is an x16 slot of the system's link generation. The NIC placement (one on
    each socket's top switch) is an assumption of this model.
    """
    G = _new_graph(system)
    pcie = system.scale_up_link
    n_gpu = system.gpus_per_host
    sockets = 2
    per_socket = n_gpu // sockets
    nics = system.nics_per_host
    gpu_index = 0
    for s in range(sockets):
        x0 = s * 4.0
        cx = x0 + 1.5
        G.add_node(f"CPU{s}", kind="cpu", label=f"CPU{s}", pos=(cx, 4.0), socket=s)
        G.add_node(f"HB{s}", kind="host_bridge", label=f"root port {s}", pos=(cx, 3.0), socket=s)
        G.add_edge(f"CPU{s}", f"HB{s}", link="on-die", count=1, GBps_dir=None, unbounded=True,
                   assumption="root port inside the CPU package: not modelled as a bottleneck")
        top = f"SW{s}"
        G.add_node(top, kind="pcie_switch", label=f"PCIe sw {s}", pos=(cx, 2.0), socket=s, level=0)
        _bundle(G, f"HB{s}", top, pcie, 1)
        for k in range(2):
            leaf = f"SW{s}.{k}"
            lx = x0 + 0.5 + 2.0 * k
            G.add_node(leaf, kind="pcie_switch", label=f"sw {s}.{k}", pos=(lx, 1.0), socket=s, level=1)
            _bundle(G, top, leaf, pcie, 1)
            for j in range(per_socket // 2):
                g = f"GPU{gpu_index}"
                G.add_node(g, kind="gpu", label=g, pos=(lx - 0.5 + j, 0.0), socket=s)
                _bundle(G, leaf, g, pcie, 1)
                gpu_index += 1
        if s < nics:
            nic = f"NIC{s}"
            G.add_node(nic, kind="nic", label=f"NIC{s}\n{system.nic_link}", pos=(cx, 1.0), socket=s,
                       assumption="NIC placement on the socket's top PCIe switch is an assumption")
            _bundle(G, top, nic, pcie, 1, assumption="NIC slot width assumed x16 of the system's PCIe generation")
    if smp_GBps_dir is None:
        G.add_edge("CPU0", "CPU1", link="smp", count=1, GBps_dir=None, unbounded=True, assumption=SMP_ASSUMPTION)
    else:
        if not smp_GBps_dir > 0:
            raise ValueError(f"smp_GBps_dir must be > 0, got {smp_GBps_dir!r}")
        G.add_edge("CPU0", "CPU1", link="smp", count=1, GBps_dir=float(smp_GBps_dir), unbounded=False,
                   assumption="CPU-CPU bandwidth given by the caller, not from the catalog")
    return G


# Cube layout for the DGX-1: quad {0,1,2,3} is the front face, {4,5,6,7} the back face drawn up and right.
_CUBE_POS = {0: (0.0, 0.0), 1: (3.0, 0.0), 2: (0.0, 3.0), 3: (3.0, 3.0)}
_CUBE_BACK_OFFSET = (1.5, 2.2)  # keeps every node about 0.5 away from the face diagonals it does not touch


def _build_cube_mesh(system: catalog.System) -> nx.Graph:
    G = _new_graph(system)
    for i in range(system.gpus_per_host):
        x, y = _CUBE_POS[i % 4]
        if i >= 4:
            x, y = x + _CUBE_BACK_OFFSET[0], y + _CUBE_BACK_OFFSET[1]
        G.add_node(f"GPU{i}", kind="gpu", label=f"GPU{i}", pos=(x, y))
    for (a, b), count in system.nvlink_map.items():
        _bundle(G, f"GPU{a}", f"GPU{b}", system.scale_up_link, count)
    return G


def _build_nvswitch(system: catalog.System) -> nx.Graph:
    """GPUs in a bottom row, NVSwitch chips in a top row; GPU g has switch_links_per_gpu[s] links to chip s."""
    if len(system.switch_links_per_gpu) != system.nvswitch_count:
        raise ValueError(f"{system.id}: switch_links_per_gpu has {len(system.switch_links_per_gpu)} entries "
                         f"for {system.nvswitch_count} switches")
    if sum(system.switch_links_per_gpu) != system.links_per_gpu:
        raise ValueError(f"{system.id}: switch_links_per_gpu sums to {sum(system.switch_links_per_gpu)}, "
                         f"not links_per_gpu={system.links_per_gpu}")
    G = _new_graph(system)
    n = system.gpus_per_domain
    m = system.nvswitch_count
    for i in range(n):
        G.add_node(f"GPU{i}", kind="gpu", label=f"GPU{i}", pos=(float(i), 0.0))
    for s in range(m):
        x = (n - 1) / 2 + (s - (m - 1) / 2) * (n / max(m, 1)) * 0.8
        G.add_node(f"NVS{s}", kind="nvswitch", label=f"NVSwitch{s}", pos=(x, 2.0))
        for i in range(n):
            _bundle(G, f"GPU{i}", f"NVS{s}", system.scale_up_link, system.switch_links_per_gpu[s])
    return G


def _build_nvl72(system: catalog.System) -> nx.Graph:
    """72 GPUs in compute trays of ``gpus_per_host``; NVSwitch chips in ``switch_trays`` trays; GPU-to-chip links."""
    n, m = system.gpus_per_domain, system.nvswitch_count
    trays = system.switch_trays or m
    if m % trays:
        raise ValueError(f"{system.id}: {m} switch chips do not split evenly into {trays} trays")
    chips_per_tray = m // trays
    G = _new_graph(system)
    per_tray = system.gpus_per_host
    for i in range(n):
        t = i // per_tray
        G.add_node(f"GPU{i}", kind="gpu", label=f"GPU{i}", tray=t, pos=(t * (per_tray + 1) + i % per_tray, 0.0))
    width = (n // per_tray) * (per_tray + 1) - 1
    tray_w = width / trays
    for s in range(m):
        t = s // chips_per_tray
        x = t * tray_w + (s % chips_per_tray + 0.5) * tray_w / (chips_per_tray + 0.5)
        G.add_node(f"NVS{s}", kind="nvswitch", label=f"NVS{s}", tray=t, pos=(x, 12.0))
        for i in range(n):
            _bundle(G, f"GPU{i}", f"NVS{s}", system.scale_up_link, system.switch_links_per_gpu[s])
    G.graph["gpus_per_tray"] = per_tray
    G.graph["switch_trays"] = trays
    return G


SYSTEM_BUILDERS: dict[str, Callable[..., nx.Graph]] = {
    "pcie-tree": _build_pcie_tree,
    "hybrid-cube-mesh": _build_cube_mesh,
    "nvswitch": _build_nvswitch,
    "nvl72": _build_nvl72,
}


def build_system_graph(system_id: str, *, smp_GBps_dir: float | None = None) -> nx.Graph:
    """Return the interconnect graph of a catalog system (an undirected :class:`networkx.Graph`).

    Args:
        system_id: a catalog system id, e.g. ``'dgx-h100'``; ValueError lists the allowed ids.
        smp_GBps_dir: PCIe systems only: bandwidth of the CPU-CPU interconnect in GB/s per direction. The
            catalog has no sourced figure, so by default that edge is marked ``unbounded`` (never the
            bottleneck) and carries an ``assumption`` text.

    NVLink systems are modelled as their NVLink fabric only (GPUs and NVSwitch chips); their PCIe tree, CPUs
    and NICs are not drawn. The PCIe system has CPUs, root ports, PCIe switches, GPUs and NICs.

    >>> G = build_system_graph("dgx-h100")
    >>> G.edges["GPU0", "NVS0"]["count"], G.edges["GPU0", "NVS0"]["GBps_dir"]
    (5, 125.0)
    """
    system = catalog.get_system(system_id)
    builder = SYSTEM_BUILDERS.get(system.topology)
    if builder is None:  # pragma: no cover - catalog and builders are kept in step by the tests
        raise ValueError(f"{system_id}: no graph builder for topology {system.topology!r}")
    if system.topology == "pcie-tree":
        return builder(system, smp_GBps_dir=smp_GBps_dir)
    if smp_GBps_dir is not None:
        raise ValueError("smp_GBps_dir applies only to PCIe systems (pcie-8gpu)")
    return builder(system)
