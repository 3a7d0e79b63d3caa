"""The misconceptions quiz (``solutions/quiz_misconceptions_exercises.ipynb``): one question per row of the
instructor guide's misconceptions table, checked with ``check.answer("quiz.NAME", value)``.

Use it at the start and at the end of a workshop to see what moved. Every expected value is computed from
the catalog or the models, never typed in; every plausible wrong answer names the misconception behind it.
"""

from __future__ import annotations

import math

from .. import catalog, linkmodel, reliability
from ..units import parse_size
from ._answers import Question, answer, register
from ._core import ERROR, FAIL, PASS, TODO, Result

#: qid → the misconception it tests, in the order of the guide's table (tests check one question each).
MISCONCEPTIONS = {
    "quiz.gbps": "400G means 400 GB/s (GB/s vs Gb/s)",
    "quiz.nvlink_direction": "NVLink is 900 GB/s, so a GPU can send 900 GB/s (per direction vs both)",
    "quiz.busbw": "busbw and algbw are interchangeable",
    "quiz.bisection": "bisection bandwidth = sum of all links",
    "quiz.dense_tflops": "headline TFLOPS are what training gets (sparse vs dense)",
    "quiz.achievable": "line rate is what you get (line rate vs achievable)",
    "quiz.faster_link": "a faster link makes every message faster in proportion",
    "quiz.mib": "64 MiB = 64 MB",
    "quiz.more_gpus": "more GPUs always means a faster, smoother job",
    "quiz.ecmp": "ECMP spreads traffic evenly",
    "quiz.benchmark": "a benchmark number is a property of the hardware",
}


def _ndr():
    return catalog.get_link("ib-ndr")


register(Question(
    "quiz.gbps",
    "A NIC is sold as '400G' (InfiniBand NDR). How many GB/s can it send in one direction, at line rate?",
    lambda: _ndr().line_GBps_dir, unit="GB/s",
    variants=lambda: {
        "Misconception: '400G means 400 GB/s'. Network rates are in bits per second: divide by 8.":
            _ndr().line_Gbps_dir,
        "A NIC's Gb/s is already per direction: do not halve it.": _ndr().line_GBps_dir / 2,
    },
    explain=lambda: f"{_ndr().line_Gbps_dir:g} Gb/s ÷ 8 = {_ndr().line_GBps_dir:g} GB/s each way.",
))

register(Question(
    "quiz.nvlink_direction",
    "NVIDIA quotes 900 GB/s of NVLink for one H100. How many GB/s can it send to its peers in ONE direction?",
    lambda: catalog.get_system("dgx-h100").scaleup_GBps_dir, unit="GB/s",
    variants=lambda: {
        "Misconception: 'a GPU can send 900 GB/s'. The 900 GB/s adds both directions; one direction is half.":
            catalog.get_gpu("h100").nvlink_GBps_bidir,
        "That is one NVLink 4 link; an H100 has 18.": catalog.get_link("nvlink4").line_GBps_dir,
    },
    explain=lambda: (f"{catalog.get_system('dgx-h100').links_per_gpu} links × "
                     f"{catalog.get_link('nvlink4').line_GBps_dir:g} GB/s = "
                     f"{catalog.get_system('dgx-h100').scaleup_GBps_dir:g} GB/s per direction."),
))

_ALGBW, _RANKS = 200.0, 8  # a made-up reading to convert, not a hardware figure


register(Question(
    "quiz.busbw",
    f"nccl-tests prints algbw = {_ALGBW:g} GB/s for an all-reduce on {_RANKS} GPUs. What busbw does it print?",
    lambda: _ALGBW * 2 * (_RANKS - 1) / _RANKS, unit="GB/s",
    variants=lambda: {
        "Misconception: 'busbw and algbw are the same'. For all-reduce busbw = algbw × 2(n−1)/n.": _ALGBW,
        "Close: the factor is 2(n−1)/n, not 2 (each rank sends n−1 of n chunks twice).": 2 * _ALGBW,
        "The factor for all-gather and reduce-scatter is (n−1)/n; all-reduce does both.":
            _ALGBW * (_RANKS - 1) / _RANKS,
    },
    explain=f"busbw = algbw × 2(n−1)/n = {_ALGBW:g} × {2 * (_RANKS - 1) / _RANKS:g}: the rate each link carries.",
))

