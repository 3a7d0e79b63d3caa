"""The misconceptions quiz: one question per row of the instructor guide's misconceptions table, in two
parallel forms that test the same misconception with different numbers.

* **pre** (``solutions/quiz_misconceptions_exercises.ipynb``, ids ``quiz.NAME``): taken at the start of a
  workshop. :func:`record` keeps each answer and says nothing about it, so the pre-test does not teach the
  answers it is meant to measure.
* **post** (``solutions/quiz_misconceptions_post_exercises.ipynb``, ids ``quiz.post.NAME``): taken at the end.
  :func:`answer` gives the verdict and, for a tell-tale wrong answer, the misconception behind it.

Both forms save the learner's answers (:mod:`.quiz_results`) so an instructor can build a pre/post table
(``python -m nvcourse.devtools.quiz_report``). Every expected value is computed from the catalog or the models,
never typed in. The question text is written once, here (Markdown, hardware figures from the catalog): the
notebooks' question cells are rendered from it by :func:`question_markdown` (``python3 tasks.py exercises``
refreshes them, and ``--check`` fails when a catalog change left them stale).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .. import catalog, linkmodel, reliability
from .._validate import choice
from ..units import parse_size
from . import _answers, quiz_results
from ._answers import Question, questions, register
from ._core import ERROR, RECORDED, Result, fmt, learner_value, safe_checker, to_number

FORMS = ("pre", "post")

_NDR_G = f"{catalog.get_link('ib-ndr').line_Gbps_dir:g}"  # the port speed in Gb/s, as a product name quotes it
_NVLINK_BIDIR = f"{catalog.get_gpu('h100').nvlink_GBps_bidir:g} GB/s"  # NVIDIA's headline, both directions added

#: pre-form qid → the misconception it tests, in the order of the guide's table (tests check one question each).
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


def qid_for(key: str, form: str) -> str:
    """The id of misconception ``key`` (a pre-form id such as ``"quiz.gbps"``) in ``form``."""
    choice("form", form, FORMS)
    return key if form == "pre" else key.replace("quiz.", "quiz.post.", 1)


def key_of(qid: str) -> str:
    """The misconception key (pre-form id) of a question id of either form."""
    return qid.replace("quiz.post.", "quiz.", 1)


def form_of(qid: str) -> str:
    return "post" if qid.startswith("quiz.post.") else "pre"


# --- 1. Gb/s vs GB/s ---------------------------------------------------------------------------------------------

def _gbps(form: str, link_id: str, fabric: str) -> Question:
    link = catalog.get_link(link_id)
    g = f"{link.line_Gbps_dir:g}"
    return Question(
        qid_for("quiz.gbps", form),
        f"A NIC is sold as **{g}G** ({fabric}). How many **GB/s** can it send in **one direction**, at line rate?",
        lambda: link.line_GBps_dir, unit="GB/s",
        variants=lambda: {
            f"Misconception: '{g}G means {g} GB/s'. Network rates are in bits per second: divide by 8.":
                link.line_Gbps_dir,
            "A NIC's Gb/s is already per direction: do not halve it.": link.line_GBps_dir / 2,
        },
        explain=lambda: f"{link.line_Gbps_dir:g} Gb/s ÷ 8 = {link.line_GBps_dir:g} GB/s each way.")


# --- 2. per direction vs both ------------------------------------------------------------------------------------

def _nvlink_direction(form: str, gpu_id: str, system_id: str) -> Question:
    gpu, system = catalog.get_gpu(gpu_id), catalog.get_system(system_id)
    link = catalog.get_link(gpu.nvlink)
    headline = f"{gpu.nvlink_GBps_bidir:g} GB/s"
    short = gpu.name.split("(")[0].replace("NVIDIA ", "").strip()
    return Question(
        qid_for("quiz.nvlink_direction", form),
        f"NVIDIA quotes **{headline}** of NVLink for one {short}. How many GB/s can it send to its peers in "
        "**one direction**?",
        lambda: system.scaleup_GBps_dir, unit="GB/s",
        variants=lambda: {
            f"Misconception: 'a GPU can send {headline}'. The {headline} adds both directions; one direction is "
            "half.": gpu.nvlink_GBps_bidir,
            f"That is one {link.name.split(' (')[0]} link; a {short} has {gpu.nvlink_links}.": link.line_GBps_dir,
        },
        explain=lambda: (f"{system.links_per_gpu} links × {link.line_GBps_dir:g} GB/s = "
                         f"{system.scaleup_GBps_dir:g} GB/s per direction."))


# --- 3. busbw vs algbw (a made-up reading to convert, not a hardware figure) -------------------------------------

def _busbw(form: str, algbw: float, ranks: int) -> Question:
    factor = 2 * (ranks - 1) / ranks
    return Question(
        qid_for("quiz.busbw", form),
        f"nccl-tests prints **algbw = {algbw:g} GB/s** for an all-reduce on **{ranks} GPUs**. What **busbw** does "
        "it print?",
        lambda: algbw * factor, unit="GB/s",
        variants=lambda: {
            "Misconception: 'busbw and algbw are the same'. For all-reduce busbw = algbw × 2(n−1)/n.": algbw,
            "Close: the factor is 2(n−1)/n, not 2 (each rank sends n−1 of n chunks twice).": 2 * algbw,
            "The factor for all-gather and reduce-scatter is (n−1)/n; all-reduce does both.": algbw * factor / 2,
        },
        explain=f"busbw = algbw × 2(n−1)/n = {algbw:g} × {factor:g}: the rate each link carries.")


# --- 4. bisection (a made-up ring, not a hardware figure) --------------------------------------------------------

def _bisection(form: str, gpus: int, link_GBps: float) -> Question:
    return Question(
        qid_for("quiz.bisection", form),
        f"Take a **ring** of {gpus} GPUs; every ring link carries {link_GBps:g} GB/s per direction. Cut it into two "
        f"halves of {gpus // 2} GPUs. How many GB/s cross the cut in **one direction**?",
        lambda: 2 * link_GBps, unit="GB/s",
        variants=lambda: {
            "Misconception: 'bisection = sum of all links'. Only the links the cut crosses count (two, for a ring).":
                gpus * link_GBps,
            "A cut through a ring crosses two links, not one.": link_GBps,
        },
        explain=f"A ring cut in two crosses 2 links: {2 * link_GBps:g} GB/s per direction, whatever the total of "
                f"its {gpus} links.")


# --- 5. sparse vs dense ------------------------------------------------------------------------------------------

def _dense_tflops(form: str, gpu_id: str, page: str) -> Question:
    gpu = catalog.get_gpu(gpu_id)
    short = gpu.name.split("(")[0].replace("NVIDIA ", "").strip()
    return Question(
        qid_for("quiz.dense_tflops", form),
        f"{page} lists **{gpu.bf16_sparse_TFLOPS:,.0f} TFLOPS BF16** for the {short}, with a footnote \"with "
        "sparsity\". What **dense** BF16 peak applies to training?",
        lambda: gpu.bf16_TFLOPS, unit="TFLOPS",
        variants=lambda: {
            "Misconception: 'headline TFLOPS are what training gets'. The headline assumes 2:4 sparsity: dense is "
            "half.": gpu.bf16_sparse_TFLOPS,
        },
        explain=lambda: f"Dense BF16 is {gpu.bf16_TFLOPS:g} TFLOPS, and real jobs reach 30-50 % of it (MFU).")


# --- 6. line rate vs achievable ----------------------------------------------------------------------------------

#: A plan within this fraction of the course's model is right: the course teaches "≈ 0.9 of line rate" while the
#: catalog's PCIe efficiency is 0.88, and the question asks for a plan, not the catalog's digits. Line rate itself
#: (1/0.88 = 1.14× the model) stays outside.
ACHIEVABLE_RTOL = 0.08


def _achievable(form: str, link_id: str) -> Question:
    link = catalog.get_link(link_id)
    return Question(
        qid_for("quiz.achievable", form),
        f"A {link.name} slot has a line rate of **{link.line_GBps_dir:g} GB/s** per direction. You copy a large "
        "buffer from host memory to the GPU. About how many GB/s per direction should you **plan for**?",
        lambda: link.achievable_GBps_dir, unit="GB/s", rtol=ACHIEVABLE_RTOL,
        variants=lambda: {
            "Misconception: 'line rate is what you get'. Packet headers, encoding and flow control take their "
            "share: plan for about 0.9 of the line rate.": link.line_GBps_dir,
            "The line rate is already per direction: do not halve it.": link.line_GBps_dir / 2,
        },
        explain=lambda: (f"{link.line_GBps_dir:g} GB/s × {link.efficiency:.0%} ≈ {link.achievable_GBps_dir:.1f} GB/s "
                         "in the course's model (≈ 0.9 of line rate): the rest is protocol."))


# --- 7. α dominates small messages -------------------------------------------------------------------------------

def _faster_link(form: str, gpu_id: str, size: str) -> Question:
    gpu = catalog.get_gpu(gpu_id)
    params = linkmodel.link_params(gpu.nvlink, links=gpu.nvlink_links)
    nbytes = parse_size(size)
    short = gpu.name.split("(")[0].replace("NVIDIA ", "").strip()
    link_name = catalog.get_link(gpu.nvlink).name.split(" (")[0]

    def speedup() -> float:
        return float(params.time(nbytes) / linkmodel.transfer_time(nbytes, params.alpha_s, 2 * params.beta_Bps))

    return Question(
        qid_for("quiz.faster_link", form),
        f"A **{size.replace('KiB', ' KiB')}** message goes between two {short}s over their {gpu.nvlink_links} "
        f"{link_name} links. If the bandwidth β **doubled** (same α), by what factor would its time fall?",
        speedup, unit="×", rtol=0.02,
        variants=lambda: {
            "Misconception: 'a faster link makes every message faster in proportion'. This message is far below "
            "n½ = αβ: the time is almost all α.": 2.0,
        },
        explain=lambda: (f"Only {speedup():.3f}×: below n½ ({params.half_bandwidth_bytes / 1e6:.1f} MB) a message "
                         "is latency-bound."))


# --- 8. MiB vs MB ------------------------------------------------------------------------------------------------

def _mib(form: str, mib: int) -> Question:
    return Question(
        qid_for("quiz.mib", form),
        f"How many **MB** (10⁶ bytes) are **{mib} MiB**, the size nccl-tests prints as {mib * 2**20}?",
        lambda: parse_size(f"{mib}MiB") / 1e6, unit="MB", rtol=0.001,
        variants=lambda: {f"Misconception: '{mib} MiB = {mib} MB'. MiB is 2^20 bytes; MB is 10^6.": float(mib)},
        explain=f"{mib} × 2^20 B = {mib * 2**20 / 1e6:g} MB: a 5 % error that would reappear in every busbw.")


# --- 9. failures add up ------------------------------------------------------------------------------------------

def _more_gpus(form: str, small: int, large: int) -> Question:
    def ratio() -> float:
        return reliability.cluster_mtbf_hours(large) / reliability.cluster_mtbf_hours(small)

    k = large // small
    return Question(
        qid_for("quiz.more_gpus", form),
        f"A job on {small:,} GPUs is interrupted on average every *M* hours. Same GPUs, same failure rate per GPU: "
        f"what **fraction of M** is the mean time between interruptions on **{large:,} GPUs**?",
        ratio, rtol=0.01,
        variants=lambda: {
            "Misconception: 'more GPUs, same reliability'. Failures add up: the interval falls as 1/N.": 1.0,
            f"The other way round: {k}× more GPUs means {k}× more failures per hour, so a {k}× SHORTER interval.":
                float(k),
        },
        explain=lambda: f"{small:,} / {large:,} = {ratio():g}: the mean time between interruptions falls as 1/N.")


# --- 10. ECMP collisions -----------------------------------------------------------------------------------------

def _ecmp(form: str, n: int) -> Question:
    def p_collision() -> float:
        return 1.0 - math.perm(n, n) / n**n

    return Question(
        qid_for("quiz.ecmp", form),
        f"ECMP hashes **{n} flows** onto **{n} equal uplinks** at random. What is the probability that **at least "
        "two flows share** an uplink?",
        p_collision, rtol=0.005,
        variants=lambda: {
            f"Misconception: 'ECMP spreads traffic evenly'. Hashing is balls into bins: collisions are almost "
            f"certain ({n}!/{n}^{n} is the chance of none).": 0.0,
            f"That is the chance that two given flows collide (1/{n}); with {n} flows there are {math.comb(n, 2)} "
            "pairs.": 1 / n,
        },
        explain=lambda: f"1 − {n}!/{n}^{n} = {p_collision():.4f}: with as many flows as links, a collision is near "
                        "certain.")


# --- 11. a benchmark is a setting, not a property ----------------------------------------------------------------

@dataclass(frozen=True)
class _Choices:
    scenario: str
    right: str  # the letter of the complete answer
    order: tuple[str, str, str]  # which option goes under a, b, c


_OPTIONS = {  # equally long, each plausible: one is complete, the others name one true factor each
    "hardware": "the GPU model and its NVLink generation, which set the ceiling any run can reach",
    "setting": "the message size, the GPU and node count, the placement and whether the fabric was idle",
    "software": "the NCCL and CUDA driver versions, which decide the algorithm and protocol that ran",
}
_WHY = {
    "hardware": "Misconception: 'a benchmark number is a property of the hardware'. The same GPUs give busbw "
                "several-fold apart with size, scale, placement and load.",
    "software": "Versions matter, but even with the same versions, size, scale, placement and load change busbw "
                "several-fold.",
}


def _benchmark(form: str, c: _Choices) -> Question:
    letters = dict(zip("abc", c.order))
    return Question(
        qid_for("quiz.benchmark", form),
        c.scenario + " What must you know **first**, before comparing it with your own job?",
        lambda: next(k for k, v in letters.items() if v == "setting"),
        choices={k: _OPTIONS[v] for k, v in letters.items()},
        wrong_choice={k: _WHY[v] for k, v in letters.items() if v != "setting"},
        explain="A number is hardware + size + scale + placement + load; hero runs fix all four at their best.")


def _register_forms() -> None:
    # pre: the figures the course uses most; post: a sibling product with other numbers, same misconception
    for q in (
        _gbps("pre", "ib-ndr", "InfiniBand NDR"), _gbps("post", "ib-xdr", "InfiniBand XDR"),
        _nvlink_direction("pre", "h100", "dgx-h100"), _nvlink_direction("post", "a100", "dgx-a100"),
        _busbw("pre", 200.0, 8), _busbw("post", 120.0, 16),
        _bisection("pre", 8, 100.0), _bisection("post", 16, 50.0),
        _dense_tflops("pre", "h100", "NVIDIA's H100 SXM page"),
        _dense_tflops("post", "b200", "A B200 specification sheet"),
        _achievable("pre", "pcie4"), _achievable("post", "pcie5"),
        _faster_link("pre", "h100", "4KiB"), _faster_link("post", "a100", "16KiB"),
        _mib("pre", 64), _mib("post", 256),
        _more_gpus("pre", 1_024, 16_384), _more_gpus("post", 2_048, 8_192),
        _ecmp("pre", 8), _ecmp("post", 4),
        _benchmark("pre", _Choices("A vendor reports an all-reduce busbw close to the NVLink rate on 8 GPUs.",
                                   "b", ("hardware", "setting", "software"))),
        _benchmark("post", _Choices("A cloud provider's page shows its 8-GPU VMs reaching 90 % of NVLink busbw.",
                                    "c", ("software", "hardware", "setting"))),
    ):
        register(q)
        _answers.WITHHELD.add(q.qid)  # the quiz measures: its key stays with the instructor
        if form_of(q.qid) == "pre":
            _answers.NO_FEEDBACK.add(q.qid)


_register_forms()


def question_markdown(qid: str) -> str:
    """The notebook cell of quiz question ``qid`` (either form): a "## Question N" heading, the prompt (Markdown,
    figures from the catalog) and, for a multiple-choice question, its choices. ValueError for an id not in the
    quiz."""
    if qid not in questions():
        choice("qid", qid, [q for q in questions() if key_of(q) in MISCONCEPTIONS])
    q = questions()[qid]
    text = f"## Question {list(MISCONCEPTIONS).index(key_of(qid)) + 1}\n\n{q.prompt}"
    if q.choices:
        text += "\n\n" + "\n".join(f"- **{k}** — {v}" for k, v in q.choices.items())
        text += "\n\nAnswer with a letter, as a string."
    return text


def class_of(result: Result) -> str:
    """What a checked answer shows, without feedback: ``"right"``, ``"misconception"`` (the tell-tale answer of
    the misconception the question tests), ``"other"`` (wrong in another way) or ``"open"`` (nothing to check)."""
    if result.status in ("todo", "error"):
        return "open"
    if result.passed:
        return "right"
    return "misconception" if result.hint.startswith("Misconception") else "other"


def _checked(qid: str, value: Any, form: str) -> tuple[Result, Any]:
    """(the verdict on ``value`` for ``qid``, the value itself): the learner's function is called once."""
    if not isinstance(qid, str) or qid not in questions() or form_of(qid) != form:
        ids = [qid_for(k, form) for k in MISCONCEPTIONS]
        return Result(f"answer {qid}", ERROR, f"there is no {form}-test question {qid!r}.",
                      hint=f"Use the id written in the cell; this form's ids are {', '.join(ids)}."), None
    value = learner_value(value, f"answer {qid}")
    if isinstance(value, Result):
        return value, None
    return _answers.verdict(qid, value), value


