"""The cost model against published nccl-tests results (nvcourse/data/measurements.toml)."""

import pytest

from nvcourse import catalog
from nvcourse.costmodel import OP_ALGORITHMS, SELECTORS, validation


def test_median_error_on_bandwidth_bound_published_cases_is_within_target():
    rows = validation.compare()
    bw_bound = [r for r in rows if r.case.bandwidth_bound]
    assert len(bw_bound) >= 10
    assert validation.median_abs_error(rows) <= validation.TARGET_MEDIAN_ABS_ERROR, validation.table(rows)


def test_every_case_is_sourced_and_maps_onto_the_catalog():
    for c in validation.cases():
        assert c.url.startswith("https://"), c.id
        assert c.quote, c.id
        assert c.system in catalog.systems(), c.id
        assert c.algo in SELECTORS or c.algo in OP_ALGORITHMS[c.op], c.id
        assert c.busbw_GBps > 0
        if c.busbw_range_GBps:
            lo, hi = c.busbw_range_GBps
            assert lo <= c.busbw_GBps <= hi, c.id
    ids = [c.id for c in validation.cases()]
    assert len(ids) == len(set(ids))


def test_unmodelled_cases_say_why():
    for u in validation.unmodelled():
        assert u["url"].startswith("https://") and u["reason"] and u["published"]


def test_published_time_is_converted_with_the_nccl_tests_factor():
    # scaling-book: 512 MiB allgather on 8 H100 in ~1.5 ms -> algbw 357.9 GB/s, busbw x 7/8 = 313.2 GB/s
    (case,) = [c for c in validation.cases() if c.id == "h100-8gpu-allgather-512MiB"]
    assert case.busbw_GBps == pytest.approx(2**29 / 1.5e-3 * 7 / 8 / 1e9)
    assert case.busbw_GBps == pytest.approx(313.2, rel=1e-3)


def test_error_sign_convention():
    rows = validation.compare()
    r = rows[0]
    assert r.error == pytest.approx((r.predicted_busbw_GBps - r.case.busbw_GBps) / r.case.busbw_GBps)
    assert "median" in validation.table(rows)
