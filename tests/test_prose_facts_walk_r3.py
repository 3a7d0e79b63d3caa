"""Chapters 03 and 05, after the third fresh-learner walkthrough: each sentence it found wrong or unclear, as the fix
wrote it, holds in every state its model or dashboard allows; the test rebuilds the figure from the model or data.

Markdown cannot compute: the sentence must appear in the chapter as written (line breaks read as spaces).
"""

from test_prose_facts_core import prose

from nvcourse import catalog
from nvcourse.costmodel import factors, predict, tuning, validation
from nvcourse.fabric.moe import domain_allreduce_time
from nvcourse.topology.topo_parser import parse_topo

CH03 = "03_topologies_and_nvswitch.ipynb"
CH05 = "05_nvl72_rack_scale.ipynb"


# ------------------------------------------------------------------------------------------------ 05
def test_05_nvls_byte_saving_on_8_gpus_is_1_56_not_half_and_eta_brings_it_to_the_h100_gap():
    # §6 (moved from §2 by walk U): "On 8 GPUs NVLS moves 1.56× fewer bytes than the ring (about half only at 72) ...
    # 1.56 × 0.85 ≈ 1.32×"
    text = prose(CH05)
    body = text[text.index("## 6."):text.index("## Key points")]
    assert "about half the ring's bytes" not in text
    ratio = {g: 2 * (g - 1) / (g + 1) for g in (8, 72)}
    assert f"{ratio[8]:.2f}" == "1.56" and ratio[72] > 1.9  # about half only at 72
    eta = tuning.nvls_efficiency("hopper")
    assert f"{ratio[8] * eta:.2f}" == "1.32" and eta == 0.85
    assert ("On 8 GPUs NVLS moves 1.56× fewer bytes than the ring (about half only at 72), but its path through the "
            "switch runs at a fraction η of the link rate (0.85 on Hopper), so the bandwidth term shrinks only "
            "1.56 × 0.85 ≈ 1.32×, close to both figures above.") in body
    rows = {r.case.id: r for r in validation.compare([k for k in validation.cases()
                                                      if k.id.startswith("h100-8gpu-allreduce-")])}
    nv, ring = rows["h100-8gpu-allreduce-nvls"], rows["h100-8gpu-allreduce-ring"]
    model, pub = nv.predicted_busbw_GBps / ring.predicted_busbw_GBps, nv.case.busbw_GBps / ring.case.busbw_GBps
    assert (f"{model:.2f}", f"{pub:.2f}") == ("1.31", "1.30") and abs(model - ratio[8] * eta) < 0.02
    assert "the model agrees: 1.31× against the published 1.30×" in body


def test_05_section_2_keeps_one_comparison_and_the_table_moves_to_section_6():
    import json

    from test_prose_facts_core import ROOT

    cells = json.loads((ROOT / "notebooks" / CH05).read_text(encoding="utf-8"))["cells"]
    ids = [c["id"] for c in cells]
    heading3 = next(i for i, c in enumerate(cells) if "## 3." in "".join(c["source"]))
    heading6 = next(i for i, c in enumerate(cells) if "## 6." in "".join(c["source"]))
    # the summary table and the model-vs-published lines are displayed in §6, not §2
    assert heading6 < ids.index("c05tab") and "display(HTML(summary))" in "".join(cells[ids.index("c05tab")]["source"])
    assert ids.index("fb3c1146") > heading6 and ids.index("c005") < heading3
    assert "display(" not in "".join(cells[ids.index("c005")]["source"])


def test_05_one_tier_is_full_rate_to_one_peer_or_spread_not_per_pair():
    text = prose(CH05)
    assert "every pair of GPUs can talk at the full per-GPU rate" not in text
    assert "full NVLink rate to every other" not in text
    assert ("every GPU can send at its full rate at once, to any one peer or spread over all of them: one "
            "non-blocking tier.") in text
    assert "every GPU can use its full NVLink rate, to any one peer or spread over all of them" in text
    s = catalog.get_system("gb200-nvl72")
    assert s.gpus_per_domain == 72 and s.scaleup_GBps_dir / 71 < 13  # all pairs at once: 900/71 each


def test_05_ring_steps_are_said_of_the_ring_only():
    text = prose(CH05)
    assert "and, on a ring, pays $2(t-1)$ steps" in text
    assert "while NVLS still pays one" in text


def test_05_8_b200_keeps_the_ring_to_2_mib_and_h100_picks_nvls_from_2_mib():
    mib = 2**20
    for system, first in (("dgx-b200", 3), ("dgx-h100", 2)):
        for m in range(1, 4097):
            assert (predict("allreduce", system, 8, m * mib).algo == "nvls") == (m >= first), (system, m)
    assert ("keeps the ring up to 2 MiB on 8 B200 and picks NVLS from 3 MiB on" in prose(CH05)
            and "it picks NVLS from 2 MiB on (chapter 04b)." in prose(CH05))


def _formula_min_gpus(eta: float, alpha_s: float, nvls_s: float) -> int:
    """Smallest g from which the chapter's NVLS formula beats its Simple-α ring at every size."""
    for g in range(2, 73):
        if 2 * (g - 1) * alpha_s >= nvls_s and 2 * (g - 1) / g >= (g + 1) / (g * eta):
            return g
    raise AssertionError("never")


