"""Communication for inference: tensor-parallel decode, all-reduce kernels, KV-cache transfer, serving layouts.

Decode (one new token per sequence per step) reads every weight once per step, so a step of batch B is
memory-bound until B is large: ``max(bytes_read / HBM, FLOPs / compute)``. Tensor parallelism over t
GPUs divides the bytes by t, but adds **two all-reduces per layer** (after attention and after the
MLP) of only ``B · hidden · 2`` bytes: 16 KiB for one Llama 3 70B token. Such a message is far below
n½ (chapter 02), so each all-reduce costs its latency, whatever the bandwidth; 80 layers x 2 x that
latency is added to every token. Whether TP 8 beats TP 4 is the race between the halved weight read
and that fixed cost.

All-reduce algorithms for decode (``algo``):

* ``"nccl"``: the course's NCCL cost model (:func:`nvcourse.costmodel.predict`, ring/tree/NVLS);
* ``"oneshot"``: each GPU reads the g-1 peers' buffers over NVLink and adds them (vLLM/TRT-LLM custom
  kernels): one synchronisation step, ``s + (g-1)·n/β``;
* ``"twoshot"``: reduce-scatter then all-gather through peer memory: ``2s + 2(g-1)/g·n/β``;
* ``"nccl-sym"``: NCCL 2.27+'s symmetric-memory kernels on registered buffers, timed with NCCL's own model of
  them (src/sym_kernels.cc, :func:`nccl_symmetric_allreduce`);

with ``s`` the custom kernels' measured small-message latency on H100 (sglang#2904, data/inference.toml)
and ``β`` the GPU's achievable NVLink bandwidth (catalog).

Disaggregated serving moves a prompt's KV cache from the prefill GPUs to the decode GPUs:
``layers · 2 · kv_heads · head_dim · bytes`` per token (:func:`kv_bytes_per_token`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

from . import _data, catalog, costmodel
from ._validate import choice, number
from ._validate import integer as _int
from .model_shapes import ModelSpec, get_shape

#: a positive finite number (the course-wide message: "<name> must be > 0; got ...")
_pos = partial(number, positive=True)

__all__ = [
    "ServeModel",
    "DecodeStep",
    "ALLREDUCE_ALGOS",
    "data",
    "get_model",
    "kv_bytes_per_token",
    "allreduce_time",
    "nccl_symmetric_allreduce",
    "custom_allreduce_points",
    "decode_step",
    "prefill_time",
    "kv_transfer_time",
    "ttft",
    "batch_regimes",
    "serving_layouts",
]

ALLREDUCE_ALGOS = ("nccl", "nccl-sym", "oneshot", "twoshot")


def data() -> dict:
    """The parsed ``data/inference.toml`` (cached by ``_data.load``: treat it as read-only)."""
    return _data.load("inference")


#: The served model is the shared :class:`nvcourse.model_shapes.ModelSpec` (layers, hidden, heads, ``kv_heads``,
#: ``head_dim`` ...); the name stays for the chapters and checkers that use it.
ServeModel = ModelSpec


def get_model(model: str | ModelSpec) -> ModelSpec:
    """A model of ``data/models.toml`` by id (ValueError lists them), or the ModelSpec passed in."""
    return get_shape(model)




def kv_bytes_per_token(model: str | ModelSpec, *, bytes_per_elem: float | None = None) -> float:
    """KV-cache bytes per token: ``layers · 2 (K and V) · kv_heads · head_dim · bytes`` (``bytes_per_elem``
    default: the decode data's ``kv_bytes_per_elem``, a BF16 cache)."""
    m = get_model(model)
    b = data()["decode"]["kv_bytes_per_elem"] if bytes_per_elem is None else bytes_per_elem
    return m.layers * 2 * m.kv_heads * m.head_dim * _pos("bytes_per_elem", b)


# ------------------------------------------------------------------------------------------------
# all-reduce of a decode step


def _custom_step_s(tp: int) -> float:
    table = data()["custom_allreduce"]["step_us"]
    known = sorted(int(k[2:]) for k in table)
    # the measured TP degree at or above tp (a kernel for more GPUs is not faster)
    g = next((k for k in known if k >= tp), known[-1])
    return table[f"tp{g}"] * 1e-6


def custom_allreduce_points() -> list[dict]:
    """The published custom all-reduce latencies (sglang#2904) with their sizes in bytes: the table counts float32
    elements, so ``bytes = elements × element_bytes`` (2 KiB to 4 MiB)."""
    return [{"tp": r["tp"], "bytes": [e * r["element_bytes"] for e in r["elements"]],
             "latency_s": [us * 1e-6 for us in r["latency_us"]]} for r in data()["custom_allreduce_measured"]]


def _softmin(x: float, ceiling: float, softness: float) -> float:
    # NCCL's smooth min(x, ceiling) (sym_kernels.cc)
    return ceiling - softness * math.log1p((math.exp(ceiling / softness) - 1) * math.exp(-x / softness))


def _softplus(x: float, softness: float) -> float:
    # NCCL's smooth max(0, x)
    z = x / softness
    return x if z >= 100 else softness * math.log1p(math.exp(z))


def _sym_kernels(tp: int, nbytes: float, multicast: bool, c: dict,
                 k: dict) -> list[tuple[str, float, float, int, bool]]:
    """(kernel, bus bytes, bus multiplier, max blocks, is LL) for each symmetric all-reduce kernel NCCL may pick."""
    maxb = min(c["max_blocks"], c["max_ctas"])
    out = [("AGxLL_R", tp * nbytes * c["ll_bus_factor"], 1.0, maxb, True),
           ("RSxLD_AGxST", 2 * nbytes * (tp - 1) / tp, 1.0, maxb, False)]
    if multicast:  # NVLS multimem needs an NVSwitch with in-switch reduction and more than 2 GPUs
        out += [("AGxLLMC_R", tp * nbytes * c["ll_bus_factor"], c["llmc_multiplier"], maxb, True),
                ("RSxLDMC_AGxSTMC", nbytes / tp + nbytes, float(tp),
                 min(math.ceil(k["nvls_block_budget"] / tp), c["max_ctas"]), False)]
    return out


def nccl_symmetric_allreduce(system: str, tp: int, nbytes: float) -> dict:
    """NCCL's symmetric-kernel all-reduce of ``nbytes`` (BF16, registered windows) on ``tp`` GPUs, by NCCL's model.

    For each kernel: ``t = base + softplus(bus_bytes / bw - 1)`` µs with ``bw = softmin(blocks × per-SM rate ×
    multiplier, peak)``; NCCL takes the fewest blocks within 2.5 % of the best and picks the kernel minimising
    ``t × (1 + 0.025 × blocks)``. Returns ``{"time_s", "kernel", "blocks"}``. Hand check (H100, TP 8, 16 KiB,
    AGxLL_R): bus 8 × 16384 × 9 B over 320 GiB/s = 3.43 µs, 4.5 + softplus(2.43) = 7.0 µs.
    """
    s = catalog.get_system(system)
    tp = _int("tp", tp)
    n = _pos("nbytes", nbytes)
    c = data()["nccl_sym"]["common"]
    arch = c["arch"].get(s.gpu)
    if arch is None or not s.has_nvlink:
        raise ValueError(f"NCCL's symmetric kernels are modelled for NVLink Hopper/Blackwell systems; {system} is not "
                         "one: use algo='nccl'")
    if tp > s.gpus_per_domain:
        raise ValueError(f"tp must be <= the NVLink domain of {system} ({s.gpus_per_domain}), got {tp}")
    k = data()["nccl_sym"][arch]
    GiB_per_us = (1 << 30) / 1e6  # NCCL's "GBps" unit: bytes per microsecond per GiB/s
    best = None
    for name, bus, mult, maxb, is_ll in _sym_kernels(tp, n, s.in_switch_reduction and tp > 2, c, k):
        base = k["base_lat_ll_us"] if is_ll else k["base_lat_us"]
        peak = (k["peak_nvls_GiBps"] if name == "RSxLDMC_AGxSTMC" else k["peak_GiBps"]) * GiB_per_us
        sm = k["sm_GiBps_allreduce"] * GiB_per_us

        def t(blocks: int, bus=bus, mult=mult, base=base, peak=peak, sm=sm) -> float:
            return base + _softplus(bus / _softmin(blocks * sm * mult, peak, sm) - 1, 1)

        blocks, time_us = maxb, t(maxb)
        for b in range(c["min_ctas"], maxb):
            if t(b) <= c["within"] * time_us:
                blocks, time_us = b, t(b)
                break
        score = time_us * (1 + c["block_penalty"] * blocks)
        if best is None or score < best[0]:
            best = (score, name, blocks, time_us)
    return {"time_s": best[3] * 1e-6, "kernel": best[1], "blocks": best[2]}


def allreduce_time(system: str, tp: int, nbytes: float, algo: str = "nccl") -> float:
    """One all-reduce of ``nbytes`` among ``tp`` GPUs of one NVLink domain of ``system``, seconds (0 for tp = 1)."""
    s = catalog.get_system(system)
    tp = _int("tp", tp)
    n = _pos("nbytes", nbytes)
    choice("algo", algo, ALLREDUCE_ALGOS)
    if tp > s.gpus_per_domain:
        raise ValueError(f"tp must be <= the NVLink domain of {system} ({s.gpus_per_domain}), got {tp}")
    if tp == 1:
        return 0.0
    if algo == "nccl":
        return costmodel.predict("allreduce", system, tp, n, algo="nccl").time_s
    if algo == "nccl-sym":
        return nccl_symmetric_allreduce(system, tp, n)["time_s"]
    if not s.has_nvlink:
        raise ValueError(f"algo={algo!r} needs NVLink peer access; {system} has none: use algo='nccl'")
    beta = s.scaleup_achievable_GBps_dir * 1e9
    step = _custom_step_s(tp)
    if algo == "oneshot":
        return step + (tp - 1) * n / beta
    return 2 * step + 2 * (tp - 1) / tp * n / beta


# ------------------------------------------------------------------------------------------------
# decode


@dataclass(frozen=True)
class DecodeStep:
    """One decode step (one token for each of ``batch`` sequences), seconds."""

    model: str
    system: str
    tp: int
    batch: int
    context: int
    algo: str
    memory_s: float
    compute_s: float
    allreduce_s: float
    allreduces: int
    message_bytes: float

    @property
    def comm_s(self) -> float:
        return self.allreduces * self.allreduce_s

    @property
    def total_s(self) -> float:
        """``max(memory, compute) + all-reduces``: in decode the all-reduce sits between dependent kernels."""
        return max(self.memory_s, self.compute_s) + self.comm_s

    @property
    def bound(self) -> str:
        return "memory" if self.memory_s >= self.compute_s else "compute"

    @property
    def tokens_per_s_per_user(self) -> float:
        return 1.0 / self.total_s

    @property
    def tokens_per_s(self) -> float:
        """Output tokens per second of the whole TP group."""
        return self.batch / self.total_s

    @property
    def comm_share(self) -> float:
        return self.comm_s / self.total_s


def decode_step(model: str | ModelSpec, system: str, tp: int, *, batch: int = 1, context: int = 4096,
                algo: str = "nccl", hbm_efficiency: float | None = None,
                compute_efficiency: float | None = None) -> DecodeStep:
    """A decode step of ``model`` with tensor parallelism ``tp`` inside one node of ``system``.

    * memory: weights ``P·2/tp`` plus the KV cache ``batch·context·kv_bytes_per_token/min(tp, kv_heads)``
      (KV heads are split over TP; beyond ``kv_heads`` they are replicated) over HBM x ``hbm_efficiency``;
    * compute: ``2·P·batch/tp`` FLOPs at the dense BF16 peak x ``compute_efficiency``;
    * communication: ``2·layers`` all-reduces of ``batch·hidden·2`` bytes (:func:`allreduce_time`).
    """
    m = get_model(model)
    s = catalog.get_system(system)
    tp = _int("tp", tp)
    batch = _int("batch", batch)
    context = _int("context", context, 0)
    d = data()["decode"]
    he = d["hbm_efficiency"] if hbm_efficiency is None else _pos("hbm_efficiency", hbm_efficiency)
    ce = d["compute_efficiency"] if compute_efficiency is None else _pos("compute_efficiency", compute_efficiency)
    if m.heads % tp:
        raise ValueError(f"tp must divide the number of attention heads ({m.heads}), got {tp}")
    gpu = s.gpu_spec
    weights = m.params * d["bytes_per_param"] / tp
    kv = batch * context * kv_bytes_per_token(m) / min(tp, m.kv_heads)
    memory_s = (weights + kv) / (gpu.memory_TBps * 1e12 * he)
    compute_s = 2 * m.params * batch / tp / (gpu.bf16_TFLOPS * 1e12 * ce)
    msg = batch * m.hidden * 2
    ar = allreduce_time(system, tp, msg, algo)
    return DecodeStep(m.id, system, tp, batch, context, algo, memory_s, compute_s, ar, 2 * m.layers if tp > 1 else 0,
                      msg)


def batch_regimes(model: str | ModelSpec, system: str, tp: int, *, algo: str = "nccl") -> dict[str, float]:
    """Batch sizes at which decode changes regime: the all-reduce message reaches the all-reduce's n½
    (latency = bandwidth part of the cost model, ``"allreduce_bandwidth_bound_batch"``), and the step
    becomes compute-bound (``"compute_bound_batch"`` = FLOP/s x eff · 2 B/param / (2 · HBM x eff), context 0)."""
    m = get_model(model)
    s = catalog.get_system(system)
    d = data()["decode"]
    out: dict[str, float] = {}
    if tp > 1 and algo == "nccl":
        p = costmodel.predict("allreduce", system, tp, m.hidden * 2, algo="nccl")
        n_half = p.latency_s / (p.bandwidth_s / p.bytes)
        out["allreduce_n_half_bytes"] = n_half
        out["allreduce_bandwidth_bound_batch"] = n_half / (m.hidden * 2)
    gpu = s.gpu_spec
    out["compute_bound_batch"] = (gpu.bf16_TFLOPS * 1e12 * d["compute_efficiency"] * d["bytes_per_param"]
                                  / (2 * gpu.memory_TBps * 1e12 * d["hbm_efficiency"]))
    return out


def serving_layouts(model: str | ModelSpec, system: str, gpus: int, *, batch: int = 1, context: int = 4096,
                    algo: str = "nccl") -> dict[str, dict[str, float]]:
    """TP vs PP vs replicas (DP) on ``gpus`` GPUs of one node: per-token latency and throughput.

    * TP=g: one copy, weights split g ways, 2L all-reduces per token;
    * PP=g: stages run one after another for one token: latency = the single-GPU step (the weights are
      still read once in total) + (g-1) stage hand-offs of ``batch·hidden·2`` bytes; with g batches in
      flight the throughput is g times one batch's;
    * DP=g: g independent copies (only if the model fits one GPU): single-GPU latency, g x throughput.
    """
    m = get_model(model)
    g = _int("gpus", gpus)
    s = catalog.get_system(system)
    one = decode_step(m, system, 1, batch=batch, context=context)
    tp = decode_step(m, system, g, batch=batch, context=context, algo=algo)
    hop = costmodel.predict("sendrecv", system, 2, batch * m.hidden * 2).time_s if g > 1 else 0.0
    pp_lat = one.total_s + (g - 1) * hop
    fits = m.params * data()["decode"]["bytes_per_param"] < s.gpu_spec.memory_GB * 1e9
    out = {
        f"TP{g}": {"latency_s": tp.total_s, "tokens_per_s": tp.tokens_per_s, "fits": True},
        f"PP{g}": {"latency_s": pp_lat, "tokens_per_s": g * batch / pp_lat, "fits": True},
        f"DP{g}": {"latency_s": one.total_s, "tokens_per_s": g * one.tokens_per_s, "fits": fits},
    }
    return out


# ------------------------------------------------------------------------------------------------
# prefill, KV-cache transfer and time to first token


def prefill_time(model: str | ModelSpec, system: str, tokens: int, *, gpus: int = 8,
                 compute_efficiency: float | None = None) -> float:
    """Prefill of one ``tokens``-long prompt on ``gpus`` GPUs: ``2·P·s + 2·L·s²·h`` FLOPs (weights, causal
    attention) at the dense BF16 peak x ``compute_efficiency`` (default the decode data's), seconds."""
    m = get_model(model)
    s = catalog.get_system(system)
    n = _int("tokens", tokens)
    g = _int("gpus", gpus)
    ce = data()["decode"]["compute_efficiency"] if compute_efficiency is None else _pos("compute_efficiency",
                                                                                        compute_efficiency)
    flops = 2 * m.params * n + 2 * m.layers * n * n * m.hidden
    return flops / (g * s.gpu_spec.bf16_TFLOPS * 1e12 * ce)


def kv_transfer_time(model: str | ModelSpec, tokens: int, system: str, *, path: str = "rdma", senders: int = 1,
                     nic: str | None = None, nics: int | None = None) -> dict[str, float]:
    """Moving a ``tokens``-long prompt's KV cache from prefill GPUs to decode GPUs, seconds.

    ``path='rdma'``: over NICs (``nic`` link id, default the system's; ``nics`` ports in parallel,
    default one per sender) at line rate x the link's efficiency, plus one network α.
    ``path='nvlink'``: inside one NVLink domain (NVL72): each of ``senders`` GPUs pushes its share over
    its own NVLink bandwidth (catalog achievable), plus one NVLink α. The cache is split evenly over the
    ``senders`` (the prefill's TP ranks each hold a slice of the KV heads).
    """
    m = get_model(model)
    s = catalog.get_system(system)
    n = _int("tokens", tokens)
    k = _int("senders", senders)
    total = n * kv_bytes_per_token(m)
    if path == "rdma":
        link = catalog.get_link(nic) if nic is not None else s.nic
        ports = k if nics is None else _int("nics", nics)
        rate = ports * link.line_GBps_dir * link.efficiency * 1e9
        t = link.alpha_s + total / rate
    elif path == "nvlink":
        if not s.has_nvlink:
            raise ValueError(f"path='nvlink' needs an NVLink system; {system} has none")
        if k > s.gpus_per_domain:
            raise ValueError(f"senders must be <= the NVLink domain of {system} ({s.gpus_per_domain}), got {k}")
        rate = k * s.scaleup_achievable_GBps_dir * 1e9
        t = s.link.alpha_s + total / rate
    else:
        raise ValueError(f"path must be 'rdma' or 'nvlink', got {path!r}")
    return {"bytes": total, "rate_Bps": rate, "time_s": t}


def ttft(prefill_s: float, transfer_s: float, layers: int, *, layerwise: bool = True) -> dict[str, float]:
    """Time to first token on a disaggregated decode node: prefill + the exposed part of the KV transfer.

    Without streaming the whole transfer follows the prefill. Streaming layer by layer (Splitwise's design; LMCache
    and Mooncake have layer-wise modes) sends layer i's KV while layer i+1 computes, so only
    ``max(transfer/L, transfer - prefill·(L-1)/L)`` is exposed.
    """
    p = _pos("prefill_s", prefill_s)
    x = _pos("transfer_s", transfer_s)
    L = _int("layers", layers)
    exposed = max(x / L, x - p * (L - 1) / L) if layerwise else x
    return {"ttft_s": p + exposed, "exposed_s": exposed, "prefill_s": p}
