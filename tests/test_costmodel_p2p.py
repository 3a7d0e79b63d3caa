"""Point-to-point across nodes (costmodel/p2p.py): NCCL's rendezvous (two network crossings per call) and its
channels per message (addP2pToPlan), each carrying NCCL_P2P_PER_CHANNEL_NET_BW over the network."""

from __future__ import annotations

import pytest

from nvcourse.costmodel import configure, cost, p2p, predict

KiB, MiB = 1024, 1024 * 1024
NDR_Bps = 47e9  # one 400 Gb/s NIC at the catalog's 0.94
CHANNEL_Bps = 14e9  # NCCL_P2P_PER_CHANNEL_NET_BW


def test_two_network_crossings_over_nccls_own_transport_one_on_a_cloud_fabric():
    # the receiver's clear-to-send crosses the network before the data: 2 x the NIC's 14 us (NCCL's NET Simple step)
    assert predict("sendrecv", "dgx-b200", 8, 1024, nodes=2).latency_s == pytest.approx(28e-6)
    assert predict("sendrecv", "dgx-h100", 8, 1024, nodes=2, fabric="roce-400g").latency_s == pytest.approx(28e-6)
    # a cloud fabric's net plugin has its own protocol (aws-ofi-nccl sends small messages eagerly): one crossing
    assert p2p.crossings(configure("dgx-h100", 8, 2, "efa-p5")) == 1
    # inside one node nothing changes: NVLink, one step, no proxy
    one = cost("sendrecv", "direct", configure("dgx-b200", 8))
    assert one.steps == 1 and one.ramp is None


def test_channels_per_message_follow_addP2pToPlan():
    # B200, 8 nodes of 8 (64 ranks): 4 channels per network peer (ceil(50 GB/s / 14)), halved while x ceil(64 / 8)
    # exceeds the 16 p2p channels of 8-GPU nodes across nodes: 2; one channel per message up to the 128 KiB chunk, then
    # doubled while a part is over 128 KiB, up to those 2
    c = configure("dgx-b200", 8, 8)
    assert p2p.channels_per_peer(c) == (1, 2) and p2p.chunk_bytes(c) == 128 * KiB
    ramp = cost("sendrecv", "direct", c).ramp
    sizes = [1 * KiB, 64 * KiB, 128 * KiB, 256 * KiB, 512 * KiB, 1 * MiB, 64 * MiB]
    assert [int(x) for x in ramp.channels(sizes)] == [1, 1, 1, 2, 2, 2, 2]
    # 64 KiB on one channel: 28 us + 64 KiB / 14 GB/s; 64 MiB on two channels, 28 GB/s, under the NIC's rate
    assert predict("sendrecv", "dgx-b200", 8, 64 * KiB, nodes=8).time_s == pytest.approx(
        28e-6 + 64 * KiB / CHANNEL_Bps, rel=1e-9)
    assert 2 * CHANNEL_Bps < NDR_Bps
    assert predict("sendrecv", "dgx-b200", 8, 64 * MiB, nodes=8).time_s == pytest.approx(
        28e-6 + 64 * MiB / (2 * CHANNEL_Bps), rel=1e-9)
    # on 2 nodes (16 ranks) the 4 channels stay (4 x 2 <= 16): the NIC's rate
    assert p2p.channels_per_peer(configure("dgx-b200", 8, 2)) == (1, 4)
    assert predict("sendrecv", "dgx-b200", 8, 64 * MiB, nodes=2).time_s == pytest.approx(
        28e-6 + 64 * MiB / NDR_Bps, rel=1e-9)


def test_across_nodes_of_8_gpus_the_p2p_channels_come_from_the_across_node_count():
    from nvcourse.costmodel import tuning

    t = tuning.raw()["p2p_net"]
    assert t["coll_channels_8gpu_nodes"] == 16 and "nccl/issues/1453" in t["coll_channels_8gpu_nodes_src"]
    # A100 prints 24 on one node (32 p2p channels there), 16 across nodes of 8: 16 nodes (128 ranks) halve a peer's 2
    # channels (ceil(25 GB/s / 14)) to 1, where the one-node count (32) kept 2
    assert tuning.coll_channels("ampere") == 24
    assert p2p.channels_per_peer(configure("dgx-a100", 8, 16)) == (1, 1)
    # fewer GPUs per node: no log gives the count, so the model keeps its one-node figure (none for B200: 64 channels,
    # 4 per peer), though NCCL's search gives one GPU and one NIC per node 4 collective channels, hence (1, 2) in NCCL
    assert p2p.channels_per_peer(configure("dgx-b200", 1, 8)) == (4, 4)


