"""Chapter 07c reads one idea at a time: the words §8's predict question uses are defined in the short list it
follows (the three techniques its table shows; §10 lists all seven), §2 says what a time model is before it compares
two, and the source notes of §2 and §7 sit in the reference section §10 or behind closed toggles."""

import json
import re
from pathlib import Path

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "07c_communication_for_inference.ipynb"


def _cells() -> dict[str, str]:
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    return {c["id"]: re.sub(r"\s+", " ", "".join(c["source"])) for c in nb["cells"]}


def test_the_predict_questions_words_are_defined_outside_the_toggle():
    cells = _cells()
    s8 = short = cells["c020a"]  # the more-on-each detail sits in the reference section §10
    assert "<details>" not in s8 and "(§10 says more on each)" in s8
    assert cells["c07cmore"].startswith("**§8's techniques in more detail.**") and "- **MLA.**" in cells["c07cmore"]
    predict = s8.split("**Predict**", 1)[1]
    assert "GQA" in predict and "descriptors" in predict
    assert "Llama 3's **GQA** (grouped-query attention) caches a key and a value per KV head" in short
    assert "one network request (an RDMA *descriptor*) per page and layer" in short


def test_source_notes_are_collapsed_and_the_answers_stay_in_view():
    # §2 shows the answer (H100's ratio to the custom kernels, in one sentence); the per-TP ratios to the classic
    # path, B200's ratios and measurements and the trust note sit in the reference section §10, the trust note
    # behind a toggle
    from nvcourse.chapters import ch07c_inference as ch07c

    cells = _cells()
    s2 = cells["c006"]
    visible = re.sub(r"<details>.*?</details>", "", s2)
    h100, b200 = ch07c.kernel_ratios("dgx-h100"), ch07c.kernel_ratios("dgx-b200")
    r = lambda lo_hi: f"{lo_hi[0]:.2f}–{lo_hi[1]:.2f}"  # noqa: E731
    # §2 says H100's ratio to the custom kernels; B200's two ratios are said once, in §10
    assert f"the models put them within {r(h100['sym_over_custom'])}× of the faster custom kernel" in visible
    assert "| B200 |" not in visible and r(h100["sym_over_nccl"]) not in s2 and "two to three times" not in s2
    assert f"gives {r(b200['sym_over_nccl'])}× of the classic path, about two to three times the custom kernels" in \
        cells["c07cref"]
    assert 2 <= b200["sym_over_custom"][0] and b200["sym_over_custom"][1] <= 3.2  # "about 2–3", "two to three times"
    # "on B200 the models put them further off": B200's ratio range lies above H100's
    assert "on B200 the models put them further off" in visible and "(§10)" in visible
    assert b200["sym_over_custom"][0] > h100["sym_over_custom"][1]
    ref = cells["c07cref"]
    assert ref.startswith("## 10. Reference:") and "take from 0.39 (TP 8) to 0.59 (TP 2)" in ref
    assert f"take from {h100['sym_over_nccl'][0]:.2f} (TP 8) to {h100['sym_over_nccl'][1]:.2f} (TP 2)" in ref
    assert "0.82–1.49× of the classic path" in ref and "nccl-tests#333" in ref and "nccl#1940" in ref
    assert "That curve is a model, not a measurement" not in re.sub(r"<details>.*?</details>", "", ref)
    assert "That curve is a model" in ref
    assert "<summary>MultiShot's multicast" in cells["c004"] and "<summary>The same building blocks in NCCL" in cells[
        "c018"]
    # §7's DeepEP comparison moved to §10 with its code cell, which follows it
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    ids = [c["id"] for c in nb["cells"]]
    assert ids.index("c019") == ids.index("c07cref") + 1 and "These are **logical** bytes" in ref
    assert "§10 compares this model with DeepEP" in cells["c018"]


def test_section_8_lists_the_three_techniques_its_table_shows_and_section_10_all_seven():
    # §8's short list is the table's rows in view; §10's list holds every technique, including what §8's list said
    # of the four it no longer lists (FP8's fit, CUDA graphs' replay)
    from nvcourse.chapters import ch07c_serving

    cells = _cells()
    s8, more = cells["c020a"], cells["c07cmore"]
    items = re.findall(r"(?:^|\s)\d\. \*\*([^*]+)\*\*", s8.split("**Predict**", 1)[0])
    assert items == ["MLA", "Paged KV transfers", "Speculative decoding"]
    assert ch07c_serving.IN_VIEW == ("mla", "paged", "speculative") and "The table below shows three of them:" in s8
    bullets = re.findall(r"- \*\*([^*]+?)\.\*\*", more)
    assert len(bullets) == len(ch07c_serving.serving_rows()) == 7
    assert "FP8 weights take 1 byte per parameter instead of 2, so the 671B model fits one 8 × H200 node" in more
    assert "Replayed from a graph, a step no longer has the host enqueue each NCCL call" in more
    fit = {r["key"]: r for r in ch07c_serving.serving_rows()}
    assert "fits" in next(r["short"] for r in fit.values() if r["item"].startswith("FP8"))


def test_section_2_says_what_a_time_model_is_before_it_compares_two():
    # §2 defines a time model (c004) before its answer compares them (c006); the remark on NCCL's two models moved
    # with the comparison's detail to §10, where it still comes before the ratios it explains
    cells = _cells()
    s2, ref = cells["c006"], cells["c07cref"]
    assert "It is NCCL's own *time model* of those kernels: the formula NCCL uses" in cells["c004"]
    assert "the models put them within" in s2 and "NCCL has two time models" not in s2
    assert ref.index("NCCL has two time models") < ref.index("NCCL never compares the two") < ref.index(
        "In the course's comparison (one model's time divided by the other's)") < ref.index("take from 0.39 (TP 8)")
    assert "|---|" not in s2  # the section's one table is the model against the measurements, printed above
