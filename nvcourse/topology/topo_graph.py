"""The graph :func:`~nvcourse.topology.topo_parser.parse_topo` rebuilds from an ``nvidia-smi topo -m`` matrix:
NVLink bundles as edges (or one inferred NVSwitch), a PCIe tree grouped by the path codes, and a layered
layout for drawing. Bandwidths in GB/s per direction, from catalog links when given."""

from __future__ import annotations

import re

import networkx as nx

from nvcourse import catalog

from .builders import natural_key

__all__ = ["build_graph", "PCIE_RANK"]

#: The PCIe path codes from nearest to farthest, ranked 1..5.
PCIE_RANK = {code: i + 1 for i, code in enumerate(("PIX", "PXB", "PHB", "NODE", "SYS"))}
_RANK = PCIE_RANK
_NV = re.compile(r"^NV([1-9]\d{0,2})$")


# --------------------------------------------------------------------------------------------- graph


class _UnionFind:
    def __init__(self, items):
        self.parent = {x: x for x in items}

    def find(self, x):
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra

    def groups(self, order):
        out: dict[str, list[str]] = {}
        for x in order:
            out.setdefault(self.find(x), []).append(x)
        return list(out.values())


def _groups(members: list[str], codes: dict, max_rank: int) -> list[list[str]]:
    uf = _UnionFind(members)
    for i, a in enumerate(members):
        for b in members[i + 1:]:
            r = _RANK.get(codes[(a, b)])
            if r is not None and r <= max_rank:
                uf.union(a, b)
    return uf.groups(members)


def _max_nvlinks_per_gpu() -> int:
    return max(g.nvlink_links for g in catalog.gpus().values())


def build_graph(res, nv_link, pcie_link) -> None:
    """Fill ``res.graph`` (a :class:`~nvcourse.topology.topo_parser.TopoResult`) from its codes: NVLink
    edges or one inferred NVSwitch, and a PCIe tree grouped by the path codes; sets ``nvswitch_inferred``
    and appends notes. ``nv_link``/``pcie_link`` are catalog links (bandwidths) or None."""
    G = nx.Graph(system="parsed", name="nvidia-smi topo -m", topology="parsed")
    res.graph = G
    for d in res.devices:
        if d in res.gpus:
            G.add_node(d, kind="gpu", label=d)
        else:
            name = res.nic_names.get(d, d)
            G.add_node(d, kind="nic", label=d if name == d else f"{d}\n{name}", device=name)
    _add_nvlink(G, res, nv_link)
    cpus = _add_pcie_tree(G, res, pcie_link)
    for i, a in enumerate(cpus):
        for b in cpus[i + 1:]:
            G.add_edge(a, b, link="smp", count=1, GBps_dir=None, unbounded=True)
    if len(cpus) > 1:
        res.notes.append("CPU/NUMA nodes are joined by the SMP interconnect, modelled as never the bottleneck")
    if note := one_numa_sys(res):
        res.notes.append(note)
    res.notes.append("PCIe tree rebuilt from the path codes: a plausible shape, not the board's wiring")
    _layout(G, res)


def _add_nvlink(G: nx.Graph, res, nv_link) -> None:
    """NVLink bundles as GPU-GPU edges, or one inferred NVSwitch when a GPU has more links than any GPU can."""
    nv = res.nvlink_pairs()
    per_gpu = {g: 0 for g in res.gpus}
    for (a, b), k in nv.items():
        per_gpu[a] += k
        per_gpu[b] += k
    limit = _max_nvlinks_per_gpu()
    res.nvswitch_inferred = any(total > limit for total in per_gpu.values())
    rate = nv_link.line_GBps_dir if nv_link is not None else None
    link_id = nv_link.id if nv_link is not None else None
    if res.nvswitch_inferred:
        G.add_node("NVSwitch", kind="nvswitch", label="NVSwitch\n(inferred)")
        for g in res.gpus:
            k = max((c for (a, b), c in nv.items() if g in (a, b)), default=0)
            if k:
                G.add_edge(g, "NVSwitch", link=link_id, kind="nvlink", count=k,
                           GBps_dir=None if rate is None else k * rate, unbounded=False)
        if not res.nvswitch_stated:  # NCCL's XML names its switch (tclass 0x068000): nothing to infer
            res.notes.append(
                f"NVLink counts add up to more than {limit} links per GPU (the most any catalog GPU has): "
                "a switch must be present; one NVSwitch node stands for all switch chips"
            )
    else:
        for (a, b), k in nv.items():
            G.add_edge(a, b, link=link_id, kind="nvlink", count=k, GBps_dir=None if rate is None else k * rate,
                       unbounded=False)
    if nv and nv_link is None:
        res.notes.append("NVLink generation not given: NVLink edges have no bandwidth (pass nvlink=...)")


