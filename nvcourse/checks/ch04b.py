"""Checkers for chapter 04b — predicting collectives with NCCL's protocols.

* :func:`ring_protocol_time`: NCCL's ring all-reduce time for one protocol, from its base latency, its
  per-step latency and its bus bandwidth; the hand-picked cases take their inputs from the package's model
  (:func:`nvcourse.costmodel.pair_cost` on 8-GPU H100 / A100 / PCIe nodes), and every expected value is the formula;
* :func:`crossover_bytes`: the size at which two (latency, bandwidth) lines cross;
* :func:`protocol_switch`: the size where a published sweep bends (its cheapest doubling), checked on the
  published GB200 sweep of ``data/measurements.toml`` and on lower envelopes of two lines;
* :func:`nvls_chunk_bytes`: NCCL's NVLS chunk for a call (src/enqueue.cc's rule, read from
  ``data/nccl_tuning.toml`` ``[nvls_pipeline]``), checked at each threshold and on random calls;
* questions ``04b.*``: which pair the model picks, by how much NVLS beats the ring for small buffers, and whether
  a call 16 bytes below NCCL's 1 GiB chunk threshold is faster.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import costmodel
from ..costmodel import sweeps, tuning
from ..i18n import number
from ..i18n import translate as _
from ._answers import Question, answer, register
from ._core import Case, Result, check_function, fmt, rng_for, safe_checker, to_number

__all__ = ["answer", "ring_protocol_time", "crossover_bytes", "protocol_switch", "nvls_chunk_bytes", "KINK_SWEEP",
           "KINK_MIN_BYTES"]

#: The published sweep exercise 4 reads, and the smallest size it looks at (below it the time is flat).
KINK_SWEEP = "azure-nd-gb200-v6-allreduce-4gpu"
KINK_MIN_BYTES = 2**20


def _us(x: float) -> str:
    """A latency constant as the hints write it (0.6, 3.4, 25; 0,6 in French)."""
    return number(x, "g")


# NCCL's constants the hints quote, read from data/nccl_tuning.toml (never typed here)
_BASE = {p: tuning.base_latency_us("ring", p) for p in tuning.PROTOCOLS}
_TREE_BASE_LL = tuning.base_latency_us("tree", "LL")
_STEP = {p: tuning.hw_latency_us("nvlink", "ring", p) for p in tuning.PROTOCOLS}
_NVLS_US = tuning.hw_latency_us("nvlink", "nvls", "Simple")
_LL_CAP_HOPPER = tuning.ll_max_bw_GBps("hopper", 1)


def _ring_time(n: int, nbytes: float, base_us: float, step_us: float, busbw_GBps: float) -> float:
    """NCCL's ring all-reduce: base + 2(n−1) steps + S / algbw, algbw = busbw × n / (2(n−1))."""
    return (base_us + 2 * (n - 1) * step_us) * 1e-6 + nbytes / (busbw_GBps * 1e9 * n / (2 * (n - 1)))


def _ring_variants(n: int, nbytes: float, base_us: float, step_us: float, busbw_GBps: float) -> dict[str, float]:
    algbw = busbw_GBps * 1e9 * n / (2 * (n - 1))
    return {
        _("You left out NCCL's base latency: it is paid once per call, on top of the 2(n−1) steps."):
            2 * (n - 1) * step_us * 1e-6 + nbytes / algbw,
        _("A ring all-reduce has 2(n−1) steps (reduce-scatter then all-gather), not n−1."):
            (base_us + (n - 1) * step_us) * 1e-6 + nbytes / algbw,
        _("busbw is not algbw: the bytes move at algbw = busbw × n / (2(n−1))."):
            (base_us + 2 * (n - 1) * step_us) * 1e-6 + nbytes / (busbw_GBps * 1e9),
        _("The latencies are in µs: multiply by 1e-6 before adding them to the transfer time."):
            (base_us + 2 * (n - 1) * step_us) + nbytes / algbw,
    }


