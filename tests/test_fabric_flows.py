"""Max-min fair sharing (hand-worked cases), conservation on fabrics, ECMP closed form vs simulation,
and all-reduce on a fabric."""

import numpy as np
import pytest

from nvcourse.fabric import ecmp, fat_tree, max_min_rates, simulate
from nvcourse.fabric.collectives import allreduce_on_fabric, allreduce_scaling, alltoall_flows, node_order, ring_flows


# ---------------------------------------------------------------- max-min fairness by hand
def test_single_link_is_shared_equally():
    # 3 flows on one 12 GB/s link: 12/3 = 4 each.
    assert np.allclose(max_min_rates(3, [0, 1, 2], [0, 0, 0], [12.0]), [4, 4, 4])


def test_classic_parking_lot():
    # Links A (cap 10) and B (cap 4). Flow 0 uses A and B, flow 1 uses A only, flow 2 uses B only.
    # Round 1: shares A = 10/2 = 5, B = 4/2 = 2 -> B is the bottleneck: flows 0 and 2 frozen at 2.
    # Round 2: A has 10 - 2 = 8 left for flow 1 alone -> 8.
    assert np.allclose(max_min_rates(3, [0, 0, 1, 2], [0, 1, 0, 1], [10.0, 4.0]), [2, 8, 2])


def test_three_levels_of_bottleneck():
    # Links: L0 cap 3 (flows 0,1,2), L1 cap 10 (flows 2,3), L2 cap 100 (flows 3,4).
    # Round 1: shares L0 = 1, L1 = 5, L2 = 50 -> flows 0,1,2 frozen at 1.
    # Round 2: L1 has 10 - 1 = 9 for flow 3 alone -> 9 (L2's share 100/2 = 50 is higher).
    # Round 3: L2 has 100 - 9 = 91 for flow 4 -> 91.
    f = [0, 1, 2, 2, 3, 3, 4]
    l = [0, 0, 0, 1, 1, 2, 2]
    assert np.allclose(max_min_rates(5, f, l, [3.0, 10.0, 100.0]), [1, 1, 1, 9, 91])


def test_weighted_split_flow():
    # Flow 0 is spread evenly over links 0 and 1 (weight 1/2 each), flow 1 uses link 0 only; caps 6 and 6.
    # Link 0 carries x0/2 + x1 <= 6, link 1 carries x0/2 <= 6.
    # Equal rates x: link 0 fills at 1.5x = 6 -> x = 4 for both; link 1 then has 6 - 2 = 4 spare but
    # flow 0 also crosses the full link 0, so it stays at 4.
    assert np.allclose(max_min_rates(2, [0, 0, 1], [0, 1, 0], [6.0, 6.0], weight=[0.5, 0.5, 1.0]), [4, 4])


def test_max_min_rejects_bad_input():
    with pytest.raises(ValueError, match="at least one link"):
        max_min_rates(2, [0], [0], [1.0])
    with pytest.raises(ValueError, match="capacity"):
        max_min_rates(1, [0], [0], [0.0])


def _is_max_min_fair(rate, f, l, cap, tol=1e-9):
    """Every flow crosses a full link on which no flow is faster (the bottleneck characterisation)."""
    load = np.bincount(l, weights=rate[f], minlength=len(cap))
    full = load >= cap * (1 - tol)
    maxrate = np.zeros(len(cap))
    np.maximum.at(maxrate, l, rate[f])
    ok = np.zeros(rate.size, dtype=bool)
    good_pair = full[l] & (rate[f] >= maxrate[l] * (1 - tol))
    ok[f[good_pair]] = True
    return ok.all() and np.all(load <= cap * (1 + tol))


def test_random_instances_are_max_min_fair():
    rng = np.random.default_rng(7)
    for _ in range(30):
        nf, nl = rng.integers(1, 40), rng.integers(1, 15)
        f, l = [], []
        for i in range(nf):
            links = rng.choice(nl, size=rng.integers(1, min(nl, 4) + 1), replace=False)
            f += [i] * links.size
            l += links.tolist()
        cap = rng.uniform(1, 100, nl)
        rate = max_min_rates(nf, f, l, cap)
        assert _is_max_min_fair(rate, np.array(f), np.array(l), cap)


