"""What the α-β model predicts on the emulated cluster (no root, no engine: pure arithmetic).

The emulated NIC's β is the tbf rate times the share of each frame that is TCP payload (a 1500 B MTU
carries 1448 B of payload in the 1514 B tc counts); α is measured (without ``sch_netem`` the only
latency is the software stack's) and added per step.

* **Flat ring** over ``P = nodes × ranks_per_node`` ranks numbered node by node: each of the
  ``2(P−1)`` steps moves ``S/P`` over every ring edge at once and the slowest edge is a NIC (each NIC
  carries exactly one edge per direction), so ``t = 2(P−1)·α + 2(P−1)/P · S/β``.
* **Hierarchical**: reduce inside each node, a ring all-reduce among the ``N`` node leaders, broadcast
  inside the node: the network phase is ``2(N−1)·α + 2(N−1)/N · S/β`` — every NIC carries
  ``2(N−1)/N · S`` instead of ``2(P−1)/P · S`` (1.0 S instead of 1.5 S for 2 nodes × 2 ranks).
* **Contention**: ``k`` flows through one link of rate ``B`` each get ``B/k`` (max-min fair share), so
  two jobs whose rings both cross one leaf uplink of rate ``U`` run at ``min(β, U/2)`` each.
"""

from __future__ import annotations

import statistics

from .spec import FRAME_B, TCP_PAYLOAD_B


def payload_Bps(link_Bps: float) -> float:
    """TCP payload bytes/s through a tc-shaped link of ``link_Bps`` (tc counts Ethernet frames)."""
    return link_Bps * TCP_PAYLOAD_B / FRAME_B


def flat_ring_s(nbytes: float, nodes: int, ranks_per_node: int, alpha_s: float, beta_Bps: float) -> float:
    """Seconds for a ring all-reduce of ``nbytes`` over all ranks whose slowest edge is a NIC of ``beta_Bps``."""
    p = nodes * ranks_per_node
    if p < 2 or nodes < 2:
        raise ValueError(f"nodes must be >= 2 for a network ring; got {nodes}")
    return 2 * (p - 1) * alpha_s + 2 * (p - 1) / p * nbytes / beta_Bps


def hier_network_s(nbytes: float, nodes: int, alpha_s: float, beta_Bps: float) -> float:
    """Seconds for the inter-node phase of a hierarchical all-reduce (ring among the node leaders)."""
    if nodes < 2:
        raise ValueError(f"nodes must be >= 2 for a network phase; got {nodes}")
    return 2 * (nodes - 1) * alpha_s + 2 * (nodes - 1) / nodes * nbytes / beta_Bps


def shared_rate_Bps(link_Bps: float, flows: int) -> float:
    """Max-min fair share of one link among ``flows`` long flows."""
    if flows < 1:
        raise ValueError(f"flows must be >= 1; got {flows}")
    return link_Bps / flows


def busbw_GBps(nbytes: float, seconds: float, procs: int) -> float:
    """nccl-tests bus bandwidth of an all-reduce: ``S/t · 2(P−1)/P`` in GB/s."""
    return nbytes / seconds * 2 * (procs - 1) / procs / 1e9


def abs_errors(measured_s: list[float], model_s: list[float]) -> list[float]:
    """|measured − model| / measured for each pair (as fractions)."""
    return [abs(m - p) / m for m, p in zip(measured_s, model_s, strict=True)]


def median_abs_error(measured_s: list[float], model_s: list[float]) -> float:
    return statistics.median(abs_errors(measured_s, model_s))
