"""Checkers for chapter 04b — predicting collectives with NCCL's protocols.

* :func:`ring_protocol_time`: NCCL's ring all-reduce time for one protocol, from its base latency, its
  per-step latency and its bus bandwidth; the hand-picked cases come from the package's model
  (:func:`nvcourse.costmodel.pair_cost` on 8-GPU H100 / A100 / PCIe nodes), the random ones from the formula;
* :func:`crossover_bytes`: the size at which two (latency, bandwidth) lines cross;
* :func:`protocol_switch`: the size where a published sweep bends (its cheapest doubling), checked on the
  published GB200 sweep of ``data/measurements.toml`` and on lower envelopes of two lines;
* questions ``04b.*``: which pair the model picks, and by how much NVLS beats the ring for small buffers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import costmodel
from ..costmodel import sweeps, tuning
from ._answers import Question, register
from ._core import Case, check_function, fmt, rng_for, safe_checker, to_number

__all__ = ["ring_protocol_time", "crossover_bytes", "protocol_switch", "KINK_SWEEP", "KINK_MIN_BYTES"]

#: The published sweep exercise 4 reads, and the smallest size it looks at (below it the time is flat).
KINK_SWEEP = "azure-nd-gb200-v6-allreduce-4gpu"
KINK_MIN_BYTES = 2**20


def _us(x: float) -> str:
    """A latency constant as the hints write it (0.6, 3.4, 25)."""
    return f"{x:g}"


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
        "You left out NCCL's base latency: it is paid once per call, on top of the 2(n−1) steps.":
            2 * (n - 1) * step_us * 1e-6 + nbytes / algbw,
        "A ring all-reduce has 2(n−1) steps (reduce-scatter then all-gather), not n−1.":
            (base_us + (n - 1) * step_us) * 1e-6 + nbytes / algbw,
        "busbw is not algbw: the bytes move at algbw = busbw × n / (2(n−1)).":
            (base_us + 2 * (n - 1) * step_us) * 1e-6 + nbytes / (busbw_GBps * 1e9),
        "The latencies are in µs: multiply by 1e-6 before adding them to the transfer time.":
            (base_us + 2 * (n - 1) * step_us) + nbytes / algbw,
    }


def _protocol_case(system: str, n: int, nbytes: float, proto: str) -> Case:
    """A case whose inputs are NCCL's constants for ``proto`` on ``system`` and whose expected value is the
    package's model (which must agree with the formula: that agreement is what the check tests)."""
    c = costmodel.configure(system, n)
    arch_link = "nvlink" if c.system.has_nvlink else "pci"
    base, step = tuning.base_latency_us("ring", proto), tuning.hw_latency_us(arch_link, "ring", proto)
    cost = costmodel.pair_cost("allreduce", "ring", proto, c)
    busbw = 1.0 / cost.s_per_byte / (n / (2 * (n - 1))) / 1e9
    args = (n, nbytes, base, step, busbw)
    return Case(args, float(cost.time(nbytes)), _ring_variants(*args), f"{system} {proto}")


@safe_checker
def ring_protocol_time(fn) -> "Result":  # noqa: F821
    """``fn(n, nbytes, base_us, step_us, busbw_GBps)`` → seconds of NCCL's ring all-reduce on one node."""
    cases = [_protocol_case("dgx-h100", 8, s, p) for s in (8, 2**16, 2**24) for p in ("LL", "LL128", "Simple")]
    cases += [_protocol_case("dgx-a100", 4, 2**20, "LL128"), _protocol_case("pcie-8gpu", 8, 2**12, "LL")]
    rng = rng_for("ring_protocol_time")
    for _ in range(4):
        args = (int(rng.integers(2, 73)), float(2 ** rng.integers(3, 33)), float(rng.uniform(5, 15)),
                float(rng.uniform(0.5, 15)), float(rng.uniform(20, 800)))
        cases.append(Case(args, _ring_time(*args), _ring_variants(*args), "random"))
    return check_function(
        "ring_protocol_time", fn, ["n", "nbytes", "base_us", "step_us", "busbw_GBps"], cases, what="a time in seconds",
        rtol=1e-6,
        hint="t = (base + 2(n−1) × step) µs + S / algbw, with algbw = busbw × n / (2(n−1)).",
        success="This is NCCL's own ring formula (tuning.cc): the protocol only changes base, step and busbw — "
                f"LL: {_us(_BASE['LL'])} + 14 × {_us(_STEP['LL'])} µs but at most {_LL_CAP_HOPPER:g} GB/s of busbw "
                f"on Hopper; Simple: {_us(_BASE['Simple'])} + 14 × {_us(_STEP['Simple'])} µs at the full "
                f"{costmodel.configure('dgx-h100', 8).system.scaleup_achievable_GBps_dir:.1f} GB/s.",
    )  # fmt: skip


