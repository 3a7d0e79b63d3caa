"""The observability drill: a training job on a small simulated cluster, with one fault injected out of sight.

The learner sees what an operator sees — step times, port and GPU counters, log lines — and names the fault
and the component. :func:`incident` builds one seeded, reproducible incident; :func:`verdict` grades an
answer and says what the evidence was.

The cluster: 8 nodes of 4 GPUs, one 400 Gb/s NIC per GPU, a rail-optimised two-level fat-tree (two scalable
units of 4 nodes, so 8 leaves). The job: every step computes for ``compute_s`` then all-reduces a gradient
bucket with the hierarchical algorithm. Its time comes from the course's models: the fabric model
(:func:`nvcourse.fabric.ring_flows`, routing and max-min fair rates) gives the network rate of a ring step,
the cost model (:func:`nvcourse.costmodel.cost`) turns it into an all-reduce time. Faults change a model
input (a link's capacity, a GPU's clock, an NVLink's bandwidth), so the slowdown is the model's, not typed in.

What is an assumption (a drill choice, not a measurement): the fault magnitudes drawn from the seeded ranges
in ``_RANGES``, the counter noise, and the log lines, which are simulated in the shape of real kernel, NCCL
and PyTorch messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import catalog, costmodel, isolation, reliability
from .._validate import choice
from ..fabric import TIER_NAMES, fat_tree, max_min_rates, ring_flows
from ..i18n import english, number
from ..i18n import translate as _

__all__ = ["FAULTS", "INCIDENTS", "DrillRun", "Verdict", "incident", "verdict", "components", "baseline_step_s",
           "fault_labels"]

FAULTS = ("flapping link", "congested uplink", "throttling GPU", "mis-set P_Key", "NVLink errors")
INCIDENTS = ("A", "B", "C", "D", "E")
NODES, GPUS, SU = 8, 4, 4
SYSTEM = "dgx-h100"
STEPS = 60
NBYTES = 2**31  # gradients all-reduced per step, bytes per GPU (a ~1B-parameter model in bf16)
RAW_BER_SHOWN = 1e-10  # a raw BER at or above this is shown in the port table (the background below it is hidden)
COMPUTE_S = 0.060  # compute per step, seconds (drill choice: about a third of the step is communication)
# seeded ranges of each fault's magnitude (assumptions of the drill)
_RANGES = {
    "flap_down_s": (2.0, 9.0),
    "uplink_util": (0.45, 0.75),
    "clock_ratio": (0.70, 0.85),
    "nvlink_loss": (0.25, 0.45),
}


def fault_labels() -> dict[str, str]:
    """Each fault's key (:data:`FAULTS`, the value the code compares) and its label in the learner's language."""
    return {
        "flapping link": _("flapping link"),
        "congested uplink": _("congested uplink"),
        "throttling GPU": _("throttling GPU"),
        "mis-set P_Key": _("mis-set P_Key"),
        "NVLink errors": _("NVLink errors"),
    }


def components() -> dict[str, list[str]]:
    """Every component the learner may name, by kind (IB ports, leaves, GPUs, nodes)."""
    return {
        "port": [f"node{n}/mlx5_{r}" for n in range(NODES) for r in range(GPUS)],
        "leaf": [f"leaf{i}" for i in range(NODES // SU * GPUS)],
        "gpu": [f"node{n}/gpu{g}" for n in range(NODES) for g in range(GPUS)],
        "node": [f"node{n}" for n in range(NODES)],
    }


def _fabric():
    nic = catalog.get_link(catalog.get_system(SYSTEM).nic_link)
    return fat_tree(NODES, rails=GPUS, nodes_per_su=SU, layout="rail", port_GBps_dir=nic.line_GBps_dir), nic


def _leaf_uplinks(fab, leaf: int) -> np.ndarray:
    lo, _ = fab.link_ends
    return np.flatnonzero((fab.link_tier == TIER_NAMES.index("leaf→spine")) & (lo == leaf))


def _allreduce_s(ring_rate_GBps: float, nvlink_factor: float = 1.0) -> float:
    """Hierarchical all-reduce of NBYTES: the network phase at the ring's rate (cost model), the in-node
    reduce-scatter + all-gather stretched by ``1 / nvlink_factor`` when one node's NVLink is degraded."""
    fab, nic = _fabric()
    cfg = costmodel.configure(SYSTEM, GPUS, NODES, fabric=nic.id, net_Bps_per_gpu=ring_rate_GBps * 1e9 * nic.efficiency)
    total = float(costmodel.cost("allreduce", "hierarchical", cfg).time(NBYTES))
    node = costmodel.configure(SYSTEM, GPUS, fabric=nic.id)
    intra = sum(float(costmodel.cost(op, "ring", node).time(NBYTES)) for op in ("reducescatter", "allgather"))
    return total + intra * (1 / nvlink_factor - 1)


