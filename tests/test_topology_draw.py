"""Drawings: they draw what the metrics say (busiest links labelled), without computing loads themselves."""

import matplotlib.pyplot as plt
import pytest

from nvcourse.topology import build_system_graph
from nvcourse.topology.draw import draw_topology, save_topology, tray_graph
from nvcourse.topology.topo_parser import example_files, read_topo


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _labels(fig):
    return [t.get_text() for t in fig.axes[0].texts]


def test_dgx1_all_to_all_labels_the_two_saturated_cross_links():
    """The single links 2-6 and 3-7 are full (100 %), then 0-4/1-5 at 13/3 r / 50 = 59 % (see test_topology)."""
    fig = draw_topology(build_system_graph("dgx-1-v100"), pattern="all-to-all", top=2)
    assert _labels(fig).count("100%") == 2
    fig = draw_topology(build_system_graph("dgx-1-v100"), pattern="all-to-all", top=4)
    assert _labels(fig).count("59%") == 2


def test_uniform_switch_traffic_is_reported_not_labelled_link_by_link():
    fig = draw_topology(build_system_graph("dgx-h100"), pattern="all-to-all")
    assert "100%" not in _labels(fig)
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "every link equally busy (100%)" in legend


def test_nvl72_is_drawn_per_tray():
    """18 compute trays x 9 switch trays = 162 bundles of 4 GPUs x 2 chips = 8 links, 8 x 50 = 400 GB/s."""
    T, member = tray_graph(build_system_graph("gb200-nvl72"))
    assert T.number_of_nodes() == 27 and T.number_of_edges() == 162
    assert T.edges["CT0", "ST0"]["count"] == 8 and T.edges["CT0", "ST0"]["GBps_dir"] == 400.0
    assert member["GPU5"] == "CT1" and member["NVS3"] == "ST1"
    fig = draw_topology(build_system_graph("gb200-nvl72"))
    labels = _labels(fig)
    assert {"compute trays", "switch trays"} <= set(labels)
    assert [str(i) for i in range(18)] == [t for t in labels if t.isdigit()][:18]  # compute trays 0-17 numbered
    assert labels.count("8") == 2 and "17" in labels and "18" not in labels  # and switch trays 0-8


def _legend_labels(fig):
    return [t.get_text() for t in fig.axes[0].get_legend().get_texts()]


@pytest.mark.parametrize("system,pattern", [("pcie-8gpu", None), ("dgx-1-v100", "all-to-all"), ("gb200-nvl72", "ring")])
def test_dashboard_figure_moves_the_legend_to_html(system, pattern):
    """topology_figure draws what draw_topology draws, minus legend and colour bar, which it returns as HTML with
    the same entries (one list feeds both)."""
    import html

    from nvcourse.topology.draw import topology_figure

    G = build_system_graph(system)
    full = draw_topology(G, pattern=pattern)
    fig, legend = topology_figure(G, pattern=pattern)
    assert len(fig.axes) == 1 and fig.axes[0].get_legend() is None
    assert fig not in map(plt.figure, plt.get_fignums())  # no pyplot manager: the dashboard need not close it
    assert len(full.axes) == (2 if pattern else 1)  # the static figure keeps its colour bar
    text = html.unescape(legend)
    for label in _legend_labels(full):
        assert label in text
    assert _labels(fig) == _labels(full)  # the same labels on the drawing
    assert ("link utilisation at the maximal" in text) == (pattern is not None)
    assert ("one line per compute tray x switch tray bundle" in text) == (system == "gb200-nvl72")


def test_legend_html_escapes_and_uses_the_drawing_colours():
    from matplotlib import colormaps

    from nvcourse.topology.draw import LegendEntry, legend_html

    out = legend_html(
        [LegendEntry("a <b> & c", "text"), LegendEntry("NVLink", "line", "#009E73", width=2.5, dashed=True)],
        colour_bar="x < y",
    )
    assert "a &lt;b&gt; &amp; c" in out and "x &lt; y" in out and "<b>" not in out
    assert "dashed rgba(0,158,115,1)" in out
    cmap = colormaps["YlOrRd"]  # idle cables are drawn at cmap(0.15), full ones at cmap(1.0)
    lo, hi = (tuple(round(255 * c) for c in cmap(v)[:3]) for v in (0.15, 1.0))
    assert f"rgba({lo[0]},{lo[1]},{lo[2]},1) 0%" in out and f"rgba({hi[0]},{hi[1]},{hi[2]},1) 100%" in out


def test_save_parsed_topology(tmp_path):
    r = read_topo(example_files()["dgx-a100-10nic"], nvlink="nvlink3", pcie="pcie4")
    out = tmp_path / "a100.png"
    save_topology(r.graph, str(out))
    assert out.stat().st_size > 10_000


def test_highlight_needs_known_bandwidths():
    r = read_topo(example_files()["dgx1-v100-cube-mesh"])  # no link generations given
    with pytest.raises(ValueError, match="no known bandwidth"):
        draw_topology(r.graph, pattern="ring")


def test_notebook_helpers():
    from nvcourse.chapters import ch03_topology as nb

    rows = {r["system"]: r for r in nb.system_rows(["dgx-1-v100", "dgx-h100"])}
    # DGX-1: 150 GB/s bisection over 4 GPUs = 37.5 per GPU; H100: 1800 / 4 = 450 = its own link bandwidth
    assert rows["dgx-1-v100"]["bisection per GPU GB/s"] == pytest.approx(37.5)
    assert rows["dgx-h100"]["bisection per GPU GB/s"] == pytest.approx(450.0)
    fig, text = nb.render_system("pcie-8gpu", "one-to-all")
    assert "31.5 GB/s" in text and fig.axes
    assert "nvcourse-legend" in text and "busiest (one-to-all)" in text
    fig, text = nb.render_pasted(example_files()["dgx1-v100-cube-mesh"].read_text())  # no generations given
    assert "the links have no bandwidth until you pick their generation" in text  # the menus, not a keyword
    with pytest.raises(ValueError, match="line"):
        nb.render_pasted("GPU0 GPU1\nGPU0 X NV1\nGPU1 NV2 X\n")