# ---------------------------------------------------------------- conservation on fabrics
@pytest.mark.parametrize("nodes, routing", [(64, "ecmp"), (64, "ideal"), (300, "ecmp"), (300, "ideal")])
@pytest.mark.parametrize("pattern", ["ring-random", "alltoall"])
def test_no_link_over_capacity_and_every_flow_routed(nodes, routing, pattern):
    fab = fat_tree(nodes, oversubscription=2)
    if pattern == "alltoall":
        flows = alltoall_flows(fab, nodes=min(nodes, 40))
    else:
        flows = ring_flows(fab, node_order(fab, "random", seed=3))
    fi, li = fab.route(*flows, routing=routing, seed=3)
    n = flows[0].size
    assert set(np.unique(fi)) == set(range(n))  # every flow routed
    hops = np.bincount(fi, minlength=n)
    assert hops.min() >= 2 and hops.max() <= 6  # NIC up + NIC down, at most 4 switch-to-switch links
    sim = simulate(fab, *flows, routing=routing, seed=3)
    assert np.all(sim.rate_GBps > 0)
    assert np.all(sim.load_GBps <= sim.capacity_GBps * (1 + 1e-9))
    # every flow's bytes leave one NIC and reach one NIC
    t = fab.link_tier
    assert np.isclose(sim.load_GBps[t == 0].sum(), sim.rate_GBps.sum())
    assert np.isclose(sim.load_GBps[t == 1].sum(), sim.rate_GBps.sum())
    # up = down at each switch tier
    assert np.isclose(sim.load_GBps[t == 2].sum(), sim.load_GBps[t == 3].sum())


def test_route_rejects_intra_node_flows():
    fab = fat_tree(4)
    with pytest.raises(ValueError, match="same node"):
        fab.route([0], [0], [0], [1])


def test_packed_ring_never_collides_but_random_placement_does():
    fab = fat_tree(128)
    packed = simulate(fab, *ring_flows(fab), routing="ecmp")
    assert packed.min_rate_GBps == 50.0  # only the 4 SU boundaries x 8 rails cross a spine: one flow per up-link
    rnd = simulate(fab, *ring_flows(fab, node_order(fab, "random", seed=1)), routing="ecmp", seed=1)
    assert rnd.min_rate_GBps < 50.0 / 2  # collisions
    ideal = simulate(fab, *ring_flows(fab, node_order(fab, "random", seed=1)), routing="ideal")
    assert ideal.min_rate_GBps == pytest.approx(50.0)  # a non-blocking fat-tree carries any permutation


def test_oversubscription_caps_cross_leaf_traffic():
    # Random placement, ideal spreading: ~all 32 flows of a leaf leave it. With 2:1 the 16 up-links share
    # 32 flows' worth of traffic -> about half rate on the busiest leaf.
    fab = fat_tree(128, oversubscription=2)
    sim = simulate(fab, *ring_flows(fab, node_order(fab, "random", seed=2)), routing="ideal")
    assert 50.0 * 16 / 32 <= sim.min_rate_GBps < 50.0


# ---------------------------------------------------------------- ECMP closed form vs simulation
def test_ecmp_closed_form_by_hand():
    # 2 flows on 2 links: they collide with probability 1/2.
    assert ecmp.collision_probability(2, 2) == 0.5
    assert ecmp.any_collision_probability(2, 2) == 0.5
    # mean rate: half the time both at full rate, half the time both at 1/2 -> 3/4.
    assert ecmp.mean_rate_fraction(2, 2) == 0.75
    pmf = ecmp.max_load_pmf(2, 2)
    assert np.allclose(pmf, [0, 0.5, 0.5])
    assert ecmp.expected_max_load(2, 2) == pytest.approx(1.5)
    assert ecmp.any_collision_probability(5, 4) == 1.0
    with pytest.raises(ValueError, match="links"):
        ecmp.collision_probability(3, 0)


def test_ecmp_closed_form_matches_the_simulation():
    # m flows leave one leaf (rails=1, 32 up-links striped over 32 spines, one cable to every leaf) for
    # m different leaves: the only place they can meet is the leaf's up-links, i.e. balls into 32 bins.
    m, k = 24, 32
    fab = fat_tree(33 * 32, rails=1, nodes_per_su=32, radix=64)
    assert fab.leaf_up == k and fab.n_spines == k
    src = np.arange(m)  # nodes of leaf 0
    dst = 32 * (1 + np.arange(m))  # first node of leaves 1..m
    z = np.zeros(m, dtype=int)
    frac, collided, maxload = [], [], []
    for seed in range(400):
        sim = simulate(fab, src, z, dst, z, routing="ecmp", seed=seed)
        r = sim.rate_GBps / fab.port_GBps_dir
        frac.append(r.mean())
        collided.append((r < 1).mean())
        maxload.append(1 / r.min())
    assert np.mean(frac) == pytest.approx(ecmp.mean_rate_fraction(m, k), abs=0.01)
    assert np.mean(collided) == pytest.approx(ecmp.collision_probability(m, k), abs=0.02)
    assert np.mean(maxload) == pytest.approx(ecmp.expected_max_load(m, k), abs=0.08)