def test_05_formula_gives_the_published_minimum_gpu_counts():
    # §6's collapsed box: "with α = 3.4 µs, α_NVLS = 25 µs and η, §2's formula gives 5 for H100 (...) and 6 for
    # Blackwell"
    g = 72
    alpha = domain_allreduce_time("gb200-nvl72", 1, g) / (2 * (g - 1))  # the formula's α: 1 byte is all latency
    assert f"{alpha * 1e6:.1f}" == "3.4" and factors.NVLS_LATENCY_US == 25
    got = {arch: _formula_min_gpus(tuning.nvls_efficiency(arch), alpha, factors.NVLS_LATENCY_US * 1e-6)
           for arch in ("hopper", "blackwell")}
    assert got == {"hopper": catalog.get_system("dgx-h100").nvls_min_gpus,
                   "blackwell": catalog.get_system("gb200-nvl72").nvls_min_gpus} == {"hopper": 5, "blackwell": 6}
    text = prose(CH05)
    assert ("with α = 3.4 µs, α_NVLS = 25 µs and η, §2's formula gives 5 for H100 (and H200, the same switch board) "
            "and 6 for Blackwell") in text
    assert "<summary>From how many GPUs does NVLS win at every size in the Simple-only formula?</summary>" in text


def test_05_nvls_latency_is_named_as_in_04b_and_dispatch_is_defined_at_first_use():
    text = prose(CH05)
    assert "$L$" not in text and "\\alpha_\\text{NVLS}" in text
    assert "α_NVLS" in prose("04b_predicting_collectives.ipynb")
    assert text.index("dispatch") == text.index("The **dispatch**") + len("The **")  # first use defines it
    assert ("The **dispatch** all-to-all sends each token to its experts; the **combine** all-to-all brings the "
            "experts' results back") in text


# ------------------------------------------------------------------------------------------------ 03
def test_03_pasted_two_socket_pcie_readout_says_the_cpu_link_is_unbounded():
    # §7: the vLLM server pasted with PCIe only: its SYS pairs cross the CPU-to-CPU link, which the drawing leaves
    # unbounded; the readout says so and gives NCCL's model rate, as §5's readout does
    from nvcourse.chapters import ch03_topology as ch03

    cap = catalog.get_system("pcie-8gpu").inter_socket_GBps_dir
    note = f"(CPU-to-CPU link unbounded; NCCL's model rates it {cap:g} GB/s per direction on AMD hosts)"
    assert cap == 16
    vllm = ch03.example_text("pcie-8gpu-vllm")
    for nvlink, pcie in (("nvlink4", "pcie5"), ("nvlink3", "pcie4"), (None, "pcie3")):  # PCIe known: numbers
        _fig, html = ch03.render_pasted(vllm, nvlink, pcie)
        assert note in html, (nvlink, pcie)
    for key in ch03.example_files():  # the note exactly where no GPU pair has NVLink and some pair is SYS
        codes = parse_topo(ch03.example_text(key)).codes
        gpu_codes = [c for (a, b), c in codes.items() if a.startswith("GPU") and b.startswith("GPU")]
        expected = "SYS" in gpu_codes and not any(c.startswith("NV") for c in gpu_codes)
        _fig, html = ch03.render_pasted(ch03.example_text(key), "nvlink4", "pcie5")
        assert ("CPU-to-CPU link unbounded" in html) == expected, key
    assert "16 GB/s" in prose(CH03) and "drawing leaves unbounded" in prose(CH03)


def test_03_dgx1_last_figure_is_the_line_rate_and_words_are_defined():
    text = prose(CH03)
    assert ("together they use all 150 GB/s of line rate, the readout's last figure (about 120 GB/s at NCCL's "
            "efficiency, section 4).") in text
    assert "— the readout's last figure" not in text
    assert ("so each split is solved as a *max-flow*: the largest rate that can be pushed from one half to the other "
            "without overfilling a link.") in text
    assert "leaf switch" not in text and "unicast" not in text
    assert "(a root sending one copy to each GPU)" in text


def test_03_section_4_defines_busbw_before_using_it():
    import math

    text = prose(CH03)
    sec4 = text[text.index("## 4."):text.index("## 5.")]
    assert sec4.index("**Bus bandwidth** (*busbw*, the figure nccl-tests prints") < sec4.index("busbw NCCL can reach")
    # "the link rate a ring would need to finish in the measured time": nccl-tests' busbw = algbw x 2(n-1)/n, and a
    # ring all-reduce sends 2(n-1)/n of the buffer over each GPU's outgoing link (chapter 04)
    from nvcourse.collectives import model

    n, size, t = 8, 2**30, 1e-2
    ring_bytes = model.predict("allreduce", "ring", n, size, 0.0, 1.0)  # with beta = 1 B/s, time = bytes per link
    assert math.isclose(ring_bytes, 2 * (n - 1) / n * size)
    assert math.isclose(ring_bytes / t, size / t * 2 * (n - 1) / n)
