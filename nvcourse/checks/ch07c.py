"""Checkers for chapter 07c — communication for inference (KV-cache bytes, KV transfer over NICs, a TP decode step,
remote nodes per MoE token with per-node deduplication).

Expected values come from :mod:`nvcourse.inference` and :mod:`nvcourse.fabric.moe` (tested in
``tests/test_inference.py`` and ``tests/test_fabric_moe_routing.py``) on hand-picked and seeded random inputs.
Use in a notebook as ``from nvcourse.checks import ch07c as check``.
"""

from __future__ import annotations

from .. import catalog
from ..fabric.moe import remote_nodes_per_token
from ..i18n import localize_numbers
from ..i18n import translate as _
from ..inference import ServeModel, get_model, kv_bytes_per_token
from ..serving import mla_kv_bytes_per_token
from ..units import format_rate, format_size
from ._core import Case, Result, check_function, rng_for, safe_checker

__all__ = ["kv_bytes", "kv_transfer", "decode_time", "remote_nodes", "mla_kv_bytes", "spec_allreduces"]

#: The DGX H100's NIC as its port speed reads ("400 Gb/s"), from the catalog.
_NIC_RATE = format_rate(catalog.get_system("dgx-h100").nic.line_GBps_dir * 1e9, bits=True)


def _gqa_note() -> str:
    m = get_model("llama3-70b")
    gqa = kv_bytes_per_token(m)
    return _("Grouped-query attention ({kv_heads} KV heads instead of {heads}) is what keeps this at {size} per "
             "token for {model} instead of {full}.").format(
        kv_heads=m.kv_heads, heads=m.heads, size=localize_numbers(format_size(gqa)), model=m.name,
        full=localize_numbers(format_size(gqa * m.heads / m.kv_heads)))


def _kv(layers, kv_heads, head_dim, b) -> float:
    m = ServeModel(id="x", name="x", params=1.0, layers=layers, hidden=kv_heads * head_dim, heads=kv_heads,
                   kv_heads=kv_heads, head_dim=head_dim)
    return kv_bytes_per_token(m, bytes_per_elem=b)


@safe_checker
def kv_bytes(fn) -> Result:
    """``fn(layers, kv_heads, head_dim, bytes_per_elem)`` → KV-cache bytes per token."""
    combos = [(80, 8, 128, 2), (32, 8, 128, 2), (36, 8, 128, 2), (126, 8, 128, 2), (80, 8, 128, 1), (32, 32, 128, 2)]
    rng = rng_for("kv_bytes")
    combos += [(int(rng.integers(12, 128)), int(2 ** rng.integers(0, 6)), int(rng.choice([64, 128, 256])),
                int(rng.choice([1, 2]))) for _ in range(4)]
    cases = [Case(c, _kv(*c), {
        _("Half of it: a layer stores a key AND a value vector per KV head (× 2)."): _kv(*c) / 2,
        _("That is in bits: bytes_per_elem is bytes already."): _kv(*c) * 8,
        _("You left out the layers: every layer keeps its own K and V."): _kv(*c) / c[0],
    }) for c in combos]
    return check_function("kv_bytes", fn, ["layers", "kv_heads", "head_dim", "bytes_per_elem"], cases,
                          what="a number of bytes",
                          hint=_("layers × 2 (K and V) × kv_heads × head_dim × bytes_per_elem."),
                          success=_gqa_note())


def _xfer(tokens, per_token, gbps, eff, nics) -> float:
    return tokens * per_token / (nics * gbps / 8 * 1e9 * eff)


