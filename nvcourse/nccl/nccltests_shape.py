"""What an nccl-tests run says about itself, without a system model: the shape of its rows, its device lines, its
old ``error`` column, the rows and runs a paste leaves out.

Findings (``{"finding", "case", "cause", "source"}``, as :mod:`.diagnose` gives them) for:

* a **collapse** of busbw as size grows (:func:`step_down`): one size at a third or less of the busbw of the size
  before it, and no larger size back above half of it. Checked on every nccl-tests paste of the course's fixtures
  (tests/fixtures/*/ and nvcourse/data/nccl, 116 runs): the largest drop of a healthy sweep is 1.98x (a protocol
  switch at 256 KiB that recovers at the next size); only nccl#1453's 5.6x drop, flat after it, passes the rule;
* **out-of-place and in-place times far apart** at one size (:func:`time_gaps`): 3x or more and 100 us or more
  apart (a hiccup of tens of microseconds doubles a latency-bound time; nccl-tests times both modes the same way);
* an old ``error`` column above nccl-tests' own tolerance (:func:`error_excess`);
* one rank (:func:`one_rank_finding`) and ranks that share one GPU (:func:`shared_gpus`).

Notes for rows left out of the paste and for other runs in it. Texts are in the reader's language (:mod:`.diagnose`
calls these under :func:`nvcourse.i18n.english` for ``--json``). Sizes in bytes, times in microseconds, bandwidths in
GB/s (10^9 B/s), as nccl-tests prints them.
"""

from __future__ import annotations

import math
import re
from typing import Any

from .. import _data, catalog, i18n
from ..i18n import ngettext
from ..i18n import translate as _
from .known_bugs import allgather_4g_hint

__all__ = ["step_down", "time_gaps", "error_excess", "shared_gpus", "shape_findings", "one_rank_finding",
           "shared_gpu_finding", "error_text", "inplace_unchecked_notes", "run_notes", "tolerance", "wrong_findings",
           "assumed_note"]

# ``run`` below is a :class:`~nvcourse.nccl.nccltests.NcclTestsRun`, typed loosely (Any) so that this module does
# not import the reader that :mod:`.diagnose` imports with it

#: the step-down rule: busbw falls to 1/DROP of the size before, never recovers above 1/STAY of it, from a busbw of at
#: least MIN_GBPS (below it, 2-decimal rounding moves the ratio); at least AFTER sizes from the drop on
STEP_DROP, STEP_STAY, STEP_MIN_GBPS, STEP_AFTER = 3.0, 2.0, 1.0, 2
#: the time-gap rule: out-of-place and in-place times GAP_X times apart and GAP_US microseconds apart; sizes shown
#: beside the one that trips it when NEAR_X apart (and GAP_US)
GAP_X, GAP_US, NEAR_X = 3.0, 100.0, 1.3
#: nccl#1453, "Poor NCCL allreduce performance": the paste where the collapse and the time gaps were seen
SEEN_1453 = "https://github.com/NVIDIA/nccl/issues/1453"
#: NCCL v2.29.7's duplicate-GPU check (src/init.cc initTransportsRank, after AllGather1: "Duplicate GPU detected");
#: NCCL 2.30 keeps the refusal unless NCCL_MULTI_RANK_GPU_ENABLE=1 (src/init.cc, same place)
DUPLICATE_GPU = "https://github.com/NVIDIA/nccl/blob/b91894bd5b190c874d98a017f93f5daa515b65d0/src/init.cc#L973-L977"

# nccl-tests before its "Resync with NCCL 2.13" (51af557, 2022-08) printed ``error``: the largest |result - expected|
# over the buffer, and counted an out-of-bounds value above DeltaMaxValue(type) x (nranks - 1); #wrong replaced it.
# The values, with their source: data/nccl_readers.toml [nccl_tests_check]
_CHECK = _data.load("nccl_readers")["nccl_tests_check"]
_DELTA_MAX: dict[str, float] = {**_CHECK["float_delta_max"],
                                **{alias: _CHECK["float_delta_max"][t] for alias, t in _CHECK["float_aliases"].items()}}
