"""The capstone's serving gates (chapter 09, §6): the smallest tensor-parallel degree that meets a serving goal.

Given a model, a per-token latency SLO (ms), a time-to-first-token target (ms) and the output tokens per second
the service must sustain, :func:`serving_plan` picks TP inside one NVLink domain and the number of replicas, with
three gates (memory, token latency, TTFT). Split from :mod:`nvcourse.capstone_gates`, which re-exports it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import catalog, inference, training
from ._validate import choice, integer, number
from .capstone import Gate
from .capstone import percent as pct
from .i18n import number as num
from .i18n import translate as _

__all__ = ["ServingTargets", "ServingPlan", "serving_plan"]



@dataclass(frozen=True)
class ServingTargets:
    """A serving goal, fixed before choosing TP: a model of ``data/models.toml``, the per-token latency SLO
    (time per output token of one sequence, ms), the time-to-first-token target (ms) for a ``prompt_tokens``
    prompt, and the aggregate output ``tokens_per_s`` the service must sustain."""

    model: str
    max_token_ms: float
    max_ttft_ms: float
    tokens_per_s: float
    prompt_tokens: int = 4096
    context: int = 4096

    def __post_init__(self) -> None:
        inference.get_model(self.model)
        for name in ("max_token_ms", "max_ttft_ms", "tokens_per_s"):
            number(name, getattr(self, name), positive=True)
        integer("prompt_tokens", self.prompt_tokens, 1)
        integer("context", self.context, 0)


@dataclass(frozen=True)
class ServingPlan:
    """The TP degree chosen per replica (None: none meets the targets), replicas and GPUs, and every candidate
    as ``(tp, token_ms, ttft_ms, fits)``."""

    targets: ServingTargets
    system: str
    batch: int
    tp: int | None
    replicas: int
    gpus: int
    token_ms: float
    ttft_ms: float
    candidates: tuple[tuple[int, float, float, bool], ...]
    gates: tuple[Gate, ...]

    @property
    def passed(self) -> bool:
        return all(g.passed for g in self.gates)


def serving_plan(targets: ServingTargets, system: str, *, batch: int = 1, algo: str = "nccl",
                 kv_path: str | None = None) -> ServingPlan:
    """Smallest TP (inside one NVLink domain, dividing the heads) whose weights + KV cache fit in
    ``HEADROOM`` of HBM and whose decode step and TTFT meet ``targets``; then ``ceil(tokens_per_s / replica's)``
    replicas. ``kv_path``: None = prefill on the decode GPUs; ``"rdma"`` / ``"nvlink"`` = disaggregated prefill,
    the KV cache streamed layer by layer to the decode replica (:func:`nvcourse.inference.ttft`).
    """
    sysm = catalog.get_system(system)
    m = inference.get_model(targets.model)
    batch = integer("batch", batch, 1)
    if kv_path is not None:
        choice("kv_path", kv_path, ("rdma", "nvlink"))
    bpp = inference.data()["decode"]["bytes_per_param"]
    cap = sysm.gpu_spec.memory_GB * 1e9 * training.HEADROOM
    rows, steps = [], {}
    tps = [t for t in (2**k for k in range(8)) if t <= sysm.gpus_per_domain and m.heads % t == 0]
    for tp in tps:
        kv = batch * targets.context * inference.kv_bytes_per_token(m) / min(tp, m.kv_heads)
        fits = m.params * bpp / tp + kv <= cap
        st = inference.decode_step(m, system, tp, batch=batch, context=targets.context, algo=algo)
        ttft = inference.prefill_time(m, system, targets.prompt_tokens, gpus=tp)
        if kv_path is not None:
            x = inference.kv_transfer_time(m, targets.prompt_tokens, system, path=kv_path, senders=tp)["time_s"]
            ttft = inference.ttft(ttft, x, m.layers)["ttft_s"]
        rows.append((tp, st.total_s * 1e3, ttft * 1e3, fits))
        steps[tp] = st
    ok = [r for r in rows if r[3] and r[1] <= targets.max_token_ms and r[2] <= targets.max_ttft_ms]
    best = ok[0] if ok else min((r for r in rows if r[3]), key=lambda r: r[1], default=rows[-1])
    tp, token_ms, ttft_ms, fits = best
    replicas = math.ceil(targets.tokens_per_s / steps[tp].tokens_per_s)
    gates = (
        Gate("serving memory", fits,
             (_("TP {tp}: weights + KV of batch {batch} fit") if fits else _("TP {tp}: no fit")).format(
                 tp=tp, batch=batch),
             _("≤ {share} of {capacity} GB").format(share=pct(training.HEADROOM),
                                                   capacity=num(sysm.gpu_spec.memory_GB, "g")),
             _("a GPU with more HBM or a larger TP")),
        Gate("token latency", token_ms <= targets.max_token_ms,
             _("{ms} ms at TP {tp}, batch {batch}").format(ms=num(token_ms, ".1f"), tp=tp, batch=batch),
             f"≤ {num(targets.max_token_ms, 'g')} ms", _("a smaller batch, a larger TP, custom all-reduce kernels "
             "(algo='oneshot'), or faster HBM")),
        Gate("TTFT", ttft_ms <= targets.max_ttft_ms,
             _("{ms} ms for {tokens} tokens").format(ms=num(ttft_ms, ".0f"), tokens=num(targets.prompt_tokens, "")),
             f"≤ {num(targets.max_ttft_ms, 'g')} ms",
             _("a larger TP for prefill, disaggregated prefill with layer-wise KV streaming, or shorter prompts")),
    )
    if not ok:
        tp = None
    return ServingPlan(targets, system, batch, tp, replicas, replicas * best[0], token_ms, ttft_ms, tuple(rows),
                       gates)
