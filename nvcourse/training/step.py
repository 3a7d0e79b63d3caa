"""Step-time model: compute + exposed communication, on a catalog system.

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
from ..fabric.moe import MoEConfig
from .memory import ZERO_STAGES, MemoryBreakdown, activation_memory_bytes, training_memory_bytes
from .models import ModelSpec, data, get_model, training_flops
from .step_config import Batch, Links, MixtureOfExperts, Parallelism, Recipe, settings
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
    """One optimizer step of one configuration (times in seconds); plus what it means (MFU, tokens/s, memory).

    ``model_flops`` is the step's 6·P·tokens (FLOPs), ``peak_flops`` one GPU's dense BF16 peak (FLOP/s).
    """

    model: str
    system: str
    gpus: int
    tp: int
    pp: int
    dp: int
    micro_batches: int
    compute_s: float
    bubble_s: float
    tp_comm_s: float
    pp_comm_s: float
    dp_comm_s: float
    dp_exposed_s: float
    tokens_per_step: int
    model_flops: float
    peak_flops: float
    memory: MemoryBreakdown
    memory_capacity_GB: float
    placements: dict
    compute_efficiency: float
    recompute: str = "selective"
    ep: int = 1
    ep_comm_s: float = 0.0

    @property
    def total_s(self) -> float:
        """The step: compute + bubble + the communication the GPU waits for."""
        return self.compute_s + self.bubble_s + self.exposed_comm_s

    @property
    def exposed_comm_s(self) -> float:
        """Communication the GPU waits for: TP + PP + EP + the part of DP that overlap cannot hide."""
        return self.tp_comm_s + self.pp_comm_s + self.dp_exposed_s + self.ep_comm_s

    @property
    def mfu(self) -> float:
        """Model FLOPs utilisation: 6·P·tokens / (step time × GPUs × peak)."""
        return self.model_flops / (self.total_s * self.gpus * self.peak_flops)

    @property
    def efficiency(self) -> float:
        """Scaling efficiency: time the step would take with no communication and no bubble (6·P FLOPs at
        ``compute_efficiency``) divided by the real step time. 1 = the GPUs never wait; equals
        MFU / compute_efficiency."""
        return self.mfu / self.compute_efficiency

    @property
    def tokens_per_s(self) -> float:
        return self.tokens_per_step / self.total_s

    @property
    def fits(self) -> bool:
        return self.memory.fits(self.memory_capacity_GB)

    def breakdown(self) -> dict[str, float]:
        """Seconds per part, in plotting order (they add up to :attr:`total_s`). ``"EP comm"`` only when ep > 1."""
        parts = {
            "compute": self.compute_s,
            "pipeline bubble": self.bubble_s,
            "TP comm": self.tp_comm_s,
            "PP comm": self.pp_comm_s,
        }
        if self.ep > 1:
            parts["EP comm"] = self.ep_comm_s
        parts["DP comm (exposed)"] = self.dp_exposed_s
        return parts


def step_time(
    model: str | ModelSpec,
    system: str,
    gpus: int,
    *,
    parallel: Parallelism | None = None,
    batch: Batch | None = None,
    recipe: Recipe | None = None,
    links: Links | None = None,
    moe: MixtureOfExperts | None = None,
    **settings_kw: object,
) -> StepTime:
    """Time of one optimizer step of ``model`` on ``gpus`` GPUs of catalog ``system``.

    The run is described by five small configs (:mod:`nvcourse.training.step_config`), each defaulting to the
    dense model on ``training.toml``'s defaults; any of their fields can also be given by name
    (``step_time("llama3-70b", "dgx-h100", 1024, tp=8, pp=4)``).

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
    cfg = settings({Parallelism: parallel, Batch: batch, Recipe: recipe, Links: links, MixtureOfExperts: moe},
                   **settings_kw)
    spec = get_model(model)
    sysobj = catalog.get_system(system)
    run = _layout(spec, integer("gpus", gpus), cfg[Parallelism], cfg[Batch], cfg[Links], cfg[Recipe],
                  cfg[MixtureOfExperts])
    gpu = sysobj.gpu_spec
    tokens = run.sequences * spec.seq
    model_flops = training_flops(run.flop_params, tokens)
    hw_flops = training_flops(run.flop_params, tokens, recompute=cfg[Recipe].recompute)
    compute = compute_time_s(hw_flops, run.gpus, peak_TFLOPS=gpu.bf16_TFLOPS, efficiency=run.efficiency)
    groups = _groups(system, run)
    comm = _communication(spec, system, run, groups, cfg[Recipe], cfg[Links], compute)
    act_mem = activation_memory_bytes(
        layers=spec.layers, hidden=spec.hidden, seq=spec.seq, micro_batch=run.micro_batch, heads=spec.heads,
        tp=run.tp, pp=run.pp, recompute=cfg[Recipe].recompute,
    )
    memory = training_memory_bytes(spec.params, zero_stage=cfg[Recipe].zero_stage, dp=run.dp, tp=run.tp, pp=run.pp,
                                   activations=act_mem)
    return StepTime(
        model=spec.id, system=system, gpus=run.gpus, tp=run.tp, pp=run.pp, dp=run.dp, micro_batches=run.m,
        compute_s=compute, bubble_s=compute * (run.pp - 1) / (run.v * run.m), **comm,
        tokens_per_step=tokens, model_flops=model_flops, peak_flops=gpu.bf16_TFLOPS * 1e12, memory=memory,
        memory_capacity_GB=gpu.memory_GB, placements=groups, compute_efficiency=run.efficiency,
        recompute=cfg[Recipe].recompute, ep=run.ep,
    )


