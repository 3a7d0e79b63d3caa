"""Checkers for chapter 07 — training at scale (6·N·D compute time, pipeline bubble, exposed DP communication,
placement of tensor parallelism, predict-then-run on the step-time model).

Expected values come from :mod:`nvcourse.training` (tested in ``tests/test_training_step.py``):
``training_flops`` + ``compute_time_s`` for the compute time, ``pipeline_bubble_fraction`` for the bubble,
``step_time`` for the exposed data-parallel communication on catalog configurations (and the same rule written
out by hand for random inputs), and the catalog for the hardware.
"""

from __future__ import annotations

from typing import Any

from .. import catalog, training
from ..i18n import language, number
from ..i18n import translate as _
from ._answers import Question, answer, register
from ._core import (
    ERROR,
    FAIL,
    PASS,
    Case,
    CheckError,
    Result,
    check_function,
    close,
    diagnose,
    fmt,
    learner_value,
    rng_for,
    safe_checker,
    to_number,
)
from .ch04 import record_prediction  # the prediction of exercise 4 is recorded as in chapter 04

__all__ = ["answer", "record_prediction", "training_compute_time", "bubble_fraction", "exposed_dp_time",
           "step_prediction"]

_DAY = 86400.0


# ------------------------------------------------------------------------------------------------
# 6·N·D at an efficiency


def _compute_s(params: float, tokens: float, gpus: int, peak_TFLOPS: float, efficiency: float) -> float:
    return training.compute_time_s(training.training_flops(params, tokens), gpus, peak_TFLOPS=peak_TFLOPS,
                                   efficiency=efficiency)


def _compute_variants(params, tokens, gpus, peak, eff) -> dict[str, float | None]:
    t = _compute_s(params, tokens, gpus, peak, eff)
    return {
        _("3× too small: 2·N FLOPs per token is the forward pass only; the backward pass costs twice as much (4·N): "
        "training is 6·N·D."): t / 3,
        _("Only the backward pass (4·N per token): add the forward pass (2·N): 6·N·D."): t * 2 / 3,
        _("8·N·D is the hardware work with full activation recomputation; the exercise (and MFU) count "
          "6·N·D."): t * 4 / 3,
        _("2× too small: did you double the peak (the 2:4-sparse figure datasheets headline is 2× the dense one; "
        "training runs dense), or count a multiply-add as one FLOP (3·N instead of 6·N)?"): t / 2,
        _("10^12 times too large: peak_TFLOPS is in TFLOPS; multiply by 1e12 to get FLOP/s."): t * 1e12,
        _("You did not divide by the number of GPUs: they share the work."): t * gpus if gpus > 1 else None,
        _("That is the time at the full peak: divide by the efficiency as well (the GPUs reach only that fraction)."):
            t * eff,
        _("You multiplied by the efficiency instead of dividing by it: a lower efficiency means a longer time."):
            t * eff * eff,
        _("That looks like days: return seconds (the check formats them)."): t / _DAY,
        _("That looks like hours: return seconds."): t / 3600,
    }


@safe_checker
def training_compute_time(fn) -> Result:
    """``fn(params, tokens, gpus, peak_TFLOPS, efficiency)`` → seconds of pure compute for 6·N·D FLOPs."""
    h100, b200 = catalog.get_gpu("h100"), catalog.get_gpu("b200-gb200")
    combos = [
        (405e9, 15.6e12, 16384, h100.bf16_TFLOPS, 0.55),
        (70e9, 2e12, 1024, h100.bf16_TFLOPS, 0.4),
        (8e9, 4194304.0, 8, h100.bf16_TFLOPS, 0.55),
        (70e9, 15e12, 4096, b200.bf16_TFLOPS, 0.45),
        (1e9, 1e9, 1, catalog.get_gpu("a100").bf16_TFLOPS, 0.6),
    ]
    rng = rng_for("training_compute_time")
    gpus_list = sorted(catalog.gpus().values(), key=lambda g: g.id)
    for _i in range(4):
        gpu = gpus_list[int(rng.integers(len(gpus_list)))]
        combos.append((float(round(10 ** rng.uniform(8.5, 12), -6)), float(round(10 ** rng.uniform(9, 13.3), -6)),
                       int(2 ** rng.integers(3, 15)), gpu.bf16_TFLOPS, float(round(rng.uniform(0.35, 0.45), 3))))
    cases = [Case(c, _compute_s(*c), _compute_variants(*c)) for c in combos]
    return check_function("training_compute_time", fn, ["params", "tokens", "gpus", "peak_TFLOPS", "efficiency"],
                          cases, what="a time in seconds",
                          hint=_("t = 6·N·D / (G · F · η), with F in FLOP/s (TFLOPS × 1e12)."),
                          success=_("6·N·D is the floor of the step: every second the GPUs wait on the network or the "
                                  "pipeline comes on top."))


