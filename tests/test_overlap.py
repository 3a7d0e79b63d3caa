"""Overlap timelines and communication rooflines against hand-worked cases."""

import pytest

from nvcourse import overlap as ov
from nvcourse import rooflines as rf


def ar(n):  # a hand-worked collective: 0.3 s for a 25 MB bucket, whatever else
    return 0.3


def test_default_bucket_is_ddp_25_mib():
    assert ov.default_bucket_bytes() == 25 * 2**20


def test_buckets_overlap_backward_and_leave_the_tail():
    # 100 MB of gradients over a 1 s backward, 25 MB buckets: ready at 0.25, 0.5, 0.75, 1.0 s.
    # all-reduces (0.3 s each): [0.25, 0.55], [0.55, 0.85], [0.85, 1.15], [1.15, 1.45] -> step 1.45 s, 0.45 s exposed
    t = ov.dp_bucket_timeline(100e6, 1.0, 25e6, ar)
    comm = [x for i in t.intervals if i.stream == "comm" for x in (i.start, i.end)]
    assert comm == pytest.approx([0.25, 0.55, 0.55, 0.85, 0.85, 1.15, 1.15, 1.45])
    assert t.total_s == pytest.approx(1.45)
    assert t.exposed_s == pytest.approx(0.45)
    assert t.notes["tail_s"] == pytest.approx(0.45)
    assert t.exposed_intervals() == [pytest.approx((1.0, 1.45))]


def test_one_big_bucket_hides_nothing():
    t = ov.dp_bucket_timeline(100e6, 1.0, 200e6, ar)
    assert t.notes["buckets"] == 1 and t.exposed_s == pytest.approx(0.3)


def test_sm_contention_slows_the_overlapped_backward():
    # half the SMs taken while a collective runs. Bucket 2 needs 0.25 s of work from 0.25 s: 0.3 s at half
    # speed gives 0.15, then 0.1 at full speed -> ready at 0.65; the same for buckets 3 (1.05) and 4 (1.45).
    t = ov.dp_bucket_timeline(100e6, 1.0, 25e6, ar, sm_fraction=0.5)
    comm = [x for i in t.intervals if i.stream == "comm" for x in (i.start, i.end)]
    assert comm == pytest.approx([0.25, 0.55, 0.65, 0.95, 1.05, 1.35, 1.45, 1.75])
    assert t.slowdown_s == pytest.approx(0.45)
    assert t.total_s == pytest.approx(1.75)


def test_latency_per_bucket_makes_tiny_buckets_lose():
    # alpha 10 ms per all-reduce + 1 GB/s: 1 MB buckets pay 100 latencies (1 s) > the 0.5 s backward
    comm = lambda n: 0.01 + n / 1e9  # noqa: E731
    small = ov.dp_bucket_timeline(100e6, 0.5, 1e6, comm).exposed_s
    mid = ov.dp_bucket_timeline(100e6, 0.5, 10e6, comm).exposed_s
    assert small == pytest.approx(100 * 0.011 - 0.5 + 0.0, abs=0.02)
    assert mid < small
    best, res = ov.best_bucket(100e6, 0.5, comm, sizes=[1e6, 5e6, 10e6, 50e6, 100e6])
    assert best == min(res, key=res.get)
    assert best in (5e6, 10e6)


def test_fsdp_without_prefetch_exposes_every_gather():
    # 4 layers, forward 1 s, backward 2 s per layer, all-gather 1.5 s, reduce-scatter 0.5 s.
    # No prefetch: 4 forward gathers + 4 backward gathers, and the last reduce-scatter, are on the
    # critical path: 12 + 8 x 1.5 + 3 x 0.5 (RS before the next gather) + 0.5 = 26 s.
    t = ov.fsdp_timeline(4, 1.0, 2.0, 1.5, 0.5, prefetch=0)
    assert t.total_s == pytest.approx(26.0)
    assert t.exposed_s == pytest.approx(14.0)


def test_fsdp_prefetch_one_layer_ahead():
    # hand-worked in the docstring's order: the first gather (1.5), the forward waits 0.5 s at three layers
    # (gather 1.5 > forward 1), 0.5 s before the first backward, and the last reduce-scatter (0.5): 4 s
    t = ov.fsdp_timeline(4, 1.0, 2.0, 1.5, 0.5, prefetch=1)
    assert t.total_s == pytest.approx(16.0)
    assert t.exposed_s == pytest.approx(4.0)
    # when the gather is shorter than a layer's compute, one layer ahead hides all but the first gather and last RS
    t2 = ov.fsdp_timeline(4, 1.0, 2.0, 0.5, 0.5, prefetch=1)
    assert t2.exposed_s == pytest.approx(1.0)


def test_sequence_parallel_moves_the_same_bytes():
    b = ov.sp_bytes(16e6, 8)
    assert b["allreduce"] == pytest.approx(2 * 7 / 8 * 16e6)
    assert b["reducescatter"] + b["allgather"] == pytest.approx(b["allreduce"])


def test_tp_overlap_pipeline():
    comm = lambda n: 1e-6 * n / 1e6 + 0.0  # 1 us per MB, no latency  # noqa: E731
    # no overlap: 4 ms GEMM + 2 ms comm
    r1 = ov.tp_overlap_time(4e-3, comm, 2000e6 * 1, chunks=1)
    assert r1["total_s"] == pytest.approx(6e-3) and r1["exposed_s"] == pytest.approx(2e-3)
    # 4 chunks: 1 + 3 x max(1, 0.5) + 0.5 = 4.5 ms: 0.5 ms exposed (one chunk of the comm)
    r4 = ov.tp_overlap_time(4e-3, comm, 2000e6, chunks=4)
    assert r4["total_s"] == pytest.approx(4.5e-3) and r4["exposed_s"] == pytest.approx(0.5e-3)
    # SMs taken: the GEMM runs at 80 %: g = 5 ms; 1.25 + 3 x 1.25 + 0.5 = 5.5 ms
    r4s = ov.tp_overlap_time(4e-3, comm, 2000e6, chunks=4, sm_fraction=0.2)
    assert r4s["total_s"] == pytest.approx(5.5e-3)


