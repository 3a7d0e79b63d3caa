"""The cost of one algorithm: ``t(S) = latency_s + S * s_per_byte`` plus NCCL's size-dependent terms.

A module of its own so that the formulas (:mod:`.model`, :mod:`.protocols`) and the terms they attach
(:mod:`.pipeline`, :mod:`.corrections`) can all use :class:`Cost` without importing each other.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .corrections import ChannelRamp, P2pNetRamp, SizeCorrection
from .pipeline import PipelineFill

__all__ = ["Cost"]


@dataclass(frozen=True)
class Cost:
    """``t(S) = latency_s + S * s_per_byte`` for one algorithm; ``steps`` for the record.

    NCCL's algorithms add size-dependent terms to the straight line: the NVLS pipeline's fill and extra loops
    (``pipeline``) and NCCL's own corrections (``correction``: tree bandwidth at medium sizes, the ring's
    multi-node plateau). :meth:`latency_at` and :meth:`bandwidth_time` give the two terms at a size."""

    latency_s: float
    s_per_byte: float
    steps: int
    #: NCCL's NVLS pipeline, whose fill and extra loops add time that depends on the size (None: no such term)
    pipeline: PipelineFill | None = None
    #: NCCL's size-dependent corrections of this pair (None: the straight line)
    correction: SizeCorrection | None = None
    #: the channels NCCL gives a call of this size (fewer for small calls, each with its share of the bandwidth); for
    #: point-to-point across nodes, the channels of each message and what one channel carries
    ramp: ChannelRamp | P2pNetRamp | None = None
    #: the latency NCCL's tuner charges the pair, where it differs from the time's ``latency_s`` (None: the same):
    #: a net plugin may report NCCL a latency that steers its choice rather than measures the time (AWS EFA, .cloud)
    choice_latency_s: float | None = None
    #: whether the pair is chosen with ``pipeline``'s time (NVLS on one domain: yes, the model's pick; NVLSTree across
    #: nodes: no, NCCL picks by its own formula and the fill only adds to the time)
    pick_with_pipeline: bool = True
    #: seconds per byte of NCCL's own table, where it differs from the time's ``s_per_byte`` (None: the same): NCCL
    #: multiplies its topology search's channels x speed, not the links' rate (.nccl_table)
    choice_s_per_byte: float | None = None

    def latency_at(self, nbytes: ArrayLike) -> NDArray[np.float64] | float:
        """The latency term at ``nbytes`` bytes, seconds."""
        s = np.asarray(nbytes, dtype=float)
        t = self.latency_s * (self.correction.latency_factor(s) if self.correction else np.ones_like(s))
        return float(t) if np.ndim(t) == 0 else t

    def bandwidth_time(self, nbytes: ArrayLike) -> NDArray[np.float64] | float:
        """The size-dependent term at ``nbytes`` bytes (with the NVLS pipeline's fill and extra loops, and a
        point-to-point message's second copy stage), seconds."""
        s = np.asarray(nbytes, dtype=float)
        t = s * self.s_per_byte
        if self.correction is not None:
            t = t / self.correction.bw_factor(s)
        if self.ramp is not None:
            t = t / self.ramp.factor(s)
        if isinstance(self.ramp, P2pNetRamp):
            t = t + self.ramp.fill_s(s)
        if self.pipeline is not None:
            t = t + self.pipeline.extra_s(s, self.s_per_byte)
        return float(t) if np.ndim(t) == 0 else t

    def time(self, nbytes: ArrayLike) -> NDArray[np.float64] | float:
        t = np.asarray(self.latency_at(nbytes)) + np.asarray(self.bandwidth_time(nbytes))
        return float(t) if np.ndim(t) == 0 else t

    def choice_time(self, nbytes: ArrayLike) -> NDArray[np.float64] | float:
        """The time the pair is chosen by: :meth:`time` without the channel ramp, since NCCL picks the (algorithm,
        protocol) pair before it picks the channels the call runs on (src/enqueue.cc: topoGetAlgoInfo)."""
        lat = self.latency_s if self.choice_latency_s is None else self.choice_latency_s
        spb = self.s_per_byte if self.choice_s_per_byte is None else self.choice_s_per_byte
        if self.ramp is None and self.choice_latency_s is None and self.choice_s_per_byte is None and (
                self.pick_with_pipeline):  # fmt: skip
            return self.time(nbytes)
        pipe = self.pipeline if self.pick_with_pipeline else None
        return Cost(lat, spb, self.steps, pipe, self.correction).time(nbytes)

    def nccl_estimate(self, nbytes: ArrayLike) -> NDArray[np.float64] | float:
        """Seconds NCCL's own formulas give for ``nbytes`` as the model reads them: :meth:`time` without the NVLS and
        NVLSTree pipelines' fill and extra loops and without the channel ramp, which those formulas leave out, and
        with NCCL's latency and bandwidth (``choice_latency_s``, ``choice_s_per_byte``) where the model times the pair
        otherwise."""
        lat = self.latency_s if self.choice_latency_s is None else self.choice_latency_s
        spb = self.s_per_byte if self.choice_s_per_byte is None else self.choice_s_per_byte
        if self.pipeline is None and self.ramp is None and self.choice_latency_s is None and (
                self.choice_s_per_byte is None):  # fmt: skip
            return self.time(nbytes)
        return Cost(lat, spb, self.steps, None, self.correction).time(nbytes)

    @property
    def peak_algbw_Bps(self) -> float:
        """S / t as S grows without bound (bytes/s)."""
        return math.inf if self.s_per_byte == 0 else 1.0 / self.s_per_byte
