"""Chapter 04's printed lines: what the notebook's cells print (the blocks of a collective, the recorded ring, the
α-β model's table, the bus-bandwidth factors, one run's result, the emulated links), built here so that each line
reads in the learner's language (the notebooks' code cells are shared by every edition).

Times in seconds, sizes in bytes, rates in B/s (GB/s = 1e9 B/s). English output is the text the cells printed
before; French numbers follow :func:`nvcourse.i18n.localize_numbers`.
"""

from __future__ import annotations

from ..collectives import model as _model
from ..collectives.draw import collective_blocks
from ..collectives.plan import SUPPORTED, busbw_factor, is_power_of_two
from ..i18n import localize_numbers, number
from ..i18n import translate as _
from ..linkmodel import link_params
from ..units import format_rate, format_size, format_time

__all__ = ["algorithms_for", "exchange_lines", "ring_trace_lines", "model_table_lines", "busbw_lines", "run_lines",
           "sweep_title", "timeline_title", "emulated_link_line", "emulated_label", "no_engine_lines"]


def algorithms_for(op: str, nprocs: int) -> list[str]:
    """The shared-memory algorithms that can run ``op`` on ``nprocs`` ranks (rhd needs a power of two)."""
    return [a for a in SUPPORTED[op] if a != "rhd" or is_power_of_two(nprocs)]


def _t(seconds: float) -> str:
    return localize_numbers(format_time(seconds))


def _r(rate_Bps: float) -> str:
    return localize_numbers(format_rate(rate_Bps))


def _s(n_bytes: float) -> str:
    return localize_numbers(format_size(n_bytes))


def _yes(value: bool) -> str:
    return _("True") if value else _("False")


def exchange_lines(op: str = "alltoall", nprocs: int = 3) -> str:
    """Each rank's blocks before and after ``op`` on ``nprocs`` ranks (letters: the rank a block came from; digits:
    the chunk): one line per rank."""
    before, after = collective_blocks(op, nprocs)
    return "\n".join(_("rank {rank}: before {before} -> after {after}").format(
        rank=r, before=[b.label(nprocs) for b in before[r]], after=[b.label(nprocs) for b in after[r]])
        for r in range(nprocs))


def ring_trace_lines(traced, replay) -> str:
    """A traced ring all-reduce (``ProcessGroup.run(..., trace=True)``) and its replay: whether the result is
    correct, the steps that moved data, then per step its phase and each transfer (sender -> receiver: chunk)."""
    lines = [_("correct: {correct}, steps with transfers: {steps}").format(correct=_yes(traced.correct),
                                                                            steps=replay.nsteps),
             _("step  transfers (sender -> receiver: chunk)")]
    for k, frame in enumerate(replay.frames, start=1):
        moves = ", ".join(f"{t['src']}->{t['dst']}: {t['chunk']}" for t in sorted(frame["transfers"],
                                                                                 key=lambda t: t["src"]))
        lines.append(f"{k:4d}  {frame['phase']:15s} {moves}")
    return "\n".join(lines)


def model_table_lines(link_id: str = "nvlink4", links: int = 18, nprocs: int = 4,
                      sizes: tuple[int, ...] = (2**12, 2**18, 2**24, 2**30), op: str = "allreduce") -> str:
    """The α-β model's time of ``op`` with each algorithm on ``nprocs`` ranks joined by ``links`` × ``link_id``
    (α and β from the catalog), for each size in bytes: a header line, then one line per size."""
    link, algos = link_params(link_id, links=links), algorithms_for(op, nprocs)
    lines = [_("alpha = {alpha}, beta = {beta} per direction, p = {p}").format(
        alpha=_t(link.alpha_s), beta=_r(link.beta_Bps), p=nprocs),
        format(_("size"), ">9s") + "".join(f"{a:>10s}" for a in algos)]
    for n in sizes:
        times = [_model.predict(op, a, nprocs, n, link.alpha_s, link.beta_Bps) for a in algos]
        lines.append(f"{_s(n):>9s}" + "".join(f"{_t(t):>10s}" for t in times))
    return "\n".join(lines)


