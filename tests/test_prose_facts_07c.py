"""Chapter 07c reads one idea at a time: the words §8's predict question uses are defined in the short list it
follows, and the source notes of §2 and §7 sit behind closed toggles, after the sentences they support."""

import json
import re
from pathlib import Path

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "07c_communication_for_inference.ipynb"


def _cells() -> dict[str, str]:
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    return {c["id"]: re.sub(r"\s+", " ", "".join(c["source"])) for c in nb["cells"]}


def test_the_predict_questions_words_are_defined_outside_the_toggle():
    s8 = _cells()["c020a"]
    short, _details = s8.split("<details>", 1)
    predict = s8.split("**Predict**", 1)[1]
    assert "GQA" in predict and "descriptors" in predict
    assert "Llama 3's **GQA** (grouped-query attention) caches a key and a value per KV head" in short
    assert "one network request (an RDMA *descriptor*) per page and layer" in short


def test_source_notes_are_collapsed_and_the_answers_stay_in_view():
    cells = _cells()
    s2 = cells["c006"]
    visible = re.sub(r"<details>.*?</details>", "", s2)
    assert "take from 0.39 (TP 8) to 0.59 (TP 2)" in visible and "0.82–1.49× of the classic path" in visible
    assert "nccl-tests#333" in visible and "nccl#1940" in visible
    assert "That curve is a model, not a measurement" not in visible and "That curve is a model" in s2
    assert "<summary>MultiShot's multicast" in cells["c004"] and "<summary>The same building blocks in NCCL" in cells[
        "c018"]
