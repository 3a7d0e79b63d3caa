"""The misconceptions quiz (``solutions/quiz_misconceptions_exercises.ipynb``): one question per row of the
instructor guide's misconceptions table, checked with ``check.answer("quiz.NAME", value)``.

Use it at the start and at the end of a workshop to see what moved. Every expected value is computed from
the catalog or the models, never typed in; every plausible wrong answer names the misconception behind it.
The question text is written once, here (Markdown, hardware figures from the catalog): the notebook's question
cells are rendered from it by :func:`question_markdown` (``python3 tasks.py exercises`` refreshes them, and
``--check`` fails when a catalog change left them stale), so a printed quiz and its checker never disagree.
"""

from __future__ import annotations

import math

from .. import catalog, linkmodel, reliability
from ..units import parse_size
from ._answers import Question, answer, questions, register
from ._core import ERROR, FAIL, PASS, TODO, Result


def _ndr():
    return catalog.get_link("ib-ndr")


def _h100():
    return catalog.get_gpu("h100")


_NDR_G = f"{_ndr().line_Gbps_dir:g}"  # the port speed in Gb/s, as a product name quotes it ("...G")
_NVLINK_BIDIR = f"{_h100().nvlink_GBps_bidir:g} GB/s"  # NVIDIA's headline, both directions added

