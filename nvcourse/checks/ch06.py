"""Checkers for chapter 06 — multi-node fabrics (hierarchical all-reduce, ECMP collisions).

Hierarchical all-reduce: the expected time is :func:`nvcourse.costmodel.cost` ``("allreduce",
"hierarchical", ...)`` for catalog systems (with the parameters that model uses) and the hand formula for
random inputs. ECMP: the balls-into-bins formulas, written out here by hand (they agree with
``nvcourse.fabric.ecmp``, which the chapter uses).
"""

from __future__ import annotations

import math

from ..costmodel import configure, cost
from ..i18n import number
from ..i18n import translate as _
from ._answers import Question, answer, register
from ._core import Case, Result, check_function, rng_for, safe_checker

__all__ = ["answer", "hierarchical_allreduce_time", "ecmp_collision_probability"]


class ecmp:  # noqa: N801 - a namespace of hand formulas: m flows hashed uniformly onto k links
    @staticmethod
    def collision_probability(m: int, k: int) -> float:
        """A given flow meets at least one of the other m−1 on its link."""
        return 1.0 - (1.0 - 1.0 / k) ** (m - 1)

    @staticmethod
    def any_collision_probability(m: int, k: int) -> float:
        """Some pair collides (birthday problem)."""
        return 1.0 if m > k else 1.0 - math.prod(1.0 - i / k for i in range(m))

    @staticmethod
    def expected_busy_links(m: int, k: int) -> float:
        return k * (1.0 - (1.0 - 1.0 / k) ** m)


def _hier(S, g, k, a_in, bw_in, a_net, nic):
    """Hand formula: ring reduce-scatter in the node, ring all-reduce of S/g across k nodes, ring all-gather."""
    intra = 2 * ((g - 1) * a_in + (g - 1) / g * S / bw_in)
    inter = 2 * (k - 1) * a_net + 2 * (k - 1) / k * (S / g) / nic
    return intra + inter


@safe_checker
def hierarchical_allreduce_time(fn) -> Result:
    """``fn(nbytes, g, k, alpha_in_s, bw_in_Bps, alpha_net_s, nic_Bps_per_gpu)`` → seconds."""
    names = ["nbytes", "g", "k", "alpha_in_s", "bw_in_Bps", "alpha_net_s", "nic_Bps_per_gpu"]
    cases = []
    for system, g, k, S in (("dgx-h100", 8, 4, 2**30), ("dgx-a100", 8, 16, 256 * 2**20), ("dgx-b200", 8, 2, 2**28),
                            ("dgx-h100", 4, 32, 16 * 2**20)):
        c = configure(system, g, k)
        args = (S, g, k, c.dom.alpha_s, 1.0 / c.dom.ring_inv, c.nic.alpha_s, c.nic_Bps_per_gpu)
        cases.append(Case(args, cost("allreduce", "hierarchical", c).time(S), _variants(*args), f"{system}, {g}x{k}"))
    rng = rng_for("hierarchical_allreduce_time")
    for _i in range(4):
        args = (int(2 ** rng.integers(16, 33)), int(rng.integers(2, 9)), int(rng.integers(2, 129)),
                float(10 ** rng.uniform(-6, -5)), float(10 ** rng.uniform(10.5, 12)),
                float(10 ** rng.uniform(-5.5, -4.5)), float(10 ** rng.uniform(9.5, 11)))
        cases.append(Case(args, _hier(*args), _variants(*args), "random"))
    return check_function("hierarchical_allreduce_time", fn, names, cases, what="a time in seconds",
                          hint=_("Three phases one after the other: reduce-scatter in the node (g−1 steps of S/g), "
                               "ring all-reduce of the S/g shard across k nodes, all-gather in the node."),
                          success=_("Only 2(k−1) of the steps cross the network (a flat ring over g·k GPUs has "
                                  "2(g·k−1) steps): hierarchical wins on latency; for large buffers both are "
                                  "limited by the NICs."))


def _variants(S, g, k, a_in, bw_in, a_net, nic):
    right = _hier(S, g, k, a_in, bw_in, a_net, nic)
    intra_half = (g - 1) * a_in + (g - 1) / g * S / bw_in
    inter = 2 * (k - 1) * a_net + 2 * (k - 1) / k * (S / g) / nic
    return {
        _("The all-gather inside the node is missing (reduce-scatter, inter-node all-reduce, then all-gather)."):
            intra_half + inter,
        _("Across nodes each GPU all-reduces only its shard S/g, not the whole buffer S."):
            right - 2 * (k - 1) / k * (S / g) / nic + 2 * (k - 1) / k * S / nic,
        _("The inter-node phase is an all-reduce: 2(k−1) steps, not k−1."):
            right - (k - 1) * a_net - (k - 1) / k * (S / g) / nic,
    }


@safe_checker
def ecmp_collision_probability(fn) -> Result:
    """``fn(flows, links)`` → probability that one given flow shares its up-link with at least one other."""
    cases = []
    rng = rng_for("ecmp")
    combos = [(2, 2), (8, 8), (32, 32), (16, 64), (64, 16), (1, 8), (100, 1000)]
    combos += [(int(m), int(k)) for m, k in zip(rng.integers(2, 200, 4), rng.integers(2, 200, 4))]
    for m, k in combos:
        exp = ecmp.collision_probability(m, k)
        cases.append(Case((m, k), exp, {
            _("That is the probability that *some* pair of flows collides (the birthday problem); the question is "
            "about one given flow."): ecmp.any_collision_probability(m, k) if m > 2 else None,
            _("That is the probability of *not* colliding: subtract it from 1."): 1 - exp if exp != 0.5 else None,
            _("A flow cannot collide with itself: it meets m−1 others, so use (1 − 1/k)^(m−1)."):
                1 - (1 - 1 / k) ** m,
            _("m/k is a rough bound, not the probability (it can exceed 1)."): m / k if m != k else None,
        }))
    return check_function("ecmp_collision_probability", fn, ["flows", "links"], cases, what="a probability",
                          rtol=1e-6, atol=1e-12,
                          hint=_("Each of the other m−1 flows avoids your link with probability 1 − 1/k, "
                                 "independently."),
                          success=_("With as many flows as links, about 63 % of flows share a link: "
                                  "ECMP hashing alone wastes a third of a non-blocking fabric."))


register(
    Question(
        "06.ecmp_32",
        _("32 flows hash onto 32 equal up-links (ECMP). On average, what fraction of the links carries no flow?"),
        lambda: 1 - ecmp.expected_busy_links(32, 32) / 32,
        rtol=0.01,
        variants=lambda: {
            _("That is the fraction of links that are busy; the question asks for idle ones."):
                ecmp.expected_busy_links(32, 32) / 32,
            _("That is the probability that a given flow collides, not the idle fraction."):
                ecmp.collision_probability(32, 32),
        },
        hint=_("A link stays idle when all 32 flows miss it: (1 − 1/32)^32."),
        explain=lambda: _("(1 − 1/32)^32 = {value}, close to its many-link limit e^−1 = {limit}: about a third of "
                          "the links idle.").format(value=number((31 / 32) ** 32, ".4f"),
                                                    limit=number(math.exp(-1), ".4f")),
    )
)
