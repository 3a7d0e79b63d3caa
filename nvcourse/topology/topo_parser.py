"""Read the text printed by ``nvidia-smi topo -m``.

Accepted input: the GPU/NIC matrix with the codes ``X``, ``NV#``, ``PIX``, ``PXB``, ``PHB``, ``NODE``, ``SYS``
(and the old name ``SOC`` for ``SYS``); NIC columns named ``mlx5_*``, ``NIC#`` (with or without the
``NIC Legend``) or anything else that is not a GPU; the trailing ``CPU Affinity``, ``NUMA Affinity`` and
``GPU NUMA ID`` columns; space- or tab-separated; with or without the legend; with a shell prompt or other
text above the header. The header is the first line whose first word is ``GPU<n>``.

Anything malformed (a ragged row, an unknown code, a row missing or extra, ``X`` off the diagonal, an
asymmetric matrix) raises :class:`ValueError` naming the line; nothing else is raised.

What the codes say about bandwidth (nvidia-smi's legend, paraphrased):

=======  ==================================================================================================
``NV#``  a bonded set of # NVLinks (# x the per-link rate of the GPU's NVLink generation)
``PIX``  at most one PCIe bridge (same PCIe switch)
``PXB``  several PCIe bridges, not through the CPU's host bridge
``PHB``  through a PCIe host bridge (the CPU)
``NODE`` through the interconnect between host bridges inside one NUMA node
``SYS``  through the SMP interconnect between NUMA nodes (QPI/UPI/xGMI): usually the slowest path
=======  ==================================================================================================

The matrix gives *paths*, not wires. :func:`parse_topo` rebuilds a plausible graph from it (see
:class:`TopoResult`): NVLink bundles as edges; one NVSwitch node when the NVLink counts are impossible without
a switch (a GPU's ``NV#`` entries adding up to more links than any catalog GPU has); and a PCIe tree grouped by
the codes (``PIX`` pairs share a leaf switch, ``PXB`` a top switch, ``PHB`` a root port, ``NODE`` a NUMA
node; ``SYS`` separates NUMA nodes).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx

from nvcourse import catalog

from .builders import natural_key

__all__ = ["TopoResult", "parse_topo", "read_topo", "PCIE_CODES", "CODE_MEANING", "example_files"]

PCIE_CODES = ("PIX", "PXB", "PHB", "NODE", "SYS")
_RANK = {code: i + 1 for i, code in enumerate(PCIE_CODES)}
_ALIASES = {"SOC": "SYS"}  # drivers before ~2017 printed SOC
CODE_MEANING = {
    "X": "self",
    "NV#": "a bonded set of # NVLinks",
    "PIX": "at most one PCIe bridge (same PCIe switch)",
    "PXB": "several PCIe bridges, without the CPU's host bridge",
    "PHB": "through a PCIe host bridge (the CPU)",
    "NODE": "through the interconnect between PCIe host bridges within one NUMA node",
    "SYS": "through the SMP interconnect between NUMA nodes (QPI/UPI/xGMI)",
}
_EXTRA_COLUMNS = (("CPU", "Affinity"), ("NUMA", "Affinity"), ("GPU", "NUMA", "ID"))
_EXTRA_KEYS = {"CPU Affinity": "cpu_affinity", "NUMA Affinity": "numa_affinity", "GPU NUMA ID": "gpu_numa_id"}
_GPU = re.compile(r"^GPU(\d+)$")
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.:\-]*$")
_NV = re.compile(r"^NV([1-9]\d{0,2})$")
_NIC_LEGEND = re.compile(r"^\s*([A-Za-z][\w.:\-]*)\s*:\s*(\S+)\s*$")


@dataclass
class TopoResult:
    """A parsed ``nvidia-smi topo -m`` matrix.

    Attributes:
        devices: row/column labels in matrix order; ``gpus`` and ``nics`` split them.
        codes: ``{(a, b): code}`` for every ordered pair of distinct devices (``'NV12'``, ``'PIX'`` ...).
        nic_names: NIC label -> device name from the NIC legend (``{'NIC0': 'mlx5_0'}``), when printed.
        affinity: per GPU, ``cpu_affinity`` / ``numa_affinity`` / ``gpu_numa_id`` strings when printed.
        graph: a networkx graph for :mod:`nvcourse.topology.metrics` and :mod:`~nvcourse.topology.draw`
            (node kinds gpu, nic, nvswitch, pcie_switch, host_bridge, cpu). Bandwidths are known only when
            ``nvlink=`` / ``pcie=`` link ids were given; otherwise those edges have ``GBps_dir=None``.
        nvswitch_inferred: True when the NVLink counts imply a switch (one node stands for all the chips).
        notes: what was inferred or assumed.
    """

    devices: list[str]
    gpus: list[str]
    nics: list[str]
    codes: dict[tuple[str, str], str]
    nic_names: dict[str, str] = field(default_factory=dict)
    affinity: dict[str, dict[str, str]] = field(default_factory=dict)
    graph: nx.Graph = field(default_factory=nx.Graph, repr=False)
    nvswitch_inferred: bool = False
    has_legend: bool = False
    notes: list[str] = field(default_factory=list)

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
            "graph": {
                "nodes": [{"id": n, "kind": d["kind"]} for n, d in G.nodes(data=True)],
                "edges": [
                    {"a": u, "b": v, "link": d.get("link"), "count": d.get("count", 1), "GBps_dir": d.get("GBps_dir"),
                     "unbounded": bool(d.get("unbounded"))}
                    for u, v, d in G.edges(data=True)
                ],
            },
        }


# --------------------------------------------------------------------------------------------- parsing


def _parse_header(tokens: list[str], lineno: int) -> tuple[list[str], list[str]]:
    devices: list[str] = []
    extras: list[str] = []
    i = 0
    while i < len(tokens):
        for phrase in _EXTRA_COLUMNS:
            if tuple(tokens[i:i + len(phrase)]) == phrase:
                name = " ".join(phrase)
                if name in extras:
                    raise ValueError(f"line {lineno}: column {name!r} appears twice")
                extras.append(name)
                i += len(phrase)
                break
        else:
            tok = tokens[i]
            if extras:
                raise ValueError(f"line {lineno}: unexpected column {tok!r} after {extras[-1]!r}")
            if not _NAME.match(tok) or tok in ("CPU", "NUMA", "X") or tok in _RANK or _NV.match(tok):
                raise ValueError(f"line {lineno}: {tok!r} is not a device name (expected GPU0, NIC0, mlx5_0, ...)")
            if tok in devices:
                raise ValueError(f"line {lineno}: device {tok!r} appears twice in the header")
            devices.append(tok)
            i += 1
    return devices, extras


def _check_code(code: str, lineno: int, row: str, col: str) -> str:
    code = _ALIASES.get(code, code)
    if code == "X" or code in _RANK or _NV.match(code):
        return code
    raise ValueError(
        f"line {lineno}: unknown code {code!r} in row {row}, column {col}; "
        f"allowed: X, NV<n>, {', '.join(PCIE_CODES)}"
    )


def parse_topo(text: str, *, nvlink: str | None = None, pcie: str | None = None) -> TopoResult:
    """Parse ``nvidia-smi topo -m`` output and rebuild a graph from it.

    Args:
        text: the printed output (a leading shell prompt and a trailing legend are fine).
        nvlink: catalog link id of the GPUs' NVLink generation (``'nvlink4'`` for H100/H200/H20), to put
            bandwidths on NVLink edges; the matrix itself does not say which generation it is.
        pcie: catalog link id of the PCIe generation (``'pcie4'``), for the rebuilt PCIe tree's edges.

    Raises:
        ValueError: malformed input, with the line number; unknown link ids.
    """
    if not isinstance(text, str):
        raise ValueError(f"topo text must be a string, got {type(text).__name__}")
    nv_link = catalog.get_link(nvlink) if nvlink is not None else None
    pcie_link = catalog.get_link(pcie) if pcie is not None else None
    if nv_link is not None and nv_link.kind != "nvlink":
        raise ValueError(f"nvlink={nvlink!r} is not an NVLink generation")
    if pcie_link is not None and pcie_link.kind != "pcie":
        raise ValueError(f"pcie={pcie!r} is not a PCIe generation")

    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    header_at = None
    for idx, line in enumerate(lines):
        toks = line.split()
        if toks and _GPU.match(toks[0]):
            header_at = idx
            break
    if header_at is None:
        raise ValueError("line 1: no matrix header found (a line starting with GPU0 GPU1 ...)")
    devices, extras = _parse_header(lines[header_at].split(), header_at + 1)
    if not any(_GPU.match(d) for d in devices):  # pragma: no cover - the header starts with a GPU
        raise ValueError(f"line {header_at + 1}: the header names no GPU")
    n = len(devices)
    index = {d: i for i, d in enumerate(devices)}

    rows: dict[str, tuple[int, list[str], list[str]]] = {}
    idx = header_at + 1
    while idx < len(lines):
        line = lines[idx]
        toks = line.split()
        lineno = idx + 1
        if not toks:
            if rows:
                break
            idx += 1
            continue
        if toks[0].rstrip(":") == "Legend" or toks[0] == "NIC":
            break
        label = toks[0]
        if label not in index:
            raise ValueError(f"line {lineno}: row label {label!r} is not a column of the header ({', '.join(devices)})")
        if label in rows:
            raise ValueError(f"line {lineno}: row {label!r} appears twice")
        cells, rest = toks[1:1 + n], toks[1 + n:]
        if len(cells) < n:
            raise ValueError(f"line {lineno}: row {label} has {len(cells)} entries, the header has {n} device columns")
        if len(rest) > len(extras):
            raise ValueError(
                f"line {lineno}: row {label} has {n + len(rest)} entries, the header has {n} device columns"
                + (f" and {len(extras)} more ({', '.join(extras)})" if extras else "")
            )
        codes = [_check_code(c, lineno, label, devices[j]) for j, c in enumerate(cells)]
        for j, c in enumerate(codes):
            if (c == "X") != (j == index[label]):
                where = "on the diagonal" if j == index[label] else "off the diagonal"
                raise ValueError(f"line {lineno}: {c!r} {where} in row {label}, column {devices[j]}; X marks a device's own cell only")
        rows[label] = (lineno, codes, rest)
        idx += 1
    last_line = max((v[0] for v in rows.values()), default=header_at + 1)
    missing = [d for d in devices if d not in rows]
    if missing:
        raise ValueError(
            f"line {last_line}: the matrix is not square: {n} columns but {len(rows)} rows (no row for {', '.join(missing)})"
        )

    codes: dict[tuple[str, str], str] = {}
    for a in devices:
        lineno, row_codes, _ = rows[a]
        for j, b in enumerate(devices):
            if a != b:
                codes[(a, b)] = row_codes[j]
    for i, a in enumerate(devices):
        for b in devices[i + 1:]:
            if codes[(a, b)] != codes[(b, a)]:
                later = max(rows[a][0], rows[b][0])
                raise ValueError(
                    f"line {later}: asymmetric matrix: {a}->{b} is {codes[(a, b)]} but {b}->{a} is {codes[(b, a)]}"
                )

    # legend and NIC legend (after the matrix)
    has_legend = False
    nic_names: dict[str, str] = {}
    in_nic_legend = False
    for j in range(idx, len(lines)):
        stripped = lines[j].strip()
        if stripped.startswith("Legend"):
            has_legend = True
        elif stripped.startswith("NIC Legend"):
            in_nic_legend = True
        elif in_nic_legend and stripped:
            m = _NIC_LEGEND.match(stripped)
            if not m:
                continue
            nic, name = m.group(1), m.group(2)
            if nic not in index or _GPU.match(nic):
                raise ValueError(f"line {j + 1}: the NIC legend names {nic!r}, which is not a NIC of the matrix")
            nic_names[nic] = name

    gpus = [d for d in devices if _GPU.match(d)]
    nics = [d for d in devices if not _GPU.match(d)]
    affinity: dict[str, dict[str, str]] = {}
    for g in gpus:
        rest = rows[g][2]
        if rest:
            affinity[g] = {_EXTRA_KEYS[name]: value for name, value in zip(extras, rest)}
    result = TopoResult(devices, gpus, nics, codes, nic_names, affinity, has_legend=has_legend)
    _build_graph(result, nv_link, pcie_link)
    return result


def read_topo(path: str | Path, **kwargs) -> TopoResult:
    """Parse a file (``'-'`` reads standard input). Keyword arguments go to :func:`parse_topo`."""
    if str(path) == "-":
        import sys

        return parse_topo(sys.stdin.read(), **kwargs)
    return parse_topo(Path(path).read_text(encoding="utf-8"), **kwargs)


def example_files() -> dict[str, Path]:
    """The shipped real outputs, ``{stem: path}`` (``nvcourse/data/topo/*.txt``)."""
    from importlib import resources

    folder = resources.files("nvcourse").joinpath("data/topo")
    return {Path(p.name).stem: Path(str(p)) for p in sorted(folder.iterdir(), key=lambda p: p.name)
            if p.name.endswith(".txt")}


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


def _build_graph(res: TopoResult, nv_link, pcie_link) -> None:
    G = nx.Graph(system="parsed", name="nvidia-smi topo -m", topology="parsed")
    res.graph = G
    for d in res.devices:
        if d in res.gpus:
            G.add_node(d, kind="gpu", label=d)
        else:
            name = res.nic_names.get(d, d)
            G.add_node(d, kind="nic", label=d if name == d else f"{d}\n{name}", device=name)

    def pcie_edge(a, b):
        if pcie_link is None:
            G.add_edge(a, b, link=None, kind="pcie", count=1, GBps_dir=None, unbounded=False)
        else:
            G.add_edge(a, b, link=pcie_link.id, kind="pcie", count=1, GBps_dir=pcie_link.line_GBps_dir, unbounded=False)

    # NVLink
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

    # PCIe tree rebuilt from the path codes
    devices = res.devices
    cpu_uf = _UnionFind(devices)
    for grp in _groups(devices, res.codes, _RANK["NODE"]):
        for x in grp[1:]:
            cpu_uf.union(grp[0], x)
    key_name = "numa_affinity" if any(v.get("numa_affinity", "N/A") != "N/A" for v in res.affinity.values()) else "cpu_affinity"
    by_key: dict[str, list[str]] = {}
    for g, v in res.affinity.items():
        val = v.get(key_name)
        if val and val != "N/A":
            by_key.setdefault(val, []).append(g)
    for members in by_key.values():
        for x in members[1:]:
            ga = [d for d in devices if cpu_uf.find(d) == cpu_uf.find(members[0])]
            gb = [d for d in devices if cpu_uf.find(d) == cpu_uf.find(x)]
            if not any(res.codes.get((p, q)) == "SYS" for p in ga for q in gb if p != q):
                cpu_uf.union(members[0], x)
    cpu_groups = cpu_uf.groups(devices)
    hb_count = 0
    sw_count = 0
    cpus = []
    for ci, grp in enumerate(cpu_groups):
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
    for i, a in enumerate(cpus):
        for b in cpus[i + 1:]:
            G.add_edge(a, b, link="smp", count=1, GBps_dir=None, unbounded=True)
    if len(cpus) > 1:
        res.notes.append("CPU/NUMA nodes are joined by the SMP interconnect, modelled as never the bottleneck")
    res.notes.append("PCIe tree rebuilt from the path codes: a plausible shape, not the board's wiring")
    _layout(G, res)


def _layout(G: nx.Graph, res: TopoResult) -> None:
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
