"""Capstone gates for the fabric, serving, isolation and monitoring: hand-worked cases and monotonicity."""

import itertools
import math

import pytest

from nvcourse import capstone as cs
from nvcourse import capstone_gates as cg
from nvcourse import catalog, inference, training
from nvcourse.observability import counters

TARGETS = cs.Targets(
    model="llama3-70b", training_tokens=2e12, max_days=30, max_usd=3e6, min_goodput=0.9, min_efficiency=0.7, max_MW=3
)
A = cs.evaluate(cs.Design("dgx-h100", 1024, tp=8), TARGETS)  # 128 nodes of 8 GPUs, DP 128


# ------------------------------------------------------------------------------------------------ fabric


def test_ideal_fabric_delivers_the_reference_and_leaves_the_step_unchanged():
    r = cg.fabric_gate(A, cg.FabricChoice(routing="ideal", placement="packed"))
    # non-blocking, adaptive routing, packed nodes *is* the reference: ratio 1, the training model's DP time
    assert r.nodes == 1024 // 8
    assert r.ratio == pytest.approx(1.0)
    assert r.dp_comm_s == pytest.approx(A.step.dp_comm_s)
    assert r.efficiency == pytest.approx(A.step.efficiency)
    assert r.passed
    # DP gradient buffer per GPU: 70e9 / 8 x 2 bytes (bf16)
    assert r.nbytes == pytest.approx(70e9 / 8 * 2)


def test_fabric_gate_passes_and_fails_at_its_threshold():
    static = cg.FabricChoice(routing="dmodk")  # IB NDR with AR off in the switches, random placement
    r = cg.fabric_gate(A, static)
    busbw = {g.name: g for g in r.gates}["fabric busbw"]
    at = cg.fabric_gate(A, static, min_busbw_fraction=r.ratio)
    above = cg.fabric_gate(A, static, min_busbw_fraction=min(1.0, r.ratio * 1.01))
    assert {g.name: g.passed for g in at.gates}["fabric busbw"]
    assert not {g.name: g.passed for g in above.gates}["fabric busbw"]
    assert busbw.passed == (r.ratio >= 0.8)


def test_infiniband_defaults_to_adaptive_routing_and_static_routes_are_the_explicit_misconfiguration():
    # NCCL turns adaptive routing on by default on InfiniBand links (src/transport/net_ib/init.cc, "Enable
    # ADAPTIVE_ROUTING by default on IB networks"); RoCE keeps per-flow ECMP hashing as its default
    ib, roce = cg.FabricChoice(nic="ib-ndr"), cg.FabricChoice(nic="roce-400g")
    assert ib.routing_used == "ideal" and roce.routing_used == "ecmp"
    assert cg.fabric_gate(A).fabric == ib and cg.fabric_gate(A).passed  # the default fabric: A at 1,024 GPUs passes
    assert "adaptive routing" in ib.describe() and "packet spraying" in cg.FabricChoice(
        nic="roce-400g", routing="ideal").describe() and "ECMP hashing" in roce.describe()
    static = cg.FabricChoice(nic="ib-ndr", routing="dmodk")
    assert "static routes (adaptive routing off in the switches)" in static.describe()
    assert cg.fabric_gate(A, static).ratio < cg.fabric_gate(A).ratio


def test_each_choice_says_what_it_needs_configured():
    assert cg.FabricChoice().needs == (cg.NEEDS["adaptive routing"],)
    assert cg.FabricChoice(routing="dmodk").needs == () and cg.FabricChoice(nic="roce-400g").needs == ()
    assert cg.FabricChoice(nic="roce-400g", routing="ideal").needs == (cg.NEEDS["packet spraying"],)
    sharp = cg.FabricChoice(sharp=True, routing="dmodk", placement="packed").needs
    assert sharp == (cg.NEEDS["SHARP"], cg.NEEDS["packed"])
    for words in ("Aggregation Manager", "HPC-X", "NCCL_COLLNET_ENABLE=1", "off by default", "shared between jobs"):
        assert words in cg.NEEDS["SHARP"]
    md = cg.decision_log_entries(fabric=cg.fabric_gate(A, cg.FabricChoice(sharp=True)))
    assert "(needs: " in md and "NCCL_COLLNET_ENABLE=1" in md
    assert "needs" not in cg.decision_log_entries(fabric=cg.fabric_gate(A, cg.FabricChoice(routing="dmodk")))


