"""The Dashboard re-renders on change and never shows a traceback."""

import ipywidgets as w
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest

from nvcourse.widgets import Dashboard, log_slider, size_slider


def render(x, size):
    if x > 5:
        raise ValueError("x must be at most 5 (try a smaller value)")
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, x])
    return fig, f"<b>x={x}, size={size}</b>"


def test_dashboard_renders_and_updates():
    d = Dashboard({"x": w.IntSlider(value=1, min=0, max=10), "size": size_slider(value_exp=10)}, render)
    assert "x=1, size=1024" in d.readout.value
    d.controls["x"].value = 3
    assert "x=3" in d.readout.value
    assert d.last_error is None
    assert plt.get_fignums() == []  # figures are closed after display


def test_dashboard_shows_error_note_not_traceback():
    d = Dashboard({"x": w.IntSlider(value=1, min=0, max=10), "size": size_slider()}, render)
    d.controls["x"].value = 7
    assert "x must be at most 5" in d.readout.value
    assert "Traceback" not in d.readout.value
    assert d.last_error == "x must be at most 5 (try a smaller value)"
    d.controls["x"].value = 2  # recovers
    assert d.last_error is None and "x=2" in d.readout.value


def test_unexpected_exception_type_is_named():
    d = Dashboard({"x": w.IntSlider(value=0)}, lambda x: 1 / x)
    assert d.last_error.startswith("ZeroDivisionError")


def test_slider_helpers_validate():
    s = log_slider("α", minimum=0.1, maximum=100, value=1000)
    assert s.value == pytest.approx(100)  # clamped into range
    with pytest.raises(ValueError, match="0 < minimum < maximum"):
        log_slider("α", minimum=0, maximum=1, value=0.5)
    sizes = size_slider(min_exp=0, max_exp=4, value_exp=2)
    assert sizes.value == 4 and [v for _, v in sizes.options] == [1, 2, 4, 8, 16]
    assert sizes.label == "4 B"


def test_frozen_layout_reuses_the_first_axes_positions():
    def two_panels(x):
        fig, axes = plt.subplots(1, 2, figsize=(6, 3), layout="constrained")
        axes[0].plot([0, 1], [0, x])
        axes[1].set_ylabel("a long label " * x)
        return fig

    d = Dashboard({"x": w.IntSlider(value=1, min=1, max=3)}, two_panels)
    first = d._layouts[((6.0, 3.0), 2)]
    d.controls["x"].value = 3  # a longer label: the frozen layout keeps the first positions
    assert d._layouts[((6.0, 3.0), 2)] == first and len(d._layouts) == 1
    unfrozen = Dashboard({"x": w.IntSlider(value=1, min=1, max=3)}, two_panels, freeze_layout=False)
    assert unfrozen._layouts == {}
