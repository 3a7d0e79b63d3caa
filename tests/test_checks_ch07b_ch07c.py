"""Chapter 07b/07c checkers: a right solution passes, the stub reads 'not done yet', typical mistakes get their hint."""

import math

import pytest

from nvcourse import catalog
from nvcourse.checks import ch07b, ch07c


def _stub(*_a):
    raise NotImplementedError()


def exposed_solution(g, tb, b, alpha, beta):
    n = math.ceil(g / b - 1e-9)
    free = 0.0
    for k in range(n):
        ready = tb * min(1.0, (k + 1) * b / g)
        free = max(ready, free) + alpha + min(b, g - k * b) / beta
    return max(0.0, free - tb)


def test_bucket_exposed():
    assert ch07b.bucket_exposed(exposed_solution).passed
    assert not ch07b.bucket_exposed(_stub).passed and "not done" in ch07b.bucket_exposed(_stub).message.lower()
    r = ch07b.bucket_exposed(lambda g, tb, b, a, beta: a + g / beta)
    assert not r.passed and "not overlapped" in r.hint


def test_min_bucket():
    right = lambda g, tb, a, spb: g * a / (tb - g * spb) if tb > g * spb else math.inf  # noqa: E731
    assert ch07b.min_bucket(right).passed
    r = ch07b.min_bucket(lambda g, tb, a, spb: g * a / tb)
    assert not r.passed and "bandwidth part" in r.hint


def test_tp_pipeline():
    assert ch07b.tp_pipeline(lambda g, t, c: g / c + (c - 1) * max(g, t) / c + t / c).passed
    r = ch07b.tp_pipeline(lambda g, t, c: max(g, t) if c > 1 else g + t)
    assert not r.passed and "perfect overlap" in r.hint


def test_dp_threshold():
    def right(sid, r):
        s = catalog.get_system(sid)
        return s.gpu_spec.bf16_TFLOPS * 1e12 / (r * s.scaleout_GBps_dir_per_gpu * s.nic.efficiency * 1e9)

    assert ch07b.dp_threshold(right).passed
    r = ch07b.dp_threshold(lambda sid, r: right(sid, 1))
    assert not r.passed and "node-local" in r.hint


def test_kv_bytes():
    assert ch07c.kv_bytes(lambda L, kv, d, b: L * 2 * kv * d * b).passed
    r = ch07c.kv_bytes(lambda L, kv, d, b: L * kv * d * b)
    assert not r.passed and "K" in r.hint and "V" in r.hint


def test_kv_transfer():
    assert ch07c.kv_transfer(lambda n, p, g, e, k: n * p / (k * g / 8 * 1e9 * e)).passed
    r = ch07c.kv_transfer(lambda n, p, g, e, k: n * p / (k * g * 1e9 * e))
    assert not r.passed and "BITS" in r.hint


def test_decode_time():
    right = lambda P, tp, hbm, e, L, ar: 2 * P / tp / (hbm * 1e12 * e) + (2 * L * ar if tp > 1 else 0)  # noqa: E731
    assert ch07c.decode_time(right).passed
    r = ch07c.decode_time(lambda P, tp, hbm, e, L, ar: 2 * P / tp / (hbm * 1e12 * e) + (4 * L * ar if tp > 1 else 0))
    assert not r.passed and "training" in r.hint
    assert not ch07c.decode_time(_stub).passed


def test_remote_nodes():
    def right(e, k, n):
        return (n - 1) * (1 - math.comb(e - e // n, k) / math.comb(e, k))

    assert ch07c.remote_nodes(right).passed
    r = ch07c.remote_nodes(lambda e, k, n: k * (n - 1) / n)
    assert not r.passed and "copies" in r.hint


@pytest.mark.parametrize("bad", [None, "x", [1, 2]])
def test_checkers_never_raise(bad):
    for chk in (ch07b.bucket_exposed, ch07b.min_bucket, ch07c.kv_bytes, ch07c.remote_nodes):
        assert not chk(lambda *a, _b=bad: _b).passed
        assert not chk(bad).passed


def test_ch07c_mla_and_speculative_checkers():
    from nvcourse.checks import ch07c

    assert ch07c.mla_kv_bytes(lambda L, r, p, b: L * (r + p) * b).passed
    doubled = ch07c.mla_kv_bytes(lambda L, r, p, b: 2 * L * (r + p) * b)
    assert not doubled.passed and "one latent" in doubled.hint
    assert ch07c.spec_allreduces(lambda L, k, a: 2 * L / ((1 - a ** (k + 1)) / (1 - a))).passed
    optimistic = ch07c.spec_allreduces(lambda L, k, a: 2 * L / (k + 1))
    assert not optimistic.passed and "(1 − a^(k+1))" in optimistic.hint

    def stub(*_):
        raise NotImplementedError()

    assert ch07c.mla_kv_bytes(stub).status == "todo" and ch07c.spec_allreduces(stub).status == "todo"
