"""Predictions: the fastest (algorithm, protocol) pair for a collective, at one size or a sweep of sizes.

``auto`` (and its old synonym ``nccl``) chooses as NCCL's tuner does: among NCCL's own algorithms
(:data:`~nvcourse.costmodel.model.NCCL_ALGORITHMS`) and the protocols NCCL enables there, the pair of least
time by NCCL's formula (its latency; on one switch node its table's bandwidth, :mod:`.nccl_table`, elsewhere the
model's). The model's time then adds what NCCL's own estimate leaves out (the NVLS pipeline's fill and extra
loops) and takes the links' rate. ``candidates_estimate_s`` gives NCCL's formula's times
(:meth:`~nvcourse.costmodel.model.Cost.nccl_estimate`) next to the model's, so the difference shows. (Two published
8-H100 all-reduce runs are 6-16 % faster at 2 and 8 MiB than NVLS timed with its fill: the model's fill, not its
pick, is the likelier miss there, since NCCL picks by its formula.)

A named algorithm is costed with its fastest protocol (or the one ``proto`` forces). The course's own
algorithms (rhd, direct, hierarchical) are available by name only and are costed with the catalog's per-step
α (NCCL's Simple constants): NCCL does not have them.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..i18n import translate as _
from . import launch as launch_mode
from . import protocols, symmetric, tuning
from .model import (
    ALGORITHMS,
    NCCL_ALGORITHMS,
    OP_ALGORITHMS,
    SELECTORS,
    Config,
    Cost,
    busbw_factor,
    configure,
    cost,
    why_not,
)

__all__ = ["PROTO_CHOICES", "Prediction", "Sweep", "candidates", "pair_cost", "predict", "predict_sweep"]

#: ``proto`` values: ``auto`` (the fastest protocol) or one of NCCL's.
PROTO_CHOICES: tuple[str, ...] = ("auto",) + tuning.PROTOCOLS


def _check_op(op: str) -> None:
    if op not in OP_ALGORITHMS:
        raise ValueError(_("op must be one of {allowed}; got {value}").format(allowed=", ".join(OP_ALGORITHMS),
                                                                             value=repr(op)))


def _check_algo(algo: str) -> None:
    if algo not in ALGORITHMS and algo not in SELECTORS:
        raise ValueError(_("algo must be one of {allowed}; got {value}").format(
            allowed=", ".join(SELECTORS + ALGORITHMS), value=repr(algo)))


def _check_proto(proto: str) -> None:
    if proto not in PROTO_CHOICES:
        raise ValueError(_("proto must be one of {allowed}; got {value}").format(allowed=", ".join(PROTO_CHOICES),
                                                                                value=repr(proto)))


def pair_cost(op: str, algo: str, proto: str, c: Config) -> Cost:
    """The :class:`Cost` of one (algorithm, protocol) pair: NCCL's formulas for NCCL's algorithms,
    the course's α-β formulas (Simple α) for its own and for point-to-point."""
    if algo in protocols.NCCL_NAMES and op not in ("alltoall", "sendrecv"):
        return protocols.nccl_cost(op, algo, proto, c)
    if proto != "Simple":
        raise ValueError(_("proto {proto}: {algo} for {op} is costed with the Simple protocol only").format(
            proto=repr(proto), algo=algo, op=op))
    return cost(op, algo, c)


def candidates(op: str, algo: str, c: Config, proto: str = "auto") -> list[tuple[str, str]]:
    """The (algorithm, protocol) pairs a selector or a named algorithm chooses from."""
    if algo in SELECTORS:
        pool = [a for a in NCCL_ALGORITHMS[op] if why_not(op, a, c) is None]
        if not pool:  # e.g. a configuration where only the textbook algorithms run
            pool = [a for a in OP_ALGORITHMS[op] if why_not(op, a, c) is None]
    else:
        cost(op, algo, c)  # raises with the reason if it cannot run
        pool = [algo]
    pairs = [(a, p) for a in pool for p in protocols.protocols_for(op, a, c)]
    if proto != "auto":
        pairs = [ap for ap in pairs if ap[1] == proto]
        if not pairs:
            used = sorted({p for a in pool for p in protocols.protocols_for(op, a, c)}, key=tuning.PROTOCOLS.index)
            raise ValueError(_("proto {proto} is not used by {algo} for {op} here; allowed: auto, {used}").format(
                proto=repr(proto), algo=algo, op=op, used=", ".join(used)))
    return pairs


