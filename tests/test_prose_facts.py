"""Figures typed in the chapters' prose agree with the data and the model they come from.

Markdown cannot compute, so some constants and model results are written out in the text. Each one below is
rebuilt from its source (the catalog, ``data/nccl_tuning.toml``, the cost model) and must appear in the chapter
as written; when a data file or the model changes, this names the sentence to update. Line breaks in the
Markdown are read as spaces.
"""

import json
import re
from functools import cache
from pathlib import Path

import pytest

from nvcourse import catalog
from nvcourse.costmodel import configure, pair_cost, predict, tuning, validation

ROOT = Path(__file__).resolve().parents[1]


@cache
def prose(notebook: str) -> str:
    """The Markdown of ``notebooks/<notebook>`` (or of ``solutions/...`` when the name starts with it)."""
    path = ROOT / notebook if notebook.startswith("solutions/") else ROOT / "notebooks" / notebook
    nb = json.loads(path.read_text(encoding="utf-8"))
    text = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    return re.sub(r"\s+", " ", text)


def g(x: float) -> str:
    """A constant as the prose writes it: 3.4, 14, 0.6."""
    return f"{x:g}"


def hw(link: str, algo: str, proto: str) -> str:
    """A per-step latency as the prose writes it: one decimal below 10 µs (1.0, 4.0), whole above (14)."""
    x = tuning.hw_latency_us(link, algo, proto)
    return f"{x:.1f}" if x < 10 else f"{x:g}"


def us(seconds: float, digits: int = 1) -> str:
    return f"{seconds * 1e6:.{digits}f}"


def link(link_id: str) -> catalog.Link:
    return catalog.get_link(link_id)


def _ndr() -> tuple[str, str, str]:
    """A 400 Gb/s port: its line rate in Gb/s, in GB/s, and what NCCL reaches, GB/s (rounded as the prose does)."""
    ndr = link("ib-ndr")
    return f"{ndr.line_Gbps_dir:g}", f"{ndr.line_GBps_dir:g}", f"{ndr.achievable_GBps_dir:.0f}"


def _nvl72_tray() -> str:
    s = catalog.get_system("gb200-nvl72")
    return f"{s.switch_tray_ports} NVLink ports and {s.switch_tray_GBps_bidir / 1000:g} TB/s"


def _alphas() -> str:
    # 02 §2's table: the catalog's α (NCCL's Simple constant) and NCCL's LL constant, one row per link class
    rows = (("NVLink", "nvlink4", "nvlink"), ("PCIe", "pcie4", "pci"), ("network", "ib-ndr", "net"))
    return " ".join(f"| {name} | {g(catalog.get_link(k).alpha_us)} µs | {hw(t, 'ring', 'LL')} µs |"
                    for name, k, t in rows)


def _tree_ll_two_h100_nodes() -> str:
    # the sentence sets the model's reading of NCCL's formulas beside NCCL's own estimate: candidates_estimate_s
    # (the model's time also charges the channel ramp NCCL's estimate leaves out)
    a, b = (predict("allreduce", "dgx-h100", 8, s, nodes=2) for s in (4096, 8192))
    assert (a.algo, a.proto) == ("tree", "LL")
    ea, eb = (p.candidates_estimate_s["tree/LL"] for p in (a, b))
    return f"| NCCL's estimate, rebuilt with NCCL's formulas | {us(ea)} µs | {us(eb)} µs |"


def _domain(system: str, gpus: int) -> str:
    act = 4096 * 8192 * 2
    ring, nvls = (predict("allreduce", system, gpus, act, algo=a).time_s for a in ("ring", "nvls"))  # NCCL's model
    return f"(ring {us(ring, 0)} µs, NVLS {us(nvls, 0)} µs"


def _simple_vs_nvls_72() -> float:
    c = configure("gb200-nvl72", 72)
    simple = pair_cost("allreduce", "ring", "Simple", c).time(256 * 2**10)
    return simple / predict("allreduce", "gb200-nvl72", 72, 256 * 2**10, algo="nvls").time_s


def _nvls_72() -> str:
    ring, nvls = (predict("allreduce", "gb200-nvl72", 72, 256 * 2**10, algo=a).time_s for a in ("ring", "nvls"))
    return (
        f"~{us(nvls, 0)} µs with its bytes) against 142 LL ring steps (~{us(ring, 0)} µs) is about "
        f"{ring / nvls:.1f}× faster"
    )


def _nvlstree_cap() -> str:
    cap2, cap4 = (tuning.per_channel_max_GBps("nvlstree", "hopper", k) for k in (2, 4))
    # the 246 GB/s it sets on two H100 nodes: tests/test_prose_facts_walk_q4.py
    return (
        f"two nodes (NCCL's per-channel NVLSTree cap, measured rather than derived) | {g(cap2)} GB/s | | NVLSTree | "
        f"the same cap from three nodes | {g(cap4)} GB/s |"
    )








