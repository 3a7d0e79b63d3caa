"""One story: the fabric simulation and the collective cost model agree wherever they model the same thing.

``nvcourse.fabric`` takes everything inside a node (the NVLink reduce-scatter / all-gather of a hierarchical
all-reduce, the flat ring's formula) from ``nvcourse.costmodel``; only the network rate is its own, from the
max-min flow simulation of one ring step on a fat-tree. On a non-blocking rail-optimised fat-tree with ideal
routing nothing contends, so the simulated rate is the NIC port's line rate x the catalog efficiency, which is
what the cost model assumes, and the two must give the same time.

Where they may legitimately differ (none of which happens in the ideal cases below):

* contention: ECMP collisions, random placement across leaves, oversubscription. The simulation sees it, the
  cost model (one rate per NIC) does not, so the fabric can only be *slower*;
* a fabric whose ports are not the system's NICs (``fat_tree(port_GBps_dir=...)`` or rails != NICs per host):
  the cost model uses the catalog NIC;
* the SHARP (CollNet) algorithm, which only the fabric models.

The tolerance is a few percent so that a future refinement on either side (e.g. NCCL's partial overlap of the
intra- and inter-node phases) is not a test failure by itself; today the agreement is exact to rounding.
"""

from __future__ import annotations

import math

import pytest

from nvcourse import catalog, costmodel
from nvcourse.fabric import allreduce_on_fabric, fat_tree

TOL = 0.03  # relative
SIZES = [2**28, 2**30, 2**32]  # large messages: 256 MiB .. 4 GiB per GPU
NODES = [2, 4, 8, 16]


def _ideal(nodes: int):
    # DGX H100: 8 rails of NDR 400 Gb/s (the catalog NIC), non-blocking (1:1), rail-optimised
    port = catalog.get_link("ib-ndr").line_GBps_dir
    return fat_tree(nodes, rails=8, port_GBps_dir=port, layout="rail", oversubscription=1.0)


@pytest.mark.parametrize("nodes", NODES)
@pytest.mark.parametrize("n", SIZES)
def test_hierarchical_on_an_ideal_fabric_is_the_cost_model(nodes, n):
    e = allreduce_on_fabric(_ideal(nodes), n, algorithm="hierarchical", system="dgx-h100", routing="ideal")
    p = costmodel.predict("allreduce", "dgx-h100", 8, n, nodes=nodes, algo="hierarchical")
    assert e.time_s == pytest.approx(p.time_s, rel=TOL)
    assert e.latency_s == pytest.approx(p.latency_s, rel=TOL)
    # no contention: every ring flow gets its NIC's achievable rate, the cost model's per-GPU NIC share
    assert e.net_rate_GBps * 1e9 == pytest.approx(costmodel.configure("dgx-h100", 8, nodes).nic_Bps_per_gpu, rel=1e-9)


@pytest.mark.parametrize("nodes", NODES)
def test_intra_node_phases_are_the_cost_models_reducescatter_and_allgather(nodes):
    n = 2**30
    # the course's alpha-beta ring phases (Simple per-step alpha), as costmodel.cost gives them
    cfg = costmodel.configure("dgx-h100", 8)
    rs = costmodel.cost("reducescatter", "ring", cfg).time(n)
    ag = costmodel.cost("allgather", "ring", cfg).time(n)
    # SHARP on NVSwitch nodes that reduce in the switch: NCCL runs the in-node phases with NVLink SHARP (NVLS)
    nvls = costmodel.pair_cost("allreduce", "nvls", "Simple", cfg).time(n)
    for algo in ("hierarchical", "sharp"):
        e = allreduce_on_fabric(_ideal(nodes), n, algorithm=algo, system="dgx-h100", routing="ideal")
        assert e.intra_s == pytest.approx(rs + ag if algo == "hierarchical" else nvls, rel=1e-12)
        if algo == "hierarchical":  # the course's scheme: phases one after the other
            assert e.time_s == pytest.approx(e.intra_s + e.inter_s, rel=1e-12)
        else:  # CollNet pipelines them: the slower phase plus both latencies
            assert max(e.intra_s, e.inter_s) <= e.time_s < e.intra_s + e.inter_s


@pytest.mark.parametrize("nodes", [1, *NODES])
def test_flat_ring_on_an_ideal_fabric_is_the_cost_models_ring(nodes):
    n = 2**30
    e = allreduce_on_fabric(_ideal(nodes), n, algorithm="ring", system="dgx-h100", routing="ideal")
    p = costmodel.predict("allreduce", "dgx-h100", 8, n, nodes=nodes, algo="ring")
    assert e.time_s == pytest.approx(p.time_s, rel=TOL)


@pytest.mark.parametrize("nodes", NODES)
@pytest.mark.parametrize("seed", range(4))
def test_ecmp_is_never_faster_than_the_cost_model(nodes, seed):
    # 4 nodes per leaf so that 8 and 16 nodes cross the spines, randomly placed: ECMP can collide there
    n = 2**30
    p = costmodel.predict("allreduce", "dgx-h100", 8, n, nodes=nodes, algo="hierarchical").time_s
    fab = fat_tree(nodes, nodes_per_su=4)
    ideal = allreduce_on_fabric(fab, n, routing="ideal", placement="random", seed=seed)
    ecmp = allreduce_on_fabric(fab, n, routing="ecmp", placement="random", seed=seed)
    assert ideal.time_s == pytest.approx(p, rel=TOL)  # still non-blocking: ideal spreading has no contention
    assert ecmp.time_s >= ideal.time_s * (1 - 1e-12)
    assert ecmp.time_s >= p * (1 - 1e-12)


