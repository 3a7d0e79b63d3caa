"""Guards for chapter 07c after fresh-learner walkthrough V-4: §2 answers its question with a short answer and one
table (the remark on NCCL's two models and the B200 caveats sit in §10, each said once), §8 defines wide-EP where
it first uses it and points to the FP8 row where that row really is, and §3's predict names the four kernels its
table shows."""

import json
import re

from test_prose_facts_core import ROOT, prose

from nvcourse import inference
from nvcourse.chapters import ch07c_inference as ch
from nvcourse.chapters import ch07c_serving

NB = "07c_communication_for_inference.ipynb"


def _nb() -> list[dict]:
    return json.loads((ROOT / "notebooks" / NB).read_text(encoding="utf-8"))["cells"]


def _md() -> dict[str, str]:
    return {c["id"]: re.sub(r"\s+", " ", "".join(c["source"])) for c in _nb() if c["cell_type"] == "markdown"}


def _section(text: str, number: int) -> str:
    start = text.index(f"## {number}. ")
    return text[start:text.index("## ", start + 3)]


def _html(cell_id: str) -> str:
    cell = next(c for c in _nb() if c["id"] == cell_id)
    return "".join("".join(o.get("data", {}).get("text/html", "")) for o in cell.get("outputs", []))


def test_section_2_shows_one_table_the_model_against_the_measurements():
    s2 = _section(prose(NB), 2)
    assert "|---|" not in s2  # no Markdown table: the ratios are one sentence, their detail in §10
    cells = _nb()
    ids = [c["id"] for c in cells]
    code = [c for c in cells[ids.index("c004"):ids.index("c006")] if c["cell_type"] == "code"]
    assert [c["id"] for c in code] == ["c005"]
    assert _html("c005").count("<table") == 1 and "sglang#2904" in _html("c005")


def test_section_2_sentence_on_the_symmetric_kernels_holds():
    h100, b200 = ch.kernel_ratios("dgx-h100"), ch.kernel_ratios("dgx-b200")
    said = (f"On H100, at 16 KiB, the models put them within {h100['sym_over_custom'][0]:.2f}–"
            f"{h100['sym_over_custom'][1]:.2f}× of the faster custom kernel. That is true on H100 only: on B200 the "
            "models put them further off, and the published measurements there beat NCCL's own models (§10).")
    assert said in _md()["c006"]
    # "further off": every B200 system of the dashboard sits above H100's whole range
    for system in ("dgx-b200", "gb200-nvl72"):
        assert ch.kernel_ratios(system)["sym_over_custom"][0] > h100["sym_over_custom"][1], system
    assert b200["sym_over_custom"][0] > 1.4 * h100["sym_over_custom"][1]  # clearly, not at the edge
    # "the published measurements there beat NCCL's own models": §10's two measurements (about 3 µs, under 8 µs)
    ref = _md()["c07cref"]
    assert "a user measured about 3 µs" in ref and "reports under 8 µs up to 1 KB on a 4-GPU GB200 node" in ref
    assert inference.allreduce_time("dgx-b200", 8, 8, "nccl-sym") > 3e-6
    assert inference.allreduce_time("gb200-nvl72", 4, 1024, "nccl") > 8e-6


def test_the_two_models_remark_and_b200_ratios_are_said_once_in_section_10():
    text = prose(NB)
    ref = _md()["c07cref"]
    for once in ("NCCL has two time models", "NCCL never compares the two", "two to three times",
                 "take from 0.39 (TP 8) to 0.59 (TP 2)", "0.82–1.49"):
        assert text.count(once) == 1 and once in ref, once
    b200 = ch.kernel_ratios("dgx-b200")
    assert f"{b200['sym_over_nccl'][0]:.2f}–{b200['sym_over_nccl'][1]:.2f}" == "0.82–1.49"
    assert "(one model's time divided by the other's)" in ref
    assert text.count("§10 gives them") == 0  # §2 points to §10 once, with "(§10)"


def test_wide_ep_is_defined_where_it_is_first_used():
    text = prose(NB)
    first = text.index("wide-EP")
    assert text.lower().index("wide-ep") == first  # no earlier "Wide-EP"
    assert text[first:].startswith("wide-EP** (expert parallelism over many GPUs, so each GPU holds only a few "
                                   "experts, as at §7's EP 64)")
    # "a few experts" at §7's EP 64: DeepSeek-V3's routed experts over the GPUs of §7's table
    d = inference.data()["moe"]["deepseek-v3"]
    assert ch.moe_dispatch_rows.__defaults__ == (4096, 64)
    assert d["experts"] / 64 <= 4
    assert "DeepSeek-V3's layer over EP 64" in text


def test_fp8_pointer_names_the_collapsed_block_that_holds_the_row():
    c020 = _md()["c020"]
    assert ('(the FP8 row, in the collapsed "The other techniques\' results" block above)') in c020
    ids = [c["id"] for c in _nb()]
    assert ids.index("c020b") < ids.index("c020")
    shown = _html("c020b")
    block = shown.split("<summary>The other techniques&#x27; results</summary>", 1)[1].split("</details>", 1)[0]
    fp8 = next(r for r in ch07c_serving.serving_rows() if r["key"] == "fp8")
    assert "fp8" not in ch07c_serving.IN_VIEW
    assert fp8["item"].split(":")[0] in block and "FP8" not in shown.split("<details>", 1)[0]
    assert "fits" in fp8["short"]


def test_section_3_predict_names_the_four_kernels_of_its_table():
    s3 = _section(prose(NB), 3)
    predict = s3.split("**Predict**", 1)[1]
    names = {"nccl": "NCCL's classic path", "nccl-sym": "its symmetric kernels", "oneshot": "one-shot",
             "twoshot": "two-shot"}
    assert "with each of the four kernels: NCCL's classic path, its symmetric kernels, one-shot and two-shot " \
           "kernels." in predict
    assert tuple(names) == inference.ALLREDUCE_ALGOS and len(names) == 4
    assert all(name in predict for name in names.values())
    table = ch.tp_question_html()
    assert all(f">{algo}<" in table for algo in inference.ALLREDUCE_ALGOS)
