"""Checkers for chapter 05 — NVL72 and rack-scale NVLink domains (MoE all-to-all bytes and time, 8-GPU domain +
NICs vs a 72-GPU domain, in-switch reduction vs ring all-reduce).

Expected values come from :mod:`nvcourse.fabric.moe` (tested in ``tests/test_fabric_moe.py``) on catalog systems:
``alltoall_bytes_per_gpu``, ``moe_alltoall_time`` (NVLink and network bytes, time) and ``domain_allreduce_time``
(ring, and in-switch reduction as the course's cost model :mod:`nvcourse.costmodel` charges NCCL's NVLS: one NVLS
latency + (g+1)/g·n/(β·η), with the latency and η from :mod:`nvcourse.costmodel.factors`), and from the same
formulas written out by hand for random inputs.
"""

from __future__ import annotations

from .. import catalog
from ..costmodel import factors
from ..fabric.moe import MoEConfig, alltoall_bytes_per_gpu, domain_allreduce_time, moe_alltoall_time
from ..i18n import number
from ..i18n import translate as _
from ._answers import Question, answer, register
from ._core import Case, Result, check_function, rng_for, safe_checker

__all__ = ["answer", "moe_dispatch_bytes", "moe_network_bytes", "alltoall_time", "domain_allreduce"]

_DEEPSEEK = dict(hidden=7168, tokens=4096, top_k=8, bytes_per_elem=2)  # the chapter's DeepSeek-V3-like layer


def _cfg(tokens: int, hidden: int, top_k: int, bytes_per_elem: float, ep: int) -> MoEConfig:
    # the number of experts does not change the bytes; it only has to allow ep and top_k
    return MoEConfig(
        hidden=hidden, tokens=tokens, experts=max(256, ep, top_k), top_k=top_k, bytes_per_elem=bytes_per_elem
    )


# ------------------------------------------------------------------------------------------------
# bytes of one dispatch


def _dispatch_variants(t, h, k, b, ep) -> dict[str, float | None]:
    routed = t * k * h * b
    v = routed * (ep - 1) / ep
    return {
        _("The copies for experts on your own GPU never leave it: multiply by (G−1)/G."): routed if ep > 1 else None,
        _("Each token goes to top_k experts: multiply by k."): v / k if k > 1 else None,
        _("That counts dispatch and combine (2 all-to-alls); the question is one all-to-all."): 2 * v,
        _("That is the whole layer, forward and backward (4 all-to-alls); the question is one all-to-all."): 4 * v,
        _("That is a count of elements: multiply by the bytes per element (2 for BF16, 1 for FP8)."):
            v / b if b != 1 else None,
        _("That is bits: bytes × 8 is bits; return bytes."): 8 * v,
        _("(G−1)/G is the share that leaves the GPU; (G−8)/G would be what leaves an 8-GPU node. Here: all that "
        "leaves the GPU."): routed * (ep - 8) / ep if ep > 8 else None,
    }


@safe_checker
def moe_dispatch_bytes(fn) -> Result:
    """``fn(tokens, hidden, top_k, bytes_per_elem, ep)`` → bytes one GPU sends to other GPUs in one dispatch."""
    combos = [(4096, 7168, 8, 2, 64), (2048, 4096, 2, 2, 32), (4096, 7168, 8, 1, 72), (1024, 8192, 1, 2, 8),
              (512, 2048, 4, 2, 1), (8192, 5120, 6, 2, 16)]
    rng = rng_for("moe_dispatch_bytes")
    for _i in range(4):
        combos.append((int(2 ** rng.integers(8, 15)), int(rng.choice([2048, 4096, 5120, 7168, 8192, 12288])),
                       int(rng.choice([2, 4, 6, 8])), int(rng.choice([1, 2])), int(rng.integers(2, 129))))
    cases = [Case(c, alltoall_bytes_per_gpu(_cfg(*c), c[4]), _dispatch_variants(*c)) for c in combos]
    return check_function("moe_dispatch_bytes", fn, ["tokens", "hidden", "top_k", "bytes_per_elem", "ep"], cases,
                          what="a number of bytes", rtol=1e-9, atol=1e-9,
                          hint=_("V = T · k · h · b · (G−1)/G: every token's vector goes to k experts; with uniform "
                               "routing (G−1)/G of the copies live on another GPU."),
                          success=_("The bytes do not shrink with more GPUs: a wider EP group only sends more of them "
                                  "to other GPUs."))


