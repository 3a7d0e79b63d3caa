"""Chapters 00–04b: sentences that state a number, an order or a trend agree with the model and the data they
come from, and the chapters print no maintainer material (commit hashes, source line numbers, target verdicts).

Markdown cannot compute: each figure below is rebuilt from its source and must appear in the chapter as written
(line breaks read as spaces), so a change in the data or the model names the sentence to update.
"""

import json
import math
import re
from functools import cache
from pathlib import Path

import pytest

from nvcourse import catalog
from nvcourse.costmodel import predict, tuning

ROOT = Path(__file__).resolve().parents[1]
CORE = ("00_", "01_", "02_", "03_", "04_", "04b_")


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


@cache
def prose(notebook: str) -> str:
    """The Markdown of ``notebooks/<notebook>`` (or ``solutions/...``), whitespace runs read as one space."""
    path = ROOT / notebook if "/" in notebook else ROOT / "notebooks" / notebook
    return re.sub(r"\s+", " ", "\n".join("".join(c["source"]) for c in _cells(path) if c["cell_type"] == "markdown"))


def outputs(path: Path) -> str:
    """Everything the code cells of a notebook print (text and HTML), as stored."""
    parts = []
    for c in _cells(path):
        for o in c.get("outputs", []):
            parts.append("".join(o.get("text", "")))
            for key in ("text/plain", "text/html"):
                parts.append("".join(o.get("data", {}).get(key, "")))
    return "\n".join(parts)


def ceil5(x: float) -> int:
    """A percentage rounded up to a multiple of 5, as the prose states a bound."""
    return int(math.ceil(x * 100 / 5) * 5)


# ---------------------------------------------------------------- 04b


def _nvls_8_h100() -> tuple[float, float, float]:
    """NVLS on 8 H100 by section 7's formula: (the GPU's ring bandwidth, algbw, busbw), GB/s."""
    from nvcourse.costmodel import busbw_factor, configure

    b = configure("dgx-h100", 8).dom.gpu_Bps / 1e9
    algbw = b * tuning.nvls_efficiency("hopper") * 8 / 9
    return b, algbw, algbw * busbw_factor("allreduce", 8)


def test_04b_nvls_busbw_is_one_figure_in_section_7_and_the_check_question():
    b, algbw, busbw = _nvls_8_h100()
    text = prose("04b_predicting_collectives.ipynb")
    assert f"${b:.1f} \\times 0.85 \\times 8/9 = {algbw:.0f}$ GB/s" in text
    assert f"$= 1.75 \\times {algbw:.0f} = {busbw:.0f}$ GB/s" in text
    assert f"(~{busbw:.0f} GB/s, section 7) above the {b:.1f} GB/s" in text
    assert "~480" not in text


def test_04b_nvls_offer_follows_the_catalog():
    text = prose("04b_predicting_collectives.ipynb")
    n = catalog.get_system("dgx-h100").nvls_min_gpus
    assert f"`nvls_min_gpus` ({n} on H100)" in text
    from nvcourse.costmodel import algorithms

    assert "nvls" in algorithms("allreduce", "dgx-h100", n) and "nvls" not in algorithms("allreduce", "dgx-h100", n - 1)


def test_04b_ll128_across_nodes_is_what_the_model_picks():
    text = prose("04b_predicting_collectives.ipynb")
    assert "model picks tree/LL128 across nodes in the megabytes" in text
    p = predict("allreduce", "dgx-a100", 8, 2**20, nodes=2)
    assert (p.algo, p.proto) == ("tree", "LL128")
    assert "only over NVLink" not in text


def test_04b_runs_figure_sentences_hold_for_every_run_drawn():
    from nvcourse.chapters.ch04b_predicting import RUNS_IN_WORDS, run_band_errors
    from nvcourse.costmodel import sweeps

    errors = run_band_errors()
    assert set(RUNS_IN_WORDS) <= {p.sweep for p in sweeps.points()}
    large = max(abs(e[">= 16 MiB"]) for e in errors.values())
    small = [v for e in errors.values() for band, v in e.items() if band != ">= 16 MiB"]
    text = prose("04b_predicting_collectives.ipynb")
    words = ("two", "three", "four", "five", "six")[len(RUNS_IN_WORDS) - 2]
    assert f"Below, {words} published nccl-tests all-reduce runs" in text
    assert f"within {ceil5(large)} % at ≥ 16 MiB on every run shown" in text
    assert f"off by up to {ceil5(max(abs(v) for v in small))} %, nearly always too fast" in text
    assert sum(v < 0 for v in small) >= 0.75 * len(small)
    # "large messages are where the model is closest", on every run
    for e in errors.values():
        assert abs(e[">= 16 MiB"]) <= min(abs(v) for band, v in e.items() if band != ">= 16 MiB")


# ---------------------------------------------------------------- no maintainer material in the core chapters

_MAINTAINER = {
    "a commit hash": re.compile(r"@ ?[0-9a-f]{10,40}\b|\bcommit [0-9a-f]{7,40}\b"),
    "source line numbers": re.compile(r"\blines? \d+(-\d+)?\b|\bL\d{2,4}\b"),
    "a target verdict": re.compile(r"meets target|MISSES|target missed|\btarget \d+ ?%"),
    "in-sample notes": re.compile(r"[Ii]n-sample"),
    "NCCL source file": re.compile(r"tuning\.cc"),
}


def _core_notebooks() -> list[Path]:
    nbs = [p for p in sorted((ROOT / "notebooks").glob("*.ipynb")) if p.name.startswith(CORE)]
    sols = [p for p in sorted((ROOT / "solutions").glob("*.ipynb")) if p.name.startswith(CORE)]
    return nbs + sols


@pytest.mark.parametrize("path", _core_notebooks(), ids=lambda p: p.name)
def test_core_chapters_print_no_maintainer_material(path):
    text = prose(str(path.relative_to(ROOT))) + "\n" + outputs(path)
    found = {what: m.group(0) for what, rx in _MAINTAINER.items() if (m := rx.search(text))}
    assert not found, f"{path.name}: {found}"
    # a sample paste may name its source and a table may link one; a printed list of sources belongs to the appendix
    assert len(re.findall(r'(?<!href=")https?://', outputs(path))) <= 2, f"{path.name} prints a list of URLs"
