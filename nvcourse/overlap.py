"""Hiding communication behind compute: timelines of data, fully sharded, tensor, pipeline and context parallelism.

A GPU runs compute kernels on one CUDA stream and NCCL kernels on another, so a collective that does
not feed the *next* kernel can run while the GPU computes. What stays on the critical path is the
**exposed** communication: the step time minus the compute time. Each model below builds that
timeline from a collective-time function ``comm(nbytes) -> seconds`` (by default the course's cost
model, :func:`nvcourse.costmodel.predict`), so the same model works with a hand-worked α-β function
in the tests and with the catalog's hardware in the chapter.

* **DDP buckets** (:func:`dp_bucket_timeline`): gradients fill buckets of ``bucket_bytes`` in the
  order the backward pass produces them (last layer first); bucket k's all-reduce starts when it is
  full and the stream is free, so it overlaps the backward of the later buckets. What the backward
  cannot hide is the tail: the last bucket (the first layers' gradients) starts only when the backward
  ends. Small buckets shorten that tail but pay one collective latency each.
* **FSDP / ZeRO-3** (:func:`fsdp_timeline`): every layer's parameters are all-gathered before its
  forward and again before its backward; its gradients are reduce-scattered after its backward. An
  all-gather is issued ``prefetch`` layers ahead (0 = only when needed: fully exposed).
* **TP with sequence parallelism** (:func:`tp_overlap_time`): the all-reduce becomes a reduce-scatter
  plus an all-gather of the same bytes; splitting the GEMM and its collective into ``chunks`` and
  pipelining them (collective matmul) hides all but one chunk of the shorter of the two.
* **PP** (:func:`pp_p2p_time`) and **CP** ring attention (:func:`cp_ring_attention`): point-to-point.
* **SM cost**: while a collective runs, its kernels hold ``sm_fraction`` of the SMs, so the compute
  that overlaps it runs at ``1 - sm_fraction`` of its speed (DeepSeek-V3: 20 of 132 SMs).

Times in seconds, sizes in bytes, rates in bytes/s or FLOP/s (stated per function).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

from . import _data, catalog, costmodel, training

__all__ = [
    "Interval",
    "Timeline",
    "data",
    "default_bucket_bytes",
    "collective_fn",
    "dp_bucket_timeline",
    "best_bucket",
    "min_hiding_bucket",
    "fsdp_timeline",
    "sp_bytes",
    "tp_overlap_timeline",
    "tp_overlap_time",
    "dp_scenario",
    "pp_p2p_time",
    "cp_ring_attention",
]

CommFn = Callable[[float], float]


def data() -> dict:
    """The parsed ``data/overlap.toml`` (cached by ``_data.load``: treat it as read-only)."""
    return _data.load("overlap")


def default_bucket_bytes() -> int:
    """DDP's default bucket size, bytes (``bucket_cap_mb`` = 25, i.e. 25 MiB)."""
    return int(data()["ddp"]["bucket_cap_MiB"] * 2**20)


def _positive(name: str, v: object, *, zero: bool = False) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 or (v == 0 and not zero):
        raise ValueError(f"{name} must be a number {'>= 0' if zero else '> 0'}, got {v!r}")
    return float(v)


def _fraction(name: str, v: object) -> float:
    f = _positive(name, v, zero=True)
    if f >= 1:
        raise ValueError(f"{name} must be in [0, 1), got {v!r}")
    return f