def test_static_routes_under_random_placement_lose_bandwidth_and_expose_dp():
    r = cg.fabric_gate(A, cg.FabricChoice(routing="dmodk"))
    assert r.ratio < 0.5  # rings between scattered nodes collide on leaf-spine cables
    assert not r.passed
    # the step: DP scaled by the bandwidth ratio, the part beyond the backward window of the last micro-batch exposed
    flops = training.data()["flops"]
    backward_share = flops["backward_per_param_per_token"] / flops["per_param_per_token"]  # 4 of 6 N
    window = A.step.compute_s / A.step.micro_batches * backward_share
    assert r.dp_comm_s == pytest.approx(A.step.dp_comm_s / r.ratio)
    assert r.dp_exposed_s == pytest.approx(max(0.0, r.dp_comm_s - window))
    assert r.step_s == pytest.approx(A.step.total_s - A.step.dp_exposed_s + r.dp_exposed_s)
    assert r.efficiency == pytest.approx(A.step.efficiency * A.step.total_s / r.step_s)
    assert r.efficiency < A.step.efficiency


def test_roce_ecmp_random_is_slower_than_ib_adaptive_at_the_same_rate():
    assert catalog.get_link("roce-400g").line_GBps_dir == catalog.get_link("ib-ndr").line_GBps_dir
    roce = cg.fabric_gate(A, cg.FabricChoice(nic="roce-400g"))
    ib_ar = cg.fabric_gate(A, cg.FabricChoice(nic="ib-ndr", routing="ideal"))
    assert roce.fabric.routing_used == "ecmp" and cg.FabricChoice().routing_used == "ideal"
    assert roce.busbw_GBps < ib_ar.busbw_GBps
    assert not roce.passed and ib_ar.passed


def test_sharp_beats_the_reference_and_needs_infiniband():
    r = cg.fabric_gate(A, cg.FabricChoice(sharp=True, routing="dmodk"))
    # in-network reduction: each NIC sends its shard once instead of 2(N-1)/N times
    assert r.algorithm == "sharp" and r.ratio > 1
    with pytest.raises(ValueError, match="sharp"):
        cg.FabricChoice(nic="roce-400g", sharp=True)


def test_oversubscription_and_top_of_rack_do_not_help():
    base = cg.fabric_gate(A, cg.FabricChoice(routing="ideal"))
    assert cg.fabric_gate(A, cg.FabricChoice(routing="ideal", oversubscription=2.0)).busbw_GBps < base.busbw_GBps
    for routing in ("ideal", "dmodk"):
        assert cg.fabric_gate(A, cg.FabricChoice(layout="tor", routing=routing)).busbw_GBps <= base.busbw_GBps


def test_one_node_has_no_fabric_gate_to_fail():
    one = cs.evaluate(cs.Design("dgx-h100", 8, tp=8), TARGETS)
    r = cg.fabric_gate(one, cg.FabricChoice(nic="roce-400g"))
    assert r.nodes == 1 and r.passed and "no fabric" in r.gates[0].measured


@pytest.mark.parametrize("bad", [dict(layout="ring"), dict(routing="spray"), dict(placement="scattered"),
                                 dict(nic="nvlink4x"), dict(oversubscription=0)])
def test_fabric_choice_refuses_bad_input(bad):
    with pytest.raises(ValueError):
        cg.FabricChoice(**bad)