def _nvl72_nvls_over_the_slide() -> str:
    (r,) = validation.compare([k for k in validation.cases() if k.id == "nvl72-allreduce-nvls"])
    return f"its NVLS is {r.error * 100:.0f} % above it"


FACTS = {
    "00: a 400 Gb/s port in GB/s": ("00_start_here.ipynb", lambda: "{} Gb/s = {} GB/s".format(*_ndr()[:2])),
    "01: NVLink and NIC achievable rates": (
        "01_why_one_gpu_is_not_enough.ipynb",
        lambda: ("one {} Gb/s network port (a NIC, the server's network card) achieves ~{} GB/s of its {} GB/s "
                 "[line rate](../docs/glossary.md#line-rate)").format(_ndr()[0], _ndr()[2], _ndr()[1]),
    ),
    "02: an NDR port each way": (
        "02_pcie_vs_nvlink.ipynb",
        lambda: "a {} Gb/s [NDR](../docs/glossary.md#ib-generations) port moves at most {} GB/s each way".format(
            *_ndr()[:2]),
    ),
    "02: H100 NVLink per direction and in total": (
        "02_pcie_vs_nvlink.ipynb",
        lambda: '{:g} GB/s per direction, "{:g} GB/s" in total'.format(
            catalog.get_gpu("h100").nvlink_links * link("nvlink4").line_GBps_dir,
            catalog.get_gpu("h100").nvlink_GBps_bidir,
        ),
    ),
    "02: ceilings (NVLink, PCIe Gen5, NIC)": (
        "02_pcie_vs_nvlink.ipynb",
        lambda: (
            "(~{:.0f} GB/s achievable per direction) carry about 7× a PCIe Gen5 slot (~{:.0f} GB/s) and about 8× a "
            "{} Gb/s NIC (~{} GB/s)".format(
                catalog.get_system("dgx-h100").scaleup_achievable_GBps_dir,
                link("pcie5").achievable_GBps_dir,
                _ndr()[0],
                _ndr()[2],
            )
        ),
    ),
    "02: PCIe Gen3 x16 vs 100 Gb/s Ethernet": (
        "02_pcie_vs_nvlink.ipynb",
        lambda: f"PCIe Gen3 x16: {link('pcie3').line_GBps_dir:g} GB/s vs {link('roce-100g').line_GBps_dir:g} GB/s",
    ),
    "02: B200 NVLink per direction": (
        "02_pcie_vs_nvlink.ipynb",
        lambda: "{:g} GB/s per direction ({} links × {:g} GB/s); {:g} TB/s adds both directions".format(
            catalog.get_gpu("b200").nvlink_links * link("nvlink5").line_GBps_dir,
            catalog.get_gpu("b200").nvlink_links,
            link("nvlink5").line_GBps_dir,
            catalog.get_gpu("b200").nvlink_GBps_bidir / 1000,
        ),
    ),
    "03: NVL72 switch tray": ("03_topologies_and_nvswitch.ipynb", _nvl72_tray),
    "05: NVL72 switch tray": ("05_nvl72_rack_scale.ipynb", _nvl72_tray),
    "07c: a 400 Gb/s NIC's achievable rate": (
        "07c_communication_for_inference.ipynb",
        lambda: "at about {} GB/s achievable".format(_ndr()[2]),
    ),
    "02: the catalog's α per link class": ("02_pcie_vs_nvlink.ipynb", _alphas),
    "02: LL per-step latencies": (  # the LL column of the table _alphas checks, and the catalog's column
        "02_pcie_vs_nvlink.ipynb",
        lambda: "| one step over | Simple: the catalog's α | LL |",
    ),
    "02: network vs NVLink Simple step": (
        "02_pcie_vs_nvlink.ipynb",
        lambda: (
            f"charges {hw('net', 'ring', 'Simple')} µs per network step against {hw('nvlink', 'ring', 'Simple')} µs"
        ),
    ),
    "04b: the catalog's α per link class": (  # the Simple row of section 2b's table carries all three
        "04b_predicting_collectives.ipynb",
        lambda: "| 100 % | {} / {} / {} µs |".format(
            *(g(catalog.get_link(k).alpha_us) for k in ("nvlink4", "pcie4", "ib-ndr"))
        ),
    ),
    "04b: protocol table, LL": (
        "04b_predicting_collectives.ipynb",
        lambda: " / ".join(hw(k, "ring", "LL") for k in ("nvlink", "pci", "net")) + " µs",
    ),
    "04b: protocol table, LL128": (
        "04b_predicting_collectives.ipynb",
        lambda: " / ".join(hw(k, "ring", "LL128") for k in ("nvlink", "pci", "net")) + " µs",
    ),
    "04b: protocol table, Simple": (
        "04b_predicting_collectives.ipynb",
        lambda: " / ".join(hw(k, "ring", "Simple") for k in ("nvlink", "pci", "net")) + " µs",
    ),
    "04b: ring base latencies": (
        "04b_predicting_collectives.ipynb",
        # the last column of section 2b's protocol table, LL row (every row: tests/test_prose_facts_walk_q4.py)
        lambda: " / ".join(hw(k, "ring", "LL") for k in ("nvlink", "pci", "net"))
        + " µs | {} µs |".format(g(tuning.base_latency_us("ring", "LL"))),
    ),
    "04b: NVLS efficiency and latency": (
        "04b_predicting_collectives.ipynb",
        lambda: (
            f"| Hopper | {g(tuning.nvls_efficiency('hopper'))} | {hw('nvlink', 'nvls', 'Simple')} µs | "
            f"| Blackwell | {g(tuning.nvls_efficiency('blackwell'))} | "
            f"{hw('nvlink', 'nvls', 'Simple')} µs |"
        ),
    ),
    "04b: 8 B on 8 H100": (
        "04b_predicting_collectives.ipynb",
        lambda: (
            f"a ring with LL for small buffers ({us(predict('allreduce', 'dgx-h100', 8, 8).time_s, 0)} µs on 8 H100)"
        ),
    ),
    "04b: NVLSTree network step": (
        "04b_predicting_collectives.ipynb",
        lambda: f"network steps of {hw('net', 'nvlstree', 'Simple')} µs",
    ),
    "04b: tree/LL on two H100 nodes": ("04b_predicting_collectives.ipynb", _tree_ll_two_h100_nodes),
    "04b: 72-GPU LL ring": (
        "04b_predicting_collectives.ipynb",
        lambda: "costs NCCL's model {:.0f} µs even with LL".format(
            tuning.base_latency_us("ring", "LL") + 2 * 71 * tuning.hw_latency_us("nvlink", "ring", "LL")
        ),
    ),
    "04b: Simple ring latency on 8 H100": (
        "04b_predicting_collectives.ipynb",
        lambda: "{} + 14 × {} = {:.0f} µs".format(
            g(tuning.base_latency_us("ring", "Simple")),
            hw("nvlink", "ring", "Simple"),
            tuning.base_latency_us("ring", "Simple") + 14 * tuning.hw_latency_us("nvlink", "ring", "Simple"),
        ),
    ),
    "04b: LL cap on one Hopper node": (
        "04b_predicting_collectives.ipynb",
        lambda: "LL's cap of {0} GB/s of busbw, section 2b, is {0} × 8/14 = {1:.1f} GB/s of algbw".format(
            g(tuning.ll_max_bw_GBps("hopper", 1)), tuning.ll_max_bw_GBps("hopper", 1) * 8 / 14
        ),
    ),
    "04b solution: the Simple-only ring on 72 GPUs": (
        "solutions/04b_predicting_collectives_exercises.ipynb",
        lambda: "the ring would cost ≈ {:.0f} µs, which is where the ~{:.0f}× comes from".format(
            tuning.base_latency_us("ring", "Simple") + 142 * tuning.hw_latency_us("nvlink", "ring", "Simple"),
            _simple_vs_nvls_72(),
        ),
    ),
    "05 solution: NVLS vs the LL ring on 72 GPUs, 256 KiB": ("solutions/05_nvl72_rack_scale_exercises.ipynb", _nvls_72),
    "04b: NVLS heads": (
        "04b_predicting_collectives.ipynb",
        lambda: (f"one per NVLS channel of its topology graph and **at most {tuning.nvls_heads(10**6)}** "
                 "(NCCL calls them NVLS *heads*)"),
    ),
    "04b: the NVLSTree cap": ("04b_predicting_collectives.ipynb", _nvlstree_cap),
    "05 solution: the NVL72 NVLS point against the slide": (
        "solutions/05_nvl72_rack_scale_exercises.ipynb",
        _nvl72_nvls_over_the_slide,
    ),
    "05: TP=8 ring vs NVLS at 64 MiB": ("05_nvl72_rack_scale.ipynb", lambda: _domain("gb200-nvl72", 8)),
    "05: TP=16 ring vs NVLS at 64 MiB": ("05_nvl72_rack_scale.ipynb", lambda: _domain("gb200-nvl72", 16)),
}


@pytest.mark.parametrize("name", sorted(FACTS))
def test_prose_figure_matches_its_source(name):
    notebook, phrase = FACTS[name]
    expected = phrase()
    assert expected in prose(notebook), f"{notebook}: the prose should say {expected!r} ({name})"
