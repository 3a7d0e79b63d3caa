"""Topology builders and metrics, checked against values worked out by hand.

Per-link rates used in the hand calculations (catalog, GB/s per direction): PCIe 4 x16 31.5, NVLink 2/3/4
25, NVLink 5 50. Every bandwidth is per direction.
"""

import itertools
import math

import networkx as nx
import pytest

from nvcourse import catalog
from nvcourse.topology import (
    NODE_KINDS,
    alltoall_throughput,
    bisection_bandwidth,
    build_system_graph,
    busiest_links,
    cut_capacity,
    gpu_nodes,
    hop_counts,
    hop_stats,
    link_loads,
    nccl_rings,
    pattern_throughput,
    traffic,
)


@pytest.fixture(scope="module")
def graphs():
    return {s: build_system_graph(s) for s in catalog.systems()}


# ----------------------------------------------------------------------------------------- builders


def test_every_catalog_system_builds_with_known_node_kinds_and_positions(graphs):
    assert set(graphs) == set(catalog.systems())
    for sid, G in graphs.items():
        for node, data in G.nodes(data=True):
            assert data["kind"] in NODE_KINDS, (sid, node)
            x, y = data["pos"]
            assert math.isfinite(x) and math.isfinite(y)
        system = catalog.get_system(sid)  # the PCIe server: 8 GPUs in one host, NVLink domains of 1
        assert len(gpu_nodes(G)) == max(system.gpus_per_domain, system.gpus_per_host)


def test_edges_carry_link_type_count_and_bandwidth_per_direction(graphs):
    # H100: 5 NVLink4 links to NVSwitch0, 4 to NVSwitch3: 5 x 25 = 125, 4 x 25 = 100 GB/s per direction.
    e = graphs["dgx-h100"].edges["GPU3", "NVS0"]
    assert (e["link"], e["count"], e["GBps_dir"]) == ("nvlink4", 5, 125.0)
    assert graphs["dgx-h100"].edges["GPU3", "NVS3"]["GBps_dir"] == 100.0
    # A100: 2 NVLink3 links per switch: 50 GB/s. B200: 9 NVLink5 links: 9 x 50 = 450.
    assert graphs["dgx-a100"].edges["GPU7", "NVS5"]["GBps_dir"] == 50.0
    assert graphs["dgx-b200"].edges["GPU0", "NVS1"]["GBps_dir"] == 450.0
    # NVL72: one NVLink5 link from every GPU to every chip.
    assert graphs["gb200-nvl72"].edges["GPU71", "NVS17"]["count"] == 1
    # PCIe: every hop an x16 Gen4 slot.
    assert graphs["pcie-8gpu"].edges["SW0", "SW0.1"]["GBps_dir"] == 31.5


def test_dgx1_link_map_matches_the_published_topo_matrix(graphs):
    """interconnect-facts §7.A: GPU0 row reads X NV1 NV1 NV2 NV2 SYS SYS SYS; GPU5 row SYS NV2 SYS SYS NV1 X NV2 NV1."""
    G = graphs["dgx-1-v100"]
    row0 = {
        f"GPU{j}": G.edges["GPU0", f"GPU{j}"]["count"] if G.has_edge("GPU0", f"GPU{j}") else None for j in range(1, 8)
    }
    assert row0 == {"GPU1": 1, "GPU2": 1, "GPU3": 2, "GPU4": 2, "GPU5": None, "GPU6": None, "GPU7": None}
    row5 = {j: G.edges["GPU5", f"GPU{j}"]["count"] for j in (1, 4, 6, 7)}
    assert row5 == {1: 2, 4: 1, 6: 2, 7: 1}
    # every V100 spends exactly its 6 links, and 24 links exist (8 x 6 / 2)
    for g in gpu_nodes(G):
        assert sum(G.edges[g, h]["count"] for h in G.neighbors(g)) == 6
    assert sum(d["count"] for *_, d in G.edges(data=True)) == 24
    assert G.edges["GPU0", "GPU3"]["GBps_dir"] == 50.0  # NV2: 2 x 25


