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
    "gpus_needed",
    "BYTES_PER_PARAM",
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


#: Mixed-precision Adam: 2 weights + 2 gradients + 12 optimizer (ZeRO paper §3), the defaults above.
BYTES_PER_PARAM = 16


def gpus_needed(params: float, gpu_id: str, *, bytes_per_param: float = BYTES_PER_PARAM, headroom: float = 0.9) -> int:
    """Fewest GPUs whose memory holds the model states when they are fully sharded (ZeRO-3 style).

    ``ceil(params × bytes_per_param / (headroom × memory))``: a lower bound — activations, buffers and
    fragmentation need more. ``headroom`` is the fraction of HBM usable for model states.
    """
    if not (isinstance(params, (int, float)) and math.isfinite(params) and params > 0):
        raise ValueError(f"params must be a positive number of parameters, got {params!r}")
    if not 0 < headroom <= 1:
        raise ValueError(f"headroom must be in (0, 1], got {headroom!r}")
    if bytes_per_param <= 0:
        raise ValueError(f"bytes_per_param must be > 0, got {bytes_per_param!r}")
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
        zero_stage: 0–2 move 2(d−1)/d·S; 3 moves (2m+1)(d−1)/d·S (weights all-gathered in the forward
            and backward pass of each micro-batch, gradients reduce-scattered once; 3(d−1)/d·S for m = 1).
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
    # ZeRO-3 re-gathers the weights in the forward and backward pass of every micro-batch (2m) and
    # reduce-scatters the gradients once: (2m + 1)(d-1)/d S; m = 1 gives the paper's 3(d-1)/d S.
    dp_factor = ((2 * m + 1) if zero_stage == 3 else 2) * (dp - 1) / dp
    payload = b * seq * hidden * act_bytes
    allreduces_per_layer = 6 if recompute == "full" else 4
    tp_bytes = allreduces_per_layer * (layers / pp) * m * ring_allreduce_factor(tp) * payload
    pp_bytes = 0.0 if pp == 1 else 2 * m * payload / (tp if pp_scatter_gather else 1)
    return TrafficBreakdown(dp=dp_factor * grad_buffer, tp=tp_bytes, pp=pp_bytes)


#: Alias used by chapter 01.
bytes_moved_per_step = per_step_traffic_bytes


# ================================================================================================
# Step-time model: compute + exposed communication, on a catalog system.
#
#   step = compute · (1 + bubble) + TP (not overlapped) + PP p2p (not overlapped)
#          + EP all-to-all (not overlapped) + DP exposed (what the backward pass of the last micro-batch cannot hide)
#
# compute   = FLOPs per GPU / (peak dense BF16 × compute_efficiency), FLOPs = 6·P·tokens (8·P with
#             full recomputation: hardware work, while MFU keeps counting 6·P); P = the *active*
#             parameters per token for a mixture-of-experts model (``active_params``).
# EP        = 4 all-to-alls (dispatch + combine, forward and backward) per MoE layer of the stage and
#             micro-batch over the ``ep`` ranks, the EP group carved out of the DP group (Megatron-Core).
# bubble    = (p − 1)/(v·m) of the compute time (Megatron-LM's normalisation; share of wall time
#             (p − 1)/(v·m + p − 1)), v = virtual stages of the interleaved schedule.
# placement = which GPUs a group spans. Ranks are numbered inside a node first; with the default
#             order 'tp-first' a TP group is consecutive ranks (inside one NVLink domain), a DP group
#             strides by tp·... and crosses nodes. 'dp-first' swaps them: the classic bad placement.
# ================================================================================================

import tomllib  # noqa: E402
from functools import cache  # noqa: E402
from importlib import resources  # noqa: E402

from . import catalog  # noqa: E402

__all__ += [
    "ModelSpec",
    "Placement",
    "StepTime",
    "RunCost",
    "data",
    "models",
    "get_model",
    "training_flops",
    "compute_time_s",
    "pipeline_bubble_fraction",
    "group_placement",
    "collective_time",
    "step_time",
    "best_config",
    "run_cost",
    "system_costs",
    "moe_alltoall_bytes",
    "COLLECTIVE_OPS",
    "PLACEMENTS",
]