def _protocol_case(system: str, n: int, nbytes: float, proto: str) -> Case:
    """A case whose inputs are NCCL's constants for ``proto`` on ``system`` (the busbw the package's model gives
    the pair) and whose expected value is NCCL's straight-line formula; the model adds size-dependent terms of
    its own (NCCL's corrections, the NVLS pipeline) that this exercise does not ask for."""
    c = costmodel.configure(system, n)
    arch_link = "nvlink" if c.system.has_nvlink else "pci"
    base, step = tuning.base_latency_us("ring", proto), tuning.hw_latency_us(arch_link, "ring", proto)
    cost = costmodel.pair_cost("allreduce", "ring", proto, c)
    busbw = 1.0 / cost.s_per_byte / (n / (2 * (n - 1))) / 1e9
    args = (n, nbytes, base, step, busbw)
    return Case(args, _ring_time(*args), _ring_variants(*args), f"{system} {proto}")


@safe_checker
def ring_protocol_time(fn) -> Result:
    """``fn(n, nbytes, base_us, step_us, busbw_GBps)`` → seconds of NCCL's ring all-reduce on one node."""
    cases = [_protocol_case("dgx-h100", 8, s, p) for s in (8, 2**16, 2**24) for p in ("LL", "LL128", "Simple")]
    cases += [_protocol_case("dgx-a100", 4, 2**20, "LL128"), _protocol_case("pcie-8gpu", 8, 2**12, "LL")]
    rng = rng_for("ring_protocol_time")
    for _i in range(4):
        args = (int(rng.integers(2, 73)), float(2 ** rng.integers(3, 33)), float(rng.uniform(5, 15)),
                float(rng.uniform(0.5, 15)), float(rng.uniform(20, 800)))
        cases.append(Case(args, _ring_time(*args), _ring_variants(*args), "random"))
    return check_function(
        "ring_protocol_time", fn, ["n", "nbytes", "base_us", "step_us", "busbw_GBps"], cases, what="a time in seconds",
        # 0.1 %: a formula that is off only in the 7th digit (float order, 1e-6 vs /1e6) is right; a row marked
        # wrong then differs in its 4th digit, and 5 digits show it (1.5e-05 vs 1.5e-05 read as right-but-red)
        rtol=1e-3, show=lambda v: f"{v:.5g}",
        hint=_("t = (base + 2(n−1) × step) µs + S / algbw, with algbw = busbw × n / (2(n−1))."),
        success=_("This is NCCL's own ring formula: the protocol only changes base, step and busbw — "
                  "LL: {ll_base} + 14 × {ll_step} µs but at most {ll_cap} GB/s of busbw "
                  "on Hopper; Simple: {simple_base} + 14 × {simple_step} µs at the full {full} GB/s.").format(
            ll_base=_us(_BASE['LL']), ll_step=_us(_STEP['LL']), ll_cap=f"{_LL_CAP_HOPPER:g}",
            simple_base=_us(_BASE['Simple']), simple_step=_us(_STEP['Simple']),
            full=f"{costmodel.configure('dgx-h100', 8).system.scaleup_achievable_GBps_dir:.1f}"),
    )  # fmt: skip


def _crossover(lat_a_s: float, bw_a_Bps: float, lat_b_s: float, bw_b_Bps: float) -> float:
    """Size where lat_a + S/bw_a = lat_b + S/bw_b."""
    return (lat_b_s - lat_a_s) / (1.0 / bw_a_Bps - 1.0 / bw_b_Bps)


def _crossover_variants(lat_a: float, bw_a: float, lat_b: float, bw_b: float) -> dict[str, float]:
    return {
        _("Set the two times equal and solve for S: S = (lat_b − lat_a) / (1/bw_a − 1/bw_b); you subtracted "
          "the bandwidths instead of their inverses."): (lat_b - lat_a) * (bw_b - bw_a),
        _("The sign is flipped: the faster-starting line (smaller latency) must be the slower per byte."):
            -_crossover(lat_a, bw_a, lat_b, bw_b),
        _("The latencies are in seconds and the bandwidths in bytes/s: no 1e9 or 1e6 factor is needed."):
            _crossover(lat_a, bw_a, lat_b, bw_b) * 1e9,
    }


