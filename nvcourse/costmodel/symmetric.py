"""NCCL's symmetric-memory kernels (2.27+): what a collective on registered buffers costs on one NVLink domain.

When every GPU registers its send and receive buffers together as a *symmetric window* (``ncclCommWindowRegister``;
nccl-tests ``-R 2``), NCCL runs all-reduce, all-gather and reduce-scatter with kernels that read and write the
other GPUs' buffers directly over NVLink (no staging copies through NCCL's own buffers, few synchronisations):

* **one-shot** (``AGxLL_R``): every GPU reads every other GPU's buffer with the LL protocol and adds; lowest
  latency, n times the bytes;
* **two-shot** (``RSxLD_AGxST``): a reduce-scatter by loads, then an all-gather by stores;
* **multicast** variants (``...MC``) that use the NVSwitch's multimem loads and stores (NVLS).

NCCL picks among them with a cost model of its own (``data/nccl_tuning.toml`` ``[symmetric]``, from
``src/sym_kernels.cc``); the course uses that model as it is: the time of the kernel NCCL would pick. Scope: one
NVLink domain of a system whose GPUs all reach each other over NVLink through switches (NCCL's
``isAllDirectNvlink``), Hopper or Blackwell, float sums, NCCL 2.27 or later. Across nodes NCCL 2.29+ has network
("GIN") variants, which the course does not model.

>>> from nvcourse.costmodel.config import configure
>>> k = pick("allreduce", 8, configure("dgx-h100", 8))
>>> k.name, k.base_us, round(k.time_us, 1)      # one-shot LL through the switch: 4.5 us + 8 x 8 B x 9 bytes
('AllReduce_AGxLLMC_R', 4.5, 4.8)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..i18n import translate as _
from . import tuning
from .config import Config

__all__ = ["Kernel", "why_not", "kernels", "line_rate_floor_s", "pick"]


@dataclass(frozen=True)
class Kernel:
    """One symmetric kernel at one size: its NCCL name, estimated time (µs), blocks, and whether it is LL."""

    name: str
    time_us: float
    blocks: int
    ll: bool
    #: NCCL's baseLat of the kernel, µs (the rest of ``time_us`` grows with the bytes)
    base_us: float = 0.0


def _t() -> dict[str, Any]:
    return tuning.raw()["symmetric"]


def _softmin(x: float, ceiling: float, softness: float) -> float:
    """A smooth min(x, ceiling) (sym_kernels.cc line 151)."""
    return ceiling - softness * math.log1p((math.exp(ceiling / softness) - 1) * math.exp(-x / softness))


def _softplus(x: float, softness: float) -> float:
    """A smooth max(0, x) (sym_kernels.cc line 156)."""
    z = x / softness
    return x if z >= 100.0 else softness * math.log1p(math.exp(z))


def _model_us(bus_bytes: float, base_us: float, blocks: int, sm_bw: float, mult: float, peak: float) -> float:
    """NCCL's ``model()``: bandwidths in bytes per µs."""
    bw = _softmin(blocks * sm_bw * mult, peak, sm_bw)
    return base_us + _softplus(bus_bytes / bw - 1, 1)


def why_not(op: str, c: Config) -> str | None:
    """None if NCCL would run ``op`` with a symmetric kernel on ``c`` (buffers registered); else the reason, in a
    learner's words (NCCL's own test is ``isAllDirectNvlink``: every GPU on an NVLink switch)."""
    s = c.system
    if op not in ("allreduce", "allgather", "reducescatter"):
        return _("NCCL has symmetric kernels for allreduce, allgather and reducescatter only; got {op}").format(op=op)
    if not tuning.newer_or_same(c.nccl_version, _t()["since"]):
        return _("symmetric kernels came in NCCL {since}; got {version}").format(since=_t()["since"],
                                                                                version=c.nccl_version)
    if c.nodes > 1:
        return _("the course models symmetric kernels inside one NVLink domain (nodes = 1)")
    if s.topology not in ("nvswitch", "nvl72"):
        joined = {"pcie-tree": _("a PCIe tree"),
                  "hybrid-cube-mesh": _("NVLink cables from GPU to GPU, with no switch")}.get(s.topology, s.topology)
        return _("symmetric kernels need all GPUs on NVLink switches; this system's GPUs are joined by "
                 "{joined}").format(joined=joined)
    arch = tuning.gpu_arch(s.gpu)
    if arch not in ("hopper", "blackwell"):
        return _("NCCL's symmetric kernels run on Hopper and Blackwell GPUs only; the {gpu} is {arch}").format(
            gpu=s.gpu.split("-")[0].upper(), arch=arch.capitalize())
    return None


