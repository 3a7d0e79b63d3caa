"""Guards for the sentences and readouts fixed after fresh-learner walkthrough T1 (chapters 01-03)."""

import re

import matplotlib.pyplot as plt
import pytest
from test_prose_facts_core import prose

from nvcourse import catalog, training

CH01 = "01_why_one_gpu_is_not_enough.ipynb"
_VERDICT = re.compile(r"<b>([\d.]+) (GB|TB)</b> per GPU of ([\d.]+) GB \(([\d.]+) GB usable\) — "
                      r"<b style='color:#\w+'>(fits|does not fit)</b>")


# ------------------------------------------------------------------------------------------------ 01
@pytest.mark.parametrize("setting", [
    ("llama3-8b", "h100", 1, 1, 4, 1),  # 74.3 GB: between the usable 72 GB and the 80 GB of HBM
    ("llama3-8b", "h100", 2, 1, 1, 0),  # 73.1 GB, the same band
    ("llama3-70b", "h100", 8, 1, 8, 1),  # the default: fits
    ("llama3-70b", "h100", 1, 1, 64, 3),  # 109 GB: does not fit
    ("llama3-70b", "h200", 8, 1, 8, 1),
    ("llama3-405b", "b200-gb200", 8, 16, 8, 3),
    ("gpt3-175b", "a100-pcie", 8, 8, 1, 0),
])
def test_01_readout_verdict_and_bar_use_the_same_usable_line(setting):
    # the verdict tests against 90 % of HBM: the readout names that figure and the bar draws it, so a total between
    # the usable line and the HBM line reads "does not fit" with the bar visibly past the line it is tested against
    from nvcourse.chapters import ch01_one_gpu as ch

    fig, text = ch._render(*setting)
    try:
        xs = {round(float(line.get_xdata()[0]), 6) for line in fig.axes[0].get_lines()}
    finally:
        plt.close(fig)
    total, unit, memory, usable, verdict = _VERDICT.search(text).groups()
    hbm = catalog.get_gpu(setting[1]).memory_GB
    assert float(memory) == hbm and float(usable) == pytest.approx(training.HEADROOM * hbm)
    assert {round(hbm, 6), round(training.HEADROOM * hbm, 6)} <= xs
    total_GB = float(total) * (1000 if unit == "TB" else 1)
    assert (verdict == "fits") == (total_GB <= float(usable)), (setting, total_GB, usable, verdict)


def test_01_data_parallel_bytes_grow_with_micro_batches_only_under_zero3():
    m = training.get_model("llama3-70b")

    def dp_bytes(zero: int, micro_batches: int) -> float:
        return training.per_step_traffic_bytes(m.params, dp=8, tp=8, pp=1, layers=m.layers, hidden=m.hidden,
                                               seq=4096, micro_batch=1, micro_batches=micro_batches,
                                               zero_stage=zero).dp

    for zero in (0, 1, 2):
        assert dp_bytes(zero, 2) == dp_bytes(zero, 32), zero
    assert dp_bytes(3, 32) > dp_bytes(3, 2) > dp_bytes(0, 2)
    assert ("Tensor-parallel bytes grow with every micro-batch, data-parallel bytes only under ZeRO-3."
            in prose(CH01))


def test_01_the_nic_rate_is_called_achievable_against_its_line_rate():
    ndr = catalog.get_link("ib-ndr")
    assert ndr.achievable_GBps_dir < ndr.line_GBps_dir
    assert (f"one {ndr.line_Gbps_dir:g} Gb/s network port (a NIC, the server's network card) achieves "
            f"~{ndr.achievable_GBps_dir:.0f} GB/s of its {ndr.line_GBps_dir:g} GB/s "
            "[line rate](../docs/glossary.md#line-rate)") in prose(CH01)
    assert "~47 GB/s of one 400 Gb/s network port" not in prose(CH01)


# ------------------------------------------------------------------------------------------------ 02
@pytest.mark.parametrize("size", [4096, 1 << 20, 1 << 30])
def test_02_the_dot_is_the_message_and_the_dashed_line_is_n_half(size):
    from nvcourse.chapters import ch02_links as ch

    view = ch._AlphaBetaView()
    try:
        _live, text = view(3.4, 370.8, size)
        n_half = 3.4e-6 * 370.8e9
        assert list(view.t_dot.get_xdata()) == list(view.bw_dot.get_xdata()) == [size]
        assert list(view.half_line.get_xdata()) == pytest.approx([n_half, n_half])
        assert view.half_line.get_linestyle() == "--"
    finally:
        plt.close("all")
    text = prose("02_pcie_vs_nvlink.ipynb")
    assert "watch the dot (your message) move against the dashed line at n½." in text
    assert "the dot that marks n½" not in text


# ------------------------------------------------------------------------------------------------ 03
def test_03_summary_caption_says_when_the_pcie_all_to_all_holds():
    from nvcourse.chapters import ch03_topology as ch

    cap = ch.socket_cap_GBps("pcie-8gpu")
    capped = ch.socket_capped_rate("pcie-8gpu", "all-to-all")
    unbounded = next(r for r in ch.system_rows(["pcie-8gpu"]))["all-to-all per GPU GB/s"]
    assert cap == 16 and capped < unbounded  # 7 against 13.78: both hold, each under its own CPU-link rate
    html = ch.metrics_summary_html()
    assert (f"8-GPU PCIe server: all-to-all {capped:.3g} GB/s at NCCL&#x27;s {cap:g} GB/s for the CPU-to-CPU link "
            "(drawn unbounded, §5).") in html
    # systems whose rings never cross sockets get no such sentence
    assert "CPU-to-CPU" not in ch.metrics_summary_html(["dgx-h100", "dgx-a100"]).split("<details>")[0]


def test_01_readout_defines_attention_heads_where_it_names_them():
    from nvcourse.chapters import ch01_one_gpu as ch

    fig, text = ch._render("llama3-8b", "h100", 64, 1, 1, 0)
    plt.close(fig)
    heads = training.get_model("llama3-8b").heads
    assert (f"more than the model's {heads} attention heads (the independent slices of a layer's attention, which "
            "tensor parallelism divides among GPUs): each GPU would hold less than one head.") in text
