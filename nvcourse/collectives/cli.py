"""``nvcourse bench``: an nccl-tests-style measurement of collectives on CPU processes.

    nvcourse bench allreduce --procs 4 --algo ring --min-bytes 8 --max-bytes 64MiB
    nvcourse bench allreduce --procs 2 --bytes 64MiB --backend mpi --json

Columns as in nccl-tests: size (B), count (elements), type, time (µs, median over calls of the
slowest rank), algbw = size / time and busbw = algbw × factor (2(n-1)/n allreduce, (n-1)/n
reducescatter and allgather, 1 broadcast), in GB/s = 1e9 B/s, and #wrong (elements that differ from
numpy's answer). ``--json`` prints a list of rows with keys ``op, algo, backend, procs, bytes, count,
dtype, time_s, algbw_GBps, busbw_GBps, correct, wrong, iters``.

Failures: exit 2 for bad arguments and for a size that does not fit in RAM or /dev/shm (checked before
anything is allocated; the message gives the numbers and how to raise the limit), 1 when a worker dies
or times out or an engine is missing (see :mod:`nvcourse.cli`). Ctrl-C or SIGTERM stop the run within
about a second: workers ended, shared memory unlinked, the rows of the sizes already finished printed
(the table is printed row by row; ``--json`` prints the finished rows), then one line saying so and exit
status 130 (143 after SIGTERM).
"""

from __future__ import annotations

import argparse
import sys

from .._validate import choice
from ..i18n import translate as _
from ..nccl.format import format_nccl_tests
from ..textio import print_json
from ..units import format_size, parse_rate, parse_size, parse_time
from . import engines
from . import plan as _plan
from .engines import under_mpirun, under_torchrun
from .group import DEFAULT_ALGO, LinkEmulation, ProcessGroup
from .resources import check_fits, memory_needed
from .results import format_table, table_footer, table_header, table_row

BACKENDS = ("shm", "torch", "mpi")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "bench",
        help=_("measure a collective on CPU processes (nccl-tests style)"),
        description=_("Measure a collective on N CPU processes: shared memory (our algorithms), torch.distributed "
                      "or MPI."),
    )
    p.add_argument("op", metavar="OP", help=_("one of {choices}").format(choices=", ".join(_plan.OPERATIONS)))
    p.add_argument("--procs", "-n", type=int, default=2, help=_("number of processes (default 2)"))
    p.add_argument("--algo", default="auto", help=_("shm algorithm: {choices} or auto (default)").format(
        choices=", ".join(_plan.ALGORITHMS)))
    p.add_argument("--bytes", "-b", dest="nbytes", default=None,
                   help=_("message size S, e.g. 4096, 64KiB, 1GB (default 1MiB)"))
    p.add_argument("--min-bytes", default=None, help=_("sweep from this size ..."))
    p.add_argument("--max-bytes", default=None, help=_("... to this size"))
    p.add_argument("--step-factor", "-f", type=int, default=2, help=_("sweep multiplier (default 2)"))
    p.add_argument("--iters", type=int, default=20, help=_("timed calls per size (default 20)"))
    p.add_argument("--warmup", type=int, default=5, help=_("untimed calls per size (default 5)"))
    p.add_argument("--dtype", default="float32",
                   help=_("element type: {choices}").format(choices=", ".join(_plan.DTYPES)))
    p.add_argument("--backend", default=None,
                   help=_("shm (default), torch (gloo/NCCL) or mpi (mpi4py under mpirun); under torchrun or mpirun "
                          "(e.g. inside 'nvcourse cluster run') the launcher's engine is the default and shm is "
                          "refused"))
    p.add_argument("--emulate-latency", default=None, help=_("per-hop latency added by link emulation, e.g. 50us"))
    p.add_argument("--emulate-bandwidth", default=None, help=_("per-link bandwidth cap, e.g. 500MB/s"))
    p.add_argument("--timeout", type=float, default=10.0,
                   help=_("seconds without progress before giving up (default 10)"))
    p.add_argument("--no-verify", action="store_true", help=_("skip the check against numpy"))
    p.add_argument("--json", action="store_true", help=_("print JSON rows instead of the table"))
    p.add_argument("--format", choices=("table", "nccl-tests"), default="table",
                   help=_("table (default) or nccl-tests' exact format"))
    p.set_defaults(handler=handle)


