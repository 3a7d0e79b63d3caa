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
from ..i18n import number
from ..i18n import translate as _
from ..units import parse_size
from . import _answers, quiz_results
from ._answers import Question, questions, register
from ._core import ERROR, RECORDED, Result, fmt, learner_value, safe_checker, to_number

FORMS = ("pre", "post")

_NDR_G = f"{catalog.get_link('ib-ndr').line_Gbps_dir:g}"  # the port speed in Gb/s, as a product name quotes it
_NVLINK_BIDIR = f"{catalog.get_gpu('h100').nvlink_GBps_bidir:g} GB/s"  # NVIDIA's headline, both directions added

#: pre-form qid → the misconception it tests, in the order of the guide's table (tests check one question each).
MISCONCEPTIONS = {
    "quiz.gbps": _("{g}G means {g} GB/s (GB/s vs Gb/s)").format(g=_NDR_G),
    "quiz.nvlink_direction": _("NVLink is {bidir}, so a GPU can send {bidir} (per direction vs both)").format(
        bidir=_NVLINK_BIDIR),
    "quiz.busbw": _("busbw and algbw are interchangeable"),
    "quiz.bisection": _("bisection bandwidth = sum of all links"),
    "quiz.dense_tflops": _("headline TFLOPS are what training gets (sparse vs dense)"),
    "quiz.achievable": _("line rate is what you get (line rate vs achievable)"),
    "quiz.faster_link": _("a faster link makes every message faster in proportion"),
    "quiz.mib": _("64 MiB = 64 MB"),
    "quiz.more_gpus": _("more GPUs always means a faster, smoother job"),
    "quiz.ecmp": _("ECMP spreads traffic evenly"),
    "quiz.benchmark": _("a benchmark number is a property of the hardware"),
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

    def why() -> str:
        return _("Misconception: '{g}G means {g} GB/s'. Network rates are in bits per second: divide by 8.").format(
            g=g)

    return Question(qid_for("quiz.gbps", form),
        _("A NIC is sold as **{g}G** ({fabric}). How many **GB/s** can it send in **one direction**, at line "
          "rate?").format(g=g, fabric=fabric),
        lambda: link.line_GBps_dir, unit="GB/s",
        variants=lambda: {
            why(): link.line_Gbps_dir,
            _("A NIC's Gb/s is already per direction: do not halve it."): link.line_GBps_dir / 2,
        },
        misconception=why,
        explain=lambda: _("{gbps} Gb/s ÷ 8 = {GBps} GB/s each way.").format(gbps=number(link.line_Gbps_dir, "g"),
                                                                          GBps=number(link.line_GBps_dir, "g")))


# --- 2. per direction vs both ------------------------------------------------------------------------------------

def _nvlink_direction(form: str, gpu_id: str, system_id: str) -> Question:
    gpu, system = catalog.get_gpu(gpu_id), catalog.get_system(system_id)
    link = catalog.get_link(gpu.nvlink)
    headline = f"{gpu.nvlink_GBps_bidir:g} GB/s"
    short = gpu.name.split("(")[0].replace("NVIDIA ", "").strip()

    def why() -> str:
        return _("Misconception: 'a GPU can send {headline}'. The {headline} adds both directions; one direction "
                 "is half.").format(headline=headline)

    return Question(qid_for("quiz.nvlink_direction", form),
        _("NVIDIA quotes **{headline}** of NVLink for one {gpu}. How many GB/s can it send to its peers in "
          "**one direction**?").format(headline=headline, gpu=short),
        lambda: system.scaleup_GBps_dir, unit="GB/s",
        variants=lambda: {
            why(): gpu.nvlink_GBps_bidir,
            _("That is one {link} link; a {gpu} has {n}.").format(link=link.name.split(' (')[0], gpu=short,
                                                                  n=gpu.nvlink_links): link.line_GBps_dir,
        },
        misconception=why,
        explain=lambda: _("{n} links × {link} GB/s = {total} GB/s per direction.").format(
            n=system.links_per_gpu, link=number(link.line_GBps_dir, "g"), total=number(system.scaleup_GBps_dir, "g")))


# --- 3. busbw vs algbw (a made-up reading to convert, not a hardware figure) -------------------------------------

def _busbw(form: str, algbw: float, ranks: int) -> Question:
    factor = 2 * (ranks - 1) / ranks

    def why() -> str:
        return _("Misconception: 'busbw and algbw are the same'. For all-reduce busbw = algbw × 2(n−1)/n.")

    return Question(qid_for("quiz.busbw", form),
        _("nccl-tests prints **algbw = {algbw} GB/s** for an all-reduce on **{ranks} GPUs**. What **busbw** does "
          "it print?").format(algbw=number(algbw, "g"), ranks=ranks),
        lambda: algbw * factor, unit="GB/s",
        variants=lambda: {
            why(): algbw,
            _("Close: the factor is 2(n−1)/n, not 2 (each rank sends n−1 of n chunks twice)."): 2 * algbw,
            _("The factor for all-gather and reduce-scatter is (n−1)/n; all-reduce does both."): algbw * factor / 2,
        },
        misconception=why,
        explain=_("busbw = algbw × 2(n−1)/n = {algbw} × {factor}: the rate each link carries.").format(
            algbw=number(algbw, "g"), factor=number(factor, "g")))


# --- 4. bisection (a made-up ring, not a hardware figure) --------------------------------------------------------

def _bisection(form: str, gpus: int, link_GBps: float) -> Question:
    def why() -> str:
        return _("Misconception: 'bisection = sum of all links'. Only the links the cut crosses count (two, for a "
                 "ring).")

    return Question(qid_for("quiz.bisection", form),
        _("Take a **ring** of {gpus} GPUs; every ring link carries {link} GB/s per direction. Cut it into two "
          "halves of {half} GPUs. How many GB/s cross the cut in **one direction**?").format(
            gpus=gpus, link=number(link_GBps, "g"), half=gpus // 2),
        lambda: 2 * link_GBps, unit="GB/s",
        variants=lambda: {
            why(): gpus * link_GBps,
            _("A cut through a ring crosses two links, not one."): link_GBps,
        },
        misconception=why,
        explain=_("A ring cut in two crosses 2 links: {cut} GB/s per direction, whatever the total of its {gpus} "
                  "links.").format(cut=number(2 * link_GBps, "g"), gpus=gpus))


# --- 5. sparse vs dense ------------------------------------------------------------------------------------------

def _dense_tflops(form: str, gpu_id: str, page: str) -> Question:
    gpu = catalog.get_gpu(gpu_id)
    short = gpu.name.split("(")[0].replace("NVIDIA ", "").strip()

    def why() -> str:
        return _("Misconception: 'headline TFLOPS are what training gets'. The headline assumes 2:4 sparsity: "
                 "dense is half.")

    return Question(qid_for("quiz.dense_tflops", form),
        _("{page} lists **{tflops} TFLOPS BF16** for the {gpu}, with a footnote \"with sparsity\". What **dense** "
          "BF16 peak applies to training?").format(page=page, tflops=number(gpu.bf16_sparse_TFLOPS, ",.0f"), gpu=short),
        lambda: gpu.bf16_TFLOPS, unit="TFLOPS",
        variants=lambda: {why(): gpu.bf16_sparse_TFLOPS}, misconception=why,
        explain=lambda: _("Dense BF16 is {tflops} TFLOPS, and real jobs reach 30-50 % of it (MFU).").format(
            tflops=number(gpu.bf16_TFLOPS, "g")))


# --- 6. line rate vs achievable ----------------------------------------------------------------------------------

#: A plan within this fraction of the course's model is right: the course teaches "≈ 0.9 of line rate" while the
#: catalog's PCIe efficiency is 0.88, and the question asks for a plan, not the catalog's digits. Line rate itself
#: (1/0.88 = 1.14× the model) stays outside.
ACHIEVABLE_RTOL = 0.08


def _achievable(form: str, link_id: str) -> Question:
    link = catalog.get_link(link_id)

    def why() -> str:
        return _("Misconception: 'line rate is what you get'. Packet headers, encoding and flow control take their "
                 "share: plan for about 0.9 of the line rate.")

    return Question(qid_for("quiz.achievable", form),
        _("A {link} slot has a line rate of **{rate} GB/s** per direction. You copy a large buffer from host "
          "memory to the GPU. About how many GB/s per direction should you **plan for**?").format(
            link=link.name, rate=number(link.line_GBps_dir, "g")),
        lambda: link.achievable_GBps_dir, unit="GB/s", rtol=ACHIEVABLE_RTOL,
        variants=lambda: {
            why(): link.line_GBps_dir,
            _("The line rate is already per direction: do not halve it."): link.line_GBps_dir / 2,
        },
        misconception=why,
        explain=lambda: _("{rate} GB/s × {eff} ≈ {achievable} GB/s in the course's model (≈ 0.9 of line rate): "
                          "the rest is protocol.").format(rate=number(link.line_GBps_dir, "g"),
                                                          eff=number(link.efficiency, ".0%"),
                                                          achievable=number(link.achievable_GBps_dir, ".1f")))


# --- 7. α dominates small messages -------------------------------------------------------------------------------

def _faster_link(form: str, gpu_id: str, size: str) -> Question:
    gpu = catalog.get_gpu(gpu_id)
    params = linkmodel.link_params(gpu.nvlink, links=gpu.nvlink_links)
    nbytes = parse_size(size)
    short = gpu.name.split("(")[0].replace("NVIDIA ", "").strip()
    link_name = catalog.get_link(gpu.nvlink).name.split(" (")[0]

    def speedup() -> float:
        return float(params.time(nbytes) / linkmodel.transfer_time(nbytes, params.alpha_s, 2 * params.beta_Bps))

    def why() -> str:
        return _("Misconception: 'a faster link makes every message faster in proportion'. This message is far "
                 "below n½ = αβ: the time is almost all α.")

    return Question(qid_for("quiz.faster_link", form),
        _("A **{size}** message goes between two {gpu}s over their {n} {link} links. If the bandwidth β "
          "**doubled** (same α), by what factor would its time fall?").format(
            size=size.replace('KiB', ' KiB'), gpu=short, n=gpu.nvlink_links, link=link_name),
        speedup, unit="×", rtol=0.02,
        variants=lambda: {why(): 2.0}, misconception=why,
        explain=lambda: _("Only {speedup}×: below n½ ({half} MB) a message is latency-bound.").format(
            speedup=number(speedup(), ".3f"), half=number(params.half_bandwidth_bytes / 1e6, ".1f")))


# --- 8. MiB vs MB ------------------------------------------------------------------------------------------------

def _mib(form: str, mib: int) -> Question:
    def why() -> str:
        return _("Misconception: '{mib} MiB = {mib} MB'. MiB is 2^20 bytes; MB is 10^6.").format(mib=mib)

    return Question(qid_for("quiz.mib", form),
        _("How many **MB** (10⁶ bytes) are **{mib} MiB**, the size nccl-tests prints as {nbytes}?").format(
            mib=mib, nbytes=mib * 2**20),
        lambda: parse_size(f"{mib}MiB") / 1e6, unit="MB", rtol=0.001,
        variants=lambda: {why(): float(mib)}, misconception=why,
        explain=_("{mib} × 2^20 B = {mb} MB: a 5 % error that would reappear in every busbw.").format(
            mib=mib, mb=number(mib * 2**20 / 1e6, "g")))


# --- 9. failures add up ------------------------------------------------------------------------------------------

def _more_gpus(form: str, small: int, large: int) -> Question:
    def ratio() -> float:
        return reliability.cluster_mtbf_hours(large) / reliability.cluster_mtbf_hours(small)

    k = large // small

    def why() -> str:
        return _("Misconception: 'more GPUs, same reliability'. Failures add up: the interval falls as 1/N.")

    return Question(qid_for("quiz.more_gpus", form),
        _("A job on {small} GPUs is interrupted on average every *M* hours. Same GPUs, same failure rate per GPU: "
          "what **fraction of M** is the mean time between interruptions on **{large} GPUs**?").format(
            small=number(small, ","), large=number(large, ",")),
        ratio, rtol=0.01,
        variants=lambda: {
            why(): 1.0,
            _("The other way round: {k}× more GPUs means {k}× more failures per hour, so a {k}× SHORTER "
              "interval.").format(k=k): float(k),
        },
        misconception=why,
        explain=lambda: _("{small} / {large} = {ratio}: the mean time between interruptions falls as 1/N.").format(
            small=number(small, ","), large=number(large, ","), ratio=number(ratio(), "g")))


# --- 10. ECMP collisions -----------------------------------------------------------------------------------------

def _ecmp(form: str, n: int) -> Question:
    def p_collision() -> float:
        return 1.0 - math.perm(n, n) / n**n

    def why() -> str:
        return _("Misconception: 'ECMP spreads traffic evenly'. Hashing is balls into bins: collisions are almost "
                 "certain ({n}!/{n}^{n} is the chance of none).").format(n=n)

    return Question(qid_for("quiz.ecmp", form),
        _("ECMP hashes **{n} flows** onto **{n} equal uplinks** at random. What is the probability that **at least "
          "two flows share** an uplink?").format(n=n),
        p_collision, rtol=0.005,
        variants=lambda: {
            why(): 0.0,
            _("That is the chance that two given flows collide (1/{n}); with {n} flows there are {pairs} "
              "pairs.").format(n=n, pairs=math.comb(n, 2)): 1 / n,
        },
        misconception=why,
        explain=lambda: _("1 − {n}!/{n}^{n} = {p}: with as many flows as links, a collision is near "
                          "certain.").format(n=n, p=number(p_collision(), ".4f")))


# --- 11. a benchmark is a setting, not a property ----------------------------------------------------------------

@dataclass(frozen=True)
class _Choices:
    scenario: str
    right: str  # the letter of the complete answer
    order: tuple[str, str, str]  # which option goes under a, b, c


_OPTIONS = {  # equally long, each plausible: one is complete, the others name one true factor each
    "hardware": _("the GPU model and its NVLink generation, which set the ceiling any run can reach"),
    "setting": _("the message size, the GPU and node count, the placement and whether the fabric was idle"),
    "software": _("the NCCL and CUDA driver versions, which decide the algorithm and protocol that ran"),
}
_WHY = {
    "hardware": _("Misconception: 'a benchmark number is a property of the hardware'. The same GPUs give busbw "
                  "several-fold apart with size, scale, placement and load."),
    "software": _("Versions matter, but even with the same versions, size, scale, placement and load change busbw "
                  "several-fold."),
}


def _benchmark(form: str, c: _Choices) -> Question:
    letters = dict(zip("abc", c.order))
    return Question(qid_for("quiz.benchmark", form),
        c.scenario + _(" What must you know **first**, before comparing it with your own job?"),
        lambda: next(k for k, v in letters.items() if v == "setting"),
        choices={k: _OPTIONS[v] for k, v in letters.items()},
        wrong_choice={k: _WHY[v] for k, v in letters.items() if v != "setting"},
        misconception=lambda: _WHY["hardware"],
        explain=_("A number is hardware + size + scale + placement + load; hero runs fix all four at their best."))


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
        _benchmark("pre", _Choices(_("A vendor reports an all-reduce busbw close to the NVLink rate on 8 GPUs."),
                                   "b", ("hardware", "setting", "software"))),
        _benchmark("post", _Choices(_("A cloud provider's page shows its 8-GPU VMs reaching 90 % of NVLink busbw."),
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


def class_of(result: Result, qid: str) -> str:
    """What a checked answer to ``qid`` shows, without feedback: ``"right"``, ``"misconception"`` (the tell-tale
    answer of the misconception the question tests: its hint is the question's misconception text, whatever the
    language), ``"other"`` (wrong in another way) or ``"open"`` (nothing to check)."""
    if result.status in ("todo", "error"):
        return "open"
    if result.passed:
        return "right"
    tell_tale = questions()[qid].misconception()
    return "misconception" if tell_tale and result.hint == tell_tale else "other"


def _checked(qid: str, value: Any, form: str) -> tuple[Result, Any]:
    """(the verdict on ``value`` for ``qid``, the value itself): the learner's function is called once."""
    if not isinstance(qid, str) or qid not in questions() or form_of(qid) != form:
        ids = [qid_for(k, form) for k in MISCONCEPTIONS]
        there_is_none = (_("there is no pre-test question {qid}.") if form == "pre"
                         else _("there is no post-test question {qid}."))
        return Result(_("answer {qid}").format(qid=qid), ERROR, there_is_none.format(qid=repr(qid)),
                      hint=_("Use the id written in the cell; this form's ids are {ids}.").format(
                          ids=", ".join(ids))), None
    value = learner_value(value, _("answer {qid}").format(qid=qid))
    if isinstance(value, Result):
        return value, None
    return _answers.verdict(qid, value), value


@safe_checker
def record(qid: str, value: Any) -> Result:
    """Pre-test: keep the answer to ``qid`` (saved with the others) and say nothing about whether it is right."""
    result, value = _checked(qid, value, "pre")
    cls = class_of(result, qid)
    if cls == "open":  # the stub, or not an answer at all: say what is missing, as every check does
        return result
    quiz_results.save_answer("pre", qid, value, cls)
    q = questions()[qid]
    shown = f"({str(value).strip()})" if q.choices else f"{fmt(to_number(value))} {q.unit}".strip()
    return Result(_("answer {qid}").format(qid=qid), RECORDED,
                  _("{answer} — no feedback until the end of the workshop.").format(answer=shown))


@safe_checker
def answer(qid: str, value: Any) -> Result:
    """Post-test: check the answer to ``qid`` (verdict and hint, as every exercise) and save it."""
    result, value = _checked(qid, value, "post")
    cls = class_of(result, qid)
    if cls != "open":
        quiz_results.save_answer("post", qid, value, cls)
    return result


def finish(form: str) -> Result:
    """The last cell of a form: how many questions were answered and where they were saved; for the post-test
    also the score and the misconceptions still held. The pre-test shows no verdict."""
    try:
        choice("form", form, FORMS)
    except ValueError as exc:
        return Result(_("quiz"), ERROR, f"{exc}.")
    saved = quiz_results.load(form)
    classes = {k: saved.get(qid_for(k, form), {}).get("class", "open") for k in MISCONCEPTIONS}
    answered = sum(c != "open" for c in classes.values())
    code = quiz_results.score_code(form, [classes[k] for k in MISCONCEPTIONS])
    # where the file is (home folder, or $NVCOURSE_QUIZ_DIR) is said at the top of the notebook, not here: the
    # committed output must not depend on the machine that executed it
    notes = [_("Your answers are saved for your instructor. Your code (if asked to paste it in a form): "
               "{code}").format(code=code)]
    total = len(MISCONCEPTIONS)
    name = _("quiz (pre-test)") if form == "pre" else _("quiz (post-test)")
    if not answered:  # Run All before answering: nothing to record yet, as every check says of a stub
        return Result(name, "todo", _("none of the {n} questions answered yet.").format(n=total),
                      hint=_("Answer the questions above (each check cell says what is missing), then run this "
                             "again."))
    if form == "pre":
        return Result(name, RECORDED, _("{answered} of {n} answered. The answers stay hidden until the "
                                        "post-test.").format(answered=answered, n=total), notes=notes)
    right = [MISCONCEPTIONS[k] for k, c in classes.items() if c == "right"]
    held = [MISCONCEPTIONS[k] for k, c in classes.items() if c in ("misconception", "other")]
    status = "pass" if len(right) == total else ("todo" if not answered else "fail")
    return Result(name, status, _("{right} of {n} right; {answered} of {n} answered.").format(
                      right=len(right), n=total, answered=answered),
                  right=[_("not held: {m}").format(m=m) for m in right],
                  wrong=[_("still held: {m}").format(m=m) for m in held],
                  hint="" if status == "pass" else _("The check under each question names what its answer shows."),
                  notes=notes)


def score(answers: dict[str, object]) -> Result:
    """Check every answer given (``{qid: value or function}``, one form) and sum up which misconceptions remain
    (with feedback: for the post-test, instructors and tests). Passes when every question is answered right."""
    keys = {key_of(q) for q in answers}
    unknown = sorted(q for q in answers if key_of(q) not in MISCONCEPTIONS or q not in questions())
    if unknown:
        return Result(_("quiz score"), ERROR, _("not quiz questions: {ids}.").format(ids=", ".join(unknown)),
                      hint=_("Use the ids of the quiz: {ids} (or their quiz.post.* twins).").format(
                          ids=", ".join(MISCONCEPTIONS)))
    form = form_of(next(iter(answers))) if answers else "pre"
    right, wrong, open_ = [], [], []
    for key, misconception in MISCONCEPTIONS.items():
        qid = qid_for(key, form)
        cls = class_of(_answers.verdict(qid, answers[qid]), qid) if key in keys and qid in answers else "open"
        {"right": right, "open": open_}.get(cls, wrong).append(misconception)
    if open_:
        summary = _("{right} of {n} right ({open} not answered yet).").format(right=len(right), n=len(MISCONCEPTIONS),
                                                                           open=len(open_))
    else:
        summary = _("{right} of {n} right.").format(right=len(right), n=len(MISCONCEPTIONS))
    if not wrong and not open_:
        status, hint = "pass", ""
    elif not right and not wrong:
        status = "todo"
        hint = _("Answer the questions above (each check cell says what is missing), then run this again.")
    else:
        status = "fail"
        hint = _("The check under each question says what its answer shows (a tell-tale answer names its "
                 "misconception).")
    return Result(_("quiz score"), status, summary,
                  right=[_("not held: {m}").format(m=m) for m in right],
                  wrong=[_("still held: {m}").format(m=m) for m in wrong]
                  + [_("not answered yet: {m}").format(m=m) for m in open_],
                  hint=hint)
