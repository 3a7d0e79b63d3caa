"""Checkers for chapter 04 — collectives and all-reduce.

* :func:`algbw_busbw` against nccl-tests' definitions (:func:`nvcourse.collectives.busbw_factor`);
* :func:`ring_schedule` simulates the learner's schedule on numpy arrays (an independent simulator, not
  the package's), then optionally compares it with the trace of the real ring all-reduce run by
  :class:`nvcourse.collectives.ProcessGroup`;
* :func:`ring_time` / :func:`prediction_vs_measurement` for the "predict first, then run" exercise:
  the model is :func:`nvcourse.reliability.ring_allreduce_time` (α-β ring, tested by hand).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from .. import collectives, reliability
from ..i18n import language, localize_numbers, number
from ..i18n import translate as _
from ._answers import Question, answer, register
from ._core import (
    ERROR,
    FAIL,
    PASS,
    RECORDED,
    Case,
    CheckError,
    LearnerRaised,
    Result,
    best_hint,
    call_learner,
    check_function,
    close,
    describe_exception,
    diagnose,
    exception_hint,
    fmt,
    require_callable,
    rng_for,
    safe_checker,
    to_number,
)

__all__ = ["answer", "algbw_busbw", "ring_schedule", "ring_time", "record_prediction", "prediction_vs_measurement"]

OPS = ("allreduce", "reducescatter", "allgather", "broadcast")


def _pair(value: Any) -> tuple[float, float]:
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return to_number(value[0], _("algbw in GB/s")), to_number(value[1], _("busbw in GB/s"))
    if isinstance(value, (tuple, list)):
        raise CheckError(_("your code returned {count} values; expected two: (algbw_GBps, busbw_GBps).").format(
            count=len(value)), _("Return a tuple: `return algbw, busbw`."))
    to_number(value)  # None, strings... get their own message
    raise CheckError(_("your code returned one number ({value}); expected two: (algbw_GBps, busbw_GBps).").format(
        value=fmt(value)), _("Return a tuple: `return algbw, busbw`."))


@safe_checker
def algbw_busbw(fn) -> Result:
    """``fn(op, nbytes, time_s, n)`` → ``(algbw_GBps, busbw_GBps)`` as nccl-tests reports them."""
    require_callable("algbw_busbw", fn, "algbw_busbw")
    rng = rng_for("algbw_busbw")
    cases = [("allreduce", 2**30, 5.2e-3, 8), ("allreduce", 64 * 2**20, 410e-6, 2), ("allgather", 2**28, 1.9e-3, 8),
             ("reducescatter", 2**26, 2.5e-4, 4), ("broadcast", 2**24, 1e-4, 16), ("allreduce", 8 * 2**20, 3e-4, 72)]
    for _i in range(4):
        cases.append((str(rng.choice(OPS)), int(2 ** rng.integers(10, 33)), float(10 ** rng.uniform(-5, -1)),
                      int(rng.integers(2, 129))))
    ok, wrong, hints = 0, [], []
    for op, nbytes, t, n in cases:
        algbw = nbytes / t / 1e9
        busbw = algbw * collectives.busbw_factor(op, n)
        label = f"algbw_busbw({op!r}, nbytes={fmt(nbytes)}, time_s={fmt(t)}, n={n})"
        try:
            got_a, got_b = _pair(call_learner(fn, op, nbytes, t, n))
        except LearnerRaised as raised:
            wrong.append(_("{call} raised {error}").format(call=label, error=describe_exception(raised.exc)))
            hints.append(exception_hint(raised.exc))
            continue
        except CheckError as err:
            if err.status == "todo":
                raise
            wrong.append(_("{call}: {problem}").format(call=label, problem=err.message))
            hints.append(err.hint)
            continue
        good_a, good_b = close(got_a, algbw, 1e-6), close(got_b, busbw, 1e-6)
        if good_a and good_b:
            ok += 1
            continue
        if close(got_a, busbw, 1e-6) and close(got_b, algbw, 1e-6) and algbw != busbw:
            wrong.append(_("{call} returned ({algbw}, {busbw}): swapped").format(call=label, algbw=fmt(got_a),
                                                                                busbw=fmt(got_b)))
            hints.append(_("Return (algbw, busbw) in that order."))
            continue
        if not good_a:
            wrong.append(_("{call}: algbw {got}, expected {expected}").format(call=label, got=fmt(got_a),
                                                                             expected=fmt(algbw)))
            hints.append(diagnose(got_a, algbw, {_("algbw = S / t: a rate, not a time."): t / nbytes * 1e9}))
            continue
        wrong.append(_("{call}: busbw {got}, expected {expected}").format(call=label, got=fmt(got_b),
                                                                         expected=fmt(busbw)))
        f = collectives.busbw_factor(op, n)
        hints.append(diagnose(got_b, busbw, {
            _("busbw = algbw × a factor that depends on the operation (all-reduce 2(n−1)/n)."):
                algbw if f != 1 else None,
            _("All-reduce uses 2(n−1)/n; reduce-scatter and all-gather (n−1)/n; broadcast 1."):
                algbw * (n - 1) / n if op == "allreduce" else (algbw * 2 * (n - 1) / n if f != 1 else None),
            _("n−1 vs n: the factor is 2(n−1)/n (or (n−1)/n), not 2n/(n−1)."): algbw * 2 * n / (n - 1),
        }))
    total = len(cases)
    if not wrong:
        return Result("algbw_busbw", PASS, _("right on all {total} inputs.").format(total=total),
                      notes=[_("busbw lets you compare with the link speed whatever the number of GPUs.")])
    return Result("algbw_busbw", FAIL, _("wrong on {wrong} of {total} inputs.").format(wrong=len(wrong), total=total),
                  right=[_("right on {ok} of {total} inputs").format(ok=ok, total=total)] if ok else [],
                  wrong=wrong[:3],
                  hint=best_hint(hints,
                                 _("algbw = S / t / 1e9 (GB/s = 10^9 B/s); busbw = algbw × factor(op, n) "
                                   "(nccl-tests PERFORMANCE.md).")))


# ------------------------------------------------------------------------------------------------
# ring schedule


def _simulate(schedule: Any, p: int) -> tuple[list[str], list[str], str]:
    """Check the structure of a ring all-reduce schedule and run it on numpy data. Returns (right, wrong, hint)."""
    right: list[str] = []
    if not isinstance(schedule, (list, tuple)):
        raise CheckError(_("your function returned a {type}; expected a list of steps.").format(
            type=type(schedule).__name__),
            _("Return a list with one entry per step; each entry a list of (src, dst, chunk) tuples."))
    steps = 2 * (p - 1)
    if len(schedule) != steps:
        hint = (_("A ring all-reduce has p−1 reduce-scatter steps then p−1 all-gather steps: 2(p−1) in all.")
                if len(schedule) in (p - 1, p, 2 * p) else _("Count the steps: 2(p−1) for p ranks."))
        return right, [_("p={p}: {got} steps, expected 2(p−1) = {steps}").format(p=p, got=len(schedule),
                                                                                steps=steps)], hint
    rng = np.random.default_rng(p)
    data = rng.integers(-50, 50, size=(p, p, 3)).astype(np.int64)  # data[rank, chunk, elements]
    expected = data.sum(axis=0)
    buf = data.copy()
    for s, step in enumerate(schedule):
        phase = "reduce-scatter" if s < p - 1 else "all-gather"
        if not isinstance(step, (list, tuple)):
            return right, [_("p={p}, step {s}: {step} is not a list of (src, dst, chunk)").format(
                p=p, s=s, step=fmt(step))], _("Each step is a list of (src, dst, chunk) tuples.")
        try:
            msgs = [tuple(int(x) for x in m) for m in step]
        except (TypeError, ValueError):
            return (
                right,
                [_("p={p}, step {s}: entries must be (src, dst, chunk) tuples of ints; got {got}").format(
                    p=p, s=s, got=fmt(list(step)))],
                _("Each message is a tuple of three ints: (src, dst, chunk)."),
            )
        if any(len(m) != 3 for m in msgs):
            return right, [_("p={p}, step {s}: every message needs 3 numbers (src, dst, chunk)").format(p=p, s=s)], ""
        if any(not (0 <= x < p) for m in msgs for x in m):
            return right, [_("p={p}, step {s}: ranks and chunks must be from 0 to {last}; got {got}").format(
                p=p, s=s, last=p - 1, got=fmt(msgs))], _("Use `% p` to wrap around the ring.")
        not_ring = [m for m in msgs if m[1] != (m[0] + 1) % p]
        if not_ring:
            return right, [_("p={p}, step {s}: {message} does not go to the right-hand neighbour").format(
                p=p, s=s, message=fmt(not_ring[0]))], _("In a ring, rank r only sends to (r + 1) % p.")
        senders = Counter(m[0] for m in msgs)
        if len(msgs) != p or len(senders) != p:
            return right, [_("p={p}, step {s}: {messages} messages from {senders} distinct ranks; expected every "
                             "rank to send exactly one chunk").format(p=p, s=s, messages=len(msgs),
                                                                     senders=len(senders))], \
                _("In every step every rank sends one chunk (1/p of the buffer) and receives one: all links busy.")
        snapshot = buf.copy()  # all sends of a step happen at once
        for src, dst, c in msgs:
            if phase == "reduce-scatter":
                buf[dst, c] += snapshot[src, c]
            else:
                buf[dst, c] = snapshot[src, c]
        if s == p - 2:
            owners = [r for r in range(p) if any(np.array_equal(buf[r, c], expected[c]) for c in range(p))]
            if len(owners) != p:
                missing = sorted(set(range(p)) - set(owners))
                return right, [_("p={p}: after the reduce-scatter phase ranks {ranks} hold no fully reduced "
                                 "chunk").format(p=p, ranks=missing)], \
                    _("In reduce-scatter step s rank r should pass on the chunk it has accumulated longest: "
                      "chunk (r − s) % p — the one it received in the previous step.")
            right.append(_("p={p}: after p−1 steps every rank owns one fully reduced chunk").format(p=p))
    bad = [r for r in range(p) if not np.array_equal(buf[r], expected)]
    if bad:
        return right, [_("p={p}: after all steps ranks {ranks} do not hold the full sum").format(p=p, ranks=bad)], \
            _("In all-gather step t rank r forwards the reduced chunk it got most recently: the one it owned "
              "after reduce-scatter at t = 0, then the one it just received.")
    right.append(_("p={p}: every rank ends with the sum of all inputs ({steps} steps, each link busy every "
                   "step)").format(p=p, steps=steps))
    return right, [], ""


def _trace_schedule(result: Any) -> tuple[int, dict[int, set[tuple[int, int, int]]]]:
    """(procs, {step: {(src, dst, chunk)}}) of one call of a traced ring all-reduce."""
    p = result.procs
    last = max(e.iteration for e in result.trace)
    steps: dict[int, set[tuple[int, int, int]]] = {}
    for e in result.trace:
        if e.iteration == last and e.peer >= 0:
            steps.setdefault(e.step, set()).add((e.peer, e.rank, e.chunk))  # rank reads from peer: peer sends
    return p, steps


@safe_checker
def ring_schedule(fn, trace: Any = None) -> Result:
    """``fn(p)`` → the ring all-reduce schedule: ``schedule[step] = [(src, dst, chunk), ...]``.

    Steps 0..p−2 are reduce-scatter (the receiver adds the chunk), steps p−1..2p−3 all-gather (the
    receiver overwrites it). With ``trace`` (a traced ``ProcessGroup.run("allreduce", algo="ring")``
    result) the schedule for its p is also compared with what the real processes did.
    """
    require_callable("ring_schedule", fn, "ring_schedule")
    right: list[str] = []
    for p in (2, 3, 4, 5, 8):
        try:
            schedule = call_learner(fn, p)
        except LearnerRaised as raised:
            return Result("ring_schedule", ERROR, _("ring_schedule({p}) raised {error}.").format(
                              p=p, error=describe_exception(raised.exc)),
                          right=right, hint=exception_hint(raised.exc))
        got_right, wrong, hint = _simulate(schedule, p)
        right += got_right
        if wrong:
            return Result("ring_schedule", FAIL, _("the schedule for p={p} does not all-reduce.").format(p=p),
                          right=right[-1:], wrong=wrong, hint=hint)
    right = [_("p = 2, 3, 4, 5, 8: after p−1 steps every rank owns one fully reduced chunk, after 2(p−1) steps "
               "every rank holds the full sum; every link busy at every step")]
    notes = []
    if trace is not None:
        if getattr(trace, "trace", None) and getattr(trace, "algo", "") == "ring" and trace.op == "allreduce":
            p, real = _trace_schedule(trace)
            mine = {s: {tuple(int(x) for x in m) for m in step} for s, step in enumerate(call_learner(fn, p))}
            if mine == real:
                right.append(_("p={p}: identical to the {transfers} transfers the {p} CPU processes made (same peer "
                               "and chunk at every step)").format(p=p, transfers=sum(len(v) for v in real.values())))
            else:
                notes.append(_("p={p}: your schedule is correct but orders the chunks differently from nvcourse's "
                               "ring (chunk numbering is a convention; the traffic per link is the same).").format(p=p))
        else:
            notes.append(_("trace= needs the result of pg.run('allreduce', algo='ring', trace=True)."))
    return Result("ring_schedule", PASS, _("a correct ring all-reduce for p = 2, 3, 4, 5 and 8."), right=right,
                  notes=notes + [_("Every rank sends 2(p−1) chunks of S/p: 2(p−1)/p·S, the busbw factor.")])


# ------------------------------------------------------------------------------------------------
# predict first, then run

#: A prediction within this fraction of the α-β model is right: the measurement on an emulated link lands up to
#: about this far above the model (the model is a lower bound: copies and process wake-ups add to every step).
PREDICTION_RTOL = 0.15
#: the same tolerance in percent, as the feedback writes it (``15``)
_RTOL_PCT = f"{PREDICTION_RTOL * 100:.0f}"


def _ms(seconds: float) -> str:
    """``seconds`` in milliseconds as the feedback writes them (4 significant digits), in the language's style."""
    return localize_numbers(fmt(seconds * 1e3))