register(Question(
    "quiz.bisection",
    "Eight GPUs form a ring; every ring link carries 100 GB/s per direction. Cut the ring into two halves of "
    "four GPUs. How many GB/s cross the cut in one direction?",
    lambda: 2 * 100.0, unit="GB/s",
    variants=lambda: {
        "Misconception: 'bisection = sum of all links'. Only the links the cut crosses count (two, for a ring).":
            8 * 100.0,
        "A cut through a ring crosses two links, not one.": 100.0,
    },
    explain="A ring cut in two crosses 2 links: 200 GB/s per direction, whatever the total of its 8 links.",
))


def _h100_tflops() -> float:
    return catalog.get_gpu("h100").bf16_TFLOPS


register(Question(
    "quiz.dense_tflops",
    f"NVIDIA's H100 SXM page lists {2 * catalog.get_gpu('h100').bf16_TFLOPS:,.0f} TFLOPS BF16 'with sparsity'. "
    "What dense BF16 peak applies to training?",
    _h100_tflops, unit="TFLOPS",
    variants=lambda: {
        "Misconception: 'headline TFLOPS are what training gets'. The headline assumes 2:4 sparsity: dense is "
        "half.": 2 * _h100_tflops(),
    },
    explain=lambda: (f"Dense BF16 is {_h100_tflops():g} TFLOPS, and real jobs reach 30-50 % of it (MFU)."),
))


def _pcie4():
    return catalog.get_link("pcie4")


register(Question(
    "quiz.achievable",
    f"A PCIe Gen4 x16 slot has a line rate of {catalog.get_link('pcie4').line_GBps_dir:g} GB/s per direction. "
    "What does the course's model say a large copy achieves per direction (GB/s)?",
    lambda: _pcie4().achievable_GBps_dir, unit="GB/s", rtol=0.02,
    variants=lambda: {
        "Misconception: 'line rate is what you get'. Headers, encoding and flow control take their share: "
        "achievable = line rate × efficiency.": _pcie4().line_GBps_dir,
    },
    explain=lambda: (f"{_pcie4().line_GBps_dir:g} GB/s × {_pcie4().efficiency:.0%} = "
                     f"{_pcie4().achievable_GBps_dir:.1f} GB/s: the rest is protocol."),
))


def _speedup_4k() -> float:
    p = linkmodel.link_params("nvlink4", links=18)
    n = 4 * 2**10
    return float(p.time(n) / linkmodel.transfer_time(n, p.alpha_s, 2 * p.beta_Bps))


register(Question(
    "quiz.faster_link",
    "A 4 KiB message goes between two H100s over their 18 NVLink 4 links. If the bandwidth β doubled (same α), "
    "by what factor would its time fall?",
    _speedup_4k, unit="×", rtol=0.02,
    variants=lambda: {
        "Misconception: 'a faster link makes every message faster in proportion'. 4 KiB is far below "
        "n½ = αβ: the time is almost all α.": 2.0,
    },
    explain=lambda: (f"Only {_speedup_4k():.3f}×: below n½ "
                     f"({linkmodel.link_params('nvlink4', links=18).half_bandwidth_bytes / 1e6:.1f} MB) "
                     "a message is latency-bound."),
))

register(Question(
    "quiz.mib",
    "How many MB (10^6 bytes) are 64 MiB, the size nccl-tests prints as 67108864?",
    lambda: parse_size("64MiB") / 1e6, unit="MB", rtol=0.001,
    variants=lambda: {"Misconception: '64 MiB = 64 MB'. MiB is 2^20 bytes; MB is 10^6.": 64.0},
    explain="64 × 2^20 B = 67.108864 MB: a 5 % error that would reappear in every busbw.",
))


