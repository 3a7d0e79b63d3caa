"""What the code cells of chapters 07b, 07c, 08b and 09 print speaks the learner's language: the cells call
chapter-module functions that build each line, table header and label with ``_()`` (the code cells are shared by the
English and French editions, so a line a cell built itself would stay English in French).

A walk (tests/i18n_walks.py) runs every one of those functions in a fresh interpreter, as the notebooks call them and
on inputs that reach each branch (a singular and a plural; a loopback socket, an exposed one, none); every ``_()``
message inside them, read from the source by Babel as ``tasks.py i18n extract`` reads it, must be shown: in English
its fixed parts, in French its translation's, with no long English message left. In English the lines are the ones
the cells printed before they moved into the modules (checked against the models' numbers)."""

from __future__ import annotations

import pytest
from i18n_walks import printed_lines_speak

_FRAME = """
import sys
import matplotlib
matplotlib.use("Agg")
out = []
"""

#: Per chapter, what its cells call (and the branches they can reach); the names start with ``p3_`` so that another
#: walk (tests/test_i18n_frm2.py, test_i18n_ch04_ch04b_ch07b.py, test_i18n_leftovers.py) can append a script here.
CH07B = """
from nvcourse import overlap as p3_overlap
from nvcourse.chapters import ch07b_overlap as p3_07b
p3_toy = p3_overlap.dp_bucket_timeline(100e6, 1.0, 25e6, lambda nbytes: 0.3)
p3_cases = p3_07b.bucket_cases()
out += [p3_07b.toy_line(p3_toy), *p3_cases, p3_07b.bucket_lines(p3_cases), p3_07b.deepseek_sm_line(),
        p3_07b.prefetch_lines(), p3_07b.tp_setting(1, 0.0), p3_07b.tp_setting(4, 0.15), p3_07b.pp_cp_lines(),
        p3_07b.roofline_lines()]
p3_fig = p3_07b.timeline_figure(p3_07b.tp_case("llama3-70b", "dgx-h100", 8, chunks=4, sm_fraction=0.15), unit=1e-6,
                                unit_label="µs", setting=p3_07b.tp_setting(chunks=4, sm_fraction=0.15))
out.append(p3_fig.axes[0].get_xlabel())
"""
CH07C = """
from nvcourse.chapters import ch07c_inference as p3_07c
out += [p3_07c.kv_cache_lines(), p3_07c.deepep_lines(), p3_07c.kv_measured_lines(), p3_07c.moe_dispatch_html()]
"""
CH08B = """
import ipaddress as p3_ip
from nvcourse.chapters import ch08b_security_and_observability as p3_08b
from nvcourse.observability.sockets import Listener as p3_Listener
out += [p3_08b.partition_table().data, p3_08b.rack_split_lines(), p3_08b.pkey_lines(), p3_08b.noisy_neighbour_lines(),
        p3_08b.exposure_table().data, p3_08b.listening_line([]), p3_08b.listening_line(),
        p3_08b.listening_line([p3_Listener(p3_ip.ip_address(a), 29500, 1) for a in ("127.0.0.1", "0.0.0.0")])]
"""
CH09 = """
from nvcourse import capstone as p3_capstone
from nvcourse.chapters import ch09_capstone as p3_09
p3_targets = p3_capstone.Targets(model="llama3-70b", training_tokens=2e12, max_days=30, max_usd=3e6,
                                 min_goodput=0.90, min_efficiency=0.70, max_MW=3.0)
p3_report = p3_capstone.evaluate(p3_capstone.Design("dgx-h100", 512, tp=8, pp=2), p3_targets)
p3_big = p3_capstone.evaluate(p3_capstone.Design("dgx-h100", 1024, tp=8, pp=1), p3_targets)
p3_fabrics = p3_09.fabric_choices()
out += [*p3_fabrics, p3_09.fabric_compare_html(p3_09.compared_jobs(p3_report, p3_big), p3_fabrics)]
"""
_SCRIPT = CH07B + CH07C + CH08B + CH09

#: Per module: the functions whose ``_()`` messages the cells print.
FUNCTIONS = {
    "nvcourse/chapters/ch07b_overlap.py": {"toy_line", "bucket_cases", "bucket_lines", "deepseek_sm_line",
                                           "prefetch_lines", "tp_setting", "pp_cp_lines", "roofline_lines"},
    "nvcourse/chapters/ch07c_inference.py": {"kv_cache_lines", "deepep_lines", "_bottleneck"},
    "nvcourse/chapters/ch07c_serving.py": {"kv_measured_lines", "_percent"},
    "nvcourse/chapters/ch08b_security_and_observability.py": {"partition_table", "rack_split_lines", "pkey_lines",
                                                              "noisy_neighbour_lines", "listening_line"},
    "nvcourse/chapters/ch09_capstone.py": {"fabric_choices", "compared_jobs"},
}
#: Every message of those functions is reached.
_UNREACHED: set[str] = set()