@dataclass(frozen=True)
class _Run:
    """A step's checked shape: degrees, batch split, FLOP parameters and the MoE routing (None: dense)."""

    gpus: int
    tp: int
    pp: int
    v: int
    dp: int
    ep: int
    placement: str
    micro_batch: int
    m: int
    sequences: int
    efficiency: float
    flop_params: float
    moe: MoEConfig | None


def _layout(spec: ModelSpec, gpus: int, par: Parallelism, bat: Batch, lnk: Links, rec: Recipe,
            mix: MixtureOfExperts) -> _Run:
    """Check the degrees and the batch against the model, in the order a learner's mistakes are reported."""
    tp = integer("tp", par.tp)
    pp = integer("pp", par.pp)
    v = integer("virtual_stages", par.virtual_stages)
    placement = choice("placement", par.placement, PLACEMENTS)
    choice("proto", lnk.proto, PROTO_CHOICES)
    defaults = data()["defaults"]
    b = integer("micro_batch", defaults["micro_batch"] if bat.micro_batch is None else bat.micro_batch)
    eff = defaults["compute_efficiency"] if rec.compute_efficiency is None else rec.compute_efficiency
    tokens = (spec.global_batch_tokens if bat.global_batch_tokens is None
              else integer("global_batch_tokens", bat.global_batch_tokens))
    if gpus % (tp * pp):
        raise ValueError(f"gpus ({gpus}) must be a multiple of tp × pp ({tp} × {pp} = {tp * pp})")
    if tp > spec.heads:
        raise ValueError(f"tp must be <= the number of attention heads ({spec.heads}); got {tp}")
    if pp > spec.layers:
        raise ValueError(f"pp must be <= the number of layers ({spec.layers}); got {pp}")
    dp = gpus // (tp * pp)
    ep = integer("ep", par.ep)
    moe = _moe(spec, mix, ep, dp, gpus, tp, pp, b, defaults["bytes_per_element"])
    active = mix.active_params
    flop_params = spec.params if active is None else number("active_params", active, positive=True)
    if flop_params > spec.params:
        raise ValueError(f"active_params must be <= params ({spec.params:g}); got {active!r}")
    sequences = tokens // spec.seq
    if sequences < 1 or sequences % (dp * b):
        raise ValueError(
            f"the global batch ({sequences} sequences of {spec.seq} tokens) must split evenly into "
            f"dp × micro_batch = {dp} × {b}; choose gpus, tp, pp so that dp divides {sequences}"
        )
    return _Run(gpus=gpus, tp=tp, pp=pp, v=v, dp=dp, ep=ep, placement=placement, micro_batch=b,
                m=sequences // (dp * b), sequences=sequences, efficiency=eff, flop_params=flop_params, moe=moe)


def _moe(spec: ModelSpec, mix: MixtureOfExperts, ep: int, dp: int, gpus: int, tp: int, pp: int, b: int,
         act_bytes: float) -> MoEConfig | None:
    """The routed all-to-all of a mixture-of-experts model (None for a dense one), its settings checked."""
    if mix.experts is None and ep == 1:
        if mix.top_k is not None or mix.moe_layers is not None:
            raise ValueError("top_k and moe_layers need experts (a mixture-of-experts model)")
        return None
    if mix.experts is None:
        raise ValueError(f"experts (routed experts per MoE layer) is required when ep > 1; got ep = {ep}")
    experts = integer("experts", mix.experts)
    if mix.top_k is None:
        raise ValueError("top_k (experts each token is sent to) is required with experts")
    top_k = integer("top_k", mix.top_k)
    n_moe = spec.layers if mix.moe_layers is None else integer("moe_layers", mix.moe_layers)
    if n_moe > spec.layers:
        raise ValueError(f"moe_layers must be <= the number of layers ({spec.layers}); got {n_moe}")
    # MoEConfig checks top_k <= experts (ValueError naming top_k)
    moe = MoEConfig(hidden=spec.hidden, tokens=b * spec.seq, experts=experts, top_k=top_k,
                    bytes_per_elem=act_bytes, moe_layers=n_moe)
    if experts % ep:
        raise ValueError(f"ep must divide experts ({experts}) so each GPU holds the same number of experts; "
                         f"got {ep}")
    if dp % ep:
        raise ValueError(
            f"ep must divide dp = gpus / (tp × pp) = {dp} (ep × tp × pp = {ep * tp * pp} must divide "
            f"gpus = {gpus}); got {ep}"
        )
    return moe


def _groups(system: str, run: _Run) -> dict[str, Placement]:
    """Where the TP, DP, PP (and EP) groups sit: ranks fill a node first, in the order of ``placement``."""
    strides = {"tp-first": {"tp": 1, "dp": run.tp, "pp": run.tp * run.dp},
               "dp-first": {"dp": 1, "tp": run.dp, "pp": run.tp * run.dp}}[run.placement]
    groups = {
        "tp": group_placement(system, run.tp, strides["tp"]),
        "dp": group_placement(system, run.dp, strides["dp"]),
        "pp": group_placement(system, run.pp, strides["pp"]),
    }
    if run.ep > 1:  # EP = consecutive members of the DP group
        groups["ep"] = group_placement(system, run.ep, strides["dp"])
    return groups


def _communication(spec: ModelSpec, system: str, run: _Run, groups: dict[str, Placement], rec: Recipe,
                   lnk: Links, compute: float) -> dict[str, float]:
    """Seconds of TP, PP, DP (all and exposed) and EP communication per step, as :class:`StepTime` fields."""

    def comm(op: str, group: str, nbytes: float, op_algo: str = lnk.algo) -> float:
        """One collective over one of the placed groups, with this step's link what-ifs."""
        return collective_time(op, system, groups[group], nbytes, algo=op_algo, proto=lnk.proto,
                               slowest_link_factor=lnk.slowest_link_factor,
                               bandwidth_multiplier=lnk.bandwidth_multiplier)

    act = data()["defaults"]["bytes_per_element"]
    m, tp, pp = run.m, run.tp, run.pp
    # tensor parallel: 4 all-reduces per layer and micro-batch (6 with full recompute), not overlapped
    payload = run.micro_batch * spec.seq * spec.hidden * act
    tp_comm = tp_allreduces_per_layer(rec.recompute) * (spec.layers / pp) * m * comm("allreduce", "tp", payload)
    # pipeline: one activation forward + one gradient backward per micro-batch (1/tp each with scatter/gather)
    pp_comm = 2 * m * comm("sendrecv", "pp", payload / tp, "nccl") if pp > 1 else 0.0
    # data parallel: gradient all-reduce (or RS + AG for ZeRO-1/2, same cost) of P/(tp·pp)·2 bytes
    grad_buffer = spec.params / (tp * pp) * act
    if rec.zero_stage == 3:
        dp_comm = 2 * m * comm("allgather", "dp", grad_buffer) + comm("reducescatter", "dp", grad_buffer)
        window = compute  # gathers are prefetched during the whole forward and backward
    else:
        choice("zero_stage", rec.zero_stage, ZERO_STAGES)
        dp_comm = comm("allreduce", "dp", grad_buffer)
        # bucketed, overlapped with the backward pass (4N of 6N FLOPs) of the last micro-batch
        flops = data()["flops"]
        window = compute / m * flops["backward_per_param_per_token"] / flops["per_param_per_token"]
    # expert parallel: 2 all-to-alls forward + 2 backward per MoE layer of the stage and micro-batch, not
    # overlapped. nccl-tests' size S of one all-to-all = the routed buffer; each GPU sends (ep-1)/ep of it
    # (alltoall_bytes_per_gpu).
    moe = run.moe
    ep_comm = 4 * (moe.moe_layers / pp) * m * comm("alltoall", "ep", moe.routed_bytes, "nccl") if run.ep > 1 else 0.0
    return {"tp_comm_s": tp_comm, "pp_comm_s": pp_comm, "dp_comm_s": dp_comm,
            "dp_exposed_s": max(0.0, dp_comm - window) if rec.overlap_dp else dp_comm, "ep_comm_s": ep_comm}


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
                if st.fits and (best is None or st.total_s < best.total_s):
                    best = st
        if best is not None:
            return best
    return best