def _affinity_keys(res) -> tuple[str, dict[str, list[str]]]:
    """('numa_affinity' or 'cpu_affinity', {value: GPUs}): the GPUs by the NUMA node they report, or by their CPU
    affinity where no NUMA node is printed."""
    has_numa = any(v.get("numa_affinity", "N/A") != "N/A" for v in res.affinity.values())
    key_name = "numa_affinity" if has_numa else "cpu_affinity"
    by_key: dict[str, list[str]] = {}
    for g, v in res.affinity.items():
        val = v.get(key_name)
        if val and val != "N/A":
            by_key.setdefault(val, []).append(g)
    return key_name, by_key


def one_numa_sys(res) -> str | None:
    """The note for a ``topo -m`` paste whose GPUs all report one NUMA node (or one CPU affinity) while some devices
    read SYS, which nvidia-smi prints across NUMA nodes: typical of a VM or virtualised PCIe, whose codes are not the
    physical tree. None otherwise, and for NCCL's XML (its SYS comes from different <cpu> elements or hosts)."""
    if res.source_format == "nccl-xml":
        return None
    key_name, by_key = _affinity_keys(res)
    if len(by_key) != 1 or len(next(iter(by_key.values()))) < 2:
        return None
    sys_pairs = sum(c == "SYS" for (a, b), c in res.codes.items() if a < b)
    if not sys_pairs:
        return None
    if key_name == "cpu_affinity":
        # no NUMA node printed, one CPU set for all (the device's locality unknown): sockets split cleanly by SYS
        # (every pair across groups SYS) are kept as sockets; a SYS pattern no split explains is not
        groups = _greedy_cpu_groups(res)
        where = {d: i for i, grp in enumerate(groups) for d in grp}
        if all(c == "SYS" for (a, b), c in res.codes.items() if where[a] != where[b]):
            return None
    (value, gpus), = by_key.items()
    said = f"NUMA node {value}" if key_name == "numa_affinity" else f"CPU affinity {value}"
    every = "all " if len(gpus) == len(res.gpus) else ""
    pairs = "device pair reads" if sys_pairs == 1 else "device pairs read"
    if key_name == "numa_affinity":
        why = ("SYS between devices that report one NUMA node suggests a VM or virtualised PCIe (passthrough), so "
               "the codes may not be the physical tree")
    else:
        why = ("SYS between devices that report one CPU set and no NUMA node suggests a VM or virtualised PCIe "
               "(passthrough), or NUMA hidden from the OS, so the codes may not be the physical tree")
    return (f"{every}{len(gpus)} GPUs report {said}, yet {sys_pairs} {pairs} SYS, which nvidia-smi prints across "
            f"NUMA nodes: {why}; drawn under one CPU, with no socket inferred")


def _cpu_groups(res) -> list[list[str]]:
    """Devices by CPU socket: joined when their code is NODE or nearer, or when they share a NUMA (or CPU)
    affinity and no pair between the two groups reads SYS. All under one CPU where every GPU reports the same one
    and SYS still appears (:func:`one_numa_sys`): no socket is made up from such codes."""
    return [list(res.devices)] if one_numa_sys(res) else _greedy_cpu_groups(res)


def _greedy_cpu_groups(res) -> list[list[str]]:
    """Devices joined when their code is NODE or nearer, or when they share a NUMA (or CPU) affinity and no pair
    between the two groups reads SYS."""
    devices = res.devices
    cpu_uf = _UnionFind(devices)
    for grp in _groups(devices, res.codes, _RANK["NODE"]):
        for x in grp[1:]:
            cpu_uf.union(grp[0], x)
    _key, by_key = _affinity_keys(res)
    for members in by_key.values():
        for x in members[1:]:
            ga = [d for d in devices if cpu_uf.find(d) == cpu_uf.find(members[0])]
            gb = [d for d in devices if cpu_uf.find(d) == cpu_uf.find(x)]
            if not any(res.codes.get((p, q)) == "SYS" for p in ga for q in gb if p != q):
                cpu_uf.union(members[0], x)
    return cpu_uf.groups(devices)


