"""``nvcourse predict OP ... --tuning LOG``: NCCL's pick per size from the user's own TUNING table, next to the model's.

The table is what NCCL printed for the user's machine (``NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING``, read by
:mod:`.tuning_table`); NCCL's estimate per (algorithm, protocol) is ``latency + bytes / (1000 x bandwidth)`` us
with its tree correction, and its pick the smallest estimate. Each model row gains a ``tuning`` field (added,
nothing renamed): ``{"algo", "proto", "time_us", "switch_from", "printed"}`` where ``switch_from`` names the
previous pick on the first size after NCCL's pick changes (a switch point), else None, and ``printed`` is the pick
NCCL itself printed for a call of that size when the log has one (``"RING/LL"``), else None.
"""

from __future__ import annotations

from ..textio import read_input
from . import tuning_table
from .ncclog import read_text

__all__ = ["load_table", "attach", "format_text"]


def load_table(path: str, op: str) -> tuple[dict, dict, list[str]]:
    """``(table, context, notes)`` from the log at ``path`` for ``op``; ValueError naming ``--tuning`` otherwise.

    ``context`` holds what NCCL's estimate needs beyond the table, when the log gives it: ``nodes``, ``channels``,
    ``ranks`` (for the ring plateau correction), and ``printed``: NCCL's own pick per size where the log has it.
    """
    try:
        log = read_text(read_input(path))
    except OSError as exc:
        raise ValueError(f"--tuning {path!r}: {exc.strerror or type(exc).__name__}") from None
    except ValueError as exc:
        raise ValueError(f"--tuning: {exc}") from None
    tables = [t for t in log.tuning_tables if op in t["collectives"]]
    if not tables:
        names = ", ".join(tuning_table.FUNCTIONS.values())
        raise ValueError(f"--tuning: no TUNING table with a row for {op} in {path!r} (NCCL prints one with "
                         f"NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING, rows for {names})")
    notes = []
    if len(tables) > 1:
        notes.append(f"{len(tables)} tables in the log (one per communicator): the first is used")
    if tables[0]["truncated"]:
        notes.append("the table was cut in the paste: missing cells are left out of NCCL's choice")
    ctx = {"nodes": log.nnodes, "channels": log.channels, "ranks": log.nranks,
           "printed": {p["bytes"]: f"{p['algo']}/{p['proto']}" for p in log.tuning_picks if p["op"] == op}}
    return tables[0], ctx, notes


def attach(path: str, op: str, rows: list[dict], *, nodes: int, ranks: int) -> tuple[list[dict], list[str]]:
    """Add ``tuning`` to each model row (bytes from ``row['bytes']``); return the rows and notes."""
    table, ctx, notes = load_table(path, op)
    nodes_ = ctx["nodes"] or nodes
    ranks_ = ctx["ranks"] or ranks
    if ctx["channels"] is None and nodes_ > 1 and op == "allreduce":
        notes.append("the log gives no channel count: NCCL's ring plateau correction (several nodes) is left out")
    sizes = [int(r["bytes"]) for r in rows]
    chosen = tuning_table.picks(table, op, sizes, nodes=nodes_, channels=ctx["channels"], ranks=ranks_)
    prev = None
    for r, c in zip(rows, chosen, strict=True):
        key = f"{c['algo']}/{c['proto']}" if c else None
        r["tuning"] = {"algo": c["algo"] if c else None, "proto": c["proto"] if c else None,
                       "time_us": c["time_us"] if c else None,
                       "switch_from": prev if (prev is not None and key != prev) else None,
                       "printed": ctx["printed"].get(int(r["bytes"]))}
        prev = key
    if all(c is None for c in chosen):
        notes.append(f"every (algorithm, protocol) pair for {op} has bandwidth 0 in the table")
    if _nvls_off(table, op) and any(r["algo"] in ("nvls", "nvlstree") for r in rows):
        notes.append(f"the table gives NVLS and NVLSTree bandwidth 0 for {op} (NCCL_NVLS_ENABLE=0, or no NVLS on that "
                     "machine) while the model picks NVLS at some sizes: add --no-nvls to compare like with like")
    return rows, notes


def _nvls_off(table: dict, op: str) -> bool:
    """True when the table lists NVLS for ``op`` and every NVLS and NVLSTree cell has bandwidth 0."""
    algos = table["collectives"].get(op, {})
    cells = [c for a in ("NVLS", "NVLSTree") for c in algos.get(a, {}).values()]
    return bool(cells) and all(c["algbw_GBps"] == 0 for c in cells)


def _switches(rows: list[dict], pick) -> list[str]:
    out = []
    for a, b in zip(rows, rows[1:], strict=False):
        if pick(a) != pick(b):
            out.append(f"{a['bytes']}-{b['bytes']} B: {pick(a)} -> {pick(b)}")
    return out


def format_text(rows: list[dict], notes: list[str], path: str) -> str:
    """NCCL's pick and estimate per size next to the model's, then both sets of switch points."""
    lines = [f"# NCCL's pick from the TUNING table in {path} (its estimate: latency + bytes / bandwidth, with its "
             "tree correction) next to the model's",
             f"#{'size':>14s} {'NCCL algo/proto':>17s} {'NCCL est.(us)':>14s} {'model algo/proto':>17s} "
             f"{'model(us)':>11s}" + (f" {'NCCL printed':>14s}" if any(r["tuning"]["printed"] for r in rows) else "")]
    for r in rows:
        t = r["tuning"]
        nccl = f"{t['algo']}/{t['proto']}" if t["algo"] else "none enabled"
        est = f"{t['time_us']:.2f}" if t["time_us"] is not None else "-"
        printed = f" {t['printed'] or '-':>14s}" if any(x["tuning"]["printed"] for x in rows) else ""
        lines.append(f"{r['bytes']:15d} {nccl:>17s} {est:>14s} {r['algo'] + '/' + r['proto']:>17s} "
                     f"{r['time_s'] * 1e6:11.2f}{printed}")
    nccl_sw = _switches(rows, lambda r: f"{r['tuning']['algo']}/{r['tuning']['proto']}")
    model_sw = _switches(rows, lambda r: f"{r['algo']}/{r['proto']}")
    lines.append("# NCCL's switch points: " + ("; ".join(nccl_sw) if nccl_sw else "none in this range"))
    lines.append("# model's switch points: " + ("; ".join(model_sw) if model_sw else "none in this range"))
    lines += [f"# note: {n}" for n in notes]
    return "\n".join(lines)
