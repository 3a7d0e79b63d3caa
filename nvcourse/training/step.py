"""Step-time model: compute + exposed communication, on a catalog system.

Step-time model: compute + exposed communication, on a catalog system.

  step = compute · (1 + bubble) + TP (not overlapped) + PP p2p (not overlapped)
         + EP all-to-all (not overlapped) + DP exposed (what the backward pass of the last micro-batch cannot hide)

compute   = FLOPs per GPU / (peak dense BF16 × compute_efficiency), FLOPs = 6·P·tokens (8·P with
            full recomputation: hardware work, while MFU keeps counting 6·P); P = the *active*
            parameters per token for a mixture-of-experts model (``active_params``).
EP        = 4 all-to-alls (dispatch + combine, forward and backward) per MoE layer of the stage and
            micro-batch over the ``ep`` ranks, the EP group carved out of the DP group (Megatron-Core).
bubble    = (p − 1)/(v·m) of the compute time (Megatron-LM's normalisation; share of wall time
            (p − 1)/(v·m + p − 1)), v = virtual stages of the interleaved schedule.
placement = which GPUs a group spans. Ranks are numbered inside a node first; with the default
            order 'tp-first' a TP group is consecutive ranks (inside one NVLink domain), a DP group
            strides by tp·... and crosses nodes. 'dp-first' swaps them: the classic bad placement.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import catalog
from .._validate import choice, fraction, integer, number
from ..costmodel import PROTO_CHOICES, predict
from .memory import ZERO_STAGES, MemoryBreakdown, activation_memory_bytes, training_memory_bytes
from .models import ModelSpec, data, get_model, training_flops
from .traffic import tp_allreduces_per_layer

__all__ = [
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
]

COLLECTIVE_OPS = ("allreduce", "reducescatter", "allgather", "alltoall", "sendrecv")
PLACEMENTS = ("tp-first", "dp-first")


def compute_time_s(flops: float, gpus: int, *, peak_TFLOPS: float, efficiency: float) -> float:
    """Seconds for ``gpus`` GPUs at ``efficiency`` × ``peak_TFLOPS`` to do ``flops`` FLOPs."""
    flops = number("flops", flops)
    gpus = integer("gpus", gpus)
    peak = number("peak_TFLOPS", peak_TFLOPS, positive=True)
    eff = fraction("efficiency", efficiency)
    return flops / (gpus * peak * 1e12 * eff)


def pipeline_bubble_fraction(pp: int, micro_batches: int, *, virtual_stages: int = 1) -> float:
    """Idle share of wall time of a 1F1B pipeline: (p − 1)/(v·m + p − 1) (0 for p = 1)."""
    p = integer("pp", pp)
    m = integer("micro_batches", micro_batches)
    v = integer("virtual_stages", virtual_stages)
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
    n = integer("ranks", ranks)
    stride = integer("stride", stride)
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
    proto: str = "auto",
) -> float:
    """Seconds for one collective of ``nbytes`` (nccl-tests' size S) over a placed group.

    The time comes from the course's protocol-aware collective cost model,
    :func:`nvcourse.costmodel.predict`, with ``placement.per_node`` GPUs in each of ``placement.nodes``
    nodes (a group crossing nodes uses those members' share of the NICs), ``algo`` ('nccl' = the
    fastest of NCCL's own algorithms, what NCCL's tuner would pick; 'auto' = the fastest the model
    knows; or a name such as 'ring') and ``proto`` ('auto' = the fastest of NCCL's LL / LL128 / Simple
    protocols, as NCCL's tuner picks; or one of them). So the time holds NCCL's once-per-call base
    latency and, for small messages, the cheaper per-step latency of LL or LL128.
    ``sendrecv`` is one point-to-point message between two neighbouring members of the group, and
    ``alltoall`` is built from point-to-point sends: the cost model charges both with the Simple
    protocol only, so ``proto`` does not apply to them.

    ``slowest_link_factor`` < 1 slows the bandwidth term (a ring runs at its slowest link);
    ``bandwidth_multiplier`` scales it the other way (a what-if: 2 = twice the bandwidth, latency
    unchanged). Both act on the (algorithm, protocol) pair chosen at the catalog's bandwidth: NCCL's
    tuner does not know that a link is degraded.
    """
    op = choice("op", op, COLLECTIVE_OPS)
    proto = choice("proto", proto, PROTO_CHOICES)
    catalog.get_system(system_id)
    nbytes = number("nbytes", nbytes)
    f = fraction("slowest_link_factor", slowest_link_factor)
    mult = number("bandwidth_multiplier", bandwidth_multiplier, positive=True)
    if nbytes == 0 or placement.ranks == 1:
        return 0.0
    if op == "sendrecv":  # two neighbours: in the same node, or one in each of two nodes
        gpus, nodes = (2, 1) if placement.per_node >= 2 else (1, 2)
    else:
        gpus, nodes = placement.per_node, placement.nodes
    p2p = op in ("sendrecv", "alltoall")
    p = predict(op, system_id, gpus, nbytes, nodes=nodes, algo="nccl" if op == "sendrecv" else algo,
                proto="auto" if p2p else proto)
    return p.latency_s + p.bandwidth_s / (f * mult)


def moe_alltoall_bytes(*, tokens: int, hidden: int, top_k: int, act_bytes: float = 2) -> float:
    """Bytes one GPU dispatches in one MoE all-to-all: every token goes to ``top_k`` experts (h values each)."""
    tokens = integer("tokens", tokens)
    hidden = integer("hidden", hidden)
    top_k = integer("top_k", top_k)
    return tokens * hidden * top_k * number("act_bytes", act_bytes, positive=True)


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
        ``compute_efficiency``) divided by the real step time. 1 = the GPUs never wait; equals
        MFU / compute_efficiency."""
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
    proto: str = "auto",
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
    TP and DP collectives ('nccl' = the fastest of NCCL's algorithms, e.g. NVLS inside an H100 node; 'ring'),
    ``proto`` their NCCL protocol ('auto' = the fastest of LL / LL128 / Simple per message, as NCCL
    picks; or one of them), see :func:`collective_time`.

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
    gpus = integer("gpus", gpus)
    tp = integer("tp", tp)
    pp = integer("pp", pp)
    v = integer("virtual_stages", virtual_stages)
    placement = choice("placement", placement, PLACEMENTS)
    proto = choice("proto", proto, PROTO_CHOICES)
    defaults = data()["defaults"]
    b = integer("micro_batch", defaults["micro_batch"] if micro_batch is None else micro_batch)
    eff = defaults["compute_efficiency"] if compute_efficiency is None else compute_efficiency
    tokens = (spec.global_batch_tokens if global_batch_tokens is None
              else integer("global_batch_tokens", global_batch_tokens))
    if gpus % (tp * pp):
        raise ValueError(f"gpus ({gpus}) must be a multiple of tp × pp ({tp} × {pp} = {tp * pp})")
    if tp > spec.heads:
        raise ValueError(f"tp must be <= the number of attention heads ({spec.heads}); got {tp}")
    if pp > spec.layers:
        raise ValueError(f"pp must be <= the number of layers ({spec.layers}); got {pp}")
    dp = gpus // (tp * pp)
    ep = integer("ep", ep)
    moe = None
    if experts is not None or ep > 1:
        from ..fabric.moe import MoEConfig

        if experts is None:
            raise ValueError(f"experts (routed experts per MoE layer) is required when ep > 1; got ep = {ep}")
        experts = integer("experts", experts)
        if top_k is None:
            raise ValueError("top_k (experts each token is sent to) is required with experts")
        top_k = integer("top_k", top_k)
        n_moe = spec.layers if moe_layers is None else integer("moe_layers", moe_layers)
        if n_moe > spec.layers:
            raise ValueError(f"moe_layers must be <= the number of layers ({spec.layers}); got {n_moe}")
        # MoEConfig checks top_k <= experts (ValueError naming top_k)
        moe = MoEConfig(hidden=spec.hidden, tokens=b * spec.seq, experts=experts, top_k=top_k,
                        bytes_per_elem=defaults["bytes_per_element"], moe_layers=n_moe)
        if experts % ep:
            raise ValueError(f"ep must divide experts ({experts}) so each GPU holds the same number of experts; "
                             f"got {ep}")
        if dp % ep:
            raise ValueError(
                f"ep must divide dp = gpus / (tp × pp) = {dp} (ep × tp × pp = {ep * tp * pp} must divide "
                f"gpus = {gpus}); got {ep}"
            )
    elif top_k is not None or moe_layers is not None:
        raise ValueError("top_k and moe_layers need experts (a mixture-of-experts model)")
    flop_params = spec.params if active_params is None else number("active_params", active_params, positive=True)
    if flop_params > spec.params:
        raise ValueError(f"active_params must be <= params ({spec.params:g}); got {active_params!r}")
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
    strides = {"tp-first": {"tp": 1, "dp": tp, "pp": tp * dp},
               "dp-first": {"dp": 1, "tp": dp, "pp": tp * dp}}[placement]
    groups = {
        "tp": group_placement(system, tp, strides["tp"]),
        "dp": group_placement(system, dp, strides["dp"]),
        "pp": group_placement(system, pp, strides["pp"]),
    }
    if ep > 1:  # EP = consecutive members of the DP group
        groups["ep"] = group_placement(system, ep, strides["dp"])

    def comm(op: str, group: str, nbytes: float, op_algo: str = algo) -> float:
        """One collective over one of the placed groups, with this step's link what-ifs."""
        return collective_time(op, system, groups[group], nbytes, algo=op_algo, proto=proto,
                               slowest_link_factor=slowest_link_factor, bandwidth_multiplier=bandwidth_multiplier)

    # tensor parallel: 4 all-reduces per layer and micro-batch (6 with full recompute), not overlapped
    payload = b * spec.seq * spec.hidden * act
    tp_comm = tp_allreduces_per_layer(recompute) * (spec.layers / pp) * m * comm("allreduce", "tp", payload)
    # pipeline: one activation forward + one gradient backward per micro-batch (1/tp each with scatter/gather)
    pp_comm = 2 * m * comm("sendrecv", "pp", payload / tp, "nccl") if pp > 1 else 0.0
    # data parallel: gradient all-reduce (or RS + AG for ZeRO-1/2, same cost) of P/(tp·pp)·2 bytes
    grad_buffer = spec.params / (tp * pp) * act
    if zero_stage == 3:
        dp_comm = 2 * m * comm("allgather", "dp", grad_buffer) + comm("reducescatter", "dp", grad_buffer)
        window = compute  # gathers are prefetched during the whole forward and backward
    else:
        choice("zero_stage", zero_stage, ZERO_STAGES)
        dp_comm = comm("allreduce", "dp", grad_buffer)
        # bucketed, overlapped with the backward pass (4N of 6N FLOPs) of the last micro-batch
        flops = data()["flops"]
        window = compute / m * flops["backward_per_param_per_token"] / flops["per_param_per_token"]
    dp_exposed = max(0.0, dp_comm - window) if overlap_dp else dp_comm
    # expert parallel: 2 all-to-alls forward + 2 backward per MoE layer of the stage and micro-batch, not
    # overlapped. nccl-tests' size S of one all-to-all = the routed buffer; each GPU sends (ep-1)/ep of it
    # (alltoall_bytes_per_gpu).
    ep_comm = 4 * (moe.moe_layers / pp) * m * comm("alltoall", "ep", moe.routed_bytes, "nccl") if ep > 1 else 0.0

    act_mem = activation_memory_bytes(
        layers=spec.layers, hidden=spec.hidden, seq=spec.seq, micro_batch=b, heads=spec.heads, tp=tp, pp=pp,
        recompute=recompute,
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
    gpus = integer("gpus", gpus)
    limit = node_size(system) if max_tp is None else integer("max_tp", max_tp)
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