def _key(pair: tuple[str, str]) -> str:
    return f"{pair[0]}/{pair[1]}"


@dataclass(frozen=True)
class Prediction:
    """One predicted collective. Times in seconds; bandwidths in GB/s (1e9 B/s), one direction."""

    op: str
    system: str
    gpus: int
    nodes: int
    bytes: int
    algo: str
    time_s: float
    algbw_GBps: float
    busbw_GBps: float
    ranks: int
    fabric: str
    latency_s: float
    bandwidth_s: float
    regime: str
    requested_algo: str = "auto"
    #: time of every candidate pair, keyed "algo/proto"
    candidates_time_s: dict[str, float] = field(default_factory=dict)
    #: NCCL protocol of the chosen pair (LL, LL128, Simple)
    proto: str = "Simple"
    requested_proto: str = "auto"
    #: False for the course's own algorithms (rhd, direct all-reduce, hierarchical), which NCCL does not have
    nccl_algorithm: bool = True
    #: how the run is launched (see :mod:`nvcourse.costmodel.launch`); ``device``: GPU time only
    launch: str = "device"
    #: the GPUs' time (NCCL's tuner view), seconds; ``time_s`` = max(this, ``host_floor_s``)
    device_time_s: float = 0.0
    #: what the host needs per call in this launch mode, seconds
    host_floor_s: float = 0.0
    #: NCCL's own formulas' time for every candidate pair (the model's time without the NVLS pipeline's fill and
    #: extra loops), keyed "algo/proto", seconds: where its minimum differs from ``algo``, NCCL may pick otherwise
    candidates_estimate_s: dict[str, float] = field(default_factory=dict)
    #: the NCCL release (``X.Y``) whose tuning tables were used
    nccl_version: str = tuning.DEFAULT_VERSION
    #: whether the buffers were registered as a symmetric window (nccl-tests -R 2)
    registered: bool = False
    #: the symmetric-memory kernel NCCL runs (``algo == "symmetric"``), else ""
    kernel: str = ""
    #: whether NCCL may use NVLS, NVLSTree and multicast kernels (False: NCCL_NVLS_ENABLE=0)
    nvls_enabled: bool = True

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _is_nccl(op: str, algo: str) -> bool:
    return algo in NCCL_ALGORITHMS[op]


def _sizes(sizes: ArrayLike) -> NDArray[np.float64]:
    s = np.atleast_1d(np.asarray(sizes, dtype=float))
    if s.ndim != 1 or s.size == 0 or not np.all(np.isfinite(s)) or np.any(s <= 0):
        raise ValueError(_("sizes (bytes) must be a non-empty 1-D array of finite numbers > 0"))
    return s