# ------------------------------------------------------------------------------------------------
# how much crosses the network


def _net(t, h, k, b, ep, d):
    return t * k * h * b * (ep - min(ep, d)) / ep


def _network_variants(t, h, k, b, ep, d) -> dict[str, float | None]:
    """Known mistakes; when G ≤ domain several of them coincide (everything is NVLink), so they are named only
    for G > domain."""
    routed = t * k * h * b
    return {
        _("Inside the domain nothing crosses the network: when G ≤ domain the answer is 0 — use min(G, domain)."):
            routed * (ep - d) / ep if ep < d else None,
        _("That is all that leaves the GPU ((G−1)/G); only the copies for GPUs outside the NVLink domain cross the "
        "NIC: (G − domain)/G."): routed * (ep - 1) / ep if ep > d else None,
        _("That is the NVLink part (peers inside the domain, (domain − 1)/G); the question asks for the network part."):
            routed * (d - 1) / ep if ep > d and d > 1 else None,
        _("Divide by G, the EP group: each of the G GPUs is an equally likely destination, (G − domain)/G."):
            routed * (ep - d) / (ep - 1) if ep > d else None,
    }


@safe_checker
def moe_network_bytes(fn) -> Result:
    """``fn(tokens, hidden, top_k, bytes_per_elem, ep, domain)`` → bytes of one dispatch per GPU that leave the
    NVLink domain (through the NIC), the EP group packed into domains of ``domain`` GPUs."""
    cases = []
    for sid in ("dgx-b200", "gb200-nvl72"):
        d = catalog.get_system(sid).gpus_per_domain
        for t, h, k, b, ep in ((4096, 7168, 8, 2, 64), (2048, 4096, 2, 2, 32), (4096, 7168, 8, 1, 8),
                               (1024, 8192, 4, 2, 72)):
            cfg = _cfg(t, h, k, b, ep)
            args = (t, h, k, b, ep, d)
            cases.append(Case(args, moe_alltoall_time(cfg, ep, sid).network_bytes, _network_variants(*args), sid))
    rng = rng_for("moe_network_bytes")
    for _i in range(4):
        args = (int(2 ** rng.integers(8, 15)), int(rng.choice([2048, 4096, 7168])), int(rng.choice([2, 4, 8])), 2,
                int(rng.integers(2, 257)), int(rng.choice([4, 8, 16, 36, 72])))
        cases.append(Case(args, _net(*args), _network_variants(*args), "random"))
    return check_function("moe_network_bytes", fn, ["tokens", "hidden", "top_k", "bytes_per_elem", "ep", "domain"],
                          cases, what="a number of bytes", rtol=1e-9, atol=1e-6,
                          hint=_("Of the G equally likely destinations, min(G, domain) − 1 are NVLink peers and "
                               "G − min(G, domain) are outside the domain: T·k·h·b·(G − min(G, domain))/G."),
                          success=_("With 8-GPU domains and EP = 64, 7/8 of the copies go through the NIC; an NVL72 "
                                  "keeps an EP group of up to 72 entirely on NVLink."))


# ------------------------------------------------------------------------------------------------
# the time of one all-to-all


def _a2a(v_nvl, v_net, alpha, b_nvl, b_nic):
    return alpha + max(v_nvl / b_nvl, v_net / b_nic)


def _a2a_variants(v_nvl, v_net, alpha, b_nvl, b_nic) -> dict[str, float | None]:
    return {
        _("NVLink and the NIC carry their bytes at the same time: take the max of the two transfer times, not the "
        "sum."): alpha + v_nvl / b_nvl + v_net / b_nic if v_nvl > 0 and v_net > 0 else None,
        _("The latency α is missing: t = α + max(...)."): max(v_nvl / b_nvl, v_net / b_nic),
        _("All the bytes at the NVLink rate: the network bytes go through the NIC at its own, much lower rate."):
            alpha + (v_nvl + v_net) / b_nvl if v_net > 0 else None,
        _("All the bytes at the NIC rate: the NVLink bytes never touch the NIC."):
            alpha + (v_nvl + v_net) / b_nic if v_nvl > 0 else None,
        _("One α per all-to-all (the sends to all peers are grouped), not one per path."):
            2 * alpha + max(v_nvl / b_nvl, v_net / b_nic),
    }


