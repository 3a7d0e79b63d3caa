"""Checkers for chapter 08 — reliability and operations (MTBF, Young/Daly checkpoint interval).

Expected values: :mod:`nvcourse.reliability` (Young 1974, Daly 2006; Llama 3 failure record).
"""

from __future__ import annotations

import math

from .. import reliability
from ..i18n import translate as _
from ._answers import Question, answer, register
from ._core import Case, Result, check_function, rng_for, safe_checker

__all__ = ["answer", "young_interval", "cluster_mtbf_hours"]


@safe_checker
def young_interval(fn) -> Result:
    """``fn(checkpoint_s, mtbf_s)`` → Young's optimal time between checkpoints, seconds."""
    rng = rng_for("young_interval")
    combos = [(60.0, 3 * 3600.0), (30.0, 3600.0), (300.0, 24 * 3600.0), (5.0, 600.0)]
    combos += [(float(d), float(m)) for d, m in zip(10 ** rng.uniform(0, 3, 4), 10 ** rng.uniform(3, 6, 4))]
    cases = []
    for d, m in combos:
        exp = reliability.young_interval(d, m)
        cases.append(
            Case(
                (d, m),
                exp,
                {
                    _("√(δ·M) is missing the factor 2: τ = √(2·δ·M)."): math.sqrt(d * m),
                    _("Take the square root: τ = √(2·δ·M)."): 2 * d * m,
                    _("That is Daly's higher-order interval; the exercise asks for Young's √(2δM)."):
                        reliability.daly_interval(d, m),
                },
            )
        )
    return check_function("young_interval", fn, ["checkpoint_s", "mtbf_s"], cases, what="a time in seconds",
                          hint=_("Balance the time lost writing checkpoints (δ/τ) against the work lost per failure "
                               "(τ/2M): τ = √(2·δ·M)."),
                          success=_("Halve the MTBF and the interval shrinks only by √2."))


@safe_checker
def cluster_mtbf_hours(fn) -> Result:
    """``fn(gpus, rate_per_gpu_hour)`` → mean time between job interruptions, hours."""
    lam = reliability.failure_rate_per_gpu_hour()
    cases = []
    for n, r in ((16384, lam), (1024, lam), (100_000, lam), (8, lam), (4096, 2 * lam), (512, 1e-5)):
        exp = reliability.cluster_mtbf_hours(n, rate_per_gpu_hour=r)
        cases.append(Case((n, r), exp, {
            _("Failures in series add up: the job's rate is N·λ, so its MTBF is 1/(N·λ), not N/λ."): n / r,
            _("That is the MTBF of one GPU; the job stops when any of the N fails."): 1 / r,
            _("That is the failure rate (per hour); the MTBF is its inverse."): n * r,
        }))
    return check_function("cluster_mtbf_hours", fn, ["gpus", "rate_per_gpu_hour"], cases, what="hours",
                          hint=_("A synchronous job stops when any GPU fails: rates add, MTBF = 1 / (N · λ)."),
                          success=_("Ten times more GPUs, ten times more interruptions."))


def _mtbf_100k_h() -> float:
    return reliability.cluster_mtbf_hours(100_000)


register(Question(
    "08.interval_100k",
    _("A 100,000-GPU job fails at Llama 3's rate per GPU; a checkpoint takes 60 s. Young's interval, in minutes?"),
    lambda: reliability.young_interval(60, _mtbf_100k_h() * 3600) / 60, unit="min", rtol=0.02,
    variants=lambda: {
        _("Convert the MTBF to seconds before the square root (hours × 3600)."):
            reliability.young_interval(60, _mtbf_100k_h()) / 60,
        _("That is in seconds; the question asks for minutes."): reliability.young_interval(60, _mtbf_100k_h() * 3600),
    },
    hint=_("M = 1/(N·λ) hours → seconds; τ = √(2·60·M) seconds → minutes."),
    explain=_("Minutes between checkpoints: at this scale checkpoints must be fast (asynchronous, in memory)."),
))

register(Question(
    "08.double_gpus",
    _("You double the number of GPUs of a job. Young's checkpoint interval..."),
    lambda: "b",
    choices={"a": _("halves"), "b": _("shrinks by √2 (about 29 %)"), "c": _("stays the same"), "d": _("doubles")},
    wrong_choice={"a": _("The MTBF halves, but τ = √(2δM) depends on its square root."),
                  "c": _("More GPUs fail more often: the MTBF halves."),
                  "d": _("More GPUs mean more failures, so checkpoints must come more often, not less.")},
    explain=_("τ ∝ √M and M ∝ 1/N: τ ∝ 1/√N."),
))