def sizes_from(args: argparse.Namespace) -> list[int]:
    """The list of sizes in bytes given by --bytes or --min-bytes/--max-bytes/--step-factor."""
    if args.nbytes is not None and (args.min_bytes is not None or args.max_bytes is not None):
        raise ValueError(_("bytes: give either --bytes or --min-bytes/--max-bytes, not both"))
    if args.min_bytes is None and args.max_bytes is None:
        return [parse_size(args.nbytes if args.nbytes is not None else "1MiB", what="bytes")]
    lo = parse_size(args.min_bytes if args.min_bytes is not None else args.max_bytes, what="min-bytes")
    hi = parse_size(args.max_bytes if args.max_bytes is not None else args.min_bytes, what="max-bytes")
    if lo > hi:
        raise ValueError(_("min-bytes must be <= max-bytes; got {min} > {max}").format(min=lo, max=hi))
    if args.step_factor < 2:
        raise ValueError(_("{name} must be an integer >= {minimum}; got {value}").format(
            name="step-factor", minimum=2, value=args.step_factor))
    # lo >= 1 (parse_size refuses 0) and step >= 2: at most log2(hi) + 1 sizes
    sizes, s = [], lo
    while s <= hi:
        sizes.append(s)
        s *= args.step_factor
    return sizes


def resolve_backend(backend: str | None) -> str:
    """The engine to use: the one given, else the launcher's (torchrun: torch, mpirun: mpi), else shm.

    Under a launcher, shm is refused: each launched process would run its own shared-memory group on its own
    node, and the figure would be that node's memory bandwidth reported as if it had crossed the network.
    """
    launcher = "torch" if under_torchrun() else "mpi" if under_mpirun() else None
    if backend is None:
        return launcher or "shm"
    if backend == "shm" and launcher is not None:
        name = "torchrun" if launcher == "torch" else "mpirun"
        raise ValueError(_("backend: shm measures one node's shared memory, not the network between {launcher}'s "
                           "ranks; omit --backend or give --backend {backend}").format(launcher=name,
                                                                                       backend=launcher))
    return backend


def _check_common(args: argparse.Namespace) -> None:
    args.backend = resolve_backend(args.backend)
    choice("op", args.op, _plan.OPERATIONS)
    choice("backend", args.backend, BACKENDS)
    if args.procs < 1 or args.procs > _plan.MAX_PROCS:
        raise ValueError(_("{name} must be an integer from {minimum} to {maximum}; got {value}").format(
            name="procs", minimum=1, maximum=_plan.MAX_PROCS, value=args.procs))
    if args.iters < 1:
        raise ValueError(_("{name} must be >= 1; got {value}").format(name="iters", value=args.iters))
    if args.warmup < 0:
        raise ValueError(_("{name} must be >= 0; got {value}").format(name="warmup", value=args.warmup))
    choice("dtype", args.dtype, _plan.DTYPES)
    if args.timeout <= 0:
        raise ValueError(_("{name} must be > 0 seconds; got {value}").format(name="timeout", value=args.timeout))
    if args.backend != "shm":
        if args.algo != "auto":
            raise ValueError(_("algo is chosen by the engine for backend {backend}; omit --algo (got {value})").format(
                backend=args.backend, value=repr(args.algo)))
        if args.emulate_latency or args.emulate_bandwidth:
            raise ValueError(_("emulate-latency/emulate-bandwidth work with backend shm only; got backend "
                               "{backend}").format(backend=args.backend))
    elif args.algo != "auto":
        _plan.check_args(args.op, args.algo, args.procs, args.dtype)


def _emulation(args: argparse.Namespace):
    if args.emulate_latency is None and args.emulate_bandwidth is None:
        return None
    lat = parse_time(args.emulate_latency, what="emulate-latency") if args.emulate_latency is not None else 0.0
    bw = (parse_rate(args.emulate_bandwidth, what="emulate-bandwidth") if args.emulate_bandwidth is not None
          else float("inf"))
    return LinkEmulation(latency_s=lat, bandwidth_Bps=bw)


class _Progress:
    def __init__(self, total: int) -> None:
        self.total, self.tty = total, sys.stderr.isatty()

    def __call__(self, done: int, nbytes: int) -> None:
        if self.total < 2 or not self.tty:  # on a terminal only: a log or a pipe gets the rows and errors alone
            return
        msg = f"bench: {done}/{self.total} sizes ({format_size(nbytes)})"
        sys.stderr.write("\r" + msg + ("\n" if done == self.total else ""))
        sys.stderr.flush()


