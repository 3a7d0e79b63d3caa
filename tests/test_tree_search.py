"""NCCL's tree search on one switch domain, run step by step (nvcourse/costmodel/tree_search.py).

What is checked against NCCL's own output: the 2-H100 NCCL 2.29 TUNING log (trees of 12 x 60 GB/s, whose bandwidths
tests/test_tuner_check.py compares cell by cell). What is checked against the source: the step budgets and rounding
(data/nccl_tuning.toml [tree_search], search.cc at v2.30.7-1), the chains' shape (every GPU once, hops to a
neighbour by index), that no link carries more than its bandwidth, and the x0.85 rating of the simpler pattern from
2.26. The appendix's figures for 3 and 4 GPUs are computed here from the search.

Where the expected graphs come from, so that they are not the port's own output: 2 GPUs, the 2-H100 log (12 x 60);
3 H100 (12 x 40), 3 and 4 B200 (16 x 60 and 16 x 50 through the TREE pattern) and 4 to 8 H100 (12 x 30), the
figures an earlier review's emulation recorded in the appendix before this port existed (docs/model-validation.md at
f7e23c0); the same figures and the rest of the table came out of a separate line-by-line C copy of search.cc that a
reviewer ran on 213 cases.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from nvcourse.costmodel import nccl_table, tree_search, tuning
from nvcourse.costmodel.config import configure

# the catalog's figures as NCCL's topology counts them (links x per-link GB/s, one direction)
H100_PORT = nccl_table.port_GBps(configure("dgx-h100", 3))
B200_PORT = nccl_table.port_GBps(configure("dgx-b200", 3))


def _link_loads(chains: list[list[int]], n: int, speed: float) -> tuple[list[float], list[float]]:
    up, down = [0.0] * n, [0.0] * n
    for chain in chains:
        for a, b in zip(chain, chain[1:]):
            up[a] += speed
            down[b] += speed
    return up, down


def test_the_budgets_are_search_cc_s():
    t = tuning.raw()["tree_search"]
    assert (t["same_channels_steps"], t["steps"]) == (1 << 8, 1 << 14)
    assert "73cf112295c33aee2b895f329f592f2a9b4b0f97/src/graph/search.cc" in t["src"]


def test_sub_round_rounds_to_a_thousandth_in_single_precision():
    got = tree_search._sub_round(np.float32(370.8), np.float32(40.0))
    assert got == np.float32(330.8) and got.dtype == np.float32
    assert tree_search._sub_round(np.float32(0.0), np.float32(-40.0)) == np.float32(40.0)  # giving bandwidth back


def test_the_chains_found_visit_every_gpu_once_through_neighbours_and_fit_the_links():
    chains, left, visits = tree_search.search_chains(3, H100_PORT, 12, 40.0, "balanced_tree", False, 1 << 14)
    assert chains is not None and len(chains) == 12 and left == -1 and 0 < visits <= 1 << 14
    for chain in chains:
        assert sorted(chain) == [0, 1, 2]
        assert all((b - a) % 3 in (1, 2) for a, b in zip(chain, chain[1:]))
    up, down = _link_loads(chains, 3, 40.0)
    assert max(up) <= H100_PORT and max(down) <= H100_PORT
    # the simpler pattern only ever goes to the next GPU
    chains, _, _ = tree_search.search_chains(3, B200_PORT, 16, 60.0, "tree", False, 1 << 14)
    assert chains is not None and all(c[1] == (c[0] + 1) % 3 and c[2] == (c[0] + 2) % 3 for c in chains)


def test_the_budget_decides():
    # one chain repeated on all 12 channels puts 12 x 40 = 480 GB/s on GPU 0's link: the same-chain search fails
    assert tree_search.search_chains(3, H100_PORT, 12, 40.0, "balanced_tree", True, 1 << 8)[0] is None
    # different chains exist, but not within a few steps
    chains, left, visits = tree_search.search_chains(3, H100_PORT, 12, 40.0, "balanced_tree", False, 50)
    assert chains is None and left == 0 and visits == 50


def test_two_gpus_give_the_trees_the_2_h100_log_prints():
    g = nccl_table.tree_graph(configure("dgx-h100", 2))
    assert (g.channels, g.speed_GBps, g.pattern) == (12, 60.0, "balanced_tree")


@pytest.mark.parametrize(("system", "gpus", "expected"), [
    ("dgx-h100", 3, (12, 40.0, "balanced_tree")),
    ("hgx-h200", 3, (12, 40.0, "balanced_tree")),
    ("dgx-h100", 4, (12, 30.0, "balanced_tree")),
    ("dgx-h100", 8, (12, 30.0, "balanced_tree")),
    ("dgx-b200", 3, (16, 60.0, "tree")),
    ("dgx-b200", 4, (16, 50.0, "tree")),
    ("dgx-b200", 5, (16, 45.0, "balanced_tree")),
    ("gb200-nvl72", 72, (16, 45.0, "balanced_tree")),
    ("dgx-a100", 3, (12, 20.0, "balanced_tree")),
])  # fmt: skip
def test_the_search_settles_where_the_appendix_says(system, gpus, expected):
    g = nccl_table.tree_graph(configure(system, gpus))
    assert (g.channels, g.speed_GBps, g.pattern) == expected
    ring = nccl_table.ring_graph(configure(system, gpus))
    assert g.channels == ring.channels  # NCCL asks the tree for the ring's channel count, no more, no fewer
    assert g.channels * g.speed_GBps <= nccl_table.port_GBps(configure(system, gpus)) * gpus / (gpus - 1)


def test_the_appendix_quotes_the_search():
    from nvcourse.costmodel.tuner_notes import TUNER_NOTES

    text = " ".join(TUNER_NOTES)

    def fig(system: str, gpus: int) -> str:
        g = nccl_table.tree_graph(configure(system, gpus))
        return f"{g.channels} x {g.speed_GBps:g}"

    assert f"It finds {fig('dgx-h100', 3)} on 3 H100 or H200" in text and fig("hgx-h200", 3) == fig("dgx-h100", 3)
    assert f"{fig('dgx-b200', 3)} and {fig('dgx-b200', 4)} on 3 and 4 B200" in text
    assert f"on 4 to 8 H100 ({fig('dgx-h100', 4)})" in text and {fig("dgx-h100", n) for n in range(4, 9)} == {"12 x 30"}
    blackwell = {fig("dgx-b200", n) for n in range(5, 9)} | {fig("gb200-nvl72", n) for n in (9, 16, 36, 72)}
    assert blackwell == {"16 x 45"} and "on 5 to 72 Blackwell GPUs (16 x 45)" in text
    assert f"rates x {tuning.raw()['tree_search']['simple_tree_rating']:g}" in text


def test_the_simpler_pattern_is_rated_down_from_2_26():
    c = configure("dgx-b200", 4)
    g = nccl_table.tree_graph(c)
    assert g.pattern == "tree"
    bus = {v: nccl_table._tree_bus("Simple", dataclasses.replace(c, nccl_version=v), g) for v in ("2.25", "2.26")}
    assert bus["2.26"] == pytest.approx(0.85 * bus["2.25"])
    three = configure("dgx-b200", 8)
    assert nccl_table._simple_tree_rating(nccl_table.tree_graph(three), "2.30") == 1.0