def test_pcie_tree_shape(graphs):
    G = graphs["pcie-8gpu"]
    kinds = [k for _, k in G.nodes(data="kind")]
    assert {k: kinds.count(k) for k in set(kinds)} == {
        "cpu": 2, "host_bridge": 2, "pcie_switch": 6, "gpu": 8, "nic": 2,
    }
    assert nx.is_tree(G)
    # GPU0 and GPU1 share a leaf switch; GPU2 hangs off the other leaf switch of the same socket
    assert set(G.neighbors("SW0.0")) == {"SW0", "GPU0", "GPU1"}
    assert set(G.neighbors("SW0.1")) == {"SW0", "GPU2", "GPU3"}
    smp = G.edges["CPU0", "CPU1"]
    assert smp["unbounded"] and smp["GBps_dir"] is None and "assumption" in smp


def test_nvl72_trays(graphs):
    G = graphs["gb200-nvl72"]
    gpu_trays = [G.nodes[g]["tray"] for g in gpu_nodes(G)]
    assert sorted(set(gpu_trays)) == list(range(18)) and all(gpu_trays.count(t) == 4 for t in range(18))
    sw = [n for n, k in G.nodes(data="kind") if k == "nvswitch"]
    sw_trays = [G.nodes[s]["tray"] for s in sw]
    assert len(sw) == 18 and sorted(set(sw_trays)) == list(range(9)) and all(sw_trays.count(t) == 2 for t in range(9))
    assert G.number_of_edges() == 72 * 18


def test_bad_arguments_are_value_errors():
    with pytest.raises(ValueError, match="unknown system"):
        build_system_graph("dgx-9000")
    with pytest.raises(ValueError, match="PCIe"):
        build_system_graph("dgx-h100", smp_GBps_dir=50)
    with pytest.raises(ValueError):
        build_system_graph("pcie-8gpu", smp_GBps_dir=-1)


# ----------------------------------------------------------------------------------------- bisection


@pytest.mark.parametrize(
    "system, expected",
    [
        # NVSwitch chips are crossbars: for a 4|4 split each chip loses min(4, 4) x its per-GPU bundle,
        # whichever side it sits on. Sum over chips = 4 GPUs x all their links:
        ("dgx-a100", 4 * 12 * 25.0),   # 1200 GB/s per dir = 2.4 TB/s bidir, Hot Chips 2022's DGX A100 figure
        ("dgx-h100", 4 * 18 * 25.0),   # 1800 per dir = 3.6 TB/s bidir, NVIDIA's DGX H100 figure
        ("hgx-h200", 4 * 18 * 25.0),
        ("dgx-b200", 4 * 18 * 50.0),   # 3600
        ("gb200-nvl72", 36 * 18 * 50.0),  # 36 GPUs x 18 links x 50 = 32,400 per dir (64.8 TB/s bidir)
        # DGX-1: each GPU has 6 links, 24 in all; a 4-set S cuts 24 - 2 x (links inside S). The quads {0,1,2,3}
        # and {4,5,6,7} hold 1+1+2+2+1+2 = 9 links each (the most: only they have three NV2 pairs inside),
        # so the cut is 24 - 18 = 6 links (0-4, 1-5 doubled, 2-6, 3-7 single) x 25 = 150.
        ("dgx-1-v100", 6 * 25.0),
        # PCIe: the quads of each socket meet only through one x16 root-port uplink per socket: 31.5.
        ("pcie-8gpu", 31.5),
    ],
)
def test_bisection_hand_values(graphs, system, expected):
    b = bisection_bandwidth(graphs[system])
    assert b.GBps_dir == pytest.approx(expected)
    assert b.GBps_bidir == pytest.approx(2 * expected)
    assert len(b.side_a) == len(b.side_b)


def test_bisection_enumerates_35_balanced_splits_of_8_gpus(graphs):
    """C(8,4) = 70 ordered splits, 35 unordered."""
    b = bisection_bandwidth(graphs["dgx-1-v100"])
    assert b.method == "max-flow" and b.splits == 35
    assert set(b.side_a) in ({"GPU0", "GPU1", "GPU2", "GPU3"}, {"GPU4", "GPU5", "GPU6", "GPU7"})