def test_ecmp_collisions_make_the_fabric_slower():
    n = 2**30
    p = costmodel.predict("allreduce", "dgx-h100", 8, n, nodes=16, algo="hierarchical").time_s
    e = allreduce_on_fabric(fat_tree(16, nodes_per_su=4), n, routing="ecmp", placement="random", seed=1)
    assert e.net_rate_GBps < 0.5 * 47.0
    assert e.time_s > 1.5 * p


# ---------------------------------------------------------------- the cost model's hook for the fabric
def test_configure_net_rate_override_changes_only_the_network_part():
    n = 2**30
    base = costmodel.configure("dgx-h100", 8, 4)
    same = costmodel.configure("dgx-h100", 8, 4, net_Bps_per_gpu=base.nic_Bps_per_gpu)
    slow = costmodel.configure("dgx-h100", 8, 4, net_Bps_per_gpu=base.nic_Bps_per_gpu / 2)
    for algo in ("ring", "tree", "hierarchical"):
        assert costmodel.cost("allreduce", algo, same) == costmodel.cost("allreduce", algo, base)
    h, hs = costmodel.cost("allreduce", "hierarchical", base), costmodel.cost("allreduce", "hierarchical", slow)
    assert hs.latency_s == h.latency_s
    intra = 2 * 7 / 8 * base.dom.ring_inv
    assert hs.s_per_byte - intra == pytest.approx(2 * (h.s_per_byte - intra))
    assert hs.time(n) > h.time(n)
    # inside one node there is no network: the override changes nothing
    one = costmodel.configure("dgx-h100", 8, 1, net_Bps_per_gpu=1e6)
    plain = costmodel.configure("dgx-h100", 8)
    assert costmodel.cost("allreduce", "ring", one) == costmodel.cost("allreduce", "ring", plain)


@pytest.mark.parametrize("bad", [0, -1.0, math.inf, math.nan, True, "fast"])
def test_configure_net_rate_override_bad_values(bad):
    with pytest.raises(ValueError, match="net_Bps_per_gpu"):
        costmodel.configure("dgx-h100", 8, 2, net_Bps_per_gpu=bad)


@pytest.mark.parametrize("nodes", [2, 16, 128, 512])
@pytest.mark.parametrize("algorithm", ["ring", "tree", "hierarchical"])
def test_the_time_split_is_never_negative_and_adds_up(nodes, algorithm):
    """Chapter 06's readout splits the time into 'inside nodes' and 'between nodes': at every size the slider allows
    (64 KiB to 1 GiB) both parts are >= 0 and add up to the time (a learner once saw '-982 us inside nodes' for the
    ring on 128 nodes at 64 KiB, when the network steps were charged a latency the cost model does not use)."""
    from nvcourse.fabric.builders import fat_tree
    from nvcourse.fabric.collectives import allreduce_on_fabric

    for nbytes in (64 * 2**10, 512 * 2**10, 2 * 2**20, 2**30):
        e = allreduce_on_fabric(fat_tree(nodes, rails=8, port_GBps_dir=50.0), nbytes, algorithm=algorithm,
                                placement="random")
        assert e.intra_s >= 0 and e.inter_s >= 0, (nbytes, e.intra_s, e.inter_s)
        assert e.intra_s + e.inter_s == pytest.approx(e.time_s, rel=1e-9)


def test_the_ring_books_what_a_slower_network_adds_between_nodes():
    """A pipelined ring runs at its slowest link's pace: making only the network worse (packed -> random placement,
    1:1 -> 4:1) leaves 'inside nodes' unchanged and grows 'between nodes' (a learner saw the inside part grow from
    8.9 to 41 ms with the network, when the split followed the steps' count)."""
    from nvcourse.fabric.builders import fat_tree
    from nvcourse.fabric.collectives import allreduce_on_fabric

    parts = []
    for placement, over in (("packed", 1.0), ("random", 1.0), ("random", 4.0)):
        e = allreduce_on_fabric(fat_tree(128, rails=8, port_GBps_dir=50.0, oversubscription=over), 2**30,
                                algorithm="ring", placement=placement)
        parts.append((e.intra_s, e.inter_s))
    assert parts[0][0] == pytest.approx(parts[1][0]) == pytest.approx(parts[2][0])
    assert parts[0][1] < parts[1][1] < parts[2][1] and parts[2][1] > parts[2][0]


def test_sharp_keeps_nvlink_rings_inside_nodes_that_cannot_reduce_in_the_switch():
    n = 2**30
    cfg = costmodel.configure("dgx-a100", 8)
    rs = costmodel.cost("reducescatter", "ring", cfg).time(n)
    ag = costmodel.cost("allgather", "ring", cfg).time(n)
    e = allreduce_on_fabric(_ideal(4), n, algorithm="sharp", system="dgx-a100", routing="ideal")
    assert e.intra_s == pytest.approx(rs + ag, rel=1e-12)
