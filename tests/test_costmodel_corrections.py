"""NCCL's size corrections (tree bandwidth at medium sizes, the multi-node ring plateau) and the host CPU terms,
worked by hand from NCCL 2.30.7 src/graph/tuning.cc (lines 225-233, 262-272, 620-654)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nvcourse import catalog
from nvcourse.costmodel import configure, pair_cost, predict_sweep, tuning
from nvcourse.costmodel.corrections import SizeCorrection, for_pair
from nvcourse.costmodel.protocols import latency_s


def test_every_system_names_its_host_cpu():
    for sid, s in catalog.systems().items():
        assert s.host_cpu in catalog.HOST_CPUS, f"{sid}: host_cpu {s.host_cpu!r}"
        assert "host_cpu" in s.src, sid
    assert catalog.get_system("dgx-a100").host_cpu == "amd"  # DGX A100: dual AMD Rome 7742
    assert catalog.get_system("gb200-nvl72").host_cpu == "arm"  # Grace


def test_tree_ll128_at_1_mib_runs_at_six_tenths_of_its_bandwidth():
    # 1 MiB: log2(2^20 / 64) = 14; treeCorrectionFactor[LL128][14] = 0.6
    c = configure("dgx-h100", 8, 2)
    cs = pair_cost("allreduce", "tree", "LL128", c)
    s = 2**20
    assert cs.correction is not None
    assert cs.time(s) == pytest.approx(cs.latency_s + s * cs.s_per_byte / 0.6, rel=1e-12)
    # LL at 256 KiB (index 12) 0.4; Simple at 1 GiB (index 24, past the table) 1.0
    assert pair_cost("allreduce", "tree", "LL", c).correction.bw_factor(2**18) == pytest.approx(0.4)
    assert pair_cost("allreduce", "tree", "Simple", c).correction.bw_factor(2**30) == pytest.approx(1.0)
    # Simple at 256 MiB: index 22 = 0.9 (the table's last entry NCCL uses for Tree, index < 23)
    assert pair_cost("allreduce", "tree", "Simple", c).correction.bw_factor(2**28) == pytest.approx(0.9)


def test_factors_are_interpolated_between_powers_of_two_so_time_never_falls():
    c = configure("dgx-h100", 8, 2)
    cs = pair_cost("allreduce", "tree", "LL", c)
    f = cs.correction.bw_factor
    assert f(2**19) == pytest.approx(0.4) and f(2**20) == pytest.approx(0.5)  # NCCL's values at powers of two
    assert 0.4 < f(3 * 2**18) < 0.5
    s = np.geomspace(8, 2**34, 2000)
    assert np.all(np.diff(cs.time(s)) >= -1e-15)  # never falls (flat where the channel ramp holds it)


def test_nvlstree_correction_needs_blackwell_and_an_x86_host():
    rows = {
        sid: for_pair("allreduce", "nvlstree", "Simple", configure(sid, g, 2))
        for sid, g in (("dgx-b200", 8), ("gb200-nvl72", 72), ("dgx-h100", 8))
    }
    assert rows["dgx-b200"] is not None and len(rows["dgx-b200"].bw_factors) == 24
    assert rows["gb200-nvl72"] is None  # Grace is Arm
    assert rows["dgx-h100"] is None  # Hopper


def test_ring_plateau_only_across_nodes_with_simple():
    one = configure("dgx-a100", 8, 1)
    two = configure("dgx-a100", 8, 2)
    v100 = configure("dgx-1-v100", 8, 2)
    assert for_pair("allreduce", "ring", "Simple", one) is None
    assert for_pair("allreduce", "ring", "LL", two) is None
    assert for_pair("allgather", "ring", "Simple", two) is None
    a = for_pair("allreduce", "ring", "Simple", two)
    assert a.latency_multiplier == 1.4 and a.latency_from_bytes == 64 * 24 * 16  # 24 channels on A100 (nccl-tests#100)
    h = for_pair("allreduce", "ring", "Simple", configure("dgx-h100", 8, 2))
    assert h.latency_from_bytes == 64 * 16 * 16  # 16 channels on Hopper, 16 ranks
    assert for_pair("allreduce", "ring", "Simple", v100).latency_multiplier == 1.9
    assert for_pair("allreduce", "ring", "Simple", v100).latency_from_bytes == 64 * 1 * 16  # no Volta count: 1
    cs = pair_cost("allreduce", "ring", "Simple", two)
    assert cs.latency_at(2**20) == pytest.approx(1.4 * cs.latency_s)


def test_amd_host_pays_two_microseconds_per_network_step_and_a_lower_ll_cap():
    # DGX A100 (AMD), 2 nodes, ring: 30 steps, 2 of them across the network.
    c = configure("dgx-a100", 8, 2)
    # LL: 6.6 + 28 x max(0.6, 2.0) + 2 x 2.7 = 68.0 us (Intel would be 6.6 + 28 x 1.0 + 5.4 = 40.0)
    assert latency_s("allreduce", "ring", "LL", c) * 1e6 == pytest.approx(68.0)
    # Simple: 8.4 + 28 x max(3.4, 3 x 2.0) + 2 x 14 = 204.4 us
    assert latency_s("allreduce", "ring", "Simple", c) * 1e6 == pytest.approx(204.4)
    # Intel host (DGX H100), same shape: 8.4 + 28 x max(3.4, 3.0) + 28 = 131.6 us
    assert latency_s("allreduce", "ring", "Simple", configure("dgx-h100", 8, 2)) * 1e6 == pytest.approx(131.6)
    # LL cap across 2 nodes: AMD row llMaxBws[1][1] = 22.5 GB/s, Intel row llMaxBws[0][1] = 39.0 GB/s
    assert tuning.ll_max_bw_GBps("ampere", 2, "amd") == 22.5 and tuning.ll_max_bw_GBps("ampere", 2, "intel") == 39.0
    # Arm (Grace) is not AMD: NCCL gives it Intel's row and 1 us of overhead (x 3 with Simple)
    assert tuning.ll_max_bw_GBps("blackwell", 2, "arm") == 39.0
    assert tuning.net_overhead_us("arm", "Simple") == 3.0 and tuning.net_overhead_us("amd", "Simple") == 6.0
    assert tuning.net_overhead_us("intel", "LL") == 1.0


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from([("dgx-h100", 8, 2), ("dgx-a100", 8, 4), ("dgx-b200", 8, 2), ("dgx-1-v100", 8, 2)]),
    st.lists(st.integers(1, 2**34), min_size=2, max_size=8),
)
def test_time_still_grows_with_size_with_the_corrections(cfg, sizes):
    system, g, k = cfg
    s = np.sort(np.array(sizes, dtype=float))
    for algo in ("auto", "tree", "nvlstree", "ring"):
        try:
            sw = predict_sweep("allreduce", system, g, s, nodes=k, algo=algo)
        except ValueError:
            continue
        # the envelope NCCL picks on (before the channel ramp), and each pair's time with it, never fall
        t = np.min([np.asarray(c.choice_time(s)) for c in sw.costs.values()], axis=0)
        assert np.all(np.diff(t) >= -1e-15), algo
        for key, c in sw.costs.items():
            tc = np.asarray(c.time(s))
            assert np.all(np.diff(tc) >= -1e-12 * tc[1:]), (algo, key)


def test_size_correction_defaults_to_the_straight_line():
    c = SizeCorrection()
    assert float(c.bw_factor(1234)) == 1.0 and float(c.latency_factor(2**40)) == 1.0


def test_channel_ramp_follows_nccls_rule():
    # src/enqueue.cc: while (nBytes < nc * nt * threadThreshold) nc--; ring LL on 8 ranks: nt = 512 threads,
    # threshold 8 B x 8 ranks = 64 B per thread, so one channel per 32 KiB; 16 channels on H100 (nccl#892)
    from nvcourse.costmodel.corrections import channel_ramp

    c = configure("dgx-h100", 8)
    r = channel_ramp("ring", "LL", c)
    assert (r.channels, r.bytes_per_channel) == (16, 512 * 8 * 8)
    assert float(r.factor(2**16)) == pytest.approx(2 / 16) and float(r.factor(2**19)) == 1.0
    assert channel_ramp("ring", "Simple", c).bytes_per_channel == 512 * 64  # Simple: 64 B per thread
    assert channel_ramp("nvls", "Simple", c) is None  # NVLS takes its own channel count
    assert channel_ramp("ring", "LL", configure("dgx-a100", 8)).channels == 24  # nccl-tests#100
    assert channel_ramp("ring", "LL", configure("dgx-1-v100", 8)) is None  # no published V100 channel count
    # NCCL's own estimate leaves the ramp out: on 2 H100 nodes at 4 KiB, tree/LL is 6.8 + 2 x (7 x 0.6 + 5.0) =
    # 25.2 us + bytes in NCCL's formulas; the model's time adds the bytes on one channel
    p = predict_sweep("allreduce", "dgx-h100", 8, [4096], nodes=2)
    cost = p.costs["tree/LL"]
    assert float(cost.nccl_estimate(4096)) == pytest.approx(25.5e-6, abs=0.1e-6)
    assert float(cost.time(4096)) > float(cost.nccl_estimate(4096)) + 4e-6