@safe_checker
def record(qid: str, value: Any) -> Result:
    """Pre-test: keep the answer to ``qid`` (saved with the others) and say nothing about whether it is right."""
    result, value = _checked(qid, value, "pre")
    cls = class_of(result)
    if cls == "open":  # the stub, or not an answer at all: say what is missing, as every check does
        return result
    quiz_results.save_answer("pre", qid, value, cls)
    q = questions()[qid]
    shown = f"({str(value).strip()})" if q.choices else f"{fmt(to_number(value))} {q.unit}".strip()
    return Result(f"answer {qid}", RECORDED, f"{shown} — no feedback until the end of the workshop.")


@safe_checker
def answer(qid: str, value: Any) -> Result:
    """Post-test: check the answer to ``qid`` (verdict and hint, as every exercise) and save it."""
    result, value = _checked(qid, value, "post")
    if class_of(result) != "open":
        quiz_results.save_answer("post", qid, value, class_of(result))
    return result


def finish(form: str) -> Result:
    """The last cell of a form: how many questions were answered and where they were saved; for the post-test
    also the score and the misconceptions still held. The pre-test shows no verdict."""
    try:
        choice("form", form, FORMS)
    except ValueError as exc:
        return Result("quiz", ERROR, f"{exc}.")
    saved = quiz_results.load(form)
    classes = {k: saved.get(qid_for(k, form), {}).get("class", "open") for k in MISCONCEPTIONS}
    answered = sum(c != "open" for c in classes.values())
    code = quiz_results.score_code(form, [classes[k] for k in MISCONCEPTIONS])
    # where the file is (home folder, or $NVCOURSE_QUIZ_DIR) is said at the top of the notebook, not here: the
    # committed output must not depend on the machine that executed it
    notes = [f"Your answers are saved for your instructor. Your code (if asked to paste it in a form): {code}"]
    summary = f"{answered} of {len(MISCONCEPTIONS)} answered."
    if not answered:  # Run All before answering: nothing to record yet, as every check says of a stub
        return Result(f"quiz ({form}-test)", "todo", f"none of the {len(MISCONCEPTIONS)} questions answered yet.",
                      hint="Answer the questions above (each check cell says what is missing), then run this again.")
    if form == "pre":
        return Result("quiz (pre-test)", RECORDED, summary + " The answers stay hidden until the post-test.",
                      notes=notes)
    right = [MISCONCEPTIONS[k] for k, c in classes.items() if c == "right"]
    held = [MISCONCEPTIONS[k] for k, c in classes.items() if c in ("misconception", "other")]
    status = "pass" if len(right) == len(MISCONCEPTIONS) else ("todo" if not answered else "fail")
    return Result("quiz (post-test)", status, f"{len(right)} of {len(MISCONCEPTIONS)} right; {summary.lower()}",
                  right=[f"not held: {m}" for m in right], wrong=[f"still held: {m}" for m in held],
                  hint="" if status == "pass" else "The check under each question names what its answer shows.",
                  notes=notes)