COLLECTIVE_OPS = ("allreduce", "reducescatter", "allgather", "alltoall", "sendrecv")
PLACEMENTS = ("tp-first", "dp-first")


@cache
def data() -> dict:
    """The parsed ``data/training.toml``."""
    return tomllib.loads(resources.files("nvcourse").joinpath("data/training.toml").read_text(encoding="utf-8"))


@cache
def _costs() -> dict:
    return tomllib.loads(resources.files("nvcourse").joinpath("data/costs.toml").read_text(encoding="utf-8"))


@dataclass(frozen=True)
class ModelSpec:
    """A dense transformer: P parameters, L layers of width h with a heads, trained on sequences of s tokens."""

    id: str
    name: str
    params: float
    layers: int
    hidden: int
    heads: int
    seq: int
    global_batch_tokens: int
    ffn_hidden: int = 0

    @property
    def global_batch_sequences(self) -> int:
        return self.global_batch_tokens // self.seq


def models() -> dict[str, ModelSpec]:
    """The reference models of ``data/training.toml`` (Llama 3 8B, 70B, 405B shapes)."""
    out = {}
    for k, v in data()["models"].items():
        fields = {f: v[f] for f in ModelSpec.__dataclass_fields__ if f in v}
        out[k] = ModelSpec(id=k, **fields)
    return out


def get_model(model: str | ModelSpec) -> ModelSpec:
    """A reference model by id (ValueError lists the ids), or the ModelSpec passed in."""
    if isinstance(model, ModelSpec):
        return model
    table = models()
    if model not in table:
        raise ValueError(f"model must be one of {', '.join(table)} or a ModelSpec; got {model!r}")
    return table[model]


def training_flops(params: float, tokens: float, *, recompute: str = "selective") -> float:
    """FLOPs to train ``params`` parameters on ``tokens`` tokens: 6·P·D (Kaplan 2020; Chinchilla).

    With ``recompute='full'`` the hardware does 8·P·D (one more forward pass); MFU still counts 6·P·D.
    """
    params = _number("params", params, positive=True)
    tokens = _number("tokens", tokens)
    recompute = _choice("recompute", recompute, RECOMPUTE_MODES)
    key = "recompute_per_param_per_token" if recompute == "full" else "per_param_per_token"
    return data()["flops"][key] * params * tokens


def compute_time_s(flops: float, gpus: int, *, peak_TFLOPS: float, efficiency: float) -> float:
    """Seconds for ``gpus`` GPUs at ``efficiency`` × ``peak_TFLOPS`` to do ``flops`` FLOPs."""
    flops = _number("flops", flops)
    gpus = _int_at_least("gpus", gpus)
    peak = _number("peak_TFLOPS", peak_TFLOPS, positive=True)
    eff = _number("efficiency", efficiency, positive=True)
    if eff > 1:
        raise ValueError(f"efficiency must be in (0, 1], got {efficiency!r}")
    return flops / (gpus * peak * 1e12 * eff)


def pipeline_bubble_fraction(pp: int, micro_batches: int, *, virtual_stages: int = 1) -> float:
    """Idle share of wall time of a 1F1B pipeline: (p − 1)/(v·m + p − 1) (0 for p = 1)."""
    p = _int_at_least("pp", pp)
    m = _int_at_least("micro_batches", micro_batches)
    v = _int_at_least("virtual_stages", virtual_stages)
    return (p - 1) / (v * m + p - 1)


# ------------------------------------------------------------------------------------------------
# placement and collective times


@dataclass(frozen=True)
class Placement:
    """Where the ``ranks`` of one communication group sit: ``per_node`` of them in each of ``nodes`` nodes."""

    ranks: int
    per_node: int
    nodes: int

    @property
    def crosses_nodes(self) -> bool:
        return self.nodes > 1


