"""The NCCL settings a paste forces that change which algorithm runs: ``NCCL_ALGO``, ``NCCL_PROTO``,
``NCCL_NVLS_ENABLE``, and what the model overlay should therefore model.

A run with ``NCCL_ALGO=Ring`` on an NVSwitch H100 node reaches the ring's plateau by design: blaming a missing NVLS
there sends the engineer after a setting they chose. The values come from, in order of trust:

* the command's environment as :func:`.launch.read_launch` reads it (``mpirun -x``, ``VAR=VAL cmd``, ``export``,
  a line of bare assignments such as an ``nccl.conf``): ``"environment"``;
* NCCL's own INFO line ``NCCL_ALGO set by environment to Ring`` (NCCL ``src/graph/tuning.cc``
  ncclTopoTuneModel; ``NCCL_NVLS_ENABLE set by environment to 0.`` from ``src/misc/param.cc``): ``"NCCL log"``;
* an assignment on a command line that starts the ``*_perf`` binary (the binary or its launcher first, after a shell
  prompt, ``VAR=VAL``, ``env`` or ``sudo``; or such a command in backticks inside a sentence) that the command reader
  did not take as the launch (a second command, a prompt it does not strip such as a conda environment's
  ``(base) user@host:~$``): ``"command line text"``, used only when every such mention agrees. As for the launch
  (:mod:`.launch`), a sentence that names the binary and a setting is prose, not a command ("we ran all_reduce_perf
  with NCCL_ALGO=Tree unset"), and a line that starts with ``#`` is a comment (a fixture's header, a script's line
  left out): neither is read.

``NCCL_ALGO`` and ``NCCL_PROTO`` are read as the paste's NCCL reads them (``src/graph/tuning.cc`` parseList): from
2.24 a list, ``^`` to exclude, ``func:list`` entries separated by ``;`` where a function prefix applies to that
collective only, and an unknown name refused (ncclInvalidUsage); up to 2.23 one ``,``-separated list for every
function, ``^`` to exclude, unknown names ignored (a value with ``:`` or ``;`` then matches nothing). Where the paste
prints no version, a value without ``:`` or ``;`` (read alike by both) is read, any other is not. Names compared
without case; NCCL up to 2.13 names CollNet ``CollNet``.
"""

from __future__ import annotations

import re
from typing import Any

from ..costmodel import predict_sweep
from ..costmodel.model import NCCL_ALGORITHMS
from ..i18n import translate as _
from .launch import LAUNCHERS
from .ncclog_faults import SHELL_PROMPT, version_tuple
from .paste import clean_line

__all__ = ["SETTINGS", "read_settings", "enabled", "model_request", "predict"]

#: the variables that change the algorithm or protocol NCCL runs
SETTINGS: tuple[str, ...] = ("NCCL_ALGO", "NCCL_PROTO", "NCCL_NVLS_ENABLE")
# NCCL's algorithm names (ncclAlgoStr, src/enqueue.cc / device.h) -> the cost model's; both CollNet kinds are one
_ALGO = {"tree": "tree", "ring": "ring", "collnetdirect": "collnet", "collnetchain": "collnet", "collnet": "collnet",
         "nvls": "nvls", "nvlstree": "nvlstree", "pat": "pat"}
#: the first release whose parseList takes ``func:list`` entries and refuses unknown names (v2.24.3-1)
_PREFIXED_FROM = (2, 24)
_PROTO = {"ll": "LL", "ll128": "LL128", "simple": "Simple"}
# nccl-tests' operation -> NCCL's function name (ncclFuncStr), lower case
_FUNC = {"allreduce": "allreduce", "allgather": "allgather", "reducescatter": "reducescatter",
         "broadcast": "broadcast", "reduce": "reduce"}
