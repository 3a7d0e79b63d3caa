"""Guards for the density pass on chapters 02 and 03 (walkthrough U): each numbered section opens with the
question it answers, the fine print sits in the reference section at the end, and every number, order or trend
that moved there still holds against the model."""

import json
import re
from pathlib import Path

import pytest
from test_prose_facts_core import prose

from nvcourse import catalog
from nvcourse.costmodel import tuning
from nvcourse.topology import bisection_bandwidth, build_system_graph, nccl_rings

ROOT = Path(__file__).resolve().parents[1]
CH02 = "02_pcie_vs_nvlink.ipynb"
CH03 = "03_topologies_and_nvswitch.ipynb"


def _sections(notebook: str) -> dict[str, str]:
    """The text of each ``## N.`` section (heading included), whitespace runs read as one space."""
    text = prose(notebook)
    heads = list(re.finditer(r"## (\w+)\. ", text))
    ends = [m.start() for m in heads[1:]] + [text.index("## Key points")]
    return {m.group(1): text[m.start():end] for m, end in zip(heads, ends, strict=True)}


def _hw(link: str, proto: str) -> str:
    x = tuning.hw_latency_us(link, "ring", proto)
    return f"{x:.1f}" if x < 10 else f"{x:g}"


@pytest.mark.parametrize("notebook", [CH02, CH03])
def test_every_section_opens_with_its_question_and_the_reference_section_is_last(notebook):
    sections = _sections(notebook)
    for number, text in sections.items():  # "*What ...?*" right under the heading, or a heading that asks it
        assert re.match(r"## \w+\. [^*]+?(\*[^*]+\?\*|\? )", text), (notebook, number)
    last = list(sections)[-1]
    assert "reference" in sections[last].split("*", 1)[0].lower()


# ---------------------------------------------------------------------------------------------------- 02
def test_02_fine_print_sits_in_section_5_and_section_2_keeps_the_model():
    s = _sections(CH02)
    for moved in ("| one step over | Simple: the catalog's α | LL |", "a GB200 compute tray (a board of 4 GPUs",
                  "**Simple** (large messages)", "NCCL itself uses GPU peer-to-peer only up to `PXB` by default",
                  "Gen6 doubles the rate again", "[nvbandwidth]"):
        assert moved in s["5"], moved
        assert all(moved not in s[n] for n in ("1", "2", "3", "4")), moved
    assert "$$n_{1/2} = \\alpha\\,\\beta .$$" in s["2"] and "(§5 has the parts)" in s["2"]
    assert "NCCL's own peer-to-peer rules for these paths are in §5." in s["4"]
    assert "the network links, with the largest α, sit lowest (§5)." in s["3"]


def test_02_network_links_sit_lowest_below_the_smallest_half_bandwidth_size_and_ll_keeps_the_order():
    # §5: "the network links sit lowest at small sizes on §3's plot: NCCL's model charges 14 µs per network step
    # against 3.4 µs over NVLink (*Simple*); LL lowers every curve's floor but keeps the order"
    from nvcourse.chapters import ch02_links as ch

    text = prose(CH02)
    assert (f"That is why the network links sit lowest at small sizes on §3's plot: NCCL's model charges "
            f"{_hw('net', 'Simple')} µs per network step against {_hw('nvlink', 'Simple')} µs over NVLink "
            "(*Simple*); LL lowers every curve's floor but keeps the order.") in text
    params = {label: ch._curve(label).params for label in ch.PER_GPU_CHOICES}
    net = {k for k in params if "NIC" in k}
    assert net and all(params[k].alpha_s * 1e6 == pytest.approx(tuning.hw_latency_us("net", "ring", "Simple"))
                       for k in net)
    smallest = min(p.half_bandwidth_bytes for p in params.values())
    for size in (1, 2**10, 4 * 2**10, 64 * 2**10, int(smallest)):
        bw = {k: p.bandwidth(size) for k, p in params.items()}
        assert max(bw[k] for k in net) < min(v for k, v in bw.items() if k not in net), size
    simple = [tuning.hw_latency_us(t, "ring", "Simple") for t in ("nvlink", "pci", "net")]
    ll = [tuning.hw_latency_us(t, "ring", "LL") for t in ("nvlink", "pci", "net")]
    assert simple == sorted(simple) and ll == sorted(ll) and all(a < b for a, b in zip(ll, simple, strict=True))


