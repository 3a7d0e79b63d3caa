"""Strip what launchers, log collectors and chat tools put in front of a line, so the readers see the line a
tool printed.

One helper, :func:`clean_line`, used by :mod:`.ncclog` and :mod:`.nccltests` alike. It removes, repeatedly:

* Slurm ``srun --label``: ``0: ``, `` 12: ``, ``0.1: `` (task, or het-job component + task);
* Open MPI ``--tag-output``: ``[1,0]<stdout>:``, ``[1,0]<stderr>:``, with or without ``--timestamp-output``
  (``Mon Jan 22 10:11:12 2024<stdout>:``);
* torchrun / torch elastic: ``[default0]:``, ``[rank0]:``, ``[0]`` / ``[0] `` rank tags;
* Ray workers (vLLM, SGLang): ``(RayWorkerWrapper pid=1234, ip=10.0.0.1) ``, ``(pid=1234) ``; SkyPilot's
  ``(head, rank=0, pid=3808) ``;
* ``kubectl logs --prefix``: ``[pod/name/container] ``; docker compose ``service-1  | ``;
* lines copied from the AWS CloudWatch console: ``  | 2025-05-16T16:39:51.208-07:00 | `` (the second bar is
  sometimes missing and the timestamp glued to the host);
* timestamps: ISO 8601 (``2024-01-22T10:11:12.123456789Z ``, ``2024-01-22 10:11:12,123 ``, in brackets or
  not, NCCL's own ``[%F %T] `` on WARN lines), syslog / journalctl (``Jan 22 10:11:12 host prog[123]: ``,
  rsyslog's ``2024-01-22T10:11:12+00:00 host prog[123]: ``), ``[10:11:12] ``;
* pdsh / DeepSpeed's launcher: ``node01: `` (a host name, then a colon and a space);
* markdown or e-mail quoting (``> ``);
* a research fork of nccl-tests that tags each result row ``[STAT]:`` (abhivijay96/nccl-tests, CoreWeave runs of
  2023; the timing code is upstream's).

:func:`clean_line` also drops Ray's de-duplication suffix (``[repeated 15x across cluster]``, and the note and
terminal padding Ray or a pager may print after it) from the end of the line.

A line NCCL itself printed starts with ``host:pid:tid [dev]`` (no space after the colons), an nccl-tests line
with ``#`` or a number: neither matches any prefix above, so a clean line is left as it is.

>>> clean_line("[1,0]<stdout>:0: node01: node01:1234:1250 [0] NCCL INFO Using network IB")
'node01:1234:1250 [0] NCCL INFO Using network IB'
"""

from __future__ import annotations

import re

__all__ = ["clean_line", "strip_kinds", "strip_sequence", "PREFIXES"]

_MON = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_DAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
_ISO = r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"

#: (name, pattern) of each prefix, tried in order at the start of the line, again and again until none matches
PREFIXES: tuple[tuple[str, re.Pattern[str]], ...] = tuple((name, re.compile(pat)) for name, pat in (
    ("openmpi", r"^\[\d+,\d+\]<(?:stdout|stderr|stddiag)>:\s?"),
    ("openmpi-timestamp", rf"^{_DAY} {_MON} +\d+ \d\d:\d\d:\d\d \d{{4}}<(?:stdout|stderr|stddiag)>:\s?"),
    ("rsyslog", rf"^{_ISO}\s+[\w.\-]+ [\w.\-/]+(?:\[\d+\])?:\s"),
    ("cloudwatch", rf"^\|\s*{_ISO}(?:\s*\|)?\s*"),
    ("iso-timestamp", rf"^\[?{_ISO}\]?(?:\s+|$)"),
    ("syslog", rf"^{_MON} +\d+ \d\d:\d\d:\d\d(?:\.\d+)? [\w.\-]+ [\w.\-/]+(?:\[\d+\])?:\s"),
    ("clock", r"^\[\d\d:\d\d:\d\d(?:\.\d+)?\]\s"),
    ("torchrun", r"^\[(?:default|rank)\d+\]:\s?"),
    ("rank-tag", r"^\[\d+\]\s+"),
    # Ray: "(ActorName pid=1234, ip=10.0.0.1) "; launchers built on Ray (SkyPilot) add a task name and a rank:
    # "(head, rank=0, pid=3808) ", "(worker1, rank=1, pid=2769, ip=10.100.10.12) "
    ("ray", r"^\((?:[A-Za-z_][\w.\-]*(?:,\s*| ))?(?:rank=\d+,\s*)?pid=\d+(?:,\s*ip=[\d.:a-fA-F]+)?\)\s+"),
    ("kubectl-prefix", r"^\[pod/[^\]\s]+\]\s"),
    ("compose", r"^[\w.\-]*[-_]\d+\s+\|\s"),
    ("srun", r"^\s*\d+(?:\.\d+)?:\s"),
    ("pdsh", r"^[A-Za-z][\w.\-]*:\s"),
    ("quote", r"^>\s?"),
    ("row-tag", r"^\[STAT\]:\s?"),
))

# NCCL's own prefix: host:pid:tid [dev] -- never stripped
_NCCL_OWN = re.compile(r"^[^\s:\[\]]+:\d+:\d+\s+\[\d+\]")
# Ray de-duplicates repeated worker lines: "... [repeated 15x across cluster]" (then, once, "(Ray deduplicates logs
# by default. ...)")
_RAY_DEDUP = re.compile(r"\s*\[repeated \d+x across cluster\].*$")


def strip_kinds(raw: str) -> tuple[str, list[str]]:
    """``raw`` without its prefixes, and the names of the prefixes removed, outermost first."""
    line = raw.rstrip("\r\n").replace("\r", "").strip()
    kinds: list[str] = []
    for _ in range(12):  # prefixes nest (pdsh inside mpirun inside a timestamp); a bound keeps fuzz input cheap
        if _NCCL_OWN.match(line):
            break
        for name, pat in PREFIXES:
            m = pat.match(line)
            if m and m.end() > 0:
                line = line[m.end():].strip()
                kinds.append(name)
                break
        else:
            break
    return line, kinds


def clean_line(raw: str) -> str:
    """``raw`` without its launcher/collector prefixes, Ray's de-duplication suffix and surrounding whitespace (CR,
    CRLF and tabs included)."""
    return _RAY_DEDUP.sub("", strip_kinds(raw)[0])


def strip_sequence(raw: str, kinds: list[str]) -> str:
    """``raw`` without the prefixes ``kinds`` names, in that order, each only where present; the rest of the line
    (leading whitespace included) is kept. For formats whose own lines can look like a prefix (``NIC0: mlx5_0``
    in ``nvidia-smi topo -m``'s legend): strip only what the format's header line carried."""
    line = raw.rstrip("\r\n").replace("\r", "")
    pats = dict(PREFIXES)
    for name in kinds:
        m = pats[name].match(line.lstrip())
        if m and m.end() > 0:
            line = line.lstrip()[m.end():]
    return line
