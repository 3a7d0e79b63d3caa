"""The rows of an nccl-tests table: column names from its header or from a row's shape, one row's values, and the
header line's settings. Times are in microseconds, bandwidths in GB/s (10^9 B/s), as nccl-tests prints them."""

from __future__ import annotations

import re

__all__ = ["TYPES", "TYPE_SIZE", "num", "columns_from_header", "guess_columns", "row", "parse_header_rest"]

#: nccl-tests type names (the "type" column)
TYPES = {"int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double", "bfloat16",
         "f8e4m3", "f8e5m2", "fp8_e4m3", "fp8_e5m2", "char", "int", "float16", "float32", "float64"}
#: bytes per element of each type name
TYPE_SIZE = {"int8": 1, "uint8": 1, "char": 1, "f8e4m3": 1, "f8e5m2": 1, "fp8_e4m3": 1, "fp8_e5m2": 1,
             "half": 2, "float16": 2, "bfloat16": 2, "int32": 4, "uint32": 4, "int": 4, "float": 4,
             "float32": 4, "int64": 8, "uint64": 8, "double": 8, "float64": 8}

_NUM = re.compile(r"^-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?$")


def num(tok: str) -> float | None:
    """A number token as printed ('27.5', '1e+00', '-1') as a float, or None when the token is not a number."""
    return float(tok) if _NUM.match(tok) else None


def columns_from_header(line: str) -> list[str] | None:
    """Column names from a ``#  size  count  type ...`` header line, or None."""
    toks = line.lstrip("#").split()
    if len(toks) < 6 or toks[0] != "size" or toks[1] != "count" or toks[2] != "type":
        return None
    cols = ["size", "count", "type"]
    rest = toks[3:]
    for name in ("redop", "root"):
        if rest and rest[0] == name:
            cols.append(name)
            rest = rest[1:]
    sets = 0
    while len(rest) >= 4 and rest[:3] == ["time", "algbw", "busbw"] and rest[3] in ("#wrong", "error"):
        prefix = "oop" if sets == 0 else "ip"
        cols += [f"{prefix}_time", f"{prefix}_algbw", f"{prefix}_busbw", f"{prefix}_{rest[3].lstrip('#')}"]
        rest = rest[4:]
        sets += 1
    return cols if sets else None


def guess_columns(toks: list[str]) -> list[str] | None:
    """Columns of a data row seen without a column header, from its token count and shape."""
    if len(toks) < 7 or not (toks[0].isdigit() and toks[1].isdigit() and toks[2] in TYPES):
        return None
    base = ["size", "count", "type"]
    i = 3
    if num(toks[3]) is None:
        base.append("redop")
        i = 4
        if len(toks) > 4 and re.fullmatch(r"-?\d+", toks[4]) and len(toks) - 5 in (4, 8):
            base.append("root")
            i = 5
    left = len(toks) - i
    if left < 4:
        return None
    wrong = "error" if re.search(r"[eE][-+]", toks[i + 3]) else "wrong"
    if left >= 8:
        return base + ["oop_time", "oop_algbw", "oop_busbw", f"oop_{wrong}",
                       "ip_time", "ip_algbw", "ip_busbw", f"ip_{wrong}"]  # fmt: skip
    if left == 4:
        return base + ["oop_time", "oop_algbw", "oop_busbw", f"oop_{wrong}"]
    return None


def row(toks: list[str], cols: list[str]) -> dict | None:
    """A JSON row from tokens, or None when the line is not a (whole) data row."""
    if not toks or not toks[0].isdigit():
        return None
    if len(toks) < len(cols) and all(t.isdigit() for t in toks[:2]) and (len(toks) < 3 or toks[2] in TYPES):
        return {"_truncated": True}
    if len(toks) < 4 or not toks[1].isdigit() or toks[2] not in TYPES:
        return None
    vals = dict(zip(cols, toks, strict=False))
    row: dict = {"bytes": int(vals["size"]), "count": int(vals["count"]), "type": vals["type"],
                 "redop": vals.get("redop"),
                 "root": int(vals["root"]) if re.fullmatch(r"-?\d+", vals.get("root", "")) else None}
    for p in ("oop", "ip"):
        for key, name in (("time", "time_us"), ("algbw", "algbw_GBps"), ("busbw", "busbw_GBps")):
            tok = vals.get(f"{p}_{key}")
            row[f"{p}_{name}"] = num(tok) if tok is not None else None
        w = vals.get(f"{p}_wrong")
        row[f"{p}_wrong"] = int(float(w)) if w is not None and num(w) is not None else None
        e = vals.get(f"{p}_error")
        if e is not None:
            row[f"{p}_error"] = num(e)
    if row["oop_time_us"] is None or row["oop_busbw_GBps"] is None:
        return None
    return row


def parse_header_rest(rest: str) -> dict:
    h: dict = {}
    m = re.search(r"step:\s*(\d+)\((factor|bytes)\)", rest)
    if m:
        h["step"] = int(m.group(1))
        h["step_kind"] = m.group(2)
    for key, pat in (("warmup_iters", r"warmup iters:\s*(\d+)"), ("iters", r"(?<!warmup )(?<!agg )iters:\s*(\d+)"),
                     ("agg_iters", r"agg iters:\s*(\d+)"), ("validation", r"validation:\s*(\d+)"),
                     ("graph", r"graph:\s*(\d+)")):
        m = re.search(pat, rest)
        if m:
            h[key] = int(m.group(1))
    return h