def _specs(op: str, nbytes: float, n: int, multicast: bool) -> list[tuple[str, float, float, bool, bool]]:
    """(name, busBytes, busMultiplier, LL?, multicast blocks?) of each kernel of ``op`` (queryModel_lsa)."""
    t = _t()
    ll = n * nbytes * t["ll_bus_factor"]
    mc = t["mc_gather_scatter_multiplier"] * n
    if op == "allreduce":
        out = [("AllReduce_AGxLL_R", ll, 1.0, True, False), ("AllReduce_RSxLD_AGxST", 2 * nbytes * (n - 1) / n, 1.0,
                                                                False, False)]  # fmt: skip
        if multicast:
            out += [("AllReduce_AGxLLMC_R", ll, t["ll_mc_multiplier"], True, False),
                    ("AllReduce_RSxLDMC_AGxSTMC", nbytes / n + nbytes, float(n), False, True)]  # fmt: skip
    elif op == "allgather":
        out = [("AllGather_LL", ll, 1.0, True, False), ("AllGather_ST", (n - 1) * nbytes, 1.0, False, False)]
        if multicast:
            out += [("AllGather_LLMC", ll, t["ll_mc_multiplier"], True, False),
                    ("AllGather_STMC", (n - 1) * nbytes, mc, False, True)]  # fmt: skip
    else:
        out = [("ReduceScatter_LL", ll, 1.0, True, False), ("ReduceScatter_LD", (n - 1) * nbytes, 1.0, False, False)]
        if multicast:
            out.append(("ReduceScatter_LDMC", (n - 1) * nbytes, mc, False, True))
    bus = nbytes if op == "allreduce" else n * nbytes  # LL kernels only below 2 GiB of it (line 576)
    return [k for k in out if not (k[3] and bus >= t["ll_max_bus_bytes"])]


def _constants(op: str, arch: str, name: str, ll: bool) -> tuple[float, float, float]:
    """(baseLat µs, smBw, peakBw) in NCCL's GBps for a kernel (lines 410-420)."""
    t = _t()[arch]
    ar = op == "allreduce"
    peak = t["peak_bw_mc_allreduce"] if name == "AllReduce_RSxLDMC_AGxSTMC" else t["peak_bw"]
    if arch == "hopper":
        base = t["base_lat_ll_us"] if ll else t["base_lat_us"]
    elif ll:
        base = t["base_lat_ll_allgather_us"] if op == "allgather" else t["base_lat_ll_us"]
    else:
        base = t["base_lat_allreduce_us"] if ar else t["base_lat_us"]
    return base, t["sm_bw_allreduce"] if ar else t["sm_bw"], peak


def kernels(op: str, nbytes: float, c: Config) -> list[Kernel]:
    """Every symmetric kernel NCCL considers for ``op`` of ``nbytes`` (nccl-tests' size) on ``c``, with its time at
    the fewest blocks within 2.5 % of its best (NCCL's ``queryModel_lsa``)."""
    if (why := why_not(op, c)) is not None:
        raise ValueError(why)
    t = _t()
    n, arch = c.ranks, tuning.gpu_arch(c.system.gpu)
    per_rank = nbytes if op == "allreduce" else nbytes / n  # NCCL's nBytes: the all-gather's send count
    gbps = t["gbps_bytes_per_us"]
    out = []
    # multimem needs NVLS and more than 2 GPUs (sym_kernels.cc line 443: nvlsSupport && lsa nRanks > 2)
    multicast = bool(c.system.in_switch_reduction) and c.nvls_enabled and n > 2
    for name, bus, mult, ll, mc_blocks in _specs(op, per_rank, n, multicast):
        base, sm_bw, peak = _constants(op, arch, name, ll)
        top = min(t["max_blocks"], math.ceil(t["nvls_blocks"][arch] / n)) if mc_blocks else t["max_blocks"]
        best = _model_us(bus, base, top, sm_bw * gbps, mult, peak * gbps)
        blocks, time = top, best
        for b in range(1, top):
            tb = _model_us(bus, base, b, sm_bw * gbps, mult, peak * gbps)
            if tb <= t["block_tolerance"] * best:
                blocks, time = b, tb
                break
        out.append(Kernel(name, time, blocks, ll, base))
    return out


def line_rate_floor_s(name: str, nbytes: float, c: Config) -> float:
    """The least time, seconds, the links allow kernel ``name`` on ``nbytes``: for the two-shot multicast all-reduce
    (AllReduce_RSxLDMC_AGxSTMC) each GPU sends and receives S(n+1)/n bytes (the switch reduces and replicates), at no
    more than its NVLink line rate per direction (catalog); 0 for the other kernels. NCCL's peak for that kernel
    (480 GiB/s on Hopper, 1000 on Blackwell: ``peak_bw_mc_allreduce``) is above the line rate (450 and 900 GB/s), so
    NCCL's own estimate, which still picks the kernel, would time large calls faster than the wires can carry."""
    if name != "AllReduce_RSxLDMC_AGxSTMC":
        return 0.0
    n = c.gpus
    return nbytes * (n + 1) / n / (c.system.gpu_spec.nvlink_GBps_bidir / 2 * 1e9)


def pick(op: str, nbytes: float, c: Config) -> Kernel:
    """The kernel NCCL picks: least time x (1 + 0.025 x blocks) (``ncclSymkPickKernel``)."""
    pen = _t()["sm_penalty"]
    return min(kernels(op, nbytes, c), key=lambda k: k.time_us * (1.0 + pen * k.blocks))
