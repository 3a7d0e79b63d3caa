"""Chapters 03 and 05, after a fresh learner's walkthrough: each sentence it found wrong, or that the fix wrote,
holds in every state its dashboard or model allows; the test rebuilds the figure from the model, the data or the
fixture.

Markdown cannot compute: the sentence must appear in the chapter as written (line breaks read as spaces).
"""

import pytest
from test_prose_facts_core import prose

from nvcourse import catalog
from nvcourse.chapters import ch03_topology as ch03
from nvcourse.topology.topo_parser import parse_topo

CH03 = "03_topologies_and_nvswitch.ipynb"
CH05 = "05_nvl72_rack_scale.ipynb"


def test_03_vllm_server_has_one_pix_pair_per_socket():
    # §7: "one pair of GPUs per socket shares a bottom-level PCIe switch (PIX), the other two GPUs sit on switches of
    # their own"
    assert ("one pair of GPUs per socket shares a bottom-level PCIe switch (`PIX`), the other two GPUs sit on "
            "switches of their "
            "own; `PXB` within a socket, `SYS` across.") in prose(CH03)
    codes = parse_topo(ch03.example_text("pcie-8gpu-vllm")).codes
    pix = {frozenset(p) for p, c in codes.items() if c == "PIX"}
    assert pix == {frozenset(("GPU0", "GPU1")), frozenset(("GPU4", "GPU5"))}
    sys_pairs = {frozenset(p) for p, c in codes.items() if c == "SYS" and all(d.startswith("GPU") for d in p)}
    assert len(sys_pairs) == 16  # every pair across the two sockets of four GPUs


def test_03_dgx1_ring_runs_at_its_single_link_hops():
    # §5: "the ring runs at its slowest hop, a single link: 25 GB/s (the hops over bonded NV2 pairs sit at 50 %)"
    assert "(the hops over bonded `NV2` pairs sit at 50 %)" in prose(CH03)
    rate, rows = ch03._pattern_facts("dgx-1-v100", "ring")
    G = ch03._system_facts("dgx-1-v100")[0]
    for r in rows:
        count = G.edges[r["a"], r["b"]].get("count", 1)
        assert r["utilisation"] == pytest.approx(1.0 if count == 1 else 0.5), r
    assert {G.edges[r["a"], r["b"]].get("count", 1) for r in rows} == {1, 2}


def test_03_six_rings_use_the_line_rate_and_reach_about_120_at_efficiency():
    # §5: "together they use all 150 GB/s of line rate, the readout's last figure (about 120 GB/s at NCCL's ..."
    assert ("use all 150 GB/s of line rate, the readout's last figure (about 120 GB/s at NCCL's efficiency, "
            "section 4)") in prose(CH03)
    rings = ch03._system_facts("dgx-1-v100")[2]
    assert rings.total_GBps_dir == 150
    assert ch03.ring_busbw_GBps("dgx-1-v100") == pytest.approx(120, rel=0.01)


def test_03_ring_busbw_is_the_large_message_limit_above_chapter_05s_nvl72_figure():
    # §4 and the table's caption: ring busbw leaves out the per-step latency, which lowers the NVL72 figure at 4 GiB;
    # §4's printout has no NVL72, so only the table that shows it says so (walkthrough V)
    from nvcourse.costmodel import validation

    assert "busbw NCCL can reach for large messages, without the per-step latency" in prose(CH03)
    assert "without the per-step latency (chapter 05 adds it" in ch03.metrics_table_html()
    row = next(r for r in validation.compare([k for k in validation.cases() if k.id == "nvl72-allreduce-ring"]))
    assert row.case.bytes == 4 * 2**30 and row.case.gpus == 72
    assert row.predicted_busbw_GBps < ch03.ring_busbw_GBps("gb200-nvl72")


def test_03_readout_names_the_busiest_link_as_the_drawing_labels_it():
    # the PCIe server's busiest all-to-all link is named "root port 1–PCIe sw 1", as drawn, not by node id
    _, readout = ch03.render_system("pcie-8gpu", "all-to-all")
    assert "busiest link root port 1–PCIe sw 1" in readout and "HB1" not in readout
    for sid in catalog.systems():
        G = ch03._system_facts(sid)[0]
        top = ch03._pattern_facts(sid, "all-to-all")[1][0]
        _, readout = ch03.render_system(sid, "all-to-all")
        label = " ".join(str(G.nodes[top["a"]].get("label", top["a"])).replace("NVSwitch", "NVS").split())
        assert f"busiest link {label}–" in readout, sid


def test_03_paste_box_asks_for_the_menus_and_pcie_changes_no_figure_with_nvlink():
    # "When the GPUs have NVLink, the readout's figures use NVLink alone, so the PCIe menu changes only the drawing."
    assert "the readout's figures use NVLink alone, so the PCIe menu changes only the drawing" in prose(CH03)
    text = ch03.example_text("hgx-h20-nvswitch")
    readouts = {ch03.render_pasted(text, "nvlink4", p)[1].split("<div")[0] for p in ("", "pcie3", "pcie4", "pcie5",
                                                                                    "pcie6")}
    assert len(readouts) == 1 and "bisection" in next(iter(readouts))
    _, unknown = ch03.render_pasted(text, "", "pcie5")
    assert "pick an NVLink generation in the menu above" in unknown and "nvlink=" not in unknown


def test_03_section_7_prints_the_example_without_fixture_notes():
    # §7 prints the matrix as a learner pastes it, with its source, not the fixture's comment lines
    from test_prose_facts_core import ROOT, outputs

    out = outputs(ROOT / "notebooks" / CH03)
    assert "header without leading indentation" not in out
    assert "https://github.com/vllm-project/vllm/issues/11122\nGPU0" in out