def _ring_rate(uplink_scale: dict[int, float] | None = None) -> float:
    """Slowest inter-node flow of one ring step (GB/s), with some leaves' uplinks scaled down."""
    fab, _ = _fabric()
    flows = ring_flows(fab)
    fi, li = fab.route(*flows, routing="ecmp", seed=0)
    cap = fab.capacity_GBps.copy()
    for leaf, s in (uplink_scale or {}).items():
        cap[_leaf_uplinks(fab, leaf)] *= s
    return float(max_min_rates(flows[0].size, fi, li, cap).min())


def baseline_step_s() -> float:
    """The healthy job's step time (seconds): compute + the modelled all-reduce."""
    return COMPUTE_S + _allreduce_s(_ring_rate())


@dataclass(frozen=True)
class DrillRun:
    """One incident as an operator sees it. ``fault``/``component`` are the hidden answer (not shown by the views).

    ``step_s``: step times (NaN where no step completed); ``ports``/``leaves``/``gpus``: counter growth over the
    window, per component, only counters that moved; ``logs``: log lines.
    """

    incident: str
    seed: int
    step_s: np.ndarray
    baseline_s: float
    ports: dict[str, dict[str, float]]
    leaves: dict[str, dict[str, float]]
    gpus: dict[str, dict[str, float]]
    logs: list[str]
    fault: str = field(repr=False)
    component: str = field(repr=False)
    onset: int = field(repr=False, default=0)
    magnitude: float = field(repr=False, default=0.0)


def _noise(rng, base: float, ber_rng) -> dict:
    """Background every healthy fabric shows: small PortXmitWait everywhere, a raw (pre-FEC) bit error rate on
    every port with one port's well above the rest, one corrected ECC error on one GPU (red herrings: present,
    but nothing a threshold should page for). Raw errors are the ones forward error correction (FEC) fixed: a
    raw BER is the link's margin to trend, not a fault; symbol errors, the ones no physical-layer mechanism
    corrected, stay at zero on a healthy port (source ufm-telemetry in data/observability.toml).

    ``ber_rng`` draws the raw BERs, so they leave the incident's own random stream as it was. The raw BER
    levels (1e-13..1e-11 background, 2e-10..8e-10 on the herring) are assumptions of the drill."""
    comps = components()
    ports = {p: {"xmit_wait_pct": round(float(rng.uniform(0.0, 1.5)), 2)} for p in comps["port"]}
    for p in comps["port"]:
        ports[p]["raw_ber"] = float(f"{10 ** ber_rng.uniform(-13, -11):.1e}")
    herring = comps["port"][int(rng.integers(len(comps["port"])))]
    ports[herring]["raw_ber"] = int(rng.integers(2, 9)) * 1e-10
    leaves = {leaf: {"xmit_wait_pct": round(float(rng.uniform(0.0, 2.0)), 2)} for leaf in comps["leaf"]}
    gpus = {g: {"clock_ratio": 1.0} for g in comps["gpu"]}
    gpus[comps["gpu"][int(rng.integers(len(comps["gpu"])))]]["ecc_sbe"] = 1
    return {"ports": ports, "leaves": leaves, "gpus": gpus}