def _mtbi_ratio() -> float:
    return reliability.cluster_mtbf_hours(16_384) / reliability.cluster_mtbf_hours(1_024)


register(Question(
    "quiz.more_gpus",
    "A job on 1,024 GPUs is interrupted on average every M hours. Same GPUs, same failure rate per GPU: "
    "what fraction of M is the mean time between interruptions on 16,384 GPUs?",
    _mtbi_ratio, rtol=0.01,
    variants=lambda: {
        "Misconception: 'more GPUs, same reliability'. Failures add up: the interval falls as 1/N.": 1.0,
        "The other way round: 16× more GPUs means 16× more failures per hour, so a 16× SHORTER interval.": 16.0,
    },
    explain=lambda: f"1,024 / 16,384 = {_mtbi_ratio():g}: the mean time between interruptions falls as 1/N.",
))


def _p_collision(flows: int = 8, links: int = 8) -> float:
    return 1.0 - math.perm(links, flows) / links**flows


register(Question(
    "quiz.ecmp",
    "ECMP hashes 8 flows onto 8 equal uplinks at random. What is the probability that at least two flows share "
    "an uplink (so one collective runs at half speed)?",
    _p_collision, rtol=0.005,
    variants=lambda: {
        "Misconception: 'ECMP spreads traffic evenly'. Hashing is balls into bins: collisions are almost "
        "certain (8!/8^8 is the chance of none).": 0.0,
        "That is the chance that two given flows collide (1/8); with 8 flows there are 28 pairs.": 1 / 8,
    },
    explain=lambda: f"1 − 8!/8^8 = {_p_collision():.4f}: with as many flows as links, a collision is near certain.",
))

register(Question(
    "quiz.benchmark",
    "A vendor reports an all-reduce busbw close to the NVLink rate on 8 GPUs. What do you need before comparing "
    "it with your job?",
    lambda: "c",
    choices={
        "a": "nothing: busbw is a property of the GPUs and links",
        "b": "only the GPU model",
        "c": "the message size, the number of GPUs and nodes, the placement and whether the fabric was idle",
    },
    wrong_choice={
        "a": "Misconception: 'a benchmark number is a property of the hardware'. It also depends on size, "
             "placement and load.",
        "b": "The GPU model is not enough: message size, scale, placement and load change busbw several-fold.",
    },
    explain="A number is hardware + size + scale + placement + load; hero runs fix all four at their best.",
))


def score(answers: dict[str, object]) -> Result:
    """Check every answer given (``{qid: value or function}``) and sum up which misconceptions remain.

    Passes when every question of the quiz is answered right; the summary is the count, so a room can
    compare the start and the end of a workshop.
    """
    unknown = sorted(set(answers) - set(MISCONCEPTIONS))
    if unknown:
        return Result("quiz score", ERROR, f"not quiz questions: {', '.join(unknown)}.",
                      hint=f"Use the ids of the quiz: {', '.join(MISCONCEPTIONS)}.")
    right, wrong, open_ = [], [], []
    for qid, misconception in MISCONCEPTIONS.items():
        result = answer(qid, answers[qid]) if qid in answers else None
        if result is None or result.status in (TODO, ERROR):  # the stub, or nothing checkable: not a belief
            open_.append(misconception)
        else:
            (right if result.passed else wrong).append(misconception)
    summary = f"{len(right)} of {len(MISCONCEPTIONS)} right"
    summary += f" ({len(open_)} not answered yet)." if open_ else "."
    if not wrong and not open_:
        status, hint = PASS, ""
    elif not right and not wrong:
        status, hint = TODO, "Answer the questions above (each check cell says what is missing), then run this again."
    else:
        status = FAIL
        hint = "The check under each question says what its answer shows (a tell-tale answer names its misconception)."
    return Result("quiz score", status, summary,
                  right=[f"no longer believed: {m}" for m in right],
                  wrong=[f"still to unlearn: {m}" for m in wrong] + [f"not answered yet: {m}" for m in open_],
                  hint=hint)