def _model_pair_case(system: str, n: int, a: tuple[str, str], b: tuple[str, str]) -> Case:
    c = costmodel.configure(system, n)
    ca, cb = (costmodel.pair_cost("allreduce", algo, proto, c) for algo, proto in (a, b))
    args = (ca.latency_s, 1 / ca.s_per_byte, cb.latency_s, 1 / cb.s_per_byte)
    return Case(args, _crossover(*args), _crossover_variants(*args), f"{system} {a} vs {b}")


@safe_checker
def crossover_bytes(fn) -> Result:
    """``fn(lat_a_s, algbw_a_Bps, lat_b_s, algbw_b_Bps)`` → the size (bytes) where the two lines cross."""
    cases = [
        _model_pair_case("dgx-h100", 8, ("ring", "LL"), ("ring", "LL128")),
        _model_pair_case("dgx-h100", 8, ("ring", "LL128"), ("ring", "Simple")),
        _model_pair_case("dgx-h100", 8, ("ring", "LL"), ("nvls", "Simple")),
        _model_pair_case("dgx-a100", 8, ("ring", "LL"), ("ring", "Simple")),
    ]
    rng = rng_for("crossover_bytes")
    for _i in range(4):
        lat_a, lat_b = sorted(float(x) for x in rng.uniform(1e-6, 1e-4, 2))
        bw_a, bw_b = sorted(float(x) for x in rng.uniform(1e9, 1e12, 2))
        args = (lat_a, bw_a, lat_b, bw_b)
        cases.append(Case(args, _crossover(*args), _crossover_variants(*args), "random"))
    return check_function(
        "crossover_bytes", fn, ["lat_a_s", "algbw_a_Bps", "lat_b_s", "algbw_b_Bps"], cases, what="a size in bytes",
        rtol=1e-6, hint=_("Solve lat_a + S/bw_a = lat_b + S/bw_b for S."),
        success=_("Every protocol switch of NCCL's tuner is such a crossing: LL → LL128 where LL128's larger "
                  "latency is paid back by its bandwidth, LL128 → Simple further up."),
    )  # fmt: skip


def _kink(sizes: list[int], times: list[float], min_bytes: int) -> int:
    """The size S (>= min_bytes) with the smallest t(S) / t(S/2): where doubling the size cost the least."""
    ratios = [(times[i] / times[i - 1], sizes[i]) for i in range(1, len(sizes)) if sizes[i - 1] >= min_bytes]
    return min(ratios)[1]


def _published_sweep() -> tuple[list[int], list[float]]:
    pts = [p for p in sweeps.points() if p.sweep == KINK_SWEEP]
    return [p.bytes for p in pts], [p.time_s for p in pts]


def _envelope_case(lat: tuple[float, float], bw: tuple[float, float], min_bytes: int) -> Case:
    """Lower envelope of two α–β lines, sampled at powers of two from 1 KiB to 1 GiB."""
    sizes = [2**k for k in range(10, 31)]
    times = [min(lat[0] + s / bw[0], lat[1] + s / bw[1]) for s in sizes]
    cross = _crossover(lat[0], bw[0], lat[1], bw[1])
    exp = _kink(sizes, times, min_bytes)
    return Case((sizes, times, min_bytes), exp, _switch_variants(sizes, times, min_bytes, exp),
                _("two lines crossing at {size} B").format(size=number(cross, ".3g")))


def _switch_variants(sizes: list[int], times: list[float], min_bytes: int, exp: int) -> dict[str, float]:
    no_floor = _kink(sizes, times, 0)
    out = {_("That is the size just before the bend; return the size whose doubling cost the least."):
           sizes[sizes.index(exp) - 1]}
    if no_floor != exp:
        out[_("Start at min_bytes: below it the time is flat (latency), so every doubling is cheap there (you "
              "returned {size} B).").format(size=fmt(no_floor))] = no_floor
    return out


def _to_size(value: Any) -> float:
    return to_number(value, "a size in bytes (one of the sizes you were given)")


