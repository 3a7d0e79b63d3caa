"""``nvcourse nccl-tests FILE|-`` and ``nvcourse ncclog FILE|-``: read nccl-tests output and NCCL INFO logs."""

from __future__ import annotations

import argparse

from .. import catalog, i18n
from ..i18n import data_text, ngettext
from ..i18n import translate as _
from ..textio import print_json, read_input
from . import ncclog, nccltests
from .diagnose import band_name, diagnose
from .signatures import match_text

__all__ = ["register", "read_input", "run_nccl_tests", "run_ncclog"]


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "nccl-tests",
        help=_("read nccl-tests output (all_reduce_perf ...): rows, model overlay, verdict per size band"),
        description=_("Read what an nccl-tests *_perf binary printed (FILE, or - for standard input). Sizes in "
                      "bytes, times in us, bandwidths in GB/s (10^9 B/s) as nccl-tests prints them."),
    )
    p.add_argument("file", metavar="FILE", help=_("a file with nccl-tests output, or - for stdin"))
    p.add_argument("--system", help=_("catalog system id for the model overlay (see `nvcourse systems`)"))
    p.add_argument("--gpus", type=int, help=_("GPUs per node (default: from the device lines)"))
    p.add_argument("--nodes", type=int, help=_("number of nodes (default: from the device lines)"))
    p.add_argument("--json", action="store_true", help=_("print JSON: op, nranks, nccl_version, gpus, rows, "
                                                        "out_of_bounds, avg_busbw_GBps, diagnosis"))
    p.add_argument("--plot", metavar="OUT.png", help=_("write busbw against size with the model overlay"))
    p.set_defaults(handler=run_nccl_tests)
    q = subparsers.add_parser(
        "ncclog",
        help=_("read NCCL_DEBUG=INFO output: version, ranks, network, GDR, transports, channels, NVLS, warnings"),
        description=_("Read NCCL_DEBUG=INFO lines (FILE, or - for standard input), with or without host:pid:tid "
                      "prefixes or mpirun tags, and explain what they show and what looks wrong."),
    )
    q.add_argument("file", metavar="FILE", help=_("a file with NCCL_DEBUG=INFO output, or - for stdin"))
    q.add_argument("--json", action="store_true", help=_("print JSON (the fields and an explanation)"))
    q.set_defaults(handler=run_ncclog)


def _check_positive(name: str, value: int | None) -> None:
    if value is not None and value < 1:
        raise ValueError(_("{name} must be an integer >= {minimum}; got {value}").format(
            name=f"--{name}", minimum=1, value=value))


def run_nccl_tests(args: argparse.Namespace) -> int:
    _check_positive("gpus", args.gpus)
    _check_positive("nodes", args.nodes)
    if args.system is not None and args.system not in catalog.systems():
        raise ValueError(_("{name} must be one of {allowed}; got {value}").format(
            name="--system", allowed=", ".join(catalog.systems()), value=repr(args.system)))
    text = read_input(args.file)
    run = nccltests.read_text(text)
    if run.nranks is None and args.gpus:
        run.nranks = args.gpus * (args.nodes or 1)
    diag = diagnose(run, system=args.system, gpus=args.gpus, nodes=args.nodes)
    diag.signatures = match_text(text, kind="nccl-tests")
    if args.plot and not run.rows:
        raise ValueError(_("--plot needs result rows: this paste has none (it stops before the first size)"))
    if args.plot:
        from .draw import save_overlay

        save_overlay(run, diag, args.plot)
    if args.json:
        print_json({**run.to_json(), "diagnosis": diag.to_json()})
        return 0
    print(format_report(run, diag))
    return 0


