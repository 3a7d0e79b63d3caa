"""Validation of predicted TIME at every size, against published nccl-tests size sweeps, held-out runs first.

The sweeps are the ``[[sweeps]]`` of two files, each sweep with its source URL, NCCL version, launch mode and the
NCCL_ALGO / NCCL_PROTO it forced, and a **role**:

* ``data/measurements.toml``: ``role = "calibration"``. These runs were looked at while the model was built; a term or
  a constant may have been informed by them, so their errors are in-sample.
* ``data/measurements_heldout.toml``: ``role = "held_out"``, gathered apart and never used to change the
  model (a test keeps the model's code and data free of their ids and URLs). Their errors are the model's real
  error. The file may be absent; then there is no held-out figure.

Each published point is predicted with what the run forced (``algo``/``proto``; NCCL's own choice otherwise), how it
was launched, and the NCCL release it ran (its tuning tables, ``data/nccl_versions.toml``); the error is
``predicted time / published time - 1`` (positive = the model is slow). :func:`report` gives the median |error| per
size band, per collective and per run, held-out first. ``python -m nvcourse.costmodel.sweeps`` prints it;
``--markdown docs/model-validation.md`` writes the appendix page (:mod:`.appendix`).

>>> rows = compare()
>>> sorted(band_medians(rows))
['64 KiB-16 MiB', '<= 64 KiB', '>= 16 MiB']
"""

from __future__ import annotations

import argparse
import sys
from importlib import resources
from typing import Any, Final

from .. import units
from .._data import load
from . import tuning
from .bands import (
    BANDS,
    LARGE_BYTES,
    OTHER_TARGETS,
    TARGETS,
    Point,
    SweepPoint,
    band_medians,
    band_of,
    first_runs,
    run_medians,
    signed_medians,
    system_medians,
    targets_for,
)
from .model import busbw_factor
from .prediction import predict

__all__ = [
    "BANDS", "TARGETS", "OTHER_TARGETS", "LARGE_BYTES", "ROLES", "SweepPoint", "Point", "points", "launch_of",
    "model_version", "compare", "band_of", "band_medians", "first_runs", "system_medians", "run_medians",
    "signed_medians", "targets_for", "gpu_time_allreduce", "report", "markdown_page", "readme_bullet", "main",
]  # fmt: skip

#: A sweep's role: calibration (data/measurements.toml) or held_out (data/measurements_heldout.toml).
ROLES: Final[tuple[str, ...]] = ("calibration", "held_out")
_FILES: Final[dict[str, str]] = {"calibration": "measurements", "held_out": "measurements_heldout"}


def _file_sweeps(role: str) -> list[dict[str, Any]]:
    name = _FILES[role]
    if not resources.files("nvcourse").joinpath(f"data/{name}.toml").is_file():
        return []
    out = list(load(name).get("sweeps", []))
    for s in out:
        if s.get("role") != role:
            raise ValueError(f"data/{name}.toml sweep {s.get('id')!r}: role must be {role!r}; got {s.get('role')!r}")
    return out


def _raw_sweeps(role: str = "calibration") -> list[dict[str, Any]]:
    """The ``[[sweeps]]`` of one role (``calibration``, ``held_out``) or of both (``all``)."""
    if role == "all":
        return _file_sweeps("calibration") + _file_sweeps("held_out")
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join((*ROLES, 'all'))}; got {role!r}")
    return _file_sweeps(role)


def _times_s(s: dict[str, Any]) -> list[float]:
    if "time_us" in s:
        return [t * 1e-6 for t in s["time_us"]]
    f = busbw_factor(s["op"], s["gpus"] * s["nodes"])
    return [size * f / (bw * 1e9) for size, bw in zip(s["sizes"], s["busbw_GBps"], strict=True)]


def _flag(s: dict[str, Any], key: str, default: bool) -> bool:
    """A true/false field of a sweep entry; anything else is an error naming the sweep and the field."""
    v = s.get(key, default)
    if not isinstance(v, bool):
        raise ValueError(f"sweep {s.get('id')!r}: {key} must be true or false; got {v!r}")
    return v


