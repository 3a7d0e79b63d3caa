"""Serving as engines run it today: MLA's compressed KV, FP8 weights on one node, attention-DP with wide-EP, paged KV
transfers bound by descriptors, KV resharding when prefill TP ≠ decode TP, CUDA graphs, speculative decoding.

Each function is a small piece of arithmetic with its source in ``data/inference.toml`` (chapter 07c §9). Bytes are
bytes, times seconds, rates bytes per second unless a name says otherwise (``_GB`` = 10^9 bytes).
"""

from __future__ import annotations

import math
from functools import partial

from . import _data, catalog, inference
from ._validate import choice, number
from ._validate import integer as _int

#: a positive finite number (the course-wide message: "<name> must be > 0; got ...")
_pos = partial(number, positive=True)

__all__ = ["mla_kv_bytes_per_token", "node_fit", "attention_dp_kv_tokens", "paged_kv_transfer", "kv_reshard",
           "speculative_allreduces_per_token", "host_enqueue_per_token_s"]




def _mla(model: str) -> dict:
    table = inference.data()["mla"]
    choice("model", model, table, note="(MLA models of data/inference.toml)")
    return table[model]


def mla_kv_bytes_per_token(model: str = "deepseek-v3", *, bytes_per_elem: float = 2) -> float:
    """MLA caches one compressed latent (``kv_lora_rank``) and one rotary key (``qk_rope_head_dim``) per token and
    layer, shared by all heads: ``layers × (kv_lora_rank + rope_dim) × bytes``.

    Hand check (DeepSeek-V3, BF16): 61 × (512 + 64) × 2 = 70,272 B (68.6 KiB); FP8 halves it.
    """
    m = _mla(model)
    return m["layers"] * (m["kv_lora_rank"] + m["qk_rope_head_dim"]) * _pos("bytes_per_elem", bytes_per_elem)


def node_fit(system: str, *, model: str = "deepseek-v3", bytes_per_param: float = 1, gpus: int | None = None,
             kv_bytes_per_elem: float = 1) -> dict[str, float]:
    """Does ``model`` fit one node of ``system``, and how many tokens of MLA KV cache are left beside it?

    ``weights = params × bytes_per_param`` against ``gpus × HBM`` (default: the node's GPUs); the rest, if any,
    holds ``free / mla_kv_bytes_per_token`` tokens when TP replicates the latent on every GPU (each GPU holds the
    whole cache) or ``gpus`` times that with data-parallel attention (:func:`attention_dp_kv_tokens`).
    """
    s = catalog.get_system(system)
    g = s.gpus_per_host if gpus is None else _int("gpus", gpus)
    params = inference.data()["moe"][model]["params"]
    weights = params * _pos("bytes_per_param", bytes_per_param)
    hbm = g * s.gpu_spec.memory_GB * 1e9
    free = max(0.0, hbm - weights)
    per_token = mla_kv_bytes_per_token(model, bytes_per_elem=kv_bytes_per_elem)
    return {"weights_GB": weights / 1e9, "hbm_GB": hbm / 1e9, "fits": weights < hbm, "free_GB": free / 1e9,
            "kv_tokens_tp": free / g / per_token, "kv_tokens_dp_attention": free / per_token}


def attention_dp_kv_tokens(free_bytes_per_gpu: float, gpus: int, kv_bytes_per_token: float) -> dict[str, float]:
    """KV tokens a group of ``gpus`` can hold for an MLA model. Under TP every GPU keeps the whole latent cache (MLA
    has one latent shared by all heads, so it cannot be split by head); with data-parallel attention each GPU keeps
    only its own requests' cache, so the group holds ``gpus`` times more."""
    per_gpu = _pos("free_bytes_per_gpu", free_bytes_per_gpu) / _pos("kv_bytes_per_token", kv_bytes_per_token)
    return {"tp": per_gpu, "dp_attention": per_gpu * _int("gpus", gpus)}