def test_channel_count_halves_with_the_ranks_where_the_channel_count_is_known():
    # H100 boards: 16 collective channels (a published log), so 16 p2p channels: 64 ranks leave 2 per peer
    assert p2p.channels_per_peer(configure("dgx-h100", 8, 2)) == (1, 4)
    assert p2p.channels_per_peer(configure("dgx-h100", 8, 8)) == (1, 2)


def test_no_per_channel_figure_before_2_29_and_the_gb200_chunk():
    # NCCL_P2P_PER_CHANNEL_NET_BW is new in 2.29: before, the NIC's rate from the first byte (the rendezvous stays)
    old = predict("sendrecv", "dgx-b200", 8, 64 * KiB, nodes=2, nccl_version="2.28")
    assert old.time_s == pytest.approx(28e-6 + 64 * KiB / NDR_Bps, rel=1e-9)
    # an ARM host with a Blackwell GPU doubles NCCL's p2p chunk across nodes (GB200 trays)
    assert p2p.chunk_bytes(configure("gb200-nvl72", 72, 2)) == 256 * KiB


def test_alltoall_across_nodes_pays_send_recvs_rendezvous_as_chapter_05s_moe_model():
    # an all-to-all across nodes is NCCL's grouped point-to-point over the same transport: the send/recv's two network
    # crossings (clear-to-send, then data), once per call as every peer is sent to at once; the two models agree
    from nvcourse.fabric.moe import MoEConfig, moe_alltoall_time

    c = configure("dgx-h100", 8, 2)
    a2a = cost("alltoall", "direct", c)
    assert a2a.latency_s == pytest.approx(2 * 14e-6) and a2a.steps == 2 and a2a.ramp is None
    assert a2a.latency_s == cost("sendrecv", "direct", c).latency_s
    efa = configure("dgx-h100", 8, 2, fabric="efa-p5")  # a cloud fabric's plugin sends eagerly: the data crossing only
    assert cost("alltoall", "direct", efa).latency_s == pytest.approx(efa.nic.alpha_s)
    moe = moe_alltoall_time(MoEConfig(hidden=4096, tokens=4096, experts=64, top_k=8), 16, "dgx-h100")
    assert moe.alpha_s == pytest.approx(a2a.latency_s)


def test_send_recv_on_p5_is_striped_over_the_gpus_four_efas():
    # aws-ofi-nccl's RDMA protocol (p5's default) joins the 4 EFAs nearest a GPU into one NCCL device and stripes a
    # message over ceil(size / 128 KiB) of them; p4d and p4de (SENDRECV protocol) give each EFA its own device
    rail = 12.5e9 * 0.94  # one 100 Gb/s EFA at the catalog's 0.94
    p5 = configure("dgx-h100", 8, 2, "efa-p5")
    rails = cost("sendrecv", "direct", p5).ramp
    assert [float(x) for x in rails.channels([64 * KiB, 128 * KiB, 256 * KiB, 512 * KiB, 1 * MiB])] == [1, 1, 2, 4, 4]
    # one crossing (the plugin's own protocol), then 64 KiB on one rail; 1 GiB on all four
    assert predict("sendrecv", "dgx-h100", 8, 64 * KiB, nodes=2, fabric="efa-p5").time_s == pytest.approx(
        14e-6 + 64 * KiB / rail, rel=1e-9)
    assert predict("sendrecv", "dgx-h100", 8, 1024 * MiB, nodes=2, fabric="efa-p5").time_s == pytest.approx(
        14e-6 + 1024 * MiB / (4 * rail), rel=1e-9)
    p4d = configure("dgx-a100", 8, 2, "efa-p4d")
    assert p2p.plugin_rails(p4d, s_per_byte=1.0, other_s_per_byte=0.0) is None
    assert predict("sendrecv", "dgx-a100", 8, 1024 * MiB, nodes=2, fabric="efa-p4d").time_s == pytest.approx(
        14e-6 + 1024 * MiB / rail, rel=1e-9)
    # a catalog NIC keeps NCCL's own channels (net_ramp), never the plugin's rails
    assert p2p.plugin_rails(configure("dgx-h100", 8, 2), s_per_byte=1.0, other_s_per_byte=0.0) is None


