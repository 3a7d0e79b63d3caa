"""Counters, derived alert thresholds and the fault drill (nvcourse.observability)."""

from __future__ import annotations

import numpy as np
import pytest

from nvcourse import costmodel, reliability
from nvcourse.observability import counters, drill


def test_tolerable_link_loss_by_hand():
    assert counters.tolerable_link_loss(0.3, 0.10) == pytest.approx(0.25)  # 0.1 / (0.3 + 0.1)
    assert counters.tolerable_link_loss(1.0, 0.10) == pytest.approx(0.1 / 1.1)


@pytest.mark.parametrize("c", [0.05, 0.3, 0.8])
def test_tolerable_loss_slows_the_step_by_exactly_the_target(c):
    f = counters.tolerable_link_loss(c, 0.10)
    assert c / (1 - f) + (1 - c) == pytest.approx(1.10)  # the bandwidth-bound part stretched by 1/(1-f)


def test_alert_thresholds_from_the_policy():
    t = counters.alert_thresholds(0.3)  # policy: 10 % target, warn at half
    assert (t.busbw_ratio_warn, t.busbw_ratio_critical) == pytest.approx((0.875, 0.75))
    assert (t.step_ratio_warn, t.step_ratio_critical) == pytest.approx((1.05, 1.10))
    assert len(t.rows()) == 7
    pol = counters.alert_policy()  # one place for the levels chapters 08, 08b and 09 quote
    assert (pol.step_ratio_warn, pol.step_ratio_critical) == pytest.approx((t.step_ratio_warn, t.step_ratio_critical))
    flaps = next(r for r in t.rows() if r[0].startswith("LinkDowned"))
    assert flaps[1] == f"≥ {pol.link_downed_warn_per_day:g} per day"
    assert flaps[2] == f"≥ {pol.link_downed_critical_per_day:g} per day"


def test_bandwidth_fraction_uses_the_cost_model():
    p = costmodel.predict("allreduce", "dgx-h100", 8, 2**30, nodes=4)
    assert counters.bandwidth_fraction("dgx-h100", 8, 2**30, 0.02, nodes=4) == pytest.approx(
        p.bandwidth_s / (0.02 + p.time_s)
    )


def test_counter_delta_knows_that_ib_counters_saturate():
    assert counters.counter_bits("LinkDownedCounter") == 8
    d = counters.counter_delta("LinkDownedCounter", 3, 255)
    assert (d.delta, d.saturated) == (252, True)
    assert counters.counter_delta("SymbolErrorCounter", 10, 12) == counters.CounterDelta("SymbolErrorCounter", 2, False)
    with pytest.raises(ValueError, match="reset"):
        counters.counter_delta("SymbolErrorCounter", 12, 10)
    with pytest.raises(ValueError, match="after"):
        counters.counter_delta("LinkDownedCounter", 0, 256)
    with pytest.raises(ValueError, match="name"):
        counters.counter_delta("LinkFlaps", 0, 1)


def test_dcgm_levels_and_signals():
    lv = counters.dcgm_diag_levels()
    assert list(lv) == [1, 2, 3, 4] and lv[1] < lv[2] < lv[3]
    assert np.isnan(lv[4])  # 'extended, longer-running': the reference gives no duration
    kinds = {s["kind"] for s in counters.signals()}
    assert kinds == {"error", "congestion", "health", "config"}
    assert {s["layer"] for s in counters.signals("RoCE")} == {"RoCE"}


# ---------------------------------------------------------------------------------------------- drill
def test_drill_is_reproducible_and_each_seed_uses_every_fault_once():
    a, b = drill.incident("C", 5), drill.incident("C", 5)
    assert np.array_equal(a.step_s, b.step_s, equal_nan=True) and a.logs == b.logs and a.ports == b.ports
    for seed in range(4):
        assert sorted(drill.incident(i, seed).fault for i in drill.INCIDENTS) == sorted(drill.FAULTS)


def _find(fault, seeds=range(12)):
    return [r for s in seeds for i in drill.INCIDENTS if (r := drill.incident(i, s)).fault == fault]


def test_flapping_link_shows_in_its_own_counters_and_as_spikes():
    for r in _find("flapping link")[:4]:
        p = r.ports[r.component]
        flapped = [c for c, row in r.ports.items() if row.get("LinkDownedCounter")]
        assert flapped == [r.component] and p["SymbolErrorCounter"] > 100
        per_retry = reliability.ib_retry_timeout_s() / reliability.raw()["timeouts"]["nccl_ib_retry_count"]
        spikes = int(np.sum(r.step_s > r.baseline_s + 0.9 * per_retry))
        assert spikes == p["LinkDownedCounter"]