_LOG = re.compile(r"\b(NCCL_ALGO|NCCL_PROTO|NCCL_NVLS_ENABLE) set by environment to ([^\s.]+)")
_ASSIGN = re.compile(r"(?<![\w-])(NCCL_ALGO|NCCL_PROTO|NCCL_NVLS_ENABLE)=([\w,;:^]+)")
_PERF = re.compile(r"\w+_perf(?:_mpi)?\b")
# a command people wrap in backticks inside a sentence or a bullet: "I ran `NCCL_ALGO=Ring ./all_reduce_perf -g 8`"
_CODE_SPAN = re.compile(r"`([^`]+)`")
# what may stand before the program a command runs: VAR=VAL words, and programs that run the next word
_ENV_WORD = re.compile(r"^[A-Za-z_]\w*=")
_WRAPPERS = ("env", "sudo", "time", "exec", "nohup")
# a shell comment after a command ("./all_reduce_perf -g 8  # NCCL_ALGO=Tree left out"): the shell never reads it
_TRAILING_COMMENT = re.compile(r"\s#.*$")


def _runs_perf(cmd: str) -> bool:
    """Whether ``cmd`` starts a ``*_perf`` binary: its first word after ``VAR=VAL``, ``env``, ``sudo``... is the
    binary or a launcher (``mpirun``, ``srun``...), and the binary is on the line."""
    words = cmd.split()
    while words and (_ENV_WORD.match(words[0]) or words[0] in _WRAPPERS):
        words = words[1:]
    first = words[0].rsplit("/", 1)[-1] if words else ""
    return (first in LAUNCHERS or bool(_PERF.fullmatch(first))) and bool(_PERF.search(cmd))


def _command_lines(lines: list[str]) -> list[str]:
    """The commands of ``lines`` that start a ``*_perf`` binary (:func:`_runs_perf`): continuation lines joined, the
    shell prompt and a trailing ``# comment`` dropped, a command in backticks taken out of its sentence. A line that
    starts with ``#`` is a comment and a sentence is prose: neither is a command, whatever it names."""
    out: list[str] = []
    buf = ""
    for raw in [*lines, ""]:  # the empty line ends a continuation left open by the last line
        line = clean_line(raw)
        if buf:
            line, buf = f"{buf} {line}", ""
        if line.endswith("\\"):
            buf = line[:-1].rstrip()
            continue
        if line.startswith("#"):
            continue
        spans = [m.group(1) for m in _CODE_SPAN.finditer(line)]
        line = _TRAILING_COMMENT.sub("", SHELL_PROMPT.sub("", line, count=1))
        out += [cmd for cmd in (*spans, line) if _runs_perf(cmd)]
    return out


def read_settings(text: str, env: dict[str, str]) -> dict[str, dict[str, str]]:
    """``{name: {"value": ..., "from": "environment" | "NCCL log" | "command line text"}}`` for the variables of
    :data:`SETTINGS` the paste sets (``env``: the command's environment, :func:`.launch.read_launch`'s ``env``).
    Lines starting ``%%`` (the course's notes on a fixture) are not the paste's."""
    out = {k: {"value": env[k], "from": "environment"} for k in SETTINGS if env.get(k)}
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("%%")]
    for source, pattern, where in (("NCCL log", _LOG, lines), ("command line text", _ASSIGN, _command_lines(lines))):
        seen: dict[str, set[str]] = {}
        for ln in where:
            for name, value in pattern.findall(ln):
                seen.setdefault(name, set()).add(value.rstrip(",;:"))
        for name, values in seen.items():
            if name not in out and len({v.lower() for v in values}) == 1:  # mentions that disagree say nothing
                out[name] = {"value": values.pop(), "from": source}
    return out


def _legacy(value: str, names: dict[str, str]) -> set[str]:
    """parseList up to 2.23: one list split on ``,`` for every function, ``^`` first to exclude, unknown names
    ignored."""
    exclude = value.startswith("^")
    picked = {names[x.lower()] for x in value.lstrip("^").split(",") if x.lower() in names}
    return set(names.values()) - picked if exclude else picked


