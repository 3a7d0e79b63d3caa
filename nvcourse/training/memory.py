"""Memory per GPU: model states (weights, gradients, optimizer) and activations, in bytes.

Model-state memory (ZeRO, Rajbhandari et al. 2020, arXiv:1910.02054, §3 and §5)
    Mixed-precision Adam keeps, per parameter, 2 B of BF16/FP16 weights, 2 B of BF16/FP16 gradients and
    12 B of optimizer state (FP32 master weights, momentum, variance): **16 bytes per parameter**.
    Tensor (``tp``) and pipeline (``pp``) parallelism split the model itself, so every state is divided
    by ``tp·pp``. ZeRO then partitions across the ``dp`` data-parallel replicas:
    stage 1 the optimizer states, stage 2 also the gradients, stage 3 also the weights.

>>> m = training_memory_bytes(70e9)              # 70B parameters, one GPU, no ZeRO
>>> m.total / 1e9                                 # 16 B/param
1120.0
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from .. import catalog
from .._validate import choice, fraction, integer, number

__all__ = [
    "ZERO_STAGES",
    "RECOMPUTE_MODES",
    "BYTES_PER_PARAM",
    "HEADROOM",
    "MemoryBreakdown",
    "training_memory_bytes",
    "gpus_needed",
    "activation_memory_bytes",
]

ZERO_STAGES = (0, 1, 2, 3)
#: Share of a GPU's memory the model may plan to fill (the rest: fragmentation, buffers, the CUDA context).
HEADROOM = 0.9
RECOMPUTE_MODES = ("none", "selective", "full")


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

    def fits(self, memory_GB: float, *, headroom: float = HEADROOM) -> bool:
        """True when ``total`` fits in ``headroom`` × ``memory_GB`` (decimal GB, as GPU datasheets)."""
        memory_GB = number("memory_GB", memory_GB, positive=True)
        headroom = number("headroom", headroom, positive=True)
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
    params = number("params", params, positive=True)
    w = number("bytes_per_param_weights", bytes_per_param_weights)
    g = number("grads", grads)
    o = number("optimizer", optimizer)
    zero_stage = choice("zero_stage", zero_stage, ZERO_STAGES)
    dp = integer("dp", dp)
    tp = integer("tp", tp)
    pp = integer("pp", pp)
    activations = number("activations", activations)
    local = params / (tp * pp)
    return MemoryBreakdown(
        weights=local * w / (dp if zero_stage >= 3 else 1),
        grads=local * g / (dp if zero_stage >= 2 else 1),
        optimizer=local * o / (dp if zero_stage >= 1 else 1),
        activations=activations,
    )


#: Mixed-precision Adam: 2 weights + 2 gradients + 12 optimizer (ZeRO paper §3), the defaults above.
BYTES_PER_PARAM = 16


def gpus_needed(
    params: float, gpu_id: str, *, bytes_per_param: float = BYTES_PER_PARAM, headroom: float = HEADROOM
) -> int:
    """Fewest GPUs whose memory holds the model states when they are fully sharded (ZeRO-3 style).

    ``ceil(params × bytes_per_param / (headroom × memory))``: a lower bound — activations, buffers and
    fragmentation need more. ``headroom`` is the fraction of HBM usable for model states.
    """
    params = number("params", params, positive=True)
    headroom = fraction("headroom", headroom)
    bytes_per_param = number("bytes_per_param", bytes_per_param, positive=True)
    memory = catalog.get_gpu(gpu_id).memory_GB * 1e9
    return max(1, math.ceil(params * bytes_per_param / (headroom * memory)))


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
    layers = integer("layers", layers)
    hidden = integer("hidden", hidden)
    seq = integer("seq", seq)
    b = integer("micro_batch", micro_batch)
    heads = integer("heads", heads)
    tp = integer("tp", tp)
    pp = integer("pp", pp)
    recompute = choice("recompute", recompute, RECOMPUTE_MODES)
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