# ---------------------------------------------------------------- all-reduce on a fabric
def test_allreduce_single_node_is_the_nvlink_ring():
    from nvcourse import catalog

    s = catalog.get_system("dgx-h100")
    n = 2**30
    e = allreduce_on_fabric(fat_tree(1), n, algorithm="ring")
    b = s.scaleup_achievable_GBps_dir * 1e9
    # NCCL's Simple ring: base 8.4 us + 14 steps x 3.4 us
    assert e.time_s == pytest.approx(8.4e-6 + 14 * 3.4e-6 + 2 * 7 / 8 * n / b)


def test_hierarchical_inter_node_phase_by_hand():
    # 2 nodes x 8 GPUs, 1 GiB: the inter-node ring per rail all-reduces n/8 over 2 nodes:
    # 2(N-1) = 2 steps of n/16 at 50 x 0.94 = 47 GB/s, plus 2 x 14 us.
    n = 2**30
    e = allreduce_on_fabric(fat_tree(2), n, algorithm="hierarchical")
    assert e.inter_s == pytest.approx(2 * (n / 16) / 47e9 + 2 * 14e-6)
    assert e.net_rate_GBps == pytest.approx(47.0)


def test_sharp_beats_ring_bandwidth_and_latency_at_scale():
    res = allreduce_scaling([2, 16, 128], 2**28)
    ring, hier, sharp = res["ring"], res["hierarchical"], res["sharp"]
    # at 2 nodes a ring step already sends each shard once each way: SHARP only adds its latency
    assert sharp[0].inter_s > hier[0].inter_s
    for r, h, s in zip(ring[1:], hier[1:], sharp[1:]):
        assert s.time_s < h.time_s
        assert h.latency_s < r.latency_s
    # ring latency grows with every GPU; SHARP's inter-node latency does not grow at all
    assert ring[-1].latency_s > 50 * sharp[-1].latency_s
    assert sharp[-1].inter_s == pytest.approx(sharp[0].inter_s)


def test_ecmp_with_random_placement_slows_the_allreduce():
    fab = fat_tree(128)
    kw = dict(algorithm="hierarchical", placement="random", seed=4)
    slow = allreduce_on_fabric(fab, 2**30, routing="ecmp", **kw)
    fast = allreduce_on_fabric(fab, 2**30, routing="ideal", **kw)
    assert slow.time_s > 2 * fast.time_s
    assert slow.busbw_GBps < fast.busbw_GBps


def test_allreduce_bad_input():
    fab = fat_tree(4)
    with pytest.raises(ValueError, match="algorithm"):
        allreduce_on_fabric(fab, 1e6, algorithm="binary-tree")
    with pytest.raises(ValueError, match="nbytes"):
        allreduce_on_fabric(fab, 0)
    with pytest.raises(ValueError, match="placement"):
        allreduce_on_fabric(fab, 1e6, placement="spread")
    with pytest.raises(ValueError, match="InfiniBand"):
        allreduce_on_fabric(fab, 1e6, algorithm="sharp", nic_link="roce-400g")


def test_ecmp_figure_tells_the_simulated_series_apart():
    # chapter 06's ECMP figure: a y label, and the simulated mean and slowest-flow points each with its own marker,
    # in the colour of the closed-form curve it checks
    import matplotlib.pyplot as plt

    from nvcourse.chapters.ch06_fabrics import ecmp_figure
    fig = ecmp_figure(8, sim_mean=([4, 8], [0.8, 0.7]), sim_slowest=([4, 8], [0.6, 0.4]))
    ax = fig.axes[0]
    assert ax.get_ylabel()
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    mean, slow = lines["simulated: mean rate"], lines["simulated: slowest flow"]
    assert mean.get_marker() != slow.get_marker() and mean.get_color() != slow.get_color()
    assert mean.get_color() == lines["mean rate / link rate"].get_color()
    assert slow.get_color() == lines["slowest flow: E[1 / max load]"].get_color()
    assert mean.get_linestyle() == "None" and slow.get_linestyle() == "None"
    plt.close(fig)
