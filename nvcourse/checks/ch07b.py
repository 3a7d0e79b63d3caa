"""Checkers for chapter 07b — hiding communication behind compute (DDP bucket timeline, the smallest bucket that
hides, the chunked GEMM/collective pipeline, the DP roofline).

Expected values come from :mod:`nvcourse.overlap` and :mod:`nvcourse.rooflines` (tested in ``tests/test_overlap.py``)
on hand-picked and seeded random inputs. Use in a notebook as ``from nvcourse.checks import ch07b as check``.
"""

from __future__ import annotations

from .. import catalog, overlap, rooflines
from ..i18n import translate as _
from ._core import Case, Result, check_function, rng_for, safe_checker

__all__ = ["bucket_exposed", "min_bucket", "tp_pipeline", "dp_threshold"]


def _ab(alpha: float, beta: float):
    return lambda n: alpha + n / beta


def _exposed(g, tb, b, alpha, beta) -> float:
    return overlap.dp_bucket_timeline(g, tb, b, _ab(alpha, beta)).exposed_s


def _exposed_variants(g, tb, b, alpha, beta) -> dict[str, float | None]:
    n = -(-g // b)
    last = g - (n - 1) * b
    return {
        _("That is what the buckets would cost with no latency per all-reduce: each bucket pays α, so many small "
        "buckets pay many α."): _exposed(g, tb, b, 0.0, beta) if alpha > 0 else None,
        _("That is the whole gradient's all-reduce, not overlapped at all: buckets start while the backward "
          "still runs."):
            alpha + g / beta,
        _("That is only the last bucket's all-reduce: it is the minimum tail, but earlier all-reduces that could not "
        "keep up push the last one later (start = max(ready, previous end))."): alpha + last / beta,
        _("That is total communication minus the backward; the order matters: bucket k cannot start before it is "
        "full, so the timeline can be worse than that."): max(0.0, n * alpha + g / beta - tb),
    }


@safe_checker
def bucket_exposed(fn) -> Result:
    """``fn(grad_bytes, backward_s, bucket_bytes, alpha_s, beta_Bps)`` → exposed seconds of DDP's bucketed
    all-reduce."""
    combos = [(100e6, 1.0, 25e6, 0.0, 100e6 / 1.2), (100e6, 0.5, 3e6, 0.01, 1e9),
              (16e9, 0.48, 25 * 2**20, 216e-6, 370e9), (16e9, 0.48, 2**20, 216e-6, 370e9),
              (17.5e9, 0.53, 2**28, 214e-6, 23.5e9), (1e9, 0.1, 2e9, 1e-5, 1e11)]
    rng = rng_for("bucket_exposed")
    for _i in range(4):
        combos.append((float(round(10 ** rng.uniform(8, 10), -3)), float(round(rng.uniform(0.05, 1.0), 3)),
                       float(2 ** rng.integers(20, 29)), float(round(rng.uniform(1e-5, 3e-4), 7)),
                       float(round(10 ** rng.uniform(10, 11.7), -6))))
    cases = [Case(c, _exposed(*c), _exposed_variants(*c)) for c in combos]
    return check_function("bucket_exposed", fn, ["grad_bytes", "backward_s", "bucket_bytes", "alpha_s", "beta_Bps"],
                          cases, what="a time in seconds", rtol=1e-6, atol=1e-12,
                          hint=_("Bucket k is ready at min(1, (k+1)·B/G)·T_b; it starts at max(ready, previous end) "
                               "and lasts α + size/β; exposed = max(0, last end − T_b)."),
                          success=_("The tail is the last bucket's all-reduce (plus any backlog): small "
                                    "buckets shorten "
                                  "it until their latencies add up to more than the backward."))


def _min_bucket(g, tb, alpha, spb) -> float:
    return overlap.min_hiding_bucket(g, tb, alpha, spb)


@safe_checker
def min_bucket(fn) -> Result:
    """``fn(grad_bytes, backward_s, alpha_s, s_per_byte)`` → the smallest bucket (bytes) whose all-reduces fit in the
    backward (``inf`` when none does)."""
    combos = [(100e6, 0.5, 0.01, 1e-9), (16e9, 0.482, 215.6e-6, 1 / 370e9), (1e9, 0.2, 5e-5, 1e-11),
              (4e9, 0.3, 1e-4, 1 / 47e9)]
    rng = rng_for("min_bucket")
    for _i in range(4):
        combos.append((float(round(10 ** rng.uniform(8, 10), -3)), float(round(rng.uniform(0.2, 1.0), 3)),
                       float(round(rng.uniform(1e-5, 3e-4), 7)), 1 / float(round(10 ** rng.uniform(11, 11.8), -6))))
    cases = [Case(c, _min_bucket(*c), {
        _("You forgot that the bandwidth part also uses up the backward: B ≥ G·α/(T_b − G/β), not G·α/T_b."):
            c[0] * c[2] / c[1],
        _("That is a number of buckets, not a size: B = G / (number of buckets)."):
            (c[1] - c[0] * c[3]) / c[2],
    }) for c in combos]
    return check_function("min_bucket", fn, ["grad_bytes", "backward_s", "alpha_s", "s_per_byte"], cases,
                          what="a size in bytes (or inf)", rtol=1e-6,
                          hint=_("(G/B) buckets × (α + B/β) ≤ T_b  ⇒  B ≥ G·α / (T_b − G/β)."),
                          success=_("Above this size the all-reduces keep up with the backward; what remains is the "
                                  "tail, which grows with B: the best bucket is a little above this bound."))


def _pipe(g, t, c) -> float:
    return g / c + (c - 1) * max(g / c, t / c) + t / c


@safe_checker
def tp_pipeline(fn) -> Result:
    """``fn(gemm_s, comm_s, chunks)`` → time of a GEMM and its collective split into ``chunks`` and pipelined
    (no per-chunk latency, no SM cost)."""
    combos = [(4e-3, 2e-3, 4), (4e-3, 2e-3, 1), (1e-3, 3e-3, 4), (2e-3, 2e-3, 2), (5e-4, 1e-4, 8)]
    rng = rng_for("tp_pipeline")
    combos += [(float(round(rng.uniform(1e-4, 5e-3), 6)), float(round(rng.uniform(1e-4, 5e-3), 6)),
                int(rng.integers(1, 9))) for _i in range(4)]
    cases = [Case(c, _pipe(*c), {
        _("That is perfect overlap, max(GEMM, comm): the first GEMM chunk and the last collective chunk cannot overlap "
        "anything."): max(c[0], c[1]) if c[2] > 1 else None,
        _("That is no overlap at all (GEMM + comm): with c chunks, chunk i's collective runs while chunk i+1 "
          "computes."):
            c[0] + c[1] if c[2] > 1 else None,
    }) for c in combos]
    return check_function("tp_pipeline", fn, ["gemm_s", "comm_s", "chunks"], cases, what="a time in seconds",
                          hint=_("Two stages, c items: g/c + (c − 1)·max(g/c, t/c) + t/c."),
                          success=_("Splitting hides all but one chunk of the shorter stage; in practice each "
                                    "chunk also "
                                  "pays a collective latency and the GEMM loses the SMs the collective holds."))


@safe_checker
def dp_threshold(fn) -> Result:
    """``fn(system, per_node)`` → tokens per GPU above which data parallelism over ``system``'s NICs is compute-bound
    (dense BF16 peak, achievable NIC rate, ``per_node`` DP ranks per node)."""
    combos = [("dgx-h100", 8), ("dgx-h100", 1), ("dgx-b200", 8), ("gb200-nvl72", 4), ("dgx-a100", 8)]
    cases = []
    for sid, r in combos:
        C, W = rooflines.gpu_rates(sid, link="nic")
        line = catalog.get_system(sid).scaleout_GBps_dir_per_gpu * 1e9
        cases.append(Case((sid, r), rooflines.dp_roofline(1.0, C, W, per_node=r).threshold, {
            _("That is C/W with no node-local reduction: NCCL reduces inside the node first, so each NIC carries 1/r "
            "of the gradient: C/(r·W)."): C / W if r > 1 else None,
            _("You used the NIC's line rate; use the achievable rate (line × the link's efficiency)."): C / (r * line),
            _("Bits and bytes: the NIC rate in the catalog is GB/s (bytes)."): C / (r * W / 8),
        }))
    return check_function("dp_threshold", fn, ["system", "per_node"], cases, what="a number of tokens", rtol=1e-4,
                          hint=_("C = bf16_TFLOPS × 1e12; W = scaleout_GBps_dir_per_gpu × nic.efficiency × 1e9; "
                               "T* = C/(r·W)."),
                          success=_("Below this many tokens per GPU per step, no bucket size can hide the gradient "
                                  "all-reduce: more tokens per GPU, fewer DP ranks per NIC or faster NICs are the "
                                  "fixes."))
