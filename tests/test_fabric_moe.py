"""The MoE all-to-all model and in-domain all-reduce, on hand-worked values."""

import pytest

from nvcourse import costmodel
from nvcourse.fabric.moe import (
    MoEConfig,
    alltoall_bytes_per_gpu,
    domain_allreduce_time,
    moe_alltoall_time,
    moe_layer_time,
)

# A DeepSeek-V3-like layer: hidden 7168, 4096 tokens per GPU, 256 experts, top-8, BF16.
CFG = MoEConfig(hidden=7168, tokens=4096, experts=256, top_k=8, bytes_per_elem=2, moe_layers=58)
ROUTED = 4096 * 8 * 7168 * 2  # = 469,762,048 bytes of token copies per GPU per dispatch


def test_bytes_per_gpu():
    assert CFG.routed_bytes == ROUTED == 469_762_048
    # EP = 64: 63/64 of the copies leave the GPU
    assert alltoall_bytes_per_gpu(CFG, 64) == pytest.approx(ROUTED * 63 / 64)
    assert alltoall_bytes_per_gpu(CFG, 1) == 0


def test_eight_gpu_domain_plus_infiniband():
    # DGX B200, EP = 64 over 8 nodes: 7/64 of the copies stay on NVLink, 56/64 cross the NIC.
    # NVLink: 18 x 50 GB/s x 0.802 = 721.8 GB/s; NIC: 8 x 50 GB/s / 8 GPUs x 0.94 = 47 GB/s.
    # network: 469,762,048 x 56/64 = 411,041,792 B / 47e9 = 8.7456 ms; NVLink: 51,380,224 / 721.8e9 = 71.2 us.
    # t = 2 x 14 us (NCCL's rendezvous: the clear-to-send crosses first) + 8.7456 ms = 8.7736 ms
    t = moe_alltoall_time(CFG, 64, "dgx-b200")
    assert t.network_bytes == 411_041_792
    assert t.nvlink_bytes == 51_380_224
    assert t.network_s == pytest.approx(411_041_792 / 47e9)
    assert t.nvlink_s == pytest.approx(51_380_224 / 721.8e9)
    assert t.time_s == pytest.approx(8.7736e-3, rel=1e-4)
    assert t.bottleneck == "network"


def test_nvl72_domain():
    # GB200 NVL72, EP = 64 inside the domain: 63/64 x 469,762,048 = 462,422,016 B over NVLink at 721.8 GB/s
    # = 640.7 us, + 3.4 us = 644.1 us: 13.6x faster than 8 GPUs + InfiniBand.
    t = moe_alltoall_time(CFG, 64, "gb200-nvl72")
    assert t.network_bytes == 0 and t.nvlink_bytes == 462_422_016
    assert t.time_s == pytest.approx(644.1e-6, rel=1e-3)
    assert moe_alltoall_time(CFG, 64, "dgx-b200").time_s / t.time_s == pytest.approx(13.6, rel=0.01)


def test_per_layer_and_per_step():
    r = moe_layer_time(CFG, 64, "gb200-nvl72")
    one = moe_alltoall_time(CFG, 64, "gb200-nvl72").time_s
    assert r["per_layer_s"] == pytest.approx(4 * one)  # dispatch + combine, forward and backward
    assert r["per_step_s"] == pytest.approx(58 * 4 * one)
    assert moe_layer_time(CFG, 64, "gb200-nvl72", backward=False)["per_layer_s"] == pytest.approx(2 * one)


def test_ep_inside_one_node_never_touches_the_network():
    t = moe_alltoall_time(CFG, 8, "dgx-b200")
    assert t.network_bytes == 0 and t.alpha_s == pytest.approx(3.4e-6)


def test_domain_allreduce_by_hand():
    # 8 GPUs, 64 MiB, DGX H100: ring 14 x 3.4 us + 2 x 7/8 x 67,108,864 B / (18 x 25 x 0.824 = 370.8 GB/s)
    n = 64 * 2**20
    assert domain_allreduce_time("dgx-h100", n, 8) == pytest.approx(14 * 3.4e-6 + 1.75 * n / 370.8e9)
    # NVLink SHARP as NCCL models NVLS (the cost model): one 25 us step, n(g+1)/g bytes at 370.8 GB/s x 0.85 (Hopper)
    assert domain_allreduce_time("dgx-h100", n, 8, in_switch=True) == pytest.approx(
        25e-6 + 9 / 8 * n / (370.8e9 * 0.85))
    with pytest.raises(ValueError, match="in-switch"):
        domain_allreduce_time("dgx-a100", n, 8, in_switch=True)
    with pytest.raises(ValueError, match="domain"):
        domain_allreduce_time("dgx-h100", n, 16)