def predict(
    op: str,
    system: str,
    gpus: int,
    nbytes: int | float,
    nodes: int = 1,
    algo: str = "auto",
    fabric: str | None = None,
    proto: str = "auto",
    launch: str = "device",
    nccl_version: str | None = None,
    registered: bool = False,
    nvls: bool = True,
) -> Prediction:
    """Predict one collective of ``nbytes`` bytes (nccl-tests' size S).

    ``algo``: an algorithm name or ``"auto"`` (NCCL's choice under the model); ``proto``: ``"auto"`` or
    ``LL``/``LL128``/``Simple``. :attr:`Prediction.algo` and :attr:`Prediction.proto` are the pair used.
    ``launch``: ``device`` (GPU time, as NCCL's tuner) or how the run is launched; the pair is still chosen
    on GPU time (as NCCL does) and the time is max(GPU time, the host's floor). ``nccl_version``: the NCCL
    release (``X.Y`` or ``X.Y.Z``) whose tuning tables to use (default: the data's, 2.30). ``registered``: send and
    receive buffers registered as a symmetric window (nccl-tests ``-R 2``): on one NVLink domain with NCCL 2.27+,
    all-reduce, all-gather and reduce-scatter then run NCCL's symmetric kernels (:mod:`.symmetric`; ``algo`` is
    ``"symmetric"``, ``kernel`` names the kernel); elsewhere the usual algorithms. ``nvls=False`` is a run with
    ``NCCL_NVLS_ENABLE=0``: no NVLS, no NVLSTree, no multicast symmetric kernel.

    >>> p = predict("allreduce", "dgx-h100", 8, 2**32, algo="ring")
    >>> round(p.busbw_GBps), p.proto      # 18 NVLink4 x 25 GB/s x 0.824
    (370, 'Simple')
    >>> p = predict("allreduce", "dgx-h100", 8, 8)
    >>> p.algo, p.proto, round(p.time_s * 1e6, 1)
    ('ring', 'LL', 15.0)
    >>> round(predict("allreduce", "dgx-h100", 8, 8, launch="single-process").time_s * 1e6, 1)
    31.6
    """
    _check_op(op)
    _check_algo(algo)
    _check_proto(proto)
    launch_mode.check_launch(launch)
    bad = isinstance(nbytes, bool) or not isinstance(nbytes, (int, float, np.integer, np.floating))
    if bad or not (math.isfinite(nbytes) and nbytes > 0):
        raise ValueError(_("nbytes (message size in bytes) must be a number > 0; got {value}").format(
            value=repr(nbytes)))
    c = _with_nvls(configure(system, gpus, nodes, fabric, nccl_version=nccl_version), nvls)
    if not isinstance(registered, bool):
        raise ValueError(_("registered must be True or False; got {value}").format(value=repr(registered)))
    if registered and symmetric.why_not(op, c) is None:
        return _symmetric(op, system, nbytes, algo, proto, launch, c)
    c = _as_launched(c, launch, registered)
    pairs = candidates(op, algo, c, proto)
    costs = {ap: pair_cost(op, ap[0], ap[1], c) for ap in pairs}
    times = {ap: float(cs.time(nbytes)) for ap, cs in costs.items()}
    estimates = {ap: float(cs.nccl_estimate(nbytes)) for ap, cs in costs.items()}
    # chosen before the channels (the ramp does not change NCCL's pick); the time charged is the model's
    choice = {ap: float(cs.choice_time(nbytes)) for ap, cs in costs.items()}
    best = min(pairs, key=lambda ap: (choice[ap], pairs.index(ap)))
    cs, device_t = costs[best], times[best]
    floor = launch_mode.host_floor_s(launch, c.gpus)
    t = max(device_t, floor)
    algbw = float(nbytes) / t
    lat_part, bw_part = float(cs.latency_at(nbytes)), float(cs.bandwidth_time(nbytes))
    return Prediction(
        op=op, system=system, gpus=c.gpus, nodes=c.nodes, bytes=int(nbytes), algo=best[0], time_s=t,
        algbw_GBps=algbw / 1e9, busbw_GBps=algbw * busbw_factor(op, c.ranks) / 1e9, ranks=c.ranks,
        fabric=c.fabric, latency_s=lat_part, bandwidth_s=bw_part,
        regime="latency-bound" if lat_part >= bw_part else "bandwidth-bound", requested_algo=algo,
        candidates_time_s={_key(ap): v for ap, v in times.items()}, proto=best[1], requested_proto=proto,
        nccl_algorithm=_is_nccl(op, best[0]), launch=launch, device_time_s=device_t, host_floor_s=floor,
        candidates_estimate_s={_key(ap): v for ap, v in estimates.items()}, nccl_version=c.nccl_version,
        registered=registered, nvls_enabled=c.nvls_enabled,
    )  # fmt: skip


def _with_nvls(c: Config, nvls: bool) -> Config:
    """``c`` with NVLS allowed or not (``nvls=False``: NCCL_NVLS_ENABLE=0)."""
    if not isinstance(nvls, bool):
        raise ValueError(_("nvls must be True or False; got {value}").format(value=repr(nvls)))
    return c if nvls else replace(c, nvls_enabled=False)


