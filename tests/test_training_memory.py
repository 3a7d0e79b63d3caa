"""Memory per GPU and traffic per step: hand-worked cases, limits and bad input."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nvcourse import training as tr


def test_sixteen_bytes_per_param_on_one_gpu():
    # 70e9 params x (2 + 2 + 12) B = 1.12e12 B
    m = tr.training_memory_bytes(70e9)
    assert (m.weights, m.grads, m.optimizer) == (140e9, 140e9, 840e9)
    assert m.total == pytest.approx(1.12e12)
    # Llama 3 405B at 16 B/param: 405e9 x 16 = 6.48e12 B (facts file §2.1 cross-check)
    assert tr.training_memory_bytes(405e9).total == pytest.approx(6.48e12)


def test_tp_and_zero1_hand_worked():
    # tp = 8: 70e9/8 = 8.75e9 params per GPU; weights 17.5 GB, grads 17.5 GB;
    # ZeRO-1 over dp = 4: optimizer 8.75e9 x 12 / 4 = 26.25 GB; total 61.25 GB
    m = tr.training_memory_bytes(70e9, tp=8, zero_stage=1, dp=4)
    assert m.weights == pytest.approx(17.5e9)
    assert m.grads == pytest.approx(17.5e9)
    assert m.optimizer == pytest.approx(26.25e9)
    assert m.total == pytest.approx(61.25e9)
    assert m.fits(80)          # 61.25 <= 0.9 x 80 = 72
    assert not m.fits(64)      # 61.25 > 57.6


@pytest.mark.parametrize(
    "stage, expected",
    [
        # 8e9 params, dp = 8: per-param bytes 2 + 2 + 12 = 16 -> 128 GB
        (0, 128e9),
        # stage 1: 2 + 2 + 12/8 = 5.5 B/param -> 44 GB
        (1, 44e9),
        # stage 2: 2 + 2/8 + 12/8 = 3.75 -> 30 GB
        (2, 30e9),
        # stage 3: 16/8 = 2 -> 16 GB
        (3, 16e9),
    ],
)
def test_zero_stages(stage, expected):
    assert tr.training_memory_bytes(8e9, zero_stage=stage, dp=8).total == pytest.approx(expected)


def test_zero_without_data_parallel_changes_nothing():
    assert tr.training_memory_bytes(1e9, zero_stage=3, dp=1).total == tr.training_memory_bytes(1e9).total


def test_activations_added_to_total():
    m = tr.training_memory_bytes(1e9, activations=5e9)
    assert m.total == pytest.approx(16e9 + 5e9)
    assert m.model_states == pytest.approx(16e9)
    assert m.as_dict()["total"] == m.total


def test_activation_memory_hand_worked():
    # s = 2048, b = 1, h = 4096, a = 32, 1 layer, no parallelism, no recompute:
    # sbh = 8,388,608; 5as/h = 5*32*2048/4096 = 80; (34 + 80) * sbh = 956,301,312 B
    a = tr.activation_memory_bytes(layers=1, hidden=4096, seq=2048, micro_batch=1, heads=32, recompute="none")
    assert a == pytest.approx(956_301_312)
    # selective recompute drops the attention term: 34 * sbh = 285,212,672
    s = tr.activation_memory_bytes(layers=1, hidden=4096, seq=2048, micro_batch=1, heads=32)
    assert s == pytest.approx(285_212_672)
    # tp = 4 with sequence parallel divides by 4; without it: sbh*(10 + 24/4) = 16 * sbh
    assert tr.activation_memory_bytes(layers=1, hidden=4096, seq=2048, micro_batch=1, heads=32, tp=4) == pytest.approx(
        s / 4
    )
    no_sp = tr.activation_memory_bytes(
        layers=1, hidden=4096, seq=2048, micro_batch=1, heads=32, tp=4, sequence_parallel=False
    )
    assert no_sp == pytest.approx(16 * 8_388_608)
    # full recompute keeps the layer input: 2 sbh per layer, 32 layers -> 64 sbh
    full = tr.activation_memory_bytes(layers=32, hidden=4096, seq=2048, micro_batch=1, heads=32, recompute="full")
    assert full == pytest.approx(64 * 8_388_608)


def test_dp_traffic_hand_worked():
    # 70B, BF16 grads: S = 140 GB; dp = 8 ring: 2*7/8 * 140 GB = 245 GB sent per GPU
    t = tr.per_step_traffic_bytes(70e9, dp=8, tp=1, pp=1, layers=80, hidden=8192, seq=4096, micro_batch=1)
    assert t.dp == pytest.approx(245e9)
    assert t.tp == 0 and t.pp == 0
    assert t.total == pytest.approx(245e9)
    # large dp tends to 2 x 140 = 280 GB (facts file §2.1)
    big = tr.per_step_traffic_bytes(70e9, dp=100_000, tp=1, pp=1, layers=80, hidden=8192, seq=4096, micro_batch=1)
    assert big.dp == pytest.approx(280e9, rel=1e-4)


def test_zero3_moves_one_and_a_half_times_dp():
    kw = dict(dp=4, tp=1, pp=1, layers=2, hidden=64, seq=8, micro_batch=1)
    base = tr.per_step_traffic_bytes(1e9, **kw).dp
    # ZeRO-1 and -2: same as plain all-reduce; ZeRO-3: 3/2 of it (3(d-1)/d vs 2(d-1)/d)
    assert tr.per_step_traffic_bytes(1e9, zero_stage=2, **kw).dp == pytest.approx(base)
    assert tr.per_step_traffic_bytes(1e9, zero_stage=3, **kw).dp == pytest.approx(1.5 * base)


def test_tp_traffic_matches_facts_file_example():
    # b=1, s=8192, h=16384 BF16: payload 2*8192*16384 = 268,435,456 B
    # per all-reduce, t = 8: 2*7/8 * 268,435,456 = 469,762,048 B; x 4 per layer x 126 layers = 236,760,072,192 B
    t = tr.per_step_traffic_bytes(405e9, dp=1, tp=8, pp=1, layers=126, hidden=16384, seq=8192, micro_batch=1)
    assert t.tp == pytest.approx(236_760_072_192)
    assert t.dp == 0
    # full recompute: 6 all-reduces per layer instead of 4
    f = tr.per_step_traffic_bytes(
        405e9, dp=1, tp=8, pp=1, layers=126, hidden=16384, seq=8192, micro_batch=1, recompute="full"
    )
    assert f.tp == pytest.approx(1.5 * t.tp)


def test_pp_traffic_hand_worked():
    # pp = 16, m = 64 micro-batches, payload 268,435,456 B: interior stage sends one activation forward and one
    # gradient backward per micro-batch: 2 x 64 x 268,435,456 = 34,359,738,368 B; with tp = 8 scatter/gather: /8
    kw = dict(dp=1, pp=16, layers=128, hidden=16384, seq=8192, micro_batch=1, micro_batches=64)
    assert tr.per_step_traffic_bytes(405e9, tp=1, **kw).pp == pytest.approx(34_359_738_368)
    assert tr.per_step_traffic_bytes(405e9, tp=8, **kw).pp == pytest.approx(34_359_738_368 / 8)
    assert tr.per_step_traffic_bytes(405e9, tp=8, pp_scatter_gather=False, **kw).pp == pytest.approx(34_359_738_368)
    # TP per GPU shrinks with pp: 128/16 = 8 layers per stage, 64 micro-batches
    t = tr.per_step_traffic_bytes(405e9, tp=8, **kw)
    assert t.tp == pytest.approx(4 * 8 * 64 * 469_762_048)


def test_single_gpu_moves_nothing():
    t = tr.per_step_traffic_bytes(
        8e9, dp=1, tp=1, pp=1, layers=32, hidden=4096, seq=8192, micro_batch=1, micro_batches=8
    )
    assert t.total == 0
    assert tr.ring_allreduce_factor(1) == 0


@given(st.integers(1, 512), st.sampled_from([0, 1, 2, 3]))
def test_memory_never_grows_with_dp(dp, stage):
    one = tr.training_memory_bytes(1e9, zero_stage=stage, dp=1).total
    assert tr.training_memory_bytes(1e9, zero_stage=stage, dp=dp).total <= one * (1 + 1e-12)


@given(st.integers(2, 4096))
def test_ring_factor_bounds(n):
    assert 1 <= tr.ring_allreduce_factor(n) < 2


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"zero_stage": 4}, "zero_stage"),
        ({"dp": 0}, "dp"),
        ({"tp": 1.5}, "tp"),
        ({"pp": True}, "pp"),
        ({"grads": -2}, "grads"),
        ({"optimizer": float("nan")}, "optimizer"),
    ],
)
def test_memory_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        tr.training_memory_bytes(1e9, **kwargs)
    with pytest.raises(ValueError, match="params"):
        tr.training_memory_bytes(0)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"dp": 0}, "dp"),
        ({"recompute": "some"}, "recompute"),
        ({"pp": 200}, "pp"),
        ({"micro_batches": 0}, "micro_batches"),
        ({"act_bytes": 0}, "act_bytes"),
    ],
)
def test_traffic_bad_input(kwargs, name):
    base = dict(dp=2, tp=2, pp=2, layers=32, hidden=4096, seq=2048, micro_batch=1)
    base.update(kwargs)
    with pytest.raises(ValueError, match=name):
        tr.per_step_traffic_bytes(8e9, **base)


def test_bad_activation_input():
    with pytest.raises(ValueError, match="recompute.*'none', 'selective', 'full'"):
        tr.activation_memory_bytes(layers=1, hidden=8, seq=8, micro_batch=1, heads=1, recompute="yes")
