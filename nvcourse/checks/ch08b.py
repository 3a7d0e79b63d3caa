"""Checkers for chapter 08b — security and observability of GPU fabrics.

Expected values: :mod:`nvcourse.isolation` (P_Key rules, noisy neighbour), :mod:`nvcourse.observability`
(thresholds, counter units, the drill's verdict). Import this module to register its questions:
``from nvcourse.checks import ch08b``.
"""

from __future__ import annotations

from typing import Any

from .. import isolation
from ..i18n import translate as _
from ..observability import counters, drill
from ._answers import Question, answer, register
from ._core import FAIL, PASS, Case, CheckError, Result, check_function, learner_value, rng_for, safe_checker

__all__ = ["answer", "tolerable_loss", "pkeys_can_talk", "xmit_data_bytes", "drill_answer"]


@safe_checker
def tolerable_loss(fn) -> Result:
    """``fn(bandwidth_fraction, slowdown)`` → largest fraction of a link's bandwidth the job can lose."""
    rng = rng_for("tolerable_loss")
    combos = [(0.3, 0.10), (0.1, 0.10), (1.0, 0.10), (0.5, 0.05)]
    combos += [(float(c), float(s)) for c, s in zip(rng.uniform(0.05, 0.9, 4), rng.uniform(0.02, 0.3, 4), strict=True)]
    cases = []
    for c, s in combos:
        cases.append(
            Case(
                (c, s),
                counters.tolerable_link_loss(c, s),
                {
                    _("That is s / c: the step stretches by c·f/(1 − f), not c·f; solve c·f/(1 − f) = s."): s / c,
                    _("That ignores the share of the step in communication: only the share c stretches."): s,
                    _("That is the loss for a job that is all communication (c = 1); scale by c."): s / (1 + s),
                },
            )
        )
    return check_function(
        "tolerable_loss",
        fn,
        ["bandwidth_fraction", "slowdown"],
        cases,
        what="a fraction",
        hint=_("A link at (1 − f) of its bandwidth stretches the bandwidth-bound share c by 1/(1 − f): "
        "solve c/(1 − f) + (1 − c) = 1 + s."),
        success=_("The more of the step is communication, the smaller the loss you can tolerate."),
    )


def _as_bool(v: Any) -> float:
    if isinstance(v, (bool,)) or type(v).__name__ == "bool_":
        return float(bool(v))
    raise CheckError(
        _("your code returned {value} ({type}); this function must return True or False.").format(
            value=repr(v), type=type(v).__name__),
        _("Return the comparison itself, e.g. `return same_partition and (full_a or full_b)`."),
    )


@safe_checker
def pkeys_can_talk(fn) -> Result:
    """``fn(pkey_a, pkey_b)`` → whether two ports may exchange data packets (True/False)."""
    rng = rng_for("pkeys_can_talk")
    pairs = [
        (0xFFFF, 0x7FFF),
        (0x7FFF, 0x7FFF),
        (0x8001, 0x8001),
        (0x8001, 0x0001),
        (0x0001, 0x0001),
        (0x8001, 0x8002),
        (0x0005, 0x8005),
    ]
    pairs += [(int(a), int(a) ^ 0x8000) for a in rng.integers(0, 0x10000, 3)]
    cases = []
    for a, b in pairs:
        cases.append(
            Case(
                (a, b),
                float(isolation.pkeys_can_talk(a, b)),
                {
                    _("Two limited members (top bit 0) of a partition cannot talk: one must be a full member."): float(
                        isolation.pkey_partition(a)[0] == isolation.pkey_partition(b)[0]
                    ),
                    _("Compare the partition number (low 15 bits), not the whole key: bit 15 is the "
                      "membership."): float(a == b),
                },
            )
        )
    return check_function(
        "pkeys_can_talk",
        fn,
        ["pkey_a", "pkey_b"],
        cases,
        what="True or False",
        convert=_as_bool,
        show=lambda v: str(bool(v)),
        hint=_("partition = key & 0x7FFF, full member = key >> 15 & 1; talk = same partition and (full_a or full_b)."),
        success=_("P_Keys separate traffic, not bandwidth: both partitions still share the links."),
    )