@safe_checker
def kv_transfer(fn) -> Result:
    """``fn(tokens, kv_bytes_per_token, nic_Gbps, efficiency, nics)`` → seconds to move a prompt's KV cache over
    ``nics`` NICs in parallel (bandwidth term only)."""
    combos = [(32768, 327680, 400, 0.94, 1), (32768, 327680, 400, 0.94, 8), (32768, 147456, 200, 0.94, 8),
              (131072, 516096, 400, 0.94, 8), (4096, 131072, 800, 0.94, 1)]
    rng = rng_for("kv_transfer")
    combos += [(int(2 ** rng.integers(10, 18)), int(rng.integers(1, 64)) * 16384, int(rng.choice([100, 200, 400, 800])),
                float(round(rng.uniform(0.7, 0.97), 2)), int(rng.choice([1, 2, 4, 8]))) for _ in range(4)]
    cases = [Case(c, _xfer(*c), {
        _("8× too small: the NIC rate is in gigaBITS per second; divide by 8 for bytes."): _xfer(*c) / 8,
        _("You used the line rate: multiply it by the efficiency (what RDMA reaches)."): _xfer(*c) * c[3],
        _("The NICs work in parallel: divide by their number."): _xfer(*c) * c[4] if c[4] > 1 else None,
    }) for c in combos]
    return check_function("kv_transfer", fn, ["tokens", "kv_bytes_per_token", "nic_Gbps", "efficiency", "nics"],
                          cases, what="a time in seconds",
                          hint=_("bytes = tokens × per-token bytes; rate = nics × Gb/s ÷ 8 × 1e9 × efficiency."),
                          success=_("Over one {nic} NIC a 32k-token Llama 3 70B cache takes about a quarter "
                                    "of a second; spread over the 8 prefill GPUs' NICs, or kept inside an NVL72, it "
                                    "shrinks below the prefill's own time.").format(nic=localize_numbers(_NIC_RATE)))


def _decode(params, tp, hbm_TBps, eff, layers, ar_s) -> float:
    return 2 * params / tp / (hbm_TBps * 1e12 * eff) + (2 * layers * ar_s if tp > 1 else 0.0)


@safe_checker
def decode_time(fn) -> Result:
    """``fn(params, tp, hbm_TBps, hbm_efficiency, layers, allreduce_s)`` → seconds per decode step at batch 1
    (BF16 weights read once, 2 all-reduces per layer when tp > 1)."""
    combos = [(70e9, 8, 3.35, 0.8, 80, 6.2e-6), (70e9, 4, 3.35, 0.8, 80, 4.9e-6), (8e9, 8, 3.35, 0.8, 32, 25e-6),
              (8e9, 1, 3.35, 0.8, 32, 25e-6), (405e9, 8, 4.8, 0.8, 126, 8e-6)]
    rng = rng_for("decode_time")
    combos += [(float(round(10 ** rng.uniform(9.5, 11.6), -8)), int(rng.choice([2, 4, 8])),
                float(rng.choice([2.0, 3.35, 4.8, 8.0])), float(round(rng.uniform(0.6, 0.9), 2)),
                int(rng.integers(24, 128)), float(round(rng.uniform(3e-6, 4e-5), 8))) for _ in range(4)]
    cases = [Case(c, _decode(*c), {
        _("One all-reduce per layer is too few: attention and the MLP each end with one (2 per layer)."):
            _decode(*c) - c[4] * c[5] if c[1] > 1 else None,
        _("Four per layer is training (forward + backward); decode is forward only: 2 per layer."):
            _decode(*c) + 2 * c[4] * c[5] if c[1] > 1 else None,
        _("BF16 weights are 2 bytes per parameter."): _decode(*c) - params_term(c) / 2,
        _("Each GPU reads only its 1/tp of the weights."): _decode(*c) + params_term(c) * (c[1] - 1),
    }) for c in combos]
    return check_function("decode_time", fn, ["params", "tp", "hbm_TBps", "hbm_efficiency", "layers", "allreduce_s"],
                          cases, what="a time in seconds",
                          hint=_("2·P/tp bytes ÷ (HBM × efficiency) + 2 × layers × allreduce_s (only if tp > 1)."),
                          success=_("The weight read halves with each doubling of tp; the all-reduce count does not. "
                                  "Where the two cross, more TP stops helping."))


def params_term(c) -> float:
    """The weight-read part of a decode case (seconds)."""
    return 2 * c[0] / c[1] / (c[2] * 1e12 * c[3])


