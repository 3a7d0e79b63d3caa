"""Reliability at scale: failure rates, checkpoint intervals, goodput, slow links and stragglers.

Failures in series
    A synchronous training job stops when *any* of its parts fails, so failure rates add: with a
    per-GPU rate λ (failures per GPU-hour) a job on N GPUs fails at N·λ and its mean time between
    failures is ``M = 1 / (N·λ)``. λ defaults to the Llama 3 405B record (``data/reliability.toml``):
    419 unexpected interruptions in 54 days on 16,384 GPUs.

Checkpointing (δ = time to write a checkpoint, R = restart time, τ = work between checkpoints)
    * Young (1974): ``τ = √(2·δ·M)``.
    * Daly (2006), higher order: ``τ = √(2δM)·[1 + ⅓·√(δ/2M) + (1/9)·(δ/2M)] − δ`` for δ < 2M, else M.
    * Goodput uses Daly's complete model for exponential failures: one segment of τ work plus δ
      checkpoint takes on average ``E = M·e^{R/M}·(e^{(τ+δ)/M} − 1)`` of wall time, so
      ``goodput = τ / E`` (the fraction of wall time that is kept, useful training).

Slow links and stragglers
    A ring all-reduce moves every byte over every link in turn, so it runs at its *slowest* link;
    a synchronous step waits for its *slowest* GPU.

>>> round(cluster_mtbf_hours(16384), 2)        # 54 d x 24 h / 419
3.09
>>> round(young_interval(60, 3 * 3600) / 60, 1)   # δ = 1 min, M = 3 h → minutes
19.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from . import _data
from ._validate import choice, fraction, integer, number
from .costmodel import busbw_factor
from .observability.counters import alert_policy

__all__ = [
    "FailureRecord",
    "Alert",
    "raw",
    "failure_record",
    "failure_rate_per_gpu_hour",
    "cluster_mtbf_hours",
    "expected_interruptions",
    "young_interval",
    "daly_interval",
    "expected_segment_time",
    "goodput",
    "best_goodput",
    "ring_allreduce_time",
    "degraded_link_slowdown",
    "straggler_slowdown",
    "jitter_slowdown",
    "alerts",
    "evaluate_alert",
    "ib_retry_timeout_s",
]

CATEGORIES = ("gpu", "network", "host", "software", "maintenance", "unknown")


def raw() -> dict[str, Any]:
    """The parsed ``data/reliability.toml``."""
    return _data.load("reliability")


@dataclass(frozen=True)
class FailureRecord:
    """A published failure record of one training run."""

    id: str
    name: str
    gpus: int
    gpus_per_node: int
    days: float
    unexpected_interruptions: int
    planned_interruptions: int
    effective_training_fraction: float
    causes: tuple[tuple[str, str, int], ...]

    @property
    def gpu_hours(self) -> float:
        return self.gpus * self.days * 24

    @property
    def mtbf_hours(self) -> float:
        """Mean time between unexpected interruptions of the whole job, hours."""
        return self.days * 24 / self.unexpected_interruptions

    def count(self, categories: tuple[str, ...] | None = None) -> int:
        """Unexpected interruptions whose root cause is in ``categories`` (all when None)."""
        if categories is None:
            return self.unexpected_interruptions
        for c in categories:
            _choice_category(c)
        return sum(n for _, cat, n in self.causes if cat in categories)

    def rate_per_gpu_hour(self, categories: tuple[str, ...] | None = None) -> float:
        return self.count(categories) / self.gpu_hours

    def per_1000_node_days(self, categories: tuple[str, ...] | None = None) -> float:
        nodes = self.gpus / self.gpus_per_node
        return self.count(categories) / (nodes * self.days) * 1000


def _choice_category(c: str) -> None:
    if c not in CATEGORIES:
        raise ValueError(f"categories must be drawn from {', '.join(CATEGORIES)}; got {c!r}")


def failure_record(run_id: str = "llama3-405b") -> FailureRecord:
    """A failure record from the data file (ValueError lists the ids)."""
    runs = raw()["runs"]
    choice("run_id", run_id, runs)
    r = runs[run_id]
    causes = tuple((c["component"], c["category"], int(c["count"])) for c in r["causes"])
    return FailureRecord(
        id=run_id,
        name=_data.shown("reliability", "runs", r)["name"],  # in the reader's language
        gpus=int(r["gpus"]),
        gpus_per_node=int(r["gpus_per_node"]),
        days=float(r["days"]),
        unexpected_interruptions=int(r["unexpected_interruptions"]),
        planned_interruptions=int(r["planned_interruptions"]),
        effective_training_fraction=float(r["effective_training_fraction"]),
        causes=causes,
    )


def failure_rate_per_gpu_hour(categories: tuple[str, ...] | None = None, *, run_id: str = "llama3-405b") -> float:
    """Unexpected interruptions per GPU-hour in a published run (Llama 3: 419 / (16,384 × 1,296 h))."""
    return failure_record(run_id).rate_per_gpu_hour(categories)


def cluster_mtbf_hours(gpus: int, *, rate_per_gpu_hour: float | None = None) -> float:
    """Mean time between job interruptions on ``gpus`` GPUs, hours: 1 / (gpus × λ)."""
    gpus = integer("gpus", gpus)
    lam = (
        failure_rate_per_gpu_hour()
        if rate_per_gpu_hour is None
        else number("rate_per_gpu_hour", rate_per_gpu_hour, positive=True)
    )
    return 1.0 / (gpus * lam)


def expected_interruptions(gpus: int, hours: float, *, rate_per_gpu_hour: float | None = None) -> float:
    """Expected unexpected interruptions of a job of ``gpus`` GPUs running ``hours`` hours."""
    hours = number("hours", hours)
    return hours / cluster_mtbf_hours(gpus, rate_per_gpu_hour=rate_per_gpu_hour)


# ------------------------------------------------------------------------------------------------
# checkpointing


def young_interval(checkpoint_s: float, mtbf_s: float) -> float:
    """Young's optimal compute time between checkpoints, seconds: √(2·δ·M)."""
    d = number("checkpoint_s", checkpoint_s, positive=True)
    m = number("mtbf_s", mtbf_s, positive=True)
    return math.sqrt(2 * d * m)


