"""What a training step is run with, in five small groups (:func:`nvcourse.training.step_time` takes them).

* :class:`Parallelism` — how the GPUs are split: tensor, pipeline (and its virtual stages), expert parallel, and
  where each group sits;
* :class:`Batch` — the micro-batch and the global batch;
* :class:`Recipe` — ZeRO stage, activation recomputation, compute efficiency, DP overlap;
* :class:`Links` — what-ifs on the links and the collective algorithm and protocol;
* :class:`MixtureOfExperts` — a mixture-of-experts model (all ``None``: a dense model).

``step_time(model, system, gpus, tp=8, pp=4)`` still works: a keyword that names a field of one of them sets
that field (:func:`settings`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

__all__ = ["Parallelism", "Batch", "Recipe", "Links", "MixtureOfExperts", "CONFIGS", "settings"]


@dataclass(frozen=True)
class Parallelism:
    """Degrees of parallelism and placement. ``dp = gpus / (tp·pp)``; ``ep`` is carved out of the DP group."""

    tp: int = 1
    pp: int = 1
    virtual_stages: int = 1
    ep: int = 1
    placement: str = "tp-first"


@dataclass(frozen=True)
class Batch:
    """``micro_batch`` in sequences (None: ``training.toml`` default); ``global_batch_tokens`` in tokens (None:
    the model's own)."""

    micro_batch: int | None = None
    global_batch_tokens: int | None = None


@dataclass(frozen=True)
class Recipe:
    """How the step is computed: ZeRO stage (0-3), recomputation ('selective' or 'full'), the share of peak the
    kernels reach (None: ``training.toml`` default), and whether the DP all-reduce overlaps the backward pass."""

    zero_stage: int = 1
    recompute: str = "selective"
    compute_efficiency: float | None = None
    overlap_dp: bool = True


@dataclass(frozen=True)
class Links:
    """``slowest_link_factor`` in (0, 1] slows every ring to its slowest link; ``bandwidth_multiplier`` scales
    every link (a what-if); ``algo`` and ``proto`` go to the collective cost model for TP and DP."""

    slowest_link_factor: float = 1.0
    bandwidth_multiplier: float = 1.0
    algo: str = "nccl"
    proto: str = "auto"


@dataclass(frozen=True)
class MixtureOfExperts:
    """A mixture-of-experts model: routed ``experts`` per MoE layer, each token sent to ``top_k``, in
    ``moe_layers`` of the layers (None: all); ``active_params`` = parameters used per token (None: all)."""

    experts: int | None = None
    top_k: int | None = None
    moe_layers: int | None = None
    active_params: float | None = None


#: The config classes, in the order step_time takes them.
CONFIGS = (Parallelism, Batch, Recipe, Links, MixtureOfExperts)


def settings(configs: dict[type, object] | None = None, **overrides: object) -> dict[type, object]:
    """One instance per config class: ``configs`` (class -> instance, the defaults where absent) with each
    keyword in ``overrides`` set on the class that has that field. ValueError for a keyword none has."""
    out = {cls: (configs or {}).get(cls) or cls() for cls in CONFIGS}
    owner = {f.name: cls for cls in CONFIGS for f in fields(cls)}
    unknown = sorted(set(overrides) - set(owner))
    if unknown:
        raise ValueError(f"step_time got unknown setting(s) {', '.join(unknown)}; "
                         f"known: {', '.join(sorted(owner))}")
    for cls in CONFIGS:
        mine = {k: v for k, v in overrides.items() if owner[k] is cls}
        if mine:
            out[cls] = replace(out[cls], **mine)
    return out
