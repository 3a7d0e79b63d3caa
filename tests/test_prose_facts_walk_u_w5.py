"""Guards for the fixes after a fresh learner's walk of chapters 02, 03 and 07 (walkthrough U, W5): honest regime
labels in 02's α-β readout, 03's §4 answered in one list, its paste readout and footnotes, and 07's DualPipe,
TP limit, table and prices."""

import json
import re
from pathlib import Path

import pytest
from test_prose_facts_core import outputs, prose

from nvcourse import catalog, linkmodel, training
from nvcourse.topology import build_system_graph, gpu_nodes, metrics, nccl_rings

ROOT = Path(__file__).resolve().parents[1]
CH02 = "02_pcie_vs_nvlink.ipynb"
CH03 = "03_topologies_and_nvswitch.ipynb"
CH07 = "07_training_at_scale.ipynb"


def _cells(notebook: str) -> dict[str, str]:
    nb = json.loads((ROOT / "notebooks" / notebook).read_text(encoding="utf-8"))
    return {c["id"]: re.sub(r"\s+", " ", "".join(c["source"])) for c in nb["cells"] if c["cell_type"] == "markdown"}


def _section(notebook: str, number: str) -> str:
    text = prose(notebook)
    start = text.index(f"## {number}. ")
    return text[start:text.index("## ", start + 3)]


# ---------------------------------------------------------------------------------------------------- 02
def test_02_readout_labels_follow_the_thresholds_the_text_states_over_the_dashboards_range():
    from nvcourse.chapters import ch02_links as ch

    assert ch.REGIME_FACTOR == 4
    assert ("The dashboard below calls a message latency-bound under $n_{1/2}/4$, bandwidth-bound over "
            "$4\\,n_{1/2}$, in between otherwise.") in prose(CH02)
    lo, hi = ch.BETA_GRID["minimum"], ch.BETA_GRID["maximum"]
    for alpha_us in (0.1, 1.0, 3.4, 14.0, 100.0):
        for beta in (lo, 25.0, 371.0, hi):
            p = linkmodel.LinkParams(alpha_s=alpha_us * 1e-6, beta_Bps=beta * 1e9)
            for exp in range(0, 35):  # the size slider: 1 B .. 16 GiB
                share = p.bandwidth(2**exp) / p.beta_Bps
                want = "latency" if share < 0.2 else "bandwidth" if share > 0.8 else "between"
                assert ch.regime_of(2**exp, p.half_bandwidth_bytes) == want, (alpha_us, beta, exp)
    # the learner's case: 64 KiB at 25 GB/s reaches 44 % of β and is no longer called latency-bound
    view = ch._AlphaBetaView()
    _, text = view(3.4, 25.0, 64 * 2**10)
    assert "44 % of β" in text and "in between" in text and "latency-bound" not in text
    assert "latency-bound" in view(3.4, 371.0, 4 * 2**10)[1] and "bandwidth-bound" in view(3.4, 371.0, 2**30)[1]


def test_02_core_states_what_the_key_points_rely_on():
    from nvcourse.chapters import ch02_links as ch

    params = {label: ch._curve(label).params for label in ch.PER_GPU_CHOICES}
    smallest = min(p.half_bandwidth_bytes for p in params.values())
    assert f"Every n½ on §3's plot is at least ~{round(smallest / 2**10, -1):.0f} KiB, so a few KiB is latency-bound " \
           "on all of them: links then differ by α." in _cells(CH02)["c009"]
    assert all(ch.regime_of(4 * 2**10, p.half_bandwidth_bytes) == "latency" for p in params.values())
    assert "## 3." not in _section(CH02, "2")  # c009 sits in §2, the core


def test_02_section_3_point_two_is_split_and_honest():
    from nvcourse.chapters import ch02_links as ch

    c = _cells(CH02)["c013"]
    assert "Four things to read off the first plot" in c and re.search(r"\b4\. \*\*The network is the slowest", c)
    assert "every link is latency-bound" not in c
    assert "**Below ~150 KiB α is the larger term on every link**" in c
    assert "the network links, with the largest α, sit lowest (§5)" in c
    params = {label: ch._curve(label).params for label in ch.PER_GPU_CHOICES}
    net = [p.alpha_s for k, p in params.items() if "NIC" in k]
    assert min(net) > max(p.alpha_s for k, p in params.items() if "NIC" not in k)