def _count(name: str, v: object, minimum: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {v!r}")
    return v


# ------------------------------------------------------------------------------------------------
# timelines


@dataclass(frozen=True)
class Interval:
    """One kernel on one stream: ``stream`` is 'compute' or 'comm'; times in seconds."""

    stream: str
    start: float
    end: float
    label: str

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class Timeline:
    """A step as two streams. ``work_s`` is the compute the step needs at full speed (no communication)."""

    intervals: tuple[Interval, ...]
    work_s: float
    notes: dict = field(default_factory=dict)

    @property
    def total_s(self) -> float:
        return max((i.end for i in self.intervals), default=0.0)

    @property
    def comm_s(self) -> float:
        """Time the communication stream is busy."""
        return sum(i.duration for i in self.intervals if i.stream == "comm")

    @property
    def compute_busy_s(self) -> float:
        return sum(i.duration for i in self.intervals if i.stream == "compute")

    @property
    def exposed_s(self) -> float:
        """Step time beyond the compute work: exposed communication plus the SM slowdown of overlapped compute."""
        return self.total_s - self.work_s

    @property
    def slowdown_s(self) -> float:
        """Extra compute time because communication kernels held SMs."""
        return self.compute_busy_s - self.work_s

    @property
    def hidden_fraction(self) -> float:
        """Share of the communication time that did not add to the step (1 = fully hidden)."""
        return 1.0 if self.comm_s == 0 else max(0.0, 1.0 - (self.total_s - self.compute_busy_s) / self.comm_s)

    def exposed_intervals(self) -> list[tuple[float, float]]:
        """Spans of time in which the communication stream runs and compute does not (the GPU waits)."""
        comp = sorted((i.start, i.end) for i in self.intervals if i.stream == "compute")
        out: list[tuple[float, float]] = []
        for c in (i for i in self.intervals if i.stream == "comm"):
            segs = [(c.start, c.end)]
            for a, b in comp:
                segs = [p for s, e in segs for p in ((s, min(e, a)), (max(s, b), e)) if p[1] > p[0]]
            out.extend(segs)
        merged: list[tuple[float, float]] = []
        for a, b in sorted(out):  # join spans that touch (back-to-back collectives)
            if merged and a <= merged[-1][1] + 1e-12:
                merged[-1] = (merged[-1][0], max(merged[-1][1], b))
            else:
                merged.append((a, b))
        return merged


def _advance(t0: float, work: float, comm: list[tuple[float, float]], f: float, lo: int = 0) -> float:
    """Wall time at which ``work`` seconds of full-speed compute started at ``t0`` finish, when compute runs
    at ``1 - f`` of full speed inside the (sorted, disjoint) comm intervals (from index ``lo`` on)."""
    t, left = t0, work
    for j in range(lo, len(comm)):
        s, e = comm[j]
        if e <= t:
            continue
        if s > t:  # a free stretch before this collective
            if left <= s - t:
                return t + left
            left -= s - t
            t = s
        slow = (e - t) * (1 - f)  # work done while the collective holds its SMs
        if left <= slow:
            return t + left / (1 - f)
        left -= slow
        t = e
    return t + left


def collective_fn(op: str, system: str, gpus: int, nodes: int = 1, *, algo: str = "nccl") -> CommFn:
    """``nbytes -> seconds`` of one ``op`` on ``gpus`` GPUs per node x ``nodes`` nodes (the course's cost model)."""
    catalog.get_system(system)

    def comm(nbytes: float) -> float:
        if nbytes <= 0 or gpus * nodes == 1:
            return 0.0
        return costmodel.predict(op, system, gpus, nbytes, nodes=nodes, algo=algo).time_s

    return comm


# ------------------------------------------------------------------------------------------------
# data parallelism: DDP gradient buckets


def dp_bucket_timeline(grad_bytes: float, backward_s: float, bucket_bytes: float, allreduce: CommFn, *,
                       forward_s: float = 0.0, sm_fraction: float = 0.0) -> Timeline:
    """DDP's bucketed gradient all-reduce overlapped with the backward pass (one micro-batch).

    The backward produces ``grad_bytes`` of gradients at a steady rate over ``backward_s`` (full-speed
    compute seconds); bucket k (``bucket_bytes``, the last one smaller) is ready when its last gradient
    is produced. The all-reduces run one after another on the comm stream:
    ``start_k = max(ready_k, end_{k-1})``, ``end_k = start_k + allreduce(size_k)``. The step ends at
    ``max(backward end, end_last)``; ``forward_s`` is prepended (no DP communication during forward).
    """
    g = _positive("grad_bytes", grad_bytes)
    bwd = _positive("backward_s", backward_s)
    b = _positive("bucket_bytes", bucket_bytes)
    fwd = _positive("forward_s", forward_s, zero=True)
    f = _fraction("sm_fraction", sm_fraction)
    n = math.ceil(g / b - 1e-9)
    comm: list[tuple[float, float]] = []
    out: list[Interval] = []
    t_prev, w_prev, comm_free, lo = fwd, 0.0, fwd, 0
    for k in range(n):
        size = min(b, g - k * b)
        w = bwd * min(1.0, (k + 1) * b / g)
        while lo < len(comm) and comm[lo][1] <= t_prev:  # collectives already over cannot slow what follows
            lo += 1
        ready = _advance(t_prev, w - w_prev, comm, f, lo)
        t_prev, w_prev = ready, w
        start = max(ready, comm_free)
        comm_free = start + allreduce(size)
        comm.append((start, comm_free))
        out.append(Interval("comm", start, comm_free, f"all-reduce bucket {k + 1}/{n}"))
    bwd_end = t_prev
    if fwd:
        out.insert(0, Interval("compute", 0.0, fwd, "forward"))
    out.insert(1 if fwd else 0, Interval("compute", fwd, bwd_end, "backward"))
    notes = {"buckets": n, "backward_end_s": bwd_end, "tail_s": max(0.0, comm_free - bwd_end)}
    return Timeline(tuple(out), fwd + bwd, notes)


def best_bucket(grad_bytes: float, backward_s: float, allreduce: CommFn, *, sizes: list[float] | None = None,
                sm_fraction: float = 0.0) -> tuple[float, dict[float, float]]:
    """The bucket size (bytes) with the least exposed time, and exposed time (s) for every size tried.

    ``sizes`` default: powers of two from 1 MiB to 1 GiB plus DDP's 25 MiB.
    """
    sizes = sizes or sorted({2.0**e for e in range(20, 31)} | {float(default_bucket_bytes())})
    res = {s: dp_bucket_timeline(grad_bytes, backward_s, s, allreduce, sm_fraction=sm_fraction).exposed_s
           for s in sizes}
    return min(res, key=lambda s: (res[s], -s)), res


def min_hiding_bucket(grad_bytes: float, backward_s: float, latency_s: float, s_per_byte: float) -> float:
    """Smallest bucket (bytes) whose all-reduces fit in the backward: ``(G/B)(α + B/β) ≤ T_b`` gives
    ``B ≥ G·α / (T_b − G/β)`` (α = ``latency_s``, 1/β = ``s_per_byte``). ``inf`` when even one bucket
    cannot (``G/β ≥ T_b``: no bucket size hides it). The last bucket's all-reduce still shows (the tail)."""
    g = _positive("grad_bytes", grad_bytes)
    tb = _positive("backward_s", backward_s)
    a = _positive("latency_s", latency_s, zero=True)
    room = tb - g * _positive("s_per_byte", s_per_byte, zero=True)
    return math.inf if room <= 0 else g * a / room


# ------------------------------------------------------------------------------------------------
# FSDP / ZeRO-3


def fsdp_timeline(layers: int, layer_fwd_s: float, layer_bwd_s: float, allgather_s: float, reducescatter_s: float, *,
                  prefetch: int = 1, sm_fraction: float = 0.0) -> Timeline:
    """FSDP/ZeRO-3: per-layer all-gather before forward and before backward, reduce-scatter after backward.

    Compute runs F_0 … F_{L-1}, then B_{L-1} … B_0. The all-gather for compute op k is issued when op
    ``k - prefetch`` starts (``prefetch = 0``: when op k-1 ends, i.e. not prefetched; the first ``prefetch``
    gathers at time 0). Reduce-scatter of a layer is issued when its backward ends. The comm stream
    runs its operations in the order they are issued; op k starts when its gather and op k-1 are done.
    """
    L = _count("layers", layers)
    tf = _positive("layer_fwd_s", layer_fwd_s)
    tb = _positive("layer_bwd_s", layer_bwd_s)
    ag = _positive("allgather_s", allgather_s, zero=True)
    rs = _positive("reducescatter_s", reducescatter_s, zero=True)
    d = _count("prefetch", prefetch, 0)
    f = _fraction("sm_fraction", sm_fraction)
    ops = [(f"forward L{i}", tf) for i in range(L)] + [(f"backward L{i}", tb) for i in reversed(range(L))]
    n = len(ops)
    start, end = [0.0] * n, [0.0] * n
    comm: list[tuple[float, float]] = []
    out: list[Interval] = []
    pending: list[tuple[float, int, str, float]] = []  # (issue time, order, label, duration)
    gather_end: dict[int, float] = {}
    comm_free = 0.0
    order = 0

    def issue(t: float, label: str, dur: float) -> None:
        nonlocal order
        pending.append((t, order, label, dur))
        order += 1

    def drain(upto: float) -> None:  # run, in issue order, everything issued at or before `upto`
        nonlocal comm_free
        pending.sort()
        while pending and pending[0][0] <= upto + 1e-15:
            t, _, label, dur = pending.pop(0)
            s = max(t, comm_free)
            comm_free = s + dur
            if dur > 0:
                comm.append((s, comm_free))
                out.append(Interval("comm", s, comm_free, label))
            if label.startswith("all-gather"):
                gather_end[int(label.rsplit("#", 1)[1])] = comm_free

    def gather_label(k: int) -> str:
        return f"all-gather {ops[k][0].split()[1]} ({ops[k][0].split()[0]}) #{k}"

    for k in range(min(d, n)):
        issue(0.0, gather_label(k), ag)
    for k in range(n):
        prev_end = end[k - 1] if k else 0.0
        if d == 0:
            issue(prev_end, gather_label(k), ag)
        drain(prev_end)
        start[k] = max(prev_end, gather_end[k])
        if d and k + d < n:  # prefetch the gather d ops ahead as this op starts
            issue(start[k], gather_label(k + d), ag)
            drain(start[k])
        end[k] = _advance(start[k], ops[k][1], sorted(comm), f)
        out.append(Interval("compute", start[k], end[k], ops[k][0]))
        if k >= L:
            issue(end[k], f"reduce-scatter {ops[k][0].split()[1]}", rs)
    drain(math.inf)
    return Timeline(tuple(sorted(out, key=lambda i: (i.start, i.stream))), L * (tf + tb), {"prefetch": d})


# ------------------------------------------------------------------------------------------------
# tensor parallelism with sequence parallelism, pipeline and context parallelism


def sp_bytes(activation_bytes: float, tp: int) -> dict[str, float]:
    """Bytes each GPU sends: a ring all-reduce of ``activation_bytes`` vs reduce-scatter + all-gather (SP).

    All-reduce: ``2(t-1)/t · n``; reduce-scatter: ``(t-1)/t · n``; all-gather: ``(t-1)/t · n``: the same total.
    """
    n = _positive("activation_bytes", activation_bytes)
    t = _count("tp", tp)
    one = (t - 1) / t * n
    return {"allreduce": 2 * one, "reducescatter": one, "allgather": one, "sp_total": 2 * one}


def tp_overlap_timeline(gemm_s: float, comm: CommFn, nbytes: float, *, chunks: int = 1,
                        sm_fraction: float = 0.0) -> Timeline:
    """A GEMM followed by its collective (e.g. the reduce-scatter of sequence parallelism), split into ``chunks``.

    ``chunks = 1``: no overlap, ``gemm + comm(n)``. ``chunks = c >= 2``: a two-stage pipeline
    (Wang et al. 2023, collective matmul): GEMM chunks run back to back, chunk i's collective starts when
    chunk i is computed and the previous collective is done, so the total is
    ``g/c + (c-1)·max(g/c, t_c) + t_c`` with ``t_c = comm(n/c)`` (each chunk pays its own latency) and
    ``g`` the GEMM slowed by the resident communication kernels' SMs, ``gemm / (1 - sm_fraction)``.
    """
    g0 = _positive("gemm_s", gemm_s)
    n = _positive("nbytes", nbytes)
    c = _count("chunks", chunks)
    f = _fraction("sm_fraction", sm_fraction)
    g = g0 if c == 1 else g0 / (1 - f)
    tc = comm(n / c)
    out: list[Interval] = []
    comm_free = 0.0
    for i in range(c):
        a, b = i * g / c, (i + 1) * g / c
        out.append(Interval("compute", a, b, f"GEMM chunk {i + 1}/{c}" if c > 1 else "GEMM"))
        start = max(b, comm_free)
        comm_free = start + tc
        out.append(Interval("comm", start, comm_free, f"reduce-scatter {i + 1}/{c}" if c > 1 else "reduce-scatter"))
    return Timeline(tuple(out), g0, {"chunks": c, "chunk_comm_s": tc})


def tp_overlap_time(gemm_s: float, comm: CommFn, nbytes: float, *, chunks: int = 1,
                    sm_fraction: float = 0.0) -> dict[str, float]:
    """Totals of :func:`tp_overlap_timeline`: total, exposed (= total − gemm_s), communication and GEMM time."""
    t = tp_overlap_timeline(gemm_s, comm, nbytes, chunks=chunks, sm_fraction=sm_fraction)
    return {"total_s": t.total_s, "exposed_s": t.exposed_s, "comm_s": t.comm_s, "gemm_s": t.compute_busy_s}


def pp_p2p_time(system: str, activation_bytes: float, *, tp: int = 1, across_nodes: bool = True) -> float:
    """One pipeline-stage hand-off of ``activation_bytes`` (b·s·h·2): each of the ``tp`` ranks sends 1/tp of it
    (Megatron's scatter/gather), over the NIC when the stages are in different nodes, else NVLink. Seconds."""
    n = _positive("activation_bytes", activation_bytes)
    t = _count("tp", tp)
    gpus, nodes = (1, 2) if across_nodes else (2, 1)
    return costmodel.predict("sendrecv", system, gpus, n / t, nodes=nodes).time_s


def cp_ring_attention(*, seq: int, cp: int, hidden: int, kv_hidden: int, flops_per_s: float, link_Bps: float,
                      batch: int = 1, bytes_per_elem: float = 2.0, causal: bool = True) -> dict[str, float]:
    """Ring attention (context parallelism) of one layer's forward, per GPU.

    Each GPU holds ``s/cp`` tokens. In each of ``cp - 1`` steps it sends its current K,V block
    (``2·b·(s/cp)·kv_hidden·bytes``) to its neighbour while computing attention of its queries
    against the block it holds (``4·b·(s/cp)²·hidden`` FLOPs; half with a causal mask and
    load-balanced blocks). A step costs ``max(compute, send)``. Communication hides when
    ``s/cp >= flops_per_s · kv_hidden · bytes / (2 · hidden · link_Bps)`` (× 2 when causal).
    """
    s = _count("seq", seq)
    c = _count("cp", cp)
    F = _positive("flops_per_s", flops_per_s)
    W = _positive("link_Bps", link_Bps)
    chunk = s / c
    k = 0.5 if causal else 1.0
    step_compute = k * 4 * batch * chunk**2 * hidden / F
    step_comm = 2 * batch * chunk * kv_hidden * bytes_per_elem / W
    exposed = (c - 1) * max(0.0, step_comm - step_compute)
    threshold = F * kv_hidden * bytes_per_elem / (2 * k * hidden * W)
    return {"step_compute_s": step_compute, "step_comm_s": step_comm, "compute_s": c * step_compute,
            "exposed_s": exposed, "threshold_tokens_per_gpu": threshold, "tokens_per_gpu": chunk}


# ------------------------------------------------------------------------------------------------
# a data-parallel scenario from the course's reference models


@dataclass(frozen=True)
class DPScenario:
    """Pure data parallelism of a reference model: what the bucket timeline needs."""

    model: str
    system: str
    nodes: int
    gpus_per_node: int
    tp: int
    grad_bytes: float
    backward_s: float
    tokens_per_gpu: float
    allreduce: CommFn = field(repr=False, compare=False)

    def timeline(self, bucket_bytes: float, sm_fraction: float = 0.0) -> Timeline:
        return dp_bucket_timeline(self.grad_bytes, self.backward_s, bucket_bytes, self.allreduce,
                                  sm_fraction=sm_fraction)

    def min_bucket(self) -> float:
        """:func:`min_hiding_bucket` with α and 1/β read off the cost model at this group's size."""
        p = costmodel.predict("allreduce", self.system, self.gpus_per_node, 256 * 2**20, nodes=self.nodes, algo="nccl")
        return min_hiding_bucket(self.grad_bytes, self.backward_s, p.latency_s, p.bandwidth_s / p.bytes)


def dp_scenario(model: str, system: str, nodes: int, *, tp: int = 1, global_batch_tokens: int | None = None,
                compute_efficiency: float | None = None) -> DPScenario:
    """DDP of reference ``model`` (:mod:`nvcourse.training`) on ``nodes`` nodes of ``system``.

    ``tp`` GPUs of each node hold one replica (TP inside the node); the rest of the node's GPUs are
    DP members. Each GPU's gradient is ``P/tp · 2`` bytes; the step's tokens are split over the
    ``dp`` replicas, one sequence per micro-batch, and DDP overlaps the all-reduce only with the
    backward of the *last* micro-batch (4 of the 6·P FLOPs per token), at the training data's compute
    efficiency. All-reduce times come from :func:`nvcourse.costmodel.predict` (NCCL's algorithms),
    memoised by size so thousands of equal buckets cost one call.
    """
    spec = training.get_model(model)
    s = catalog.get_system(system)
    nodes = _count("nodes", nodes)
    tp = _count("tp", tp)
    d = max(s.gpus_per_host, s.gpus_per_domain) if s.gpus_per_domain > 1 else s.gpus_per_host
    if d % tp:
        raise ValueError(f"tp must divide the GPUs of one node ({d}), got {tp}")
    per_node = d // tp
    dp = per_node * nodes
    tokens = global_batch_tokens or spec.global_batch_tokens
    eff = compute_efficiency or training.data()["defaults"]["compute_efficiency"]
    seqs_per_replica = max(1, tokens // spec.seq // dp)
    bwd = 4 * spec.params * spec.seq / tp / (s.gpu_spec.bf16_TFLOPS * 1e12 * eff)
    cache: dict[float, float] = {}

    def allreduce(nbytes: float) -> float:
        if nbytes not in cache:
            cache[nbytes] = 0.0 if dp == 1 else costmodel.predict("allreduce", system, per_node, nbytes, nodes=nodes,
                                                                  algo="nccl").time_s
        return cache[nbytes]

    return DPScenario(spec.id, system, nodes, per_node, tp, spec.params / tp * 2, bwd,
                      seqs_per_replica * spec.seq / tp, allreduce)