_INTEGER = frozenset(_CHECK["exact_types"])  # DeltaMaxValue's 1e-200: any difference counts, so the tolerance is 0
#: old sendrecv_perf and alltoall_perf set reportErrors = in_place ? 0 : 1 (src/sendrecv.cu SendRecvInitData,
#: src/alltoall.cu AlltoAllInitData: "We don't support in-place sendrecv / alltoall"): in place is not checked (the
#: printed error compares a buffer the test never filled as expected); later versions print N/A there
_INPLACE_UNCHECKED = ("sendrecv", "alltoall")
#: operations whose busbw factor (2(n-1)/n or (n-1)/n, nccl-tests doc/PERFORMANCE.md) is 0 on one rank
_ZERO_ON_ONE = ("allreduce", "allgather", "reducescatter", "alltoall")
#: a device line's bus id as newer nccl-tests print it, "[%04x:%02x:%02x]" of the PCI domain, bus and device
_FULL_BUS_ID = re.compile(r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}$")


def _gb(value: float) -> str:
    """A bandwidth or time as nccl-tests printed it, to 2 decimals without trailing zeros (29.5, 5.27, 24410,
    619657.1), in the reader's style."""
    return i18n.number(value, ".2f").rstrip("0").rstrip(".,")


def _x(value: float) -> str:
    return i18n.number(value, ".1f")


def step_down(rows: list[dict]) -> dict | None:
    """The first step down of out-of-place busbw as size grows, or None.

    A step: a size's busbw is at most 1/``STEP_DROP`` of the next smaller size's (which is at least ``STEP_MIN_GBPS``
    GB/s), and every larger size after it stays at or under 1/``STEP_STAY`` of it, over ``STEP_AFTER`` sizes or
    more. Returns the two rows (``before``, ``after``), the largest busbw after the drop (``worst``, GB/s) and the
    last size (``last``, bytes). A ramp only climbs; a protocol or algorithm switch can dip, then recovers.
    """
    for i in range(1, len(rows)):
        a, b = rows[i - 1], rows[i]
        top = a.get("oop_busbw_GBps") or 0.0
        if b["bytes"] <= a["bytes"] or top < STEP_MIN_GBPS or (b.get("oop_busbw_GBps") or 0.0) > top / STEP_DROP:
            continue
        later = [r for r in rows[i:] if r["bytes"] > a["bytes"] and r.get("oop_busbw_GBps") is not None]
        if len(later) >= STEP_AFTER and all(r["oop_busbw_GBps"] <= top / STEP_STAY for r in later):
            return {"before": a, "after": b, "worst": max(r["oop_busbw_GBps"] for r in later),
                    "last": max(r["bytes"] for r in later)}
    return None


def time_gaps(rows: list[dict], nranks: int | None) -> list[dict]:
    """Sizes whose out-of-place and in-place times (us) are far apart, widest first; empty unless one of them is
    ``GAP_X`` times and ``GAP_US`` us apart (the others listed are ``NEAR_X`` times and ``GAP_US`` apart).

    One rank is left out: there the in-place call moves nothing (see :func:`one_rank_finding`).
    """
    if nranks == 1:
        return []
    out = []
    for r in rows:
        oop, ip = r.get("oop_time_us"), r.get("ip_time_us")
        if oop and ip and oop > 0 and ip > 0:
            x = max(oop, ip) / min(oop, ip)
            if x >= NEAR_X and abs(oop - ip) >= GAP_US:
                out.append({"bytes": r["bytes"], "oop_us": oop, "ip_us": ip, "x": x})
    if not any(g["x"] >= GAP_X for g in out):
        return []
    return sorted(out, key=lambda g: -g["x"])


