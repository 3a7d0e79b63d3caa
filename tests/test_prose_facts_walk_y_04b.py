"""Guards for chapter 04b after fresh-learner walkthrough Y (density pass on sections 7, 8, 10 and 11).

Each of those sections now answers one question with one table or figure; their second tables, constants, published
logs and notes moved to reference section 12. The tests below say where each moved fact lives now, and check the
sentences written for the pass against the model.
"""

import json
import re
from pathlib import Path

from test_prose_facts_core import prose

from nvcourse.costmodel import tuning
from nvcourse.devtools import reading_time

ROOT = Path(__file__).resolve().parents[1]
NB04B = "04b_predicting_collectives.ipynb"


def _cells() -> dict[str, str]:
    cells = json.loads((ROOT / "notebooks" / NB04B).read_text(encoding="utf-8"))["cells"]
    return {c["id"]: "".join(c["source"]) for c in cells}


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _sections() -> dict[str, str]:
    """'## N.' heading -> the Markdown of that section (to the next '## ' heading)."""
    cells = json.loads((ROOT / "notebooks" / NB04B).read_text(encoding="utf-8"))["cells"]
    md = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    parts = re.split(r"^(## .*)$", md, flags=re.M)
    return {parts[i].strip().split(" ")[1]: parts[i + 1] for i in range(1, len(parts), 2)}


def _tables(markdown: str) -> int:
    """Markdown tables outside <details> blocks."""
    visible = re.sub(r"<details>.*?</details>", "", markdown, flags=re.S)
    return len(re.findall(r"^\|[-| ]+\|$", visible, flags=re.M))


def test_04b_reading_time_shrank_after_the_density_pass():
    # before the pass: 47 min of reading, 21 of core
    row = reading_time.measure_chapter(ROOT / "notebooks" / NB04B)
    assert row.reading_min <= 46 and row.core_min <= 20, (row.reading_min, row.core_min)


def test_04b_sections_8_10_and_11_show_one_visible_table_at_most():
    sec = _sections()
    for number in ("8.", "10.", "11."):
        assert _tables(sec[number]) <= 1, number
    assert _tables(sec["7."]) == 2  # the 8-H100 figures and when NVLS wins; the constants are in §12


def test_04b_nvls_constants_depend_on_the_generation_and_sit_in_section_12():
    sec = _sections()
    hopper, blackwell = tuning.nvls_efficiency("hopper"), tuning.nvls_efficiency("blackwell")
    assert hopper != blackwell  # "it depends on the GPU generation"
    assert ("where $\\eta$ is the share of $B$ that NCCL's tuner expects NVLS to use (it depends on the GPU "
            "generation) and α_NVLS its cost per call; their values: section 12.") in _flat(sec["7."])
    alpha = tuning.hw_latency_us("nvlink", "nvls", "Simple")
    row = f"| Hopper | {hopper:g} | {alpha:g} µs |"
    assert row in sec["12."] and row not in sec["7."]
    assert f"| Blackwell | {blackwell:g} | {alpha:g} µs |" in sec["12."]
    assert "### NVLS's constants" in sec["12."]


def test_04b_registered_buffers_are_explained_once_in_section_12():
    sec, text = _sections(), prose(NB04B)
    assert "**Registered buffers.**" not in sec["7."]
    assert "(set up in advance so every GPU can reach them, section 12)" in text  # §6
    assert "NCCL's symmetric-memory kernels (section 12), named in the readout" in text  # §9
    assert "### Registered buffers and symmetric-memory kernels" in sec["12."]


def test_04b_section_8_keeps_the_formulas_and_sends_constants_to_section_12():
    sec = _sections()
    assert "<details>" not in sec["8."]
    assert "Their constants, NCCL's corrections and NVLS on 72 GPUs: section 12." in _flat(sec["8."])
    for summary in ("More: NCCL's constants for NVLSTree and PAT",
                    "More: the corrections NCCL makes to its own estimate",
                    "More: NVLS heads, and why 72 GPUs pay 33/32 rather than 73/72"):
        assert f"<details><summary>{summary}</summary>" in sec["12."], summary
    # the release PAT arrived in is a version threshold: reference, not section 8
    assert "NCCL 2.23" not in sec["8."] and "PAT arrived in NCCL 2.23." in sec["12."]


def test_04b_section_10_points_to_the_published_picks_and_folds_the_floor():
    sec = _sections()
    s10 = sec["10."]
    assert "What published runs and NCCL's logs show it picking: section 12." in s10
    assert "<details><summary>What published runs and logs show NCCL picking</summary>" in sec["12."]
    assert "nccl#1453" not in s10 and "nccl#1453" in sec["12."]
    visible = re.sub(r"<details>.*?</details>", "", s10, flags=re.S)
    assert "**The floor.**" in s10 and "**The floor.**" not in visible


def test_04b_section_11_ends_its_answer_with_the_table_and_one_sentence():
    sec = _sections()
    s11 = sec["11."]
    visible = re.sub(r"<details>.*?</details>", "", s11, flags=re.S)
    after_table = visible.split("| ≤ 64 KiB |")[1].split("\n", 1)[1]
    assert after_table.strip().startswith("Look at the signs:")
    assert "These are the model's size bands" not in s11 and "### The size bands of section 11" in sec["12."]


def test_04b_the_first_code_cell_imports_the_module_and_shows_the_first_table():
    cells = json.loads((ROOT / "notebooks" / NB04B).read_text(encoding="utf-8"))["cells"]
    first = next(c for c in cells if c["cell_type"] == "code")
    src = "".join(first["source"])
    assert "from nvcourse.chapters import ch04b_predicting as ch" in src
    assert "display(HTML(ch.building_blocks_html()))" in src
