"""NCCL's NVLS all-reduce pipeline: fill and extra loops.

(nvcourse.costmodel.pipeline, nccl_tuning.toml [nvls_pipeline])"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nvcourse import catalog
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


def test_extra_loops_by_hand():
    # 8 H100: a loop is 16 channels x 8 heads x chunk; each loop beyond those of the 128 KiB chunk costs NCCL's
    # Simple step over NVLink (hwLatencies, ring: 3.4 us)
    p = pipeline.nvls_allreduce("h100", 8)
    assert p.loop_latency_s == pytest.approx(tuning.hw_latency_us("nvlink", "ring", "Simple") * 1e-6)
    assert p.loop_latency_s == pytest.approx(3.4e-6)
    # 512 MiB: chunk 64 KiB, 512 MiB / 8 MiB = 64 loops; at 128 KiB 32: 32 x 3.4 us
    assert p.extra_loops_s(512 * 2**20) == pytest.approx(32 * 3.4e-6)
    # 32 MiB: chunk 32 KiB, 32 MiB / 4 MiB = 8 loops; at 128 KiB 2 (16 MiB each): 6 x 3.4 us
    assert p.extra_loops_s(32 * 2**20) == pytest.approx(6 * 3.4e-6)
    assert p.extra_loops_s(2**30) == 0.0 and p.extra_loops_s(16 * 2**30) == 0.0  # the full chunk
    assert p.extra_loops_s(4096) == 0.0  # one loop either way
    # GB200, 8 GPUs of one NVLink domain: 24 channels; 1 GiB < 64 x 24 x 8 x 128 KiB, so the chunk is 64 KiB:
    # ceil(1 GiB / 12 MiB) = 86 loops, ceil(1 GiB / 24 MiB) = 43 at the full chunk
    b = pipeline.nvls_allreduce("b200-gb200", 8)
    assert (b.channels, b.heads, b.chunk_bytes_at(2**30)) == (24, 8, 65536)
    assert b.extra_loops_s(2**30) == pytest.approx(43 * 3.4e-6)


def test_the_time_steps_down_at_a_chunk_threshold():
    # NCCL doubles the chunk at 1 GiB on 8 H100. For 1 GiB - 16 B its last channel (64 MiB - 16 B) runs 128 loops
    # of 64 KiB and ends the call; the model splits evenly, which gives every channel that slowest one's loops
    c = configure("dgx-h100", 8)
    cost = pair_cost("allreduce", "nvls", "Simple", c)
    below, at = cost.time(2**30 - 16), cost.time(2**30)
    assert below > at
    # the step is the 64 extra loops, less the larger fill (2 loops of 8 MiB more) and 16 bytes
    assert below - at == pytest.approx(64 * 3.4e-6 - 2 * 8 * 2**20 * cost.s_per_byte, rel=1e-3)
    assert at / below - 1 == pytest.approx(-0.038, abs=0.002)  # 04b: "158 us (4 %) longer"
    # 8 GB200 GPUs (24 channels): at 1.5 GiB = 64 x 24 x 8 x 128 KiB; at 64 MiB on H100 the larger fill wins
    g = pair_cost("allreduce", "nvls", "Simple", configure("gb200-nvl72", 8))
    assert g.time(1.5 * 2**30) / g.time(1.5 * 2**30 - 16) - 1 == pytest.approx(-0.045, abs=0.002)
    assert cost.time(64 * 2**20) > cost.time(64 * 2**20 - 16)


def test_on_one_domain_the_model_picks_as_nccls_formulas_and_times_the_fill():
    # the model chooses with NCCL's formula (its copy of NCCL's table, no fill: NCCL 2.29 on 6 H100 runs NVLS at
    # 256-512 MiB, where its table rates NVLS and the ring alike) and adds the fill and extra loops to the time
    for size in (32 * 2**20, 64 * 2**20, 2**30):
        p = predict("allreduce", "gb200-nvl72", 8, size)
        assert (p.algo, p.proto) == ("nvls", "Simple")
        assert min(p.candidates_estimate_s, key=p.candidates_estimate_s.get) == "nvls/Simple"
        if size < 2**30:  # the fill, which NCCL's estimate leaves out, outweighs the table's slower bandwidth
            assert p.candidates_estimate_s["nvls/Simple"] < p.candidates_time_s["nvls/Simple"]


@pytest.mark.parametrize(("system", "gpus"), [("gb200-nvl72", 8), ("dgx-h100", 8), ("dgx-h100", 6), ("dgx-h100", 4)])
def test_the_model_and_nccls_formulas_pick_alike_on_one_domain(system, gpus):
    for mib in (0.5, 1.2, 2, 3, 8.5, 12, 14.5, 64, 512):
        p = predict("allreduce", system, gpus, mib * 2**20)
        assert f"{p.algo}/{p.proto}" == min(p.candidates_estimate_s, key=p.candidates_estimate_s.get), mib


@settings(max_examples=80, deadline=None)
@given(a=st.integers(1, 2**34), b=st.integers(1, 2**34), system=st.sampled_from(["dgx-h100", "gb200-nvl72"]))
def test_nvls_time_grows_with_size_between_chunk_thresholds(a, b, system):
    lo, hi = sorted((a, b))
    g = 8 if system == "dgx-h100" else 72
    p = pipeline.nvls_allreduce(catalog.systems()[system].gpu, g)
    t = [predict("allreduce", system, g, s, algo="nvls").time_s for s in (lo, hi)]
    if p.chunk_bytes_at(lo) == p.chunk_bytes_at(hi):
        assert t[0] <= t[1] * (1 + 1e-12)
    else:  # a larger chunk: faster by at most the smaller call's extra loops
        assert t[0] - p.extra_loops_s(lo) <= t[1] * (1 + 1e-12)


def test_the_extra_loops_are_where_published_sweeps_are_slow():
    # one-node NVLS runs lose most, against a smooth curve, in the middle of a chunk band (32 MiB, 512 MiB on
    # 8 H100; 1 GiB on 8 GB200); without the extra loops the model was 6-12 % fast there (8 % on GB200)
    from nvcourse.costmodel import sweeps

    err = {(r.point.sweep, r.point.bytes): r.error for r in sweeps.compare()}
    for sweep in ("azure-nd-h100-v5-allreduce", "nvidia-dgxc-h100-allreduce-8gpu", "aws-batch-p5-h100-allreduce-8gpu"):
        assert abs(err[sweep, 32 * 2**20]) < 0.03 and abs(err[sweep, 512 * 2**20]) < 0.03
    assert abs(err["oci-oke-gb200-mnnvl-8gpu-allreduce", 2**30]) < 0.03
    # what the term does not explain, left visible: GB200 at 32-64 MiB is still ~18 % fast (the model's pick there,
    # a ring, and NVLS forced alike)
    assert err["oci-oke-gb200-mnnvl-8gpu-allreduce", 64 * 2**20] < -0.15
    forced = predict("allreduce", "gb200-nvl72", 8, 64 * 2**20, algo="nvls").time_s
    published = next(p.time_s for p in sweeps.points() if p.sweep == "oci-oke-gb200-mnnvl-8gpu-allreduce"
                     and p.bytes == 64 * 2**20)
    assert forced / published - 1 < -0.15


@pytest.mark.parametrize(("loop_latency_s", "lo", "hi"), [(0.0, 0.035, 0.07), (2e-6, 0.02, 0.03), (5e-6, 0.02, 0.03)])
def test_the_large_band_does_not_hang_on_the_exact_constant(monkeypatch, loop_latency_s, lo, hi):
    # the all-reduce >= 16 MiB band: without the extra loops 4.2 % (6.3 % before the one-node 8-H100 run of 2026-12-06
    # joined the calibration runs, 3.9 % since six runs once held out count as seen, 2026-12-07); any per-loop cost from
    # 2 to 5 us gives 2-3 %
    import dataclasses

    from nvcourse.costmodel import sweeps

    real = pipeline.nvls_allreduce

    def with_cost(gpu_id, gpus):
        p = real(gpu_id, gpus)
        return None if p is None else dataclasses.replace(p, loop_latency_s=loop_latency_s)

    monkeypatch.setattr(pipeline, "nvls_allreduce", with_cost)
    # the calibration runs on the catalog's own NICs (the AWS EFA runs, added later, have no one-node NVLS call)
    rows = [r for r in sweeps.compare() if r.point.covered and not (r.point.fabric or "").startswith("efa-")
            and r.point.op == "allreduce"]
    median = sweeps.band_medians(rows)[">= 16 MiB"][0]
    assert lo <= median <= hi