def test_03_check_yourself_names_defaults_that_the_chapter_gives():
    text = prose(CH03)
    assert "GPUDirect level" not in text
    assert "by default uses GPUDirect RDMA only up to `PXB` (or `P2C` on Grace boards)" in text
    assert "How many link-disjoint rings' worth of bandwidth can a DGX A100 GPU carry" in text
    # the key point no longer lists NCCL's own codes: they sit in §8 and the collapsed table
    key = text[text.index("## Key points"):text.index("## Check yourself")]
    assert "NVB" not in key and "path types of its own (§8)" in key
    ref = text[text.index("## 8."):text.index("## Key points")]
    assert all(code in ref for code in ("P2C",))
    assert all(code in ch03.codes_table_html() for code in ("NVB", "C2C", "P2C", "PXN"))


# ------------------------------------------------------------------------------------------------ 05
def test_05_small_buffers_run_the_ll_ring_which_keeps_8_gpus_and_loses_less_on_72():
    # §2: "on 8 GPUs the ring keeps them, and on 72 NVLS wins them by less than the formula says"
    from nvcourse.costmodel import predict
    from nvcourse.fabric.moe import domain_allreduce_time

    assert ("For small buffers NCCL runs the ring with its low-latency protocol, LL "
            "([glossary](../docs/glossary.md#protocol), chapter 04b), whose steps cost far less than the formula's α: "
            "on 8 GPUs the ring keeps them, and on 72 NVLS wins them by less than the formula says.") in prose(CH05)
    for k in range(16, 21):  # 64 KiB .. 1 MiB, the table's 256 KiB among them
        n = 2**k
        r8, v8 = (predict("allreduce", "gb200-nvl72", 8, n, algo=a) for a in ("ring", "nvls"))
        r72, v72 = (predict("allreduce", "gb200-nvl72", 72, n, algo=a) for a in ("ring", "nvls"))
        assert r8.proto == r72.proto == "LL", k
        assert r8.time_s < v8.time_s, k
        assert 1 < r72.time_s / v72.time_s < domain_allreduce_time("gb200-nvl72", n, 72) / v72.time_s, k


def test_05_section_2_body_keeps_one_ratio_story_and_section_6_the_rest():
    text = prose(CH05)
    body = text[text.index("## 2."):text.index("## 3.")]
    ref = text[text.index("## 6."):text.index("## Key points")]
    for moved in ("| bytes each GPU moves |", "0.6 µs per NVLink step", "not the 18× of the Simple-only formula",
                  "up to 2 MiB on 8 B200", "versions 2.18 to 2.28.6 needed 3 or more"):
        assert moved not in body and moved in ref, moved
    assert "Dotted: the ring equation above." in body and "two equations as written" not in text
    assert "The course's code of" not in text


def test_05_eta_explains_the_h100_gap_and_the_nvl72_gap_has_other_reasons():
    # §2: "On 8 H100 the model agrees: 1.31× against the published 1.30×"; key point: 1.44× at g = 72
    from nvcourse.costmodel import tuning, validation

    text = prose(CH05)
    assert "the model agrees: 1.31× against the published 1.30×" in text
    rows = {r.case.id: r for r in validation.compare([k for k in validation.cases() if "allreduce" in k.id
                                                      and k.id.startswith(("h100-8gpu", "nvl72"))])}
    h_nvls, h_ring = rows["h100-8gpu-allreduce-nvls"], rows["h100-8gpu-allreduce-ring"]
    h_model = h_nvls.predicted_busbw_GBps / h_ring.predicted_busbw_GBps
    h_pub = h_nvls.case.busbw_GBps / h_ring.case.busbw_GBps
    assert (f"{h_model:.2f}", f"{h_pub:.2f}") == ("1.31", "1.30")
    n_model = rows["nvl72-allreduce-nvls"].predicted_busbw_GBps / rows["nvl72-allreduce-ring"].predicted_busbw_GBps
    n_pub = rows["nvl72-allreduce-nvls"].case.busbw_GBps / rows["nvl72-allreduce-ring"].case.busbw_GBps
    assert n_model - n_pub > 0.1 and 1.25 <= round(n_pub, 2) <= 1.3  # the model stays above: "an upper bound"
    g, eta = 72, tuning.nvls_efficiency("blackwell")
    assert f"{2 * (g - 1) * eta / (g + 1):.2f}" == "1.44"
    assert ("it runs at η of the link rate (1.44× left at $g = 72$); a published NVL72 run measures less still, "
            f"≈ {n_pub:.2f}× (§2).") in text


def test_05_tp_key_point_says_the_all_reduce_keeps_its_size():
    # key point: each GPU's share of the matmul shrinks with t; the all-reduce keeps its size and pays 2(t-1) steps
    from nvcourse.chapters import ch05_nvl72 as ch

    text = prose(CH05)
    assert "shrink per GPU while their latency does not" not in text
    assert ("every all-reduce keeps its size, tokens × hidden, and, on a ring, pays $2(t-1)$ steps") in text
    act = 4096 * 8192 * 2
    r8, r16 = ch.nvls_vs_ring(act, 8)[0], ch.nvls_vs_ring(act, 16)[0]
    assert r8.time_s < r16.time_s  # the same bytes on more GPUs: more steps, more time


def test_05_scale_out_is_defined_at_first_use():
    text = prose(CH05)
    assert "slower network between racks (*scale-out*)" in text
    assert text.index("scale-out") == text.index("(*scale-out*)") + 2  # its first use is where it is defined