@pytest.mark.parametrize("language", ["en", "fr"])
def test_every_printed_line_of_07b_07c_08b_09_speaks_the_language(language):
    # the modules' dashboards, tables and figures have their own walks (tests/test_i18n_frm2.py and others)
    printed_lines_speak(FUNCTIONS, _FRAME, _SCRIPT, language, _UNREACHED, least=45)


def test_the_english_lines_are_the_ones_the_cells_printed(monkeypatch):
    monkeypatch.setenv("NVCOURSE_LANG", "en")
    from nvcourse import inference, isolation, overlap, rooflines
    from nvcourse.chapters import ch07b_overlap as ch07b
    from nvcourse.chapters import ch07c_inference as ch07c
    from nvcourse.chapters import ch08b_security_and_observability as ch08b
    from nvcourse.units import format_size, format_time

    toy = overlap.dp_bucket_timeline(100e6, 1.0, 25e6, lambda nbytes: 0.3)
    assert ch07b.toy_line(toy) == (f"step {toy.total_s:.2f} s, compute {toy.work_s:.2f} s, exposed {toy.exposed_s:.2f} "
                                   f"s, {toy.hidden_fraction:.0%} of the communication hidden")
    cases = ch07b.bucket_cases()
    assert list(cases) == ["Llama 3 8B, ZeRO-1 DP over 512 GPUs", "Llama 3 70B, TP 8 + DDP over 64 nodes"]
    sc = cases["Llama 3 8B, ZeRO-1 DP over 512 GPUs"]
    assert ch07b.bucket_lines(cases).splitlines()[0] == (
        f"Llama 3 8B, ZeRO-1 DP over 512 GPUs: gradient {format_size(sc.grad_bytes, binary=False)} per GPU, backward "
        f"{format_time(sc.backward_s)}; buckets that fit: ≥ {format_size(sc.min_bucket())}; with 25 MiB: exposed "
        f"{format_time(sc.timeline(overlap.default_bucket_bytes()).exposed_s)}")
    assert "buckets that fit: none hides it" in ch07b.bucket_lines(cases).splitlines()[1]
    assert ch07b.tp_setting(4, 0.15) == "4 chunks, 15 % of the SMs taken by communication"
    c, w = rooflines.gpu_rates("dgx-h100", link="nic", efficiency=0.55)
    r = overlap.cp_ring_attention(seq=8192, cp=8, hidden=8192, kv_hidden=1024, flops_per_s=c, link_Bps=w)
    assert ch07b.pp_cp_lines().splitlines()[3] == (
        f"Llama 3 70B, CP 8 over {'nic':6s}, {8192:6d} tokens: {r['tokens_per_gpu']:6.0f} tokens/GPU vs threshold "
        f"{r['threshold_tokens_per_gpu']:5.0f}: exposed per layer {format_time(r['exposed_s'])}")
    c, w = rooflines.gpu_rates("dgx-h100", link="nic")
    r = rooflines.dp_roofline(8192, c, w, per_node=1)
    assert ch07b.roofline_lines().splitlines()[1] == (
        f"Llama 3 70B TP8+DDP, 8,192 tokens/GPU, 1 rank per node: {r.value:,.0f} vs threshold {r.threshold:,.0f} -> "
        f"{'COMMUNICATION-bound' if r.comm_bound else 'can hide'}")
    kv = inference.kv_bytes_per_token("llama3-70b")
    x = inference.kv_transfer_time("llama3-70b", 32768, "gb200-nvl72", path="nvlink", senders=8)
    lines = ch07c.kv_cache_lines().splitlines()
    assert lines[0] == f"KV cache: {kv:,.0f} B per token; 32k prompt: {format_size(32768 * kv, binary=False)}"
    assert lines[3] == (f"{'NVLink inside an NVL72 (8 GPUs)':34s}: {format_time(x['time_s']):>9} at "
                        f"{x['rate_Bps'] / 1e9:7.0f} GB/s")
    m = inference.data()["kv_transfer"]["mooncake-qwen3-8b-32k"]
    assert ch07c.kv_measured_lines().splitlines()[2] == (
        f"measured TTFT {m['ttft_ms']} ms, so the transfer was {m['transfer_ms'] / m['ttft_ms']:.1%} of it")
    whole = isolation.nvl72_split([18], 2**30)[0]
    assert ch08b.rack_split_lines().splitlines()[0] == (
        f"{'whole rack':>10}: {whole.gpus:2d} GPUs, {whole.algo:5s} {whole.time_s * 1e3:.3f} ms, busbw "
        f"{whole.busbw_GBps:,.0f} GB/s")
    assert ch08b.pkey_lines().splitlines() == ["0x8001 ↔ 0x8001: can talk", "0x8001 ↔ 0x0001: can talk",
                                               "0x0001 ↔ 0x0001: dropped", "0x8001 ↔ 0x8002: dropped"]
    r = isolation.noisy_neighbour(2**28, qos="none")
    assert ch08b.noisy_neighbour_lines().splitlines()[0] == (
        f"{'none':>6}: victim flow {r.shared_rate_GBps:6.2f} GB/s line rate (alone {r.alone_rate_GBps:.0f}), "
        f"all-reduce ×{r.slowdown:.2f}")