@pytest.mark.parametrize(
    "kwargs, word",
    [
        (dict(hidden=0, tokens=1, experts=8, top_k=2), "hidden"),
        (dict(hidden=8, tokens=1, experts=8, top_k=9), "top_k"),
        (dict(hidden=8, tokens=1, experts=8, top_k=2, bytes_per_elem=0), "bytes_per_elem"),
    ],
)
def test_bad_config(kwargs, word):
    with pytest.raises(ValueError, match=word):
        MoEConfig(**kwargs)


def test_ep_larger_than_experts_is_rejected():
    with pytest.raises(ValueError, match="ep"):
        moe_alltoall_time(MoEConfig(hidden=8, tokens=1, experts=8, top_k=2), 16, "gb200-nvl72")


@pytest.mark.parametrize("system, g", [("dgx-h100", 8), ("dgx-b200", 8), ("gb200-nvl72", 16), ("gb200-nvl72", 72)])
@pytest.mark.parametrize("n", [2**16, 2**26, 2**30])
def test_domain_allreduce_is_the_cost_model(system, g, n):
    # one formula in the course: the in-domain all-reduce is costmodel's ring / NVLS, not a copy of it
    cfg = costmodel.configure(system, g)
    assert domain_allreduce_time(system, n, g) == costmodel.cost("allreduce", "ring", cfg).time(n)
    assert domain_allreduce_time(system, n, g, in_switch=True) == costmodel.cost("allreduce", "nvls", cfg).time(n)


def test_domain_allreduce_in_switch_needs_nvls_min_gpus():
    # the catalog's nvls_min_gpus (6 on NVL72, the course's estimate of where NVLS pays): the error names it
    with pytest.raises(ValueError, match="nvls_min_gpus"):
        domain_allreduce_time("gb200-nvl72", 2**20, 2, in_switch=True)
    assert domain_allreduce_time("gb200-nvl72", 2**20, 2) > 0  # the ring still runs
    assert domain_allreduce_time("gb200-nvl72", 2**20, 1, in_switch=True) == 0.0


def test_chapter05_dashboard_bars_and_readout_show_the_model():
    # moe_view: per layer = 4 all-to-alls, per step = per layer x MoE layers; the configuration heads the readout
    # (not a figure title: text is the slow part of a redraw). 8.7736 ms per dispatch on DGX B200 (see above).
    from nvcourse.chapters.ch05_nvl72 import moe_view

    fig, html = moe_view(7168, 4096, 256, 8, ep=64, moe_layers=58)
    ax_layer, ax_step = fig.axes
    b200, nvl72 = (moe_alltoall_time(CFG, 64, s).time_s for s in ("dgx-b200", "gb200-nvl72"))
    assert [p.get_height() for p in ax_layer.patches] == pytest.approx([4 * b200 * 1e3, 4 * nvl72 * 1e3])
    assert [p.get_height() for p in ax_step.patches] == pytest.approx([4 * b200 * 58, 4 * nvl72 * 58])
    assert ax_layer.patches[0].get_height() == pytest.approx(4 * 8.7736, rel=1e-4)
    assert fig.get_suptitle() == "" and "EP = 64 GPUs" in html and "58 MoE layers" in html
    assert f"{b200 / nvl72:.1f}×" in html
    # EP above the expert count is capped to the experts (16 experts: EP 16)
    _, html16 = moe_view(7168, 4096, 16, 2, ep=64)
    assert "EP = 16 GPUs" in html16
    assert "the slider's 64, capped at the number of experts" in html16  # says why the readout is not the slider's
    assert "capped" not in html


def test_05_alpha_sentence_holds_for_every_ep_and_system_of_the_dashboard():
    """05 §4 says α is "one NVLink latency, or two network latencies once bytes leave the domain": read the count
    from the text and check it against the model for every EP the dashboard offers, on both systems it compares."""
    import re

    from test_prose_facts_core import prose

    from nvcourse import catalog
    from nvcourse.chapters import ch05_nvl72 as ch05
    from nvcourse.costmodel import p2p

    words = {"one": 1, "two": 2, "three": 3}
    said = re.search(r"with α one NVLink latency, or (\w+) network latencies once bytes leave the domain",
                     prose("05_nvl72_rack_scale.ipynb"))
    assert said, "05 §4 no longer says what α is"
    crossings = words[said.group(1)]
    for system in ("dgx-b200", "gb200-nvl72"):
        s = catalog.get_system(system)
        assert p2p.crossings_over(s.nic.id) == crossings  # a catalog NIC: NCCL's own transport
        for ep in ch05.MOE_CONTROLS["ep"][0]:
            t = moe_alltoall_time(CFG, ep, system)
            want = crossings * s.nic.alpha_s if t.network_bytes > 0 else s.link.alpha_s
            assert t.alpha_s == pytest.approx(want), (system, ep)