def test_one_node_send_recv_small_enough_for_ll_keeps_nvlinks_rate():
    # NCCL runs a one-node message on LL up to 16 KiB x its channels: p2pnChannelsPerPeer (32 on H100: 512 KiB)
    # before 2.29, the message's own Simple channel count (one up to 64 KiB: 16 KiB) from 2.29; the split over
    # Simple channels (21.1 GB/s each) and its second copy apply above that only
    from nvcourse import _data
    from nvcourse.costmodel import p2p
    from nvcourse.costmodel.config import configure

    KiB = 1024
    rate = _data.load("nccl_tuning")["p2p_nvlink"]["per_channel_GBps"]["hopper"] * 1e9
    assert rate == 21.1e9
    new = configure("dgx-h100", 8, nccl_version="2.30")
    ramp = p2p.nvlink_ramp(new, s_per_byte=new.dom.shift_inv)
    factor = [float(f) for f in ramp.factor([16 * KiB, 32 * KiB])]
    assert factor[0] == 1.0 and factor[1] == pytest.approx(rate * new.dom.shift_inv)  # one channel at 21.1 GB/s
    assert float(ramp.fill_s(16 * KiB)) == 0.0 and float(ramp.fill_s(32 * KiB)) == pytest.approx(32 * KiB / rate)
    old = configure("dgx-h100", 8, nccl_version="2.28")
    ramp = p2p.nvlink_ramp(old, s_per_byte=old.dom.shift_inv)
    factor = [float(f) for f in ramp.factor([512 * KiB, 1024 * KiB])]
    assert factor[0] == 1.0 and factor[1] == pytest.approx(4 * rate * old.dom.shift_inv)  # 4 channels
    assert p2p.nvlink_ramp(configure("dgx-h100", 8, nccl_version="2.21"), s_per_byte=1e-12) is None
    # A100: no per-channel figure (NVLink's rate from the first byte), 32 channels by NCCL's rule (pow2Up of 24)
    a100 = p2p.nvlink_ramp(configure("dgx-a100", 8), s_per_byte=1e-12)
    assert a100.per_channel_Bps == float("inf") and a100.channels_max == 32 and float(a100.factor(2**30)) == 1.0
    # no channel count known (Blackwell), off NVSwitch, across nodes: no split, no second copy
    assert p2p.nvlink_ramp(configure("dgx-b200", 8), s_per_byte=1e-12) is None
    assert p2p.nvlink_ramp(configure("pcie-8gpu", 8), s_per_byte=1e-12) is None
    assert p2p.nvlink_ramp(configure("dgx-h100", 8, nodes=2), s_per_byte=1e-12) is None


def test_one_node_point_to_point_pays_the_fifos_second_copy_unless_registered():
    # src/device/sendrecv.h + prims_simple.h: without registered buffers a part goes into the receiver's FIFO and out
    # of it, the second copy one 512 KiB chunk behind: a channel pays one chunk more than its part, at its rate
    from nvcourse.costmodel import predict
    from nvcourse.costmodel.config import configure

    MiB = 2**20
    c = configure("dgx-h100", 8, nccl_version="2.28")
    nv = 1 / c.dom.shift_inv  # 370.8 GB/s
    # send/recv of 32 MiB: 4 channels of 21.1 GB/s (84.4 GB/s < NVLink), parts of 8 MiB, one 512 KiB chunk each more
    want = c.dom.alpha_s + (32 * MiB + 4 * 0.5 * MiB) / (4 * 21.1e9)
    assert predict("sendrecv", "dgx-h100", 8, 32 * MiB, nccl_version="2.28").time_s == pytest.approx(want, rel=1e-9)
    # a 1 MiB hand-off between 2 GPUs: 16 channels (336 GB/s < NVLink), parts of 64 KiB, each copied twice in a row
    two = predict("sendrecv", "dgx-h100", 2, 1 * MiB, nccl_version="2.30").time_s
    assert two == pytest.approx(c.dom.alpha_s + 2 * MiB / min(nv, 16 * 21.1e9), rel=1e-9)
    # registered buffers or a CUDA graph (NCCL registers a captured call's buffers): one copy
    for kw in ({"registered": True}, {"launch": "cuda-graphs"}):
        once = predict("sendrecv", "dgx-h100", 2, 1 * MiB, nccl_version="2.30", **kw).time_s
        assert once == pytest.approx(c.dom.alpha_s + MiB / min(nv, 16 * 21.1e9), rel=1e-9)
    # an all-to-all of 32 MiB on 8 GPUs: 4 MiB to each of 7 peers on 4 channels each, NVLink-bound (7 x 4 x 21.1 >
    # NVLink); the second copy's chunk on each of the 4 channels at the message's share of NVLink
    a2a = predict("alltoall", "dgx-h100", 8, 32 * MiB, nccl_version="2.28").time_s
    per_peer = 1 / c.dom.a2a_pair_inv
    assert a2a == pytest.approx(c.dom.alpha_s + (4 * MiB + 4 * 0.5 * MiB) / per_peer, rel=1e-9)
    # the sweep path charges the same
    from nvcourse.costmodel.prediction import predict_sweep

    sw = predict_sweep("alltoall", "dgx-h100", 8, [32 * MiB], nccl_version="2.28")
    assert float(sw.time_s[0]) == pytest.approx(a2a, rel=1e-9)


