"""Checkers for chapter 06c — the multi-node lab (flat ring vs hierarchical on emulated NICs).

Expected values come from :mod:`nvcourse.cluster.model` (the model the lab's measurements are compared
with); the frame arithmetic from :mod:`nvcourse.cluster.spec`. Use in a notebook as
``from nvcourse.checks import ch06c as check``.
"""

from __future__ import annotations

from ..cluster import model as cm
from ..cluster.spec import FRAME_B, TCP_PAYLOAD_B
from ..i18n import translate as _
from ._core import Case, Result, check_function, rng_for, safe_checker

__all__ = ["payload_rate", "flat_ring_time", "hier_network_time"]


@safe_checker
def payload_rate(fn) -> Result:
    """``fn(link_bits_per_s)`` → TCP payload bytes/s through a tc-shaped link (MTU 1500)."""
    cases = []
    rng = rng_for("06c.payload_rate")
    for bits in [1e9, 250e6, 100e9, *[float(10 ** rng.uniform(7, 11)) for _i in range(3)]]:
        exact = cm.payload_Bps(bits / 8)
        cases.append(Case((bits,), exact, {
            _("Bits, not bytes: divide the rate by 8."): exact * 8,
            _("The line rate is not all payload: each 1514-byte frame tc counts carries 1448 bytes of TCP data."):
                bits / 8,
            _("Payload share is 1448/1514 (the Ethernet header is counted by tc), not 1448/1500."):
                bits / 8 * TCP_PAYLOAD_B / 1500,
        }))
    return check_function("payload_rate", fn, ["link_bits_per_s"], cases, what="a rate in bytes per second",
                          rtol=1e-6,
                          hint=_("bytes/s = bits/s ÷ 8, times {payload}/{frame}.").format(payload=TCP_PAYLOAD_B,
                                                                                         frame=FRAME_B),
                          success=_("About 4 % of a 1500-byte MTU link goes to headers: 1 Gb/s carries 119.5 MB/s "
                                  "of data."))


@safe_checker
def flat_ring_time(fn) -> Result:
    """``fn(nbytes, nodes, ranks_per_node, alpha_s, beta_Bps)`` → seconds for a ring over all ranks."""
    cases = []
    rng = rng_for("06c.flat_ring_time")
    fixed = [(64 * 2**20, 2, 2, 224e-6, cm.payload_Bps(125e6)), (2**20, 4, 1, 50e-6, 1e9), (2**30, 16, 8, 5e-6, 5e10)]
    rand = [(int(2 ** rng.integers(16, 31)), int(rng.integers(2, 17)), int(rng.integers(1, 9)),
             float(10 ** rng.uniform(-6, -3)), float(10 ** rng.uniform(7, 11))) for _i in range(4)]
    for S, n, r, a, b in fixed + rand:
        p = n * r
        exp = cm.flat_ring_s(S, n, r, a, b)
        cases.append(Case((S, n, r, a, b), exp, {
            _("The α term is missing: a ring all-reduce has 2(P−1) steps, each paying α."): exp - 2 * (p - 1) * a,
            _("That is the hierarchical count 2(N−1)/N: a flat ring over P = N·R ranks moves 2(P−1)/P·S through "
            "each NIC."): cm.hier_network_s(S, n, a, b) if r > 1 else None,
            _("Each NIC carries one ring edge per direction: the bytes term is 2(P−1)/P·S/β, not 2(P−1)·S/β."):
                2 * (p - 1) * a + 2 * (p - 1) * S / b,
            _("An all-reduce is a reduce-scatter plus an all-gather: 2(P−1) steps, not P−1."):
                (p - 1) * a + (p - 1) / p * S / b,
        }))
    return check_function("flat_ring_time", fn, ["nbytes", "nodes", "ranks_per_node", "alpha_s", "beta_Bps"],
                          cases, what="a time in seconds", rtol=1e-6,
                          hint=_("P = nodes × ranks_per_node; t = 2(P−1)·α + 2(P−1)/P · S/β."),
                          success=_("The slowest ring edge is a NIC, and each NIC carries exactly one edge per "
                                  "direction — so the NIC's β sets the time, whatever the in-node speed."))


@safe_checker
def hier_network_time(fn) -> Result:
    """``fn(nbytes, nodes, alpha_s, beta_Bps)`` → seconds for the ring among the node leaders."""
    cases = []
    rng = rng_for("06c.hier_network_time")
    fixed = [(64 * 2**20, 2, 224e-6, cm.payload_Bps(125e6)), (2**30, 32, 5e-6, 5e10)]
    rand = [(int(2 ** rng.integers(16, 31)), int(rng.integers(2, 65)), float(10 ** rng.uniform(-6, -3)),
             float(10 ** rng.uniform(7, 11))) for _i in range(4)]
    for S, n, a, b in fixed + rand:
        exp = cm.hier_network_s(S, n, a, b)
        cases.append(Case((S, n, a, b), exp, {
            _("The α term is missing: 2(N−1) steps, each paying α."): exp - 2 * (n - 1) * a,
            _("Only half of it: the leaders run a reduce-scatter *and* an all-gather, 2(N−1)/N · S in all."):
                (n - 1) * a + (n - 1) / n * S / b,
        }))
    return check_function("hier_network_time", fn, ["nbytes", "nodes", "alpha_s", "beta_Bps"], cases,
                          what="a time in seconds", rtol=1e-6,
                          hint=_("A ring all-reduce among N leaders: 2(N−1)·α + 2(N−1)/N · S/β."),
                          success=_("For 2 nodes × 2 ranks each NIC moves 1.0·S instead of the flat ring's 1.5·S."))