def node_size(system_id: str) -> int:
    """GPUs of one *node* of the model: the NVLink domain, or the host when the domain is smaller (PCIe)."""
    s = catalog.get_system(system_id)
    return max(s.gpus_per_host, s.gpus_per_domain)


def group_placement(system_id: str, ranks: int, stride: int) -> Placement:
    """Placement of a group of ``ranks`` ranks whose consecutive members are ``stride`` ranks apart.

    Ranks fill a node before the next one. With stride ≥ node size every member is on its own node.
    """
    n = _int_at_least("ranks", ranks)
    stride = _int_at_least("stride", stride)
    d = node_size(system_id)
    per_node = 1 if stride >= d else max(1, min(n, d // stride))
    return Placement(ranks=n, per_node=per_node, nodes=math.ceil(n / per_node))


def collective_time(
    op: str,
    system_id: str,
    placement: Placement,
    nbytes: float,
    *,
    slowest_link_factor: float = 1.0,
    bandwidth_multiplier: float = 1.0,
    algo: str = "nccl",
) -> float:
    """Seconds for one collective of ``nbytes`` (nccl-tests' size S) over a placed group.

    The time comes from the course's collective cost model, :func:`nvcourse.costmodel.predict`, with
    ``placement.per_node`` GPUs in each of ``placement.nodes`` nodes (a group crossing nodes uses
    those members' share of the NICs) and ``algo`` ('nccl' = the fastest of NCCL's own algorithms, what
    NCCL's tuner would pick; 'auto' = the fastest the model knows; or a name such as 'ring').
    ``sendrecv`` is one point-to-point message between two neighbouring members of the group.

    ``slowest_link_factor`` < 1 slows the bandwidth term (a ring runs at its slowest link);
    ``bandwidth_multiplier`` scales it the other way (a what-if: 2 = twice the bandwidth, α unchanged).
    """
    from .costmodel import predict

    op = _choice("op", op, COLLECTIVE_OPS)
    catalog.get_system(system_id)
    nbytes = _number("nbytes", nbytes)
    f = _number("slowest_link_factor", slowest_link_factor, positive=True)
    if f > 1:
        raise ValueError(f"slowest_link_factor must be in (0, 1], got {slowest_link_factor!r}")
    mult = _number("bandwidth_multiplier", bandwidth_multiplier, positive=True)
    if nbytes == 0 or placement.ranks == 1:
        return 0.0
    if op == "sendrecv":  # two neighbours: in the same node, or one in each of two nodes
        gpus, nodes = (2, 1) if placement.per_node >= 2 else (1, 2)
    else:
        gpus, nodes = placement.per_node, placement.nodes
    p = predict(op, system_id, gpus, nbytes, nodes=nodes, algo="nccl" if op == "sendrecv" else algo)
    return p.latency_s + p.bandwidth_s / (f * mult)


def moe_alltoall_bytes(*, tokens: int, hidden: int, top_k: int, act_bytes: float = 2) -> float:
    """Bytes one GPU dispatches in one MoE all-to-all: every token goes to ``top_k`` experts (h values each)."""
    tokens = _int_at_least("tokens", tokens)
    hidden = _int_at_least("hidden", hidden)
    top_k = _int_at_least("top_k", top_k)
    return tokens * hidden * top_k * _number("act_bytes", act_bytes, positive=True)


# ------------------------------------------------------------------------------------------------
# the step


@dataclass(frozen=True)
class StepTime:
    """One optimizer step of one configuration, seconds; plus what it means (MFU, tokens/s, memory)."""

    model: str
    system: str
    gpus: int
    tp: int
    pp: int
    dp: int
    micro_batches: int
    compute: float
    bubble: float
    tp_comm: float
    pp_comm: float
    dp_comm: float
    dp_exposed: float
    tokens_per_step: int
    model_flops: float
    peak_flops: float
    memory: MemoryBreakdown
    memory_capacity_GB: float
    placements: dict
    compute_efficiency: float
    recompute: str = "selective"
    ep: int = 1
    ep_comm: float = 0.0

    @property
    def total(self) -> float:
        return self.compute + self.bubble + self.tp_comm + self.pp_comm + self.dp_exposed + self.ep_comm

    @property
    def exposed_comm(self) -> float:
        """Communication the GPU waits for: TP + PP + EP + the part of DP that overlap cannot hide."""
        return self.tp_comm + self.pp_comm + self.dp_exposed + self.ep_comm

    @property
    def mfu(self) -> float:
        """Model FLOPs utilisation: 6·P·tokens / (step time × GPUs × peak)."""
        return self.model_flops / (self.total * self.gpus * self.peak_flops)

    @property
    def efficiency(self) -> float:
        """Scaling efficiency: time the step would take with no communication and no bubble (6·P FLOPs at
        ``compute_efficiency``) divided by the real step time. 1 = the GPUs never wait; equals MFU / compute_efficiency."""
        return self.mfu / self.compute_efficiency

    @property
    def tokens_per_s(self) -> float:
        return self.tokens_per_step / self.total

    @property
    def fits(self) -> bool:
        return self.memory.fits(self.memory_capacity_GB)

    def breakdown(self) -> dict[str, float]:
        """Seconds per part, in plotting order (they add up to :attr:`total`). ``"EP comm"`` only when ep > 1."""
        parts = {
            "compute": self.compute,
            "pipeline bubble": self.bubble,
            "TP comm": self.tp_comm,
            "PP comm": self.pp_comm,
        }
        if self.ep > 1:
            parts["EP comm"] = self.ep_comm
        parts["DP comm (exposed)"] = self.dp_exposed
        return parts


def step_time(
    model: str | ModelSpec,
    system: str,
    gpus: int,
    *,
    tp: int = 1,
    pp: int = 1,
    micro_batch: int | None = None,
    global_batch_tokens: int | None = None,
    zero_stage: int = 1,
    recompute: str = "selective",
    virtual_stages: int = 1,
    compute_efficiency: float | None = None,
    placement: str = "tp-first",
    overlap_dp: bool = True,
    slowest_link_factor: float = 1.0,
    bandwidth_multiplier: float = 1.0,
    algo: str = "nccl",
    ep: int = 1,
    experts: int | None = None,
    top_k: int | None = None,
    moe_layers: int | None = None,
    active_params: float | None = None,
) -> StepTime:
    """Time of one optimizer step of ``model`` on ``gpus`` GPUs of catalog ``system``.

    ``dp = gpus / (tp·pp)`` must be an integer and divide the global batch (in sequences of ``seq``
    tokens, ``micro_batch`` each): ``m = sequences / (dp·micro_batch)`` micro-batches per step.
    ``slowest_link_factor`` < 1 models one degraded link in every ring; ``bandwidth_multiplier``
    scales every link's bandwidth (a what-if). ``algo`` is passed to the collective cost model for the
    TP and DP collectives ('nccl' = the fastest of NCCL's algorithms, e.g. NVLS inside an H100 node; 'ring').

    Mixture of experts (expert parallelism, all optional; the defaults give the dense model):

    * ``experts`` routed experts per MoE layer, each token sent to ``top_k`` of them, in ``moe_layers``
      of the ``layers`` (default: all). ``ep`` GPUs share the experts of a layer; ``ep`` must divide
      ``experts`` and ``dp`` (the EP group is carved out of the DP group, as in Megatron-Core: with
      'tp-first' its members are ``tp`` ranks apart, so it stays in one NVLink domain when ``tp·ep`` fits
      in the node, and crosses the NICs otherwise).
    * with ep > 1, each MoE layer of a stage adds, per micro-batch, 2 all-to-alls forward (dispatch,
      combine) and 2 backward, **not overlapped** with compute (an upper bound: DeepSeek-V3's DualPipe
      hides most of it). One all-to-all is the costmodel's ``alltoall`` of the routed buffer
      ``b·s · top_k · h · 2`` bytes (:class:`nvcourse.fabric.moe.MoEConfig`), i.e. each GPU sends
      :func:`nvcourse.fabric.moe.alltoall_bytes_per_gpu` = tokens·top_k·h·2·(ep−1)/ep bytes, experts
      chosen uniformly. Every rank of a TP group is assumed to dispatch its whole micro-batch of b·s
      tokens (Megatron's sequence-parallel dispatch would send 1/tp of it).
    * ``active_params`` (parameters used per token) replaces P in the FLOPs, 6·P_active·tokens, for the
      compute time and the MFU. Memory and the DP gradient traffic still treat all ``params`` as dense
      weights split by tp·pp (an upper bound: experts are also split over ``ep``).
    """
    spec = get_model(model)
    sysobj = catalog.get_system(system)
    gpus = _int_at_least("gpus", gpus)
    tp = _int_at_least("tp", tp)
    pp = _int_at_least("pp", pp)
    v = _int_at_least("virtual_stages", virtual_stages)
    placement = _choice("placement", placement, PLACEMENTS)
    defaults = data()["defaults"]
    b = _int_at_least("micro_batch", defaults["micro_batch"] if micro_batch is None else micro_batch)
    eff = defaults["compute_efficiency"] if compute_efficiency is None else compute_efficiency
    tokens = spec.global_batch_tokens if global_batch_tokens is None else _int_at_least("global_batch_tokens", global_batch_tokens)
    if gpus % (tp * pp):
        raise ValueError(f"gpus ({gpus}) must be a multiple of tp × pp ({tp} × {pp} = {tp * pp})")
    if tp > spec.heads:
        raise ValueError(f"tp must be <= the number of attention heads ({spec.heads}), got {tp}")
    if pp > spec.layers:
        raise ValueError(f"pp must be <= the number of layers ({spec.layers}), got {pp}")
    dp = gpus // (tp * pp)
    ep = _int_at_least("ep", ep)
    moe = None
    if experts is not None or ep > 1:
        from .fabric.moe import MoEConfig

        if experts is None:
            raise ValueError(f"experts (routed experts per MoE layer) is required when ep > 1, got ep = {ep}")
        experts = _int_at_least("experts", experts)
        if top_k is None:
            raise ValueError("top_k (experts each token is sent to) is required with experts")
        top_k = _int_at_least("top_k", top_k)
        n_moe = spec.layers if moe_layers is None else _int_at_least("moe_layers", moe_layers)
        if n_moe > spec.layers:
            raise ValueError(f"moe_layers must be <= the number of layers ({spec.layers}), got {n_moe}")
        # MoEConfig checks top_k <= experts (ValueError naming top_k)
        moe = MoEConfig(hidden=spec.hidden, tokens=b * spec.seq, experts=experts, top_k=top_k,
                        bytes_per_elem=defaults["bytes_per_element"], moe_layers=n_moe)
        if experts % ep:
            raise ValueError(f"ep must divide experts ({experts}) so each GPU holds the same number of experts, got {ep}")
        if dp % ep:
            raise ValueError(
                f"ep must divide dp = gpus / (tp × pp) = {dp} (ep × tp × pp = {ep * tp * pp} must divide gpus = {gpus}), got {ep}"
            )
    elif top_k is not None or moe_layers is not None:
        raise ValueError("top_k and moe_layers need experts (a mixture-of-experts model)")
    flop_params = spec.params if active_params is None else _number("active_params", active_params, positive=True)
    if flop_params > spec.params:
        raise ValueError(f"active_params must be <= params ({spec.params:g}), got {active_params!r}")
    sequences = tokens // spec.seq
    if sequences < 1 or sequences % (dp * b):
        raise ValueError(
            f"the global batch ({sequences} sequences of {spec.seq} tokens) must split evenly into "
            f"dp × micro_batch = {dp} × {b}; choose gpus, tp, pp so that dp divides {sequences}"
        )
    m = sequences // (dp * b)
    act = defaults["bytes_per_element"]

    # compute and bubble
    gpu = sysobj.gpu_spec
    peak = gpu.bf16_TFLOPS * 1e12
    model_flops = training_flops(flop_params, sequences * spec.seq)
    hw_flops = training_flops(flop_params, sequences * spec.seq, recompute=recompute)
    compute = compute_time_s(hw_flops, gpus, peak_TFLOPS=gpu.bf16_TFLOPS, efficiency=eff)
    bubble = compute * (pp - 1) / (v * m)

    # placement of the three groups
    strides = {"tp-first": {"tp": 1, "dp": tp, "pp": tp * dp}, "dp-first": {"dp": 1, "tp": dp, "pp": tp * dp}}[placement]
    groups = {
        "tp": group_placement(system, tp, strides["tp"]),
        "dp": group_placement(system, dp, strides["dp"]),
        "pp": group_placement(system, pp, strides["pp"]),
    }
    if ep > 1:  # EP = consecutive members of the DP group
        groups["ep"] = group_placement(system, ep, strides["dp"])

    # tensor parallel: 4 all-reduces per layer and micro-batch (6 with full recompute), not overlapped
    payload = b * spec.seq * spec.hidden * act
    per_layer = 6 if recompute == "full" else 4
    tp_comm = per_layer * (spec.layers / pp) * m * collective_time(
        "allreduce", system, groups["tp"], payload, slowest_link_factor=slowest_link_factor, bandwidth_multiplier=bandwidth_multiplier, algo=algo
    )
    # pipeline: one activation forward + one gradient backward per micro-batch (1/tp each with scatter/gather)
    pp_comm = 0.0
    if pp > 1:
        pp_comm = 2 * m * collective_time("sendrecv", system, groups["pp"], payload / tp, slowest_link_factor=slowest_link_factor, bandwidth_multiplier=bandwidth_multiplier)
    # data parallel: gradient all-reduce (or RS + AG for ZeRO-1/2, same cost) of P/(tp·pp)·2 bytes
    grad_buffer = spec.params / (tp * pp) * act
    if zero_stage == 3:
        dp_comm = (2 * m) * collective_time("allgather", system, groups["dp"], grad_buffer, slowest_link_factor=slowest_link_factor, bandwidth_multiplier=bandwidth_multiplier, algo=algo) + collective_time(
            "reducescatter", system, groups["dp"], grad_buffer, slowest_link_factor=slowest_link_factor, bandwidth_multiplier=bandwidth_multiplier, algo=algo
        )
        window = compute  # gathers are prefetched during the whole forward and backward
    else:
        _choice("zero_stage", zero_stage, ZERO_STAGES)
        dp_comm = collective_time("allreduce", system, groups["dp"], grad_buffer, slowest_link_factor=slowest_link_factor, bandwidth_multiplier=bandwidth_multiplier, algo=algo)
        window = compute / m * (4 / 6)  # bucketed, overlapped with the backward (4N of 6N) of the last micro-batch
    dp_exposed = max(0.0, dp_comm - window) if overlap_dp else dp_comm
    # expert parallel: 2 all-to-alls forward + 2 backward per MoE layer of the stage and micro-batch, not overlapped.
    # nccl-tests' size S of one all-to-all = the routed buffer; each GPU sends (ep-1)/ep of it (alltoall_bytes_per_gpu).
    ep_comm = 0.0
    if ep > 1:
        ep_comm = 4 * (moe.moe_layers / pp) * m * collective_time(
            "alltoall", system, groups["ep"], moe.routed_bytes, slowest_link_factor=slowest_link_factor, bandwidth_multiplier=bandwidth_multiplier
        )

    act_mem = activation_memory_bytes(
        layers=spec.layers, hidden=spec.hidden, seq=spec.seq, micro_batch=b, heads=spec.heads, tp=tp, pp=pp, recompute=recompute
    )
    memory = training_memory_bytes(spec.params, zero_stage=zero_stage, dp=dp, tp=tp, pp=pp, activations=act_mem)
    return StepTime(
        model=spec.id,
        system=system,
        gpus=gpus,
        tp=tp,
        pp=pp,
        dp=dp,
        micro_batches=m,
        compute=compute,
        bubble=bubble,
        tp_comm=tp_comm,
        pp_comm=pp_comm,
        dp_comm=dp_comm,
        dp_exposed=dp_exposed,
        tokens_per_step=sequences * spec.seq,
        model_flops=model_flops,
        peak_flops=peak,
        memory=memory,
        memory_capacity_GB=gpu.memory_GB,
        placements=groups,
        compute_efficiency=eff,
        recompute=recompute,
        ep=ep,
        ep_comm=ep_comm,
    )


def _pow2_upto(n: int) -> list[int]:
    out, k = [], 1
    while k <= n:
        out.append(k)
        k *= 2
    return out


def best_config(
    model: str | ModelSpec,
    system: str,
    gpus: int,
    *,
    max_tp: int | None = None,
    **kwargs,
) -> StepTime | None:
    """The fastest configuration that fits in memory, searching tp (powers of 2 up to the node size),
    pp (powers of 2) and recompute ('selective', then 'full'). None when nothing fits.

    Other keyword arguments go to :func:`step_time`.
    """
    spec = get_model(model)
    gpus = _int_at_least("gpus", gpus)
    limit = node_size(system) if max_tp is None else _int_at_least("max_tp", max_tp)
    best: StepTime | None = None
    for recompute in ("selective", "full"):
        for tp in _pow2_upto(min(limit, spec.heads, gpus)):
            for pp in _pow2_upto(min(spec.layers, gpus // tp)):
                try:
                    st = step_time(spec, system, gpus, tp=tp, pp=pp, recompute=recompute, **kwargs)
                except ValueError:
                    continue
                if st.fits and (best is None or st.total < best.total):
                    best = st
        if best is not None:
            return best
    return best


# ------------------------------------------------------------------------------------------------
# cost and energy


@dataclass(frozen=True)
class RunCost:
    """A whole training run: wall time, GPU-hours, rental cost, energy and its cost."""

    hours: float
    gpu_hours: float
    usd: float
    energy_MWh: float
    energy_usd: float


def system_costs(system_id: str) -> dict:
    """Price per GPU-hour and power per GPU of a system, with labels and sources (``data/costs.toml``)."""
    table = _costs()["systems"]
    if system_id not in table:
        raise ValueError(f"system_id must be one of {', '.join(table)} (systems with cost data); got {system_id!r}")
    return dict(table[system_id])


def run_cost(
    step: StepTime,
    training_tokens: float,
    *,
    usd_per_gpu_hour: float | None = None,
    kW_per_gpu: float | None = None,
    usd_per_kWh: float | None = None,
    pue: float | None = None,
    goodput: float = 1.0,
) -> RunCost:
    """Cost of training on ``training_tokens`` tokens at this step time.

    ``goodput`` (0–1] stretches the wall time for failures and checkpoints (see ``nvcourse.reliability``).
    Prices and power default to ``data/costs.toml``; pass your own to change an assumption.
    """
    tokens = _number("training_tokens", training_tokens, positive=True)
    g = _number("goodput", goodput, positive=True)
    if g > 1:
        raise ValueError(f"goodput must be in (0, 1], got {goodput!r}")
    c = system_costs(step.system)
    elec = _costs()["electricity"]
    price = c["usd_per_gpu_hour"] if usd_per_gpu_hour is None else _number("usd_per_gpu_hour", usd_per_gpu_hour)
    kw = c["kW_per_gpu"] if kW_per_gpu is None else _number("kW_per_gpu", kW_per_gpu)
    kwh_price = elec["usd_per_kWh"] if usd_per_kWh is None else _number("usd_per_kWh", usd_per_kWh)
    pue = elec["pue"] if pue is None else _number("pue", pue, positive=True)
    hours = tokens / step.tokens_per_s / 3600 / g
    gpu_hours = hours * step.gpus
    energy_kWh = gpu_hours * kw * pue
    return RunCost(hours=hours, gpu_hours=gpu_hours, usd=gpu_hours * price, energy_MWh=energy_kWh / 1000, energy_usd=energy_kWh * kwh_price)