def test_more_bandwidth_never_fails_a_fabric_gate_that_passed():
    designs = [A, cs.evaluate(cs.Design("dgx-h100", 256, tp=8), TARGETS),
               cs.evaluate(cs.Design("gb200-nvl72", 512, tp=4), TARGETS)]
    grid = itertools.product(("rail", "tor"), (1.0, 2.0), (None, "dmodk"), ("random", "packed"), (False, True))
    for (layout, ov, routing, placement, sharp), rep in itertools.product(list(grid), designs):
        kw = dict(layout=layout, oversubscription=ov, routing=routing, placement=placement, sharp=sharp)
        slow = cg.fabric_gate(rep, cg.FabricChoice(nic="ib-ndr", **kw))
        fast = cg.fabric_gate(rep, cg.FabricChoice(nic="ib-xdr", **kw))  # twice the port rate
        assert fast.busbw_GBps >= slow.busbw_GBps
        # the busbw gate is a share of each NIC's own reference: a faster NIC on other switches (another radix,
        # other static routes) can deliver the same GB/s as a smaller share, but never a slower step
        gs, gf = (next(g for g in r.gates if g.name == "fabric step") for r in (slow, fast))
        assert gf.passed or not gs.passed, (kw, rep.design, gs, gf)
        assert fast.dp_comm_s <= slow.dp_comm_s * (1 + 1e-9)
    # a lower threshold never fails what a higher one passed
    ratios = [cg.fabric_gate(A, min_busbw_fraction=f).gates[0].passed for f in (0.2, 0.4, 0.6, 0.8, 1.0)]
    assert ratios == sorted(ratios, reverse=True)


# ------------------------------------------------------------------------------------------------ serving


def test_serving_picks_the_smallest_tp_meeting_the_slo():
    # Llama 3 70B in bf16: 140 GB of weights; an H100 holds 0.9 x 80 GB = 72 GB, so TP 1 cannot fit, TP 2 can
    # (70 GB + 4096 tokens x 327,680 B of KV / 2 = 70.7 GB)
    assert inference.kv_bytes_per_token("llama3-70b") == 80 * 2 * 8 * 128 * 2
    loose = cg.serving_plan(cg.ServingTargets("llama3-70b", 1e4, 1e5, 100.0), "dgx-h100")
    assert loose.tp == 2 and loose.passed
    assert [c[0] for c in loose.candidates] == [1, 2, 4, 8] and not loose.candidates[0][3]
    # an SLO at TP 4's decode step: TP 2 (twice the weights per GPU to read) misses it, TP 4 is the smallest
    tp4 = inference.decode_step("llama3-70b", "dgx-h100", 4).total_s * 1e3
    tp2 = inference.decode_step("llama3-70b", "dgx-h100", 2).total_s * 1e3
    assert tp2 > tp4
    p = cg.serving_plan(cg.ServingTargets("llama3-70b", tp4, 1e5, 1000.0), "dgx-h100")
    assert p.tp == 4 and p.token_ms == pytest.approx(tp4)
    # replicas for the throughput: ceil(1000 tokens/s / (1 token per decode step))
    assert p.replicas == math.ceil(1000.0 / (1 / (tp4 / 1e3))) and p.gpus == 4 * p.replicas


def test_ttft_target_pushes_tp_up_and_an_impossible_slo_fails():
    # prefill of 4096 tokens scales as 1/tp: a TTFT target just above TP 8's forces TP 8
    t8 = inference.prefill_time("llama3-70b", "dgx-h100", 4096, gpus=8) * 1e3
    p = cg.serving_plan(cg.ServingTargets("llama3-70b", 1e4, t8 * 1.01, 100.0), "dgx-h100")
    assert p.tp == 8
    none = cg.serving_plan(cg.ServingTargets("llama3-70b", 0.1, 1e5, 100.0), "dgx-h100")
    assert none.tp is None and not none.passed
    assert [g.name for g in none.gates if not g.passed] == ["token latency"]
    with pytest.raises(ValueError, match="max_token_ms"):
        cg.ServingTargets("llama3-70b", 0, 100, 100)
    with pytest.raises(ValueError, match="model"):
        cg.ServingTargets("gpt-9", 10, 100, 100)


def test_disaggregated_prefill_adds_the_exposed_kv_transfer():
    t = cg.ServingTargets("llama3-70b", 1e4, 1e5, 100.0, prompt_tokens=32768)
    local = cg.serving_plan(t, "dgx-h100")
    rdma = cg.serving_plan(t, "dgx-h100", kv_path="rdma")
    assert rdma.tp == local.tp and rdma.ttft_ms > local.ttft_ms