def tolerance(dtype: str, nranks: int | None) -> float | None:
    """nccl-tests' largest accepted ``error`` for ``dtype`` on ``nranks`` ranks (0 for integer types, whatever the
    ranks), or None when it cannot be said (a type it did not check, or a float type on an unknown rank count)."""
    if dtype in _INTEGER:
        return 0.0
    if dtype in _DELTA_MAX and nranks and nranks > 1:
        return _DELTA_MAX[dtype] * (nranks - 1)
    return None


def _at_least(printed: float) -> float:
    """The smallest true value that nccl-tests' ``%5.0le`` (one significant digit) prints as ``printed``."""
    if printed <= 0:
        return 0.0
    return printed - 0.5 * 10 ** math.floor(math.log10(printed))


def error_excess(run: Any) -> list[dict]:
    """Rows whose old ``error`` column is above nccl-tests' own tolerance for their type, however its one-digit
    printing rounded it: ``{"bytes", "type", "modes", "error", "tolerance"}``, ``modes`` "oop"/"ip". In-place
    sendrecv and alltoall are left out (nccl-tests did not check them: :func:`inplace_unchecked_notes`)."""
    out = []
    # an operation the output does not name may be one whose in-place column nccl-tests never checked
    unchecked_ip = run.op in _INPLACE_UNCHECKED or (run.op is None and bool(set(run.op_candidates)
                                                                            & set(_INPLACE_UNCHECKED)))
    for r in run.rows:
        tol = tolerance(r["type"], run.nranks)
        if tol is None:
            continue
        modes = [m for m in ("oop", "ip") if (r.get(f"{m}_error") or 0) > 0 and _at_least(r[f"{m}_error"]) > tol
                 and not (m == "ip" and unchecked_ip)]
        if modes:
            out.append({"bytes": r["bytes"], "type": r["type"], "modes": modes, "tolerance": tol,
                        "error": max(r[f"{m}_error"] for m in modes)})
    return out


def error_text(run: Any, bad: list[dict]) -> str:
    """What the old ``error`` column shows, for the results-are-wrong finding (``bad`` from :func:`error_excess`)."""
    worst = max(bad, key=lambda b: b["error"])
    modes = {("oop",): _("out of place"), ("ip",): _("in place"), ("oop", "ip"): _("out of place and in place")}
    tol = (_("none: integer types must match exactly") if worst["tolerance"] == 0 else
           _("at most {tol} on {ranks} ranks").format(tol=i18n.number(worst["tolerance"], ".0e"),
                                                    ranks=i18n.whole(run.nranks)))
    return _("the error column (the largest |result - expected| nccl-tests saw, summed over threads with -t; "
             "#wrong replaced it in 2022) reads "
             "{error} at {size} B {modes} for {type}, above what nccl-tests accepts ({tolerance})").format(
        error=i18n.number(worst["error"], ".0e"), size=i18n.whole(worst["bytes"]), modes=modes[tuple(worst["modes"])],
        type=worst["type"], tolerance=tol)


def _case(case_id: str) -> dict:
    """A case of nvcourse/data/nccl_cases.toml as a finding's ``case``, ``cause`` (reader's language), ``source``."""
    c = _data.load("nccl_cases")["cases"][case_id]
    return {"case": case_id, "cause": i18n.data_text(c["cause"]), "source": c["source"]}


def wrong_findings(run: Any) -> list[dict]:
    """Results are wrong: #wrong or out-of-bounds values, or an old ``error`` column above nccl-tests' tolerance
    (said inside the same finding when both show it)."""
    wrong = sum((r.get("oop_wrong") or 0) + (r.get("ip_wrong") or 0) for r in run.rows)
    bad = error_excess(run)
    if bad and not wrong and run.out_of_bounds == 0:
        # nccl-tests counts an out-of-bounds value wherever a mode it checks goes over its tolerance (common.cu
        # CheckData), and with -t > 1 the printed error is a sum over threads: its own 0 outweighs the column
        bad = []
    if wrong or (run.out_of_bounds or 0) > 0:
        text = _("#wrong total {wrong}, out of bounds {oob}: results are wrong; bandwidth does not matter until this "
                 "is fixed").format(
            wrong=wrong if any(c.endswith("_wrong") for c in run.columns)
            else _("not printed"),  # old outputs print an error column instead
            oob=_("not printed") if run.out_of_bounds is None else run.out_of_bounds)
        text += "; " + error_text(run, bad) if bad else ""
    elif bad:
        text = error_text(run, bad) + _(": results are wrong; bandwidth does not matter until this is fixed")
    else:
        return []
    if hint := allgather_4g_hint(run):  # a known NCCL bug fits better than a generic corruption
        text += "; " + hint
    return [{"finding": text, **_case("wrong_nonzero")}]