@safe_checker
def protocol_switch(fn) -> Result:
    """``fn(sizes, times, min_bytes)`` → the size (from ``sizes``, >= min_bytes) where the time grew least
    when the size doubled: where the measured curve bends because NCCL changed protocol."""
    sizes, times = _published_sweep()
    exp = _kink(sizes, times, KINK_MIN_BYTES)
    prev = sizes[sizes.index(exp) - 1]
    cases = [Case((sizes, times, KINK_MIN_BYTES), exp, _switch_variants(sizes, times, KINK_MIN_BYTES, exp), KINK_SWEEP)]
    cases += [_envelope_case((1e-6, 20e-6), (10e9, 100e9), 2**15), _envelope_case((5e-6, 60e-6), (20e9, 400e9), 2**18)]
    return check_function(
        "protocol_switch", fn, ["sizes", "times", "min_bytes"], cases, what="a size in bytes", rtol=0, convert=_to_size,
        hint=_("For each size S >= min_bytes (with S/2 >= min_bytes), compute t(S)/t(S/2); return the S where it "
               "is smallest."),
        success=_("On the published GB200 run the time grows only {ratio} from {prev} B to {size} B: NCCL moved "
                  "to a protocol with more bandwidth there.").format(ratio=_ratio_text(sizes, times, exp),
                                                                     prev=fmt(prev), size=fmt(exp)),
    )  # fmt: skip


def _ratio_text(sizes: list[int], times: list[float], s: int) -> str:
    i = sizes.index(s)
    return f"×{times[i] / times[i - 1]:.2f}"


# ---- questions ----


def _model_first_switch() -> str:
    """Which switch of the model (on the KINK_SWEEP configuration) lies closest to the published bend."""
    sizes, times = _published_sweep()
    kink = _kink(sizes, times, KINK_MIN_BYTES)
    grid = 2.0 ** np.arange(10, 34, 0.125)
    sw = costmodel.predict_sweep("allreduce", "gb200-nvl72", 4, grid, algo="ring")
    switches = [(abs(np.log2(grid[i + 1] / kink)), f"{sw.proto[i]}->{sw.proto[i + 1]}")
                for i in np.nonzero(sw.proto[1:] != sw.proto[:-1])[0]]
    nearest = min(switches)[1]
    return {"LL->LL128": "a", "LL128->Simple": "b", "LL->Simple": "c"}[nearest]


register(Question(
    "04b.kink_protocol",
    _("The published GB200 sweep bends at the size your protocol_switch found. Which switch of the model "
      "lies nearest to it?"),
    _model_first_switch,
    choices={"a": "LL → LL128", "b": "LL128 → Simple", "c": _("LL → Simple (no LL128 in between)")},
    wrong_choice={"b": _("Draw the model's lines (protocol_kinks_figure): LL128 → Simple comes later, in the tens "
                         "of MiB."),
                  "c": _("The model uses LL128 over NVLink on Blackwell: there is an LL128 range in between.")},
    explain=_("The model switches LL → LL128 between 4 and 8 MiB and LL128 → Simple in the tens of MiB; the "
              "published run bends at 8 MiB. The *shape* matches NCCL's tuner; the floor (~16 µs measured against "
              "10 µs) is the launch cost NCCL's model leaves out."),
))  # fmt: skip


def _pick_1k() -> str:
    p = costmodel.predict("allreduce", "dgx-h100", 8, 1024)
    letters = {("ring", "LL"): "a", ("nvls", "Simple"): "b", ("ring", "Simple"): "c", ("tree", "LL"): "d"}
    return letters[(p.algo, p.proto)]


register(Question(
    "04b.pick_1k",
    _("Predict before you compute: for a 1 KiB all-reduce on one node of 8 H100, which (algorithm, protocol) "
      "does NCCL's cost model pick?"),
    _pick_1k,
    choices={"a": _("ring / LL"), "b": "NVLS / Simple", "c": _("ring / Simple"), "d": _("tree / LL")},
    wrong_choice={"b": _("NVLS has one step but NCCL charges it {nvls} µs per call; the LL ring costs "
                         "{base} + 14 × {step} = {total} µs.").format(
                           nvls=_us(_NVLS_US), base=_us(_BASE['LL']), step=_us(_STEP['LL']),
                           total=f"{_BASE['LL'] + 14 * _STEP['LL']:.0f}"),
                  "c": _("Simple pays {step} µs per step ({total} µs in all); for 1 KiB the bandwidth does not "
                         "matter.").format(step=_us(_STEP['Simple']),
                                           total=f"{_BASE['Simple'] + 14 * _STEP['Simple']:.0f}"),
                  "d": _("Inside one node NCCL's tree is a chain of 7 hops up and 7 down: {tree_base} + 14 × "
                         "{tree_step} µs, a hair slower than the ring's {base} + 14 × {step} µs.").format(
                           tree_base=_us(_TREE_BASE_LL), tree_step=_us(tuning.hw_latency_us('nvlink', 'tree', 'LL')),
                           base=_us(_BASE['LL']), step=_us(_STEP['LL']))},
    explain=_("For small buffers only the latency counts, and LL has the smallest per-step latency "
              "({step} µs over NVLink).").format(step=_us(_STEP['LL'])),
))  # fmt: skip


