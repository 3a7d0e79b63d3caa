"""Reliability model: hand-worked cases, limits and bad input."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nvcourse import reliability as rel


def test_llama3_record_adds_up():
    r = rel.failure_record()
    assert sum(n for _, _, n in r.causes) == r.unexpected_interruptions == 419
    # GPU rows: 148 + 72 + 19 + 17 + 6 + 6 = 268
    assert r.count(("gpu",)) == 268
    # network rows: switch/cable 35 + NIC 7 = 42
    assert r.count(("network",)) == 42
    # 54 d x 24 h / 419 = 1296 / 419 = 3.0931 h
    assert r.mtbf_hours == pytest.approx(3.0931, rel=1e-4)
    # 419 / (2048 nodes x 54 d) x 1000 = 3.789 per 1,000 node-days
    assert r.per_1000_node_days() == pytest.approx(3.789, rel=1e-3)


def test_rate_and_mtbf_scale_inversely():
    lam = rel.failure_rate_per_gpu_hour()
    # 419 / (16384 x 1296) = 1.9733e-5 per GPU-hour (~0.17 per GPU-year: x 8766 = 0.173)
    assert lam == pytest.approx(1.9733e-5, rel=1e-4)
    assert lam * 8766 == pytest.approx(0.173, rel=1e-2)
    assert rel.cluster_mtbf_hours(16384) == pytest.approx(3.0931, rel=1e-4)
    # 1,024 GPUs: 16x fewer -> 16x longer = 49.49 h
    assert rel.cluster_mtbf_hours(1024) == pytest.approx(16 * 3.0931, rel=1e-4)
    # explicit rate: 1e-4 per GPU-hour on 100 GPUs -> 1 / 0.01 = 100 h
    assert rel.cluster_mtbf_hours(100, rate_per_gpu_hour=1e-4) == pytest.approx(100)
    assert rel.expected_interruptions(100, 300, rate_per_gpu_hour=1e-4) == pytest.approx(3)


def test_young_and_daly_facts_file_examples():
    # M = 3 h = 10800 s, delta = 60 s: sqrt(2*60*10800) = 1138.42 s = 18.97 min
    assert rel.young_interval(60, 10800) / 60 == pytest.approx(18.97, abs=0.01)
    # Daly: x = 60/21600 = 0.0027778, sqrt(x) = 0.052705; 1138.42*(1 + 0.017568 + 0.000309) - 60 = 1098.8 s = 18.31 min
    assert rel.daly_interval(60, 10800) / 60 == pytest.approx(18.31, abs=0.01)
    # delta = 5 min: Young sqrt(2*300*10800) = 2545.6 s = 42.43 min
    assert rel.young_interval(300, 10800) / 60 == pytest.approx(42.43, abs=0.01)


def test_daly_paper_figure_captions():
    # Daly 2006 captions: M = 24 h, delta = 5 min -> 117 min; M = 6 h -> 57 min; M = 15 min -> 9.1 min
    assert rel.daly_interval(300, 24 * 3600) / 60 == pytest.approx(117, abs=1)
    assert rel.daly_interval(300, 6 * 3600) / 60 == pytest.approx(57, abs=1)
    assert rel.daly_interval(300, 15 * 60) / 60 == pytest.approx(9.1, abs=0.1)
    # delta >= 2M: checkpoint every M
    assert rel.daly_interval(100, 40) == 40


def test_goodput_limits_and_hand_case():
    # no failures: goodput = tau / (tau + delta) = 3600 / 3660
    assert rel.goodput(3600, checkpoint_s=60, restart_s=600, mtbf_s=1e15) == pytest.approx(3600 / 3660, rel=1e-6)
    # tau = M, delta = R = 0: E = M (e - 1), goodput = 1/(e - 1) = 0.58198
    assert rel.goodput(3600, checkpoint_s=0, restart_s=0, mtbf_s=3600) == pytest.approx(1 / (math.e - 1))
    # restart multiplies E by e^{R/M}: R = M -> goodput / e
    assert rel.goodput(3600, checkpoint_s=0, restart_s=3600, mtbf_s=3600) == pytest.approx(1 / (math.e - 1) / math.e)


def test_goodput_is_zero_not_an_overflow_when_segments_can_never_finish():
    # 48 h segments on a cluster interrupted every ~30 s: e^(172800/30) overflows a float
    assert rel.expected_segment_time(48 * 3600, checkpoint_s=1200, restart_s=7200, mtbf_s=30) == math.inf
    assert rel.goodput(48 * 3600, checkpoint_s=1200, restart_s=7200, mtbf_s=30) == 0.0


def test_daly_interval_is_near_the_goodput_optimum():
    for d, m in [(60, 10800), (300, 86400), (30, 3600)]:
        tau, g = rel.best_goodput(checkpoint_s=d, restart_s=300, mtbf_s=m)
        grid = [tau * f for f in (0.5, 0.7, 0.85, 1.2, 1.5, 2.0)]
        assert all(rel.goodput(t, checkpoint_s=d, restart_s=300, mtbf_s=m) <= g + 1e-4 for t in grid)


@given(st.floats(1, 3600), st.floats(600, 1e6))
def test_daly_at_most_young_when_checkpoint_small(d, m):
    if d < 0.2 * m:
        assert rel.daly_interval(d, m) <= rel.young_interval(d, m) * 1.0001


@given(st.integers(1, 100_000), st.integers(1, 100_000))
def test_mtbf_decreases_with_scale(a, b):
    lo, hi = sorted((a, b))
    assert rel.cluster_mtbf_hours(hi) <= rel.cluster_mtbf_hours(lo)


def test_ring_runs_at_its_slowest_link():
    # 8 ranks, 1 GB, alpha 10 us, beta 50 GB/s: 14 * 10 us + 2*7/8 * 1e9 / 50e9 = 140e-6 + 0.035 = 0.03514 s
    t = rel.ring_allreduce_time(1e9, 8, alpha_s=10e-6, beta_Bps=50e9)
    assert t == pytest.approx(0.03514)
    # one link at half speed: 140e-6 + 0.07 = 0.07014 s
    slow = rel.ring_allreduce_time(1e9, 8, alpha_s=10e-6, beta_Bps=50e9, slowest_link_factor=0.5)
    assert slow == pytest.approx(0.07014)
    assert rel.degraded_link_slowdown(1e9, 8, alpha_s=10e-6, beta_Bps=50e9, slowest_link_factor=0.5) == pytest.approx(
        0.07014 / 0.03514
    )
    # small messages are latency-bound: a slow link barely shows
    assert rel.degraded_link_slowdown(1e3, 8, alpha_s=10e-6, beta_Bps=50e9, slowest_link_factor=0.5) < 1.01
    assert rel.ring_allreduce_time(1e9, 1, alpha_s=1e-5, beta_Bps=1e9) == 0


def test_stragglers():
    # p = 1e-4, N = 16384: 1 - (1 - 1e-4)^16384 = 1 - e^{16384 ln(0.9999)} = 1 - e^{-1.63848} = 0.80571
    # slow factor 1.5 -> 1 + 0.5 * 0.80571 = 1.40286
    assert rel.straggler_slowdown(16384, p_slow=1e-4, slow_factor=1.5) == pytest.approx(1.40286, rel=1e-4)
    assert rel.straggler_slowdown(1, p_slow=0, slow_factor=3) == 1
    # jitter: cv 2 %, N = 16384: sqrt(2 ln 16384) = sqrt(19.408) = 4.4055 -> 1.0881
    assert rel.jitter_slowdown(16384, cv=0.02) == pytest.approx(1.0881, rel=1e-3)
    assert rel.jitter_slowdown(1, cv=0.5) == 1


def test_alerts_are_labelled_and_evaluate():
    a = rel.alerts()
    assert len(a) >= 5
    assert all(x.src for x in a)
    busbw = next(x for x in a if x.direction == "below")
    assert rel.evaluate_alert(busbw, 0.95) == "ok"
    assert rel.evaluate_alert(busbw, 0.85) == "warn"
    assert rel.evaluate_alert(busbw, 0.5) == "critical"
    step = next(x for x in a if x.metric.startswith("step time"))
    assert rel.evaluate_alert(step, 1.0) == "ok"
    assert rel.evaluate_alert(step, 1.07) == "warn"
    assert rel.evaluate_alert(step, 2.0) == "critical"


def test_alert_levels_are_the_one_course_policy():
    # chapter 08's step-time and LinkDowned rules take 08b/09's policy (data/observability.toml), not their own numbers
    from nvcourse.observability.counters import alert_policy

    pol = alert_policy()
    a = {x.metric: x for x in rel.alerts()}
    step = next(x for m, x in a.items() if m.startswith("step time"))
    flaps = next(x for m, x in a.items() if "LinkDowned" in m)
    assert (step.warn, step.critical) == (pol.step_ratio_warn, pol.step_ratio_critical) == (1.05, 1.10)
    assert (flaps.warn, flaps.critical) == (pol.link_downed_warn_per_day, pol.link_downed_critical_per_day) == (1, 3)
    raw = rel.raw()["alerts"]
    assert all("warn" not in r and "critical" not in r for r in raw if "policy" in r)  # typed once, in one file


def test_ib_retry_timeout():
    # 4.096 us x 2^20 = 4.295 s per retry, x 7 retries = 30.06 s
    assert rel.ib_retry_timeout_s() == pytest.approx(30.06, abs=0.01)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: rel.cluster_mtbf_hours(0), "gpus"),
        (lambda: rel.cluster_mtbf_hours(8, rate_per_gpu_hour=0), "rate_per_gpu_hour"),
        (lambda: rel.young_interval(-1, 100), "checkpoint_s"),
        (lambda: rel.daly_interval(1, float("inf")), "mtbf_s"),
        (lambda: rel.goodput(0, checkpoint_s=1, restart_s=1, mtbf_s=10), "interval_s"),
        (lambda: rel.ring_allreduce_time(1, 2, alpha_s=0, beta_Bps=1, slowest_link_factor=2), "slowest_link_factor"),
        (lambda: rel.straggler_slowdown(8, p_slow=2, slow_factor=2), "p_slow"),
        (lambda: rel.straggler_slowdown(8, p_slow=0.1, slow_factor=0.5), "slow_factor"),
        (lambda: rel.failure_record("gpt-5"), "run_id"),
        (lambda: rel.failure_rate_per_gpu_hour(("cosmic",)), "categories"),
    ],
)
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()
