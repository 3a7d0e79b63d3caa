"""Node-limited routing and per-node deduplication of MoE dispatch (fabric/moe.py), hand-worked."""

import math

import pytest

from nvcourse.fabric.moe import (
    MoEConfig,
    moe_alltoall_time,
    moe_layer_time,
    network_copies_per_token,
    remote_nodes_per_token,
)

CFG = MoEConfig(hidden=7168, tokens=4096, experts=256, top_k=8, bytes_per_elem=2, moe_layers=58)


def test_remote_nodes_without_limit():
    # EP 64 on 8-GPU nodes: 8 nodes of 32 experts. A given other node is missed with probability
    # C(224, 8)/C(256, 8) = 0.3382; 7 x (1 - 0.3382) = 4.633 remote nodes per token.
    p = math.comb(224, 8) / math.comb(256, 8)
    assert p == pytest.approx(0.33817, abs=1e-4)
    assert remote_nodes_per_token(256, 8, 64, 8) == pytest.approx(7 * (1 - p))
    assert remote_nodes_per_token(256, 8, 8, 8) == 0  # one node: nothing leaves it


def test_remote_nodes_with_four_node_limit():
    # DeepSeek-V3: at most 4 nodes. The 8 experts fall among the 4 nodes' 128 experts; a chosen node gets none
    # with probability C(96, 8)/C(128, 8) = 0.0913 -> 3.635 nodes hit, 7/8 of them remote -> 3.18
    q = math.comb(96, 8) / math.comb(128, 8)
    assert remote_nodes_per_token(256, 8, 64, 8, max_nodes=4) == pytest.approx(4 * (1 - q) * 7 / 8)
    assert remote_nodes_per_token(256, 8, 64, 8, max_nodes=4) == pytest.approx(3.18, abs=0.01)
    # a limit at or above the node count changes nothing
    assert remote_nodes_per_token(256, 8, 64, 8, max_nodes=8) == remote_nodes_per_token(256, 8, 64, 8)


def test_copies_per_token_cut():
    assert network_copies_per_token(CFG, 64, 8) == pytest.approx(7.0)  # 8 x 56/64
    dedup = network_copies_per_token(CFG, 64, 8, dedup=True)
    limited = network_copies_per_token(CFG, 64, 8, dedup=True, max_nodes=4)
    assert 7.0 / limited == pytest.approx(2.2, abs=0.05)
    assert limited < dedup < 7.0


def test_dispatch_time_with_dedup_on_dgx_b200():
    # network bytes = 4096 x 7168 x 2 x 3.175 = 186.4 MB at 47 GB/s = 3.967 ms + 2 x 14 us
    t = moe_alltoall_time(CFG, 64, "dgx-b200", dedup=True, max_nodes=4)
    copies = network_copies_per_token(CFG, 64, 8, dedup=True, max_nodes=4)
    assert t.network_bytes == pytest.approx(4096 * 7168 * 2 * copies)
    assert t.time_s == pytest.approx(28e-6 + 4096 * 7168 * 2 * copies / 47e9)
    # the forward over NVLink: 7/64 local + 56/64 x 7/8 forwarded, of the routed bytes
    assert t.nvlink_bytes == pytest.approx(CFG.routed_bytes * (7 / 64 + 56 / 64 * 7 / 8))
    # the default is unchanged (chapter 05's upper bound)
    assert moe_alltoall_time(CFG, 64, "dgx-b200").network_bytes == 411_041_792


def test_nvl72_gap_shrinks():
    nvl = moe_alltoall_time(CFG, 64, "gb200-nvl72").time_s
    naive = moe_alltoall_time(CFG, 64, "dgx-b200").time_s / nvl
    real = moe_alltoall_time(CFG, 64, "dgx-b200", dedup=True, max_nodes=4).time_s / nvl
    assert naive == pytest.approx(13.6, rel=0.01)
    assert real == pytest.approx(6.2, rel=0.02)
    # inside one NVLink domain dedup changes nothing
    assert moe_alltoall_time(CFG, 64, "gb200-nvl72", dedup=True).time_s == nvl
    assert moe_layer_time(CFG, 64, "dgx-b200", dedup=True, max_nodes=4)["per_layer_s"] == pytest.approx(
        4 * moe_alltoall_time(CFG, 64, "dgx-b200", dedup=True, max_nodes=4).time_s)
