"""Cost model: formulas against hand-worked examples, properties, and bad input.

Hand-worked numbers use the catalog figures written out in the comments (so a catalog change that
moves them shows up here as a failure to look at, not silently):
  NVLink 4: 25 GB/s per link per direction x efficiency 0.824; H100: 18 links -> 370.8e9 B/s; α 3.4 µs
  NVLink 3: 25 GB/s x 0.80; A100: 12 links -> 240e9 B/s
  NVLink 2: 25 GB/s x 0.80 = 20e9 B/s per link (DGX-1 V100, 6 links per GPU)
  IB HDR 25 GB/s x 0.96 = 24e9 B/s; IB NDR 50 GB/s x 0.94 = 47e9 B/s; α_net 14 µs
  PCIe 4 x16 31.5 GB/s x 0.88 = 27.72e9 B/s; α 5.7 µs
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nvcourse import catalog
from nvcourse.costmodel import (
    NCCL_ALGORITHMS,
    OPERATIONS,
    algorithms,
    busbw_factor,
    predict,
    predict_sweep,
)

GiB = 2**30
H100_B = 18 * 25e9 * 0.824  # 370.8e9 B/s
A100_B = 12 * 25e9 * 0.80  # 240e9 B/s
NVL_A = 3.4e-6
NET_A = 14e-6


# ---------------------------------------------------------------- busbw factors (nccl-tests PERFORMANCE.md)
@pytest.mark.parametrize(
    "op,n,factor",
    [
        ("allreduce", 8, 14 / 8),  # 2(n-1)/n
        ("allreduce", 2, 1.0),
        ("reducescatter", 8, 7 / 8),  # (n-1)/n
        ("allgather", 4, 3 / 4),
        ("alltoall", 16, 15 / 16),
        ("broadcast", 8, 1.0),
        ("reduce", 8, 1.0),
        ("sendrecv", 8, 1.0),
    ],
)
def test_busbw_factor(op, n, factor):
    assert busbw_factor(op, n) == pytest.approx(factor)


def test_busbw_factor_rejects_unknown_op():
    with pytest.raises(ValueError, match="op must be one of"):
        busbw_factor("allscatter", 4)


# ---------------------------------------------------------------- hand-worked formulas
def test_ring_allreduce_patarasuk_yuan():
    # Patarasuk & Yuan 2009: T = 2(p-1)α + 2(p-1)/p · S/B, plus NCCL's once-per-call base latency
    # (Simple ring 8.4 µs, tuning.cc). p = 8 H100, S = 1 GiB, Simple protocol:
    # 8.4 + 14 x 3.4 µs = 56.0 µs;  1.75 x 1073741824 B / 370.8e9 B/s = 5.06755 ms;  T = 5.12355 ms
    p = predict("allreduce", "dgx-h100", 8, GiB, algo="ring")
    assert p.proto == "Simple"
    assert p.time_s == pytest.approx(56.0e-6 + 1.75 * GiB / H100_B, rel=1e-9)
    assert p.time_s == pytest.approx(5.12355e-3, rel=1e-4)
    # busbw at 1 GiB: 1.75 x S/T = 1.75 x 1073741824 / 5.12355e-3 = 366.7 GB/s (just under 370.8)
    assert p.busbw_GBps == pytest.approx(366.7, rel=1e-3)


def test_ring_reducescatter_and_allgather_thakur():
    # Thakur, Rabenseifner & Gropp 2005, ring: T = (p-1)α + (p-1)/p · S/B, + NCCL's base 8.4 µs (Simple).
    # p = 8 A100, S = 256 MiB: 8.4 + 7 x 3.4 µs = 32.2 µs;  0.875 x 268435456 / 240e9 = 0.978671 ms;
    # T = 1.010871 ms
    for op in ("reducescatter", "allgather"):
        p = predict(op, "dgx-a100", 8, 256 * 2**20, algo="ring", proto="Simple")
        assert p.time_s == pytest.approx(1.010871e-3, rel=1e-5)
        # algbw = S/T = 265.55 GB/s; busbw = 7/8 of it = 232.36 GB/s
        assert p.busbw_GBps == pytest.approx(232.36, rel=1e-3)


def test_rabenseifner_allreduce_on_a_switch():
    # TRG 2005, recursive halving RS + recursive doubling AG: T = 2 log2 p α + 2 (p-1)/p · S/B.
    # p = 8 A100, S = 64 MiB: 6 x 3.4 µs = 20.4 µs;  1.75 x 67108864 / 240e9 = 489.335 µs;  T = 509.735 µs
    p = predict("allreduce", "dgx-a100", 8, 64 * 2**20, algo="rhd")
    assert p.time_s == pytest.approx(509.735e-6, rel=1e-5)
    # same bandwidth term as the ring (Simple), 8 fewer α and no base: the ring's 8.4 + 14 x 3.4 = 56.0 µs
    # -> 35.6 µs slower
    ring = predict("allreduce", "dgx-a100", 8, 64 * 2**20, algo="ring", proto="Simple")
    assert ring.time_s - p.time_s == pytest.approx(35.6e-6, rel=1e-6)


def test_rhd_on_the_pcie_tree_pays_for_shared_uplinks():
    # 4 GPUs = two leaf switches of one socket. Step 1 (distance 1, S/2) stays under a leaf: 27.72e9 B/s.
    # Step 2 (distance 2, S/4): GPUs 0->2 and 1->3 share leaf 0's x16 uplink: 13.86e9 B/s each.
    # RS: 2 x 5.7 µs + S (0.5/27.72e9 + 0.25/13.86e9) = 11.4 µs + S/27.72e9.  S = 1 GiB: 38.7461 ms
    p = predict("reducescatter", "pcie-8gpu", 4, GiB, algo="rhd")
    assert p.time_s == pytest.approx(11.4e-6 + GiB / 27.72e9, rel=1e-9)
    # the ring meets no shared link: NCCL's 8.4 + 3 x 5.7 µs (PCI, Simple) + 0.75 S / 27.72e9
    ring = predict("reducescatter", "pcie-8gpu", 4, GiB, algo="ring", proto="Simple")
    assert ring.time_s == pytest.approx(25.5e-6 + 0.75 * GiB / 27.72e9, rel=1e-9)


def test_pcie_ring_over_two_sockets_is_cpu_link_bound():
    # 8 GPUs: the ring crosses the CPU-to-CPU link once each way; NCCL's model of it (AMD_BW) is
    # 16 GB/s < 27.72 GB/s of a GPU's x16 link, so the ring's busbw tends to 16 GB/s.
    p = predict("allreduce", "pcie-8gpu", 8, 16 * GiB, algo="ring")
    assert p.busbw_GBps == pytest.approx(16.0, rel=2e-3)


def test_dgx1_cube_mesh_rings_use_all_six_links():
    # The hybrid cube-mesh (6 NVLink 2 per V100) splits into 3 Hamiltonian cycles; run both ways
    # they give 6 rings of 20 GB/s: busbw -> 120 GB/s.  4 GPUs = one fully connected quad:
    # 0-1 (1 link), 0-2 (1), 0-3 (2), 1-2 (2), 1-3 (1), 2-3 (2): 4 links per GPU -> 80 GB/s.
    assert predict("allreduce", "dgx-1-v100", 8, 64 * GiB, algo="ring").busbw_GBps == pytest.approx(120, rel=2e-3)
    assert predict("allreduce", "dgx-1-v100", 4, 64 * GiB, algo="ring").busbw_GBps == pytest.approx(80, rel=2e-3)
    # GPUs 0 and 1 share a single link: 20 GB/s
    assert predict("allreduce", "dgx-1-v100", 2, 64 * GiB, algo="ring").busbw_GBps == pytest.approx(20, rel=2e-3)


def test_nvls_allreduce_h100():
    # NVLS: each GPU sends and receives S(n+1)/n at B x 0.85 (NCCL nvlsEfficiency, Hopper).
    # n = 8: algbw -> 370.8 x 0.85 x 8/9 = 280.16 GB/s; busbw = 1.75 x 280.16 = 490.28 GB/s
    # (published: algbw ~275, busbw ~480, nccl-tests#212). Latency: one step of 25 µs.
    p = predict("allreduce", "dgx-h100", 8, 64 * GiB, algo="nvls")
    assert p.algbw_GBps == pytest.approx(280.16, rel=1e-3)
    assert p.busbw_GBps == pytest.approx(490.28, rel=1e-3)
    assert p.latency_s == pytest.approx(25e-6)
    # n = 5: 370.8 x 0.85 x 5/6 = 262.65 GB/s algbw; busbw x 8/5 = 420.2 GB/s (published 420, nccl#1455)
    assert predict("allreduce", "dgx-h100", 5, 64 * GiB, algo="nvls").busbw_GBps == pytest.approx(420.2, rel=1e-3)


def test_two_node_ring_is_nic_bound_and_tree_passes_the_nic_rate():
    # DGX A100, 2 nodes, 16 ranks. Node NICs: 8 x 24e9 = 192e9 B/s < 240e9 NVLink: ring busbw -> 192.
    ring = predict("allreduce", "dgx-a100", 8, 64 * GiB, nodes=2, algo="ring")
    assert ring.busbw_GBps == pytest.approx(192, rel=2e-3)
    # Tree on 2 nodes: each node sends S across (not 2S·15/16), the chain in the node carries 2S:
    # t/S = max(2/240e9, 1/192e9) = 1/120e9 -> algbw 120, busbw 1.875 x 120 = 225 GB/s > 192 (NCCL #812).
    tree = predict("allreduce", "dgx-a100", 8, 64 * GiB, nodes=2, algo="tree")
    assert tree.busbw_GBps == pytest.approx(225, rel=2e-3)
    assert tree.busbw_GBps > 8 * 25 * 0.96


def test_hierarchical_allreduce_two_dgx_h100():
    # RS in node (7 α + 7/8 S/B), ring AR of S/8 over each GPU's NIC (2 α_net + 2·1/2·(S/8)/47e9), AG in node.
    # S = 1 GiB: latency 14 x 3.4 + 2 x 14 = 75.6 µs;
    # bandwidth 1073741824 x (1.75/370.8e9 + 1/(8 x 47e9)) = 5.06755 ms + 2.85570 ms = 7.92325 ms
    p = predict("allreduce", "dgx-h100", 8, GiB, nodes=2, algo="hierarchical")
    assert p.latency_s == pytest.approx(75.6e-6)
    assert p.time_s == pytest.approx(75.6e-6 + GiB * (1.75 / H100_B + 1 / (8 * 47e9)), rel=1e-9)
    assert p.time_s == pytest.approx(7.99885e-3, rel=1e-4)


def test_multinode_ring_latency_uses_nic_alpha_for_inter_steps():
    # NCCL tuning.cc: of 2(n-1) = 30 steps, 2(k-1) = 2 cross the network. Simple: base 8.4 + 28 x
    # max(3.4, 3 x 1.0 µs net overhead) + 2 x 14 = 131.6 µs. LL: 6.6 + 28 x max(0.6, 1.0) + 2 x 2.7 = 40.0 µs
    p = predict("allreduce", "dgx-h100", 8, 1024, nodes=2, algo="ring", proto="Simple")
    assert p.latency_s == pytest.approx(131.6e-6)
    ll = predict("allreduce", "dgx-h100", 8, 1024, nodes=2, algo="ring", proto="LL")
    assert ll.latency_s == pytest.approx(40.0e-6)


def test_direct_alltoall_and_fabric_override():
    # one step through the switch: each GPU sends 7/8 S; S = 1 GiB: 3.4 µs + 0.875 S / 370.8e9, and NCCL's FIFO copies
    # each part twice, the second one 512 KiB chunk behind: the 7 messages of 128 MiB share the 32 point-to-point
    # channels, so 32 chunks at NVLink's rate come on top
    p = predict("alltoall", "dgx-h100", 8, GiB)
    assert p.algo == "direct"
    assert p.time_s == pytest.approx(3.4e-6 + 0.875 * GiB / H100_B + 32 * 512 * 1024 / H100_B, rel=1e-9)
    assert predict("alltoall", "dgx-h100", 8, GiB, registered=True).time_s == pytest.approx(
        3.4e-6 + 0.875 * GiB / H100_B, rel=1e-9)  # registered buffers: one copy
    # 2 nodes: 8/16 of S leaves the node over the GPU's own NIC: 0.5 S / 47e9 (IB NDR) vs 0.5 S / 11.75e9 (RoCE 100G),
    # after NCCL's point-to-point rendezvous: 2 x 14 us
    ndr = predict("alltoall", "dgx-h100", 8, GiB, nodes=2)
    roce = predict("alltoall", "dgx-h100", 8, GiB, nodes=2, fabric="roce-100g")
    assert ndr.time_s == pytest.approx(28e-6 + 0.5 * GiB / 47e9, rel=1e-9)
    assert roce.time_s == pytest.approx(28e-6 + 0.5 * GiB / 11.75e9, rel=1e-9)
    assert roce.fabric == "roce-100g"


def test_nvl72_node_is_the_nvlink_domain():
    # gpus counts GPUs per NVLink domain: 72 is allowed on NVL72 although a host (tray) has 4
    p = predict("allreduce", "gb200-nvl72", 72, GiB, algo="ring")
    assert p.ranks == 72
    with pytest.raises(ValueError, match="gpus"):
        predict("allreduce", "gb200-nvl72", 73, GiB)


def test_nvls_from_two_gpus_chosen_by_time():
    # ncclNvlsInit enables NVLS from 2 GPUs (nvls.cc line 262, "gpuCount < 2"); the tuner then chooses by time.
    # 2 H100: NVLS moves S x 3/2 per GPU at 0.85 of the links, the ring S x 1 at the full rate: the ring wins
    assert "nvls" in algorithms("allreduce", "dgx-h100", 2)
    assert predict("allreduce", "dgx-h100", 2, 4 * GiB, algo="nccl").algo == "ring"
    # 8 H100: S x 9/8 at 0.85 beats S x 7/4 at 1
    assert predict("allreduce", "dgx-h100", 8, 4 * GiB, algo="nccl").algo == "nvls"
    assert "nvls" not in algorithms("allreduce", "dgx-a100", 8)
    assert "nvls" not in algorithms("allreduce", "dgx-h100", 1, nodes=2)


# ---------------------------------------------------------------- properties
SYSTEMS = list(catalog.systems())
configs = st.sampled_from(SYSTEMS).flatmap(
    lambda s: st.tuples(
        st.just(s),
        st.integers(1, max(catalog.get_system(s).gpus_per_host, catalog.get_system(s).gpus_per_domain)),
        st.integers(1, 64),
        st.sampled_from(OPERATIONS),
    )
)
sizes_st = st.lists(st.integers(1, 2**36), min_size=2, max_size=20)


def _valid(sys_id, g, k):
    return g * k >= 2


@settings(max_examples=150, deadline=None)
@given(configs, sizes_st)
def test_time_never_falls_as_size_grows(cfg, sizes):
    sys_id, g, k, op = cfg
    if not _valid(sys_id, g, k):
        return
    s = np.sort(np.array(sizes, dtype=float))
    sw = predict_sweep(op, sys_id, g, s, nodes=k)
    # each pair's time, and the envelope NCCL picks on (before the channel ramp), never fall; the picked time may,
    # where NCCL leaves a pair its ramp slows for one it does not (NCCL picks the pair, then the channels)
    envelope = np.min([np.asarray(c.choice_time(s)) for c in sw.costs.values()], axis=0)
    for t in [envelope, *(np.asarray(c.time(s)) for c in sw.costs.values())]:
        assert np.all(np.diff(t) >= -1e-12 * t[1:])  # flat where NCCL's channel ramp holds the time: rounding only


@settings(max_examples=150, deadline=None)
@given(configs, sizes_st)
def test_auto_is_never_slower_than_any_algorithm(cfg, sizes):
    sys_id, g, k, op = cfg
    if not _valid(sys_id, g, k):
        return
    s = np.array(sizes, dtype=float)
    auto = predict_sweep(op, sys_id, g, s, nodes=k, algo="auto")
    nccl = predict_sweep(op, sys_id, g, s, nodes=k, algo="nccl")
    assert np.array_equal(auto.time_s, nccl.time_s)  # "nccl" is kept as a synonym of "auto"
    # auto picks the pair of least time before the channel ramp (NCCL picks the pair, then the channels), and
    # charges that pair's time; without the ramp that is never more than any NCCL pair's
    picked = [auto.costs[f"{a}/{p}"] for a, p in zip(auto.algo, auto.proto, strict=True)]
    chosen = np.array([float(c.choice_time(x)) for c, x in zip(picked, s, strict=True)])
    assert np.allclose(auto.time_s, [max(float(c.time(x)), auto.host_floor_s) for c, x in zip(picked, s, strict=True)])
    for a in algorithms(op, sys_id, g, k):
        if a not in NCCL_ALGORITHMS[op]:
            continue  # the course's own algorithms are not NCCL's: auto does not choose them
        for proto in ("LL", "LL128", "Simple"):
            try:
                single = predict_sweep(op, sys_id, g, s, nodes=k, algo=a, proto=proto)
            except ValueError:
                continue  # NCCL does not run this protocol with this algorithm here
            assert np.all(chosen <= np.asarray(single.costs[f"{a}/{proto}"].choice_time(s)) * (1 + 1e-12))


@settings(max_examples=200, deadline=None)
@given(configs, st.integers(1, 2**38))
def test_busbw_never_exceeds_the_links_unless_the_switch_reduces(cfg, nbytes):
    sys_id, g, k, op = cfg
    if not _valid(sys_id, g, k):
        return
    system = catalog.get_system(sys_id)
    scaleup = system.scaleup_achievable_GBps_dir  # links x line rate x efficiency, per GPU
    nic_node = g * system.nics_per_host * system.nic.achievable_GBps_dir / system.gpus_per_host
    for a in algorithms(op, sys_id, g, k):
        p = predict(op, sys_id, g, nbytes, nodes=k, algo=a)
        if a == "nvls":  # in-network reduction: busbw may pass the link rate, but not 2x it
            assert p.busbw_GBps <= 2 * scaleup
            continue
        if k == 1:
            assert p.busbw_GBps <= scaleup * (1 + 1e-9)
        elif a == "ring":  # every byte of the ring crosses the node's NICs
            limit = min(scaleup, nic_node) if g > 1 else nic_node
            assert p.busbw_GBps <= limit * (1 + 1e-9)


@settings(max_examples=60, deadline=None)
@given(configs, st.integers(1, 2**36))
def test_predict_agrees_with_sweep(cfg, nbytes):
    sys_id, g, k, op = cfg
    if not _valid(sys_id, g, k):
        return
    p = predict(op, sys_id, g, nbytes, nodes=k)
    sw = predict_sweep(op, sys_id, g, [nbytes], nodes=k)
    assert p.time_s == pytest.approx(sw.time_s[0], rel=1e-12)
    assert p.busbw_GBps == pytest.approx(p.algbw_GBps * busbw_factor(op, g * k))


# ---------------------------------------------------------------- speed
# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "kwargs,param,allowed",
    [
        (dict(op="allscatter"), "op", "allreduce"),
        (dict(system="dgx-z9"), "system", "dgx-h100"),
        (dict(gpus=9), "gpus", "from 1 to 8"),
        (dict(gpus=0), "gpus", "from 1 to 8"),
        (dict(gpus=2.5), "gpus", "integer"),
        (dict(nodes=0), "nodes", ">= 1"),
        (dict(gpus=1, nodes=1), "ranks", "gpus"),
        (dict(fabric="ib-qdr"), "fabric", "ib-ndr"),
        (dict(fabric="nvlink4"), "fabric", "roce-400g"),
        (dict(algo="magic"), "algo", "ring"),
        (dict(system="dgx-a100", algo="nvls"), "algo 'nvls'", "ring, tree, rhd, direct"),
        (dict(gpus=1, nodes=2, algo="nvls"), "from 2 GPUs", "ring"),
        (dict(gpus=6, algo="rhd"), "power-of-two", "ring"),
        (dict(algo="hierarchical"), "nodes >= 2", "ring"),
        (dict(op="alltoall", algo="ring"), "not an algorithm for alltoall", "direct"),
        (dict(nbytes=0), "nbytes", "> 0"),
        (dict(nbytes=-5), "nbytes", "> 0"),
    ],
)
def test_bad_input_names_parameter_and_allowed_values(kwargs, param, allowed):
    args = dict(op="allreduce", system="dgx-h100", gpus=8, nbytes=2**20, nodes=1, algo="auto", fabric=None)
    args.update(kwargs)
    with pytest.raises(ValueError) as exc:
        predict(
            args["op"], args["system"], args["gpus"], args["nbytes"], nodes=args["nodes"], algo=args["algo"],
            fabric=args["fabric"],
        )
    assert param in str(exc.value) and allowed in str(exc.value)


def test_bad_sizes_in_sweep():
    for bad in ([], [0, 1], [1, math.nan]):
        with pytest.raises(ValueError, match="sizes"):
            predict_sweep("allreduce", "dgx-h100", 8, bad)