# ------------------------------------------------------------------------------------------------
# the pipeline bubble


def _bubble_variants(p, m, v) -> dict[str, float | None]:
    f = training.pipeline_bubble_fraction(p, m, virtual_stages=v)
    return {
        _("That is the bubble relative to the compute time, (p−1)/(v·m) — what the step-time model adds on top of "
        "compute; as a share of the whole step (compute + bubble) it is (p−1)/(v·m + p − 1)."): (p - 1) / (v * m)
        if p > 1
        else None,
        _("Interleaving: v virtual stages per GPU divide the bubble by v: (p−1)/(v·m + p − 1)."): (p - 1) / (m + p - 1)
        if v > 1 and p > 1
        else None,
        _("v divides the bubble, not the micro-batches' work: (p−1)/(v·m + p − 1), not (p−1)/(v·(m + p − 1))."): (p - 1)
        / (v * (m + p - 1))
        if v > 1 and p > 1
        else None,
        _("The pipeline fills in p − 1 steps, not p: (p−1)/(v·m + p − 1)."): p / (v * m + p),
        _("That is the busy share of the time; the bubble is the idle share (1 minus yours)."): 1 - f
        if f != 0.5
        else None,
    }


@safe_checker
def bubble_fraction(fn) -> Result:
    """``fn(p, m, v)`` → share of a step's wall time that a 1F1B pipeline (p stages, m micro-batches, v virtual
    stages) sits idle."""
    combos = [(16, 16, 4), (8, 8, 1), (4, 16, 1), (1, 8, 1), (16, 64, 1), (16, 64, 4), (2, 1, 1), (8, 8, 2)]
    rng = rng_for("bubble_fraction")
    combos += [(int(p), int(m), int(v)) for p, m, v in
               zip(rng.integers(2, 33, 4), rng.integers(1, 129, 4), rng.choice([1, 2, 4], 4))]
    cases = [Case(c, training.pipeline_bubble_fraction(c[0], c[1], virtual_stages=c[2]), _bubble_variants(*c))
             for c in combos]
    return check_function("bubble_fraction", fn, ["p", "m", "v"], cases, what="a fraction between 0 and 1",
                          rtol=1e-6, atol=1e-12,
                          hint=_("The first micro-batch needs p − 1 stage-steps to reach the last stage, and the last "
                               "one as many to drain: (p−1) idle slots against v·m useful ones per GPU."),
                          success=_("More micro-batches or interleaving shrink the bubble; a fixed global "
                                    "batch on more "
                                  "GPUs leaves fewer micro-batches per replica, and the bubble grows."))


# ------------------------------------------------------------------------------------------------
# data-parallel communication under the backward pass


def _exposed(dp_comm: float, compute: float, m: int) -> float:
    """The step-time model's rule, by hand: buckets overlap with the backward (4N of 6N) of the last micro-batch."""
    return max(0.0, dp_comm - compute / m * 4 / 6)


def _exposed_variants(dp_comm, compute, m) -> dict[str, float | None]:
    """Known mistakes; a mistake that clamps to 0 here is left out (0 would not tell which mistake it was)."""
    window = compute / m * 4 / 6
    found = {
        _("No overlap at all: the gradient buckets are all-reduced while the backward pass of the last micro-batch "
        "runs; only what sticks out of it is exposed."): dp_comm if dp_comm > 0 else None,
        _("Not the whole step: gradients are final only during the backward pass of the last micro-batch "
        "(compute / m), the earlier micro-batches only accumulate."): max(0.0, dp_comm - compute),
        _("The window is the backward pass only (4·N of the 6·N FLOPs): compute / m × 4/6."):
            max(0.0, dp_comm - compute / m),
        _("Divide by the micro-batches: only the last one's backward overlaps (compute / m × 4/6)."):
            max(0.0, dp_comm - compute * 4 / 6),
        _("The backward pass is 4·N of the 6·N FLOPs (2/3 of the compute), not the forward's 2·N (1/3)."):
            max(0.0, dp_comm - compute / m * 2 / 6),
        _("Exposed time cannot be negative: when the window is longer than the all-reduce, nothing is exposed (0)."):
            dp_comm - window if dp_comm < window else None,
    }
    out = {hint: (None if value == 0 else value) for hint, value in found.items()}
    if dp_comm > window:
        out[_("Your window is too long: you hid all of it. Only the backward pass of the *last* micro-batch "
              "overlaps (compute / m × 4/6), not the whole step (the earlier micro-batches only accumulate "
              "gradients).")] = 0.0
    return out


