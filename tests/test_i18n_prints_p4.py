"""What the code cells of chapters 05, 06b, 06c and 07 print speaks the learner's language: the lines the cells
built themselves (05's NVLink domains, TP all-reduces and MoE all-to-alls), the shipped samples' labels and captions
(06b), the recorded run's machine note (06c) and the reasons for an assumed price (07) go through ``_()`` in the
chapter modules; rates of four digits and more are grouped the French way.

A walk (tests/i18n_walks.py) runs those functions in a fresh interpreter as the notebooks call them, on inputs that
reach each branch (a network-bound and an NVLink-bound system; every shipped sample; the assumed price); every
``_()`` message inside them must be shown: in English its fixed parts, in French its translation's, with no long
English message left. In English the lines are the ones the cells printed before they moved into the modules.

The French case fails until the French catalog holds these messages (they are new)."""

from __future__ import annotations

import inspect
import re

import pytest
from i18n_walks import printed_lines_speak

_FRAME = """
import sys
import matplotlib
matplotlib.use("Agg")
out = []
"""

CH05 = """
from nvcourse.chapters import ch05_nvl72 as p4_05
from nvcourse.fabric.moe import MoEConfig as p4_MoE
p4_cfg = p4_MoE(hidden=7168, tokens=4096, experts=256, top_k=8, bytes_per_elem=2, moe_layers=58)
out += [p4_05.domain_text(), p4_05.tp_allreduce_lines(), p4_05.moe_alltoall_lines(p4_cfg, ep=64),
        p4_05.moe_view(7168, 4096, 256, 8, 64, 58)[1]]
"""
CH06B = """
from nvcourse.chapters import ch06b_nccl_in_practice as p4_06b
from nvcourse.nccl.ncclog import read_text as p4_read_log
p4_names = [*p4_06b.SAMPLES, *p4_06b.LOGS]
out += [p4_06b.sample_label(n) for n in p4_names] + [p4_06b.sample_caption(n) for n in p4_names]
for p4_name in p4_06b.LOGS:  # one host (a container's id), several hosts
    p4_log = p4_read_log(p4_06b.sample_text(p4_name))
    out += [p4_06b.log_explanation(p4_log), p4_06b.log_html(p4_log)]
"""
CH06C = """
from nvcourse.chapters import ch06c_multinode_lab as p4_06c
out += [p4_06c.recorded_line(p4_06c.recorded()), p4_06c.recorded_line(p4_06c.recorded(), live=True),
        p4_06c.nvlink_vs_nic("dgx-h100")]
"""
CH07 = """
from nvcourse.chapters import ch07_training as p4_07
out.append(p4_07.price_table_html(["pcie-8gpu", "dgx-h100", "gb200-nvl72"]))  # as chapter 07's cell
"""
_SCRIPT = CH05 + CH06B + CH06C + CH07

#: Per module: the functions whose ``_()`` messages the walk must show.
FUNCTIONS = {
    "nvcourse/chapters/ch05_nvl72.py": {"_domain_lines", "domain_text", "tp_allreduce_lines", "moe_alltoall_lines"},
    "nvcourse/nccl/samples.py": {"_sample_words", "hosts_shown"},
    "nvcourse/chapters/ch06c_multinode_lab.py": {"machine_note", "recorded_line", "nvlink_vs_nic"},
    "nvcourse/chapters/ch07_training.py": {"_price_assumptions", "price_source_html"},
}
#: The "False" of a system without in-switch reduction: no system of these cells has none.
_UNREACHED = {"False"}


@pytest.mark.parametrize("language", ["en", "fr"])
def test_every_printed_line_of_05_06b_06c_07_speaks_the_language(language):
    shown = printed_lines_speak(FUNCTIONS, _FRAME, _SCRIPT, language, _UNREACHED, least=35)
    assert "036260b61d3a" not in shown  # a container's id is maintainer material: "a container" instead
    if language == "fr":
        # rates of four digits and more grouped the French way (U+202F), never "1800 GB/s"
        assert not re.search(r"\b\d{4,}\u00a0GB/s", shown)


