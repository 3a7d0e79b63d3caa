"""Training at scale: memory per GPU, bytes moved per step, and (below) the step-time model.

Everything here is arithmetic on a few published rules; each rule names its source. Sizes are in
**bytes** (decimal GB = 10^9 B when printed), times in seconds, FLOPs in floating-point operations.

Model-state memory (ZeRO, Rajbhandari et al. 2020, arXiv:1910.02054, §3 and §5)
    Mixed-precision Adam keeps, per parameter, 2 B of BF16/FP16 weights, 2 B of BF16/FP16 gradients and
    12 B of optimizer state (FP32 master weights, momentum, variance): **16 bytes per parameter**.
    Tensor (``tp``) and pipeline (``pp``) parallelism split the model itself, so every state is divided
    by ``tp·pp``. ZeRO then partitions across the ``dp`` data-parallel replicas:
    stage 1 the optimizer states, stage 2 also the gradients, stage 3 also the weights.

Traffic per step (bytes *sent* by one GPU; a ring receives as much as it sends)
    * data parallel: ring all-reduce of the gradient buffer S = (P / (tp·pp)) · grad_bytes:
      ``2(d−1)/d · S``. ZeRO-1/2 replace it by reduce-scatter + all-gather, the same volume; ZeRO-3
      all-gathers the weights twice (forward and backward) and reduce-scatters the gradients:
      ``3(d−1)/d · S`` (ZeRO paper §7).
    * tensor parallel (Megatron-LM, Shoeybi et al. 2019, arXiv:1909.08053, §3): 2 all-reduces of the
      activations (b·s·h elements) in the forward pass and 2 in the backward pass per layer and
      micro-batch, each sending ``2(t−1)/t · b·s·h·act_bytes``. Full activation recomputation repeats
      the 2 forward ones. Sequence parallelism (Korthikanti et al. 2022, arXiv:2205.05198) swaps each
      all-reduce for reduce-scatter + all-gather: the same volume.
    * pipeline parallel (Narayanan et al. 2021, arXiv:2104.04473, §4.1): per micro-batch and stage
      boundary one activation tensor forward and one gradient tensor backward, each b·s·h·act_bytes.
      An interior stage sends one of each per micro-batch. With Megatron's scatter/gather
      optimisation each of the ``tp`` ranks of a stage sends only 1/tp of it.

>>> m = training_memory_bytes(70e9)              # 70B parameters, one GPU, no ZeRO
>>> m.total / 1e9                                 # 16 B/param
1120.0
>>> t = per_step_traffic_bytes(70e9, dp=8, tp=1, pp=1, layers=80, hidden=8192, seq=4096, micro_batch=1)
>>> round(t.dp / 1e9)                             # 2·7/8 · 140 GB
245
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from numbers import Integral, Real

__all__ = [
    "MemoryBreakdown",
    "TrafficBreakdown",
    "training_memory_bytes",
    "memory_per_gpu",
    "activation_memory_bytes",
    "per_step_traffic_bytes",
    "bytes_moved_per_step",
    "ring_allreduce_factor",
]

ZERO_STAGES = (0, 1, 2, 3)
RECOMPUTE_MODES = ("none", "selective", "full")


# ------------------------------------------------------------------------------------------------
# validation helpers: every bad input is a ValueError naming the parameter and what is allowed


def _int_at_least(name: str, value: object, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _number(name: str, value: object, *, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if positive and value <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    if not positive and value < 0:
        raise ValueError(f"{name} must be >= 0, got {value!r}")
    return float(value)


def _choice(name: str, value: object, allowed: tuple) -> object:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}")
    return value


def ring_allreduce_factor(n: int) -> float:
    """Bytes each rank sends in a ring all-reduce, per byte of buffer: 2(n−1)/n (0 for one rank)."""
    n = _int_at_least("n", n)
    return 2 * (n - 1) / n


# ------------------------------------------------------------------------------------------------
# memory


@dataclass(frozen=True)
class MemoryBreakdown:
    """Bytes held by one GPU. ``activations`` is 0 unless asked for (see :func:`activation_memory_bytes`)."""

    weights: float
    grads: float
    optimizer: float
    activations: float = 0.0

    @property
    def model_states(self) -> float:
        """Weights + gradients + optimizer states, bytes."""
        return self.weights + self.grads + self.optimizer

    @property
    def total(self) -> float:
        return self.model_states + self.activations

    def as_dict(self) -> dict[str, float]:
        return {**asdict(self), "total": self.total}

    def fits(self, memory_GB: float, *, headroom: float = 0.9) -> bool:
        """True when ``total`` fits in ``headroom`` × ``memory_GB`` (decimal GB, as GPU datasheets)."""
        memory_GB = _number("memory_GB", memory_GB, positive=True)
        headroom = _number("headroom", headroom, positive=True)
        return self.total <= headroom * memory_GB * 1e9


def training_memory_bytes(
    params: float,
    *,
    bytes_per_param_weights: float = 2,
    grads: float = 2,
    optimizer: float = 12,
    zero_stage: int = 0,
    dp: int = 1,
    tp: int = 1,
    pp: int = 1,
    activations: float = 0.0,
) -> MemoryBreakdown:
    """Model-state memory of one GPU for mixed-precision training, in bytes.

    Args:
        params: parameter count P (e.g. ``70e9``).
        bytes_per_param_weights: bytes per parameter for the working weights (2 = BF16).
        grads: bytes per parameter of gradients (2 = BF16, 4 = FP32).
        optimizer: bytes per parameter of optimizer state (12 = Adam's FP32 master, momentum, variance).
        zero_stage: 0 (plain data parallel), 1 (shard optimizer), 2 (+ gradients), 3 (+ weights) over ``dp``.
        dp, tp, pp: data-, tensor- and pipeline-parallel degrees. ``tp·pp`` split the model evenly.
        activations: activation bytes to add (from :func:`activation_memory_bytes`), default 0.

    Hand check: 70e9 params, tp = 8, ZeRO-1 over dp = 4: weights 70e9·2/8 = 17.5 GB, grads 17.5 GB,
    optimizer 70e9·12/8/4 = 26.25 GB → 61.25 GB.
    """
    params = _number("params", params, positive=True)
    w = _number("bytes_per_param_weights", bytes_per_param_weights)
    g = _number("grads", grads)
    o = _number("optimizer", optimizer)
    zero_stage = _choice("zero_stage", zero_stage, ZERO_STAGES)
    dp = _int_at_least("dp", dp)
    tp = _int_at_least("tp", tp)
    pp = _int_at_least("pp", pp)
    activations = _number("activations", activations)
    local = params / (tp * pp)
    return MemoryBreakdown(
        weights=local * w / (dp if zero_stage >= 3 else 1),
        grads=local * g / (dp if zero_stage >= 2 else 1),
        optimizer=local * o / (dp if zero_stage >= 1 else 1),
        activations=activations,
    )


#: Alias used by chapter 01.
memory_per_gpu = training_memory_bytes


def activation_memory_bytes(
    *,
    layers: int,
    hidden: int,
    seq: int,
    micro_batch: int,
    heads: int,
    tp: int = 1,
    pp: int = 1,
    sequence_parallel: bool = True,
    recompute: str = "selective",
) -> float:
    """Activation memory of the busiest (first) pipeline stage, bytes, 16-bit activations.

    Korthikanti et al. 2022 (arXiv:2205.05198, §4, Table 2) per transformer layer:
    ``s·b·h·(34 + 5·a·s/h)`` with no parallelism; tensor parallelism with sequence parallelism divides
    everything by ``t`` (without sequence parallelism only the ``24 + 5as/h`` part is divided, the
    10·sbh of layer norms and dropouts stays); selective recomputation drops the ``5as/h`` attention
    term; full recomputation keeps only the layer input, ``2·s·b·h``. With 1F1B the first stage holds
    ``pp`` micro-batches in flight on ``layers/pp`` layers: ``layers`` layers' worth in total.
    """
    layers = _int_at_least("layers", layers)
    hidden = _int_at_least("hidden", hidden)
    seq = _int_at_least("seq", seq)
    b = _int_at_least("micro_batch", micro_batch)
    heads = _int_at_least("heads", heads)
    tp = _int_at_least("tp", tp)
    pp = _int_at_least("pp", pp)
    recompute = _choice("recompute", recompute, RECOMPUTE_MODES)
    sbh = seq * b * hidden
    attention = 0.0 if recompute == "selective" else 5 * heads * seq / hidden
    if recompute == "full":
        per_layer = 2 * sbh  # Table 2 of the paper: the layer input only, not divided by t
    elif sequence_parallel:
        per_layer = sbh * (34 + attention) / tp
    else:
        per_layer = sbh * (10 + (24 + attention) / tp)
    # layers/pp per stage x pp micro-batches in flight = layers (1F1B; Narayanan et al. 2021 §2.2)
    return per_layer * layers


# ------------------------------------------------------------------------------------------------
# traffic


@dataclass(frozen=True)
class TrafficBreakdown:
    """Bytes one GPU sends per optimizer step for each kind of parallelism."""

    dp: float
    tp: float
    pp: float
    ep: float = 0.0

    @property
    def total(self) -> float:
        return self.dp + self.tp + self.pp + self.ep

    def as_dict(self) -> dict[str, float]:
        return {**asdict(self), "total": self.total}


def per_step_traffic_bytes(
    params: float,
    *,
    dp: int,
    tp: int,
    pp: int,
    layers: int,
    hidden: int,
    seq: int,
    micro_batch: int,
    micro_batches: int = 1,
    grad_bytes: float = 2,
    act_bytes: float = 2,
    zero_stage: int = 0,
    recompute: str = "selective",
    pp_scatter_gather: bool = True,
) -> TrafficBreakdown:
    """Bytes sent by one GPU in one optimizer step (``micro_batches`` micro-batches of ``micro_batch`` sequences).

    Args:
        params: parameter count P.
        dp, tp, pp: parallel degrees. A degree of 1 moves nothing.
        layers, hidden, seq: transformer depth, width h and sequence length s.
        micro_batch: sequences per micro-batch b; micro_batches: m per step (gradient accumulation).
        grad_bytes, act_bytes: bytes per element of gradients / activations (2 = BF16).
        zero_stage: 0–2 move 2(d−1)/d·S, 3 moves 3(d−1)/d·S for the data-parallel part.
        recompute: 'full' repeats the 2 forward TP all-reduces of each layer ('none'/'selective' do not).
        pp_scatter_gather: Megatron's optimisation, each TP rank sends 1/tp of the stage boundary tensor.

    Hand check (facts file §2.2): b = 1, s = 8192, h = 16384, t = 8, 126 layers, pp = 1: one payload
    = 8192·16384·2 = 268.4 MB; per all-reduce 2·7/8·268.4 MB = 469.8 MB; × 4 × 126 = 236.8 GB.
    """
    params = _number("params", params, positive=True)
    dp = _int_at_least("dp", dp)
    tp = _int_at_least("tp", tp)
    pp = _int_at_least("pp", pp)
    layers = _int_at_least("layers", layers)
    hidden = _int_at_least("hidden", hidden)
    seq = _int_at_least("seq", seq)
    b = _int_at_least("micro_batch", micro_batch)
    m = _int_at_least("micro_batches", micro_batches)
    grad_bytes = _number("grad_bytes", grad_bytes, positive=True)
    act_bytes = _number("act_bytes", act_bytes, positive=True)
    zero_stage = _choice("zero_stage", zero_stage, ZERO_STAGES)
    recompute = _choice("recompute", recompute, RECOMPUTE_MODES)
    if pp > layers:
        raise ValueError(f"pp must be <= layers ({layers}), got {pp}")

    grad_buffer = params / (tp * pp) * grad_bytes
    dp_factor = (3 if zero_stage == 3 else 2) * (dp - 1) / dp
    payload = b * seq * hidden * act_bytes
    allreduces_per_layer = 6 if recompute == "full" else 4
    tp_bytes = allreduces_per_layer * (layers / pp) * m * ring_allreduce_factor(tp) * payload
    pp_bytes = 0.0 if pp == 1 else 2 * m * payload / (tp if pp_scatter_gather else 1)
    return TrafficBreakdown(dp=dp_factor * grad_buffer, tp=tp_bytes, pp=pp_bytes)


#: Alias used by chapter 01.
bytes_moved_per_step = per_step_traffic_bytes
