"""NCCL's NVLS graph (nvcourse.costmodel.nvls_graph, data/nccl_tuning.toml [nvls_heads]): at most 32 heads, and
the per-channel NVLSTree cap, worked by hand from NCCL's source."""

import dataclasses

import pytest

from nvcourse.costmodel import algorithms, cost, nvls_graph, pipeline, predict, tuning
from nvcourse.costmodel.model import configure, tree_network_s_per_byte

GiB = 2**30


def test_the_head_limit_is_nccls_with_its_source():
    t = tuning.raw()["nvls_heads"]
    assert tuning.raw()["source"]["commit"] in t["src"] and "search.cc" in t["src"]
    assert t["max_heads"] == 32  # NCCL_MAX_NVLS_ARITY, src/include/device.h
    assert [tuning.nvls_heads(g) for g in (2, 8, 32, 33, 72)] == [2, 8, 32, 32, 32]


def test_up_to_32_gpus_the_nccl_path_is_the_textbook_formula():
    for system, g in (("dgx-h100", 8), ("dgx-h100", 5), ("gb200-nvl72", 8), ("gb200-nvl72", 32)):
        c = configure(system, g)
        assert nvls_graph.nvls_s_per_byte("allreduce", c) == pytest.approx(cost("allreduce", "nvls", c).s_per_byte)
        assert nvls_graph.nvls_s_per_byte("allgather", c) == pytest.approx(cost("allgather", "nvls", c).s_per_byte)


def test_72_gpus_have_32_heads_by_hand():
    # a head moves S x 33/32 (not S x 73/72): algbw 721.8 x 0.74 x 32/33 = 517.95 GB/s, busbw x 142/72 = 1021.5
    c = configure("gb200-nvl72", 72)
    assert 1 / nvls_graph.nvls_s_per_byte("allreduce", c) / 1e9 == pytest.approx(721.8 * 0.74 * 32 / 33)
    p = predict("allreduce", "gb200-nvl72", 72, 64 * GiB, algo="nvls")
    assert p.busbw_GBps == pytest.approx(1021.5, rel=5e-3)  # the pipeline fill costs ~0.3 % at 64 GiB
    # the textbook formula (chapter 05's exercise) keeps S x 73/72
    assert 1 / cost("allreduce", "nvls", c).s_per_byte / 1e9 == pytest.approx(721.8 * 0.74 * 72 / 73)


def test_the_pipeline_loops_over_heads_not_gpus():
    assert pipeline.nvls_allreduce("b200-gb200", 72).heads == 32
    assert pipeline.nvls_allreduce("h100", 8).heads == 8


def test_nvlstree_cap_on_two_h100_nodes_by_hand():
    # 8 heads x perChMaxNVLSTreeBw (Hopper, 2 nodes) 57.7 = 461.6 GB/s of bus bandwidth; algbw x 16/30 = 246.2 GB/s.
    # The NVLS part (280 GB/s) and the network (8 x 400 Gb/s NICs, each node sends S once) are faster: the cap binds
    c = configure("dgx-h100", 8, 2)
    assert 1 / nvls_graph.nvlstree_cap_s_per_byte(c) / 1e9 == pytest.approx(8 * 57.7 * 16 / 30)
    p = predict("allreduce", "dgx-h100", 8, 16 * GiB, nodes=2, algo="nvlstree")
    assert p.algbw_GBps == pytest.approx(246.19, rel=3e-3)  # published 250 at 16 GiB (nccl-tests#309)


def test_nvlstree_on_four_nodes_meets_cap_and_network_together():
    # 4 nodes: cap 8 x 45.5 = 364 GB/s bus -> 364 x 32/62 = 187.9 GB/s algbw; the network: each node sends 2S over
    # 8 NICs of 47 GB/s achievable (376 GB/s) -> 188.0 GB/s. The two limits agree within 0.1 %
    c = configure("dgx-h100", 8, 4)
    assert 1 / nvls_graph.nvlstree_cap_s_per_byte(c) / 1e9 == pytest.approx(8 * 45.5 * 32 / 62)
    assert 1 / tree_network_s_per_byte(c) / 1e9 == pytest.approx(376.0 / 2)
    # predict takes the slower of the two (and of the NVLS part, 280 GB/s): the cap, 187.9 GB/s
    p = predict("allreduce", "dgx-h100", 8, 64 * GiB, nodes=4, algo="nvlstree")
    assert p.algbw_GBps == pytest.approx(8 * 45.5 * 32 / 62, rel=2e-3)


def test_nccl_runs_nvls_allgather_and_reducescatter_up_to_32_gpus_only():
    # enqueue.cc line 2004: NVLS/NVLSTree skipped for anything but all-reduce when localRanks > NCCL_MAX_NVLS_ARITY
    assert "nvls" in algorithms("allgather", "gb200-nvl72", 32)
    for op in ("allgather", "reducescatter"):
        assert "nvls" not in algorithms(op, "gb200-nvl72", 72)
        assert "nvls" in algorithms("allreduce", "gb200-nvl72", 72)
        p = predict(op, "gb200-nvl72", 72, 2**20)
        assert p.algo != "nvls" and not any(k.startswith("nvls/") for k in p.candidates_time_s)
        with pytest.raises(ValueError, match="up to 32 GPUs per node"):
            predict(op, "gb200-nvl72", 72, 2**20, algo="nvls")
        with pytest.raises(ValueError, match="up to 32 GPUs per node"):
            nvls_graph.nvls_s_per_byte(op, configure("gb200-nvl72", 72))


def test_across_nodes_only_gpus_with_a_nic_head():
    c = configure("dgx-h100", 8, 2)
    assert nvls_graph.heads(c) == 8  # 8 NICs for 8 GPUs
    fewer = dataclasses.replace(c, system=dataclasses.replace(c.system, nics_per_host=4))
    assert nvls_graph.heads(fewer) == 4
    assert nvls_graph.heads(dataclasses.replace(configure("dgx-h100", 8), system=fewer.system)) == 8  # one node
    # fewer heads: a head carries S x 5/4, and the NVLSTree cap is 4 x 57.7 GB/s of bus bandwidth
    assert 1 / nvls_graph.nvlstree_cap_s_per_byte(fewer) / 1e9 == pytest.approx(4 * 57.7 * 16 / 30)