def _as_launched(c: Config, launch: str, registered: bool) -> Config:
    """``c`` as NCCL meets the call's buffers, where a send/recv inside the node is one copy into the peer's own buffer
    instead of two through the FIFO (:attr:`.Config.p2p_one_copy`, ``[p2p_nvlink]``): from NCCL 2.23, buffers
    registered (``registered``) or captured in a CUDA graph (``launch`` ``cuda-graphs``: nccl-tests' cuMem buffers,
    which NCCL registers); before 2.23, one process driving the GPUs (``single-process``) on GPUs that use P2P write."""
    t = tuning.raw()["p2p_nvlink"]
    if tuning.newer_or_same(c.nccl_version, str(t["registered_since"])):
        once = registered or launch == "cuda-graphs"
    else:
        once = launch == "single-process" and tuning.gpu_arch(c.system.gpu) not in t["p2p_read"]
    return replace(c, p2p_one_copy=True) if once else c


def _symmetric(op: str, system: str, nbytes: float, algo: str, proto: str, launch: str, c: Config) -> Prediction:
    """The prediction of a call on registered buffers that NCCL runs with a symmetric kernel."""
    if algo not in SELECTORS or proto != "auto":
        raise ValueError(
            _("with registered buffers NCCL runs its symmetric kernels, chosen by their own model: algo must be auto "
              "and proto auto; got algo={algo}, proto={proto}").format(algo=repr(algo), proto=repr(proto))
        )
    ks = symmetric.kernels(op, nbytes, c)
    k = symmetric.pick(op, nbytes, c)
    device_t = max(k.time_us * 1e-6, symmetric.line_rate_floor_s(k.name, nbytes, c))
    floor = launch_mode.host_floor_s(launch, c.gpus)
    t = max(device_t, floor)
    algbw = float(nbytes) / t
    lat, bw = k.base_us * 1e-6, device_t - k.base_us * 1e-6
    times = {f"symmetric/{x.name}": x.time_us * 1e-6 for x in ks}
    return Prediction(
        op=op, system=system, gpus=c.gpus, nodes=c.nodes, bytes=int(nbytes), algo="symmetric", time_s=t,
        algbw_GBps=algbw / 1e9, busbw_GBps=algbw * busbw_factor(op, c.ranks) / 1e9, ranks=c.ranks, fabric=c.fabric,
        latency_s=lat, bandwidth_s=bw, regime="latency-bound" if lat >= bw else "bandwidth-bound",
        requested_algo=algo, candidates_time_s=times, proto="LL" if k.ll else "Simple", requested_proto=proto,
        nccl_algorithm=True, launch=launch, device_time_s=device_t, host_floor_s=floor,
        candidates_estimate_s=dict(times), nccl_version=c.nccl_version, registered=True, kernel=k.name,
        nvls_enabled=c.nvls_enabled,
    )  # fmt: skip


