"""Training at scale: memory per GPU, bytes moved per step, the step-time model, and the cost of a run.

Everything here is arithmetic on a few published rules; each rule names its source. Sizes are in
**bytes** (decimal GB = 10^9 B when printed), times in seconds, FLOPs in floating-point operations.
One module per concept:

* :mod:`.models` — the reference models (``data/models.toml`` shapes, ``data/training.toml`` batches), FLOPs (6·P·D);
* :mod:`.memory` — model-state and activation memory per GPU (ZeRO, Megatron), GPUs needed (chapter 01);
* :mod:`.traffic` — bytes one GPU sends per step for DP, TP and PP (chapter 01);
* :mod:`.step` — step time = compute + bubble + exposed communication on a catalog system (chapter 07);
* :mod:`.cost` — wall time, GPU-hours, dollars and energy of a whole run (chapters 07–09).

The public names of all five are re-exported here, so ``from nvcourse import training; training.step_time``
works.

>>> m = training_memory_bytes(70e9)              # 70B parameters, one GPU, no ZeRO
>>> m.total / 1e9                                 # 16 B/param
1120.0
"""

from __future__ import annotations

from .cost import RunCost, electricity, run_cost, system_costs
from .memory import (
    BYTES_PER_PARAM,
    HEADROOM,
    RECOMPUTE_MODES,
    ZERO_STAGES,
    MemoryBreakdown,
    activation_memory_bytes,
    gpus_needed,
    training_memory_bytes,
)
from .models import ModelSpec, data, get_model, models, training_flops
from .step import (
    COLLECTIVE_OPS,
    PLACEMENTS,
    Placement,
    StepTime,
    best_config,
    collective_time,
    compute_time_s,
    group_placement,
    moe_alltoall_bytes,
    node_size,
    pipeline_bubble_fraction,
    step_time,
)
from .step_config import Batch, Links, MixtureOfExperts, Parallelism, Recipe
from .traffic import TrafficBreakdown, per_step_traffic_bytes, ring_allreduce_factor, tp_allreduces_per_layer

__all__ = [
    # models
    "ModelSpec",
    "data",
    "models",
    "get_model",
    "training_flops",
    # memory
    "ZERO_STAGES",
    "RECOMPUTE_MODES",
    "BYTES_PER_PARAM",
    "HEADROOM",
    "MemoryBreakdown",
    "training_memory_bytes",
    "gpus_needed",
    "activation_memory_bytes",
    # traffic
    "TrafficBreakdown",
    "per_step_traffic_bytes",
    "ring_allreduce_factor",
    "tp_allreduces_per_layer",
    # step
    "COLLECTIVE_OPS",
    "PLACEMENTS",
    "Placement",
    "StepTime",
    "compute_time_s",
    "pipeline_bubble_fraction",
    "node_size",
    "group_placement",
    "collective_time",
    "moe_alltoall_bytes",
    "step_time",
    "best_config",
    # step configs
    "Parallelism",
    "Batch",
    "Recipe",
    "Links",
    "MixtureOfExperts",
    # cost
    "RunCost",
    "system_costs",
    "electricity",
    "run_cost",
]