@safe_checker
def remote_nodes(fn) -> Result:
    """``fn(experts, top_k, nodes)`` → expected number of other nodes one token's top-k experts sit on (experts spread
    evenly, chosen uniformly without replacement, no node limit)."""
    combos = [(256, 8, 8), (256, 8, 2), (64, 2, 8), (256, 8, 1), (128, 4, 16), (160, 6, 4)]
    rng = rng_for("remote_nodes")
    for _i in range(4):
        n = int(2 ** rng.integers(1, 5))
        combos.append((n * int(rng.integers(2, 17)), int(rng.integers(1, 9)), n))
    cases = []
    for e, k, n in combos:
        exp = remote_nodes_per_token(e, k, n, 1)
        cases.append(Case((e, k, n), exp, {
            _("That counts remote *copies* (k·(n−1)/n), not remote nodes: with dedup a node gets a token once however "
            "many of its experts are chosen."): k * (n - 1) / n if k > 1 and n > 1 else None,
            _("That counts the token's own node too: only the other n − 1 nodes need the network."):
                exp * n / (n - 1) if n > 1 else None,
            _("That is sampling with replacement, (n−1)(1 − (1 − 1/n)^k): the k experts are distinct, so use "
            "C(E − E/n, k)/C(E, k) for the chance that a node gets none."): (n - 1) * (1 - (1 - 1 / n) ** k),
        }))
    return check_function("remote_nodes", fn, ["experts", "top_k", "nodes"], cases, what="a number of nodes",
                          rtol=1e-6, atol=1e-12,
                          hint=_("Each other node is missed when all k experts fall elsewhere: C(E − E/n, k)/C(E, k). "
                               "Expected remote nodes = (n − 1) × (1 − that)."),
                          success=_("For DeepSeek-V3's EP 64 on 8-GPU nodes that is 4.6 network copies per token "
                                    "instead of 7; the 4-node routing limit brings it to 3.2."))


@safe_checker
def mla_kv_bytes(fn) -> Result:
    """``fn(layers, kv_lora_rank, rope_dim, bytes_per_elem)`` → MLA's KV-cache bytes per token."""
    combos = [(61, 512, 64, 2), (61, 512, 64, 1), (27, 512, 64, 2), (60, 512, 64, 2), (32, 256, 32, 2)]
    rng = rng_for("mla_kv_bytes")
    combos += [(int(rng.integers(12, 96)), int(rng.choice([256, 512, 1024])), int(rng.choice([32, 64, 128])),
                int(rng.choice([1, 2]))) for _ in range(4)]

    def want(c) -> float:
        return c[0] * (c[1] + c[2]) * c[3]

    cases = [Case(c, want(c), {
        _("You stored a key AND a value: MLA caches one latent (shared by K and V) plus one rotary key, no ×2."):
            2 * want(c),
        _("You left out the rotary key: each token also caches qk_rope_head_dim elements per layer."):
            c[0] * c[1] * c[3],
        _("You multiplied by the number of heads: the latent is shared by all heads, that is the point of MLA."): None,
    }) for c in combos]
    ds = mla_kv_bytes_per_token()
    return check_function("mla_kv_bytes", fn, ["layers", "kv_lora_rank", "rope_dim", "bytes_per_elem"], cases,
                          what="a number of bytes", hint=_("layers × (kv_lora_rank + rope_dim) × bytes_per_elem."),
                          success=_("DeepSeek-V3 keeps {size} per token in BF16: about a fifth of Llama 3 "
                                    "70B's GQA cache for a model ten times larger. Under TP the latent is not split, "
                                    "so every rank holds all of it: that is why engines run attention "
                                    "data-parallel.").format(size=localize_numbers(format_size(ds))))


@safe_checker
def spec_allreduces(fn) -> Result:
    """``fn(layers, k, acceptance)`` → TP all-reduces per generated token with ``k`` drafted tokens per step."""
    combos = [(80, 3, 0.7), (80, 0, 0.7), (32, 4, 0.8), (126, 2, 0.5), (80, 5, 0.0)]
    rng = rng_for("spec_allreduces")
    combos += [(int(rng.integers(16, 128)), int(rng.integers(1, 8)), float(round(rng.uniform(0.3, 0.9), 2)))
               for _ in range(4)]

    def tokens(c) -> float:
        return (1 - c[2] ** (c[1] + 1)) / (1 - c[2])

    cases = [Case(c, 2 * c[0] / tokens(c), {
        _("You divided by k + 1, as if every drafted token were accepted; on average a step yields "
        "(1 − a^(k+1)) / (1 − a)."): 2 * c[0] / (c[1] + 1),
        _("One all-reduce per layer is too few: attention and the MLP each end with one (2 × layers per step)."):
            c[0] / tokens(c),
        _("That is per step, not per generated token: divide by the tokens a step yields."): 2 * c[0] if c[1] else None,
    }) for c in combos]
    return check_function("spec_allreduces", fn, ["layers", "k", "acceptance"], cases, what="a number of all-reduces",
                          rtol=1e-6, hint=_("2 × layers per step ÷ ((1 − a^(k+1)) / (1 − a)) tokens per step."),
                          success=_("Each verification step's all-reduces carry k + 1 tokens, still far below n½, so "
                                  "they cost about what one token's do: drafting cuts the all-reduce time per output "
                                  "token by the tokens a step yields."))
