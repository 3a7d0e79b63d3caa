"""Checkers for chapter 01 — why one GPU is not enough (memory of a training job, bytes moved per step).

Expected values come from :mod:`nvcourse.training` (tested against the ZeRO and Megatron papers) and the
catalog; the GPU-count check counts up with ``MemoryBreakdown.fits`` rather than using a closed form.
"""

from __future__ import annotations

import math

from .. import catalog, training
from ..i18n import translate as _
from ._answers import Question, answer, register
from ._core import Case, CheckError, Result, check_function, fmt, rng_for, safe_checker, to_number

__all__ = ["answer", "model_state_bytes", "min_gpus", "dp_bytes_per_step"]

_PARAMS = (125e6, 7e9, 13e9, 70e9, 405e9)


def _model_states(params: float) -> float:
    return training.training_memory_bytes(params).model_states


@safe_checker
def model_state_bytes(fn) -> Result:
    """``fn(params)`` → bytes of weights + gradients + Adam states for mixed-precision training (16 B/param)."""
    rng = rng_for("model_state_bytes")
    params = list(_PARAMS) + [float(round(x, -6)) for x in rng.uniform(1e8, 1e12, 4)]
    cases = []
    for p in params:
        exp = _model_states(p)
        cases.append(Case((p,), exp, {
            _("Only the BF16 weights (2 B/param): training also keeps gradients (2 B) and Adam's FP32 master "
              "weights, momentum and variance (4 + 4 + 4 B)."): 2 * p,
            _("4 B/param: weights + gradients (or FP32 weights) only; Adam's optimizer states (12 B/param) are "
              "missing."): 4 * p,
            _("12 B/param: 4 bytes per parameter are missing. Most often it is the FP32 master copy of the weights "
              "(Adam keeps three FP32 values: master weights, momentum and variance, 4 + 4 + 4 B, on top of the "
              "BF16 weights and gradients, 2 + 2 B); or you counted the optimizer states (12 B) alone."): 12 * p,
            _("You returned GB: return bytes (the check formats them)."): exp / 1e9,
        }))
    return check_function("model_state_bytes", fn, ["params"], cases, what="a number of bytes",
                          hint=_("Count bytes per parameter: BF16 weights 2, BF16 gradients 2, Adam 12 (FP32 master, "
                                 "momentum, variance)."),
                          success=_("16 bytes per parameter: a 70B model needs 1.12 TB before a single activation."))


def _min_gpus_reference(params: float, memory_GB: float, headroom: float) -> int:
    """Count up: the first N for which ZeRO-3 over N GPUs fits (training.MemoryBreakdown.fits)."""
    n = max(1, math.floor(_model_states(params) / (headroom * memory_GB * 1e9)))  # a lower bound to start from
    while not training.training_memory_bytes(params, zero_stage=3, dp=n).fits(memory_GB, headroom=headroom):
        n += 1
    return n


def _as_count(value) -> float:
    v = to_number(value, "a whole number of GPUs")
    if v != math.floor(v):
        raise CheckError(_("your code returned {value} GPUs.").format(value=fmt(v)),
                         _("GPUs come whole: round *up* with `math.ceil`."))
    return v