def enabled(value: str, names: dict[str, str], func: str | None,
            version: tuple[int, ...] | None = None) -> set[str] | None:
    """The model names ``value`` leaves enabled for NCCL function ``func`` on NCCL ``version`` ((2, 26, 2); None:
    not printed). From 2.24 (parseList: the first entry may lack a prefix and applies to every function;
    ``func:list`` applies to that one; ``^`` excludes) None when ``value`` names something NCCL does not know (NCCL
    refuses it: ncclInvalidUsage); before 2.24 the older rule (:func:`_legacy`); with no version, None for a value
    the two rules read differently (one with ``:`` or ``;``)."""
    if version is not None and version[:2] < _PREFIXED_FROM:
        return _legacy(value, names)
    if version is None and (":" in value or ";" in value):
        return None
    on = set(names.values())
    for i, entry in enumerate(e for e in value.split(";") if e):
        prefix, colon, body = entry.rpartition(":")
        if colon and prefix.lower() != func:
            continue
        if not colon and i > 0:
            return None
        exclude = body.startswith("^")
        items = [x.lower() for x in body.lstrip("^").split(",") if x]
        if any(x not in names for x in items):
            return None
        picked = {names[x] for x in items}
        on = set(names.values()) - picked if exclude else picked
    return on


def model_request(run: Any) -> dict:
    """What the overlay models for ``run`` (an :class:`~.nccltests.NcclTestsRun`): ``{"algo", "proto", "nvls",
    "settings"}``, the arguments of :func:`nvcourse.costmodel.predict_sweep` (``auto`` / True where the paste forces
    nothing) and the settings they come from."""
    settings = getattr(run, "settings", {}) or {}
    req = {"algo": "auto", "proto": "auto", "nvls": True, "settings": settings}
    func = _FUNC.get(run.op or "")
    version = version_tuple(run.nccl_version)
    if (s := settings.get("NCCL_NVLS_ENABLE")) and s["value"].strip() == "0":
        req["nvls"] = False
    if (s := settings.get("NCCL_ALGO")) and func and (on := enabled(s["value"], _ALGO, func, version)) is not None:
        usable = on & set(NCCL_ALGORITHMS[run.op])  # what NCCL's tuner picks from for this collective
        if len(usable) == 1:
            req["algo"] = usable.pop()
        elif usable and not usable & {"nvls", "nvlstree"}:
            req["nvls"] = False
    if (s := settings.get("NCCL_PROTO")) and func and (on := enabled(s["value"], _PROTO, func, version)) \
            and len(on) == 1:
        req["proto"] = on.pop()
    if req["algo"] in ("ring", "tree", "pat", "collnet"):
        req["nvls"] = False  # one non-NVLS algorithm forced: NVLS cannot be what the run misses
    return req


def predict(run: Any, system: str, gpus: int, sizes: list[int], nodes: int) -> tuple[Any, Any, dict, str | None]:
    """(the model's sweep, the ring's sweep, the request, a note or None) for ``run``'s ``sizes`` (bytes) on
    ``gpus`` GPUs per node x ``nodes``: the model follows what the paste forces (:func:`model_request`); where the
    model cannot run that on ``system`` it falls back to NCCL's own choice and the note says so. ValueError from the
    model when even that fails."""
    req = model_request(run)
    forced = {k: v for k, v in req.items() if k != "settings" and v not in ("auto", True)}
    ring = predict_sweep(run.op, system, gpus, sizes, nodes=nodes, algo="ring", proto=req["proto"])
    if not forced:
        return predict_sweep(run.op, system, gpus, sizes, nodes=nodes), ring, req, None
    shown = ", ".join(f"{k}={v['value']}" for k, v in req["settings"].items())
    try:
        sw = predict_sweep(run.op, system, gpus, sizes, nodes=nodes, algo=req["algo"], proto=req["proto"],
                           nvls=req["nvls"])
    except ValueError as exc:
        note = _("the paste sets {settings}, which the model cannot follow on this system ({error}): the overlay "
                 "models NCCL's own choice").format(settings=shown, error=exc)
        return predict_sweep(run.op, system, gpus, sizes, nodes=nodes), ring, {**req, "algo": "auto",
                                                                               "proto": "auto", "nvls": True}, note
    what = [_("algorithm {algo}").format(algo=req["algo"])] if req["algo"] != "auto" else []
    what += [_("protocol {proto}").format(proto=req["proto"])] if req["proto"] != "auto" else []
    what += [_("NCCL's choice without NVLS")] if not req["nvls"] and req["algo"] == "auto" else []
    note = _("the paste sets {settings}: the overlay models {what}, so a plateau at the level that setting allows is "
             "what it gives, not a fault").format(settings=shown, what=", ".join(what))
    return sw, ring, req, note