@safe_checker
def alltoall_time(fn) -> Result:
    """``fn(nvlink_bytes, network_bytes, alpha_s, nvlink_Bps, nic_Bps)`` → seconds of one all-to-all."""
    cases = []
    for sid in ("dgx-b200", "gb200-nvl72", "dgx-h100"):
        s = catalog.get_system(sid)
        b_nvl = s.scaleup_achievable_GBps_dir * 1e9
        b_nic = s.scaleout_GBps_dir_per_gpu * s.nic.efficiency * 1e9
        for ep in (8, 16, 64):
            one = moe_alltoall_time(_cfg(ep=ep, **_DEEPSEEK), ep, sid)
            args = (one.nvlink_bytes, one.network_bytes, one.alpha_s, b_nvl, b_nic)
            cases.append(Case(args, one.time_s, _a2a_variants(*args), f"{sid}, EP {ep}"))
    rng = rng_for("alltoall_time")
    for _i in range(4):
        args = (float(10 ** rng.uniform(6, 9)), float(10 ** rng.uniform(6, 9)), float(10 ** rng.uniform(-6, -4.5)),
                float(10 ** rng.uniform(11, 12)), float(10 ** rng.uniform(10, 11)))
        cases.append(Case(args, _a2a(*args), _a2a_variants(*args), "random"))
    return check_function(
        "alltoall_time",
        fn,
        ["nvlink_bytes", "network_bytes", "alpha_s", "nvlink_Bps", "nic_Bps"],
        cases,
        what="a time in seconds",
        hint=_("Both paths send at once: t = α + max(NVLink bytes / NVLink rate, network bytes / NIC rate)."),
        success=_("Beyond the domain the NIC sets the pace: the NVLink part finishes long before."),
    )


# ------------------------------------------------------------------------------------------------
# in-switch reduction (NVLS) vs the ring


def _ar(nbytes, g, alpha, beta, in_switch, nvls_lat, eff):
    if g == 1:
        return 0.0
    if in_switch:
        return nvls_lat + (g + 1) / g * nbytes / (beta * eff)
    return 2 * (g - 1) * alpha + 2 * (g - 1) / g * nbytes / beta


def _ar_variants(nbytes, g, alpha, beta, in_switch, nvls_lat, eff) -> dict[str, float | None]:
    if g == 1:
        return {}
    nv = (g + 1) / g * nbytes / (beta * eff)  # the right NVLS bandwidth term
    ring_bw = 2 * (g - 1) / g * nbytes / beta
    if in_switch:
        return {
            _("That is the ideal in-switch model α + n/β. NCCL's NVLS moves (g+1)/g·n per GPU (load-reduce your 1/g "
            "slice, multicast-store the result) at β·η, after one NVLS latency: L + (g+1)/g·n/(β·η)."):
                alpha + nbytes / beta,
            _("The NVLS efficiency η is missing: the in-switch path reaches only η of the link rate — divide by β·η."):
                nvls_lat + (g + 1) / g * nbytes / beta,
            _("Divide by η, do not multiply: a path at η of the link rate takes longer, n/(β·η)."):
                nvls_lat + (g + 1) / g * nbytes * eff / beta,
            _("The bytes are (g+1)/g·n per GPU, not n: each GPU serves n to the g load-reduces and also sends its "
            "reduced 1/g slice to be multicast — (g+1)/g·n each way."):
                nvls_lat + nbytes / (beta * eff),
            _("Send and receive run at once in opposite directions: (g+1)/g·n/(β·η), not twice that."):
                nvls_lat + 2 * nv,
            _("That is the ring's byte count 2(g−1)/g·n; with the switch adding, each GPU moves only (g+1)/g·n."):
                nvls_lat + 2 * (g - 1) / g * nbytes / (beta * eff),
            _("In-switch reduction is one step with the NVLS latency L, not 2(g−1) ring steps of α."):
                2 * (g - 1) * alpha + nv,
            _("In-switch reduction is one step with the NVLS latency, not 2(g−1) of them."):
                2 * (g - 1) * nvls_lat + nv,
            _("The latency of an NVLS all-reduce is NCCL's NVLS latency L (nvls_latency_s), not one NVLink step α."):
                alpha + nv,
            _("That is the ring's time; with in_switch=True it is NVLS: L + (g+1)/g·n/(β·η)."):
                2 * (g - 1) * alpha + ring_bw,
        }
    return {
        _("A ring all-reduce is a reduce-scatter and an all-gather: 2(g−1) steps and 2(g−1)/g·n bytes, not g−1."):
            (g - 1) * alpha + (g - 1) / g * nbytes / beta,
        _("Each ring step sends a chunk of n/g, not the whole buffer: 2(g−1)/g·n/β."):
            2 * (g - 1) * alpha + 2 * (g - 1) * nbytes / beta,
        _("That is the in-switch (NVLS) time; with in_switch=False it is the ring: 2(g−1)α + 2(g−1)/g·n/β."):
            nvls_lat + nv,
        _("The latency term is 2(g−1)α: one α per ring step."): ring_bw + alpha,
        _("The NVLS efficiency η belongs to the in-switch path only; the ring runs at β."):
            2 * (g - 1) * alpha + ring_bw / eff,
    }