@dataclass(frozen=True)
class Sweep:
    """Predictions at many sizes. Arrays are aligned with ``sizes`` (bytes)."""

    op: str
    system: str
    gpus: int
    nodes: int
    fabric: str
    requested_algo: str
    sizes: NDArray[np.float64]
    time_s: NDArray[np.float64]
    algbw_GBps: NDArray[np.float64]
    busbw_GBps: NDArray[np.float64]
    algo: NDArray[np.str_]
    #: time of every candidate algorithm at every size (its fastest protocol), seconds
    times_by_algo: dict[str, NDArray[np.float64]]
    #: latency / seconds-per-byte of each candidate pair, keyed "algo/proto"
    costs: dict[str, Cost]
    proto: NDArray[np.str_] = field(default_factory=lambda: np.array([], dtype=str))
    #: time of every candidate pair at every size, keyed "algo/proto", seconds
    times_by_pair: dict[str, NDArray[np.float64]] = field(default_factory=dict)
    requested_proto: str = "auto"
    launch: str = "device"
    #: the host's floor per call in this launch mode, seconds (``time_s`` = max(GPU time, this))
    host_floor_s: float = 0.0
    #: the NCCL release (``X.Y``) whose tuning tables were used
    nccl_version: str = tuning.DEFAULT_VERSION
    #: whether NCCL may use NVLS and NVLSTree (False: NCCL_NVLS_ENABLE=0)
    nvls_enabled: bool = True

    @property
    def ranks(self) -> int:
        return self.gpus * self.nodes

    def rows(self) -> list[dict[str, Any]]:
        """One JSON-ready dict per size (the same keys as :meth:`Prediction.to_dict` where they apply)."""
        out = []
        for i, s in enumerate(self.sizes):
            a, p = str(self.algo[i]), str(self.proto[i])
            cs = self.costs[f"{a}/{p}"]
            lat_part, bw_part = float(cs.latency_at(s)), float(cs.bandwidth_time(s))
            out.append(
                {
                    "op": self.op, "system": self.system, "gpus": self.gpus, "nodes": self.nodes,
                    "bytes": int(s), "algo": a, "proto": p, "time_s": float(self.time_s[i]),
                    "algbw_GBps": float(self.algbw_GBps[i]), "busbw_GBps": float(self.busbw_GBps[i]),
                    "ranks": self.ranks, "fabric": self.fabric,
                    "regime": "latency-bound" if lat_part >= bw_part else "bandwidth-bound",
                    "requested_algo": self.requested_algo, "requested_proto": self.requested_proto,
                    "launch": self.launch, "host_floor_s": self.host_floor_s, "nccl_version": self.nccl_version,
                    "nvls_enabled": self.nvls_enabled,
                }
            )  # fmt: skip
        return out


def predict_sweep(
    op: str,
    system: str,
    gpus: int,
    sizes: ArrayLike,
    nodes: int = 1,
    algo: str = "auto",
    fabric: str | None = None,
    proto: str = "auto",
    launch: str = "device",
    nccl_version: str | None = None,
    nvls: bool = True,
) -> Sweep:
    """Vectorised :func:`predict` over an array of sizes (bytes); the pair is chosen per size (``nvls``: as in
    :func:`predict`)."""
    _check_op(op)
    _check_algo(algo)
    _check_proto(proto)
    launch_mode.check_launch(launch)
    s = _sizes(sizes)
    c = _as_launched(_with_nvls(configure(system, gpus, nodes, fabric, nccl_version=nccl_version), nvls), launch, False)
    pairs = candidates(op, algo, c, proto)
    costs = {_key(ap): pair_cost(op, ap[0], ap[1], c) for ap in pairs}
    table = np.vstack([np.asarray(costs[_key(ap)].time(s), dtype=float) for ap in pairs])
    choice = np.vstack([np.asarray(costs[_key(ap)].choice_time(s), dtype=float) for ap in pairs])
    pick = np.argmin(choice, axis=0)  # first minimum: ties go to the earlier pair; chosen before the channel ramp
    floor = launch_mode.host_floor_s(launch, c.gpus)
    t = np.maximum(table[pick, np.arange(s.size)], floor)
    algbw = s / t
    names = list(dict.fromkeys(a for a, _ in pairs))
    by_algo = {a: np.min(table[[i for i, ap in enumerate(pairs) if ap[0] == a]], axis=0) for a in names}
    return Sweep(
        op=op, system=system, gpus=c.gpus, nodes=c.nodes, fabric=c.fabric, requested_algo=algo, sizes=s,
        time_s=t, algbw_GBps=algbw / 1e9, busbw_GBps=algbw * busbw_factor(op, c.ranks) / 1e9,
        algo=np.array([a for a, _ in pairs])[pick], times_by_algo=by_algo, costs=costs,
        proto=np.array([p for _, p in pairs])[pick],
        times_by_pair={_key(ap): table[i] for i, ap in enumerate(pairs)}, requested_proto=proto, launch=launch,
        host_floor_s=floor, nccl_version=c.nccl_version, nvls_enabled=c.nvls_enabled,
    )  # fmt: skip
