"""The published points of the validation sweeps, the model's predictions of them, and their statistics per size band.

Types and statistics only (no data loading, no model): :mod:`.sweeps` fills them and prints the report,
:mod:`.appendix` writes the page from them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np

from . import tuning

__all__ = [
    "BANDS", "TARGETS", "OTHER_TARGETS", "LARGE_BYTES", "SweepPoint", "Point", "band_of", "band_medians", "first_runs",
    "system_medians", "run_medians", "signed_medians", "targets_for",
]  # fmt: skip

#: Size bands of the report: (label, lowest size, highest size), bytes, both ends included.
BANDS: Final[tuple[tuple[str, int, int], ...]] = (
    ("<= 64 KiB", 0, 64 * 2**10),
    ("64 KiB-16 MiB", 64 * 2**10 + 1, 16 * 2**20 - 1),
    (">= 16 MiB", 16 * 2**20, 2**63),
)
#: The targets for the median |error| of all-reduce time per band, and per run at >= 1 GiB.
TARGETS: Final[dict[str, float]] = {
    "<= 64 KiB": 0.25, "64 KiB-16 MiB": 0.25, ">= 16 MiB": 0.05, "per system >= 1 GiB": 0.15,
}  # fmt: skip
#: The targets for the other collectives (all-gather, reduce-scatter, all-to-all, broadcast, reduce, send/recv).
OTHER_TARGETS: Final[dict[str, float]] = {"<= 64 KiB": 0.25, "64 KiB-16 MiB": 0.25, ">= 16 MiB": 0.10}
LARGE_BYTES: Final[int] = 2**30
@dataclass(frozen=True)
class SweepPoint:
    """One published (size, time) of a sweep, with the run's description."""

    sweep: str
    url: str
    system: str
    gpus: int
    nodes: int
    op: str
    fabric: str | None
    launch: str
    cuda_graphs: bool
    nccl_version: str
    algo: str
    proto: str
    bytes: int
    time_s: float
    #: False where the model cannot describe the run's transport or forced algorithm (see the data file)
    covered: bool = True
    #: calibration (in-sample) or held_out
    role: str = "calibration"
    #: buffers registered as a symmetric window (nccl-tests -R 2): NCCL's symmetric kernels where they run
    registered: bool = False
    #: the id of the run this one repeats (same system, launch, release and command, run again): shown per run as
    #: run-to-run spread, left out of the band medians so that a configuration counts once however often it ran
    repeat_of: str | None = None
    #: NVLS allowed (False: the run set NCCL_NVLS_ENABLE=0, so NCCL had no NVLS or NVLSTree)
    nvls: bool = True


@dataclass(frozen=True)
class Point:
    """A published point and the model's prediction of it."""

    point: SweepPoint
    predicted_s: float
    algo: str
    proto: str
    #: the NCCL release whose tables the prediction used (the run's, or the nearest the data has)
    nccl_version: str = tuning.DEFAULT_VERSION

    @property
    def error(self) -> float:
        return self.predicted_s / self.point.time_s - 1.0


def first_runs(rows: list[Point]) -> list[Point]:
    """``rows`` without the points of runs that repeat another run (the rows every median is taken over)."""
    return [r for r in rows if r.point.repeat_of is None]


def band_of(nbytes: int) -> str:
    """The label of the band ``nbytes`` falls in."""
    return next(label for label, lo, hi in BANDS if lo <= nbytes <= hi)


def band_medians(rows: list[Point]) -> dict[str, tuple[float, int]]:
    """Median |error| of time and the number of points, per size band."""
    out = {}
    for label, lo, hi in BANDS:
        errs = [abs(r.error) for r in rows if lo <= r.point.bytes <= hi]
        if errs:
            out[label] = (float(np.median(errs)), len(errs))
    return out


def system_medians(rows: list[Point], min_bytes: int = LARGE_BYTES) -> dict[str, tuple[float, int]]:
    """Median |error| per sweep at sizes >= ``min_bytes``."""
    out: dict[str, list[float]] = {}
    for r in rows:
        if r.point.bytes >= min_bytes:
            out.setdefault(r.point.sweep, []).append(abs(r.error))
    return {k: (float(np.median(v)), len(v)) for k, v in out.items()}


def run_medians(rows: list[Point]) -> dict[str, dict[str, tuple[float, int]]]:
    """Per sweep, the median |error| per band (the same keys as :func:`band_medians`)."""
    by_run: dict[str, list[Point]] = {}
    for r in rows:
        by_run.setdefault(r.point.sweep, []).append(r)
    return {k: band_medians(v) for k, v in by_run.items()}


def signed_medians(rows: list[Point]) -> dict[str, float]:
    """Per band, the median of predicted / published time (below 1: the model is too fast)."""
    out = {}
    for label, lo, hi in BANDS:
        ratios = [r.predicted_s / r.point.time_s for r in rows if lo <= r.point.bytes <= hi]
        if ratios:
            out[label] = float(np.median(ratios))
    return out


def targets_for(op: str) -> dict[str, float]:
    """The per-band targets of ``op``: all-reduce's, or the other collectives'."""
    return TARGETS if op == "allreduce" else OTHER_TARGETS
