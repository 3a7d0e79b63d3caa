"""Compare the cost model with published nccl-tests results (``nvcourse/data/measurements.toml``).

Nothing in the model is fitted to these numbers: the model uses only the catalog (line rates, sourced
efficiencies, α) and the constants of :mod:`nvcourse.costmodel.factors`. The comparison is a test
(``tests/test_costmodel_validation.py``): the median absolute error over the bandwidth-bound cases
(size >= 256 MiB) must stay at or below :data:`TARGET_MEDIAN_ABS_ERROR`.

>>> from nvcourse.costmodel import validation
>>> rows = validation.compare()
>>> validation.median_abs_error(rows) <= validation.TARGET_MEDIAN_ABS_ERROR
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from .. import units
from .._data import load
from .model import busbw_factor
from .prediction import predict

__all__ = [
    "BANDWIDTH_BOUND_BYTES",
    "TARGET_MEDIAN_ABS_ERROR",
    "Case",
    "Comparison",
    "cases",
    "unmodelled",
    "compare",
    "median_abs_error",
    "table",
]

#: Sizes from this one up count as bandwidth-bound in the error statistic.
BANDWIDTH_BOUND_BYTES: Final[int] = 256 * 2**20
#: The target: median |predicted - published| / published over bandwidth-bound cases.
TARGET_MEDIAN_ABS_ERROR: Final[float] = 0.15


@dataclass(frozen=True)
class Case:
    id: str
    url: str
    system: str
    gpus: int
    nodes: int
    op: str
    bytes: int
    algo: str
    busbw_GBps: float
    quote: str
    note: str = ""
    busbw_range_GBps: tuple[float, float] | None = None
    time_s: float | None = None

    @property
    def bandwidth_bound(self) -> bool:
        return self.bytes >= BANDWIDTH_BOUND_BYTES


@dataclass(frozen=True)
class Comparison:
    case: Case
    predicted_busbw_GBps: float
    predicted_algo: str

    @property
    def error(self) -> float:
        """(predicted - published) / published; positive = the model is optimistic."""
        return self.predicted_busbw_GBps / self.case.busbw_GBps - 1.0


def raw_measurements() -> dict[str, Any]:
    """The parsed ``data/measurements.toml`` (cached by :func:`nvcourse._data.load`: read-only)."""
    return load("measurements")


def _case(rec: dict[str, Any]) -> Case:
    nbytes = units.parse_size(rec["size"], what=f"measurements {rec['id']} size")
    n = rec["gpus"] * rec["nodes"]
    if "time_s" in rec:
        busbw = nbytes / rec["time_s"] * busbw_factor(rec["op"], n) / 1e9
    else:
        busbw = float(rec["busbw_GBps"])
    rng = rec.get("busbw_range_GBps")
    return Case(
        id=rec["id"], url=rec["url"], system=rec["system"], gpus=rec["gpus"], nodes=rec["nodes"], op=rec["op"],
        bytes=nbytes, algo=rec.get("algo", "nccl"), busbw_GBps=busbw, quote=rec.get("quote", ""),
        note=rec.get("note", ""), busbw_range_GBps=tuple(rng) if rng else None, time_s=rec.get("time_s"),
    )  # fmt: skip


def cases() -> list[Case]:
    """The published cases that the model can be compared with."""
    return [_case(r) for r in raw_measurements()["cases"]]


def unmodelled() -> list[dict[str, str]]:
    """Published numbers that have no catalog system (or need an algorithm the model lacks), with why."""
    return list(raw_measurements().get("unmodelled", []))


def compare(selected: list[Case] | None = None) -> list[Comparison]:
    """Predict every case with the algorithm the source names (``nccl`` = NCCL's choice under the model)."""
    out = []
    for c in selected if selected is not None else cases():
        p = predict(c.op, c.system, c.gpus, c.bytes, nodes=c.nodes, algo=c.algo)
        out.append(Comparison(c, p.busbw_GBps, p.algo))
    return out


def median_abs_error(rows: list[Comparison], *, bandwidth_bound_only: bool = True) -> float:
    """Median of |error| over the (bandwidth-bound) rows."""
    errs = [abs(r.error) for r in rows if r.case.bandwidth_bound or not bandwidth_bound_only]
    if not errs:
        raise ValueError("no cases to compare")
    return float(np.median(errs))


def table(rows: list[Comparison] | None = None) -> str:
    """A plain-text table: case, size, predicted and published busbw, error."""
    rows = compare() if rows is None else rows
    lines = [f"{'case':38s} {'size':>9s} {'algo':>6s} {'pred GB/s':>10s} {'publ GB/s':>10s} {'error':>7s}"]
    for r in rows:
        mark = "" if r.case.bandwidth_bound else "  (latency regime, not in median)"
        lines.append(
            f"{r.case.id:38s} {units.format_size(r.case.bytes):>9s} {r.predicted_algo:>6s} "
            f"{r.predicted_busbw_GBps:10.1f} {r.case.busbw_GBps:10.1f} {r.error:+7.1%}{mark}"
        )
    lines.append(f"median |error| (>= {units.format_size(BANDWIDTH_BOUND_BYTES)}): {median_abs_error(rows):.1%}")
    return "\n".join(lines)