# (system, GPUs, bytes, in-switch cases too?): NVLS only from the catalog's nvls_min_gpus (the course's estimate)
_AR_CASES = (("gb200-nvl72", 72, 2**30), ("gb200-nvl72", 8, 64 * 2**20), ("gb200-nvl72", 16, 64 * 2**20),
             ("dgx-b200", 8, 2**28), ("dgx-h100", 8, 2**26), ("gb200-nvl72", 6, 2**20), ("dgx-h100", 5, 2**20),
             ("hgx-h200", 8, 256 * 2**10), ("gb200-nvl72", 2, 2**20))


def _bytes_ratio(g: int) -> float:
    """Per-GPU bytes of a ring all-reduce over those of NVLS: 2(g−1)/g ÷ (g+1)/g."""
    return 2 * (g - 1) / (g + 1)


def _nvls_factors(system: str) -> tuple[float, float]:
    """(NVLS latency in seconds, NVLS efficiency η) of ``system`` from :mod:`nvcourse.costmodel.factors`."""
    s = catalog.get_system(system)
    return factors.NVLS_LATENCY_US * 1e-6, factors.NVLS_EFFICIENCY[factors.LINK_ARCH[s.scale_up_link]]


@safe_checker
def domain_allreduce(fn) -> Result:
    """``fn(nbytes, g, alpha_s, beta_Bps, in_switch, nvls_latency_s, nvls_eff)`` → seconds of an all-reduce inside
    one NVLink domain: the ring, or in-switch reduction (NVLS) as the course's cost model (NCCL's) charges it."""
    cases = []
    for sid, g, n in _AR_CASES:
        s = catalog.get_system(sid)
        alpha, beta = s.link.alpha_s, s.scaleup_achievable_GBps_dir * 1e9
        lat, eff = _nvls_factors(sid)
        nvls_ok = s.in_switch_reduction and s.nvls_min_gpus is not None and g >= s.nvls_min_gpus
        for in_switch in (False, True) if nvls_ok else (False,):
            args = (n, g, alpha, beta, in_switch, lat, eff)
            exp = domain_allreduce_time(sid, n, g, in_switch=in_switch)
            cases.append(Case(args, exp, _ar_variants(*args), sid))
    rng = rng_for("domain_allreduce")
    for i in range(4):
        args = (int(2 ** rng.integers(16, 33)), int(rng.integers(6, 73)), float(10 ** rng.uniform(-6, -5)),
                float(10 ** rng.uniform(11, 12)), bool(i % 2), float(rng.uniform(10e-6, 40e-6)),
                float(rng.uniform(0.6, 0.95)))
        cases.append(Case(args, _ar(*args), _ar_variants(*args), "random"))
    return check_function("domain_allreduce", fn,
                          ["nbytes", "g", "alpha_s", "beta_Bps", "in_switch", "nvls_latency_s", "nvls_eff"], cases,
                          what="a time in seconds",
                          hint=_("Ring: 2(g−1)α + 2(g−1)/g·n/β. In-switch (NVLS): L + (g+1)/g·n/(β·η) — one step of "
                               "latency L, (g+1)/g·n per GPU at η of the link rate."),
                          success=_("Per-GPU bytes drop from 2(g−1)/g·n to (g+1)/g·n ({r8}× fewer at g = 8, {r72}× "
                                    "at g = 72), but NVLS runs at η of the link rate, so the large-buffer gain is "
                                    "2(g−1)η/(g+1); for small buffers one NVLS latency replaces 2(g−1) ring steps."
                                    ).format(r8=number(_bytes_ratio(8), ".2f"), r72=number(_bytes_ratio(72), ".2f")))