def _crossover(lat_a_s: float, bw_a_Bps: float, lat_b_s: float, bw_b_Bps: float) -> float:
    """Size where lat_a + S/bw_a = lat_b + S/bw_b."""
    return (lat_b_s - lat_a_s) / (1.0 / bw_a_Bps - 1.0 / bw_b_Bps)


def _crossover_variants(lat_a: float, bw_a: float, lat_b: float, bw_b: float) -> dict[str, float]:
    return {
        "Set the two times equal and solve for S: S = (lat_b − lat_a) / (1/bw_a − 1/bw_b); you subtracted "
        "the bandwidths instead of their inverses.": (lat_b - lat_a) * (bw_b - bw_a),
        "The sign is flipped: the faster-starting line (smaller latency) must be the slower per byte.":
            -_crossover(lat_a, bw_a, lat_b, bw_b),
        "The latencies are in seconds and the bandwidths in bytes/s: no 1e9 or 1e6 factor is needed.":
            _crossover(lat_a, bw_a, lat_b, bw_b) * 1e9,
    }


def _model_pair_case(system: str, n: int, a: tuple[str, str], b: tuple[str, str]) -> Case:
    c = costmodel.configure(system, n)
    ca, cb = (costmodel.pair_cost("allreduce", algo, proto, c) for algo, proto in (a, b))
    args = (ca.latency_s, 1 / ca.s_per_byte, cb.latency_s, 1 / cb.s_per_byte)
    return Case(args, _crossover(*args), _crossover_variants(*args), f"{system} {a} vs {b}")


@safe_checker
def crossover_bytes(fn) -> "Result":  # noqa: F821
    """``fn(lat_a_s, algbw_a_Bps, lat_b_s, algbw_b_Bps)`` → the size (bytes) where the two lines cross."""
    cases = [
        _model_pair_case("dgx-h100", 8, ("ring", "LL"), ("ring", "LL128")),
        _model_pair_case("dgx-h100", 8, ("ring", "LL128"), ("ring", "Simple")),
        _model_pair_case("dgx-h100", 8, ("ring", "LL"), ("nvls", "Simple")),
        _model_pair_case("dgx-a100", 8, ("ring", "LL"), ("ring", "Simple")),
    ]
    rng = rng_for("crossover_bytes")
    for _ in range(4):
        lat_a, lat_b = sorted(float(x) for x in rng.uniform(1e-6, 1e-4, 2))
        bw_a, bw_b = sorted(float(x) for x in rng.uniform(1e9, 1e12, 2))
        args = (lat_a, bw_a, lat_b, bw_b)
        cases.append(Case(args, _crossover(*args), _crossover_variants(*args), "random"))
    return check_function(
        "crossover_bytes", fn, ["lat_a_s", "algbw_a_Bps", "lat_b_s", "algbw_b_Bps"], cases, what="a size in bytes",
        rtol=1e-6, hint="Solve lat_a + S/bw_a = lat_b + S/bw_b for S.",
        success="Every protocol switch of NCCL's tuner is such a crossing: LL → LL128 where LL128's larger latency "
                "is paid back by its bandwidth, LL128 → Simple further up.",
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
                f"two lines crossing at {cross:.3g} B")


def _switch_variants(sizes: list[int], times: list[float], min_bytes: int, exp: int) -> dict[str, float]:
    no_floor = _kink(sizes, times, 0)
    out = {"That is the size just before the bend; return the size whose doubling cost the least.":
           sizes[sizes.index(exp) - 1]}
    if no_floor != exp:
        out[f"Start at min_bytes: below it the time is flat (latency), so every doubling is cheap there (you "
            f"returned {fmt(no_floor)} B)."] = no_floor
    return out


def _to_size(value: Any) -> float:
    return to_number(value, "a size in bytes (one of the sizes you were given)")