def _dp_cases() -> list[Case]:
    """Configurations of the step-time model (its dp_comm, compute, m and dp_exposed), exposed and hidden."""
    cases = []
    for model, system, gpus, tp, pp in (("llama3-70b", "dgx-h100", 1024, 8, 4), ("llama3-70b", "pcie-8gpu", 256, 8, 4),
                                        ("llama3-8b", "dgx-h100", 512, 1, 1), ("llama3-70b", "gb200-nvl72", 1024, 8, 4),
                                        ("llama3-405b", "dgx-h100", 16384, 8, 16)):
        st = training.step_time(model, system, gpus, tp=tp, pp=pp)
        args = (st.dp_comm_s, st.compute_s, st.micro_batches)
        cases.append(Case(args, st.dp_exposed_s, _exposed_variants(*args),
                          f"{model}, {gpus} × {system}, TP{tp} PP{pp}"))
    return cases


@safe_checker
def exposed_dp_time(fn) -> Result:
    """``fn(dp_comm_s, compute_s, m)`` → seconds of the gradient all-reduce the backward pass cannot hide."""
    cases = _dp_cases()
    rng = rng_for("exposed_dp_time")
    for _i in range(4):
        m = int(2 ** rng.integers(0, 7))
        compute = float(10 ** rng.uniform(-1, 1.3))
        window = compute / m * 4 / 6
        args = (float(window * rng.uniform(0.3, 3.0)), compute, m)
        cases.append(Case(args, _exposed(*args), _exposed_variants(*args), "random"))
    return check_function("exposed_dp_time", fn, ["dp_comm_s", "compute_s", "m"], cases, what="a time in seconds",
                          rtol=1e-6, atol=1e-12,
                          hint=_("exposed = max(0, t_DP − t_backward of the last micro-batch), and that backward is "
                               "compute / m × 4/6."),
                          success=_("With many micro-batches the window is short: at scale it is the number of "
                                  "micro-batches per replica, not the network alone, that exposes the all-reduce."))


# ------------------------------------------------------------------------------------------------
# predict, then run the model


def _learner_number(value: Any, name: str, what: str) -> float | Result:
    value = learner_value(value, name)
    if isinstance(value, Result):
        return value
    try:
        return to_number(value, what)
    except CheckError as err:
        return Result(name, ERROR, err.message, hint=err.hint)


@safe_checker
def step_prediction(predicted_s: Any, step: Any) -> Result:
    """Compare a predicted floor of the step (compute + pipeline bubble, from 6·N·D and the bubble share) with
    what :func:`nvcourse.training.step_time` gives, and show what the communication adds on top."""
    name = _("step prediction")
    pred = _learner_number(predicted_s, name, "a time in seconds")
    if isinstance(pred, Result):
        return pred
    if not all(hasattr(step, a) for a in ("compute_s", "bubble_s", "total_s", "breakdown", "micro_batches", "pp")):
        raise CheckError(
            _("the second argument must be the result of training.step_time(...)."),
            _("Run the cell that computes `st = training.step_time(...)` first, then pass `st`."),
            status=ERROR,
        )
    if pred <= 0:
        return Result(name, FAIL, _("a time must be positive; your prediction is {value} s.").format(value=fmt(pred)))
    floor = step.compute_s + step.bubble_s
    comm = step.total_s - floor
    parts = step.breakdown()
    notes = [_("the model's step: {total} s = compute {compute} s + bubble {bubble} s + communication it cannot "
               "hide {comm} s ({share}: TP {tp} s, PP {pp} s, exposed DP {dp} s).").format(
        total=_s(step.total_s), compute=_s(step.compute_s), bubble=_s(step.bubble_s), comm=_s(comm),
        share=_pct(comm / step.total_s), tp=_s(parts["TP comm"]), pp=_s(parts["PP comm"]),
        dp=_s(parts["DP comm (exposed)"]))]
    if close(pred, floor, 0.01):
        return Result(name, PASS, _("your {pred} s matches the model's compute + bubble ({floor} s).").format(
                          pred=_s(pred), floor=_s(floor)),
                      right=[_("6·N·D at the efficiency, stretched by the bubble: {floor} s").format(floor=_s(floor))],
                      notes=notes + [_("What your prediction left out is the communication: look at which part "
                                     "dominates it, and where its group is placed.")])
    f = training.pipeline_bubble_fraction(step.pp, step.micro_batches)
    variants = {
        _("You left out the bubble: with p > 1 stages the step is compute / (1 − bubble share)."):
            step.compute_s if step.bubble_s > 0 else None,
        _("The bubble is a share of the *whole* step: step = compute / (1 − f), not compute × (1 + f)."):
            step.compute_s * (1 + f) if step.bubble_s > 0 else None,
        _("That is close to the model's whole step, communication included: the exercise asks for compute + bubble "
        "only, from your two functions."): step.total_s,
        _("3× too small: 2·N per token is the forward pass only; training is 6·N·D."): floor / 3,
        _("2× too small: the dense BF16 peak (catalog `bf16_TFLOPS`), not the sparse one, and 6·N·D, not 3·N·D."):
            floor / 2,
        _("You divided by the GPUs of one replica (tp·pp): all the GPUs share the 6·N·D of the global batch."):
            floor * step.dp,
    }
    hint = diagnose(pred, floor, variants) or (
        _("Compute time with your exercise-1 function (6·N·D over all the GPUs at the efficiency), then divide by "
        "1 − your exercise-3 bubble share."))
    said = (_("your {pred} s is too large for compute + bubble.") if pred > floor
            else _("your {pred} s is too small for compute + bubble."))
    return Result(name, FAIL, said.format(pred=_s(pred)),
                  wrong=[_("your prediction: {pred} s").format(pred=_s(pred))], hint=hint, notes=notes)