def assumed_note(run: Any, system: str, gpus: int | None) -> str:
    """The note for a system recognised from the GPU name alone: an assumption, and, when the run uses fewer GPUs
    per node (``gpus``) than the catalog system has, that a board of that size may link them differently."""
    # the flags' words are their own message: the course's paste box replaces that message by its controls' names
    note = _("model: {system} assumed from the GPU name ({gpu}) alone: the paste does not say which system or "
             "network this is, so the overlay may model other links or NICs; {flags} if it is another (see `nvcourse "
             "systems`)").format(system=system, gpu=", ".join(run.gpus), flags=_("pass --system, --gpus and --nodes"))
    full = catalog.get_system(system).gpus_per_host
    if gpus and gpus < full:
        note += ngettext("; this run uses {gpus} GPU per node of the catalog's {full}: if the board has only {gpus}, "
                         "its links differ from the catalog system's",
                         "; this run uses {gpus} GPUs per node of the catalog's {full}: if the board has only {gpus}, "
                         "its links differ from the catalog system's", gpus).format(
            gpus=i18n.whole(gpus), full=i18n.whole(full))
    return note


def inplace_unchecked_notes(run: Any) -> list[str]:
    """A note where an old sendrecv or alltoall output prints a nonzero in-place ``error``: nccl-tests did not check
    it (in place is not supported for them), so it says nothing about the data."""
    if run.op not in _INPLACE_UNCHECKED:
        return []
    seen = [r for r in run.rows if (r.get("ip_error") or 0) > 0]
    if not seen:
        return []
    r = max(seen, key=lambda r: r["ip_error"])
    return [_("the in-place error column of {op} ({error} at {size} B) is not a check: nccl-tests of that time did "
              "not support in-place {op} and ignored it (later versions print N/A there), so it says nothing about "
              "the data; the out-of-place column is the one checked").format(
        op=run.op, error=i18n.number(r["ip_error"], ".0e"), size=i18n.whole(r["bytes"]))]


def shared_gpus(ranks: list[dict]) -> list[list[dict]]:
    """Groups of two ranks or more whose device lines name the same host and bus id: one GPU shared. Device indexes
    alone do not say it (each process may see its own GPU as device 0), nor the old ``[0x10]`` form, which is the
    PCI bus number only (nccl-tests src/common.cu printed prop.pciBusID; GPUs on one bus share it, and every GPU of
    a VM can print 0x00): only the ``[0000:02:00]`` form (domain, bus, device) names one GPU. Repeated rank ids
    (each process its own 1-rank test, a build without MPI=1) are left out."""
    if len({r["rank"] for r in ranks}) < len(ranks):
        return []
    by: dict[tuple[str, str], list[dict]] = {}
    for r in ranks:
        if _FULL_BUS_ID.match(r.get("bus_id") or ""):
            by.setdefault((r["host"], r["bus_id"]), []).append(r)
    return [g for g in by.values() if len(g) > 1]


def _cited(finding: str, case: str, cause: str, source: str) -> dict:
    return {"finding": finding, "case": case, "cause": cause, "source": source}