def test_which_launches_copy_once_depends_on_the_release():
    # From NCCL 2.23 a one-node send/recv skips the FIFO only on registered buffers (ncclCommRegister, or a CUDA graph
    # capturing nccl-tests' cuMem buffers); before 2.23 nothing is registered, but one process driving the GPUs in P2P
    # write mode (Hopper; Ampere reads) copies straight into the peer's buffer ([p2p_nvlink] registered_since, p2p_read)
    from nvcourse.costmodel import predict
    from nvcourse.costmodel.config import configure

    MiB = 2**20

    def copies(system: str, version: str, **kw) -> int:
        # 32 MiB on 4 channels (8 ranks on 32): one copy at min(NVLink, 4 x 21.1 GB/s on H100; NVLink's rate on
        # A100), and the second copy adds a 512 KiB chunk on each of the 4 channels, 1/16 of the message
        c = configure(system, 8, nccl_version=version)
        rate = min(1 / c.dom.shift_inv, 4 * 21.1e9 if system == "dgx-h100" else float("inf"))
        t = predict("sendrecv", system, 8, 32 * MiB, nccl_version=version, **kw).time_s - c.dom.alpha_s
        return 1 + round((t / (32 * MiB / rate) - 1) * 16)

    assert copies("dgx-h100", "2.30", launch="process-per-gpu") == 2
    assert copies("dgx-h100", "2.30", launch="single-process") == 2
    assert copies("dgx-h100", "2.30", launch="cuda-graphs") == 1
    assert copies("dgx-h100", "2.22", launch="process-per-gpu") == 2
    assert copies("dgx-h100", "2.22", launch="cuda-graphs") == 2
    assert copies("dgx-h100", "2.22", registered=True) == 2
    assert copies("dgx-h100", "2.22", launch="single-process") == 1
    assert copies("dgx-a100", "2.22", launch="single-process") == 2  # P2P read: the direct pointer does not apply


def test_the_appendix_note_on_send_recv_across_nodes_quotes_the_8_node_run():
    import numpy as np

    from nvcourse.costmodel import appendix, sweeps

    note = next(n for n in appendix.IN_SAMPLE_NOTES if n.startswith("Send/recv across nodes"))
    run = "together-b200-8node-ib-sendrecv-run3"
    rows = [r for r in sweeps.compare(sweeps.points("calibration")) if r.point.sweep == run]
    ratio = {r.point.bytes: r.predicted_s / r.point.time_s for r in rows}
    late = [v for b, v in ratio.items() if b >= 2 * MiB]
    rate = [r.point.bytes / r.point.time_s / 1e9 for r in rows if r.point.bytes >= 4 * MiB]
    assert f"the run reaches {max(rate):.0f} GB/s, 2 channels at 14 GB/s" in note
    assert f"from 2 MiB the model is x{min(late):.2f}-{max(late):.2f}" in note
    mid = [abs(v - 1) for b, v in ratio.items() if 64 * KiB <= b <= MiB]
    assert f"64 KiB-1 MiB go to {np.median(mid) * 100:.1f} %" in note
    fast = [100 * (1 - v) for b, v in ratio.items() if 64 * KiB <= b <= 512 * KiB]
    assert f"64-512 KiB still {min(fast):.0f}-{max(fast):.0f} % fast" in note
    c = configure("dgx-b200", 8, 8)
    assert p2p.channels_per_peer(c)[1] == 2 and "halve a peer's 4 channels to 2 (4 x ceil(64 / 8) > 16)" in note


@pytest.mark.parametrize("nodes", [16, 32, 64])
def test_the_rule_gives_one_channel_per_peer_from_16_nodes_as_the_held_out_runs_note(nodes):
    from nvcourse.costmodel import sweeps

    c = configure("dgx-b200", 8, nodes)
    assert p2p.channels_per_peer(c) == (1, 1)  # 4 channels halved while 4 x ceil(8 nodes x 8 / 8) > 16
    run_id = f"heldout-together-b200-{nodes}node-ib-sendrecv-run3"
    run = next(s for s in sweeps._raw_sweeps("held_out") if s["id"] == run_id)
    assert run["covered"] and "1 channel per peer from 16 nodes" in run["note"]
    assert f"4 x ceil({8 * nodes} / 8) > 16" in run["note"]