def test_looser_serving_targets_never_fail_what_tighter_ones_passed():
    for slo, ttft in itertools.product((5, 10, 20, 40, 80), (100, 300, 1000, 3000)):
        tight = cg.serving_plan(cg.ServingTargets("llama3-70b", slo, ttft, 1000.0), "dgx-h100", batch=8)
        loose = cg.serving_plan(cg.ServingTargets("llama3-70b", slo * 2, ttft * 2, 1000.0), "dgx-h100", batch=8)
        assert loose.passed or not tight.passed
        if tight.tp is not None:
            assert loose.tp is not None and loose.tp <= tight.tp


# ------------------------------------------------------------------------------------------------ isolation, monitoring


def test_isolation_qos_and_control_plane():
    r = cg.isolation_requirements(A)
    assert 1 < r.slowdown_with_qos < r.slowdown_without_qos  # ETS keeps a share; without QoS the all-to-all wins
    assert "P_Key" in r.partition
    dedicated = cg.isolation_requirements(A, targets=cg.IsolationTargets(shared_fabric=False))
    assert {g.name: g.passed for g in dedicated.gates} == {"neighbour": True, "control plane": True}
    for addr, ok in (("127.0.0.1", True), ("10.1.2.3", True), ("0.0.0.0", False), ("8.8.8.8", False)):
        g = cg.isolation_requirements(A, targets=cg.IsolationTargets(master_addr=addr)).gates[1]
        assert g.passed is ok, addr
    eth = cg.isolation_requirements(A, cg.FabricChoice(nic="roce-400g"))
    assert "VLAN (of 4094)" in eth.partition  # IEEE 802.1Q: 4096 ids less 0 and 4095
    with pytest.raises(ValueError, match="qos"):
        cg.IsolationTargets(qos="fair")


def test_monitoring_threshold_is_s_over_c_plus_s():
    f = cg.fabric_gate(A)
    m = cg.monitoring_requirements(f)
    c = f.dp_comm_s / f.step_s
    s = counters.raw()["alert_policy"]["max_job_slowdown"]
    assert m.bandwidth_fraction == pytest.approx(c)
    assert m.thresholds.tolerable_loss == pytest.approx(s / (c + s))
    assert m.thresholds.busbw_ratio_critical == pytest.approx(1 - s / (c + s))
    assert any("PortXmitWait" in x for x in m.counters)
    roce = cg.monitoring_requirements(cg.fabric_gate(A, cg.FabricChoice(nic="roce-400g")))
    assert not any("PortXmitWait" in x for x in roce.counters)
    one = cg.monitoring_requirements(cg.fabric_gate(cs.evaluate(cs.Design("dgx-h100", 8, tp=8), TARGETS)))
    assert one.thresholds is None and "no inter-node" in one.text()


# ------------------------------------------------------------------------------------------------ decision log


def test_decision_log_entries_escape_dollars_and_pipes():
    assert cg.escape_md("$3 M | budget < 4") == "&#36;3 M \\| budget &lt; 4"
    f = cg.fabric_gate(A)
    md = cg.decision_log_entries(
        fabric=f,
        serving=cg.serving_plan(cg.ServingTargets("llama3-70b", 30, 1000, 20000), "dgx-h100", batch=32),
        isolation_result=cg.isolation_requirements(A),
        monitoring=cg.monitoring_requirements(f),
    )
    lines = md.splitlines()
    assert lines[:2] == ["| requirement | entry |", "|---|---|"]
    assert [ln.split("|")[1].strip() for ln in lines[2:]] == [
        "**Fabric gate**", "**Serving gate**", "**Isolation**", "**Monitoring**"]
    assert "$" not in md and all(ln.count(" | ") == 1 for ln in lines[2:])
    assert "fabric busbw pass" in md  # InfiniBand's default, adaptive routing
    static = cg.decision_log_entries(fabric=cg.fabric_gate(A, cg.FabricChoice(routing="dmodk")))
    assert "fabric busbw FAIL" in static