def test_symbol_errors_are_a_fault_and_raw_ber_is_the_background():
    """Symbol errors are the errors no physical-layer mechanism corrected (UFM telemetry fields): a healthy port
    shows none, so only the flapping port's SymbolErrorCounter moves; the red herring is a raw (pre-FEC) BER, what
    FEC corrected, on one port with no error counter."""
    for seed in range(4):
        for i in drill.INCIDENTS:
            r = drill.incident(i, seed)
            moved = [c for c, row in r.ports.items() if row.get("SymbolErrorCounter")]
            assert moved == ([r.component] if r.fault == "flapping link" else []), (seed, i)
            shown = [c for c, row in r.ports.items() if row["raw_ber"] >= drill.RAW_BER_SHOWN]
            herring = [c for c in shown if c != r.component]
            assert len(herring) <= 1
            assert not any({"SymbolErrorCounter", "LinkDownedCounter"} & set(r.ports[c]) for c in herring)
    sources = counters.raw()["sources"]
    assert sources["ufm-telemetry"]["url"].startswith("https://docs.nvidia.com/networking/")
    flap = next(s for s in counters.signals("InfiniBand") if s["fault"] == "flapping link")
    assert "ufm-telemetry" in flap["src"] and "a count that keeps rising is a real fault" in flap["reading"]


def test_naming_the_raw_ber_port_is_answered_as_margin_not_fault():
    run = next(r for r in _find("flapping link"))
    herring = next(c for c, row in run.ports.items() if c != run.component and row["raw_ber"] >= drill.RAW_BER_SHOWN)
    v = drill.verdict(run, "flapping link", herring)
    assert v.fault_ok and not v.component_ok
    assert "FEC corrected" in v.mistake and "SymbolErrorCounter" in v.mistake


def test_congested_uplink_slows_the_job_and_tops_the_leaf_wait():
    for r in _find("congested uplink")[:4]:
        assert max(r.leaves, key=lambda k: r.leaves[k]["xmit_wait_pct"]) == r.component
        assert np.median(r.step_s[r.onset :]) > 1.05 * r.baseline_s
        assert np.median(r.step_s[: r.onset]) == pytest.approx(r.baseline_s, rel=0.02)
        assert not any("LinkDownedCounter" in row for row in r.ports.values())


def test_throttling_gpu_adds_its_lost_compute_to_every_step():
    for r in _find("throttling GPU")[:4]:
        clock = r.gpus[r.component]["clock_ratio"]
        expect = r.baseline_s + drill.COMPUTE_S * (1 / clock - 1)
        assert np.median(r.step_s[r.onset :]) == pytest.approx(expect, rel=0.02)


def test_pkey_mismatch_never_completes_a_step_and_marks_the_node():
    for r in _find("mis-set P_Key")[:3]:
        assert np.all(np.isnan(r.step_s))
        marked = {c.split("/")[0] for c, row in r.ports.items() if row.get("PortRcvConstraintErrors")}
        assert marked == {r.component}
        assert any("timing out" in line for line in r.logs)


def test_nvlink_errors_slow_a_little_and_log_xid_74():
    for r in _find("NVLink errors")[:3]:
        assert r.gpus[r.component]["nvlink_replay_errors"] > 0
        assert any(": 74," in line and r.component.split("/")[0] in line for line in r.logs)
        assert 1.0 < np.median(r.step_s[r.onset :]) / r.baseline_s < 1.10  # caught by counters before 10 %


def test_verdict_grades_and_names_the_likely_mistake():
    r = _find("throttling GPU")[0]
    assert drill.verdict(r, r.fault, r.component).passed
    node = r.component.split("/")[0]
    other = next(g for g in drill.components()["gpu"] if g.startswith(node + "/") and g != r.component)
    v = drill.verdict(r, r.fault, other)
    assert v.fault_ok and not v.component_ok and "wrong GPU" in v.mistake
    u = _find("congested uplink")[0]
    host = next(c for c, row in u.ports.items() if row["xmit_wait_pct"] > 5)
    assert "upstream" in drill.verdict(u, u.fault, host).mistake
    assert any("xmit" in e.lower() or "wait" in e.lower() for e in drill.verdict(u, u.fault, host).evidence)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: drill.incident("F"), "name"),
        (lambda: drill.incident("A", -1), "seed"),
        (lambda: drill.verdict(drill.incident("A"), "gremlins", "node0"), "fault"),
    ],
)
def test_drill_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_a_wrong_fault_gets_the_signature_of_the_fault_picked():
    for seed in (0, 1):
        for name in drill.INCIDENTS:
            run = drill.incident(name, seed)
            for wrong in drill.FAULTS:
                if wrong == run.fault:
                    continue
                v = drill.verdict(run, wrong, run.component)
                assert not v.fault_ok and v.mistake, (seed, name, wrong)
                if wrong != "flapping link":
                    assert drill.SIGNATURES[wrong] in v.mistake
    # every signature names the counter the drill's evidence names for that fault
    for fault, key in (("flapping link", "LinkDownedCounter"), ("congested uplink", "PortXmitWait"),
                       ("throttling GPU", "clock"), ("mis-set P_Key", "PortRcvConstraintErrors"),
                       ("NVLink errors", "Xid 74")):
        assert key in drill.SIGNATURES[fault]
