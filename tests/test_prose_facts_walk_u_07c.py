"""Chapter 07c after the density pass (walkthrough U): each section opens with its question and a short answer, and
the sentences that pass moved or wrote hold over the model, the readouts and the dashboard's range."""

import json
import re

import pytest
from test_prose_facts_core import ROOT, prose

from nvcourse import inference
from nvcourse.chapters import ch07c_inference as ch
from nvcourse.chapters import ch07c_serving

NB = "07c_communication_for_inference.ipynb"
KIB = 2**10


def _cells() -> dict[str, str]:
    nb = json.loads((ROOT / "notebooks" / NB).read_text(encoding="utf-8"))
    return {c["id"]: re.sub(r"\s+", " ", "".join(c["source"])) for c in nb["cells"]}


def _section(text: str, number: int) -> str:
    start = text.index(f"## {number}. ")
    return text[start:text.index("## ", start + 3)]


def _systems() -> list[str]:
    return list(ch.inference_dashboard().controls["system"].options)


def _tps(system: str) -> list[int]:
    from nvcourse import catalog

    return [t for t in (2, 4, 8) if t <= catalog.get_system(system).gpus_per_domain]


def test_section_2_answer_holds_on_every_system_of_the_dashboard():
    said = ("At decode sizes a custom one-shot kernel is far faster than NCCL's classic path; two-shot pays off only "
            "for larger messages. On H100, NCCL's newer symmetric kernels come close to the custom ones, in NCCL's "
            "own model.")
    s2 = _section(prose(NB), 2)
    assert said in s2 and s2.index(said) < s2.index("**Predict**")
    for system in _systems():
        for tp in _tps(system):
            for k in range(3, 17):  # 8 B to 64 KiB: decode messages up to batch 4 of an 8K-hidden model
                t = {a: inference.allreduce_time(system, tp, 2**k, a) for a in inference.ALLREDUCE_ALGOS}
                assert t["oneshot"] <= t["twoshot"], (system, tp, 2**k)
            t16 = {a: inference.allreduce_time(system, tp, 16 * KIB, a) for a in inference.ALLREDUCE_ALGOS}
            assert t16["nccl"] / t16["oneshot"] >= 2, (system, tp)  # "far faster"
    assert ch.kernel_ratios("dgx-h100")["sym_over_custom"][1] < 1.4  # "come close", H100 only
    assert ch.kernel_ratios("dgx-b200")["sym_over_custom"][0] >= 2


def test_two_shot_overtakes_one_shot_at_a_few_hundred_kib_on_tp8():
    assert "a few hundred KiB on TP 8" in prose(NB)
    cross = next(2**k for k in range(10, 28) if inference.allreduce_time("dgx-h100", 8, 2**k, "twoshot")
                 < inference.allreduce_time("dgx-h100", 8, 2**k, "oneshot"))
    assert 100 * KIB <= cross < 1000 * KIB


def test_section_6_answer_and_the_streaming_sentence_hold():
    text = prose(NB)
    assert ("Answer: over one NIC the move is a sizeable part of the time to first token (TTFT); over eight NICs or "
            "NVLink, a small one.") in _section(text, 6)
    pre = inference.prefill_time("llama3-70b", "dgx-h100", 32768, gpus=8)
    share = {}
    for path, system, senders in ch.KV_PATHS.values():
        x = inference.kv_transfer_time("llama3-70b", 32768, system, path=path, senders=senders)["time_s"]
        share[senders, path] = x / inference.ttft(pre, x, 80, layerwise=False)["ttft_s"]
    assert share[1, "rdma"] >= 0.1 and share[8, "rdma"] <= 0.03 and share[8, "nvlink"] <= 0.03
    # "Streamed, a transfer shorter than the prefill adds only its last layer's share to the TTFT."
    assert "Streamed, a transfer shorter than the prefill adds only its last layer's share to the TTFT." in text
    for x in (0.001, 0.2, 1.0, 1.5):
        assert inference.ttft(1.52, x, 80)["exposed_s"] == pytest.approx(x / 80)


def test_key_point_kv_times_hold():
    assert ("a 32k Llama 3 70B prompt's takes a quarter second over one 400 Gb/s NIC, tens of ms over eight, a "
            "couple of ms over an NVL72's NVLink") in prose(NB)
    t = {label: inference.kv_transfer_time("llama3-70b", 32768, system, path=path, senders=senders)["time_s"]
         for label, (path, system, senders) in ch.KV_PATHS.items()}
    one, eight, nvl = (t[f"1 × {ch.NIC_RATE} RDMA"], t[f"8 × {ch.NIC_RATE} RDMA"], t["NVLink (NVL72)"])
    assert 0.2 <= one <= 0.3 and 0.01 <= eight < 0.1 and 1e-3 <= nvl < 4e-3  # a quarter s, tens of ms, a couple