#: qid → the misconception it tests, in the order of the guide's table (tests check one question each).
MISCONCEPTIONS = {
    "quiz.gbps": f"{_NDR_G}G means {_NDR_G} GB/s (GB/s vs Gb/s)",
    "quiz.nvlink_direction": f"NVLink is {_NVLINK_BIDIR}, so a GPU can send {_NVLINK_BIDIR} (per direction vs both)",
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


register(Question(
    "quiz.gbps",
    f"A NIC is sold as **{_NDR_G}G** (InfiniBand NDR). How many **GB/s** can it send in **one direction**, "
    "at line rate?",
    lambda: _ndr().line_GBps_dir, unit="GB/s",
    variants=lambda: {
        f"Misconception: '{_NDR_G}G means {_NDR_G} GB/s'. Network rates are in bits per second: divide by 8.":
            _ndr().line_Gbps_dir,
        "A NIC's Gb/s is already per direction: do not halve it.": _ndr().line_GBps_dir / 2,
    },
    explain=lambda: f"{_ndr().line_Gbps_dir:g} Gb/s ÷ 8 = {_ndr().line_GBps_dir:g} GB/s each way.",
))

register(Question(
    "quiz.nvlink_direction",
    f"NVIDIA quotes **{_NVLINK_BIDIR}** of NVLink for one H100. How many GB/s can it send to its peers in "
    "**one direction**?",
    lambda: catalog.get_system("dgx-h100").scaleup_GBps_dir, unit="GB/s",
    variants=lambda: {
        f"Misconception: 'a GPU can send {_NVLINK_BIDIR}'. The {_NVLINK_BIDIR} adds both directions; one "
        "direction is half.": _h100().nvlink_GBps_bidir,
        f"That is one NVLink 4 link; an H100 has {_h100().nvlink_links}.": catalog.get_link("nvlink4").line_GBps_dir,
    },
    explain=lambda: (f"{catalog.get_system('dgx-h100').links_per_gpu} links × "
                     f"{catalog.get_link('nvlink4').line_GBps_dir:g} GB/s = "
                     f"{catalog.get_system('dgx-h100').scaleup_GBps_dir:g} GB/s per direction."),
))

_ALGBW, _RANKS = 200.0, 8  # a made-up reading to convert, not a hardware figure


register(Question(
    "quiz.busbw",
    f"nccl-tests prints **algbw = {_ALGBW:g} GB/s** for an all-reduce on **{_RANKS} GPUs**. What **busbw** does it "
    "print?",
    lambda: _ALGBW * 2 * (_RANKS - 1) / _RANKS, unit="GB/s",
    variants=lambda: {
        "Misconception: 'busbw and algbw are the same'. For all-reduce busbw = algbw × 2(n−1)/n.": _ALGBW,
        "Close: the factor is 2(n−1)/n, not 2 (each rank sends n−1 of n chunks twice).": 2 * _ALGBW,
        "The factor for all-gather and reduce-scatter is (n−1)/n; all-reduce does both.":
            _ALGBW * (_RANKS - 1) / _RANKS,
    },
    explain=f"busbw = algbw × 2(n−1)/n = {_ALGBW:g} × {2 * (_RANKS - 1) / _RANKS:g}: the rate each link carries.",
))

_RING_GPUS, _RING_LINK_GBps = 8, 100.0  # a made-up ring, not a hardware figure

register(Question(
    "quiz.bisection",
    f"Take a **ring** of {_RING_GPUS} GPUs; every ring link carries {_RING_LINK_GBps:g} GB/s per direction. Cut it "
    f"into two halves of {_RING_GPUS // 2} GPUs. How many GB/s cross the cut in **one direction**?",
    lambda: 2 * _RING_LINK_GBps, unit="GB/s",
    variants=lambda: {
        "Misconception: 'bisection = sum of all links'. Only the links the cut crosses count (two, for a ring).":
            _RING_GPUS * _RING_LINK_GBps,
        "A cut through a ring crosses two links, not one.": _RING_LINK_GBps,
    },
    explain=f"A ring cut in two crosses 2 links: {2 * _RING_LINK_GBps:g} GB/s per direction, whatever the total "
            f"of its {_RING_GPUS} links.",
))


def _h100_tflops() -> float:
    return _h100().bf16_TFLOPS


register(Question(
    "quiz.dense_tflops",
    f"NVIDIA's H100 SXM page lists **{_h100().bf16_sparse_TFLOPS:,.0f} TFLOPS BF16 \"with sparsity\"**. What "
    "**dense** BF16 peak applies to training?",
    _h100_tflops, unit="TFLOPS",
    variants=lambda: {
        "Misconception: 'headline TFLOPS are what training gets'. The headline assumes 2:4 sparsity: dense is "
        "half.": _h100().bf16_sparse_TFLOPS,
    },
    explain=lambda: (f"Dense BF16 is {_h100_tflops():g} TFLOPS, and real jobs reach 30-50 % of it (MFU)."),
))


def _pcie4():
    return catalog.get_link("pcie4")


register(Question(
    "quiz.achievable",
    f"A PCIe Gen4 x16 slot has a line rate of {_pcie4().line_GBps_dir:g} GB/s per direction. What does the "
    "course's model say a large copy **achieves** per direction (GB/s)? (`nvcourse links` prints it.)",
    lambda: _pcie4().achievable_GBps_dir, unit="GB/s", rtol=0.02,
    variants=lambda: {
        "Misconception: 'line rate is what you get'. Headers, encoding and flow control take their share: "
        "achievable = line rate × efficiency.": _pcie4().line_GBps_dir,
    },
    explain=lambda: (f"{_pcie4().line_GBps_dir:g} GB/s × {_pcie4().efficiency:.0%} = "
                     f"{_pcie4().achievable_GBps_dir:.1f} GB/s: the rest is protocol."),
))


def _h100_nvlink() -> linkmodel.LinkParams:
    return linkmodel.link_params(_h100().nvlink, links=_h100().nvlink_links)


def _speedup_4k() -> float:
    p = _h100_nvlink()
    n = 4 * 2**10
    return float(p.time(n) / linkmodel.transfer_time(n, p.alpha_s, 2 * p.beta_Bps))


register(Question(
    "quiz.faster_link",
    f"A **4 KiB** message goes between two H100s over their {_h100().nvlink_links} NVLink 4 links. If the "
    "bandwidth β **doubled** (same α), by what factor would its time fall?",
    _speedup_4k, unit="×", rtol=0.02,
    variants=lambda: {
        "Misconception: 'a faster link makes every message faster in proportion'. 4 KiB is far below "
        "n½ = αβ: the time is almost all α.": 2.0,
    },
    explain=lambda: (f"Only {_speedup_4k():.3f}×: below n½ "
                     f"({_h100_nvlink().half_bandwidth_bytes / 1e6:.1f} MB) "
                     "a message is latency-bound."),
))

register(Question(
    "quiz.mib",
    "How many **MB** (10⁶ bytes) are **64 MiB**, the size nccl-tests prints as 67108864?",
    lambda: parse_size("64MiB") / 1e6, unit="MB", rtol=0.001,
    variants=lambda: {"Misconception: '64 MiB = 64 MB'. MiB is 2^20 bytes; MB is 10^6.": 64.0},
    explain="64 × 2^20 B = 67.108864 MB: a 5 % error that would reappear in every busbw.",
))


def _mtbi_ratio() -> float:
    return reliability.cluster_mtbf_hours(16_384) / reliability.cluster_mtbf_hours(1_024)


register(Question(
    "quiz.more_gpus",
    "A job on 1,024 GPUs is interrupted on average every *M* hours. Same GPUs, same failure rate per GPU: "
    "what **fraction of M** is the mean time between interruptions on **16,384 GPUs**?",
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
    "ECMP hashes **8 flows** onto **8 equal uplinks** at random. What is the probability that **at least two "
    "flows share** an uplink?",
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


def question_markdown(qid: str) -> str:
    """The notebook cell of quiz question ``qid``: a "## Question N" heading, the prompt (Markdown, figures from
    the catalog) and, for a multiple-choice question, its choices. ValueError for an id not in the quiz."""
    if qid not in MISCONCEPTIONS:
        raise ValueError(f"qid must be one of {', '.join(MISCONCEPTIONS)}; got {qid!r}")
    q = questions()[qid]
    text = f"## Question {list(MISCONCEPTIONS).index(qid) + 1}\n\n{q.prompt}"
    if q.choices:
        text += "\n\n" + "\n".join(f"- **{k}** — {v}" for k, v in q.choices.items())
        text += "\n\nAnswer with a letter, as a string."
    return text


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
