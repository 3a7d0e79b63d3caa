"""``nvcourse predict``: the collective cost model on the command line.

    nvcourse predict allreduce --system dgx-h100 --gpus 8 --bytes 64MiB
    nvcourse predict allgather --system dgx-a100 --gpus 8 --nodes 4 --min-bytes 1KiB --max-bytes 1GiB --json
"""

from __future__ import annotations

import argparse

import numpy as np

from .. import units
from ..i18n import ngettext, number, whole
from ..i18n import translate as _
from ..textio import print_json
from . import launch as launch_mode
from . import model, prediction, tuning

__all__ = ["register", "run", "sweep_sizes"]

_DTYPE_BYTES = 4  # the table's count column is in float32 elements, as nccl-tests' default


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "predict",
        help=_("predict the time, algbw and busbw of a collective (alpha-beta model from the catalog)"),
        description=_(
            "Predict an NCCL-style collective from the hardware catalog. GPUS is GPUs per node, where a node "
            "is one NVLink domain (8 in a DGX, 72 in a GB200 NVL72) or one host without NVLink; NODES such "
            "nodes talk over their NICs. Bandwidths are GB/s (1e9 B/s) per direction; busbw as nccl-tests."
        ),
    )
    p.add_argument("op", choices=model.OPERATIONS, metavar="OP", help=_("one of {choices}").format(
        choices=", ".join(model.OPERATIONS)))
    p.add_argument("--system", required=True, help=_("catalog system id (see `nvcourse systems`)"))
    p.add_argument("--gpus", required=True, type=int, help=_("GPUs per node (per NVLink domain / host)"))
    p.add_argument("--nodes", type=int, default=1, help=_("number of nodes (default 1)"))
    p.add_argument(
        "--fabric", default=None,
        help=_("NIC link id overriding the system's (e.g. ib-ndr, roce-400g), or a cloud fabric that also fixes "
               "the NIC count and the net plugin's latency (efa-p4d, efa-p4de, efa-p5)"),
    )
    size = p.add_mutually_exclusive_group(required=True)
    size.add_argument("--bytes", dest="nbytes", help=_("one size, e.g. 64MiB, 1GB, 4096 (nccl-tests 'size')"))
    size.add_argument("--min-bytes", help=_("smallest size of a sweep"))
    p.add_argument("--max-bytes", help=_("largest size of a sweep"))
    p.add_argument("--step-factor", type=float, default=2.0, help=_("multiply the size by this each row (default 2)"))
    p.add_argument(
        "--algo",
        default="auto",
        help=_(
            "one of {choices}; auto (= nccl) = the fastest (algorithm, protocol) pair among NCCL's own algorithms, "
            "as NCCL's tuner picks; {course} are the course's own (not NCCL's), by name only"
        ).format(choices=", ".join(model.SELECTORS + model.ALGORITHMS), course=", ".join(model.COURSE_ALGORITHMS)),
    )
    p.add_argument(
        "--proto",
        default="auto",
        help=_("one of {choices}: NCCL's protocol (auto = the fastest for the algorithm)").format(
            choices=", ".join(prediction.PROTO_CHOICES)),
    )
    p.add_argument(
        "--launch",
        default="device",
        help=_(
            "one of {choices}: how the run is launched. device (default) = the GPUs' time, as NCCL's tuner "
            "predicts; the others add the host's enqueue floor per call as nccl-tests sees it (single-process = "
            "nccl-tests -g N, process-per-gpu = mpirun/srun -g 1, cuda-graphs = -G)"
        ).format(choices=", ".join(launch_mode.LAUNCH_MODES)),
    )
    p.add_argument(
        "--nccl-version",
        default=None,
        metavar="X.Y",
        help=_(
            "the NCCL release whose tuning tables to use: one of {choices} (X.Y.Z is read as X.Y; default "
            "{default}, the version the data cites)"
        ).format(choices=", ".join(tuning.versions()), default=tuning.DEFAULT_VERSION),
    )
    p.add_argument(
        "--registered",
        action="store_true",
        help=_(
            "send and receive buffers registered as a symmetric window (nccl-tests -R 2): on one NVLink domain with "
            "NCCL 2.27+, allreduce/allgather/reducescatter run NCCL's symmetric-memory kernels (one-shot, two-shot, "
            "NVLS multicast), timed by NCCL's own model of them"
        ),
    )
    p.add_argument(
        "--no-nvls",
        dest="nvls",
        action="store_false",
        help=_(
            "a run with NCCL_NVLS_ENABLE=0: NCCL uses no NVLS, no NVLSTree and no multicast symmetric kernel "
            "(JSON: nvls_enabled false)"
        ),
    )
    p.add_argument("--json", action="store_true", help=_("print JSON instead of a table"))
    p.add_argument("--tuning", metavar="LOG", help=_(
        "an NCCL log with its TUNING table (NCCL_DEBUG_SUBSYS=TUNING): adds NCCL's pick and estimate per size, and "
        "its switch points (JSON: a 'tuning' field per row)"))
    p.set_defaults(handler=run)


