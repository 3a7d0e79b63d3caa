"""Bytes one GPU sends per optimizer step, per kind of parallelism.

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

>>> t = per_step_traffic_bytes(70e9, dp=8, tp=1, pp=1, layers=80, hidden=8192, seq=4096, micro_batch=1)
>>> round(t.dp / 1e9)                             # 2·7/8 · 140 GB
245
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from .._validate import choice, integer, number
from ..costmodel import busbw_factor
from .memory import RECOMPUTE_MODES, ZERO_STAGES

__all__ = ["TrafficBreakdown", "per_step_traffic_bytes", "ring_allreduce_factor", "tp_allreduces_per_layer"]


def ring_allreduce_factor(n: int) -> float:
    """Bytes each rank sends in a ring all-reduce, per byte of buffer: 2(n−1)/n (0 for one rank).

    nccl-tests' all-reduce bus-bandwidth factor, from its one definition :func:`nvcourse.costmodel.busbw_factor`.
    """
    return busbw_factor("allreduce", integer("n", n))


def tp_allreduces_per_layer(recompute: str) -> int:
    """Megatron-LM's tensor-parallel all-reduces per layer and micro-batch: 2 forward + 2 backward;
    full activation recomputation repeats the 2 forward ones (6)."""
    return 6 if choice("recompute", recompute, RECOMPUTE_MODES) == "full" else 4


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
        zero_stage: 0–2 move 2(d−1)/d·S; 3 moves (2m+1)(d−1)/d·S (weights all-gathered in the forward
            and backward pass of each micro-batch, gradients reduce-scattered once; 3(d−1)/d·S for m = 1).
        recompute: 'full' repeats the 2 forward TP all-reduces of each layer ('none'/'selective' do not).
        pp_scatter_gather: Megatron's optimisation, each TP rank sends 1/tp of the stage boundary tensor.

    Hand check (facts file §2.2): b = 1, s = 8192, h = 16384, t = 8, 126 layers, pp = 1: one payload
    = 8192·16384·2 = 268.4 MB; per all-reduce 2·7/8·268.4 MB = 469.8 MB; × 4 × 126 = 236.8 GB.
    """
    params = number("params", params, positive=True)
    dp = integer("dp", dp)
    tp = integer("tp", tp)
    pp = integer("pp", pp)
    layers = integer("layers", layers)
    hidden = integer("hidden", hidden)
    seq = integer("seq", seq)
    b = integer("micro_batch", micro_batch)
    m = integer("micro_batches", micro_batches)
    grad_bytes = number("grad_bytes", grad_bytes, positive=True)
    act_bytes = number("act_bytes", act_bytes, positive=True)
    zero_stage = choice("zero_stage", zero_stage, ZERO_STAGES)
    recompute = choice("recompute", recompute, RECOMPUTE_MODES)
    if pp > layers:
        raise ValueError(f"pp must be <= layers ({layers}); got {pp}")

    grad_buffer = params / (tp * pp) * grad_bytes
    # ZeRO-3 re-gathers the weights in the forward and backward pass of every micro-batch (2m) and
    # reduce-scatters the gradients once: (2m + 1)(d-1)/d S; m = 1 gives the paper's 3(d-1)/d S.
    dp_factor = ((2 * m + 1) if zero_stage == 3 else 2) * (dp - 1) / dp
    payload = b * seq * hidden * act_bytes
    tp_bytes = tp_allreduces_per_layer(recompute) * (layers / pp) * m * ring_allreduce_factor(tp) * payload
    pp_bytes = 0.0 if pp == 1 else 2 * m * payload / (tp if pp_scatter_gather else 1)
    return TrafficBreakdown(dp=dp_factor * grad_buffer, tp=tp_bytes, pp=pp_bytes)