def test_cp_ring_attention_threshold():
    # s/cp = 4096, h = 8192, kv = 1024, C = 500e12, W = 50e9, causal: compute 0.5 x 4 x 4096^2 x 8192 / 5e14
    # = 0.5498 ms; send 2 x 4096 x 1024 x 2 / 5e10 = 0.3355 ms -> hidden. Threshold C·kv·2/(2·0.5·h·W) = 2500.
    r = ov.cp_ring_attention(seq=32768, cp=8, hidden=8192, kv_hidden=1024, flops_per_s=500e12, link_Bps=50e9)
    assert r["step_compute_s"] == pytest.approx(0.5 * 4 * 4096**2 * 8192 / 500e12)
    assert r["step_comm_s"] == pytest.approx(2 * 4096 * 1024 * 2 / 50e9)
    assert r["exposed_s"] == 0
    assert r["threshold_tokens_per_gpu"] == pytest.approx(2500)
    short = ov.cp_ring_attention(seq=8192, cp=8, hidden=8192, kv_hidden=1024, flops_per_s=500e12, link_Bps=50e9)
    assert short["exposed_s"] > 0


def test_bad_inputs_name_the_parameter():
    with pytest.raises(ValueError, match="bucket_bytes"):
        ov.dp_bucket_timeline(1e9, 1.0, 0, ar)
    with pytest.raises(ValueError, match="sm_fraction"):
        ov.dp_bucket_timeline(1e9, 1.0, 1e6, ar, sm_fraction=1.0)
    with pytest.raises(ValueError, match="prefetch"):
        ov.fsdp_timeline(4, 1, 1, 1, 1, prefetch=-1)
    with pytest.raises(ValueError, match="tp"):
        rf.tp_roofline(28672, 1, 1e15, 1e11)


def test_rooflines_closed_forms():
    # H100 at peak over its NIC share: C/W = 989e12 / 47e9 = 21,043 tokens per GPU
    C, W = rf.gpu_rates("dgx-h100", link="nic")
    assert C / W == pytest.approx(989e12 / 47e9)
    r = rf.dp_roofline(8192, C, W)
    assert r.comm_bound and r.threshold == pytest.approx(21042.55, rel=1e-5)
    assert rf.fsdp_roofline(32768, C, W).comm_bound is False
    # TP8 of Llama 3 70B's SwiGLU MLP (F = 28672) over NVLink (370.8 GB/s): threshold 2·7/3 · 2667 = 12,447
    C, W = rf.gpu_rates("dgx-h100", link="nvlink")
    t = rf.tp_roofline(28672, 8, C, W)
    assert t.threshold == pytest.approx(2 * 7 / 3 * 989e12 / 370.8e9)
    assert not t.comm_bound
    # EP of DeepSeek-V3's experts (F_e = 2048) over the NIC, BF16, 7/8 remote: 2·0.875·21043/3 = 12,275 > 2048
    C, W = rf.gpu_rates("dgx-h100", link="nic")
    e = rf.ep_roofline(2048, C, W, remote_fraction=7 / 8)
    assert e.comm_bound and e.threshold == pytest.approx(2 * 0.875 * C / (3 * W))


def test_min_hiding_bucket_closed_form():
    # G = 100 MB, backward 0.5 s, alpha 10 ms, 1 GB/s: B >= 1e8 x 0.01 / (0.5 - 0.1) = 2.5 MB
    b = ov.min_hiding_bucket(100e6, 0.5, 0.01, 1e-9)
    assert b == pytest.approx(2.5e6)
    comm = lambda n: 0.01 + n / 1e9  # noqa: E731
    # 3 MB buckets: each all-reduce (13 ms) ends before the next bucket is ready (every 15 ms), so only the end
    # shows: bucket 33 is ready at 0.495 s and ends at 0.508 s, then the last 1 MB bucket takes 11 ms: 19 ms exposed
    t = ov.dp_bucket_timeline(100e6, 0.5, 3e6, comm)
    assert t.notes["buckets"] == 34
    assert t.exposed_s == pytest.approx(0.495 + 0.013 + 0.011 - 0.5)
    assert ov.min_hiding_bucket(100e6, 0.05, 0.01, 1e-9) == float("inf")  # 0.1 s of bandwidth > 0.05 s backward


def test_dp_roofline_with_node_local_reduction():
    r = rf.dp_roofline(8192, 989e12, 47e9, per_node=8)
    assert r.threshold == pytest.approx(989e12 / (8 * 47e9))
    assert not r.comm_bound


def test_overlap_data_is_sourced():
    d = ov.data()
    keys = set(d["sources"])
    for name in ("ddp", "sm", "defaults"):
        for field, src in d[name]["src"].items():
            assert field in d[name], field
            assert src in keys or src.startswith(("derived:", "assumption:")), (name, field, src)
    share = d["sm"]["deepseek_comm_sms"] / d["sm"]["h100_sms"]
    assert d["defaults"]["comm_sm_fraction"] == pytest.approx(share, abs=0.01)