def test_02_check_yourself_asks_for_the_line_rate():
    text = prose(CH02)
    assert "How many bytes per second can one B200 send" not in text
    assert "What is one B200's NVLink line rate per direction, to all its peers together?" in text
    b200 = catalog.get_gpu("b200")
    assert b200.nvlink_links * catalog.get_link(b200.nvlink).line_GBps_dir == 900
    assert "900 GB/s per direction (18 links × 50 GB/s)" in text


# ---------------------------------------------------------------------------------------------------- 03
def test_03_section_4_answers_in_one_list_with_one_pointer_and_counts_ring_orders():
    sec4 = _section(CH03, "4")
    rings = nccl_rings(build_system_graph("dgx-1-v100"))
    assert rings.n_rings == 2 * len(rings.rings)
    assert (f"the printout lists {len(rings.rings)} ring orders, each run both ways = {rings.n_rings} rings"
            in sec4)
    assert sec4.count("§8") == 1 and "; fine print in §8." in sec4
    assert len(re.findall(r"^\*\*[^*]+\.\*\*", sec4)) == 0 and sec4.count("\n- ") == 0  # prose() joins lines
    assert sec4.count(" - **") == 3
    assert (f"{len(rings.rings)} ring orders, each run both ways = {rings.n_rings} rings:"
            in outputs(ROOT / "notebooks" / CH03))
    assert (f"NCCL runs {rings.n_rings} rings side by side ({len(rings.rings)} ring orders, each run both ways)"
            in prose(CH03))


def test_03_section_2_recalls_the_dgx1_and_defines_a_hop():
    sec2 = _section(CH03, "2")
    assert ("Its DGX-1 is §1's server: eight V100s wired to each other with no switch, so some GPU pairs have no "
            "NVLink and relay through a neighbour.") in sec2
    dgx1 = build_system_graph("dgx-1-v100")
    gpus = gpu_nodes(dgx1)
    assert len(gpus) == 8 and not catalog.get_system("dgx-1-v100").nvswitch_count
    assert any(not dgx1.has_edge(a, b) for i, a in enumerate(gpus) for b in gpus[i + 1:])
    assert ("**max hops** counts the links on the longest GPU-to-GPU path: 2 (GPU → switch → GPU) on every switched "
            "system") in sec2
    for sid, s in catalog.systems().items():
        if s.nvswitch_count:
            assert metrics.hop_stats(build_system_graph(sid))["max"] == 2, sid
    import networkx as nx

    pcie = build_system_graph("pcie-8gpu")
    g = gpu_nodes(pcie)
    longest = max((nx.shortest_path(pcie, a, b) for a in g for b in g if a != b), key=len)
    assert len(longest) - 1 == metrics.hop_stats(pcie)["max"] > 2
    kinds = [pcie.nodes[n].get("kind") for n in longest]
    assert kinds.count("cpu") == 2  # climbs to one CPU, crosses to the other socket's


def test_03_table_footnotes_are_short_and_keep_the_pcie_figures():
    from nvcourse.chapters import ch03_topology as ch

    html_ = ch.metrics_summary_html()
    short = html_.split("<details>")[0]
    note = re.search(r"<div>(.*?)</div>", short).group(1)
    cap = ch.socket_cap_GBps("pcie-8gpu")
    capped = ch.socket_capped_rate("pcie-8gpu", "all-to-all")
    assert (f"8-GPU PCIe server: all-to-all {capped:.3g} GB/s at NCCL&#x27;s {cap:g} GB/s for the CPU-to-CPU link "
            "(drawn unbounded, §5).") in note
    assert len(note.split()) <= 40
    caption = re.search(r"<caption[^>]*>(.*?)</caption>", ch.metrics_table_html(), re.S)
    assert caption is None or len(caption.group(1).split()) <= 45


