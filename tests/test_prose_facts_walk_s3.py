"""Chapters 07, 07b and 07c: the sentences a fresh learner found contradicting another chapter or the dashboards, and
the words used before they were defined, as now written; each claim is rebuilt from the model.
Markdown line breaks are read as spaces."""

import json
import re
from functools import cache
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

ROOT = Path(__file__).resolve().parents[1]
CH07, CH07B, CH07C = ("07_training_at_scale.ipynb", "07b_overlapping_communication.ipynb",
                      "07c_communication_for_inference.ipynb")


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@cache
def cells(notebook: str) -> dict[str, str]:
    """Cell id → source with whitespace collapsed."""
    nb = json.loads((ROOT / "notebooks" / notebook).read_text(encoding="utf-8"))
    return {c["id"]: re.sub(r"\s+", " ", "".join(c["source"])) for c in nb["cells"]}


def test_07_key_point_nvl72_bends_later_only_for_models_that_need_tp_or_pp():
    text = cells(CH07)["c017"]
    assert ("— for models that need TP or PP, a larger NVLink domain bends it later." in text)
    assert "— a larger NVLink domain bends it later." not in text  # the old, unqualified bullet
    # §4 says the 8B model (no TP or PP needed) can dip below the DGX H100; the key point no longer contradicts it
    assert "it can dip below the DGX H100" in cells(CH07)["c010"]


def test_07_table_pp_sends_hide_in_interleaved_schedules_as_07b_says():
    c004 = cells(CH07)["c004"]
    assert ("| mostly, with interleaved schedules (07b §6); charged in full here (upper bound). The **bubble** "
            "cannot hide: it idles GPUs") in c004
    assert "| barely;" not in c004
    b = " ".join(cells(CH07B).values())
    assert "Interleaved schedules overlap these sends with the next micro-batch's compute" in b


def test_07_tp_hides_more_than_half_only_for_large_gemms_with_few_sms():
    from nvcourse.chapters import ch07b_overlap as ch07b

    assert ("collective kernels hides part of them inside NVLink: over half only for large GEMMs with few "
            "[SMs](../docs/glossary.md#sm) on communication (07b).") in cells(CH07)["c004"]
    assert "chunked GEMM/collective kernels hide part of them over NVLink (07b)" in cells(CH07)["c017"]
    dash = ch07b.overlap_dashboard().controls
    chunks = range(2, dash["chunks"].max + 1)
    shares = [round(dash["sm_fraction"].min + i * dash["sm_fraction"].step, 2)
              for i in range(round((dash["sm_fraction"].max - dash["sm_fraction"].min) / dash["sm_fraction"].step) + 1)]

    def best(model, f):
        unsplit = ch07b.tp_case(model, "dgx-h100", 8, chunks=1, sm_fraction=f).exposed_s
        return min(ch07b.tp_case(model, "dgx-h100", 8, chunks=c, sm_fraction=f).exposed_s for c in chunks) / unsplit

    assert best("llama3-70b", 0.0) < 0.5  # the large GEMMs, no SMs taken: more than half hidden
    assert best("llama3-70b", 0.15) > 0.5  # at 15 % of the SMs: less than half
    assert all(best("llama3-8b", f) > 0.5 for f in shares)  # the small GEMMs: never more than half


def test_07b_bucket_range_sentence_names_the_offered_sizes():
    from nvcourse.chapters import ch07b_overlap as ch07b

    # the caveat sits in the reference section (§9), after §2's range that it qualifies
    c006, ref = cells(CH07B)["c006"], cells(CH07B)["c07bref"]
    assert "from 6 MiB, just above the bound printed above" in c006
    assert "§2's range starts at 6 MiB, but the §8 dashboard offers 4 and 8 MiB, not 6, so its readout says 8." in ref
    sizes = list(ch07b.BUCKET_CHOICES_MIB)
    assert 4 in sizes and 8 in sizes and 6 not in sizes and sizes.index(8) == sizes.index(4) + 1


def test_07b_llama_mlp_matrices_and_gemms_agree():
    assert ("MLP. Llama's has 3: its gate and up projections are both column-parallel, so §5's first GEMM holds two "
            "of them.") in cells(CH07B)["c014"]


def test_words_used_before_defined_are_now_defined_at_first_use():
    c07, c07b, c07c = cells(CH07), cells(CH07B), cells(CH07C)
    assert "(default of NVIDIA's Megatron-LM framework)" in c07["c006"]
    assert "Real MoE kernels (DeepEP, DeepSeek's open-source expert-parallel communication library)" in c07["c012"]
    assert ("describe FSDP/ZeRO-3's (PyTorch's Fully Sharded Data Parallel, [glossary](../docs/glossary.md#zero)) "
            "per-layer") in c07b["c000"]
    assert "over [RDMA](../docs/glossary.md#rdma) or" in c07c["c000"]
    assert ("Streaming is the design of Splitwise, a research system that runs prefill and decode on separate "
            "machines") in c07c["c014"]
    assert "LMCache and Mooncake, KV-cache transfer libraries that serving engines such as vLLM use" in c07c["c014"]
    glossary = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    assert 'id="zero"' in glossary and 'id="rdma"' in glossary
