"""The level-by-level water-filling solver against a straightforward progressive-filling reference
(the round-based solver it replaced), on seeded random instances and on collective traffic."""

import numpy as np
import pytest

from nvcourse.fabric import fat_tree, max_min_rates
from nvcourse.fabric.collectives import alltoall_flows, node_order, ring_flows


def reference_max_min(n_flows, f, l, cap, w=None, rtol=1e-9):
    """Progressive filling, every round over every pair still rising: freeze each link whose equal share
    is the smallest seen by all its flows; each of their flows gets the smallest share along its path."""
    f = np.asarray(f, dtype=np.int64)
    l = np.asarray(l, dtype=np.int64)
    cap = np.asarray(cap, dtype=float)
    w = np.ones(f.size) if w is None else np.asarray(w, dtype=float)
    rate = np.zeros(n_flows)
    residual = cap.copy()
    while f.size:
        demand = np.bincount(l, weights=w, minlength=cap.size)
        used = demand > 0
        share = np.full(cap.size, np.inf)
        share[used] = np.maximum(residual[used], 0.0) / demand[used]
        fmin = np.full(n_flows, np.inf)
        np.minimum.at(fmin, f, share[l])
        lmin = np.full(cap.size, np.inf)
        np.minimum.at(lmin, l, fmin[f])
        bottleneck = used & (share <= lmin * (1 + rtol))
        bottleneck[int(np.argmin(share))] = True
        done = np.zeros(n_flows, dtype=bool)
        done[f[bottleneck[l]]] = True
        rate[done] = fmin[done]
        gone = done[f]
        residual -= np.bincount(l[gone], weights=w[gone] * rate[f[gone]], minlength=cap.size)
        f, l, w = f[~gone], l[~gone], w[~gone]
    return rate


def random_instance(rng, n_flows, n_links, max_path, weighted, cap_levels=None):
    f, l, w = [], [], []
    for i in range(n_flows):
        k = int(rng.integers(1, max_path + 1))
        links = rng.choice(n_links, size=min(k, n_links), replace=False)
        f += [i] * links.size
        l += links.tolist()
        w += (
            np.full(links.size, 1.0 / links.size) if weighted and rng.random() < 0.5 else np.ones(links.size)
        ).tolist()
    if cap_levels is None:
        cap = rng.uniform(1.0, 100.0, n_links)
    else:  # few distinct capacities: many exact ties between links
        cap = rng.choice(cap_levels, n_links).astype(float)
    perm = rng.permutation(len(f))  # pairs in no particular order
    return np.array(f)[perm], np.array(l)[perm], cap, np.array(w)[perm]


@pytest.mark.parametrize("seed", range(40))
def test_random_instances_match_reference(seed):
    rng = np.random.default_rng(seed)
    n_flows = int(rng.integers(1, 60))
    n_links = int(rng.integers(1, 25))
    ties = [1.0, 2.0, 4.0, 10.0] if seed % 2 else None
    f, l, cap, w = random_instance(rng, n_flows, n_links, max_path=5, weighted=seed % 3 == 0, cap_levels=ties)
    got = max_min_rates(n_flows, f, l, cap, weight=w)
    want = reference_max_min(n_flows, f, l, cap, w)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=0)


@pytest.mark.parametrize("seed", range(5))
def test_larger_random_instances_match_reference(seed):
    rng = np.random.default_rng(1000 + seed)
    f, l, cap, w = random_instance(
        rng, 2000, 300, max_path=6, weighted=True, cap_levels=[25.0, 50.0, 100.0] if seed % 2 else None
    )
    np.testing.assert_allclose(
        max_min_rates(2000, f, l, cap, weight=w), reference_max_min(2000, f, l, cap, w), rtol=1e-9, atol=0
    )


@pytest.mark.parametrize("routing", ["ecmp", "ideal"])
@pytest.mark.parametrize("pattern", ["ring", "ring-random", "alltoall"])
def test_collectives_on_fabric_match_reference(routing, pattern):
    fab = fat_tree(16)
    flows = {
        "ring": lambda: ring_flows(fab),
        "ring-random": lambda: ring_flows(fab, node_order(fab, "random", seed=3)),
        "alltoall": lambda: alltoall_flows(fab),
    }[pattern]()
    fi, li = fab.route(*flows, routing=routing, seed=1)
    n = flows[0].size
    np.testing.assert_allclose(
        max_min_rates(n, fi, li, fab.capacity_GBps), reference_max_min(n, fi, li, fab.capacity_GBps), rtol=1e-9, atol=0
    )


def test_flows_in_any_order_and_pairs_shuffled():
    rng = np.random.default_rng(7)
    f, l, cap, w = random_instance(rng, 300, 40, max_path=4, weighted=False)
    base = max_min_rates(300, f, l, cap)
    perm = rng.permutation(f.size)
    np.testing.assert_allclose(max_min_rates(300, f[perm], l[perm], cap), base, rtol=1e-12)


@pytest.mark.parametrize("seed", range(40))
def test_water_filling_alone_matches_reference(seed):
    # max_min_rates starts with progressive-filling rounds and switches to level-by-level water filling
    # when they drain slowly; check the water filling on its own from the first level.
    from nvcourse.fabric.flows import _water_fill

    rng = np.random.default_rng(500 + seed)
    n_flows = int(rng.integers(1, 300))
    n_links = int(rng.integers(1, 40))
    f, l, cap, w = random_instance(
        rng, n_flows, n_links, max_path=5, weighted=seed % 2 == 0, cap_levels=[1.0, 3.0, 9.0] if seed % 3 == 0 else None
    )
    np.testing.assert_allclose(
        _water_fill(n_flows, f, l, w, cap.copy(), 1e-9), reference_max_min(n_flows, f, l, cap, w), rtol=1e-9, atol=0
    )