def _s(seconds: float) -> str:
    """Seconds with three decimals (``{:.3f}``), in the current language's style."""
    return number(seconds, ".3f")


def _pct(fraction: float) -> str:
    """``0.42`` as ``42%`` (English, as Python writes it) or ``42 %`` (French)."""
    return f"{fraction:.0%}" if language() != "fr" else number(100 * fraction, ".0f") + "\u00a0%"


# ------------------------------------------------------------------------------------------------
# questions


def _days_70b_b200() -> float:
    gpu = catalog.get_gpu("b200")
    return _compute_s(70e9, 15e12, 4096, gpu.bf16_TFLOPS, 0.4) / _DAY


register(
    Question(
        "07.days_70b_b200",
        _("Llama 3 70B on 15T tokens on 4,096 B200 (HGX, catalog 'b200', dense BF16) at 40 % efficiency: days of "
        "compute?"),
        _days_70b_b200,
        unit="days",
        rtol=0.01,
        variants=lambda: {
            _("2× too few days: training runs on the dense BF16 peak; the 2:4-sparse figure on datasheets is "
            "twice it."): _days_70b_b200() / 2,
            _("3× too few: 2·N per token is the forward pass only; training is 6·N·D."): _days_70b_b200() / 3,
            _("That is in hours: divide by 24."): _days_70b_b200() * 24,
            _("That is in seconds: divide by 86,400 for days."): _days_70b_b200() * _DAY,
        },
        hint=_("t = 6 · 70e9 · 15e12 / (4096 · F · 0.4) seconds, F = catalog.get_gpu('b200').bf16_TFLOPS × 1e12; "
        "then ÷ 86,400."),
        explain=_("Pure compute only: the step-time model adds the bubble and the communication the overlap "
                  "cannot hide."),
    )
)


def _placement_times() -> tuple[float, float]:
    good = training.step_time("llama3-70b", "dgx-h100", 1024, tp=8, pp=4, placement="tp-first").total_s
    bad = training.step_time("llama3-70b", "dgx-h100", 1024, tp=8, pp=4, placement="dp-first").total_s
    return good, bad


def _placement_answer() -> str:
    good, bad = _placement_times()
    return "a" if good < bad else "b"


def _placement_explain() -> str:
    good, bad = _placement_times()
    return _("In the step-time model: tp-first {good} s per step, dp-first {bad} s ({ratio}× slower). TP "
             "all-reduces sit on the critical path 4 times per layer and micro-batch; the gradient all-reduce happens "
             "once per step and partly hides behind the backward pass.").format(
        good=number(good, ".2f"), bad=number(bad, ".2f"), ratio=number(bad / good, ".1f"))


register(
    Question(
        "07.tp_placement",
        _("Llama 3 70B, TP 8 × PP 4 × DP 32 on 1,024 H100 in DGX nodes (8 GPUs per NVLink domain). Which rank order?"),
        _placement_answer,
        choices={
            "a": _("TP groups inside a node (NVLink); DP groups across nodes (tp-first)"),
            "b": _("DP groups inside a node; TP across nodes — the gradient buffer is the biggest message, it deserves "
                 "NVLink"),
            "c": _("it does not matter: the same bytes move either way"),
            "d": _("PP inside the node; TP and DP across nodes"),
        },
        wrong_choice={
            "b": _("The gradient buffer is big, but it is all-reduced once per step and overlaps with the "
            "backward pass; "
            "TP all-reduces come 4 times per layer and micro-batch and are hard to hide; sequence parallelism and "
            "overlapped GEMM/communication kernels hide much of them, inside NVLink (chapter 07b)."),
            "c": _("The bytes are the same, the links are not: a GPU's NVLink bandwidth is many times its share of the "
            "NICs, and TP traffic waits on the critical path."),
            "d": _("PP sends one activation per micro-batch per stage boundary, point to point: the least "
            "traffic of the "
            "three, the natural one to put across nodes — not inside."),
        },
        explain=_placement_explain,
    )
)
