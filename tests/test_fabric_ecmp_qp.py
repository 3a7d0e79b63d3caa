"""Multi-QP ECMP: the exact slowdown against the other exact implementation and a seeded simulation."""

from __future__ import annotations

import numpy as np
import pytest

from nvcourse.fabric import ecmp, ecmp_qp


@pytest.mark.parametrize("balls, bins", [(1, 4), (5, 3), (8, 8), (32, 32), (40, 8), (3, 10)])
def test_max_load_pmf_agrees_with_the_dp_in_fabric_ecmp(balls, bins):
    a, b = ecmp_qp.max_load_pmf(balls, bins), ecmp.max_load_pmf(balls, bins)
    n = max(a.size, b.size)
    a, b = np.pad(a, (0, n - a.size)), np.pad(b, (0, n - b.size))
    assert a.sum() == pytest.approx(1.0) and np.allclose(a, b, atol=1e-12)


def test_hand_case_two_flows_two_links():
    # 2 flows on 2 links: same link with probability 1/2 -> max load 2 w.p. 1/2, else 1
    assert ecmp_qp.max_load_pmf(2, 2).tolist() == pytest.approx([0.0, 0.5, 0.5])
    assert ecmp_qp.expected_slowdown(2, 2, 1) == pytest.approx(1.5)
    assert ecmp_qp.hot_link_load(2, 2, 1) == pytest.approx(1.5)


@pytest.mark.parametrize("m, k, q", [(32, 32, 1), (32, 32, 4), (32, 32, 16), (64, 16, 8), (8, 64, 2), (16, 4, 1)])
def test_closed_form_matches_the_seeded_simulation(m, k, q):
    mean, se = ecmp_qp.simulate_slowdown(m, k, q, trials=3000, seed=7)
    assert abs(ecmp_qp.expected_slowdown(m, k, q) - mean) <= 4 * se + 1e-9


def test_more_qps_fewer_hot_links():
    s = [ecmp_qp.expected_slowdown(32, 32, q) for q in (1, 2, 4, 8, 16, 32)]
    assert all(a > b for a, b in zip(s, s[1:], strict=False)) and s[-1] > 1.0
    assert s[0] > 3.0 and s[4] < 1.6  # one QP: ~3.5x; sixteen: ~1.55x
    assert ecmp_qp.expected_slowdown(8, 64, 16) == pytest.approx(1.0, abs=1e-3)  # few flows, many links


@pytest.mark.parametrize("args, word", [((0, 4, 1), "connections"), ((4, 0, 1), "links"), ((4, 4, 0), "qps"),
                                        ((64, 4, 32), "connections x qps")])
def test_bad_input(args, word):
    with pytest.raises(ValueError, match=word):
        ecmp_qp.expected_slowdown(*args)