def test_02_sample_deck_median_slide_stays_short():
    import statistics

    import nbformat

    from nvcourse.devtools import deck_plan

    planned = deck_plan.plan(nbformat.read(ROOT / "notebooks" / CH02, as_version=4))
    assert statistics.median(s.visible_words() for s in planned) <= deck_plan.WORD_LIMIT


# ---------------------------------------------------------------------------------------------------- 03
def test_03_moved_switch_chip_facts_hold():
    s = _sections(CH03)
    h100, b200 = catalog.get_system("dgx-h100"), catalog.get_system("dgx-b200")
    assert "A DGX H100 spreads each GPU's links over four chips; a DGX B200 over two." in s["2"]
    assert h100.nvswitch_count == len(h100.switch_links_per_gpu) == 4 and b200.nvswitch_count == 2
    assert ("A DGX H100's four chips are 64-port NVLink 4 switches, and some get more of a GPU's links than "
            "others.") in s["8"]
    assert h100.switch_chip_ports == 64 and len(set(h100.switch_links_per_gpu)) > 1
    assert "DGX-2" in s["8"] and "DGX-2" not in s["2"]


def test_03_bisection_by_hand_in_section_8_matches_the_max_flow():
    s = _sections(CH03)
    assert "§8 does the DGX-1 and the switched systems by hand." in s["3"]
    assert "the best split is quad against quad and the cut is the four cross edges (two of them doubled)" in s["8"]
    dgx1 = build_system_graph("dgx-1-v100")
    b = bisection_bandwidth(dgx1)
    quad = set(b.side_a)
    cross = [(u, v, d) for u, v, d in dgx1.edges(data=True) if (u in quad) != (v in quad)]
    assert len(cross) == 4
    rate = catalog.get_system("dgx-1-v100").link.line_GBps_dir
    assert b.GBps_dir == pytest.approx(sum(d["GBps_dir"] for _, _, d in cross))
    assert sorted(round(d["GBps_dir"] / rate) for _, _, d in cross) == [1, 1, 2, 2]
    assert "**bisection = (n/2) × links per GPU × per-link rate**" in s["8"]
    for sid in ("dgx-a100", "dgx-h100", "dgx-b200", "gb200-nvl72"):
        sysm = catalog.get_system(sid)
        n = sysm.gpus_per_domain if sid == "gb200-nvl72" else sysm.gpus_per_host
        got = bisection_bandwidth(build_system_graph(sid)).GBps_dir
        assert got == pytest.approx(n / 2 * sysm.links_per_gpu * sysm.link.line_GBps_dir), sid


def test_03_section_4_names_the_pcie_exception_and_section_8_gives_its_rate():
    from nvcourse.chapters import ch03_topology as ch

    s = _sections(CH03)
    assert "- **PCIe server**: the link between its two CPUs caps its one ring." in s["4"]
    assert "fine print in §8" in s["4"]
    cap = ch.socket_cap_GBps("pcie-8gpu")
    s_pcie = catalog.get_system("pcie-8gpu")
    rings = nccl_rings(build_system_graph("pcie-8gpu"))
    assert ch.ring_busbw_GBps("pcie-8gpu") == cap < rings.total_GBps_dir * s_pcie.link.efficiency
    assert f"caps its ring at {cap:g} GB/s" in s["8"]
    assert "the course counts one ring per link's worth of bandwidth" in s["8"]
    assert "16 on the 8× H800 NVSwitch log" in s["8"] and s["8"].count("**Channels on NVSwitch (§4).**") == 1


def test_03_routing_model_is_stated_once_in_the_reference():
    text = prose(CH03)
    assert text.count("follows its fewest-link paths") == 1
    assert "follows its fewest-link paths" in _sections(CH03)["8"]
    cells = json.loads((ROOT / "notebooks" / CH03).read_text(encoding="utf-8"))["cells"]
    assert all("Routing model" not in "".join(c["source"]) for c in cells)