def daly_interval(checkpoint_s: float, mtbf_s: float) -> float:
    """Daly's higher-order optimal interval, seconds (τ = M when δ ≥ 2M)."""
    d = number("checkpoint_s", checkpoint_s, positive=True)
    m = number("mtbf_s", mtbf_s, positive=True)
    if d >= 2 * m:
        return m
    x = d / (2 * m)
    return math.sqrt(2 * d * m) * (1 + math.sqrt(x) / 3 + x / 9) - d


def expected_segment_time(interval_s: float, *, checkpoint_s: float, restart_s: float, mtbf_s: float) -> float:
    """Expected wall time to finish τ of work and its checkpoint under exponential failures (Daly 2006).

    ``E = M·e^{R/M}·(e^{(τ+δ)/M} − 1)``. With no failures (M → ∞) this tends to τ + δ. When the
    segment is so long (or failures so frequent) that E exceeds a float, returns ``inf``: the work never
    finishes, goodput 0.
    """
    tau = number("interval_s", interval_s, positive=True)
    d = number("checkpoint_s", checkpoint_s)
    r = number("restart_s", restart_s)
    m = number("mtbf_s", mtbf_s, positive=True)
    try:
        return m * math.exp(r / m) * math.expm1((tau + d) / m)
    except OverflowError:  # e^x beyond ~1.8e308: not a real job any more, but a widget can reach it
        return math.inf


def goodput(interval_s: float, *, checkpoint_s: float, restart_s: float, mtbf_s: float) -> float:
    """Fraction of wall time that becomes kept training progress (0–1): τ / E (see module doc)."""
    e = expected_segment_time(interval_s, checkpoint_s=checkpoint_s, restart_s=restart_s, mtbf_s=mtbf_s)
    return float(interval_s) / e if math.isfinite(e) else 0.0


def best_goodput(*, checkpoint_s: float, restart_s: float, mtbf_s: float) -> tuple[float, float]:
    """``(interval_s, goodput)`` at Daly's interval: the goodput a well-tuned job can expect."""
    tau = daly_interval(checkpoint_s, mtbf_s)
    return tau, goodput(tau, checkpoint_s=checkpoint_s, restart_s=restart_s, mtbf_s=mtbf_s)


def ib_retry_timeout_s() -> float:
    """How long an InfiniBand queue pair retries a silent peer before erroring: 4.096 µs × 2^timeout × (retries)."""
    t = raw()["timeouts"]
    return 4.096e-6 * 2 ** int(t["nccl_ib_timeout_exponent"]) * int(t["nccl_ib_retry_count"])


# ------------------------------------------------------------------------------------------------
# slow links and stragglers


