"""Curves told apart without colour in a legend of the whole figure too (chapter 06's scaling figure puts its
legend under both panels): each entry shows its own curve's line style and marker, and no two algorithms whose
colours print alike in greyscale share them."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from nvcourse import plots  # noqa: E402
from nvcourse.chapters import ch06_fabrics  # noqa: E402


def _styles(handles_texts) -> dict[str, tuple[str, str]]:
    return {t.get_text(): (h.get_linestyle(), h.get_marker()) for h, t in handles_texts if isinstance(h, Line2D)}


def test_the_scaling_figures_curves_and_legend_read_in_greyscale():
    fig, _ = ch06_fabrics.scaling_figure([2, 4, 8, 16], 64 * 2**20)
    plots.before_display(fig)
    curves = {ln.get_label(): (ln.get_linestyle(), ln.get_marker(), plots._luminance(ln.get_color()))
              for ln in fig.axes[1].get_lines()}
    assert len(curves) >= 3
    for a, (ls_a, m_a, g_a) in curves.items():
        for b, (ls_b, m_b, g_b) in curves.items():
            if a < b and abs(g_a - g_b) < plots.GREY_GAP:
                assert (ls_a, m_a) != (ls_b, m_b), (a, b)
    (legend,) = fig.legends
    shown = _styles(zip(legend.legend_handles, legend.get_texts()))
    assert shown == {label: (ls, m) for label, (ls, m, _) in curves.items()}
    plt.close(fig)


def test_a_figure_legend_follows_a_curve_restyled_for_greyscale():
    fig, (left, right) = plt.subplots(1, 2)
    for ax in (left, right):
        ax.plot([1, 2, 3], [1, 2, 3], "o-", color=plots.ALGO_COLOURS["ring"], label="ring")
        ax.plot([1, 2, 3], [2, 3, 4], "o-", color=plots.ALGO_COLOURS["tree"], label="tree")  # 0.34 vs 0.42 grey
    fig.legend(*right.get_legend_handles_labels())
    assert plots.greyscale_safe(fig)
    shown = _styles(zip(fig.legends[0].legend_handles, fig.legends[0].get_texts()))
    tree = right.get_lines()[1]
    assert shown["tree"] == (tree.get_linestyle(), tree.get_marker()) != shown["ring"]
    plt.close(fig)