def format_report(run, diag) -> str:
    """The human-readable answer: what was read, then findings and verdicts with their sources, in the learner's
    language (texts from the data files through their translation; ``--json`` keeps them in English)."""
    lines = _run_lines(run)
    for n in run.notes:
        lines.append(_("note: {note}").format(note=n))
    if diag.system:
        # a system read from the GPU name alone is a guess (the note below says why): the model line says so too
        system = (_("{system} (assumed from the GPU name)").format(system=diag.system)
                  if diag.system_from == "gpu name" else diag.system)
        lines.append(_("model: {system}, {gpus} per node x {nodes}").format(
            system=system, gpus=ngettext("{n} GPU", "{n} GPUs", _some(diag.gpus)).format(n=i18n.whole(diag.gpus)),
            nodes=ngettext("{n} node", "{n} nodes", _some(diag.nodes)).format(n=i18n.whole(diag.nodes))))
    for f in diag.findings:
        lines.append(_("finding: {finding} -- likely: {cause} [{source}]").format(
            finding=f["finding"], cause=f["cause"], source=f["source"]))
    for b in diag.bands:
        lines.append(_("{band} ({first}-{last} B): {verdict}").format(
            band="  " + band_name(b["band"]), first=i18n.whole(b["sizes"][0]), last=i18n.whole(b["sizes"][1]),
            verdict=b["verdict"]))
        for c in b["causes"]:
            lines.append("    " + _("likely: {cause} [{source}]").format(cause=c["cause"], source=c["source"]))
            if c.get("evidence"):
                lines.append("      " + _("evidence: {evidence}").format(evidence=c["evidence"]))
    for n in diag.notes:
        lines.append(_("note: {note}").format(note=n))
    for sig in diag.signatures:
        # the signature's words come from runbook.toml, English in --json; shown here in the reader's language
        lines.append(_("signature: {title} ('{line}') -- likely: {cause} [{source}]").format(
            title=data_text(sig["title"]), line=sig["line"][:100], cause=data_text(sig["cause"]), source=sig["source"]))
        lines.append(f"{'':>11}" + _("fix: {fix}").format(fix=data_text(sig["fix"])))
    return "\n".join(lines)


def _some(n: int | None) -> int:
    """The count that picks a message's plural form: ``n``, or the plural when not known (``None GPUs``)."""
    return 2 if n is None else n


def _run_lines(run) -> list[str]:
    """What the paste says: the operation, ranks, GPUs, hosts, NCCL version, the rows and nccl-tests' footer."""
    if run.op is None and tuple(run.op_candidates) == ("scatter", "gather"):
        op = _("scatter or gather (redop none, a root, busbw = (n-1)/n x algbw: nccl-tests prints the same columns "
               "for both; the command line, if pasted, names it)")
    elif run.op is None:
        op = _("unknown (candidates: {candidates})").format(candidates=", ".join(run.op_candidates) or _("none"))
    else:
        op = run.op
    sources = {"header": _(" (from the header)"), "command line": _(" (from the command line)"),
               "busbw/algbw ratio": _(" (from the busbw/algbw ratio and the redop and in-place columns)"),
               "count/size": _(" (from the count/size)")}
    source = ""
    if run.op_source:
        source = sources.get(run.op_source) or _(" (from the {source})").format(source=run.op_source)
    ranks = i18n.whole(run.nranks) if run.nranks is not None else _("not printed")
    lines = [_("op: {op}").format(op=op) + source,
             _("ranks: {ranks}; GPUs: {gpus}; hosts: {hosts}; NCCL {version}").format(
                 ranks=ranks, gpus=", ".join(run.gpus) or "-", hosts=i18n.whole(len(run.hosts)) if run.hosts else "-",
                 version=run.nccl_version or _("version not printed"))]
    if run.rows:
        lines.append(_("rows: {sizes}, {first} to {last} B; largest-size busbw {busbw} GB/s (out-of-place)").format(
            sizes=ngettext("{n} size", "{n} sizes", len(run.rows)).format(n=i18n.whole(len(run.rows))),
            first=i18n.whole(run.rows[0]["bytes"]), last=i18n.whole(run.rows[-1]["bytes"]),
            busbw=i18n.number(run.rows[-1]["oop_busbw_GBps"], "")))
    else:
        lines.append(_("rows: none (the note below says why)"))
    if run.avg_busbw_GBps is not None:
        lines.append(_("Avg bus bandwidth (as printed): {busbw} GB/s; out of bounds: {oob}").format(
            busbw=i18n.number(run.avg_busbw_GBps, "g"), oob=i18n.whole(run.out_of_bounds)))
    return lines


def run_ncclog(args: argparse.Namespace) -> int:
    log = ncclog.read_text(read_input(args.file))
    if args.json:
        print_json(log.to_json())
        return 0
    print(ncclog.explain(log))
    for p in log.problems:
        if p.get("source"):
            print("  - " + _("{problem}: likely {cause} [{source}]").format(
                problem=p["problem"], cause=p["cause"], source=p["source"]))
            if p.get("fix"):
                print("    " + _("fix: {fix}").format(fix=p["fix"]))
    # the informational remarks, each with the source that backs it, under the problems (the paragraph above only
    # lists them): an engineer can check why each is no fault here
    for r in log.remarks:
        if r.get("setting"):  # settings to check, not a claim that they are harmless
            print("  - " + _("{remark} [{source}]").format(remark=r["remark"], source=r["source"]))
            continue
        text = (_("no fault here: {remark} [{source}]").format(remark=r["remark"], source=r["source"])
                if r.get("source") else _("no fault here: {remark}").format(remark=r["remark"]))
        print("  - " + text)
    return 0