def test_the_english_lines_are_the_ones_the_cells_printed(monkeypatch):
    monkeypatch.setenv("NVCOURSE_LANG", "en")
    from nvcourse import _data, catalog
    from nvcourse.chapters import ch05_nvl72 as ch05
    from nvcourse.chapters import ch06b_nccl_in_practice as ch06b
    from nvcourse.chapters import ch06c_multinode_lab as ch06c
    from nvcourse.chapters import ch07_training as ch07
    from nvcourse.fabric.moe import MoEConfig, moe_alltoall_time, moe_layer_time
    from nvcourse.nccl import samples
    from nvcourse.units import format_size, format_time

    s = catalog.get_system("gb200-nvl72")
    nvl, nic = s.link.achievable_GBps_dir * s.links_per_gpu, catalog.get_link(s.nic_link).achievable_GBps_dir
    lines = ch05.domain_text().splitlines()
    assert lines[5:9] == [
        s.name,
        f"  NVLink domain {s.gpus_per_domain} GPUs = {s.gpus_per_domain // s.gpus_per_host} x {s.gpus_per_host} GPUs "
        f"per host/compute tray; {s.nvswitch_count} NVLink switch chips in {s.switch_trays} switch trays",
        f"  per GPU: {s.links_per_gpu} x {s.link.name}: {s.scaleup_GBps_dir:.0f} GB/s per direction; scale-out NIC "
        f"{s.scaleout_GBps_dir_per_gpu:.0f} GB/s per direction -> NVLink/NIC = "
        f"{s.scaleup_GBps_dir / s.scaleout_GBps_dir_per_gpu:.0f}x at line rate, {nvl / nic:.0f}x achievable "
        f"({nvl:.0f} vs {nic:.0f} GB/s)",
        f"  links from each GPU to each switch chip: {sorted(set(s.switch_links_per_gpu))}; in-switch reduction: "
        f"{s.in_switch_reduction}"]
    assert lines[-1] == (f"NVL72 total GPU NVLink bandwidth: 72 x {2 * s.scaleup_GBps_dir / 1000:.1f} TB/s "
                         f"(bidirectional) = {72 * 2 * s.scaleup_GBps_dir / 1000:.1f} TB/s  (NVIDIA's '130 TB/s')")
    act = 4096 * 8192 * 2
    ring, nvls, gain = ch05.nvls_vs_ring(act, 16, "gb200-nvl72")
    assert ch05.tp_allreduce_lines().splitlines()[2] == (
        f"{'gb200-nvl72':<12} TP={16:<3} {format_size(act)}: ring/{ring.proto} {format_time(ring.time_s)}, "
        f"in-switch {format_time(nvls.time_s)} ({gain:.2f}x)")
    cfg = MoEConfig(hidden=7168, tokens=4096, experts=256, top_k=8, bytes_per_elem=2, moe_layers=58)
    for sid, line in zip(("dgx-b200", "gb200-nvl72"), ch05.moe_alltoall_lines(cfg, 64).splitlines(), strict=True):
        t = moe_alltoall_time(cfg, 64, sid)
        assert line == (f"{sid:<12} EP=64: NVLink {format_size(t.nvlink_bytes)}, network "
                        f"{format_size(t.network_bytes)} per GPU -> {format_time(t.time_s)} per all-to-all "
                        f"({t.bottleneck}-bound); per step "
                        f"{format_time(moe_layer_time(cfg, 64, sid)['per_step_s'])}")
    # every shipped sample has its label and its caption's system in the table of words (the files stay English)
    for name in (*ch06b.SAMPLES, *ch06b.LOGS):
        assert ch06b.sample_label(name) == name
        system = samples.hide_container_id(ch06b._header(name)[0])
        assert system in samples._sample_words() and "036260b61d3a" not in system
    rec = ch06c.recorded()
    note = rec["machine"]["note"]
    assert note in ch06c.recorded_line(rec) and f'"{note}"' in inspect.getsource(ch06c.machine_note)
    html = ch07.price_table_html(["pcie-8gpu", "dgx-h100", "gb200-nvl72"])
    for sid in ("gb200-nvl72",):  # the one assumed price the chapter's table shows
        why = _data.load("costs")["systems"][sid]["src"]["usd_per_gpu_hour"].removeprefix("assumption:")
        assert why in ch07._price_assumptions() and f"assumption: {why}" in html
