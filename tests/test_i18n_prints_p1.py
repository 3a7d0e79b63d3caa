"""What the code cells of chapters 02, 03, 04b and 07 print speaks the learner's language: the readouts the cells
used to build themselves as f-strings (alpha-beta, the DGX-1 mesh, switch links, bisection, NCCL rings, the NVL72
trays, the rebuilt vLLM topology, NCCL's per-step latencies, the MoE dispatch and step) now come from chapter-module
functions that build each line with ``_()``, and the topology drawings' legends (node kinds, link widths, the
busiest colour, the utilisation scale) are translated too.

Each walk (tests/i18n_walks.py) runs, in a fresh interpreter, what the chapter's notebook calls and its dashboards'
renders: every ``_()`` message of the chapter module must be shown, in English its fixed parts, in French its
translation's, with no long English message left. In English the printed lines are the ones the notebooks printed
before (checked on a few, the numbers read from the models)."""

from __future__ import annotations

import pytest
from i18n_walks import speaks, walk
from test_i18n_ch04_ch04b_ch07b import _CH04B
from test_i18n_ch04_ch04b_ch07b import _FRAME as _FRAME_04B
from test_i18n_prints import CH07 as _PRINTS_CH07
from test_i18n_rest import _CH07
from test_i18n_rest import _FRAME as _FRAME_REST

_CH02 = """
from nvcourse.chapters import ch02_links as ch
out += [ch.link_table_html(), ch.alpha_beta_lines("nvlink4", links=18), ch.spec_vs_measured_html()]
board = ch.alpha_beta_dashboard()
controls(board)
for args in ((3.4, 371, 4096), (3.4, 371, 2**20), (3.4, 25, 2**28)):  # latency-bound, in between, bandwidth-bound
    live, text = board._render(*args)
    out.append(text)
    labels(live)
board = ch.link_chooser_dashboard()
controls(board)
labels(board._render(tuple(ch.PER_GPU_CHOICES), True))
try:
    board._render((), True)  # nothing chosen: the widget says what to choose
except ValueError as exc:
    out.append(str(exc))
labels(ch.plot_effective_bandwidth(list(ch.PER_GPU_CHOICES), line_rate=False))
labels(ch.plot_spec_vs_measured())
"""

_CH03 = """
from nvcourse.chapters import ch03_topology as ch
from nvcourse.topology import build_system_graph
from nvcourse.topology.draw import draw_topology
from nvcourse.topology.topo_parser import example_files, read_topo
out += [ch.mesh_lines("dgx-1-v100", gpu="V100"), ch.switch_links_line("dgx-h100"), ch.metrics_summary_html(),
        ch.bisection_lines(("dgx-1-v100", "dgx-h100", "gb200-nvl72")), ch.nvl72_line("gb200-nvl72"),
        ch.ring_lines(("dgx-1-v100", "dgx-a100", "dgx-h100", "dgx-b200"), capped="pcie-8gpu", orders="dgx-1-v100"),
        ch.codes_table_html(), ch.control("system"), ch.control("traffic"), ch.control("(unknown)")]
parsed = read_topo(example_files()["pcie-8gpu-vllm"], pcie="pcie4")
out.append(ch.rebuilt_line(parsed.graph, "PCIe Gen4 x16", system="pcie-8gpu"))
labels(draw_topology(parsed.graph, title=ch.rebuilt_title(), cpu_label=ch.CPU_LABEL))
for sid in ("dgx-1-v100", "dgx-h100", "gb200-nvl72"):
    labels(draw_topology(build_system_graph(sid)))
labels(draw_topology(build_system_graph("dgx-h100"), pattern="all-to-all"))
for sid in ("dgx-1-v100", "pcie-8gpu", "gb200-nvl72", "dgx-h100"):
    for pattern in ("all-to-all", "ring", "one-to-all"):
        fig, text = ch.render_system(sid, pattern)
        out.append(text)
        labels(fig)
for name in example_files():
    for nvlink, pcie in (("nvlink4", "pcie5"), ("", "")):  # no generation picked: the readout asks for one
        fig, text = ch.render_pasted(ch.example_text(name), nvlink, pcie)
        out.append(text)
        labels(fig)
out.append(ch.render_pasted("GPU0 GPU1\\nGPU0 X PIX\\nGPU1 PIX X\\n", "", "")[1])  # a pasted PCIe pair, no generation
"""

_CH04B_PRINTS = """
out.append(ch.hw_latency_lines())
"""

_CH07_PRINTS = """
from nvcourse.chapters import ch07_training as ch
out += [ch.moe_dispatch_lines(tokens=4096, hidden=7168, top_k=8),
        ch.moe_step_lines(gpus=64, system="dgx-h100", experts=8, top_k=2, active_params=13e9)]
"""

_CH02_PATHS = ("nvcourse/chapters/ch02_links.py",)
_CH03_PATHS = ("nvcourse/chapters/ch03_topology.py", "nvcourse/topology/draw.py")


@pytest.mark.parametrize("language", ["en", "fr"])
def test_ch02_prints_tables_and_dashboards_speak_the_language(language):
    shown = walk(_FRAME_04B, _CH02, language)
    speaks(shown, language, _CH02_PATHS, least=30)
    if language == "fr":
        assert "bêta = 371\u00a0GB/s par sens" in shown and "effective" in shown
        assert "per direction" not in shown.split("n_1/2")[0]
    else:
        assert "alpha = 3.4 µs, beta = 371 GB/s per direction\nn_1/2 = alpha x beta = 1.2 MiB\n" in shown
        assert "   4 KiB: t =   3.41 µs, effective   1.2 GB/s" in shown


