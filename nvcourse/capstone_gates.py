"""Capstone gates beyond the training run: the fabric, serving, isolation and monitoring.

:mod:`nvcourse.capstone` checks a training design (time, budget, efficiency, goodput, power). This module adds
four requirements a real decision also has, each from a course model and each returning
:class:`nvcourse.capstone.Gate` objects for the same decision log:

* **fabric** (:func:`fabric_gate`): the scale-out fabric is a design variable (:class:`FabricChoice`: InfiniBand
  or RoCE NIC, rail-optimised or top-of-rack, oversubscription, routing, SHARP). The gate runs the job's DP
  gradient all-reduce on that fabric at job scale under *random* node placement (what a busy scheduler hands
  out) with :func:`nvcourse.fabric.allreduce_on_fabric`, and compares its bus bandwidth with the same NICs on a
  non-blocking fabric with adaptive routing and packed nodes. A second gate puts the delivered bandwidth back
  into the step: the DP all-reduce time scales by the bandwidth ratio, and the part the backward pass can no
  longer hide lowers the scaling efficiency.
* **serving** (:func:`serving_plan`): given a model, a per-token latency SLO and a time-to-first-token target,
  the smallest tensor-parallel degree per replica that fits and meets both (:func:`nvcourse.inference.decode_step`,
  :func:`~nvcourse.inference.prefill_time`, :func:`~nvcourse.inference.kv_transfer_time`), then replicas for the
  throughput.
* **isolation** (:func:`isolation_requirements`): the victim's slowdown next to a noisy neighbour without and
  with QoS (:func:`nvcourse.isolation.noisy_neighbour`), and where the rendezvous address can be reached from.
* **monitoring** (:func:`monitoring_requirements`): alert thresholds from ``f* = s / (c + s)``
  (:func:`nvcourse.observability.counters.alert_thresholds`) and the counters of the fabric's kind.

:func:`decision_log_entries` writes the four as Markdown rows (``$`` escaped). Times in seconds, bandwidths in
GB/s (10^9 B/s). Every hardware figure comes from ``data/*.toml`` through the catalog and the models; the
thresholds here are targets a learner sets, not facts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import capstone, catalog, isolation, training
from ._validate import choice, fraction, number
from .capstone import Gate, Report, verdict_word
from .capstone import percent as pct
from .capstone_serving import ServingPlan, ServingTargets, serving_plan  # serving's gates, re-exported
from .fabric import LAYOUTS, NODE_PLACEMENTS, ROUTINGS, allreduce_on_fabric, fat_tree
from .fabric import data as fabric_data
from .i18n import english, whole
from .i18n import number as num
from .i18n import translate as _
from .isolation import exposure_words  # re-exported: the words of the control-plane gate
from .observability import counters
from .units import percent_spec

__all__ = [
    "FabricChoice", "FabricResult", "fabric_gate", "NEEDS", "ROUTING_WORDS",
    "ServingTargets", "ServingPlan", "serving_plan",
    "IsolationTargets", "IsolationResult", "isolation_requirements",
    "MonitoringResult", "monitoring_requirements",
    "decision_log_entries", "escape_md", "gate_name",
]


def _count(value: float) -> str:
    """A count (a token rate) as the learner's language writes it: ``20000`` in English, ``20 000`` in French."""
    return whole(int(value)) if float(value).is_integer() else num(value, "g")


