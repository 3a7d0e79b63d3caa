"""Chapters 07b/07c: the done-when questions answered by the course's tools, and dashboards that never show a
traceback whatever the controls say."""

import itertools
import json
import re
from pathlib import Path

import pytest

from nvcourse import overlap
from nvcourse.chapters import ch07b_overlap, ch07c_inference


def test_done_when_bucket_size_on_64_nodes():
    # "which bucket size hides DP all-reduce for this model on 64 nodes?" Llama 3 8B, DDP on 64 DGX H100:
    # buckets from the closed-form bound up hide all but the tail; DDP's 25 MiB leaves < 1 ms; 1 MiB is latency-bound.
    sc = overlap.dp_scenario("llama3-8b", "dgx-h100", 64)
    lo = sc.min_bucket()
    assert 2**20 < lo < 25 * 2**20
    assert sc.timeline(25 * 2**20).exposed_s < 1e-3
    assert sc.timeline(2**20).exposed_s > 0.25 * sc.backward_s  # thousands of latencies
    assert sc.timeline(2**30).exposed_s > sc.timeline(64 * 2**20).exposed_s  # the tail grows with the bucket
    # Llama 3 70B with TP 8 + DDP over the 64 nodes: the NIC cannot move 17.5 GB within one micro-batch's backward
    big = overlap.dp_scenario("llama3-70b", "dgx-h100", 64, tp=8)
    assert big.min_bucket() == float("inf")
    assert min(big.timeline(m * 2**20).exposed_s for m in (4, 25, 256, 1024)) > 0.1


def test_tp_and_fsdp_cases_hide_with_overlap():
    assert ch07b_overlap.tp_case("llama3-70b", "dgx-h100", 8, chunks=4).exposed_s < \
        0.5 * ch07b_overlap.tp_case("llama3-70b", "dgx-h100", 8, chunks=1).exposed_s
    assert ch07b_overlap.fsdp_case("llama3-8b", "dgx-h100", 8, prefetch=1).exposed_s < \
        0.1 * ch07b_overlap.fsdp_case("llama3-8b", "dgx-h100", 8, prefetch=0).exposed_s


def test_moe_rows_shrink_with_dedup():
    rows = {(r["system"], r["routing"]): r for r in ch07c_inference.moe_dispatch_rows()}
    h = [r for k, r in rows.items() if k[0] == "dgx-h100"]
    assert h[0]["network_bytes"] > h[1]["network_bytes"] > h[2]["network_bytes"] > 0
    assert all(r["network_bytes"] == 0 for k, r in rows.items() if k[0] == "gb200-nvl72")