def sweep_sizes(min_bytes: int, max_bytes: int, step_factor: float) -> np.ndarray:
    """min, min·f, min·f², ... up to max (inclusive), as whole bytes."""
    if not step_factor > 1.0 or not np.isfinite(step_factor):
        raise ValueError(_("{name} must be a number > 1; got {value}").format(name="step-factor",
                                                                             value=repr(step_factor)))
    if max_bytes < min_bytes:
        raise ValueError(_("max-bytes ({max}) must be >= min-bytes ({min})").format(max=max_bytes, min=min_bytes))
    sizes = []
    s = float(min_bytes)
    while s <= max_bytes * (1 + 1e-12):
        sizes.append(int(round(s)))
        s *= step_factor
        if len(sizes) > 10_000:
            raise ValueError(_("the sweep would have more than 10000 sizes; raise step-factor"))
    return np.array(sorted(set(sizes)), dtype=float)


def _table(rows: list[dict]) -> str:
    first = rows[0]
    launch = "" if first.get("launch", "device") == "device" else _(", launch {launch}").format(launch=first["launch"])
    if not first.get("nvls_enabled", True):
        launch += _(", NVLS off (NCCL_NVLS_ENABLE=0)")
    head = (
        _("# nvcourse predict: {op} on {system}, {gpus} per node x {nodes} = {ranks}, NIC {nic}, algo "
          "{algo}{launch}, NCCL {version}").format(
            op=first["op"], system=first["system"],
            gpus=ngettext("{n} GPU", "{n} GPUs", first["gpus"]).format(n=whole(first["gpus"])),
            nodes=ngettext("{n} node", "{n} nodes", first["nodes"]).format(n=whole(first["nodes"])),
            ranks=ngettext("{n} rank", "{n} ranks", first["ranks"]).format(n=whole(first["ranks"])),
            nic=first["fabric"], algo=first["requested_algo"], launch=launch,
            version=first.get("nccl_version", tuning.DEFAULT_VERSION)) + "\n"
        + _("# model: NCCL's per-(algorithm, protocol) latencies, catalog bandwidths; GB/s = 1e9 B/s per direction; "
            "busbw as nccl-tests") + "\n"
        # the column header stays nccl-tests' own, so the rows line up with a pasted run in any language
        f"#{'size':>14s} {'count':>13s} {'type':>6s} {'time(us)':>11s} {'algbw(GB/s)':>12s} {'busbw(GB/s)':>12s}"
        "  algo/proto"
    )
    lines = [head]
    for r in rows:
        lines.append(
            f"{r['bytes']:15d} {r['bytes'] // _DTYPE_BYTES:13d} {'float':>6s} {r['time_s'] * 1e6:11.2f} "
            f"{r['algbw_GBps']:12.2f} {r['busbw_GBps']:12.2f}  {r['algo']}/{r['proto']}"
            f"{' ' + r['kernel'] if r.get('kernel') else ''}"
        )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    if args.min_bytes is not None:
        if args.max_bytes is None:
            raise ValueError(_("--max-bytes is required with --min-bytes"))
        lo = units.parse_size(args.min_bytes, what="min-bytes")
        hi = units.parse_size(args.max_bytes, what="max-bytes")
        sizes = sweep_sizes(lo, hi, args.step_factor)
        if args.registered:  # per size: the symmetric kernel NCCL picks changes with the size
            rows = [
                prediction.predict(
                    args.op, args.system, args.gpus, float(s), nodes=args.nodes, algo=args.algo, fabric=args.fabric,
                    proto=args.proto, launch=args.launch, nccl_version=args.nccl_version, registered=True,
                    nvls=args.nvls,
                ).to_dict()
                for s in sizes
            ]
        else:
            sw = prediction.predict_sweep(
                args.op, args.system, args.gpus, sizes, nodes=args.nodes, algo=args.algo, fabric=args.fabric,
                proto=args.proto, launch=args.launch, nccl_version=args.nccl_version, nvls=args.nvls,
            )
            rows = sw.rows()
        notes: list[str] = []
        if args.tuning:
            from ..nccl.tuning_compare import attach, format_text

            rows, notes = attach(args.tuning, args.op, rows, nodes=args.nodes, ranks=args.gpus * args.nodes)
        if args.json:
            print_json(rows)
        else:
            print(_table(rows))
            if args.tuning:
                print(format_text(rows, notes, args.tuning))
        return 0
    if args.max_bytes is not None:
        raise ValueError(_("--max-bytes needs --min-bytes (or use --bytes for one size)"))
    nbytes = units.parse_size(args.nbytes, what="bytes")
    p = prediction.predict(
        args.op, args.system, args.gpus, nbytes, nodes=args.nodes, algo=args.algo, fabric=args.fabric,
        proto=args.proto, launch=args.launch, nccl_version=args.nccl_version, registered=args.registered,
        nvls=args.nvls,
    )
    d = p.to_dict()
    notes = []
    if args.tuning:
        from ..nccl.tuning_compare import attach, format_text

        (d,), notes = attach(args.tuning, args.op, [d], nodes=args.nodes, ranks=args.gpus * args.nodes)
    if args.json:
        print_json(d)
    else:
        print(_table([d]))
        if args.tuning:
            print(format_text([d], notes, args.tuning))
        regime = _("latency-bound") if p.regime == "latency-bound" else _("bandwidth-bound")
        print(_("# {regime}: latency {latency} us + bandwidth {bandwidth} us").format(
            regime=regime, latency=number(p.latency_s * 1e6, ".2f"), bandwidth=number(p.bandwidth_s * 1e6, ".2f")))
        if p.host_floor_s > p.device_time_s:
            print(_("# host-bound ({launch}): the host needs {host} us per call, the GPUs {device} us").format(
                launch=p.launch, host=number(p.host_floor_s * 1e6, ".2f"), device=number(p.device_time_s * 1e6, ".2f")))
    return 0