@safe_checker
def protocol_switch(fn) -> "Result":  # noqa: F821
    """``fn(sizes, times, min_bytes)`` → the size (from ``sizes``, >= min_bytes) where the time grew least
    when the size doubled: where the measured curve bends because NCCL changed protocol."""
    sizes, times = _published_sweep()
    exp = _kink(sizes, times, KINK_MIN_BYTES)
    prev = sizes[sizes.index(exp) - 1]
    cases = [Case((sizes, times, KINK_MIN_BYTES), exp, _switch_variants(sizes, times, KINK_MIN_BYTES, exp), KINK_SWEEP)]
    cases += [_envelope_case((1e-6, 20e-6), (10e9, 100e9), 2**15), _envelope_case((5e-6, 60e-6), (20e9, 400e9), 2**18)]
    return check_function(
        "protocol_switch", fn, ["sizes", "times", "min_bytes"], cases, what="a size in bytes", rtol=0, convert=_to_size,
        hint="For each size S >= min_bytes (with S/2 >= min_bytes), compute t(S)/t(S/2); return the S where it is "
             "smallest.",
        success=f"On the published GB200 run the time grows only {_ratio_text(sizes, times, exp)} from "
                f"{fmt(prev)} B to {fmt(exp)} B: NCCL moved to a protocol with more bandwidth there.",
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
    "The published GB200 sweep bends at the size your protocol_switch found. Which switch of the model "
    "lies nearest to it?",
    _model_first_switch,
    choices={"a": "LL → LL128", "b": "LL128 → Simple", "c": "LL → Simple (no LL128 in between)"},
    wrong_choice={"b": "Draw the model's lines (protocol_kinks_figure): LL128 → Simple comes later, in the tens of "
                       "MiB.",
                  "c": "The model uses LL128 over NVLink on Blackwell: there is an LL128 range in between."},
    explain="The model switches LL → LL128 between 4 and 8 MiB and LL128 → Simple in the tens of MiB; the published "
            "run bends at 8 MiB. The *shape* matches NCCL's tuner; the floor (~16 µs measured against 10 µs) is the "
            "launch cost NCCL's model leaves out.",
))  # fmt: skip


def _pick_1k() -> str:
    p = costmodel.predict("allreduce", "dgx-h100", 8, 1024)
    letters = {("ring", "LL"): "a", ("nvls", "Simple"): "b", ("ring", "Simple"): "c", ("tree", "LL"): "d"}
    return letters[(p.algo, p.proto)]


register(Question(
    "04b.pick_1k",
    "Predict before you compute: for a 1 KiB all-reduce on one node of 8 H100, which (algorithm, protocol) does "
    "NCCL's cost model pick?",
    _pick_1k,
    choices={"a": "ring / LL", "b": "NVLS / Simple", "c": "ring / Simple", "d": "tree / LL"},
    wrong_choice={"b": f"NVLS has one step but NCCL charges it {_us(_NVLS_US)} µs per call; the LL ring costs "
                       f"{_us(_BASE['LL'])} + 14 × {_us(_STEP['LL'])} = {_BASE['LL'] + 14 * _STEP['LL']:.0f} µs.",
                  "c": f"Simple pays {_us(_STEP['Simple'])} µs per step "
                       f"({_BASE['Simple'] + 14 * _STEP['Simple']:.0f} µs in all); for 1 KiB the bandwidth does not "
                       "matter.",
                  "d": "Inside one node NCCL's tree is a chain of 7 hops up and 7 down: "
                       f"{_us(_TREE_BASE_LL)} + 14 × {_us(tuning.hw_latency_us('nvlink', 'tree', 'LL'))} µs, a hair "
                       f"slower than the ring's {_us(_BASE['LL'])} + 14 × {_us(_STEP['LL'])} µs."},
    explain="For small buffers only the latency counts, and LL has the smallest per-step latency "
            f"({_us(_STEP['LL'])} µs over NVLink).",
))  # fmt: skip


def _nvls_speedup_72() -> float:
    ring = costmodel.predict("allreduce", "gb200-nvl72", 72, 256 * 2**10, algo="ring")
    nvls = costmodel.predict("allreduce", "gb200-nvl72", 72, 256 * 2**10, algo="nvls")
    return ring.time_s / nvls.time_s


def _nvls_speedup_variants() -> dict[str, float]:
    c = costmodel.configure("gb200-nvl72", 72)
    simple = costmodel.pair_cost("allreduce", "ring", "Simple", c).time(256 * 2**10)
    nvls = costmodel.predict("allreduce", "gb200-nvl72", 72, 256 * 2**10, algo="nvls").time_s
    return {f"That is the ring with the Simple protocol ({_us(_STEP['Simple'])} µs per step); NCCL runs a small "
            "ring with LL.":
            float(simple / nvls)}


register(Question(
    "04b.nvls_speedup_72",
    "By the model, how many times faster than the best ring is NVLS for a 256 KiB all-reduce on 72 GB200 GPUs?",
    _nvls_speedup_72,
    unit="×",
    rtol=0.05,
    variants=_nvls_speedup_variants,
    explain=f"A 72-GPU ring has 142 steps: with LL that is {_us(_BASE['LL'])} + 142 × {_us(_STEP['LL'])} ≈ "
            f"{_BASE['LL'] + 142 * _STEP['LL']:.0f} µs before any byte moves, against NVLS's {_us(_NVLS_US)} µs. So "
            f"NVLS wins by a few times, not by the ~{next(iter(_nvls_speedup_variants().values())):.0f}× a "
            "Simple-only α would suggest.",
))  # fmt: skip