def run_shm(op: str, sizes: list[int], procs: int, *, algo: str = "auto", iters: int = 20, warmup: int = 5,
            dtype: str = "float32", emulation=None, timeout_s: float = 10.0, verify: bool = True,
            progress=None, rows: list[dict] | None = None, on_row=None) -> list[dict]:
    """Rows for each size with one :class:`ProcessGroup` (started once). Each finished row is appended to
    ``rows`` (when given, so a caller keeps them after an interrupt) and passed to ``on_row``."""
    rows = [] if rows is None else rows
    with ProcessGroup(procs, timeout_s=timeout_s, emulation=emulation, recover_on_interrupt=False) as pg:
        for i, s in enumerate(sizes):
            res = pg.run(op, s, algo=algo, iters=iters, warmup=warmup, dtype=dtype, verify=verify)
            rows.append(res.row())
            if on_row:
                on_row(rows[-1])
            if progress:
                progress(i + 1, s)
    return rows


def check_memory(args: argparse.Namespace, sizes: list[int]) -> None:
    """Exit-2 error before any worker starts when the largest size does not fit in RAM or /dev/shm."""
    s = max(sizes)
    if args.backend == "shm":
        shm, private = memory_needed(args.op, args.procs, s, algo=args.algo, dtype=args.dtype,
                                     verify=not args.no_verify)
    else:  # each engine process holds an input, an output and the expected answer
        shm, private = 0, 3 * args.procs * s
    param = "max-bytes" if args.min_bytes is not None or args.max_bytes is not None else "bytes"
    check_fits(shm, private, f"{args.op} of {format_size(s)} on {args.procs} procs", param=param)


def _title(args: argparse.Namespace, emulation) -> str:
    algo = args.algo
    if args.backend == "shm" and algo == "auto":
        algo = DEFAULT_ALGO.get(args.op, algo)
    elif args.backend != "shm":
        algo = "gloo or nccl" if args.backend == "torch" else "mpi"
    emu = ""
    if emulation is not None:
        emu = f", emulated link {emulation.latency_s * 1e6:g} us + {emulation.bandwidth_Bps / 1e9:g} GB/s"
    return (f"nvcourse bench {args.op}: backend {args.backend}, algo {algo}, {args.procs} procs, "
            f"{args.dtype}, iters {args.iters}, warmup {args.warmup}{emu}")


def _emit(line: str) -> None:
    print(line, flush=True)


def handle(args: argparse.Namespace) -> int:
    _check_common(args)
    sizes = sizes_from(args)
    emulation = _emulation(args) if args.backend == "shm" else None
    check_memory(args, sizes)
    progress = _Progress(len(sizes))
    rows: list[dict] = []
    header_done = False
    # The table is printed row by row, so an interrupt keeps what is finished; JSON and nccl-tests' format at the end.
    streaming = not args.json and args.format == "table"
    try:
        if args.backend == "shm":
            if streaming:
                for line in table_header(_title(args, emulation)):
                    _emit(line)
                header_done = True
            run_shm(args.op, sizes, args.procs, algo=args.algo, iters=args.iters, warmup=args.warmup,
                    dtype=args.dtype, emulation=emulation, timeout_s=args.timeout, verify=not args.no_verify,
                    progress=progress, rows=rows, on_row=(lambda r: _emit(table_row(r))) if streaming else None)
        else:
            def on_row(row: dict) -> None:
                nonlocal header_done
                rows.append(row)
                if streaming:
                    if not header_done:
                        for line in table_header(_title(args, emulation)):
                            _emit(line)
                        header_done = True
                    _emit(table_row(row))

            fn = engines.run_torch if args.backend == "torch" else engines.run_mpi
            got = fn(args.op, sizes, args.procs, iters=args.iters, warmup=args.warmup, dtype=args.dtype,
                     progress=len(sizes) > 1 and sys.stderr.isatty(), on_row=on_row)
            if got is None:  # a non-zero rank under torchrun/mpirun: rank 0 prints
                return 0
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: keep what finished, then one line (nvcourse.cli)
        _print_rows(args, rows, emulation, header_done, footer=False)
        done = _("bench stopped after {done} of {total} sizes; workers ended, shared memory removed").format(
            done=len(rows), total=len(sizes))
        raise type(exc)(done + (_("; the rows above are complete") if rows else "")) from None
    _print_rows(args, rows, emulation, header_done, footer=True)
    return 0 if all(r["correct"] is not False for r in rows) else 1


def _print_rows(args: argparse.Namespace, rows: list[dict], emulation, header_done: bool, footer: bool) -> None:
    if args.json:
        print_json(rows)
    elif args.format == "nccl-tests":
        print(format_nccl_tests(rows, args.op, args.procs, iters=args.iters, warmup=args.warmup,
                                factor=args.step_factor))
    elif header_done:
        for line in table_footer(rows) if footer else []:
            _emit(line)
    elif rows or footer:
        _emit(format_table(rows, _title(args, emulation)))
    sys.stdout.flush()