def busbw_lines(ops: tuple[str, ...] = ("allreduce", "reducescatter", "allgather", "broadcast"),
                procs: tuple[int, ...] = (2, 4, 8, 72), nbytes: int = 2**30, seconds: float = 5.0e-3,
                ranks: int = 8) -> str:
    """nccl-tests' bus-bandwidth factor f(p) of each operation for each rank count, then a worked example: the
    algbw and busbw of an all-reduce of ``nbytes`` on ``ranks`` ranks that took ``seconds``."""
    lines = [f"{op:14s}" + "  ".join(f"f(p={p}) = {number(busbw_factor(op, p), '.3f')}" for p in procs)
             for op in ops]
    lines.append("\n" + _("Example: a {size} all-reduce on {ranks} ranks in {time}: algbw = {algbw}, "
                          "busbw = {busbw}").format(size=_s(nbytes), ranks=ranks, time=_t(seconds),
                                                    algbw=_r(nbytes / seconds),
                                                    busbw=_r(nbytes / seconds * busbw_factor("allreduce", ranks))))
    return "\n".join(lines)


def run_lines(result) -> str:
    """One run's result (``ProcessGroup.run``): correct or not, its median time over its calls, then its algbw
    and busbw (GB/s) and the factor between them."""
    return "\n".join([
        _("correct: {correct}   time: {time} (median of {n} calls)").format(
            correct=_yes(result.correct), time=_t(result.time_s), n=len(result.times_s)),
        _("algbw = {algbw} GB/s, busbw = algbw x {f} = {busbw} GB/s").format(
            algbw=number(result.algbw_GBps, ".2f"), f=number(busbw_factor(result.op, result.procs), "g"),
            busbw=number(result.busbw_GBps, ".2f"))])


def sweep_title(op: str, algo: str, nprocs: int) -> str:
    """The title of a sweep's table: the operation, the algorithm, the process count, float32, shared memory."""
    return _("{op}, {algo}, {n} procs, float32 (shared memory)").format(op=op, algo=algo, n=nprocs)


def timeline_title() -> str:
    """The title of the recorded ring all-reduce's timeline."""
    return _("the recorded ring all-reduce: one bar per step (label = peer read from)")


def emulated_label(kind: str, link_name: str) -> str:
    """The name of an emulated link: ``kind`` is ``"pcie"`` (PCIe-like) or ``"nvlink"`` (NVLink-like)."""
    return (_("PCIe-like ({link})") if kind == "pcie" else _("NVLink-like ({link})")).format(link=link_name)


def emulated_link_line(label: str, real, emulation, nprocs: int = 4, nbytes: int = 2**18,
                       slowdown: float = 1000) -> str:
    """One emulated link: the real link's α, β and n_1/2, and the model's ring and tree all-reduce time of
    ``nbytes`` on ``nprocs`` ranks over the emulation (slowed ``slowdown`` times)."""
    pred = {a: _model.predict("allreduce", a, nprocs, nbytes, emulation.latency_s, emulation.bandwidth_Bps)
            for a in ("ring", "tree")}
    return _("{label} real: alpha {alpha}, beta {beta}, n_1/2 = {half}; model (x{slowdown}): ring {ring}, "
             "tree {tree}").format(label=f"{label:28s}", alpha=_t(real.alpha_s), beta=_r(real.beta_Bps),
                                   half=_s(real.half_bandwidth_bytes), slowdown=number(slowdown, "g"),
                                   ring=_t(pred["ring"]), tree=_t(pred["tree"]))


def no_engine_lines(mpi_hint: str, torch_hint: str) -> str:
    """What to install to compare with a real library, when neither MPI nor torch is installed."""
    return "\n".join([_("No engine installed. To compare with a real library:"),
                      "  MPI:   " + mpi_hint + _(", then: ") + "nvcourse bench allreduce --backend mpi --procs 2",
                      "  torch: " + torch_hint + _(", then: ") + "nvcourse bench allreduce --backend torch --procs 2"])