@safe_checker
def ring_time(fn) -> Result:
    """``fn(nbytes, p, alpha_s, beta_Bps)`` → α-β time of a ring all-reduce (2(p−1) steps of S/p)."""
    rng = rng_for("ring_time")
    combos = [(2**20, 4, 200e-6, 1e9), (2**30, 8, 3.4e-6, 370e9), (4096, 16, 14e-6, 47e9), (2**26, 2, 5.7e-6, 55e9)]
    combos += [(int(2 ** rng.integers(10, 32)), int(rng.integers(2, 65)), float(10 ** rng.uniform(-6, -3)),
                float(10 ** rng.uniform(8, 12))) for _ in range(4)]
    cases = []
    for n, p, a, b in combos:
        exp = reliability.ring_allreduce_time(n, p, alpha_s=a, beta_Bps=b)
        cases.append(Case((n, p, a, b), exp, {
            _("Only p−1 steps: that is a reduce-scatter; the all-reduce adds an all-gather (2(p−1) steps)."):
                (p - 1) * (a + n / p / b),
            # first: with p = 8 the ×8 of bits equals the ×p of the whole buffer; the other cases tell them apart
            _("Bits vs bytes: nbytes is in bytes and β in bytes per second; no factor 8."):
                2 * (p - 1) * (a + 8 * n / p / b),
            _("Each step moves one chunk of S/p, not the whole buffer S."): 2 * (p - 1) * (a + n / b),
            _("2p steps: a ring of p ranks needs 2(p−1)."): 2 * p * (a + n / p / b),
            _("The latency α is paid at every one of the 2(p−1) steps, not once."): a + 2 * (p - 1) * n / p / b,
        }))
    return check_function("ring_time", fn, ["nbytes", "p", "alpha_s", "beta_Bps"], cases, what=_("a time in seconds"),
                          hint=_("2(p−1) steps; each costs α + (S/p)/β."),
                          success=_("t = 2(p−1)·α + 2(p−1)/p · S/β: latency grows with p, bandwidth term does "
                                    "not."))