@pytest.mark.parametrize("make", [ch07b_overlap.overlap_dashboard, ch07c_inference.inference_dashboard])
def test_dashboards_never_fail(make):
    d = make()
    assert d.last_error is None
    for name, w in d.controls.items():
        options = getattr(w, "options", None)
        values = [v[1] if isinstance(v, tuple) else v for v in options] if options else [w.min, w.max]
        for v in itertools.islice(values, 0, None, max(1, len(values) // 3)):
            w.value = v
            assert d.last_error is None, (name, v, d.last_error)


@pytest.mark.parametrize(("model", "system", "missing"), [("llama3-405b", "dgx-h100", 4), ("llama3-70b", "dgx-h100", 1),
                                                          ("llama3-8b", "dgx-h100", 0)])
def test_decode_figure_draws_no_bar_where_the_weights_do_not_fit(model, system, missing):
    # a layout whose weights and KV cache exceed a GPU gets the words "does not fit" and no bar (no time)
    fig = ch07c_inference.decode_tp_figure(model, system)
    ax = fig.axes[0]
    labels = [t for t in ax.texts if t.get_text() == "does not fit"]
    fits = [t for t in ch07c_inference.TP_DEGREES if ch07c_inference.fits_gpu(model, system, t)]
    assert len(labels) == missing == len(ch07c_inference.TP_DEGREES) - len(fits)
    slots = {round(p.get_x(), 3) for p in ax.patches}  # one slot per (TP degree that fits, kernel)
    assert len(slots) == len(fits) * len(ch07c_inference.inference.ALLREDUCE_ALGOS)


def test_07b_sm_cost_table_is_short_and_its_sentence_holds():
    # §3: the exposed time per SM share and bucket in a short table; "taking more SMs never lowers the exposed
    # time" down every column; the SM slowdown and busy time of each case behind the toggle
    from nvcourse import overlap
    from nvcourse.chapters import ch07b_overlap as ch07b

    sc = overlap.dp_scenario("llama3-8b", "dgx-h100", 64)
    short, full = ch07b.sm_cost_html(sc).split("<details>")
    # the short table: 0 % and 15 % of the SMs (rows) for 25 MiB and 256 MiB buckets (columns), four numbers
    assert short.count("<tr>") == 1 + 2 and short.count("<td") == 2 * 3 and "never lowers the exposed time" in short
    for m in (4, 25, 256):
        col = [sc.timeline(m * 2**20, sm_fraction=f).exposed_s for f in (0.0, 0.05, 0.15, 0.3)]
        assert all(b >= a * (1 - 1e-9) for a, b in zip(col, col[1:]))
    # "it costs the 25 MiB buckets more than the 256 MiB ones": at 15 % the 25 MiB cell is the larger, and so is
    # its rise over no SMs taken
    (a0, b0), (a15, b15) = [[sc.timeline(m * 2**20, sm_fraction=f).exposed_s for m in (25, 256)] for f in (0.0, 0.15)]
    assert a15 > b15 and a15 - a0 > b15 - b0
    assert "it costs the 25 MiB buckets more than the 256 MiB ones" in short
    # nothing dropped: every share (0, 5, 15, 30 %) and bucket (4, 25, 256 MiB) behind the toggle
    assert full.count("(SM slowdown") == 12 and "comm stream busy" in full
    assert all(f"SMs taken {f}, bucket {m} MiB" in full for f in ("0%", "5%", "15%", "30%") for m in (4, 25, 256))


def test_07b_roofline_table_is_short_and_its_sentence_holds():
    # §7: C/W per system over NVLink and over the NIC (six numbers); "over the NIC a GPU needs about 8 to 15 times
    # more tokens to hide its traffic than over NVLink"; C and W of every row behind the toggle
    from nvcourse import rooflines
    from nvcourse.chapters import ch07b_overlap as ch07b

    systems = ("dgx-h100", "dgx-b200", "gb200-nvl72")
    short, full = ch07b.roofline_table_html(systems).split("<details>")
    assert short.count("<tr>") == 1 + 3 and short.count("<td") == 3 * 3
    rows = {(r["system"], r["link"]): r for r in rooflines.worked_table(systems)}
    ratios = [rows[s, "nic"]["C_over_W"] / rows[s, "nvlink"]["C_over_W"] for s in systems]
    assert 7.5 <= min(ratios) and max(ratios) < 15.5
    assert "about 8 to 15 times more tokens to hide its traffic than over NVLink" in short
    assert full.count("<tr>") == 1 + 6 and "C (TFLOP/s, BF16 dense)" in full and "W (GB/s, achievable)" in full


def _md(notebook: str) -> dict[str, str]:
    nb = json.loads((Path(__file__).resolve().parents[1] / "notebooks" / notebook).read_text(encoding="utf-8"))
    return {c["id"]: re.sub(r"\s+", " ", "".join(c["source"])) for c in nb["cells"]}


def test_07b_sections_open_with_their_question_and_name_each_scenario_for_what_it_is():
    cells = _md("07b_overlapping_communication.ipynb")
    for cid, text in cells.items():
        for section in re.split(r"(?:^|\s)## ", text)[1:]:
            if re.match(r"\d+\. ", section):
                title_end = re.search(r"\d+\. .*? (This section)", section)
                assert title_end and section.index("This section") < 120, (cid, section[:80])
    # the 8B scenario runs DP with a distributed optimizer (ZeRO-1), not DDP, and is labelled so
    joined = " ".join(cells.values())
    assert "8B, DDP over 512" not in joined and "8B DDP," not in joined
    src = Path(ch07b_overlap.__file__).read_text(encoding="utf-8")  # the cells print through the module's messages
    assert '_("Llama 3 8B, ZeRO-1 DP over 512 GPUs")' in src and "ZeRO-1 DP, 8,192 tokens/GPU" in src
    assert "ch.bucket_cases()" in cells["c005"]
    # §7: the flat ring does not reduce inside the node first; the algorithms that do are named
    # (the note sits in the reference section §9, which §7's DP row points to)
    assert "NCCL reduces inside the node first" not in cells["c014"] + cells["c07bref"]
    assert "(§9: which NCCL algorithms reduce inside the node first.)" in cells["c014"]
    assert ("NCCL's flat ring does not reduce inside the node first" in cells["c07bref"]
            and "The tree, NVLS-tree and hierarchical algorithms are the ones that reduce inside the node first" in
            cells["c07bref"])
    # the FSDP/TP/EP derivations and §8's SM-share nuance sit behind toggles, after the sentence that names them
    assert "<details><summary>Where the FSDP, TP and EP rows come from" in cells["c014"]
    assert "<details><summary>Why taking more SMs can cut the waiting but never the exposed time" in cells["c016"]


def test_07c_key_point_scopes_the_classic_path_ratio_to_the_model():
    cells = _md("07c_communication_for_inference.ipynb")
    assert "in the course's model, at 16 KiB NCCL's classic path takes" in cells["c022"]
    assert "## 10. Reference:" in cells["c07cref"] and "## 10." not in cells["c022"]
