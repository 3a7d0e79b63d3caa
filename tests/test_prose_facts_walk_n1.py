"""Chapters 01, 02 and 05, after a fresh learner's walkthrough: each sentence it found wrong or too general now
holds in every state its dashboard or model allows, and the test rebuilds the figure from the model or the data.

Markdown cannot compute: the sentence must appear in the chapter as written (line breaks read as spaces).
"""

import pytest
from test_prose_facts_core import _ch01_state, prose

from nvcourse import catalog
from nvcourse.costmodel import predict, tuning


def test_01_tp_shards_activations_and_pp_does_not():
    # 01 §2: "which ZeRO does not shard. - TP shards the activations, PP does not: its first stage holds several
    # micro-batches."
    text = prose("01_why_one_gpu_is_not_enough.ipynb")
    assert ("which ZeRO does not shard. - TP shards the activations, PP does not: its first stage holds several "
            "micro-batches.") in text
    assert "(TP and PP do)" not in text
    for tp in (1, 2, 8):
        acts = {_ch01_state(tp, pp, 1, zero)[0].activations for pp in (1, 2, 4, 16) for zero in (0, 3)}
        assert len(acts) == 1
    assert _ch01_state(8, 1, 1, 0)[0].activations == pytest.approx(_ch01_state(1, 1, 1, 0)[0].activations / 8)


def test_02_key_point_efficiencies_are_the_catalogs():
    # "0.88 for PCIe copies, 0.94–0.98 for NICs": the §1 table's efficiency column, per link family
    text = prose("02_pcie_vs_nvlink.ipynb")
    assert ("(≈ 0.8 for NVLink 2–5 in NCCL, 0.9 for the P100's NVLink 1, 0.88 for PCIe copies, 0.94–0.98 for "
            "NICs)") in text
    links = catalog.links().values()
    nvlink = {lk.generation: lk.efficiency for lk in links if lk.kind == "nvlink"}
    assert nvlink[1] == 0.9 and all(abs(e - 0.8) < 0.025 for g, e in nvlink.items() if g > 1)
    assert {lk.efficiency for lk in links if lk.kind == "pcie"} == {0.88}
    nics = [lk.efficiency for lk in links if lk.kind in ("infiniband", "ethernet")]
    assert min(nics) == 0.94 and round(max(nics), 2) == 0.98


def test_05_small_buffers_on_8_gpus_say_where_nvls_starts_per_system():
    # 05 §6: the ring up to 2 MiB on 8 B200, NVLS from 3 MiB; on 8 H100 NVLS from 2 MiB on (auto, the model, which
    # chooses with NCCL's own estimate); every MiB is checked in test_prose_facts_walk_r3.py
    text = prose("05_nvl72_rack_scale.ipynb")
    assert ("The LL ring beats NVLS's fixed cost per call. In the model the tuner keeps the ring up to 2 MiB on 8 B200 "
            "and picks NVLS from 3 MiB on (NCCL's own estimate gives NVLS the ring's bandwidth there, and a smaller "
            "latency). On 8 H100, whose NVLS runs at η = 0.85, it picks NVLS from 2 MiB on (chapter 04b). The H100 "
            "picks match the tables NCCL prints on H100 and H200 nodes; no printed B200 table has checked the B200 "
            "ones yet.") in text
    assert "keeps the ring on 8 GPUs and switches to NVLS only for large buffers" not in text
    b200 = {k: predict("allreduce", "dgx-b200", 8, 2**k).algo for k in range(3, 32)}
    assert all(a == "ring" for k, a in b200.items() if k <= 21) and all(a == "nvls" for k, a in b200.items() if k >= 22)
    h100 = {k: predict("allreduce", "dgx-h100", 8, 2**k).algo for k in range(3, 32)}
    assert all(a == "ring" for k, a in h100.items() if k < 21) and all(a == "nvls" for k, a in h100.items() if k >= 21)
    assert tuning.nvls_efficiency("hopper") == 0.85 and tuning.nvls_efficiency("blackwell") == 0.74
    # "the ring's bandwidth": NCCL's table on 8 B200 rates NVLS and the ring alike (nccl_table, 16 x 45 and 8 x 80)
    from nvcourse.costmodel import nccl_table
    from nvcourse.costmodel.config import configure

    c = configure("dgx-b200", 8)
    assert nccl_table.algbw_GBps("allreduce", "nvls", "Simple", c) == pytest.approx(
        nccl_table.algbw_GBps("allreduce", "ring", "Simple", c))


def test_05_large_buffer_table_rows_are_the_models():
    from nvcourse.chapters import ch05_nvl72 as ch

    g, eta = 72, tuning.nvls_efficiency("blackwell")
    byte_ratio = 2 * (g - 1) / g / ((g + 1) / g)
    text = prose("05_nvl72_rack_scale.ipynb")
    assert f"| bytes each GPU moves | {byte_ratio:.2f}× |" in text
    assert f"| bandwidth term (η = {eta} on Blackwell) | {byte_ratio * eta:.2f}× |" in text
    assert f"| 1 GiB all-reduce, NCCL's model | {ch.nvls_vs_ring(2**30, 72)[2]:.2f}× |" in text
    assert "nvlsEfficiency" not in text and "llMaxBw" not in text


# 04b walkthrough fixes


def test_06_scaling_efficiency_is_defined_as_the_readout_computes_it():
    # 06 §6 "What you see": "scaling efficiency: bus bandwidth ÷ its 2-node value"
    import re

    import matplotlib.pyplot as plt

    from nvcourse.chapters.ch06_fabrics import allreduce_view

    text = prose("06_multinode_fabrics.ipynb")
    assert "A table (scaling efficiency: bus bandwidth ÷ its 2-node value);" in text
    for nodes, nic, placement, algorithm in ((128, "ib-ndr", "random", "tree"), (16, "roce-400g", "packed", "ring"),
                                             (2, "ib-ndr", "packed", "hierarchical")):
        routing = "dmodk" if nic.startswith("ib") else "ecmp"
        fig, html = allreduce_view(nodes, nic, 1.0, routing, placement, algorithm)
        _fig2, html2 = allreduce_view(2, nic, 1.0, routing, placement, algorithm)
        plt.close("all")
        html, html2 = (re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", h)) for h in (html, html2))  # the table's rows
        busbw = float(re.search(r"bus bandwidth ([\d.]+) GB/s", html).group(1))
        base = float(re.search(r"bus bandwidth ([\d.]+) GB/s", html2).group(1))
        shown = int(re.search(r"scaling efficiency vs 2 nodes (\d+)\s*%", html).group(1))
        assert shown == pytest.approx(100 * busbw / base, abs=1.5), (nodes, nic, placement, algorithm)
    # the words 06 §1-2 define where they are first used
    assert "a subnet manager (it computes the routes, §3)" in text
    assert "A **leaf** switch gives half its ports to nodes and half to the **spine** switches above it" in text