def _nvls_speedup_72() -> float:
    ring = costmodel.predict("allreduce", "gb200-nvl72", 72, 256 * 2**10, algo="ring")
    nvls = costmodel.predict("allreduce", "gb200-nvl72", 72, 256 * 2**10, algo="nvls")
    return ring.time_s / nvls.time_s


def _nvls_speedup_variants() -> dict[str, float]:
    c = costmodel.configure("gb200-nvl72", 72)
    simple = costmodel.pair_cost("allreduce", "ring", "Simple", c).time(256 * 2**10)
    nvls = costmodel.predict("allreduce", "gb200-nvl72", 72, 256 * 2**10, algo="nvls").time_s
    return {_("That is the ring with the Simple protocol ({step} µs per step); NCCL runs a small ring with "
              "LL.").format(step=_us(_STEP['Simple'])):
            float(simple / nvls)}


register(Question(
    "04b.nvls_speedup_72",
    _("By the model, how many times faster than the best ring is NVLS for a 256 KiB all-reduce on 72 GB200 GPUs?"),
    _nvls_speedup_72,
    unit="×",
    rtol=0.05,
    variants=_nvls_speedup_variants,
    hint=_("Divide the best ring's time by NVLS's, both from the model at 256 KiB on 72 GPUs; a small ring runs "
           "LL."),
    explain=_("A 72-GPU ring has 142 steps: with LL that is {base} + 142 × {step} ≈ {total} µs before any byte "
              "moves, against NVLS's {nvls} µs. So NVLS wins by a few times, not by the ~{simple}× a Simple-only α "
              "would suggest.").format(base=_us(_BASE['LL']), step=_us(_STEP['LL']),
                                       total=f"{_BASE['LL'] + 142 * _STEP['LL']:.0f}", nvls=_us(_NVLS_US),
                                       simple=f"{next(iter(_nvls_speedup_variants().values())):.0f}"),
))  # fmt: skip



# ---- exercise 6: NCCL's NVLS chunk rule ----

def _nvls_rule() -> tuple[int, tuple[tuple[int, int], ...]]:
    """NCCL's full NVLS chunk and its shrink rule, read from data/nccl_tuning.toml [nvls_pipeline]."""
    t = tuning.raw()["nvls_pipeline"]
    return int(t["chunk_bytes"]), tuple((int(m), int(c)) for m, c in t["shrink"])


def _nvls_chunk(nbytes: float, channels: int, heads: int, *, sequential: bool = True, whole_call: bool = False) -> int:
    """NCCL's chunk for an NVLS all-reduce of ``nbytes`` split evenly over ``channels`` (the rule is applied to a
    channel's bytes, src/enqueue.cc); the keywords build the usual mistakes."""
    chunk, shrink = _nvls_rule()
    share = nbytes if whole_call else nbytes / channels
    for m, c in shrink:
        if share < m * heads * chunk and chunk > c:
            chunk = c
            if not sequential:
                break
    return chunk


def _chunk_case(nbytes: int, channels: int, heads: int, why: str) -> Case:
    exp = _nvls_chunk(nbytes, channels, heads)
    variants = {
        _("NCCL applies the three rules one after another, each with the chunk the previous rule left: do not "
          "stop at the first one that matches."): _nvls_chunk(nbytes, channels, heads, sequential=False),
        _("NCCL applies the rule to each channel's bytes, nbytes / channels; you compared the whole call's bytes."):
            _nvls_chunk(nbytes, channels, heads, whole_call=True),
    }
    return Case((nbytes, channels, heads), exp, {k: v for k, v in variants.items() if v != exp}, why)