def points(role: str = "calibration") -> list[SweepPoint]:
    """Every published point of every sweep of ``role`` (default: the calibration runs the chapters show; ``held_out``
    or ``all``); times derived from busbw where the source gives busbw."""
    out = []
    for s in _raw_sweeps(role):
        upto = float(s.get("covered_up_to_bytes", float("inf")))
        for size, t in zip(s["sizes"], _times_s(s), strict=True):
            out.append(
                SweepPoint(
                    sweep=s["id"], url=s["url"], system=s["system"], gpus=s["gpus"], nodes=s["nodes"], op=s["op"],
                    fabric=s.get("fabric"), launch=s["launch"], cuda_graphs=bool(s["cuda_graphs"]),
                    nccl_version=s["nccl_version"], algo=s["algo"], proto=s["proto"], bytes=int(size), time_s=t,
                    covered=bool(s.get("covered", True)) and size <= upto, role=s["role"],
                    registered=bool(s.get("registered", False)),
                    repeat_of=s.get("repeat_of"), nvls=_flag(s, "nvls", True),
                )
            )  # fmt: skip
    return out


def launch_of(p: SweepPoint) -> str:
    """The model's ``launch`` for a published run: CUDA graphs, else one process per GPU or per node."""
    return "cuda-graphs" if p.cuda_graphs else p.launch


def model_version(nccl_version: str) -> str:
    """The release whose tables predict a run of ``nccl_version``: its own, the default where the source does not
    say, the oldest (2.8) or newest the data has where the run's is outside them."""
    try:
        return tuning.resolve_version(nccl_version or None)
    except ValueError:
        parts = [int(x) for x in nccl_version.lstrip("v").split(".")[:2] if x.isdigit()]
        have = tuning.versions()
        if len(parts) == 2 and tuple(parts) < tuple(int(x) for x in have[0].split(".")):
            return have[0]
        return have[-1]


def compare(selected: list[SweepPoint] | None = None, *, with_launch: bool = True) -> list[Point]:
    """Predict every point with what its run forced (NCCL's own choice otherwise), how it was launched
    (``with_launch=False``: GPU time only, NCCL's tuner view) and its NCCL release. Default: the calibration points."""
    out = []
    for p in selected if selected is not None else points():
        algo = "auto" if p.algo == "nccl" else p.algo
        launch = launch_of(p) if with_launch else "device"
        v = model_version(p.nccl_version)
        pr = predict(
            p.op, p.system, p.gpus, p.bytes, nodes=p.nodes, algo=algo, fabric=p.fabric, proto=p.proto, launch=launch,
            nccl_version=v, registered=p.registered, nvls=p.nvls,
        )
        out.append(Point(p, pr.time_s, pr.algo, pr.proto, v))
    return out


def _band_lines(rows: list[Point], op: str, indent: str = "  ") -> list[str]:
    lines = []
    target = targets_for(op)
    ratio = signed_medians(rows)
    for label, (med, n) in band_medians(rows).items():
        ok = "meets" if med <= target[label] else "MISSES"
        lines.append(
            f"{indent}{label:14s}: {med:6.1%} over {n:4d} points, model/measured x{ratio[label]:.2f} "
            f"({ok} target {target[label]:.0%})"
        )
    return lines


def _section(title: str, rows: list[Point]) -> list[str]:
    """Median |error| per collective and band (covered runs; all runs), then per run."""
    lines = [f"== {title} ==", f"runs: {len({r.point.sweep for r in rows})}, points: {len(rows)}"]
    if not rows:
        return [*lines, "  (none)"]
    firsts = first_runs(rows)
    if len(firsts) < len(rows):
        lines.append(f"repeats of another run, per run only (not in the medians): "
                     f"{len({r.point.sweep for r in rows}) - len({r.point.sweep for r in firsts})}")
    ops = sorted({r.point.op for r in firsts}, key=lambda o: (o != "allreduce", o))
    for op in ops:
        sub = [r for r in firsts if r.point.op == op]
        covered = [r for r in sub if r.point.covered]
        lines.append(f"{op}, runs the model describes ({len({r.point.sweep for r in covered})} runs):")
        lines += _band_lines(covered, op)
        if len(covered) < len(sub):
            lines.append(f"{op}, every run ({len({r.point.sweep for r in sub})} runs):")
            lines += _band_lines(sub, op)
    lines.append("per run (median |error| per band; >= 1 GiB; NCCL tables used):")
    large = system_medians(rows)
    used = {r.point.sweep: (r.point.nccl_version or "?", r.nccl_version) for r in rows}
    cov = {run: {r.point.covered for r in rows if r.point.sweep == run} for run in used}
    mark = {run: "" if c == {True} else "  (not covered)" if c == {False} else "  (partly covered)"
            for run, c in cov.items()}
    for run, bands in run_medians(rows).items():
        cells = "  ".join(
            f"{label} {bands[label][0]:6.1%}" if label in bands else f"{label}    -  " for label, *_ in BANDS
        )
        big = f"{large[run][0]:6.1%}" if run in large else "   -  "
        ver, tab = used[run]
        again = next((f"  (repeat of {r.point.repeat_of})" for r in rows
                      if r.point.sweep == run and r.point.repeat_of), "")
        lines.append(f"  {run:46s} {cells}  >=1GiB {big}  NCCL {ver} -> {tab}{mark[run]}{again}")
    return lines