def test_03_paste_readout_defines_gpudirect_rdma_and_names_the_missing_menu():
    from nvcourse.chapters import ch03_topology as ch

    _, far = ch.render_pasted(ch.example_text("a10-4gpu-sys-2nic"), "nvlink4", "pcie4")
    assert "GPUDirect RDMA (the NIC reading and writing GPU memory directly) from them is slow or off" in far
    pcie_only = ch.example_text("pcie-8gpu-vllm")
    for nv in ("", "nvlink4"):
        _, text = ch.render_pasted(pcie_only, nv, "")
        assert "pick a PCIe generation in the menu above" in text and "NVLink generation" not in text
    _, text = ch.render_pasted(ch.example_text("hgx-h20-nvswitch"), "", "pcie5")
    assert "pick an NVLink generation in the menu above" in text and "PCIe generation" not in text


# ---------------------------------------------------------------------------------------------------- 07
_EXPLAINS_DUALPIPE = "pairs one micro-batch's forward pass with another's backward pass"


def test_no_chapter_points_to_another_for_dualpipe_unless_that_chapter_explains_it():
    texts = {p.name.split("_")[0]: prose(p.name) for p in sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))}
    assert _EXPLAINS_DUALPIPE in texts["07"] and "arxiv.org/abs/2412.19437" in texts["07"]
    pointers = 0
    for chapter, text in texts.items():
        for sentence in re.split(r"(?<=[.!?]) ", text):
            if "DualPipe" not in sentence:
                continue
            for target in re.findall(r"DualPipe[^.]*?\(chapter (\w+)", sentence):
                pointers += 1
                assert target in texts and "DualPipe" in texts[target], (chapter, target)
                assert _EXPLAINS_DUALPIPE in texts[target], (chapter, target)
    assert "(chapter 07b §7)" not in _cells(CH07)["c012"]
    assert pointers >= 1  # 07b's pointer to 07 is checked, not skipped


def test_07_section_2_table_is_short_and_defines_v_before_using_it():
    sec2 = _section(CH07, "2")
    tp_row = next(line for line in "".join(
        json.loads((ROOT / "notebooks" / CH07).read_text(encoding="utf-8"))["cells"][4]["source"]).splitlines()
        if line.startswith("| **TP**"))
    assert len(tp_row.split()) <= 45 and "glossary" not in tp_row
    assert "The TP row's 4 all-reduces are 2 forward and 2 backward." in sec2
    assert "[Sequence parallelism](../docs/glossary.md#sequence-parallel)" in sec2
    first_v = sec2.index("$v")
    assert sec2.index("holds $v$ separate chunks") == first_v - len("holds ") < sec2.index("| part |")
    assert first_v < sec2.index("(**virtual stages**)") < first_v + 60  # the definition is the same sentence


def test_07_tp_limit_is_stated_once_with_its_reason():
    text = prose(CH07)
    assert "up to 72" not in text
    assert text.count("64 on an NVL72 rack") == 1
    assert ("8 GPUs on a DGX or PCIe server, 64 on an NVL72 rack (the largest power of two within its 72 GPUs)"
            in text)
    from nvcourse.training.step import _pow2_upto, node_size

    assert node_size("gb200-nvl72") == 72 and max(_pow2_upto(node_size("gb200-nvl72"))) == 64
    assert node_size("dgx-h100") == node_size("pcie-8gpu") == 8
    best = training.best_config("llama3-405b", "gb200-nvl72", 1024)
    assert best is None or best.tp <= 64


@pytest.mark.parametrize("system", ["pcie-8gpu", "dgx-h100", "gb200-nvl72"])
def test_07_price_table_shows_the_price_that_reproduces_the_dashboards_cost(system):
    from nvcourse.chapters import ch07_training as ch

    stored = training.system_costs(system)["usd_per_gpu_hour"]
    shown = ch.price_text(stored)
    assert float(shown) == stored
    assert f"&#36;{shown}<" in ch.price_table_html([system])  # the table escapes "$"
    _, typed = ch._render(1024, "llama3-70b", system, 8, 4, "tp-first", 0.55, 15.6, float(shown))
    _, default = ch._render(1024, "llama3-70b", system, 8, 4, "tp-first", 0.55, 15.6, 0.0)
    assert typed == default
    plt_close()


def plt_close() -> None:
    import matplotlib.pyplot as plt

    plt.close("all")