def test_dgx1_bisection_by_brute_force_link_counting(graphs):
    """Independent check: with no switches, a split's cut is just the sum of crossing bundles."""
    G = graphs["dgx-1-v100"]
    gpus = gpu_nodes(G)
    best = min(
        sum(G.edges[u, v]["GBps_dir"] for u, v in G.edges if (u in a) != (v in a))
        for a in map(set, itertools.combinations(gpus, 4))
    )
    assert best == 150.0


def test_a_slow_cpu_link_becomes_the_bisection():
    """With a 10 GB/s CPU-CPU link (< the 31.5 uplinks), the socket split is cut at that link: 10."""
    G = build_system_graph("pcie-8gpu", smp_GBps_dir=10)
    assert bisection_bandwidth(G).GBps_dir == pytest.approx(10.0)


def test_split_of_pairs_across_leaf_switches_costs_two_uplinks(graphs):
    """{0,1,4,5} vs {2,3,6,7}: cut the two leaf-switch uplinks above GPU0/1 and GPU4/5: 2 x 31.5 = 63."""
    G = graphs["pcie-8gpu"]
    assert cut_capacity(G, ["GPU0", "GPU1", "GPU4", "GPU5"], ["GPU2", "GPU3", "GPU6", "GPU7"]) == pytest.approx(63.0)


def test_uniform_crossbar_closed_form_agrees_with_max_flow():
    """A 4-GPU, 3-switch crossbar with 2 links of 25 to each switch: cut = 3 switches x 2 GPUs x 50 = 300."""
    G = nx.Graph()
    for i in range(4):
        G.add_node(f"GPU{i}", kind="gpu")
    for s in range(3):
        G.add_node(f"NVS{s}", kind="nvswitch")
        for i in range(4):
            G.add_edge(f"GPU{i}", f"NVS{s}", link="nvlink3", count=2, GBps_dir=50.0)
    assert bisection_bandwidth(G).GBps_dir == 300.0
    assert bisection_bandwidth(G, max_enumerate=2).method == "uniform-crossbar"
    assert bisection_bandwidth(G, max_enumerate=2).GBps_dir == 300.0


@pytest.mark.parametrize("system", ["dgx-a100", "dgx-h100", "hgx-h200", "dgx-b200", "dgx-1-v100", "pcie-8gpu"])
def test_closed_form_first_gives_the_max_flow_answer(system):
    """Where the uniform-crossbar formula applies it must equal the enumeration; elsewhere it is not used."""
    G = build_system_graph(system)
    exact = bisection_bandwidth(G)
    fast = bisection_bandwidth(G, closed_form_first=True)
    assert fast.GBps_dir == pytest.approx(exact.GBps_dir)
    crossbar = system in ("dgx-a100", "dgx-h100", "hgx-h200", "dgx-b200")
    assert fast.method == ("uniform-crossbar" if crossbar else "max-flow")


# ----------------------------------------------------------------------------------------- hops


def test_hop_counts(graphs):
    h = hop_counts(graphs["dgx-1-v100"])
    assert h[("GPU0", "GPU1")] == 1 and h[("GPU0", "GPU5")] == 2 and h[("GPU7", "GPU0")] == 2
    # each DGX-1 GPU has 4 neighbours at 1 hop and 3 GPUs at 2 hops: mean (4 + 6) / 7
    assert hop_stats(graphs["dgx-1-v100"])["mean"] == pytest.approx(10 / 7)
    assert set(hop_counts(graphs["dgx-h100"]).values()) == {2}  # GPU -> switch -> GPU
    hp = hop_counts(graphs["pcie-8gpu"])
    # GPU0-sw0.0-GPU1; GPU0-sw0.0-sw0-sw0.1-GPU2; GPU0-sw0.0-sw0-rp0-CPU0-CPU1-rp1-sw1-sw1.0-GPU4
    assert (hp[("GPU0", "GPU1")], hp[("GPU0", "GPU2")], hp[("GPU0", "GPU4")]) == (2, 4, 9)