def shared_gpu_finding(group: list[dict]) -> dict:
    """The finding for ranks that share one GPU (a group from :func:`shared_gpus`)."""
    first = group[0]
    return _cited(
        _("ranks {ranks} print the same GPU ({gpu}, bus {bus} on {host})").format(
            ranks=", ".join(str(r["rank"]) for r in group), gpu=first["gpu"], bus=first["bus_id"], host=first["host"]),
        "shared_gpu",
        _("they share one GPU, so the run measures the path between processes on that GPU (the network stack or host "
          "memory), not a link between GPUs; NCCL (2.5 and later) refuses two ranks on one GPU of one host "
          "('Duplicate GPU detected'; from 2.30.3 'Multiple ranks detected using the same GPU on this node', in "
          "2.30.7 'Multiple Ranks are using the same GPU/Partition'; NCCL_MULTI_RANK_GPU_ENABLE=1 allows it), so "
          "here it most likely saw them as separate hosts: NCCL_HOSTID set per rank, or host names that differ only "
          "after the first dot (nccl-tests prints a name up to its first dot; NCCL hashes the whole name with the "
          "kernel's boot id, which containers on one host share)"),
        DUPLICATE_GPU)


def one_rank_finding(run: Any) -> dict | None:
    """The finding for a run on one rank: nothing leaves the GPU. On one rank NCCL only copies the send buffer to the
    receive buffer, and does nothing in place (src/device/onerank.cu, ncclLaunchOneRank), so algbw is a copy or
    nothing, and busbw is 0 for the operations whose factor is 0 on one rank."""
    if run.nranks != 1 or not run.rows or any("built without MPI" in n for n in run.notes):
        return None
    row = max(run.rows, key=lambda r: r["bytes"])
    text = _("1 rank: no data leaves the GPU")
    if run.op in _ZERO_ON_ONE:
        text += _("; busbw is 0 for {op} on one rank by definition").format(op=run.op)
    if row.get("oop_algbw_GBps"):
        text += _("; out-of-place algbw {algbw} GB/s at {size} B is a copy inside the GPU").format(
            algbw=_gb(row["oop_algbw_GBps"]), size=i18n.whole(row["bytes"]))
    ip_time = row.get("ip_time_us")
    if ip_time is not None and ip_time < 1.0 and row.get("ip_algbw_GBps"):
        text += _("; in place, {time} us ({algbw} GB/s) is a call that moved nothing").format(
            time=_gb(ip_time), algbw=_gb(row["ip_algbw_GBps"]))
    source = _data.load("nccl_cases")["cases"]["avg_hides"]["source"]  # nccl-tests#287: alltoall on one GPU
    return _cited(text, "one_rank", _("a collective on one rank does no communication (at most a copy inside the "
                                      "GPU, none in place): run on 2 GPUs or more to measure a link"), source)


def _step_finding(step: dict) -> dict:
    a, b = step["before"], step["after"]
    return _cited(
        _("busbw drops from {before} GB/s at {size_before} B to {after} GB/s at {size_after} B and stays at or under "
          "{worst} GB/s up to {last} B ({time_x}x the time for {bytes_x}x the bytes): busbw collapses as size grows "
          "and does not recover, which a healthy sweep does not show").format(
            before=_gb(a["oop_busbw_GBps"]), size_before=i18n.whole(a["bytes"]), after=_gb(b["oop_busbw_GBps"]),
            size_after=i18n.whole(b["bytes"]), worst=_gb(step["worst"]), last=i18n.whole(step["last"]),
            time_x=_x(b["oop_time_us"] / a["oop_time_us"]), bytes_x=i18n.number(b["bytes"] / a["bytes"], "g")),
        "busbw_collapse",
        _("a guess from the rows alone: from that size NCCL picks another algorithm or protocol (or path) that is "
          "broken or slow, or the traffic falls back to sockets or host memory; rerun around that size with "
          "NCCL_PROTO=Simple, then LL128, and NCCL_ALGO=Ring, then Tree, and read the transport lines "
          "(NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,TUNING shows the transports, and from NCCL 2.20 the algorithm "
          "and protocol picked per size; older NCCL prints only its tuning table) for NET/Socket, SHM or a missing "
          "/GDRDMA"),
        SEEN_1453)