@pytest.mark.parametrize("language", ["en", "fr"])
def test_ch03_prints_readouts_and_drawings_speak_the_language(language):
    shown = walk(_FRAME_04B, _CH03, language)
    speaks(shown, language, _CH03_PATHS, least=60)
    if language == "fr":
        assert "liaisons par V100\u00a0: 6" in shown and "plateaux de calcul" in shown and "puce NVSwitch" in shown
        assert "anneaux" in shown and "bissection" in shown and "(inconnue)" in shown
        assert "rings x" not in shown and "both directions" not in shown and "switch trays" not in shown
        assert "13,78" in shown  # section 2's table in French numbers
    else:
        assert "links per V100: 6, each 25 GB/s per direction\nGPU pairs: 28, with NVLink: 16, without: 12" in shown
        assert "dgx-h100    18 rings x 25 GB/s =   450 GB/s per direction; x efficiency 0.824 ->  370.8 GB/s" in shown
        assert "pcie-8gpu   ring capped by the CPU-to-CPU link: 16 GB/s" in shown
        assert "72 GPUs in trays of 4; 18 switch chips in 9 trays; 18 links per GPU, one to each chip" in shown


@pytest.mark.parametrize("language", ["en", "fr"])
def test_ch04b_prints_speak_the_language(language):
    shown = walk(_FRAME_04B, _CH04B + _CH04B_PRINTS, language)
    # as in test_i18n_ch04_ch04b_ch07b: 8 B is latency-bound on every system the dashboard offers, 1 GiB
    # bandwidth-bound, so those words never show
    never = frozenset({"no size is latency-bound here", "latency-bound"})
    speaks(shown, language, ("nvcourse/chapters/ch04b_predicting.py",), never, least=40)
    if language == "fr":
        assert "latence de base par appel, ring\u00a0: [6,6\u00a0; 14,0\u00a0; 8,4]\u00a0µs" in shown
        assert "classe de liaison" in shown and "base latency per call" not in shown
    else:
        assert "link class algorithm       LL    LL128   Simple   (µs per step)" in shown
        assert "base latency per call, ring: [6.6, 14.0, 8.4] µs" in shown


@pytest.mark.parametrize("language", ["en", "fr"])
def test_ch07_prints_speak_the_language(language):
    shown = walk(_FRAME_REST, _CH07 + _PRINTS_CH07 + _CH07_PRINTS, language)
    # as in test_i18n_rest: no input of exposed_dp_time reaches these two mistakes
    whole_step = frozenset({"Not the whole step: gradients are final only during the backward pass of the last "
                            "micro-batch (compute / m), the earlier micro-batches only accumulate.",
                            "Divide by the micro-batches: only the last one's backward overlaps (compute / m × 4/6)."})
    speaks(shown, language, ("nvcourse/checks/ch07.py", "nvcourse/chapters/ch07_training.py"), whole_step, least=70)
    if language == "fr":
        assert "EP 8 dans un DGX H100\u00a0: 1,15\u00a0ms" in shown and "comm. EP" in shown
        assert "one dispatch" not in shown and "in one DGX H100" not in shown and "across 8 nodes" not in shown
    else:
        assert "one dispatch: 470 MB per GPU\n                  EP 8 in one DGX H100: 1.15 ms" in shown
        assert "EP 8 in one node (tp 1, pp 4): step 10.3 s = compute 9.4 s, pipeline bubble 441 ms" in shown


def test_the_english_readouts_are_the_ones_the_cells_printed(monkeypatch):
    """English stays byte-identical: the numbers read from the models, laid out as the cells' f-strings did."""
    monkeypatch.setenv("NVCOURSE_LANG", "en")
    from nvcourse import catalog, training
    from nvcourse.chapters import ch03_topology as ch03
    from nvcourse.chapters import ch07_training as ch07
    from nvcourse.topology import bisection_bandwidth, build_system_graph
    from nvcourse.units import format_time

    b = bisection_bandwidth(build_system_graph("dgx-h100"))
    assert (f"dgx-h100     bisection {b.GBps_dir:8.5g} GB/s per direction = {b.GBps_bidir:8.5g} GB/s both "
            f"directions  ({b.method}; one worst split: GPU0, GPU1, GPU2, GPU3)") in ch03.bisection_lines(("dgx-h100",))
    s = catalog.get_system("dgx-h100")
    assert ch03.switch_links_line("dgx-h100") == (
        f"{s.name}: links per GPU to each switch chip {list(s.switch_links_per_gpu)}, {s.link.line_GBps_dir:g} GB/s "
        f"per link per direction -> {s.scaleup_GBps_dir:g} GB/s per GPU per direction")
    nbytes = training.moe_alltoall_bytes(tokens=4096, hidden=7168, top_k=8)
    t = format_time(training.collective_time("alltoall", "gb200-nvl72", training.Placement(64, 64, 1), nbytes))
    assert f"{'EP 64 in one NVL72 rack':>38}: {t}" in ch07.moe_dispatch_lines().splitlines()