def ring_allreduce_time(
    nbytes: float, ranks: int, *, alpha_s: float, beta_Bps: float, slowest_link_factor: float = 1.0
) -> float:
    """Ring all-reduce time, seconds: 2(n−1)·α + 2(n−1)/n · S / (β × slowest_link_factor).

    The ring is a pipeline over every link, so the slowest link sets β for everybody.
    ``slowest_link_factor`` = 0.5 means one link runs at half speed (e.g. a lane down, or a NIC at 200 of 400 Gb/s).
    """
    s = number("nbytes", nbytes)
    n = integer("ranks", ranks)
    a = number("alpha_s", alpha_s)
    b = number("beta_Bps", beta_Bps, positive=True)
    f = fraction("slowest_link_factor", slowest_link_factor)
    if n == 1:
        return 0.0
    return 2 * (n - 1) * a + busbw_factor("allreduce", n) * s / (b * f)


def degraded_link_slowdown(
    nbytes: float, ranks: int, *, alpha_s: float, beta_Bps: float, slowest_link_factor: float
) -> float:
    """How many times longer the all-reduce takes with one degraded link (≥ 1; → 1/factor for big messages)."""
    healthy = ring_allreduce_time(nbytes, ranks, alpha_s=alpha_s, beta_Bps=beta_Bps)
    slow = ring_allreduce_time(
        nbytes, ranks, alpha_s=alpha_s, beta_Bps=beta_Bps, slowest_link_factor=slowest_link_factor
    )
    return slow / healthy if healthy > 0 else 1.0


def straggler_slowdown(gpus: int, *, p_slow: float, slow_factor: float) -> float:
    """Expected step-time multiplier when each GPU is independently slow with probability ``p_slow``.

    A synchronous step waits for the slowest GPU: it is ``slow_factor`` × longer whenever at least one
    of the N GPUs is slow, which happens with probability 1 − (1 − p)^N. Expected multiplier:
    ``1 + (slow_factor − 1)·(1 − (1 − p)^N)``.
    """
    n = integer("gpus", gpus)
    p = number("p_slow", p_slow)
    if p > 1:
        raise ValueError(f"p_slow must be a probability in [0, 1]; got {p_slow!r}")
    s = number("slow_factor", slow_factor, positive=True)
    if s < 1:
        raise ValueError(f"slow_factor must be >= 1 (a straggler is slower); got {slow_factor!r}")
    return 1 + (s - 1) * (1 - (1 - p) ** n)


def jitter_slowdown(gpus: int, *, cv: float) -> float:
    """Step-time multiplier from random per-GPU jitter (coefficient of variation ``cv``).

    The expected maximum of N independent normal times is about μ·(1 + cv·√(2 ln N)) for large N
    (the classic extreme-value approximation): even a 2 % jitter costs ~8 % at 16K GPUs.
    """
    n = integer("gpus", gpus)
    cv = number("cv", cv)
    return 1.0 if n == 1 else 1 + cv * math.sqrt(2 * math.log(n))


# ------------------------------------------------------------------------------------------------
# monitoring


@dataclass(frozen=True)
class Alert:
    metric: str
    counter: str
    warn: float
    critical: float
    unit: str
    direction: str
    action: str
    src: str


def _policy_levels(name: str) -> tuple[float, float]:
    """(warn, critical) of one level of the course's single alert policy (``data/observability.toml``)."""
    pol = alert_policy()
    if name == "step_ratio":
        return pol.step_ratio_warn, pol.step_ratio_critical
    if name == "link_downed":
        return pol.link_downed_warn_per_day, pol.link_downed_critical_per_day
    if name == "symbol_errors":
        return pol.symbol_errors_warn_per_hour, pol.symbol_errors_critical_per_hour
    raise ValueError(f"policy must be 'step_ratio', 'link_downed' or 'symbol_errors', got {name!r}")


def alerts() -> list[Alert]:
    """The monitoring rules of ``data/reliability.toml`` (thresholds are labelled assumptions), their texts in the
    reader's language. A rule with a ``policy`` takes its warn and critical levels from the course's one alert
    policy, shared with 08b and 09."""
    out = []
    for a in raw()["alerts"]:
        a = _data.shown("reliability", "alerts", a)  # metric, counter, unit, action: in the reader's language
        if "policy" in a:
            a["warn"], a["critical"] = _policy_levels(a.pop("policy"))
        out.append(Alert(**a))
    return out


def evaluate_alert(alert: Alert, value: float) -> str:
    """'ok', 'warn' or 'critical' for a measured ``value`` of this alert's metric."""
    v = number("value", value)
    if alert.direction == "below":
        return "critical" if v < alert.critical else "warn" if v < alert.warn else "ok"
    return "critical" if v >= alert.critical else "warn" if v >= alert.warn else "ok"