@safe_checker
def xmit_data_bytes(fn) -> Result:
    """``fn(before, after)`` → bytes sent between two reads of PortXmitData (it counts 4-octet words)."""
    unit = int(counters.raw()["ib_units"]["port_xmit_data_bytes_per_unit"])
    rng = rng_for("xmit_data_bytes")
    combos = [(0, 1000), (123_456, 9_999_999), (10, 10)] + [
        tuple(sorted(map(int, rng.integers(0, 2**31, 2)))) for _ in range(4)
    ]
    cases = [
        Case(
            (a, b),
            (b - a) * unit,
            {
                _("PortXmitData counts 4-byte words, not bytes: multiply the difference by 4."): float(b - a),
                _("It counts 4-byte words, not bits: × 4, not ÷ 8 or × 8."): (b - a) * 8.0,
                _("Subtract the first read from the second (after − before)."): (a - b) * unit,
            },
        )
        for a, b in combos
    ]
    return check_function(
        "xmit_data_bytes",
        fn,
        ["before", "after"],
        cases,
        what="bytes",
        hint=_("bytes = (after − before) × 4 (the IB spec counts PortXmitData in 4-octet units)."),
        success=_("Divide by the seconds between the reads and you have the port's rate."),
    )


@safe_checker
def drill_answer(incident: str, fault: Any, component: str | None = None, seed: int = 0) -> Result:
    """Grade a drill answer: the fault class and the component of ``incident`` (see :mod:`.observability.drill`).

    ``fault`` and ``component`` are strings, or ``fault`` is a function returning ``(fault, component)``.
    """
    name = _("drill {incident}").format(incident=incident)
    if component is None:
        value = learner_value(fault, name)
        if isinstance(value, Result):  # the stub (TODO) or an exception (ERROR)
            return value
        if not (isinstance(value, (tuple, list)) and len(value) == 2 and all(isinstance(x, str) for x in value)):
            raise CheckError(
                _("your answer is {value}; it must be two strings: (fault, component).").format(value=repr(value)),
                _('Return e.g. ("congested uplink", "leaf5").'),
                status="error",
            )
        fault, component = value
    try:
        run = drill.incident(incident, seed)
        v = drill.verdict(run, fault, component)
    except ValueError as exc:
        return Result(name, "error", str(exc),
                      hint=_("fault is one of: {faults}").format(faults=", ".join(drill.FAULTS)))
    if v.passed:
        return Result(name, PASS, _("{fault} at {component}.").format(fault=fault, component=component),
                      right=v.evidence)
    right = [_("fault class: {fault}").format(fault=fault)] if v.fault_ok else []
    wrong = [] if v.fault_ok else [_("the fault is not {fault}").format(fault=repr(fault))]
    if not v.component_ok:
        wrong.append(_("not at {component}").format(component=component))
    hint = v.mistake or (
        _("Look at which counters moved and on which component, then at the shape of the step times "
        "(spikes, a step up, or no step at all).")
    )
    return Result(name, FAIL, _("not this one yet."), right=right, wrong=wrong, hint=hint)


register(
    Question(
        "08b.noisy_rate",
        _("No QoS: on the 2:1 fat-tree of section 1, what rate (GB/s) does each victim ring flow get next to the "
        "all-to-all neighbour?"),
        lambda: isolation.noisy_neighbour(qos="none").shared_rate_GBps,
        unit="GB/s",
        rtol=0.02,
        variants=lambda: {
            _("That is the rate alone: the neighbour's flows share the same leaf uplinks."): isolation.noisy_neighbour(
                qos="none"
            ).alone_rate_GBps,
            _("That splits the uplinks per job; per-flow fairness counts flows (8 victim + 56 neighbour)."): (
                isolation.noisy_neighbour(qos="ets", victim_share=0.5).shared_rate_GBps
            ),
        },
        hint=_("Each leaf's uplinks (half its down-ports, at the NIC rate) carry the victim's 8 flows and the "
        "neighbour's 8 rails × 7 peers."),
        explain=_("Per-flow fairness rewards the job with more flows: that is why QoS classes exist."),
    )
)

register(
    Question(
        "08b.bind",
        _("Your torch.distributed job's rank 0 runs its TCPStore on MASTER_ADDR. Which setup is right for a cluster?"),
        lambda: "c",
        choices={
            "a": _("MASTER_ADDR = the node's public address, so that all ranks can surely reach it"),
            "b": "MASTER_ADDR = 0.0.0.0",
            "c": _("MASTER_ADDR on the private management network, NCCL_SOCKET_IFNAME set to that interface, "
            "the port firewalled to the cluster's nodes"),
            "d": _("any address: the store checks a shared secret"),
        },
        wrong_choice={
            "a": _("Anyone on the internet who reaches the port can join the rendezvous or rewrite its keys."),
            "b": _("0.0.0.0 is 'every interface' for a listener, and not an address the other ranks can dial."),
            "d": _("The store has no authentication at all: that is the point of this section."),
        },
        explain=_("The control plane is unauthenticated TCP: keep it on a network only the job's nodes reach."),
    )
)