# ------------------------------------------------------------------------------------------------
# questions


def _speedup() -> float:
    cfg = _cfg(ep=64, **_DEEPSEEK)
    return moe_alltoall_time(cfg, 64, "dgx-b200").time_s / moe_alltoall_time(cfg, 64, "gb200-nvl72").time_s


def _speedup_variants() -> dict[str, float]:
    b = catalog.get_system("dgx-b200")
    cfg = _cfg(ep=64, **_DEEPSEEK)
    slow, fast = moe_alltoall_time(cfg, 64, "dgx-b200"), moe_alltoall_time(cfg, 64, "gb200-nvl72")
    summed = slow.alpha_s + slow.nvlink_s + slow.network_s
    return {
        _("That is the ratio of the link rates (NVLink / NIC): only 56 of the 64 destinations are behind the NIC on "
        "8-GPU nodes, and the NIC runs at its efficiency."): b.scaleup_GBps_dir / b.scaleout_GBps_dir_per_gpu,
        _("You added the NVLink and the network times of the 8-GPU system: they run at the same time (max)."):
            summed / fast.time_s,
        _("Inverted: the NVL72 is the faster one; divide the 8-GPU system's time by the NVL72's."): 1 / _speedup(),
    }


register(Question(
    "05.moe_speedup",
    _("DeepSeek-V3-like layer (4,096 tokens/GPU, hidden 7168, top-8, BF16), EP = 64: how many times faster is one "
    "dispatch all-to-all inside a GB200 NVL72 than over 8 DGX B200 nodes?"),
    _speedup, unit="×", rtol=0.02, variants=_speedup_variants,
    hint=_("Time on each system = α + max(NVLink bytes / NVLink rate, network bytes / NIC rate); divide the DGX B200 "
         "time by the NVL72 time."),
    explain=_("Same GPU, same NVLink 5 links per GPU: the whole difference is the size of the NVLink domain."),
))


def _bottleneck_answer() -> str:
    one = moe_alltoall_time(_cfg(ep=64, **_DEEPSEEK), 64, "dgx-b200")
    return "b" if one.bottleneck == "network" else "a"


register(Question(
    "05.ep64_bottleneck",
    _("EP = 64 on DGX B200 nodes (8-GPU NVLink domains, one NIC per GPU): what sets the time of a large all-to-all?"),
    _bottleneck_answer,
    choices={"a": _("the NVLink bandwidth inside each node"),
             "b": _("the NICs: 56 of the 64 destinations are in other nodes, reached at the NIC's rate"),
             "c": _("the latency α of the network"),
             "d": _("the number of experts per GPU")},
    wrong_choice={
        "a": _("Only 7 of the 64 destinations are NVLink peers, and NVLink is many times faster than the NIC: "
             "that part finishes first."),
        "c": _("One α per all-to-all (sends are grouped); for hundreds of MiB the bandwidth term dominates."),
        "d": _("With uniform routing the bytes depend on tokens, k, h and b and on the share of remote GPUs, not on "
             "how the experts are split."),
    },
    explain=_("Once the EP group leaves the NVLink domain, (G − 8)/G of the bytes go through the NIC; an NVL72 keeps "
            "G ≤ 72 on NVLink."),
))