def score(answers: dict[str, object]) -> Result:
    """Check every answer given (``{qid: value or function}``, one form) and sum up which misconceptions remain
    (with feedback: for the post-test, instructors and tests). Passes when every question is answered right."""
    keys = {key_of(q) for q in answers}
    unknown = sorted(q for q in answers if key_of(q) not in MISCONCEPTIONS or q not in questions())
    if unknown:
        return Result("quiz score", ERROR, f"not quiz questions: {', '.join(unknown)}.",
                      hint=f"Use the ids of the quiz: {', '.join(MISCONCEPTIONS)} (or their quiz.post.* twins).")
    form = form_of(next(iter(answers))) if answers else "pre"
    right, wrong, open_ = [], [], []
    for key, misconception in MISCONCEPTIONS.items():
        qid = qid_for(key, form)
        cls = class_of(_answers.verdict(qid, answers[qid])) if key in keys and qid in answers else "open"
        {"right": right, "open": open_}.get(cls, wrong).append(misconception)
    summary = f"{len(right)} of {len(MISCONCEPTIONS)} right"
    summary += f" ({len(open_)} not answered yet)." if open_ else "."
    if not wrong and not open_:
        status, hint = "pass", ""
    elif not right and not wrong:
        status, hint = "todo", "Answer the questions above (each check cell says what is missing), then run this again."
    else:
        status = "fail"
        hint = "The check under each question says what its answer shows (a tell-tale answer names its misconception)."
    return Result("quiz score", status, summary,
                  right=[f"not held: {m}" for m in right],
                  wrong=[f"still held: {m}" for m in wrong] + [f"not answered yet: {m}" for m in open_],
                  hint=hint)
