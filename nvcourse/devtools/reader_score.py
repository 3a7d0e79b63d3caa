"""Score the paste readers (``nvcourse ncclog`` / ``nvcourse nccl-tests``, NCCL's TUNING table, ``nvcourse topo`` on
NCCL's topology XML) on a set of real pasted files.

A set is a folder of pasted files and an ``EXPECTED.toml`` whose ``[[files]]`` entries give, for each file, its
``kind`` ("ncclog", "nccl-tests", "tuning" or "topo-xml") and the values a reader should find, read by hand from
the text. Each listed
value is one field; ``env`` counts one field per variable and ``rows`` one field per row (all five figures of the
row right). ``""`` means the text does not say it: the reader must report nothing there (None, empty, 0 rows).

    python -m nvcourse.devtools.reader_score tests/fixtures/pasted_dev [--json] [--min PCT]

prints right/wrong per file and field and the total; exit status 1 when the total is below ``--min``, 2 on a bad
argument or a malformed EXPECTED.toml.

Fields (ncclog): nccl_version, cuda, cuda_driver, nranks, nnodes, hosts, network, net_plugin,
net_plugin_version, net_provider, net_nics, ib_devices, gdr, channels, nvls_supported, transports,
init_complete_ranks, warnings (count), env (table), nccl_tests_rows (rows the nccl-tests reader finds).
Fields (nccl-tests): op, op_candidates, nranks, nodes, hosts, gpu, nccl_version, nccl_tests_version, cuda, dtype,
min_bytes, max_bytes, iters, warmup_iters, n_rows, rows ([size_bytes, oop time_us, oop busbw, ip time_us,
ip busbw]; "" where a column is absent), avg_busbw_GBps, out_of_bounds, elided, runs, launcher, launcher_np,
launcher_hosts, env, ib_hcas (count).
Fields (tuning, topo-xml): see :mod:`nvcourse.devtools.reader_score_tables`.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import _data
from .._validate import choice
from ..nccl import ncclog, nccltests
from . import reader_score_tables as tables

__all__ = ["score_set", "score_file", "main", "NCCLOG_FIELDS", "NCCL_TESTS_FIELDS"]

#: keys of an entry that describe the file rather than a value to check
META = {"file", "kind", "prefix", "note", "notes", "source"}


def _nccl_tests_rows(text: str) -> int:
    try:
        return sum(len(r.rows) for r in nccltests.read_all(text))
    except ValueError:
        return 0


NCCLOG_FIELDS: dict[str, Callable[[dict, str], Any]] = {
    "nccl_version": lambda d, t: d["version"],
    "cuda": lambda d, t: d["cuda"],
    "cuda_driver": lambda d, t: d["cuda_driver"],
    "nranks": lambda d, t: d["nranks"],
    "nnodes": lambda d, t: d["nnodes"],
    "hosts": lambda d, t: d["hosts"],
    "network": lambda d, t: d["net"],
    "net_plugin": lambda d, t: d["net_plugin"],
    "net_plugin_version": lambda d, t: d["net_plugin_version"],
    "net_provider": lambda d, t: d["net_provider"],
    "net_nics": lambda d, t: d["net_nics"],
    # RDMA ports only ("mlx5_0:1/IB", "mlx5_7:1/RoCE", ".../IB/SHARP"): where NCCL found none, the reader's
    # net_devices are the socket interfaces its NET/Socket line lists, which are not IB devices
    "ib_devices": lambda d, t: [x for x in d["net_devices"] if re.search(r":\d+/(?:IB|RoCE)", x)],
    "gdr": lambda d, t: d["gdr"],
    "channels": lambda d, t: d["channels"],
    "nvls_supported": lambda d, t: d["nvls"]["supported"],
    "transports": lambda d, t: d["transports"],
    "init_complete_ranks": lambda d, t: d["init_complete_ranks"],
    "warnings": lambda d, t: len(d["warnings"]),
    "env": lambda d, t: d["env"],
    "nccl_tests_rows": lambda d, t: _nccl_tests_rows(t),
}

NCCL_TESTS_FIELDS: dict[str, Callable[[dict, str], Any]] = {
    "op": lambda d, t: d["op"],
    "op_candidates": lambda d, t: d["op_candidates"],
    "nranks": lambda d, t: d["nranks"],
    "nodes": lambda d, t: len(d["hosts"]) or None,
    "hosts": lambda d, t: d["hosts"],
    "gpu": lambda d, t: ", ".join(d["gpus"]) or None,
    "nccl_version": lambda d, t: d["nccl_version"],
    "cuda": lambda d, t: d["cuda"],
    "dtype": lambda d, t: ", ".join(dict.fromkeys(r["type"] for r in d["rows"])) or None,
    "min_bytes": lambda d, t: d["header"].get("min_bytes"),
    "max_bytes": lambda d, t: d["header"].get("max_bytes"),
    "iters": lambda d, t: d["header"].get("iters"),
    "warmup_iters": lambda d, t: d["header"].get("warmup_iters"),
    "nccl_tests_version": lambda d, t: d["nccl_tests_version"],
    "n_rows": lambda d, t: len(d["rows"]),
    "avg_busbw_GBps": lambda d, t: d["avg_busbw_GBps"],
    "out_of_bounds": lambda d, t: d["out_of_bounds"],
    "elided": lambda d, t: d["elided"],
    "runs": lambda d, t: len(nccltests.read_all(t)),
    "launcher": lambda d, t: d["launch"]["launcher"],
    "launcher_np": lambda d, t: d["launch"]["np"],
    "launcher_hosts": lambda d, t: d["launch"]["hosts"],
    "env": lambda d, t: d["launch"]["env"],
    "ib_hcas": lambda d, t: len(d["launch"]["ib_hcas"]) or None,
}


def _same(expected: Any, got: Any) -> bool:
    """Equal as read: '' matches nothing reported; numbers to 1e-9 relative (they are printed decimals)."""
    if expected == "":
        return got in (None, "", [], {}, 0, False)
    if isinstance(expected, bool) or isinstance(got, bool):
        return expected is got or expected == got and type(expected) is type(got)
    if isinstance(expected, (int, float)) and isinstance(got, (int, float)):
        return math.isclose(float(expected), float(got), rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(expected, list) and isinstance(got, list):
        return len(expected) == len(got) and all(_same(e, g) for e, g in zip(expected, got, strict=True))
    return expected == got


def _row_figures(row: dict) -> list[Any]:
    return [row["bytes"], row["oop_time_us"], row["oop_busbw_GBps"], row["ip_time_us"], row["ip_busbw_GBps"]]


def _check(checks: list[dict], field: str, expected: Any, got: Any) -> None:
    checks.append({"field": field, "expected": expected, "got": got, "right": _same(expected, got)})


def score_file(path: Path, entry: dict) -> list[dict]:
    """One check per field of ``entry`` (an EXPECTED.toml ``[[files]]`` table) on the file at ``path``."""
    text = path.read_text(encoding="utf-8")
    kind = entry.get("kind")
    choice(f"kind of {path.name}", kind, ("ncclog", "nccl-tests", "tuning", "topo-xml"))
    if kind in ("tuning", "topo-xml"):
        return _score_table_kind(kind, text, entry)
    fields = NCCLOG_FIELDS if kind == "ncclog" else NCCL_TESTS_FIELDS
    for name in sorted(set(entry) - META - {"rows"}):
        choice(f"a field of {path.name}", name, [*sorted(fields), "rows"], note=f"(for {kind})")
    try:
        got = (ncclog.read_text(text) if kind == "ncclog" else nccltests.read_text(text)).to_json()
    except ValueError as exc:  # the reader refused the paste: every field is wrong
        got = None
        error = str(exc)
    checks: list[dict] = []
    for name, expected in entry.items():
        if name in META:
            continue
        if got is None:
            n = len(expected) if name in ("env", "rows") else 1
            checks += [{"field": name, "expected": expected, "got": f"reader error: {error}", "right": False}] * n
        elif name == "env":
            env = fields["env"](got, text)
            for var, val in expected.items():
                _check(checks, f"env.{var}", val, env.get(var))
        elif name == "rows":
            by_size = {r["bytes"]: r for r in got["rows"]}
            for exp in expected:
                row = by_size.get(exp[0])
                _check(checks, f"rows[{exp[0]}]", exp, _row_figures(row) if row else None)
        else:
            _check(checks, name, expected, fields[name](got, text))
    return checks


def _score_table_kind(kind: str, text: str, entry: dict) -> list[dict]:
    """The checks of a ``tuning`` or ``topo-xml`` entry (:mod:`.reader_score_tables`)."""
    try:
        got = tables.read_tuning(text) if kind == "tuning" else tables.read_topo(text)
    except ValueError as exc:  # the reader refused the text: every field is wrong
        return [{"field": f, "expected": e, "got": f"reader error: {exc}", "right": False}
                for f, e, _ in tables.expand(kind, entry, None)]
    checks: list[dict] = []
    for field, expected, value in tables.expand(kind, entry, got):
        _check(checks, field, expected, value)
    return checks


def score_set(folder: Path) -> dict:
    """Checks per file and the total: ``{"files": {name: [check, ...]}, "right": int, "fields": int, "pct": float}``."""
    expected_path = Path(folder) / "EXPECTED.toml"
    if not expected_path.is_file():
        raise ValueError(f"DIR must hold an EXPECTED.toml; got {str(folder)!r}")
    entries = _data.load_file(expected_path).get("files", [])
    out: dict = {"files": {}, "right": 0, "fields": 0}
    for entry in entries:
        checks = score_file(Path(folder) / entry["file"], entry)
        out["files"][entry["file"]] = checks
        out["right"] += sum(c["right"] for c in checks)
        out["fields"] += len(checks)
    out["pct"] = round(100.0 * out["right"] / out["fields"], 1) if out["fields"] else 0.0
    return out


def _text(result: dict) -> str:
    lines = []
    for name, checks in result["files"].items():
        lines.append(f"{name}: {sum(c['right'] for c in checks)}/{len(checks)}")
        for c in checks:
            mark = "right" if c["right"] else "WRONG"
            extra = "" if c["right"] else f" (expected {c['expected']!r}, got {c['got']!r})"
            lines.append(f"  {mark:5} {c['field']}{extra}")
    lines.append(f"total: {result['right']}/{result['fields']} fields right = {result['pct']} %")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir", metavar="DIR", help="a folder of pasted files with an EXPECTED.toml")
    parser.add_argument("--json", action="store_true", help="the checks and the total as JSON")
    parser.add_argument("--min", type=float, default=0.0, metavar="PCT",
                        help="exit with status 1 when fewer than PCT %% of the fields are right")
    args = parser.parse_args(argv)  # argparse exits with status 2 on a bad argument
    try:
        result = score_set(Path(args.dir))
    except (ValueError, OSError, _data.TOMLDecodeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=1, default=str) if args.json else _text(result))
    return 0 if result["pct"] >= args.min else 1


if __name__ == "__main__":
    sys.exit(main())