@safe_checker
def min_gpus(fn) -> Result:
    """``fn(params, memory_GB, headroom)`` → fewest GPUs holding the model states fully sharded (ZeRO-3)."""
    rng = rng_for("min_gpus")
    mems = sorted({g.memory_GB for g in catalog.gpus().values()})
    cases = []
    for p in _PARAMS + tuple(float(round(x, -8)) for x in rng.uniform(1e9, 2e12, 3)):
        for mem in (mems[0], mems[len(mems) // 2], mems[-1]):
            for headroom in (0.9, 1.0):
                exp = _min_gpus_reference(p, mem, headroom)
                states = _model_states(p)
                cases.append(Case((p, mem, headroom), exp, {
                    _("You rounded down: a fraction of a GPU more memory means one more GPU (math.ceil)."):
                        math.floor(states / (headroom * mem * 1e9)) if exp > 1 else None,
                    _("You ignored the headroom: only headroom × memory_GB is usable."):
                        math.ceil(states / (mem * 1e9)) if headroom != 1.0 else None,
                    _("GiB vs GB: memory_GB is decimal (10^9 B), as on the datasheet."):
                        math.ceil(states / (headroom * mem * 2**30)),
                }))
    # keep distinct inputs only (some GPUs share a memory size)
    return check_function("min_gpus", fn, ["params", "memory_GB", "headroom"], cases,
                          what="a whole number of GPUs", convert=_as_count,
                          hint=_("N = ceil(16 · params / (headroom · memory_GB · 1e9))."),
                          success=_("ZeRO-3 spreads all 16 B/param over N GPUs; activations still need room on top."))


@safe_checker
def dp_bytes_per_step(fn) -> Result:
    """``fn(params, dp, grad_bytes)`` → bytes one GPU sends per step in a ring all-reduce of the gradients."""
    rng = rng_for("dp_bytes_per_step")
    cases = []
    combos = [(7e9, 8, 2), (70e9, 64, 2), (1e9, 2, 4), (13e9, 1, 2), (405e9, 1024, 2)]
    combos += [(float(round(x, -7)), int(d), 2) for x, d in zip(rng.uniform(1e8, 1e11, 4), rng.integers(2, 512, 4))]
    for p, d, gb in combos:
        exp = training.per_step_traffic_bytes(p, dp=d, tp=1, pp=1, layers=1, hidden=1, seq=1, micro_batch=1,
                                              grad_bytes=gb).dp
        s = p * gb
        cases.append(Case((p, d, gb), exp, {
            _("That is the gradient buffer itself: a ring all-reduce sends 2(d−1)/d of it per GPU."):
                s if d > 1 else None,
            _("That is 2·S: the ring sends 2(d−1)/d·S — each GPU skips its own share (d−1 of d chunks)."):
                2 * s if d > 1 else None,
            _("Only half: that is a reduce-scatter ((d−1)/d·S); an all-reduce adds an all-gather of the same size."):
                (d - 1) / d * s if d > 1 else None,
            _("Sending the whole buffer to every peer ((d−1)·S) is the naive all-to-all, not the ring."):
                (d - 1) * s if d > 2 else None,
        }))
    return check_function("dp_bytes_per_step", fn, ["params", "dp", "grad_bytes"], cases,
                          what="a number of bytes", rtol=1e-6, atol=1e-6,
                          hint=_("Ring all-reduce = reduce-scatter + all-gather; each sends (d−1)/d of the buffer S."),
                          success=_("2(d−1)/d·S tends to 2·S: the bytes per GPU barely grow with the number of GPUs."))


# ------------------------------------------------------------------------------------------------
# questions


def _states_405b() -> float:
    return _model_states(405e9)


def _dgx_h100_nodes_405b() -> int:
    sysm = catalog.get_system("dgx-h100")
    gpus = _min_gpus_reference(405e9, sysm.gpu_spec.memory_GB, 0.9)
    return math.ceil(gpus / sysm.gpus_per_host)


register(Question(
    "01.nodes_405b",
    _("How many DGX H100 nodes hold the model states of a 405B model with ZeRO-3 (90 % headroom)?"),
    _dgx_h100_nodes_405b, unit="nodes", rtol=0,
    variants=lambda: {
        _("That is a GPU count: divide by the GPUs per node and round up."):
            _min_gpus_reference(405e9, catalog.get_system("dgx-h100").gpu_spec.memory_GB, 0.9),
        _("Without headroom: only 90 % of each GPU's memory is usable."):
            math.ceil(math.ceil(_states_405b() / 80e9) / 8),
    },
    hint=_("16 B/param × 405e9 → GPUs = ceil(states / (0.9 × memory)) → nodes = ceil(GPUs / GPUs per node)."),
    explain=_("And that is before activations: real 405B runs use thousands of GPUs for speed, not only memory."),
))

register(Question(
    "01.ring_growth",
    _("As you add data-parallel GPUs, the bytes each GPU sends per step in a ring all-reduce..."),
    lambda: "b",
    choices={"a": _("grow in proportion to the number of GPUs"),
             "b": _("stay almost constant, approaching 2 × the gradient buffer"),
             "c": _("shrink as 1/d")},
    wrong_choice={"a": _("Each GPU only talks to its two ring neighbours: 2(d−1)/d·S, which tends to 2·S."),
                  "c": _("The chunks shrink as 1/d, but there are 2(d−1) of them: 2(d−1)/d·S.")},
    explain=_("2(d−1)/d·S → 2·S: that is why ring all-reduce scales in bandwidth (its latency term still grows "
              "with d)."),
))
