"""Compare the model's copy of NCCL's tuner with the TUNING table NCCL printed on a real machine.

NCCL prints, per collective, algorithm and protocol, the latency (us) and bandwidth (GB/s) its tuner uses
(``NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING``). The model computes the same two figures from NCCL's formulas
(:func:`nvcourse.costmodel.protocols.nccl_cost`, :func:`nvcourse.costmodel.latency.latency_s`). This tool lines them
up for every pair NCCL's table has and the model costs (ring, tree, NVLS, NVLSTree, PAT; CollNet is not modelled):

    python -m nvcourse.devtools.tuner_check LOG --system dgx-h100 --gpus 8 [--nodes N] [--nccl-version X.Y]
        [--no-nvls] [--json]

A cell agrees when both figures are within 1 % (0.05 us / 0.05 GB/s for the printed one-decimal rounding); a pair
one side disables and the other enables is a disagreement too. Exit status 0 when it ran (whatever it found), 2 on a
bad argument or a log without a TUNING table.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass, replace

from ..costmodel import Config, configure, protocols
from ..costmodel.latency import latency_s
from ..costmodel.model import NCCL_ALGORITHMS, why_not
from ..nccl.ncclog import read_text

__all__ = ["Cell", "compare", "main"]

#: NCCL's printed algorithm names -> the model's (CollNet is not modelled)
_ALGOS = {"Tree": "tree", "Ring": "ring", "NVLS": "nvls", "NVLSTree": "nvlstree", "PAT": "pat"}


@dataclass(frozen=True)
class Cell:
    """One (collective, algorithm, protocol): NCCL's printed latency (us) and bandwidth (GB/s), and the model's."""

    op: str
    algo: str
    proto: str
    nccl_latency_us: float
    nccl_bw_GBps: float
    model_latency_us: float | None
    model_bw_GBps: float | None

    @property
    def agrees(self) -> bool:
        nccl_on, model_on = self.nccl_bw_GBps > 0, self.model_bw_GBps is not None
        if nccl_on != model_on:
            return False
        if not nccl_on:
            return True
        assert self.model_latency_us is not None and self.model_bw_GBps is not None
        return (abs(self.model_latency_us - self.nccl_latency_us) <= 0.05 + 0.01 * self.nccl_latency_us
                and abs(self.model_bw_GBps - self.nccl_bw_GBps) <= 0.05 + 0.01 * self.nccl_bw_GBps)


def _model(op: str, algo: str, proto: str, c: Config) -> tuple[float | None, float | None]:
    """The model's NCCL latency (us) and bandwidth (GB/s) of one pair; (None, None) where NCCL's formulas, as the
    model has them, leave the pair disabled."""
    if algo not in NCCL_ALGORITHMS.get(op, ()) or why_not(op, algo, c) is not None:
        return None, None
    if proto not in protocols.protocols_for(op, algo, c):
        return None, None
    cs = protocols.nccl_cost(op, algo, proto, c)
    spb = cs.s_per_byte if cs.choice_s_per_byte is None else cs.choice_s_per_byte  # NCCL's table, where derived
    return latency_s(op, algo, proto, c) * 1e6, 1.0 / spb / 1e9


def compare(text: str, system: str, gpus: int, nodes: int = 1, nccl_version: str | None = None,
            nvls: bool = True) -> list[Cell]:
    """Every cell of the first TUNING table in ``text`` next to the model's, on ``system`` with ``gpus`` per node
    (``nvls=False``: the job ran with NCCL_NVLS_ENABLE=0)."""
    tables = read_text(text).tuning_tables
    if not tables:
        raise ValueError("LOG must hold an NCCL TUNING table (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING); none found")
    c = configure(system, gpus, nodes, nccl_version=nccl_version)
    if not isinstance(nvls, bool):
        raise ValueError(f"nvls must be True or False; got {nvls!r}")
    c = c if nvls else replace(c, nvls_enabled=False)
    out = []
    for op, algos in tables[0]["collectives"].items():
        for name, protos in algos.items():
            algo = _ALGOS.get(name)
            if algo is None:
                continue
            for proto, cell in protos.items():
                lat, bw = _model(op, algo, proto, c)
                out.append(Cell(op, algo, proto, cell["latency_us"], cell["algbw_GBps"], lat, bw))
    return out


def _fmt(x: float | None) -> str:
    return "    off" if x is None else f"{x:7.1f}"


def _text(cells: list[Cell]) -> str:
    lines = [f"{'collective':14s} {'algo':9s} {'proto':6s} {'NCCL us':>8s} {'GB/s':>7s} {'model us':>9s} {'GB/s':>7s}"]
    for x in cells:
        if x.nccl_bw_GBps == 0 and x.model_bw_GBps is None:
            continue  # off on both sides
        mark = "" if x.agrees else "  <- differs"
        lines.append(f"{x.op:14s} {x.algo:9s} {x.proto:6s} {x.nccl_latency_us:8.1f} {x.nccl_bw_GBps:7.1f} "
                     f"{_fmt(x.model_latency_us)}  {_fmt(x.model_bw_GBps)}{mark}")
    on = [x for x in cells if x.nccl_bw_GBps > 0 or x.model_bw_GBps is not None]
    lines.append(f"agree: {sum(x.agrees for x in on)} of {len(on)} cells enabled on either side")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("log", metavar="LOG", help="an NCCL log with its TUNING table")
    parser.add_argument("--system", required=True, help="catalog system id (nvcourse systems)")
    parser.add_argument("--gpus", type=int, required=True, help="GPUs per node the log's job used")
    parser.add_argument("--nodes", type=int, default=1, help="nodes (default 1)")
    parser.add_argument("--nccl-version", default=None, metavar="X.Y", help="the release whose tables to use")
    parser.add_argument("--no-nvls", dest="nvls", action="store_false", help="the job set NCCL_NVLS_ENABLE=0")
    parser.add_argument("--json", action="store_true", help="every cell as JSON")
    args = parser.parse_args(argv)  # argparse exits with status 2 on a bad argument
    try:
        with open(args.log, encoding="utf-8", errors="replace") as f:
            cells = compare(f.read(), args.system, args.gpus, args.nodes, args.nccl_version, args.nvls)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([asdict(x) | {"agrees": x.agrees} for x in cells], indent=1))
    else:
        print(_text(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