def _gap_finding(gaps: list[dict]) -> dict:
    shown = "; ".join(_("{size} B: {oop} us out of place, {ip} us in place ({x}x)").format(
        size=i18n.whole(g["bytes"]), oop=_gb(g["oop_us"]), ip=_gb(g["ip_us"]), x=_x(g["x"])) for g in gaps[:3])
    return _cited(
        _("out-of-place and in-place times disagree: {sizes}; both modes run the same operation on the same "
          "bytes").format(sizes=shown),
        "inplace_time_gap",
        _("a guess from the rows alone: something else uses the GPUs or the network during the run, a link drops or "
          "retrains, or too few iterations to settle; rerun with more iterations (-n 100 -w 20) and see whether the "
          "gap stays at these sizes; if it does, compare NCCL_PROTO and NCCL_ALGO runs at those sizes"),
        SEEN_1453)


def shape_findings(run: Any) -> list[dict]:
    """The model-free findings of ``run``: one rank, ranks sharing a GPU, a busbw collapse, time gaps."""
    out = [f for f in [one_rank_finding(run)] if f]
    out += [shared_gpu_finding(g) for g in shared_gpus(run.ranks)]
    if step := step_down(run.rows):
        out.append(_step_finding(step))
    if gaps := time_gaps(run.rows, run.nranks):
        out.append(_gap_finding(gaps))
    return out


def _other_run(o: dict, devices: bool) -> str:
    """One other run of the paste (a summary from :func:`nvcourse.nccl.nccltests.read_text`), in a few words; its
    device lines with them when ``devices`` (the run read has none)."""
    op = o["op"] or (_("an operation the output does not name, one of {candidates}").format(
        candidates=", ".join(o["op_candidates"])) if o["op_candidates"] else _("an operation the output does not name"))
    if not o["rows"]:
        what = _("no result row")
    elif o["avg_busbw_GBps"] is not None:
        what = _("{sizes}, Avg bus bandwidth {busbw} GB/s").format(
            sizes=ngettext("{n} size", "{n} sizes", o["rows"]).format(n=i18n.whole(o["rows"])),
            busbw=i18n.number(o["avg_busbw_GBps"], "g"))  # as printed (%g)
    else:
        what = _("{sizes}, largest-size busbw {busbw} GB/s").format(
            sizes=ngettext("{n} size", "{n} sizes", o["rows"]).format(n=i18n.whole(o["rows"])),
            busbw=_gb(o["largest_busbw_GBps"]))
    if o["gpus"] and devices:
        what += _("; device lines: {ranks} on {hosts}, {gpus}").format(
            ranks=ngettext("{n} rank", "{n} ranks", o["device_lines"]).format(n=i18n.whole(o["device_lines"])),
            hosts=", ".join(o["hosts"]), gpus=", ".join(o["gpus"]))
    return f"{op} ({what})"


def run_notes(run: Any) -> list[str]:
    """Notes on what the paste holds besides this run's rows: rows left out of it, other runs in it."""
    notes = []
    if run.elided and run.rows:
        n = len(run.rows)
        notes.append(ngettext(
            "sizes are missing between the rows read (an elision line such as '...', or sizes further apart than "
            "the header's -f factor or -i increment): the {n} size shown is not the whole sweep",
            "sizes are missing between the rows read (an elision line such as '...', or sizes further apart than "
            "the header's -f factor or -i increment): the {n} sizes shown are not the whole sweep", n).format(
            n=i18n.whole(n)))
    others = getattr(run, "other_runs", None) or []
    if others:
        listed = "; ".join(_other_run(o, not run.ranks) for o in others[:4])
        if len(others) > 4:
            listed += "; " + _("{n} more").format(n=i18n.whole(len(others) - 4))
        notes.append(_("{runs} in the paste; this report reads the first ({op}); also present: {others}").format(
            runs=ngettext("{n} run", "{n} runs", len(others) + 1).format(n=i18n.whole(len(others) + 1)),
            op=run.op or _("operation not named"), others=listed))
    return notes + inplace_unchecked_notes(run)
