"""Read the text that nccl-tests' ``*_perf`` binaries print, as people paste it.

Handles old and new nccl-tests: the ``# nThread ...`` header (with or without ``agg iters``/``graph``), the
``#  Rank ...`` device lines (with or without ``Group``), the column headers (with or without ``redop`` and
``root``; ``#wrong`` or the older ``error`` column), out-of-place and in-place columns or only one set,
``N/A`` in ``#wrong``, ``# Out of bounds values`` and ``# Avg bus bandwidth``; the version printed as
``nccl-library=22902`` or as an ``NCCL version 2.x.y`` line. Noise is skipped: NCCL INFO/WARN lines,
every launcher or collector prefix :mod:`.paste` knows (srun ``0: ``, mpirun ``[1,0]<stdout>:``, pdsh,
kubectl, timestamps), markdown quoting (``>``), indentation and code fences, CRLF, shell prompts, and a
truncated last row. Lines starting with ``%%`` are comments (the
course's fixtures carry their source there).

Units: sizes in bytes, times in microseconds (as printed), bandwidths in GB/s (10^9 B/s, as printed).

>>> run = read_text(SAMPLE)
>>> run.op, run.nranks, run.rows[0]["oop_busbw_GBps"]
('allreduce', 2, 0.24)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .forced import read_settings
from .launch import read_launch
from .nccltests_ranks import (
    nranks_from_command,
    nranks_from_launcher,
    nranks_from_launcher_alone,
    nranks_from_ratio,
    starts_directly,
)
from .nccltests_rows import TYPE_SIZE as _TYPE_SIZE
from .nccltests_rows import columns_from_header as _columns_from_header
from .nccltests_rows import guess_columns as _guess_columns
from .nccltests_rows import num as _num
from .nccltests_rows import parse_header_rest as _parse_header_rest
from .nccltests_rows import row as _row
from .paste import clean_line

__all__ = ["NcclTestsRun", "read_text", "read_all", "op_from_ratio", "version_from_code", "OPS", "SAMPLE",
           "NO_ROWS_NOTE"]

#: nccl-tests binary stem -> the course's operation name (as in :mod:`nvcourse.costmodel`).
OPS: dict[str, str] = {
    "all_reduce": "allreduce", "all_gather": "allgather", "reduce_scatter": "reducescatter",
    "broadcast": "broadcast", "reduce": "reduce", "alltoall": "alltoall", "sendrecv": "sendrecv",
    "hypercube": "hypercube", "scatter": "scatter", "gather": "gather",
}  # fmt: skip

#: the operations the course's model knows (op inference chooses among them)
OPS_MODEL = ("allreduce", "allgather", "reducescatter", "broadcast", "reduce", "alltoall", "sendrecv")
#: the rooted (n-1)/n operations: nccl-tests prints the same columns for both (redop none, a root, count per rank)
ROOTED_SPLIT = ("scatter", "gather")
_MID_TAG = re.compile(r"\[\d+(?:,\d+)?\](?:<std(?:out|err)>:)?")
_BIN = re.compile(r"\b(all_reduce|all_gather|reduce_scatter|broadcast|reduce|alltoall|sendrecv|hypercube|"
                  r"scatter|gather)_perf")
# a leading "#" is optional on every line: markdown outside a code fence eats it
_HEADER = re.compile(r"(?:^|#)\s*nThread\s+(\d+)\s+nGpus\s+(\d+)\s+minBytes\s+(\d+)\s+maxBytes\s+(\d+)(.*)$")
_RANK = re.compile(r"(?:^|#)\s*Rank\s+(\d+)\s+(?:Group\s+(\d+)\s+)?Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)\s+"
                   r"\[([^\]]*)\]\s+(.*?)\s*$")
_NCCL_VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+)")
#: nccl-tests' own failure lines (src/common.h CUDACHECK/NCCLCHECK): "host: Test CUDA failure common.cu:986 '...'"
_TEST_FAILURE = re.compile(r"Test (?:CUDA|NCCL) failure \S+:\d+.*$")
#: NCCL's own line prefix "host:pid:tid [dev] NCCL INFO" (src/debug.cc): the host a process ran on
_NCCL_LINE_HOST = re.compile(r"^([^\s:\[]+):\d+:\d+ \[\d+\] NCCL (?:INFO|WARN)")
_LIBRARY = re.compile(r"nccl-library=(\d+)")
_TESTS_VERSION = re.compile(r"nccl-tests version (\S+)")
_META = re.compile(r"^(?:#|size\s+count\s+type\b|Out of bounds values\s*:|Avg bus bandwidth\s*:)")


def version_from_code(code: int) -> str:
    """NCCL's integer version code as a dotted string: 22902 -> '2.29.2', 2708 -> '2.7.8'.

    NCCL >= 2.9 encodes major*10000 + minor*100 + patch, older releases major*1000 + minor*100 + patch
    (``NCCL_VERSION`` in NCCL's ``nccl.h``).
    """
    if code >= 20900:
        return f"{code // 10000}.{code // 100 % 100}.{code % 100}"
    return f"{code // 1000}.{code // 100 % 10}.{code % 100}"


def op_from_ratio(ratio: float, nranks: int | None, tol: float = 0.03) -> list[str]:
    """Operations whose nccl-tests busbw/algbw factor matches ``ratio`` for ``nranks`` ranks (within ``tol``).

    allreduce 2(n-1)/n; allgather, reducescatter, alltoall (n-1)/n; broadcast, reduce, sendrecv 1
    (nccl-tests ``doc/PERFORMANCE.md``). Without ``nranks`` it solves for n: a ratio in (1, 2) is an
    allreduce, in (0, 1) one of the (n-1)/n operations.
    """
    out: list[str] = []
    if nranks:
        n = nranks
        table = {"allreduce": 2 * (n - 1) / n, "allgather": (n - 1) / n, "reducescatter": (n - 1) / n,
                 "alltoall": (n - 1) / n, "broadcast": 1.0, "reduce": 1.0, "sendrecv": 1.0}
        for op, f in table.items():
            if f > 0 and abs(ratio / f - 1) < tol:
                out.append(op)
        return out
    if 1 + tol < ratio < 2.0:
        return ["allreduce"]
    if 0.0 < ratio < 1 - tol:
        return ["allgather", "reducescatter", "alltoall"]
    if abs(ratio - 1) <= tol:
        return ["broadcast", "reduce", "sendrecv", "allreduce"]
    return out


@dataclass
class NcclTestsRun:
    """One nccl-tests run: header, devices, rows and footer. ``rows`` use the JSON field names."""

    op: str | None = None
    op_source: str | None = None  # "header", "command line", "busbw/algbw ratio", "count/size", or None
    op_candidates: list[str] = field(default_factory=list)
    nranks: int | None = None
    nccl_version: str | None = None
    #: the CUDA version NCCL was built for ("NCCL version 2.26.2+cuda12.8" -> "12.8"), when printed
    cuda: str | None = None
    nccl_tests_version: str | None = None
    header: dict = field(default_factory=dict)
    ranks: list[dict] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    rows: list[dict] = field(default_factory=list)
    out_of_bounds: int | None = None
    avg_busbw_GBps: float | None = None
    notes: list[str] = field(default_factory=list)
    nranks_from_count: bool = False
    #: rows left out of the paste: an elision line ("...", "[...]") inside the table, or sizes that skip steps of
    #: the header's -f factor / -i increment
    elided: bool = False
    #: the pasted command line (see :func:`.launch.read_launch`): launcher, np, hosts, env, ib_hcas, binary, args
    launch: dict = field(default_factory=dict)
    #: hosts named by NCCL's own log lines in the paste ("host:pid:tid [dev] NCCL INFO ..."), in order
    log_hosts: list[str] = field(default_factory=list)
    #: the paste's other runs, summed up (see :func:`read_text`): op, op_candidates, rows (count), bytes (first,
    #: last), largest_busbw_GBps, avg_busbw_GBps, nranks, device_lines (count), gpus, hosts (of its device lines)
    other_runs: list[dict] = field(default_factory=list)
    #: what the paste sets of NCCL_ALGO, NCCL_PROTO, NCCL_NVLS_ENABLE, and where (see :func:`.forced.read_settings`)
    settings: dict = field(default_factory=dict)

    @property
    def gpus(self) -> list[str]:
        """Distinct GPU names, in rank order."""
        return list(dict.fromkeys(r["gpu"] for r in self.ranks))

    @property
    def hosts(self) -> list[str]:
        """The device lines' hosts; where a paste has none, the hosts NCCL's log lines in it name (a paste that
        starts below the device lines still shows where its processes ran)."""
        return list(dict.fromkeys(r["host"] for r in self.ranks)) or list(self.log_hosts)

    def to_json(self) -> dict:
        return {
            "op": self.op, "op_source": self.op_source, "op_candidates": self.op_candidates,
            "nranks": self.nranks, "nccl_version": self.nccl_version,
            "nccl_tests_version": self.nccl_tests_version, "cuda": self.cuda, "gpus": self.gpus, "hosts": self.hosts,
            "header": self.header, "ranks": self.ranks, "rows": self.rows,
            "out_of_bounds": self.out_of_bounds, "avg_busbw_GBps": self.avg_busbw_GBps, "notes": self.notes,
            "elided": self.elided, "launch": self.launch, "other_runs": self.other_runs,
            "settings": self.settings,
        }  # fmt: skip


def _is_noise(line: str) -> bool:
    return (" NCCL INFO" in line or " NCCL WARN" in line or line.startswith("NCCL INFO")
            or line.startswith("%%") or line.startswith("```"))


_ELISION = re.compile(r"^(?:\.{3,}|\u2026|\[(?:\.{3}|\u2026)\]|\((?:\.{3}|\u2026)\)|<snip>|\[snip\])$", re.I)


def _skips_steps(run: NcclTestsRun) -> bool:
    """Sizes that jump over a step of the header's -f factor (or -i increment): rows cut from the middle."""
    step, kind = run.header.get("step"), run.header.get("step_kind")
    # small sizes are rounded down to whole elements per rank (a 24 B step can print as 16 B): look from 64 KiB,
    # and call it a skip only past half a step more than the next size
    sizes = [r["bytes"] for r in run.rows if r["bytes"] >= 65536]
    if not step or len(sizes) < 2:
        return False
    if kind == "factor":
        return step > 1 and any(b2 > b1 * step * 1.5 for b1, b2 in zip(sizes, sizes[1:], strict=False))
    return any(b2 > b1 + step * 1.5 for b1, b2 in zip(sizes, sizes[1:], strict=False))


def _finish(run: NcclTestsRun, text_ops: list[str], direct: bool = False) -> None:
    run.elided = run.elided or _skips_steps(run)
    # ranks: de-duplicate (non-MPI builds under mpirun print every header once per process)
    seen: dict[tuple, dict] = {}
    for r in run.ranks:
        seen.setdefault((r["rank"], r["host"], r["pid"], r["device"]), r)
    run.ranks = list(seen.values())
    if run.ranks:
        n_rank_ids = len({r["rank"] for r in run.ranks})
        if n_rank_ids < len(run.ranks):
            run.notes.append("several processes printed rank 0: nccl-tests was likely built without MPI=1 "
                             "and started under mpirun, so each process ran its own 1-rank test")
        top = max(r["rank"] for r in run.ranks) + 1
        if top > n_rank_ids:  # device lines cut from the paste ("#  Rank 71 ..." alone): ranks run 0..top-1
            run.notes.append(f"device lines for {top - n_rank_ids} of {top} ranks are not in the paste")
        run.nranks = max(n_rank_ids, top)
    elif run.header:
        run.nranks = None
    if run.op is None and text_ops:
        run.op, run.op_source = text_ops[0], "command line"
    _nranks_from_count(run)
    nranks_from_launcher(run)
    nranks_from_command(run, direct)  # a binary started with no launcher: one process
    # algbw is printed with 2 decimals: use the row with the largest algbw, and widen the tolerance by the
    # rounding error (0.005 on each figure) when even that is small
    rows = [r for r in run.rows if (r.get("oop_algbw_GBps") or 0) > 0]
    ratio = None
    if rows:
        big = max(rows, key=lambda r: (r["oop_algbw_GBps"], r["bytes"]))
        ratio = big["oop_busbw_GBps"] / big["oop_algbw_GBps"]
        cands = _narrow(op_from_ratio(ratio, run.nranks, tol=max(0.03, 0.006 / big["oop_algbw_GBps"])), run)
    else:  # no usable ratio (every algbw 0.00): the columns alone name it when they leave one operation; when they
        # leave several, those are the candidates ("none" would say nothing fits, where several do); no rows, none
        cands = _narrow(list(OPS_MODEL), run) if run.rows else []
    if run.op is None:
        run.op_candidates = cands
        if len(cands) == 1:
            run.op = cands[0]
            run.op_source = "busbw/algbw ratio" if ratio is not None else "count/size"
    elif ratio is not None and cands and run.op not in cands and run.nranks:
        run.notes.append(_old_gather_bw(run, ratio) or
                         f"busbw/algbw = {ratio:.3f} does not match {run.op} on {run.nranks} ranks")
    if run.nranks is None and run.op and rows:
        nranks_from_ratio(run, big)
    if run.nranks is None:
        nranks_from_launcher_alone(run)


def _old_gather_bw(run: NcclTestsRun, ratio: float) -> str | None:
    """The note for busbw = algbw on an allgather or reducescatter printed with the old ``error`` column: until
    June 2020 nccl-tests computed their algbw as count x type size x (nranks - 1) / time and set busbw = algbw
    (src/all_gather.cu and src/reduce_scatter.cu GetBw, factor 1; commit ec1b5e2 "Change all_gather/reduce_scatter
    algbw to match the documentation" moved to S / time and (n-1)/n), so the ratio is expected there; None
    elsewhere."""
    if run.op in ("allgather", "reducescatter") and "oop_error" in run.columns and abs(ratio - 1) <= 0.01:
        return (f"busbw = algbw (ratio {ratio:.3f}): nccl-tests before June 2020 computed {run.op}'s algbw as "
                f"(ranks - 1) x count x type size / time and printed busbw = algbw, so this old output fits "
                f"{run.op} on {run.nranks} ranks")
    return None


def _nranks_from_count(run: NcclTestsRun) -> None:
    """allgather, reducescatter and alltoall print count = S / type size / nranks: that gives nranks when no
    device lines were pasted."""
    if run.nranks is not None:
        return
    pers = set()
    for r in run.rows:
        tsize = _TYPE_SIZE.get(r["type"])
        if tsize and r["count"] > 0 and r["bytes"] > 0:
            pers.add(r["bytes"] / (r["count"] * tsize))
    if len(pers) == 1:
        per = pers.pop()
        if per > 1.5 and abs(per - round(per)) < 1e-9:
            run.nranks = int(round(per))
            run.nranks_from_count = True
            run.notes.append(f"no device lines: {run.nranks} ranks inferred from size = count x type size x ranks")


def _narrow(cands: list[str], run: NcclTestsRun) -> list[str]:
    """Use the redop, root and in-place N/A columns to tell operations with the same factor apart."""
    if not run.rows:
        return cands
    r0 = run.rows[-1]
    redop, root = r0.get("redop"), r0.get("root")
    out = list(cands)
    tsize = _TYPE_SIZE.get(r0["type"])
    if run.nranks and run.nranks > 1 and tsize and r0["count"] > 0:
        per = r0["bytes"] / (r0["count"] * tsize)  # allgather, reducescatter, alltoall print count/nranks
        split = ("allgather", "reducescatter", "alltoall")
        if abs(per - run.nranks) < 0.5:
            out = [c for c in out if c in split]
        elif abs(per - 1) < 0.01:
            out = [c for c in out if c not in split]
    elif run.nranks is None and tsize and r0["count"] > 0 and abs(r0["bytes"] / (r0["count"] * tsize) - 1) < 0.01:
        out = [c for c in out if c not in ("allgather", "reducescatter", "alltoall")]  # count = all elements
    if redop == "none":
        out = [c for c in out if c in ("allgather", "alltoall", "broadcast", "sendrecv")]
    elif redop is not None:
        out = [c for c in out if c in ("allreduce", "reducescatter", "reduce", "sendrecv")]
    if root is not None and root >= 0:
        rooted = [c for c in out if c in ("broadcast", "reduce")]
        if not rooted and any(c in ("allgather", "reducescatter", "alltoall") for c in out):
            # a root and busbw = (n-1)/n x algbw: scatter_perf or gather_perf, whose columns are the same
            return list(ROOTED_SPLIT)
        out = rooted
    elif root == -1:
        out = [c for c in out if c not in ("broadcast", "reduce")]
    na_inplace = all(r.get("ip_wrong") is None and r.get("ip_time_us") is not None for r in run.rows)
    if na_inplace and "ip_wrong" in run.columns:
        inplace_na = [c for c in out if c in ("alltoall", "sendrecv")]
        out = inplace_na or out
    elif "ip_wrong" in run.columns:
        out = [c for c in out if c not in ("alltoall", "sendrecv")] or out
    return out or cands


def read_all(text: str) -> list[NcclTestsRun]:
    """Every run with result rows in ``text`` (a new ``# nThread`` header after rows starts a new run)."""
    return [r for r in _read_runs(text) if r.rows]


def _aside(raw: str, line: str, seen: dict) -> bool:
    """True for a line outside the table (blank, NCCL's own lines, fences, nccl-tests' failure lines), noting in
    ``seen`` the NCCL version, the host NCCL's line prefix names and the failure it says."""
    if not line or _is_noise(line):
        if (m := _NCCL_VERSION.search(raw)) and seen["version"] is None:
            seen["version"] = m.group(1)
        if (m := _NCCL_LINE_HOST.match(line)) and m.group(1) not in seen["log_hosts"]:
            seen["log_hosts"].append(m.group(1))
        return True
    if (m := _TEST_FAILURE.search(line)) and m.group(0) not in seen["failures"]:
        seen["failures"].append(m.group(0))
        return True
    return False


def _read_runs(text: str) -> list[NcclTestsRun]:
    """Every run in ``text``, the last one possibly without rows (a paste cut before its first result row)."""
    if not isinstance(text, str):
        raise ValueError("nccl-tests input must be text")
    runs: list[NcclTestsRun] = []
    run = NcclTestsRun()
    cols: list[str] | None = None
    text_ops: list[str] = []
    seen: dict = {"version": None, "log_hosts": [], "failures": []}  # what lines outside the table say
    for raw in text.splitlines():
        line = clean_line(raw)
        if _aside(raw, line, seen):
            continue
        if run.rows and (line.startswith("# Collective test starting") or _TESTS_VERSION.search(line)):
            # the next test of a log that runs several (one binary after another, or a script's loop): its
            # preamble comes before its "# nThread" header, and belongs to it, not to the rows above
            runs.append(run)
            run, cols = NcclTestsRun(), None
        m = _BIN.search(line)
        if m:
            name = m.group(1)
            if line.startswith("# Collective test starting"):
                run.op, run.op_source = OPS[name], "header"
            else:
                text_ops.append(OPS[name])
        if m := _NCCL_VERSION.search(line):
            seen["version"] = seen["version"] or m.group(1)
        if m := _LIBRARY.search(line):
            run.nccl_version = version_from_code(int(m.group(1)))
        if m := _TESTS_VERSION.search(line):
            run.nccl_tests_version = m.group(1)
        if m := _HEADER.search(line):
            if run.rows:
                runs.append(run)
                run, cols = NcclTestsRun(), None
            run.header = {"nthread": int(m.group(1)), "ngpus": int(m.group(2)), "min_bytes": int(m.group(3)),
                          "max_bytes": int(m.group(4)), **_parse_header_rest(m.group(5))}
            continue
        if m := _RANK.search(line):
            run.ranks.append({"rank": int(m.group(1)), "group": int(m.group(2)) if m.group(2) else None,
                              "pid": int(m.group(3)), "host": m.group(4), "device": int(m.group(5)),
                              "bus_id": m.group(6), "gpu": m.group(7)})
            continue
        if _META.match(line):
            c = _columns_from_header(line)
            if c and run.rows and (run.avg_busbw_GBps is not None or run.out_of_bounds is not None):
                runs.append(run)  # a second table after the first one's footer, with no "# nThread" line
                run = NcclTestsRun()
            if c:
                cols = c
                run.columns = c
            # a footer closes the rows above it: one printed before any row (quoted from another run) is not this
            if run.rows and (m := re.search(r"Out of bounds values\s*:\s*(\d+)", line)):
                run.out_of_bounds = int(m.group(1))
            if run.rows and (m := re.search(r"Avg bus bandwidth\s*:\s*(\S+)", line)):
                run.avg_busbw_GBps = _num(m.group(1))
            continue
        if _ELISION.match(line):  # after a row: rows left out (before one, it may stand for device lines)
            run.elided = run.elided or bool(run.rows) and run.avg_busbw_GBps is None
            continue
        # a row that several processes' tagged writes split ("... -1[0]    1626.5 ...", mpirun/torchrun rank tags
        # printed again mid-line): the tags are not data
        toks = _MID_TAG.sub(" ", line).split()
        use = cols or _guess_columns(toks)
        if not use:
            continue
        if "redop" in use and len(toks) == len(use) - 1 and len(toks) > 3 and _num(toks[3]) is not None:
            use = [c for c in use if c != "redop"]  # old alltoall rows: the redop column printed empty
        row = _row(toks, use)
        if row is None:
            continue
        if row.get("_truncated"):
            run.notes.append(f"skipped a truncated row: {line[:40]!r}")
            continue
        if cols is None:
            cols = use
            run.columns = use
            run.notes.append("no column header: columns guessed from the row shape")
        run.rows.append(row)
    runs.append(run)
    out = [r for r in runs if r.rows or r is run and (r.header or r.ranks or r.columns)]
    cuda = m.group(1) if (m := re.search(r"NCCL version \d+\.\d+\.\d+\+cuda(\d+\.\d+)", text)) else None
    launch = read_launch(text)
    direct = starts_directly(text, launch["binary"])
    for r in out:
        r.nccl_version = r.nccl_version or seen["version"]
        r.log_hosts = seen["log_hosts"]
        if r.log_hosts and not r.ranks:
            r.notes.append("no device lines: the hosts are those NCCL's log lines in the paste name")
        r.notes += [f"the paste shows a failure nccl-tests printed: {f}" for f in seen["failures"][:3]]
        r.cuda = cuda
        r.launch = launch
        r.settings = read_settings(text, launch["env"])
        _finish(r, text_ops, direct)
    return out


def read_text(text: str) -> NcclTestsRun:
    """The first run with result rows in ``text``. A paste cut before its first result row (or a run that hung or
    crashed there) gives what it does show: the header, device lines and command, no rows and a note saying so.
    ValueError (saying what was expected) when the text shows none of these."""
    found = _read_runs(text)
    runs = [r for r in found if r.rows]
    if not runs and found:
        found[-1].notes.append(NO_ROWS_NOTE)
        return _with_others(found[-1], found)
    if not runs and (_HEADER.search(text) or re.search(r"time\s+algbw\s+busbw", text)):
        raise ValueError(
            "found nccl-tests header lines but no complete result row: the paste stops before the results "
            "(or the run failed); expected rows such as '  1048576  262144  float  sum  -1  27.5  38.1  66.7  0 ...'"
        )
    if not runs:
        raise ValueError(
            "input is not nccl-tests output: expected result rows such as "
            "'  1048576  262144  float  sum  -1  27.5  38.1  66.7  0 ...' (size count type [redop root] "
            "time algbw busbw #wrong, as printed by all_reduce_perf and the other *_perf tests); found none"
        )
    return _with_others(runs[0], found)


def _with_others(run: NcclTestsRun, found: list[NcclTestsRun]) -> NcclTestsRun:
    """``run`` with the paste's other runs summed up in ``other_runs`` (a second binary's table, a second output
    whose rows were cut), so a report can say it read one of several. Where only another output printed device
    lines, this run's "no device lines" notes say so."""
    run.other_runs = [_summary(r) for r in found if r is not run]
    if not run.ranks and any(r.ranks for r in found):
        run.notes = [n.replace("no device lines:", "no device lines in this output (another output in the paste has "
                               "them):", 1) for n in run.notes]
    return run


def _summary(run: NcclTestsRun) -> dict:
    """A few figures of a run, for the report on another run of the same paste (bytes, GB/s as printed)."""
    return {"op": run.op, "op_candidates": list(run.op_candidates), "rows": len(run.rows),
            "bytes": [run.rows[0]["bytes"], run.rows[-1]["bytes"]] if run.rows else [],
            "largest_busbw_GBps": run.rows[-1]["oop_busbw_GBps"] if run.rows else None,
            "avg_busbw_GBps": run.avg_busbw_GBps, "nranks": run.nranks, "device_lines": len(run.ranks),
            "gpus": run.gpus, "hosts": list(dict.fromkeys(r["host"] for r in run.ranks))}


#: the note on a run read without result rows (the rest of the course tests for its start)
NO_ROWS_NOTE = ("no complete result row: the paste stops before the results, or the run stopped there (a hang or a "
                "crash before the first size); only its header, device lines and command were read")

SAMPLE = """\
# nccl-tests version 2.18.0 nccl-headers=22907 nccl-library=22907
# Collective test starting: all_reduce_perf_mpi
# nThread 1 nGpus 1 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 10 iters: 50 agg iters: 1 \
validation: 1 graph: 0
#  Rank  0 Group  0 Pid 2994447 on        lab device  0 [0000:02:00] NVIDIA GeForce RTX 5090
#  Rank  1 Group  0 Pid 2994448 on        lab device  0 [0000:02:00] NVIDIA GeForce RTX 5090
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
     1048576        262144     float     sum      -1  4366.46    0.24    0.24       0  4365.21    0.24    0.24       0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 0.24
"""