# ----------------------------------------------------------------------------------------- traffic


def test_traffic_patterns_inject_one_unit_per_sender(graphs):
    G = graphs["dgx-h100"]
    a2a = traffic(G, "all-to-all")
    assert len(a2a) == 56 and sum(v for (a, _), v in a2a.items() if a == "GPU0") == pytest.approx(1.0)
    assert traffic(G, "one-to-all", root="GPU3")[("GPU3", "GPU0")] == pytest.approx(1 / 7)
    ring = traffic(G, "ring", order=[f"GPU{i}" for i in (0, 2, 1, 3, 4, 5, 6, 7)])
    assert ring[("GPU0", "GPU2")] == 1.0 and ring[("GPU7", "GPU0")] == 1.0
    with pytest.raises(ValueError, match="allowed"):
        traffic(G, "broadcast-storm")
    with pytest.raises(ValueError):
        traffic(G, "ring", order=["GPU0", "GPU1"])


def test_h100_sprays_over_switches_in_proportion_to_links(graphs):
    """All-to-all, 1 GB/s per GPU: GPU0 sends 5/18 of it to NVSwitch0 (5 of its 18 links)."""
    loads = link_loads(graphs["dgx-h100"], traffic(graphs["dgx-h100"], "all-to-all"))
    assert loads[("GPU0", "NVS0")] == pytest.approx(5 / 18)
    assert loads[("NVS3", "GPU6")] == pytest.approx(4 / 18)


@pytest.mark.parametrize(
    "system, expected",
    [
        # a GPU can inject at its full NVLink rate: every bundle then carries exactly its capacity
        ("dgx-a100", 12 * 25.0),
        ("dgx-h100", 18 * 25.0),
        ("dgx-b200", 18 * 50.0),
        ("gb200-nvl72", 18 * 50.0),
        # PCIe: a socket's 4 GPUs send 4/7 of their traffic across: 4 x 4/7 T through one 31.5 uplink
        # -> T = 31.5 x 7/16 = 13.78125 (the leaf uplinks carry 2 x 6/7 T: not the limit)
        ("pcie-8gpu", 31.5 * 7 / 16),
        # DGX-1, per-pair rate r = T/7. Arc GPU2->GPU6 (one link, 25) carries: 2->6 itself r; 2->4 via 6
        # (paths 2-0-4 and 2-6-4 both bottleneck 25: half) r/2; 2->5 (2-1-5 bottleneck 50, 2-6-5 25: 1/3) r/3;
        # 2->7 (2-3-7 25, 2-6-7 25) r/2; 0->6 (0-2-6 25, 0-4-6 25) r/2; 1->6 (1-2-6 25, 1-5-6 50) r/3;
        # 3->6 (3-2-6 25, 3-7-6 25) r/2. Sum 11/3 r <= 25 -> r = 75/11, T = 525/11 = 47.7 GB/s.
        ("dgx-1-v100", 525 / 11),
    ],
)
def test_alltoall_throughput_hand_values(graphs, system, expected):
    assert alltoall_throughput(graphs[system]) == pytest.approx(expected)


def test_dgx1_alltoall_bottleneck_is_the_single_cross_links(graphs):
    top = busiest_links(graphs["dgx-1-v100"], "all-to-all", top=2)
    assert {frozenset((r["a"], r["b"])) for r in top} == {frozenset(("GPU2", "GPU6")), frozenset(("GPU3", "GPU7"))}
    assert all(r["utilisation"] == pytest.approx(1.0) for r in top)
    # arc GPU0->GPU4 (NV2, 50): 0->4 r; 0->5, 0->6 half each; 0->7 (0-4-7 bottleneck 50 vs 0-3-7 25) 2/3;
    # 1->4, 2->4 half each; 3->4 (3-0-4 50 vs 3-7-4 25) 2/3: 13/3 r = 13/3 x 75/11 = 29.545...
    loads = link_loads(graphs["dgx-1-v100"], traffic(graphs["dgx-1-v100"], "all-to-all"))
    assert loads[("GPU0", "GPU4")] * 525 / 11 == pytest.approx(13 / 3 * 75 / 11)