def escape_md(text: str) -> str:
    """Text safe in a Markdown table cell rendered by Jupyter: ``$`` would start LaTeX, ``|`` a new cell, ``<`` a
    tag."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("$", "&#36;").replace(
        "|", "\\|")


def gate_name(name: str) -> str:
    """A gate's name (``Gate.name``, English: a stable key) in the current language: this module's and
    capstone_serving's gates, else the training gates' (:func:`nvcourse.capstone.gate_name`)."""
    shown = {"fabric busbw": _("fabric busbw"), "fabric step": _("fabric step"),
             "serving memory": _("serving memory"), "token latency": _("token latency"), "TTFT": _("TTFT"),
             "neighbour": _("neighbour"), "control plane": _("control plane")}
    return shown[name] if name in shown else capstone.gate_name(name)


def _gates_passed(gates: tuple[Gate, ...]) -> bool:
    return all(g.passed for g in gates)


# ------------------------------------------------------------------------------------------------ fabric


def routing_word(routing: str) -> str:
    """A routing in words, in the current language: ``"dmodk"``, ``"ecmp"``, ``"adaptive routing"`` or
    ``"packet spraying"`` (what ``"ideal"`` is called on InfiniBand and on Ethernet)."""
    return {"dmodk": _("static routes (adaptive routing off in the switches)"), "ecmp": _("ECMP hashing"),
            "adaptive routing": _("adaptive routing"), "packet spraying": _("packet spraying")}[routing]


def need_text(need: str) -> str:
    """What a choice (a key of :data:`NEEDS`) needs configured, in the current language."""
    return {
        "adaptive routing": _("adaptive routing enabled in the switches by the subnet manager (UFM or OpenSM) on the "
                              "job's service level (NCCL_IB_SL); NCCL uses it by default on InfiniBand"),
        "packet spraying": _("switches that spray packets over all paths and NICs that accept them out of order "
                             "(AI Ethernet such as Spectrum-X)"),
        "SHARP": _("SHARP-capable switches with the Aggregation Manager running, the NCCL SHARP plugin "
                   "(nccl-rdma-sharp-plugins, from HPC-X) and NCCL_COLLNET_ENABLE=1 (off by default); the switches' "
                   "aggregation trees and buffers are shared between jobs, and a job that gets none runs without "
                   "SHARP"),
        "packed": _("a topology-aware scheduler that gives the job nodes under as few leaf switches as it can"),
    }[need]


with english():  # the tables in English, for code that reads them; the text shown goes through the functions above
    #: The non-default routings in words ("ideal" is named by the NIC kind: adaptive routing or packet spraying).
    ROUTING_WORDS = {r: routing_word(r) for r in ("dmodk", "ecmp")}
    #: What each choice needs configured to deliver what the model gives it (docs/runbook-ib-ar-sharp.md; NCCL's
    #: environment variables page; NVIDIA's SHARP documentation; ethernet_ai.toml for packet spraying).
    NEEDS = {n: need_text(n) for n in ("adaptive routing", "packet spraying", "SHARP", "packed")}


@dataclass(frozen=True)
class FabricChoice:
    """The scale-out fabric of a design.

    Args:
        nic: catalog link id of the NICs (``ib-ndr``, ``roce-400g``, ...); its kind picks the switch.
        layout: ``"rail"`` (rail-optimised) or ``"tor"`` (all NICs of a node on one leaf).
        oversubscription: leaf down:up ratio, >= 1.
        routing: None = the kind's default: InfiniBand ``"ideal"`` (adaptive routing: NCCL turns it on by default
            on IB links, and a SuperPOD's subnet manager enables it in the switches), Ethernet ``"ecmp"`` (per-flow
            hashing); ``"dmodk"`` = InfiniBand with adaptive routing off in the switches (the subnet manager's
            static routes: a misconfigured or legacy fabric); ``"ideal"`` on Ethernet = packet spraying.
        sharp: in-network reduction (needs an InfiniBand switch that has it, and see :attr:`needs`).
        placement: ``"random"`` (the gate's default: scattered nodes) or ``"packed"``.
    """

    nic: str = "ib-ndr"
    layout: str = "rail"
    oversubscription: float = 1.0
    routing: str | None = None
    sharp: bool = False
    placement: str = "random"
    seed: int = 0

    def __post_init__(self) -> None:
        catalog.get_link(self.nic)
        choice("layout", self.layout, LAYOUTS)
        number("oversubscription", self.oversubscription, positive=True)
        if self.routing is not None:
            choice("routing", self.routing, ROUTINGS)
        choice("placement", self.placement, NODE_PLACEMENTS)
        if self.sharp and not self.switch.in_network_reduction:
            raise ValueError(_("sharp=True needs a switch with in-network reduction; the {kind} switch {switch} "
                               "has none: use sharp=False").format(kind=self.kind, switch=repr(self.switch.id)))

    @property
    def kind(self) -> str:
        return catalog.get_link(self.nic).kind

    @property
    def routing_used(self) -> str:
        if self.routing is not None:
            return self.routing
        return "ideal" if self.kind == "infiniband" else "ecmp"

    @property
    def routing_words(self) -> str:
        """The routing in words, in the current language (the kind decides what ``"ideal"`` is called)."""
        if self.routing_used == "ideal":
            return routing_word("adaptive routing" if self.kind == "infiniband" else "packet spraying")
        return routing_word(self.routing_used)

    @property
    def needs(self) -> tuple[str, ...]:
        """What must be configured beyond cables and NICs for the model's figure to hold, in words (the current
        language)."""
        out = []
        if self.routing_used == "ideal":
            out.append(need_text("adaptive routing" if self.kind == "infiniband" else "packet spraying"))
        if self.sharp:
            out.append(need_text("SHARP"))
        if self.placement == "packed":
            out.append(need_text("packed"))
        return tuple(out)

    @property
    def switch(self) -> fabric_data.Switch:
        """The switch of ``data/fabric.toml`` whose ports run at the NIC's rate, else the first of the NIC's kind."""
        sw = list(fabric_data.switches().values())
        same = [s for s in sw if s.port_link == self.nic]
        kind = [s for s in sw if s.link.kind == self.kind]
        if not (same or kind):
            raise ValueError(_("nic must be an InfiniBand or Ethernet link with a switch in the fabric data; got "
                               "{nic}").format(nic=repr(self.nic)))
        return (same or kind)[0]

    def describe(self) -> str:
        """The fabric in words, in the current language (the link's catalog name as the catalog writes it)."""
        link = catalog.get_link(self.nic)
        layout = _("rail-optimised") if self.layout == "rail" else _("top-of-rack")
        placement = {"random": _("random placement"), "packed": _("packed placement")}.get(
            self.placement, self.placement)
        return (f"{link.name}, {layout}, {num(self.oversubscription, 'g')}:1, {self.routing_words}"
                + (", SHARP" if self.sharp else "") + f", {placement}")


@dataclass(frozen=True)
class FabricResult:
    """The DP all-reduce of a design on a fabric. ``reference_busbw_GBps``: the same NICs, non-blocking,
    adaptive routing, packed nodes. ``dp_comm_s``: the step's DP all-reduce at the delivered bandwidth."""

    fabric: FabricChoice
    nodes: int
    nbytes: float
    algorithm: str
    busbw_GBps: float
    reference_busbw_GBps: float
    dp_comm_s: float
    dp_exposed_s: float
    step_s: float
    efficiency: float
    gates: tuple[Gate, ...]

    @property
    def ratio(self) -> float:
        return self.busbw_GBps / self.reference_busbw_GBps if self.reference_busbw_GBps else 1.0

    @property
    def passed(self) -> bool:
        return _gates_passed(self.gates)


def _best_allreduce(fab, nbytes: float, system: str, nic: str, routing: str, placement: str, seed: int,
                    sharp: bool):
    """NCCL's pick (the faster of ring and tree), or SHARP when the fabric has it."""
    algos = ("sharp",) if sharp else ("ring", "tree")
    ests = [allreduce_on_fabric(fab, nbytes, algorithm=a, system=system, nic_link=nic, routing=routing,
                                placement=placement, seed=seed) for a in algos]
    return min(ests, key=lambda e: e.time_s)


@dataclass(frozen=True)
class _RailAllReduce:
    """The DP all-reduce when TP fills the node: one ring (or SHARP tree) per rail, ``nbytes`` per GPU."""

    algorithm: str
    busbw_GBps: float


def _per_rail_allreduce(fab, nbytes: float, system: str, nic: str, routing: str, placement: str, seed: int,
                        sharp: bool) -> _RailAllReduce:
    """With one DP rank per node, each GPU's DP group is the same-rail GPU of every other node: the all-reduce
    never crosses NVLink, and all the rails' rings run at once. Its pace is the slowest NIC flow of those rings
    on the simulated fabric (contention included). SHARP sends the buffer up once and gets it back once, half
    a ring's NIC bytes. busbw as nccl-tests defines it for ``nodes`` ranks."""
    algo = "sharp" if sharp else "ring"
    est = allreduce_on_fabric(fab, nbytes, algorithm=algo, system=system, nic_link=nic, routing=routing,
                              placement=placement, seed=seed)
    factor = 2 * (fab.nodes - 1) / fab.nodes
    return _RailAllReduce(algo, est.net_rate_GBps * (factor if sharp else 1.0))


def _dp_window_s(step: training.StepTime, zero_stage: int) -> float:
    """Compute the DP collective can hide behind, as in :func:`nvcourse.training.step_time`."""
    if zero_stage == 3:
        return step.compute_s
    flops = training.data()["flops"]
    return step.compute_s / step.micro_batches * flops["backward_per_param_per_token"] / flops["per_param_per_token"]


def fabric_gate(report: Report, fabric: FabricChoice | None = None, *, min_busbw_fraction: float = 0.8) -> FabricResult:
    """Gates ``"fabric busbw"`` (delivered / reference bus bandwidth >= ``min_busbw_fraction``) and
    ``"fabric step"`` (scaling efficiency with that bandwidth >= the targets' ``min_efficiency``).

    The all-reduce runs over every NIC of the job's ``gpus / gpus_per_host`` nodes at the DP gradient buffer per
    GPU (``params / (tp·pp) · 2`` bytes). When TP fills the node (one DP rank per node), it is one ring per rail
    across the nodes, paced by the NIC (:func:`_per_rail_allreduce`); otherwise NCCL's pick over all the GPUs.
    The step's DP all-reduce is scaled by (bus bandwidth the training model assumed: the system's own NIC,
    reference fabric) / (delivered bus bandwidth), an approximation good for the large, bandwidth-bound gradient
    buffers. A node is a host of ``nics_per_host`` NICs; for GB200 NVL72 that is
    a tray of 4 GPUs, so traffic between the trays of one rack is counted as fabric traffic although it could
    stay on NVLink (pessimistic for NVL72).
    """
    fabric = FabricChoice() if fabric is None else fabric
    thr = fraction("min_busbw_fraction", min_busbw_fraction)
    d, step = report.design, report.step
    sysm = catalog.get_system(d.system)
    nodes = max(1, d.gpus // sysm.gpus_per_host)
    spec = training.get_model(report.targets.model)
    nbytes = spec.params / (d.tp * d.pp) * training.data()["defaults"]["bytes_per_element"]
    link = catalog.get_link(fabric.nic)
    radix = fabric.switch.ports
    window = _dp_window_s(step, d.zero_stage)
    if nodes < 2:
        gates = (Gate("fabric busbw", True, _("one node: no fabric traffic"),
                      _("≥ {share} of reference").format(share=pct(thr))),
                 Gate("fabric step", True, pct(step.efficiency), f"≥ {pct(report.targets.min_efficiency)}"))
        return FabricResult(fabric, nodes, nbytes, "none", math.nan, math.nan, step.dp_comm_s, step.dp_exposed_s,
                            step.total_s, step.efficiency, gates)

    def build(port_GBps: float, layout: str, oversub: float):
        return fat_tree(nodes, radix=radix, port_GBps_dir=port_GBps, rails=sysm.nics_per_host, layout=layout,
                        oversubscription=oversub)

    # TP filling the node leaves one DP rank per node: per-rail rings, paced by the NIC, not NVLink
    allreduce = _per_rail_allreduce if step.placements["dp"].per_node == 1 else _best_allreduce
    est = allreduce(build(link.line_GBps_dir, fabric.layout, fabric.oversubscription), nbytes, d.system,
                    fabric.nic, fabric.routing_used, fabric.placement, fabric.seed, fabric.sharp)
    ref = allreduce(build(link.line_GBps_dir, "rail", 1.0), nbytes, d.system, fabric.nic, "ideal", "packed",
                    fabric.seed, False)
    own = catalog.get_link(sysm.nic_link)
    assumed = ref if own.id == link.id else allreduce(build(own.line_GBps_dir, "rail", 1.0), nbytes, d.system,
                                                      own.id, "ideal", "packed", fabric.seed, False)
    dp_comm = step.dp_comm_s * assumed.busbw_GBps / est.busbw_GBps
    exposed = max(0.0, dp_comm - window)
    total = step.total_s - step.dp_exposed_s + exposed
    eff = step.efficiency * step.total_s / total
    ratio = est.busbw_GBps / ref.busbw_GBps
    gates = (
        Gate("fabric busbw", ratio >= thr,
             _("{busbw} GB/s ({share} of {reference}), {algorithm}").format(
                 busbw=num(est.busbw_GBps, ".0f"), share=pct(ratio, percent_spec(ratio, thr)),
                 reference=num(ref.busbw_GBps, ".0f"), algorithm=est.algorithm),
             _("≥ {share} of non-blocking + adaptive routing, {nodes} nodes, {placement}").format(
                 share=pct(thr), nodes=nodes, placement=_("random placement") if fabric.placement == "random"
                 else _("packed placement")),
             _("adaptive routing (on InfiniBand: enabled in the switches) or packet spraying, on RoCE more "
             "flows for ECMP to hash (NCCL_IB_QPS_PER_CONNECTION, E-ECMP), a topology-aware scheduler (packed "
             "nodes), SHARP (with its aggregation manager and NCCL plugin), less oversubscription")),
        Gate("fabric step", eff >= report.targets.min_efficiency,
             _("{efficiency} (DP all-reduce {comm} s, {exposed} s exposed)").format(
                 efficiency=pct(eff, percent_spec(eff, report.targets.min_efficiency)), comm=num(dp_comm, ".2f"),
                 exposed=num(exposed, ".2f")),
             f"≥ {pct(report.targets.min_efficiency)}",
             _("more delivered bandwidth (see fabric busbw), a faster NIC, or a larger overlap window (more "
             "micro-batches, ZeRO-3 prefetch)")),
    )
    return FabricResult(fabric, nodes, nbytes, est.algorithm, est.busbw_GBps, ref.busbw_GBps, dp_comm, exposed,
                        total, eff, gates)


# ------------------------------------------------------------------------------------------------ isolation


@dataclass(frozen=True)
class IsolationTargets:
    """Tenancy requirements: does the job share its fabric, the slowdown a neighbour may cause (fraction), the
    QoS the fabric uses (``"none"``, ``"ets"``, ``"strict"``) and the job's share of a link under ETS, and the
    address the rendezvous (MASTER_ADDR) binds to."""

    shared_fabric: bool = True
    max_slowdown: float = 0.10
    qos: str = "ets"
    victim_share: float = 0.5
    master_addr: str = "10.0.0.1"

    def __post_init__(self) -> None:
        number("max_slowdown", self.max_slowdown, positive=True)
        choice("qos", self.qos, isolation.QOS_MODES)
        isolation.exposure(self.master_addr)


@dataclass(frozen=True)
class IsolationResult:
    targets: IsolationTargets
    slowdown_without_qos: float
    slowdown_with_qos: float
    exposure: str
    partition: str
    gates: tuple[Gate, ...]

    @property
    def passed(self) -> bool:
        return _gates_passed(self.gates)


def isolation_requirements(report: Report, fabric: FabricChoice | None = None,
                           targets: IsolationTargets | None = None) -> IsolationResult:
    """The noisy-neighbour slowdown of the job's DP gradient all-reduce (chapter 08b's two-tenant fabric:
    :func:`nvcourse.isolation.noisy_neighbour` on the design's system, 2:1 top-of-rack, whatever ``fabric`` is) with
    ``qos="none"`` and with the targets' QoS; where the rendezvous address is reachable from; the partitioning
    the fabric's kind offers (``fabric.nic``)."""
    fabric = FabricChoice() if fabric is None else fabric
    t = IsolationTargets() if targets is None else targets
    d = report.design
    act = training.data()["defaults"]["bytes_per_element"]
    nbytes = training.get_model(report.targets.model).params / (d.tp * d.pp) * act
    none = isolation.noisy_neighbour(nbytes, qos="none", system=d.system).slowdown
    qos = isolation.noisy_neighbour(nbytes, qos=t.qos, victim_share=t.victim_share, system=d.system).slowdown
    where = isolation.exposure(t.master_addr)
    raw = isolation.raw()
    if fabric.kind == "infiniband":
        partition = _("one P_Key partition per tenant ({bits}-bit partition numbers), job ports full members; "
                      "P_Keys do not isolate bandwidth: QoS by VL arbitration").format(
            bits=raw["infiniband"]["partition_number_bits"])
    else:
        partition = _("one VLAN (of {vlans}) or VRF per tenant, ACLs, and one ETS traffic class per tenant (of "
                      "{priorities} priorities)").format(vlans=raw["ethernet"]["vlan_ids_usable"],
                                                         priorities=raw["ethernet"]["priorities"])
    if d.system in raw["nvlink_partitions"]:
        p = isolation.partition_sizes(d.system)
        partition += _("; NVLink partitions in whole trays of {gpus} GPUs ({manager})").format(
            gpus=p["gpus_per_tray"], manager=p["manager"])
    slow = qos if t.shared_fabric else 1.0
    gates = (
        Gate("neighbour", slow - 1 <= t.max_slowdown,
             (_("×{qos} with QoS {mode} (×{none} without)").format(qos=num(qos, ".2f"), mode=t.qos,
                                                                    none=num(none, ".2f"))
              if t.shared_fabric else _("dedicated fabric")),
             f"≤ +{pct(t.max_slowdown)}", _("a dedicated fabric or partition of leaves, a larger ETS share, or "
             "strict priority for the job's class")),
        Gate("control plane", where in ("this host only", "private network"),
             f"MASTER_ADDR {t.master_addr}: {exposure_words(where)}",
             _("this host or a private management network"), _("bind the rendezvous to the management network "
             "(MASTER_ADDR, NCCL_SOCKET_IFNAME), firewall the port")),
    )
    return IsolationResult(t, none, qos, where, partition, gates)


# ------------------------------------------------------------------------------------------------ monitoring


@dataclass(frozen=True)
class MonitoringResult:
    bandwidth_fraction: float
    thresholds: counters.Thresholds | None
    counters: tuple[str, ...]

    def text(self) -> str:
        """The monitoring requirement in one line, in the current language."""
        if self.thresholds is None:
            return _("no inter-node traffic: GPU health (XIDs, ECC, throttling) only")
        return _("network-bound share of the step c = {c}: a link may lose f* = s/(c+s) = {loss}; alert "
                 "busbw/baseline < {warn} (warn), < {critical} (critical), step/baseline > {step_warn} / "
                 "{step_critical}; counters: {counters}").format(**self.threshold_fields(),
                                                                 counters="; ".join(self.counters))

    def threshold_fields(self) -> dict[str, str]:
        """The six threshold figures as the texts print them, in the current language: ``c`` (the network-bound
        share of the step, a percentage), ``loss`` (f*, the tolerable bandwidth loss, a percentage), ``warn`` /
        ``critical`` (busbw / baseline) and ``step_warn`` / ``step_critical`` (step time / baseline); ratios are
        unitless. Empty when there are no thresholds (no inter-node traffic)."""
        th = self.thresholds
        if th is None:
            return {}
        return {"c": _share_shown(self.bandwidth_fraction, th.step_ratio_critical - 1, th.tolerable_loss),
                "loss": pct(th.tolerable_loss, ".1%"),
                "warn": num(th.busbw_ratio_warn, ".3f"), "critical": num(th.busbw_ratio_critical, ".3f"),
                "step_warn": num(th.step_ratio_warn, ".3f"), "step_critical": num(th.step_ratio_critical, ".3f")}


def _share_shown(c: float, slowdown: float, loss: float) -> str:
    """``c`` (a fraction of the step) as a percent with the fewest decimals (1 to 4) for which s/(c+s) from the
    printed c rounds to the printed f* (``loss``, one decimal): "4.34%", not "0.04" (which gives 71.4%)."""
    same = [d for d in range(1, 4) if f"{slowdown / (float(f'{c:.{d + 2}f}') + slowdown):.1%}" == f"{loss:.1%}"]
    return pct(c, f".{same[0] if same else 4}%")


def monitoring_requirements(fabric_result: FabricResult, *, slowdown: float | None = None) -> MonitoringResult:
    """Alert thresholds for the job (slowdown default: the policy's, ``data/observability.toml``).

    ``c`` = the DP all-reduce on the fabric / the step: conservative, as if the all-reduce were on the critical
    path (a degraded link first eats the overlap slack, then slows the step).
    """
    kind = "InfiniBand" if fabric_result.fabric.kind == "infiniband" else "RoCE"
    names = tuple(f"{s['fault']} ({s['counter'].split(',')[0].strip()})" for layer in (kind, "NVLink", "GPU")
                  for s in counters.signals(layer))
    if fabric_result.nodes < 2:
        return MonitoringResult(0.0, None, names)
    c = min(1.0, fabric_result.dp_comm_s / fabric_result.step_s)
    return MonitoringResult(c, counters.alert_thresholds(c, slowdown), names)


# ------------------------------------------------------------------------------------------------ decision log


def _gate_text(gates: tuple[Gate, ...]) -> str:
    """The gates in one line: name, verdict, what the design gives and the target, in the current language."""
    return "; ".join(_("{gate} {verdict} ({measured}; target {target})").format(
        gate=gate_name(g.name), verdict=verdict_word(g.passed), measured=g.measured, target=g.target) for g in gates)


def decision_log_entries(*, fabric: FabricResult | None = None, serving: ServingPlan | None = None,
                         isolation_result: IsolationResult | None = None,
                         monitoring: MonitoringResult | None = None) -> str:
    """The new requirements as a Markdown table (``$`` and ``|`` escaped) to follow :func:`capstone.decision_log`."""
    rows = []
    if fabric is not None:
        needs = "; ".join(fabric.fabric.needs)
        rows.append((_("Fabric gate"), fabric.fabric.describe() + (_(" (needs: {needs})").format(needs=needs)
                                                                      if needs else "") + ": "
                     + _gate_text(fabric.gates)))
    if serving is not None:
        head = (_("{model} on {system}: TP {tp} × {replicas} replicas = {gpus} GPUs for {rate} tokens/s").format(
                    model=serving.targets.model, system=serving.system, tp=serving.tp, replicas=serving.replicas,
                    gpus=serving.gpus, rate=_count(serving.targets.tokens_per_s)) if serving.tp is not None
                else _("{model} on {system}: no TP meets the targets").format(model=serving.targets.model,
                                                                              system=serving.system))
        rows.append((_("Serving gate"), head + "; " + _gate_text(serving.gates)))
    if isolation_result is not None:
        rows.append((_("Isolation"), isolation_result.partition + "; " + _gate_text(isolation_result.gates)))
    if monitoring is not None:
        rows.append((_("Monitoring"), monitoring.text()))
    body = "\n".join(f"| **{name}** | {escape_md(text)} |" for name, text in rows)
    return "| {requirement} | {entry} |\n|---|---|\n".format(requirement=_("requirement"), entry=_("entry")) + body