@safe_checker
def nvls_chunk_bytes(fn) -> Result:
    """``fn(nbytes, channels, heads)`` → the chunk (bytes) NCCL's NVLS all-reduce uses for a call of ``nbytes``."""
    gib, mib = 2**30, 2**20
    cases = [
        _chunk_case(gib, 16, 8, _("8 H100 at 1 GiB")),
        _chunk_case(gib - 16, 16, 8, _("8 H100, 16 B less")),
        _chunk_case(64 * mib - 16, 16, 8, _("8 H100 just below 64 MiB")),
        _chunk_case(8 * mib - 16, 16, 8, _("8 H100 just below 8 MiB")),
        _chunk_case(gib, 24, 8, _("8 GB200 GPUs at 1 GiB")),
        _chunk_case(6 * gib, 24, 32, _("72 GB200 GPUs at 6 GiB")),
        _chunk_case(4 * gib, 24, 32, _("72 GB200 GPUs at 4 GiB")),
    ]
    rng = rng_for("nvls_chunk_bytes")
    for _i in range(5):
        cases.append(_chunk_case(int(2 ** rng.uniform(10, 34)), int(rng.choice([16, 24, 32])),
                                 int(rng.integers(2, 33)), "random"))
    chunk, shrink = _nvls_rule()
    rules = "; ".join(_("a channel's bytes (nbytes / channels) below {m} × heads × chunk → {chunk}").format(
        m=m, chunk=fmt(c)) for m, c in shrink)
    return check_function(
        "nvls_chunk_bytes", fn, ["nbytes", "channels", "heads"], cases, what="a chunk in bytes", rtol=0,
        convert=lambda v: to_number(v, "a chunk size in bytes"),
        hint=_("Start from {chunk} B and apply, in order: {rules} (each rule only if the chunk is still "
               "larger).").format(chunk=fmt(chunk), rules=rules),
        success=_("That is src/enqueue.cc's rule. Just below each threshold a call runs twice the loops of one just "
                  "above, and every loop costs a handshake: in the published 8-H100 runs busbw grows least just "
                  "below a threshold (256 to 512 MiB) and more again across it (512 MiB to 1 GiB)."),
    )  # fmt: skip


def _threshold_step_s() -> float:
    """Seconds by which the model's NVLS all-reduce of 1 GiB - 16 B on 8 H100 is slower than one of 1 GiB."""
    below, at = (costmodel.predict("allreduce", "dgx-h100", 8, s, algo="nvls").time_s for s in (2**30 - 16, 2**30))
    return below - at


def _bigger_is_faster() -> str:
    step = _threshold_step_s()
    return "a" if step > 0 else ("b" if step < 0 else "c")


register(Question(
    "04b.bigger_is_faster",
    _("On 8 H100 with NVLS, how does an all-reduce of 1 GiB − 16 B compare with one of 1 GiB, by the model?"),
    _bigger_is_faster,
    choices={"a": _("1 GiB − 16 B takes longer"), "b": _("1 GiB takes longer (16 more bytes)"),
             "c": _("the same time")},
    wrong_choice={"b": _("16 bytes cost nothing at 280 GB/s; what changes at 1 GiB is NCCL's chunk (64 → 128 KiB), "
                         "so no channel runs twice the loops."),
                  "c": _("The bytes are the same to a few picoseconds, but the number of loops is not: the chunk "
                         "doubles at 1 GiB.")},
    explain=lambda: _("NCCL gives fifteen of its sixteen channels exactly 64 MiB (the full 128 KiB chunk, 64 loops) "
                      "and the last one 64 MiB − 16 B: 64 KiB chunks, 128 loops, each with a Simple step's fixed "
                      "costs (the model borrows NCCL's {step} µs), and the call ends with that channel. The model "
                      "takes {extra} µs longer for the smaller call (the larger fill of the larger chunk takes some "
                      "back).").format(step=_us(tuning.hw_latency_us('nvlink', 'ring', 'Simple')),
                                       extra=f"{_threshold_step_s() * 1e6:.0f}"),
))  # fmt: skip