def _learner_prediction(predicted_s: Any, name: str) -> float | Result:
    """The learner's prediction in seconds (called first when it is a function), or the ERROR result to return."""
    if callable(predicted_s):
        try:
            predicted_s = call_learner(predicted_s)
        except LearnerRaised as raised:
            return Result(name, ERROR,
                          _("your prediction raised {error}.").format(error=describe_exception(raised.exc)),
                          hint=exception_hint(raised.exc))
    return to_number(predicted_s, _("a time in seconds"))


@safe_checker
def record_prediction(predicted_s: Any) -> Result:
    """Record a prediction (seconds) before running the experiment; it is compared afterwards."""
    name = _("prediction")
    pred = _learner_prediction(predicted_s, name)
    if isinstance(pred, Result):
        return pred
    if pred <= 0:
        raise CheckError(_("a time must be positive; your prediction is {value} s.").format(value=fmt(pred)))
    return Result(name, RECORDED, _("{ms} ms. Now run the experiment below; the check there compares your "
                                    "prediction with the model and the measurement.").format(ms=_ms(pred)))


@safe_checker
def prediction_vs_measurement(predicted_s: Any, result: Any, *, alpha_s: float, beta_Bps: float) -> Result:
    """Compare the learner's prediction and a measured ``ProcessGroup.run`` result with the α-β model."""
    name = _("prediction vs measurement")
    pred = _learner_prediction(predicted_s, name)
    if isinstance(pred, Result):
        return pred
    if not hasattr(result, "time_s") or not hasattr(result, "procs"):
        raise CheckError(_("the second argument must be the result of pg.run(...)."), status=ERROR)
    model = reliability.ring_allreduce_time(result.nbytes, result.procs, alpha_s=alpha_s, beta_Bps=beta_Bps)
    measured = result.time_s
    right, wrong, notes = [], [], []
    lo, hi = sorted((model, measured))
    if close(pred, model, 0.01):
        right.append(_("your prediction {pred} ms matches the model ({model} ms)").format(pred=_ms(pred),
                                                                                       model=_ms(model)))
        status = PASS
    elif close(pred, model, PREDICTION_RTOL) or lo <= pred <= hi:
        right.append(_("your prediction {pred} ms is close: the model gives {model} ms, the run {measured} ms, and "
                       "a prediction within {rtol}% of the model or between the two is right (the model's own error "
                       "on these emulated runs)").format(pred=_ms(pred), model=_ms(model), measured=_ms(measured),
                                                         rtol=_RTOL_PCT))
        status = PASS
    else:
        wrong.append(_("your prediction {pred} ms; the α-β model gives {model} ms (within {rtol}% counts as "
                       "right)").format(pred=_ms(pred), model=_ms(model), rtol=_RTOL_PCT))
        status = FAIL
    ratio = measured / model
    notes.append(_("measured {measured} ms = {ratio} × the model (correct result: {correct}).").format(
        measured=_ms(measured), ratio=number(ratio, ".2f"),
        correct=(_("yes") if result.correct else _("no")) if language() == "fr" else result.correct))
    if ratio < 0.9:
        notes.append(
            _("Faster than the model: the emulated link delay overlaps with other work, or steps run in parallel.")
        )
    elif ratio > 1.5:
        notes.append(_("Slower than the model: real copies, process wake-ups and spin-waiting on few CPU cores add "
                       "to every step. The model is a lower bound on this machine."))
    else:
        notes.append(_("Within 50 % of the model: the emulated α and β dominate."))
    hint = "" if status == PASS else (diagnose(pred, model, {
        _("You counted p−1 steps (a reduce-scatter); an all-reduce has 2(p−1)."):
            (result.procs - 1) * (alpha_s + result.nbytes / result.procs / beta_Bps),
    }) or _("Use your ring_time function with the same nbytes, p, α and β as the run."))
    return Result(name, status, _("prediction checked against the model; measurement shown for comparison."),
                  right=right, wrong=wrong, hint=hint, notes=notes)


# ------------------------------------------------------------------------------------------------
# questions

register(
    Question(
        "04.busbw_meaning",
        _("nccl-tests reports an all-reduce busbw of 370 GB/s on 8 GPUs. What does busbw tell you?"),
        lambda: "c",
        choices={
            "a": _("the bytes of the buffer divided by the time"),
            "b": _("the total bytes all GPUs sent, divided by the time"),
            "c": _("the rate each GPU's link had to sustain, comparable with the link's bandwidth whatever the GPU "
                   "count"),
        },
        wrong_choice={
            "a": _("That is algbw = S / t."),
            "b": _("That grows with the number of GPUs; busbw is per GPU (algbw × 2(n−1)/n)."),
        },
        explain=_("busbw = algbw × 2(n−1)/n for all-reduce: the per-link rate, so you compare it directly with β."),
    )
)