def _add_pcie_tree(G: nx.Graph, res, pcie_link) -> list[str]:
    """CPUs, root ports and PCIe switches rebuilt from the path codes (PHB, PXB, PIX groups); the CPUs' names."""

    def pcie_edge(a, b):
        if pcie_link is None:
            G.add_edge(a, b, link=None, kind="pcie", count=1, GBps_dir=None, unbounded=False)
        else:
            G.add_edge(a, b, link=pcie_link.id, kind="pcie", count=1, GBps_dir=pcie_link.line_GBps_dir, unbounded=False)

    hb_count = 0
    sw_count = 0
    cpus = []
    for ci, grp in enumerate(_cpu_groups(res)):
        cpu = f"CPU{ci}"
        numa = {res.affinity.get(g, {}).get("numa_affinity") for g in grp} - {None, "N/A"}
        label = f"CPU{ci}" + (f"\nNUMA {'/'.join(sorted(numa))}" if numa else "")
        G.add_node(cpu, kind="cpu", label=label, level=0)
        cpus.append(cpu)
        for hgrp in _groups(grp, res.codes, _RANK["PHB"]):
            hb = f"HB{hb_count}"
            hb_count += 1
            G.add_node(hb, kind="host_bridge", label=f"root {hb[2:]}", level=1)
            G.add_edge(cpu, hb, link="on-die", count=1, GBps_dir=None, unbounded=True)
            for sgrp in _groups(hgrp, res.codes, _RANK["PXB"]):
                if len(sgrp) == 1:
                    pcie_edge(hb, sgrp[0])
                    continue
                top = f"PSW{sw_count}"
                sw_count += 1
                G.add_node(top, kind="pcie_switch", label=f"sw {top[3:]}", level=2)
                pcie_edge(hb, top)
                leaves = _groups(sgrp, res.codes, _RANK["PIX"])
                for lgrp in leaves:
                    # Every PIX group gets its own leaf switch once there are several: two devices that
                    # see each other as PXB must not share one bridge, even when a group has one device.
                    if len(leaves) == 1:
                        for d in lgrp:
                            pcie_edge(top, d)
                        continue
                    leaf = f"PSW{sw_count}"
                    sw_count += 1
                    G.add_node(leaf, kind="pcie_switch", label=f"sw {leaf[3:]}", level=3)
                    pcie_edge(top, leaf)
                    for d in lgrp:
                        pcie_edge(leaf, d)
    return cpus


def _layout(G: nx.Graph, res) -> None:
    """Layered positions: CPUs on top, then root ports, PCIe switches, devices; an NVSwitch below the GPUs."""
    tree = nx.Graph((u, v) for u, v, d in G.edges(data=True) if d.get("kind") != "nvlink" and d.get("link") != "smp")
    tree.add_nodes_from(n for n in G.nodes if G.nodes[n]["kind"] != "nvswitch")
    order: list[str] = []
    cpus = sorted((n for n, k in G.nodes(data="kind") if k == "cpu"), key=natural_key)
    depth_y = {"cpu": 4.0, "host_bridge": 3.0, "pcie_switch": 2.0}
    for c in cpus:
        for node in nx.dfs_preorder_nodes(tree, c):
            if G.nodes[node]["kind"] in ("gpu", "nic"):
                order.append(node)
    for d in res.devices:
        if d not in order:
            order.append(d)
    x = {d: float(i) for i, d in enumerate(order)}
    for d in order:
        G.nodes[d]["pos"] = (x[d], 0.0)
    # parents: mean x of the devices below them
    for c in cpus:
        T = nx.dfs_tree(tree, c)
        for node in T:
            kind = G.nodes[node]["kind"]
            if kind in ("gpu", "nic"):
                continue
            below = [n for n in nx.descendants(T, node) if G.nodes[n]["kind"] in ("gpu", "nic")]
            xs = [x[n] for n in below] or [0.0]
            y = depth_y.get(kind, 2.0)
            if kind == "pcie_switch" and G.nodes[node].get("level", 2) == 3:
                y = 1.2
            G.nodes[node]["pos"] = (sum(xs) / len(xs), y)
    for node, kind in G.nodes(data="kind"):
        if kind == "nvswitch":
            gx = [x[g] for g in res.gpus]
            G.nodes[node]["pos"] = (sum(gx) / len(gx), -1.6)
        G.nodes[node].setdefault("pos", (0.0, 0.0))
