"""NCCL's NVLS all-reduce pipeline fill (nvcourse.costmodel.pipeline, data/nccl_tuning.toml [nvls_pipeline])."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nvcourse.costmodel import pair_cost, pipeline, predict, tuning
from nvcourse.costmodel.model import configure


def test_the_constants_are_nccls_with_their_source():
    t = tuning.raw()["nvls_pipeline"]
    assert tuning.raw()["source"]["commit"] in t["src"] and "all_reduce.h" in t["src"]
    # scatter, reduce + broadcast, gather; NCCL_NVLS_CHUNKSIZE 128 KiB; 16 channels on Hopper, 24 on one NVL domain
    assert (t["stages"], t["chunk_bytes"]) == (3, 128 * 1024)
    assert t["channels_one_domain"] == {"hopper": 16, "blackwell": 24}


def test_chunk_rule_by_hand():
    p = pipeline.nvls_allreduce("h100", 8)
    assert (p.heads, p.channels) == (8, 16)
    # per channel bytes = S / 16; thresholds 64 x 8 x 128 KiB, 8 x 8 x 64 KiB, 2 x 8 x 32 KiB per channel
    assert p.chunk_bytes_at(2**30) == 131072  # 64 MiB per channel: not below 64 MiB
    assert p.chunk_bytes_at(2**30 - 16) == 65536
    assert p.chunk_bytes_at(64 * 2**20) == 65536  # 4 MiB per channel: not below 4 MiB
    assert p.chunk_bytes_at(64 * 2**20 - 16) == 32768
    assert p.chunk_bytes_at(8 * 2**20) == 32768  # 512 KiB per channel
    assert p.chunk_bytes_at(8 * 2**20 - 16) == 16384


def test_fill_is_two_loops_by_hand():
    c = configure("dgx-h100", 8)
    cost = pair_cost("allreduce", "nvls", "Simple", c)
    # 1 GiB: chunk 128 KiB, a loop = 16 channels x 8 heads x 128 KiB = 16 MiB; fill = 2 loops
    loop = 16 * 8 * 128 * 1024
    expected = cost.latency_s + 2**30 * cost.s_per_byte + 2 * loop * cost.s_per_byte
    assert cost.time(2**30) == pytest.approx(expected)
    # a buffer smaller than a loop pays at most twice its own transfer time
    small = 4096
    assert cost.time(small) == pytest.approx(cost.latency_s + 3 * small * cost.s_per_byte)


def test_only_single_domain_nvls_allreduce_has_the_term():
    c = configure("dgx-h100", 8)
    assert pair_cost("allreduce", "nvls", "Simple", c).pipeline is not None
    assert pair_cost("allgather", "nvls", "Simple", c).pipeline is None
    assert pair_cost("allreduce", "ring", "Simple", c).pipeline is None
    assert pipeline.nvls_allreduce("a100", 8) is None  # NCCL has no NVLS before Hopper


@settings(max_examples=80, deadline=None)
@given(a=st.integers(1, 2**34), b=st.integers(1, 2**34), system=st.sampled_from(["dgx-h100", "gb200-nvl72"]))
def test_nvls_time_grows_with_size(a, b, system):
    lo, hi = sorted((a, b))
    g = 8 if system == "dgx-h100" else 72
    t = [predict("allreduce", system, g, s, algo="nvls").time_s for s in (lo, hi)]
    assert t[0] <= t[1] * (1 + 1e-12)
