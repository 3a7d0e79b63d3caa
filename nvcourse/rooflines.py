"""Communication rooflines: when is a parallel training step communication-bound? (closed forms)

Each parallelism moves bytes in proportion to something and computes in proportion to something
else; the step can hide its communication only if the compute takes longer. With ``C`` the GPU's
FLOP/s and ``W`` the bandwidth (bytes/s, one direction) of the link the collective crosses, the
conditions below are the ones of the JAX scaling book ("How to Scale Your Model", Training and GPU
chapters), written for BF16 (2 bytes per value):

* **DP** (all-reduce of 2P bytes of gradients, overlapped with the backward's 4·P·T FLOPs, T tokens
  per GPU): the ring sends ≈ 2·2P = 4P bytes, taking 4P/W; the backward takes 4PT/C. Compute-bound when
  ``T ≥ C / W`` tokens per GPU. When ``r`` members of the DP group share a node, NCCL reduces inside
  the node first (its rings cross each node boundary once per channel), so each GPU's NIC carries only
  1/r of its gradient: ``T ≥ C / (r·W)``. That is why NVLink matters even to pure data parallelism.
* **FSDP/ZeRO-3** (all-gather forward, all-gather backward, reduce-scatter: ≈ 3·2P = 6P bytes, against
  6PT FLOPs): the same ``T ≥ C / W``.
* **TP** (Megatron MLP with SP; per token an all-gather and a reduce-scatter of h values,
  ``2·2h·(t-1)/t`` bytes, against ``2·m·h·F/t`` FLOPs for m matrices of h x F, F the FFN width):
  compute-bound when ``F ≥ 2(t-1)/m · C/W``, i.e. ``F/t ≳ (2/m)·C/W``.
* **EP** (dispatch + combine, ``2·k·h·b·ρ`` bytes per token for top-k, ρ the share that leaves the
  GPU, against ``k·2·m·h·F_e`` FLOPs of the experts): compute-bound when ``F_e ≥ b·ρ·C/(m·W)``.

These ignore latency (α) and assume perfect overlap: they say whether hiding is *possible*. The
timelines of :mod:`nvcourse.overlap` say how much is hidden.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from . import catalog
from ._validate import number

#: a positive finite number (the course-wide message: "<name> must be > 0; got ...")
_pos = partial(number, positive=True)

__all__ = ["Roofline", "gpu_rates", "dp_roofline", "fsdp_roofline", "tp_roofline", "ep_roofline", "worked_table"]


@dataclass(frozen=True)
class Roofline:
    """A comm-bound test: the configuration's ``value`` against the ``threshold`` (same unit)."""

    name: str
    value: float
    threshold: float
    unit: str
    formula: str

    @property
    def comm_bound(self) -> bool:
        return self.value < self.threshold

    @property
    def ratio(self) -> float:
        """value / threshold: < 1 communication-bound, >= 1 compute can hide it."""
        return self.value / self.threshold



def gpu_rates(system: str, *, link: str = "nic", efficiency: float = 1.0) -> tuple[float, float]:
    """``(C, W)`` for one GPU of catalog ``system``: dense BF16 FLOP/s x ``efficiency``, and the achievable
    bandwidth per direction (bytes/s) of its ``link``: 'nvlink' (its scale-up links) or 'nic' (its NIC share)."""
    s = catalog.get_system(system)
    C = s.gpu_spec.bf16_TFLOPS * 1e12 * efficiency
    if link == "nvlink":
        W = s.scaleup_achievable_GBps_dir * 1e9
    elif link == "nic":
        W = s.scaleout_GBps_dir_per_gpu * s.nic.efficiency * 1e9
    else:
        raise ValueError(f"link must be 'nvlink' or 'nic', got {link!r}")
    return C, W


def _per_node(v: object) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ValueError(f"per_node (DP group members in one node) must be an integer >= 1, got {v!r}")
    return v


def dp_roofline(tokens_per_gpu: float, C: float, W: float, *, per_node: int = 1) -> Roofline:
    """Data parallelism: compute-bound when tokens per GPU per step ``T ≥ C/(r·W)`` (r = ``per_node``)."""
    thr = _pos("C", C) / (_pos("W", W) * _per_node(per_node))
    return Roofline("DP", _pos("tokens_per_gpu", tokens_per_gpu), thr, "tokens/GPU", "T ≥ C/(r·W)")


def fsdp_roofline(tokens_per_gpu: float, C: float, W: float, *, per_node: int = 1) -> Roofline:
    """FSDP / ZeRO-3: 6P bytes against 6PT FLOPs: the same ``T ≥ C/(r·W)``."""
    thr = _pos("C", C) / (_pos("W", W) * _per_node(per_node))
    return Roofline("FSDP", _pos("tokens_per_gpu", tokens_per_gpu), thr, "tokens/GPU", "T ≥ C/(r·W)")


def tp_roofline(ffn_hidden: float, tp: int, C: float, W: float, *, matrices: int = 3) -> Roofline:
    """Tensor parallelism (+SP) of an MLP with ``matrices`` h x F weights (3 for SwiGLU): ``F ≥ 2(t-1)/m · C/W``."""
    if isinstance(tp, bool) or not isinstance(tp, int) or tp < 2:
        raise ValueError(f"tp must be an integer >= 2, got {tp!r}")
    thr = 2 * (tp - 1) / matrices * _pos("C", C) / _pos("W", W)
    return Roofline(f"TP{tp}", _pos("ffn_hidden", ffn_hidden), thr, "FFN width", "F ≥ 2(t−1)/m · C/W")


def ep_roofline(expert_ffn: float, C: float, W: float, *, remote_fraction: float = 1.0, bytes_per_elem: float = 2.0,
                matrices: int = 3) -> Roofline:
    """Expert parallelism: ``F_e ≥ b·ρ·C/(m·W)`` (dispatch+combine bytes vs expert FLOPs, per routed copy)."""
    rho = _pos("remote_fraction", remote_fraction)
    thr = _pos("bytes_per_elem", bytes_per_elem) * rho * _pos("C", C) / (matrices * _pos("W", W))
    return Roofline("EP", _pos("expert_ffn", expert_ffn), thr, "expert FFN width", "F_e ≥ b·ρ·C/(m·W)")


def worked_table(systems: tuple[str, ...] = ("dgx-h100", "dgx-b200", "gb200-nvl72")) -> list[dict]:
    """C/W (tokens per GPU at which DP/FSDP stop being comm-bound) over NVLink and over the NIC, per system,
    at the dense BF16 peak."""
    rows = []
    for sid in systems:
        for link in ("nvlink", "nic"):
            C, W = gpu_rates(sid, link=link)
            rows.append({"system": sid, "link": link, "C_TFLOPS": C / 1e12, "W_GBps": W / 1e9, "C_over_W": C / W})
    return rows