def test_pcie_busiest_links_are_the_root_port_uplinks(graphs):
    top = busiest_links(graphs["pcie-8gpu"], "all-to-all", top=2)
    assert {frozenset((r["a"], r["b"])) for r in top} == {frozenset(("HB0", "SW0")), frozenset(("HB1", "SW1"))}


def test_one_to_all_and_ring_throughput(graphs):
    # root's own x16 link carries everything it sends: 31.5
    assert pattern_throughput(graphs["pcie-8gpu"], "one-to-all") == pytest.approx(31.5)
    # ring GPU0..GPU7 on PCIe: each root-port uplink carries one ring hop each way (3->4 up, 7->0 down): 31.5
    assert pattern_throughput(graphs["pcie-8gpu"], "ring", order=[f"GPU{i}" for i in range(8)]) == pytest.approx(31.5)
    # NVSwitch one-to-all: the root's 18 links, 450 (H100)
    assert pattern_throughput(graphs["dgx-h100"], "one-to-all") == pytest.approx(450.0)
    # DGX-1, default order = an NVLink Hamiltonian cycle: every hop is a direct bundle of >= 1 link, the
    # single-link hops cap the ring at 25
    assert pattern_throughput(graphs["dgx-1-v100"], "ring") == pytest.approx(25.0)


# ----------------------------------------------------------------------------------------- rings


@pytest.mark.parametrize(
    "system, rings, per_ring",
    [
        ("dgx-a100", 12, 25.0),  # one ring per link: 12 x 25 = 300 GB/s per direction per GPU
        ("dgx-h100", 18, 25.0),  # 18 x 25 = 450
        ("hgx-h200", 18, 25.0),
        ("dgx-b200", 18, 50.0),  # 18 x 50 = 900
        ("gb200-nvl72", 18, 50.0),
        ("dgx-1-v100", 6, 25.0),  # 3 link-disjoint Hamiltonian cycles x 2 directions, 6 x 25 = 150
        ("pcie-8gpu", 1, 31.5),
    ],
)
def test_rings(graphs, system, rings, per_ring):
    plan = nccl_rings(graphs[system])
    assert plan.n_rings == rings
    assert plan.ring_GBps_dir == pytest.approx(per_ring)
    assert plan.total_GBps_dir == pytest.approx(rings * per_ring)


def test_dgx1_rings_are_valid_and_use_links_at_most_their_count(graphs):
    G = graphs["dgx-1-v100"]
    plan = nccl_rings(G)
    used = {}
    for ring in plan.rings:
        assert sorted(ring) == sorted(gpu_nodes(G))
        for i in range(8):
            a, b = ring[i], ring[(i + 1) % 8]
            assert G.has_edge(a, b), (a, b)
            used[frozenset((a, b))] = used.get(frozenset((a, b)), 0) + 1
    # 3 cycles x 8 hops = 24 = every link of the machine used once
    assert sum(used.values()) == 24
    assert all(used[e] <= G.edges[tuple(e)]["count"] for e in used)


def test_h100_ring_total_times_nccl_efficiency_is_near_measured_busbw():
    """18 x 25 x 0.824 (NCCL's 20.6 GB/s per link) = 370.8, the measured ring busbw of ~370 GB/s."""
    plan = nccl_rings(build_system_graph("dgx-h100"))
    assert plan.total_GBps_dir * catalog.get_link("nvlink4").efficiency == pytest.approx(370.8)


@pytest.mark.parametrize("system", ["dgx-1-v100", "pcie-8gpu", "gb200-nvl72"])
@pytest.mark.parametrize("pattern", ["ring", "all-to-all", "one-to-all"])
def test_pattern_report_is_throughput_and_busiest_links_from_one_routing(system, pattern):
    from nvcourse.topology import metrics

    G = build_system_graph(system)
    rate, rows = metrics.pattern_report(G, pattern)
    assert rate == metrics.pattern_throughput(G, pattern)
    assert rows == metrics.busiest_links(G, pattern, top=None)