def incident(name: str, seed: int = 0) -> DrillRun:
    """Incident ``name`` (one of :data:`INCIDENTS`) of drill ``seed``: which fault hides behind which letter,
    where, from which step and how strong are all drawn from the seed."""
    choice("name", name, INCIDENTS)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(_("seed must be an integer >= 0; got {seed}").format(seed=repr(seed)))
    order = np.random.default_rng([int(seed), 8]).permutation(len(FAULTS))
    fault = FAULTS[int(order[INCIDENTS.index(name)])]
    rng = np.random.default_rng([int(seed), INCIDENTS.index(name)])
    base = baseline_step_s()
    jitter = rng.lognormal(0.0, 0.01, STEPS)
    step = base * jitter
    ber_rng = np.random.default_rng([int(seed), INCIDENTS.index(name), 1])
    bg = _noise(rng, base, ber_rng)
    ports, leaves, gpus = bg["ports"], bg["leaves"], bg["gpus"]
    n, r = int(rng.integers(NODES)), int(rng.integers(GPUS))
    onset = int(rng.integers(15, 35))
    lo, hi = _RANGES[
        {
            "flapping link": "flap_down_s",
            "congested uplink": "uplink_util",
            "throttling GPU": "clock_ratio",
            "mis-set P_Key": "flap_down_s",
            "NVLink errors": "nvlink_loss",
        }[fault]
    ]
    mag = float(rng.uniform(lo, hi))
    logs = [
        f"[step 0] torch.distributed: rank 0..{NODES * GPUS - 1} initialised, "
        f"store at 10.0.0.1:{isolation.raw()['control_plane']['torchrun_master_port']} (management network)"
    ]
    if fault == "flapping link":
        comp = f"node{n}/mlx5_{r}"
        t = reliability.raw()["timeouts"]
        per_retry = reliability.ib_retry_timeout_s() / int(t["nccl_ib_retry_count"])
        flaps = sorted(int(k) for k in rng.choice(np.arange(onset, STEPS), size=int(rng.integers(2, 5)), replace=False))
        for k in flaps:
            stall = (
                np.ceil(mag / per_retry) * per_retry
            )  # the QP retransmits after each ACK timeout until the link is back
            step[k] += stall
            logs += [
                f"[step {k}] kernel: mlx5_core node{n}/mlx5_{r}: Port module event: link down",
                f"[step {k}] kernel: mlx5_core node{n}/mlx5_{r}: Port module event: link up",
                f"[step {k}] NCCL WARN NET/IB : mlx5_{r}:1 Got async event : port error (node{n})",
            ]
        ports[comp].update(
            SymbolErrorCounter=int(rng.integers(800, 5000)),  # errors FEC and retransmission could not correct
            LinkErrorRecoveryCounter=len(flaps) + int(rng.integers(1, 4)),
            LinkDownedCounter=len(flaps),
            raw_ber=float(f"{10 ** ber_rng.uniform(-7, -6):.1e}"),  # a degrading cable: FEC's margin used up too
        )
    elif fault == "congested uplink":
        leaf = r + GPUS * int(rng.integers(NODES // SU))
        comp = f"leaf{leaf}"
        slow = COMPUTE_S + _allreduce_s(_ring_rate({leaf: 1 - mag}))
        step[onset:] = slow * jitter[onset:]
        leaves[comp]["xmit_wait_pct"] = round(100 * mag * float(rng.uniform(0.85, 1.0)), 1)
        src_node = (leaf // GPUS) * SU + SU - 1  # the ring's flow that leaves this leaf starts at the SU's last node
        ports[f"node{src_node}/mlx5_{leaf % GPUS}"]["xmit_wait_pct"] = round(
            100 * mag * float(rng.uniform(0.3, 0.5)), 1
        )
    elif fault == "throttling GPU":
        comp = f"node{n}/gpu{r}"
        step[onset:] += COMPUTE_S * (1 / mag - 1) * jitter[onset:]  # a synchronous step waits for the slowest GPU
        gpus[comp].update(clock_ratio=round(mag, 3), thermal_violation_s=round((STEPS - onset) * COMPUTE_S / mag, 2))
    elif fault == "mis-set P_Key":
        comp = f"node{n}"
        step[:] = np.nan  # the first all-reduce never completes
        timeout_ms = int(reliability.raw()["timeouts"]["pytorch_nccl_pg_timeout_s"] * 1000)
        logs += [
            f"[step 0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB (node{n})",
            f"[step 1] NCCL WARN NET/IB : Got completion from peer node{(n + 1) % NODES} "
            f"with status=12 (retry exceeded), node{n}",
            "[step 1] ProcessGroupNCCL watchdog: WorkNCCL(SeqNum=1, OpType=ALLREDUCE) "
            f"ran for {timeout_ms} milliseconds "
            "before timing out; ranks stopped",
        ]
        for rail in range(GPUS):
            ports[f"node{n}/mlx5_{rail}"]["PortRcvConstraintErrors"] = int(rng.integers(40, 255))
    else:  # NVLink errors
        comp = f"node{n}/gpu{r}"
        slow = COMPUTE_S + _allreduce_s(_ring_rate(), nvlink_factor=1 - mag)
        step[onset:] = slow * jitter[onset:]
        gpus[comp].update(
            nvlink_crc_flit_errors=int(rng.integers(2000, 20000)),
            nvlink_replay_errors=int(rng.integers(500, 5000)),
            nvlink_recovery_errors=int(rng.integers(1, 4)),
        )
        logs += [
            f"[step {onset}] kernel: NVRM: Xid (node{n} gpu{r}): 74, NVLink: link error, "
            f"replay/recovery on link {int(rng.integers(catalog.get_gpu(catalog.get_system(SYSTEM).gpu).nvlink_links))}"
        ]
    logs.sort(key=lambda s: int(s.split("]")[0].split()[1]))
    gpus = {k: {c: v for c, v in row.items() if not (c == "clock_ratio" and v == 1.0)} for k, row in gpus.items()}
    return DrillRun(name, int(seed), step, base, ports, leaves, gpus, logs, fault, comp, onset, mag)


@dataclass(frozen=True)
class Verdict:
    """The grade of an answer: ``passed`` when both the fault and the component are right."""

    fault_ok: bool
    component_ok: bool
    evidence: list[str]
    mistake: str = ""

    @property
    def passed(self) -> bool:
        return self.fault_ok and self.component_ok


def _evidence(run: DrillRun) -> list[str]:
    """What the evidence was, in the learner's language (counter names and log words stay as the tools print
    them)."""
    c = run.component
    slow = np.nanmedian(run.step_s[run.onset :]) / run.baseline_s if np.isfinite(run.step_s).any() else float("nan")
    ratio, onset = number(slow, ".2f"), run.onset
    if run.fault == "flapping link":
        p = run.ports[c]
        return [
            _("{component}: LinkDownedCounter +{downed} (the link went down and came back), "
              "SymbolErrorCounter +{symbol} (a physical-layer problem: cable or transceiver)").format(
                component=c, downed=p["LinkDownedCounter"], symbol=p["SymbolErrorCounter"]),
            _("isolated step-time spikes at the same steps as the 'link down' log lines: "
              "the QP retried until the link was back"),
            _("no other port's SymbolErrorCounter moved; a raw (pre-FEC) BER on another port is errors FEC corrected: "
              "margin to trend, not this fault"),
        ]
    if run.fault == "congested uplink":
        return [
            _("{component}: PortXmitWait {wait} % of the time on its uplinks, no error counter moved").format(
                component=c, wait=number(run.leaves[c]["xmit_wait_pct"], "")),
            _("step time x{ratio} from step {onset} on, steadily (congestion, not a failure)").format(
                ratio=ratio, onset=onset),
            _("the host port below it waits less: back-pressure from the leaf, not the cause"),
        ]
    if run.fault == "throttling GPU":
        g = run.gpus[c]
        return [
            _("{component}: clock at {clock} of its maximum, {seconds} s of thermal violation").format(
                component=c, clock=number(g["clock_ratio"], ".0%"), seconds=number(g["thermal_violation_s"], "")),
            _("step time x{ratio} from step {onset}: every rank waits for the slowest GPU").format(
                ratio=ratio, onset=onset),
            _("network counters clean: the fabric is not the problem"),
        ]
    if run.fault == "mis-set P_Key":
        return [
            _("{component}: PortRcvConstraintErrors on all its ports: its packets carry a P_Key not in the job's "
              "partition").format(component=c),
            _("the bootstrap (TCP, management network) worked, the first all-reduce over IB never completed: "
              "the watchdog timed out, no step time"),
            _("fix the partition in the subnet manager (partitions.conf), not the node"),
        ]
    g = run.gpus[c]
    return [
        _("{component}: NVLink CRC {crc}, replays {replays}, recoveries {recoveries}; Xid 74 in the kernel log").format(
            component=c, crc=g["nvlink_crc_flit_errors"], replays=g["nvlink_replay_errors"],
            recoveries=g["nvlink_recovery_errors"]),
        _("step time x{ratio} from step {onset}: replays cut that node's NVLink bandwidth, and the in-node phases "
          "of every all-reduce wait for it").format(ratio=ratio, onset=onset),
        _("InfiniBand counters clean"),
    ]


def verdict(run: DrillRun, fault: str, component: str) -> Verdict:
    """Grade an answer to ``run``: the fault class and the component (e.g. ``"node3/mlx5_2"``, ``"leaf5"``)."""
    choice("fault", fault, FAULTS)
    fault_ok = fault == run.fault
    comp_ok = component == run.component
    mistake = ""
    if (
        not comp_ok
        and run.fault in ("throttling GPU", "NVLink errors")
        and component.startswith(run.component.split("/")[0])
    ):
        mistake = _("Right node, wrong GPU: read the per-GPU rows.")
    elif not comp_ok and run.fault == "congested uplink" and "/mlx5_" in component:
        mistake = _("That host port waits because its leaf's uplinks are full: follow the wait upstream to the leaf.")
    elif fault_ok and not comp_ok and run.fault == "mis-set P_Key" and component.startswith(run.component + "/"):
        mistake = _("In this incident every port of one node lost the job's P_Key: name the node (the subnet "
                    "manager writes the table port by port).")
    elif not comp_ok and set(run.gpus.get(component) or {}) == {"ecc_sbe"}:
        mistake = _("One corrected single-bit ECC error is background noise, not a fault: look for the component "
                    "whose counters moved with the step times.")
    elif not comp_ok and set(run.ports.get(component) or {}) <= {"raw_ber", "xmit_wait_pct"} and (
        (run.ports.get(component) or {}).get("raw_ber", 0.0) >= RAW_BER_SHOWN
    ):
        mistake = _("A raw (pre-FEC) BER counts errors FEC corrected: the link's margin to trend, not a fault. "
                    "A bad link shows SymbolErrorCounter growth (errors nothing corrected) or LinkDowned.")
    elif not fault_ok and fault == "flapping link" and run.fault != "flapping link":
        mistake = _("A flap needs LinkDownedCounter growth and 'link down' log lines at the spiking steps; a raw "
                    "(pre-FEC) BER alone is errors FEC corrected, not a flap.")
    elif not fault_ok:  # a nudge: what the fault picked would have looked like, to compare with what moved
        mistake = _("Check the signature: {signature} Is that what moved here?").format(signature=signature(fault))
    return Verdict(fault_ok, comp_ok, _evidence(run), mistake)


def signature(fault: str) -> str:
    """What ``fault`` (one of :data:`FAULTS`) looks like in the drill (the evidence :func:`_evidence` lists), in the
    learner's language, for a wrong answer's nudge."""
    return {
        "flapping link": _("a flap shows as isolated step-time spikes, with LinkDownedCounter and SymbolErrorCounter "
                           "growing on one host port and 'link down' log lines at the same steps."),
        "congested uplink": _("congestion is a steady step-time rise with PortXmitWait high on a leaf's uplinks and "
                              "no error counter moving."),
        "throttling GPU": _("a throttling GPU is a steady step-time rise with one GPU's clock below its maximum and "
                            "thermal violation time, network counters clean."),
        "mis-set P_Key": _("a wrong partition stops the job before its first step: PortRcvConstraintErrors on all of "
                           "one node's ports and a watchdog timeout, no step times."),
        "NVLink errors": _("NVLink errors show as CRC, replay and recovery counts on one GPU and Xid 74 in the kernel "
                           "log, with a steady step-time rise and InfiniBand counters clean."),
    }[fault]


#: English text of :func:`signature` by fault (kept for code that reads the table).
with english():
    SIGNATURES = {f: signature(f) for f in FAULTS}