def paged_kv_transfer(total_bytes: float, descriptor_bytes: float, *, nic_Gbps: float = 400,
                      efficiency: float = 0.94) -> dict[str, float]:
    """A KV transfer posted as one RDMA descriptor per (layer, page): ``max(bytes / link rate, descriptors × cost)``.

    The per-descriptor cost comes from the published case (data/inference.toml ``[paged_kv]``): 16 KiB descriptors
    moved at 9 GB/s per rank on a 400 Gb/s NIC, i.e. 16384 / 9e9 = 1.82 µs each. Larger descriptors (whole pages,
    all layers of a block) leave the link as the bound.
    """
    case = next(iter(inference.data()["paged_kv"].values()))
    per_desc_s = case["descriptor_bytes"] / (case["rate_GBps"] * 1e9)
    total = _pos("total_bytes", total_bytes)
    d = _pos("descriptor_bytes", descriptor_bytes)
    n = math.ceil(total / d)
    link_s = total / (_pos("nic_Gbps", nic_Gbps) / 8 * 1e9 * _pos("efficiency", efficiency))
    desc_s = n * per_desc_s
    return {"descriptors": n, "link_s": link_s, "descriptor_s": desc_s, "time_s": max(link_s, desc_s),
            "bound": "descriptors" if desc_s > link_s else "link", "per_descriptor_s": per_desc_s}


def kv_reshard(kv_heads: int, prefill_tp: int, decode_tp: int) -> dict[str, float]:
    """Moving a KV cache from a prefill group with TP ``prefill_tp`` to a decode group with TP ``decode_tp``.

    Each rank holds ``kv_heads / tp`` heads (at least one: beyond ``kv_heads`` ranks replicate). With ``p ≠ d`` a
    page of one rank's heads on one side is spread over, or gathered from, several ranks on the other: every message
    carries ``min`` of the two heads-per-rank, so messages are ``split = max / min`` times smaller and that many times
    more numerous. Hand check (8 KV heads, prefill TP 2, decode TP 8): 4 vs 1 heads per rank, split 4.
    """
    h = _int("kv_heads", kv_heads)
    p = _int("prefill_tp", prefill_tp)
    d = _int("decode_tp", decode_tp)
    hp, hd = max(1, h // p), max(1, h // d)
    per_msg = min(hp, hd)
    split = max(hp, hd) / per_msg
    return {"heads_per_prefill_rank": hp, "heads_per_decode_rank": hd, "heads_per_message": per_msg,
            "split": split, "pairs": max(min(p, h), min(d, h))}


def speculative_allreduces_per_token(layers: int, k: int, acceptance: float) -> dict[str, float]:
    """TP all-reduces per generated token with speculative decoding: one verification step checks ``k`` drafted
    tokens (message ``k + 1`` tokens wide) and yields ``(1 - a^(k+1)) / (1 - a)`` tokens on average (Leviathan et
    al.). Without it: ``2 × layers`` all-reduces of one token's width per token."""
    L = _int("layers", layers)
    k = _int("k", k, 0)
    a = float(acceptance)
    if not 0 <= a < 1:
        raise ValueError(f"acceptance must be in [0, 1), got {acceptance!r}")
    tokens = (1 - a ** (k + 1)) / (1 - a)
    return {"tokens_per_step": tokens, "allreduces_per_token": 2 * L / tokens, "message_tokens": k + 1}


def host_enqueue_per_token_s(layers: int, *, graphs: bool) -> float:
    """Host time to enqueue a decode step's ``2 × layers`` NCCL all-reduces, one process per GPU: NCCL's per-call
    enqueue cost (data/launch.toml) each, or none when the step is replayed from a CUDA graph."""
    per_call = _data.load("launch")["host_enqueue"]["per_gpu_us"] * 1e-6
    return 0.0 if graphs else 2 * _int("layers", layers) * per_call
