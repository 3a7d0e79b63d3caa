"""Chapter 05's ring vs in-switch (NVLS) figure and its printed lines come from the cost model."""
import matplotlib.pyplot as plt
import pytest
from figure_audit import figure_problems

from nvcourse import catalog
from nvcourse.chapters.ch05_nvl72 import NVLS_SIZES, ring_vs_nvls_figure
from nvcourse.costmodel import factors, predict
from nvcourse.fabric.moe import domain_allreduce_time
from nvcourse.units import format_time


def test_ring_vs_nvls_figure_draws_the_model_and_prints_its_numbers():
    fig, text = ring_vs_nvls_figure()
    try:
        ax = fig.axes[0]
        assert [line.get_label() for line in ax.lines] == [
            "ring (NCCL's best protocol), 8 GPUs",
            "in-switch (NVLS), 8 GPUs",
            "ring (NCCL's best protocol), 72 GPUs",
            "in-switch (NVLS), 72 GPUs",
            "ring, 72 GPUs, Simple α only (the formula above)",
        ]
        assert [t.get_text() for t in ax.get_legend().get_texts()] == [line.get_label() for line in ax.lines]
        assert ax.get_xlabel() == "bytes per GPU" and ax.get_ylabel() == "all-reduce time (NVL72)"
        nvls72 = ax.lines[3]
        assert list(nvls72.get_xdata()) == list(NVLS_SIZES)
        assert list(nvls72.get_ydata()) == pytest.approx(
            [predict("allreduce", "gb200-nvl72", 72, n, algo="nvls").time_s for n in NVLS_SIZES]
        )
        assert list(ax.lines[4].get_ydata()) == pytest.approx(
            [domain_allreduce_time("gb200-nvl72", n, 72) for n in NVLS_SIZES]
        )
        assert figure_problems(fig) == []
    finally:
        plt.close(fig)

    lines = text.splitlines()
    assert len(lines) == 7
    # which source each nvls_min_gpus has (catalog src): NVL72/B200 an assumption from AWS's tuner, H100 nccl#1455
    src = {sid: catalog.get_system(sid).src["nvls_min_gpus"] for sid in ("gb200-nvl72", "dgx-b200", "dgx-h100")}
    assert src["dgx-h100"] == "nccl-1455"
    for sid in ("gb200-nvl72", "dgx-b200"):
        assert src[sid].startswith("assumption:") and "AWS" in src[sid] and "tuner plugin" in src[sid]
    # learner words: the estimates and where NCCL itself stands; the sources stay in the catalog's data
    assert lines[1] == (
        f"On an NVL72 or a B200, where the Simple-only formula says NVLS starts to pay: "
        f"{catalog.get_system('gb200-nvl72').nvls_min_gpus} GPUs; on an H100: "
        f"{catalog.get_system('dgx-h100').nvls_min_gpus}"
        " (the course's estimates, from published runs; NCCL itself enables NVLS from 2)"
    )
    assert "nccl#" not in text and "used only by" not in text
    lines = lines[:1] + lines[2:]
    assert lines[0] == (
        f"NVLS latency α_NVLS = {factors.NVLS_LATENCY_US:.0f} µs; η = {factors.NVLS_EFFICIENCY['hopper']} "
        f"(Hopper), {factors.NVLS_EFFICIENCY['blackwell']} (Blackwell)"
    )
    assert "2(g-1)/(g+1) = 1.95" in lines[2] and "ring latencies 2(g-1) = 142" in lines[2]
    ring, insw = (predict("allreduce", "gb200-nvl72", 72, 2**30, algo=a) for a in ("ring", "nvls"))  # NCCL's model
    assert (
        lines[3] == f"1 GiB over 72 GPUs (NCCL's model): ring/{ring.proto} {format_time(ring.time_s)}, in-switch "
        f"(NVLS) {format_time(insw.time_s)}: {ring.time_s / insw.time_s:.2f}x"
    )
    r72, v72 = (predict("allreduce", "gb200-nvl72", 72, 256 * 2**10, algo=a) for a in ("ring", "nvls"))
    assert lines[4].startswith(
        f"256 KiB over 72 GPUs: ring/{r72.proto} {format_time(r72.time_s)}, "
        f"NVLS {format_time(v72.time_s)}: {r72.time_s / v72.time_s:.1f}x"
    )
    assert r72.time_s > v72.time_s  # at 72 GPUs the single NVLS step wins small buffers...
    r8, v8 = (predict("allreduce", "gb200-nvl72", 8, 256 * 2**10, algo=a) for a in ("ring", "nvls"))
    assert lines[5] == f"256 KiB over 8 GPUs: ring/{r8.proto} {format_time(r8.time_s)}, NVLS {format_time(v8.time_s)}"
    assert r8.time_s < v8.time_s  # ...on 8 the LL ring beats NVLS's fixed cost, as the chapter says