def test_section_7_answer_half_the_bytes_and_none_on_the_network_in_an_nvl72():
    assert "Answer: about half the bytes chapter 05 counted, and an NVL72 keeps them all on NVLink." in prose(NB)
    rows = {(r["system"], r["routing"]): r for r in ch.moe_dispatch_rows()}
    cut = rows["dgx-h100", "dedup + ≤ 4 nodes"]["network_bytes"] / rows["dgx-h100", "every copy"]["network_bytes"]
    assert 0.4 <= cut <= 0.6
    assert all(r["network_bytes"] == 0 for (s, _), r in rows.items() if s == "gb200-nvl72")


def test_fp8_fit_is_read_off_the_table_not_retyped():
    c020 = _cells()["c020"]
    assert ('DeepSeek-V3 in FP8 fits one 8 × H200 node (the FP8 row, in the collapsed "The other techniques\' '
            'results" block above)') in c020
    assert "671 GB" not in c020 and "1,128" not in c020 and "77–194" not in prose(NB)
    fp8 = next(r for r in ch07c_serving.serving_rows() if r["key"] == "fp8")
    assert "fits" in fp8["short"]


def test_moved_detail_sits_in_the_reference_section_and_deepep_latency_is_printed():
    text = prose(NB)
    ref = text[text.index("## 10. Reference:"):text.index("## Key points")]
    for moved in ("beat them below 16 KiB and again from 128 KiB on TP 8, and from 512 KiB on TP 4",
                  "optionally with NVSwitch multicast", "**§3's totals.** We found no published TP 4 vs TP 8",
                  "DeepEP's low-latency kernels, printed last, are the latency-bound decode dispatch of §8."):
        assert moved in ref, moved
    assert "(§10)" in _section(text, 3) and "beat them below 16 KiB" not in text[text.index("## Key points"):]
    nb = json.loads((ROOT / "notebooks" / NB).read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if c["id"] == "c019")
    shown = "".join("".join(o.get("text", "")) for o in cell["outputs"])
    ll = inference.data()["deepep_low_latency"]
    lo, hi = min(r["dispatch_us"] for r in ll), max(r["dispatch_us"] for r in ll)
    assert f"EP {ll[0]['ep']}-{ll[-1]['ep']}: dispatch {lo:g}-{hi:g} µs for 128 tokens" in shown


def test_section_4_long_context_stays_memory_bound_past_the_compute_batch():
    assert "at 4K tokens of context the step below stays memory-bound even past that batch" in prose(NB)
    steps = [inference.decode_step("llama3-70b", "dgx-h100", 8, batch=b, context=4096) for b in (1, 8, 64, 256, 512)]
    assert all(s.bound == "memory" for s in steps)
    assert inference.decode_step("llama3-70b", "dgx-h100", 8, batch=512, context=0).bound == "compute"


def test_section_1_two_all_reduces_per_layer():
    assert "two of them per layer are added to every token" in prose(NB)
    m = inference.get_model("llama3-70b")
    assert inference.decode_step("llama3-70b", "dgx-h100", 8).allreduces == 2 * m.layers


def test_every_numbered_section_opens_with_its_question_then_at_most_one_answer_paragraph():
    nb = json.loads((ROOT / "notebooks" / NB).read_text(encoding="utf-8"))
    md = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    for section in re.split(r"^## ", md, flags=re.M)[1:]:
        if re.match(r"\d+\. ", section):
            body = section.split("\n", 2)[2].lstrip()
            assert body.startswith("This section"), section.split("\n", 1)[0]


def test_reading_time_shrank():
    from nvcourse.devtools import reading_time

    row = reading_time.measure_chapter(ROOT / "notebooks" / NB)
    assert row.reading_min <= 42 and row.core_min == 0  # 46 and 0 before the density pass


def test_speculative_row_sentence_holds_on_every_system_and_kernel():
    from nvcourse import catalog

    assert ("In the speculative row each all-reduce is 4 tokens wide, but at these sizes it costs less than twice a "
            "1-token one, so the all-reduce cost per *output* token falls.") in prose(NB)
    h = inference.get_model("llama3-70b").hidden
    for system in _systems():
        for tp in (2, 4, 8):
            if tp > catalog.get_system(system).gpus_per_domain:
                continue
            for a in inference.ALLREDUCE_ALGOS:
                one, four = (inference.allreduce_time(system, tp, k * h * 2, a) for k in (1, 4))
                assert four < 2 * one, (system, tp, a)
    r = ch07c_serving.serving_rows()
    spec = next(x for x in r if x["key"] == "speculative")
    assert "each 4 tokens wide" in spec["result"] and "instead of 160" in spec["short"]
