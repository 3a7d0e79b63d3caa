"""Fat-tree builders: switch counts against NVIDIA's DGX SuperPOD tables, structure, and bad input."""

import networkx as nx
import numpy as np
import pytest

from nvcourse.fabric import data, fat_tree, superpod


@pytest.mark.parametrize(
    "row", data.superpod_rows("h100") + data.superpod_rows("b200"), ids=lambda r: f"{r.pod}-{r.su}SU"
)
def test_switch_counts_match_the_reference_architecture_tables(row):
    f = superpod(row.pod, row.su)
    assert f.counts() == {"nodes": row.nodes, "gpus": row.gpus, "leaf": row.leaf, "spine": row.spine, "core": row.core}


def test_superpod_uses_sourced_switch_and_nic():
    f = superpod("h100", 4)
    assert f.radix == data.get_switch("quantum-2").ports == 64
    assert f.port_GBps_dir == 50.0  # ib-ndr 400 Gb/s / 8
    assert f.rails == 8 and f.levels == 2


def test_every_switch_port_budget_is_respected():
    for nodes in (1, 5, 31, 95, 128, 256, 300, 512, 1024):
        f = fat_tree(nodes)
        lo, hi = f.link_ends
        t = f.link_tier
        # ports used on each switch: down + up cables (one direction each)
        leaf_ports = np.bincount(hi[t == 0], minlength=f.n_leaves) + np.bincount(lo[t == 2], minlength=f.n_leaves)
        spine_ports = np.bincount(hi[t == 2], minlength=f.n_spines) + np.bincount(lo[t == 4], minlength=f.n_spines)
        assert leaf_ports.max() <= f.radix and spine_ports.max() <= f.radix
        if f.n_cores:
            assert np.bincount(hi[t == 4], minlength=f.n_cores).max() <= f.radix
        # striping: every leaf reaches every spine of its pod with the same number of cables
        ends = np.stack([lo[t == 2], hi[t == 2]], axis=1)
        _, c = np.unique(ends, axis=0, return_counts=True)
        assert c.min() == c.max()


def test_rail_layout_puts_nic_i_on_leaf_i_of_the_su():
    f = fat_tree(64, layout="rail")
    node = np.repeat(np.arange(64), 8)
    rail = np.tile(np.arange(8), 64)
    leaf = f.leaf_of(node, rail)
    assert np.array_equal(leaf, (node // 32) * 8 + rail)
    g = f.graph
    assert sorted(g.neighbors("host33")) == sorted(f"leaf{8 + r}" for r in range(8))


def test_tor_layout_puts_a_whole_node_on_one_leaf():
    f = fat_tree(64, layout="tor")
    assert f.hosts_per_leaf == 4 and f.n_leaves == 16
    assert list(f.graph.neighbors("host5")) == ["leaf1"]
    assert f.graph.edges["host5", "leaf1"]["links"] == 8


def test_graph_counts_links_and_capacity_per_direction():
    f = superpod("b200", 16)
    g = f.graph
    assert nx.is_connected(g)
    tiers = nx.get_node_attributes(g, "tier")
    assert sum(1 for v in tiers.values() if v == "core") == 64
    cables = sum(d["links"] for *_, d in g.edges(data=True))
    assert cables == sum(f.cables.values()) == 3 * 4096
    for *_, d in g.edges(data=True):
        assert d["capacity_GBps_dir"] == d["links"] * 50.0
    assert f.n_links == 2 * cables


def test_oversubscription_reduces_uplinks():
    f = fat_tree(128, oversubscription=2)
    assert f.leaf_up == 16 and f.oversubscription == 2.0
    assert f.n_spines == 8  # 32 leaves x 16 up-ports / 64 = 8
    assert fat_tree(128, oversubscription=4).leaf_up == 8


def test_auto_levels_and_forced_three_levels():
    assert fat_tree(256).levels == 2  # 64 leaves: the most two levels of 64-port switches can take
    assert fat_tree(257).levels == 3
    f = fat_tree(32, levels=3)
    assert f.levels == 3 and f.n_pods == 1 and f.n_cores == 32


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(nodes=0), ["nodes", ">= 1"]),
        (dict(nodes=-3), ["nodes", ">= 1"]),
        (dict(nodes=2.5), ["nodes", "integer"]),
        (dict(nodes=64, radix=48), ["radix", "too small", "allowed"]),
        (dict(nodes=300, levels=2), ["radix", "too small", "nodes <= 256"]),
        (dict(nodes=100_000), ["radix", "too small", "allowed"]),
        (dict(nodes=8, oversubscription=0.5), ["oversubscription", ">= 1"]),
        (dict(nodes=8, oversubscription=float("nan")), ["oversubscription", ">= 1"]),
        (dict(nodes=8, layout="dragonfly"), ["layout", "rail", "tor"]),
        (dict(nodes=8, levels=4), ["levels", "2, 3"]),
        (dict(nodes=8, port_GBps_dir=0), ["port_GBps_dir", "> 0"]),
        (dict(nodes=8, layout="tor", nodes_per_su=30), ["nodes_per_su", "multiple"]),
    ],
)
def test_bad_input_names_the_parameter_and_what_is_allowed(kwargs, words):
    with pytest.raises(ValueError) as e:
        fat_tree(**kwargs)
    for w in words:
        assert w in str(e.value)


def test_unknown_superpod_and_switch():
    with pytest.raises(ValueError, match="allowed: h100, b200"):
        superpod("a100")
    with pytest.raises(ValueError, match="unknown switch"):
        data.get_switch("qm8700")


def test_fabrics_toml_figures_have_sources():
    raw = data.raw()
    known = set(raw["sources"]) | set(__import__("nvcourse.catalog", fromlist=["x"]).raw()["sources"])
    for table in ("switches", "superpods"):
        for key, rec in raw[table].items():
            for field, value in rec.items():
                if field == "src" or isinstance(value, (bool, str)):
                    continue
                ref = rec["src"][field]
                assert ref in known or ref.startswith(("derived:", "assumption:")), (table, key, field)
    assert raw["in_network"]["src"]["collnet_alpha_us"] in known