def gpu_time_allreduce(rows: list[Point]) -> list[Point]:
    """The described all-reduce points of ``rows`` predicted again without the host's launch floor (GPU time only,
    NCCL's tuner view), for the report's line that says what the floor adds."""
    return [r for r in compare([r.point for r in rows if r.point.op == "allreduce"], with_launch=False)
            if r.point.covered]


def report(rows: list[Point] | None = None, held_out: list[Point] | None = None) -> str:
    """Plain text: the HELD-OUT runs first (per collective and band, per run), then the in-sample (calibration) runs,
    then every point. ``rows`` are the calibration rows (default :func:`compare`); ``held_out`` the held-out ones."""
    rows = compare() if rows is None else rows
    held_out = compare(points("held_out")) if held_out is None else held_out
    lines = _section("HELD-OUT runs (never used to change the model)", held_out)
    lines += ["", *_section("IN-SAMPLE runs (calibration: seen while the model was built)", rows)]
    lines += ["", "in-sample, covered all-reduce runs, GPU time only (no launch floor):",
              *_band_lines(gpu_time_allreduce(rows), "allreduce")]
    lines.append("\nper sweep at >= 1 GiB (in-sample):")
    for sweep, (med, n) in system_medians(rows).items():
        ok = "meets" if med <= TARGETS["per system >= 1 GiB"] else "MISSES"
        lines.append(f"  {sweep:36s}: {med:6.1%} over {n} points ({ok} 15 %)")
    lines.append(
        "\nIn-sample: the NVLS all-reduce's extra-loops term (costmodel/pipeline.py) was found by looking at where "
        "the one-node NVLS runs above are slow; its constant is NCCL's, not fitted."
    )
    head = f"{'sweep':46s} {'role':>11s} {'size':>9s} {'publ us':>10s} {'pred us':>10s} {'pair':>13s} {'error':>8s}"
    lines.append("\n" + head)
    for r in [*held_out, *rows]:
        lines.append(
            f"{r.point.sweep:46s} {r.point.role:>11s} {units.format_size(r.point.bytes):>9s} "
            f"{r.point.time_s * 1e6:10.1f} {r.predicted_s * 1e6:10.1f} {r.algo + '/' + r.proto:>13s} {r.error:+8.1%}"
        )
    return "\n".join(lines)


def markdown_page() -> str:
    """The appendix page (docs/model-validation.md) from today's data and model: held-out runs, then calibration."""
    from .appendix import markdown

    calib = compare()
    device = gpu_time_allreduce(calib)
    raw = {s["id"]: s for s in _raw_sweeps("all")}
    return markdown(compare(points("held_out")), calib, device, raw)


def readme_bullet() -> str:
    """The README's cost-model bullet from today's data and model (:func:`.appendix.readme_bullet`)."""
    from . import validation
    from .appendix import readme_bullet as bullet

    return bullet(compare(points("held_out")), compare(), validation.median_abs_error(validation.compare()))


def _replace_bullet(path: str, bullet: str) -> None:
    """Put ``bullet`` in place of the README's "- **Collective cost model**" bullet (up to the next bullet)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("- **Collective cost model**"))
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("  "))
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join([*lines[:start], bullet, *lines[end:]]))


def main(argv: list[str] | None = None) -> int:
    """``python -m nvcourse.costmodel.sweeps [--markdown PATH]``: print the report; with ``--markdown``, also write
    the appendix page."""
    ap = argparse.ArgumentParser(prog="python -m nvcourse.costmodel.sweeps", description=main.__doc__)
    ap.add_argument("--markdown", metavar="PATH", help="write the appendix page (docs/model-validation.md) here")
    ap.add_argument("--readme", metavar="PATH", help="rewrite the cost-model bullet of this README in place")
    args = ap.parse_args(argv)
    print(report())
    if args.readme:
        _replace_bullet(args.readme, readme_bullet())
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(markdown_page())
    return 0


if __name__ == "__main__":  # python -m nvcourse.costmodel.sweeps
    sys.exit(main())
