"""The Dashboard re-renders on change and never shows a traceback."""

import ipywidgets as w
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
    plt.close("all")  # figures other test files left open are not this test's business
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


# -- LiveFigure: blitting must show exactly what a full redraw shows -------------------------------------

import io  # noqa: E402 (this part's imports stay next to its tests)

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

from nvcourse.widgets import new_live_figure  # noqa: E402


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"))


def _line_view():
    live, ax = new_live_figure(4, 3)
    (line,) = ax.plot([0, 1, 2], [0, 1, 2], lw=2)
    ax.set_xlim(-0.5, 2.5)  # the line stays inside the frame (blitting draws over the spines, a full draw under)
    ax.set_ylim(-0.5, 4.5)
    ax.set_title("static title")
    live.animate(line)
    return live, ax, line


def test_live_figure_blit_equals_a_full_redraw_and_draws_the_static_part_once():
    live, ax, line = _line_view()
    first = _pixels(live.png())
    line.set_ydata([0.5, 3, 4])
    moved = _pixels(live.png())
    assert live.full_draws == 1  # the second image reused the cached axes
    assert not np.array_equal(first, moved)
    # the same state drawn from scratch, nothing animated: identical pixels
    line.set_animated(False)
    live.invalidate()
    live.artists.clear()
    assert np.array_equal(_pixels(live.png()), moved)
    assert live.full_draws == 2


def test_live_figure_invalidate_redraws_static_changes_and_forget_removes():
    live, ax, line = _line_view()
    before = _pixels(live.png())
    ax.set_title("another title")
    assert np.array_equal(_pixels(live.png()), before)  # static change not seen until invalidate()
    live.invalidate()
    assert not np.array_equal(_pixels(live.png()), before)
    legend = ax.legend([line], ["a line"])
    live.animate(legend)
    with_legend = _pixels(live.png())
    live.forget(legend)
    assert legend not in live.artists and ax.get_legend() is None
    assert not np.array_equal(_pixels(live.png()), with_legend)


def test_dashboard_shows_a_live_figure_without_pyplot_and_updates_in_place(monkeypatch):
    import nvcourse.widgets as widgets_module

    shown = []
    monkeypatch.setattr(widgets_module, "display", shown.append)
    live, ax, line = _line_view()

    def render(y):
        line.set_ydata([0, y, y])
        return live, f"y={y}"

    plt.close("all")
    d = Dashboard({"y": w.IntSlider(value=1, min=0, max=4)}, render)
    for y in (2, 3, 4):
        d.controls["y"].value = y
    assert d.readout.value == "y=4" and d.last_error is None
    assert live.full_draws == 1
    assert plt.get_fignums() == []  # never a pyplot figure: the inline backend will not show it again
    assert len(shown) == 4 and all(_pixels(img.data).shape == (300, 400, 4) for img in shown)
    assert not np.array_equal(_pixels(shown[0].data), _pixels(shown[-1].data))


def test_figure_png_on_a_kept_renderer_equals_savefig():
    from matplotlib.backends.backend_agg import RendererAgg

    from nvcourse.widgets import figure_png

    def fig_for(x):
        fig, ax = plt.subplots(figsize=(4, 3), layout="constrained")
        ax.plot([0, 1, 2], [0, x, 1])
        ax.set_title(f"x = {x}")
        return fig

    renderer = RendererAgg(400, 300, 100)
    for x in (1, 2, 3):  # the renderer is reused: each image is still that figure alone
        a, b = fig_for(x), fig_for(x)
        assert np.array_equal(_pixels(figure_png(a, renderer)), _pixels(figure_png(b)))
        plt.close("all")


def test_png_encoding_drops_alpha_only_when_the_image_is_opaque():
    from nvcourse.widgets import _encode_png

    rng = np.random.default_rng(1)
    opaque = rng.integers(0, 256, (30, 40, 4), dtype=np.uint8)
    opaque[..., 3] = 255
    img = Image.open(io.BytesIO(_encode_png(opaque.tobytes(), 40, 30)))
    assert img.mode == "RGB" and np.array_equal(np.asarray(img), opaque[..., :3])
    clear = opaque.copy()
    clear[:5, :5, 3] = 0  # a transparent corner must survive
    img = Image.open(io.BytesIO(_encode_png(clear.tobytes(), 40, 30)))
    assert img.mode == "RGBA" and np.array_equal(np.asarray(img), clear)


# -- without a kernel (GitHub, nbviewer, an untrusted JupyterLab): the first picture and readout, not a repr --


def test_dashboard_mimebundle_carries_its_picture_and_readout_for_viewers_without_a_kernel():
    import base64
    import re

    d = Dashboard(
        {"x": w.IntSlider(value=1, min=0, max=10, description="gain (dB)"), "size": size_slider(value_exp=10)}, render
    )
    bundle = d._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle  # the live view is still there, preferred by a kernel
    assert not bundle["text/plain"].startswith("Dashboard(children=")
    page = bundle["text/html"]
    assert "x=1, size=1024" in page and "gain (dB) = 1" in page and "message = 1 KiB" in page
    assert "mathjax_ignore" in page.split(">", 1)[0]  # "$/GPU-h" and a price in one output are not TeX
    png = base64.b64decode(re.search(r'src="data:image/png;base64,([^"]+)"', page).group(1))
    shown, stored = (Image.open(io.BytesIO(b)).convert("RGB") for b in (d.last_png, png))
    assert stored.size == shown.size and len(png) <= len(d.last_png)
    diff = np.abs(np.asarray(stored, dtype=int) - np.asarray(shown, dtype=int))
    assert diff.mean() < 2  # the same picture in fewer colours
    d.controls["x"].value = 7  # an error note: no stale picture in the static view
    assert d.last_png is None and "<img" not in d._repr_mimebundle_()["text/html"]


def test_every_control_shows_its_full_label_or_a_tooltip():
    long = w.IntSlider(value=60, min=5, max=1200, description="checkpoint write time (s)")
    styled = w.FloatSlider(description="restart (min)", style={"description_width": "120px"})
    d = Dashboard({"a": long, "b": styled, "c": w.Dropdown(options=[1, 2], description="GPU")}, lambda a, b, c: "ok")
    assert long.style.description_width == "initial" and long.tooltip == "checkpoint write time (s)"
    assert int(long.layout.width.removesuffix("px")) >= 8 * len(long.description) + 200  # room left for the track
    assert styled.style.description_width == "120px" and styled.tooltip == "restart (min)"  # an author's choice stays
    assert d.controls["c"].tooltip == "GPU"


def test_a_control_that_sets_another_draws_once_per_change():
    # 06b's paste box: choosing a sample fills the text box, and both are controls of the dashboard
    calls = []
    sample = w.Dropdown(options=["a", "b"], value="a")
    text = w.Text(value="text of a")
    sample.observe(lambda ch: setattr(text, "value", f"text of {ch['new']}"), names="value")

    def render(sample, text):
        calls.append((sample, text))
        return f"{sample}: {text}"

    dash = Dashboard({"sample": sample, "text": text}, render)
    assert calls == [("a", "text of a")]
    sample.value = "b"
    assert calls == [("a", "text of a"), ("b", "text of b")]  # once, with both values new
    assert "text of b" in dash.readout.value
    text.value = "pasted"
    assert calls[-1] == ("b", "pasted") and len(calls) == 3
    dash.update()  # an explicit update always draws
    assert len(calls) == 4
