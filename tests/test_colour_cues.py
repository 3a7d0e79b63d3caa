"""Marks the prose names by colour are also named, and drawn, by something that survives greyscale and colour
blindness: the fabric's hottest cables are its thickest lines, the exposed time is a hatched band, a pasted-input
error is a note that starts with a warning sign."""
from __future__ import annotations

from matplotlib.collections import LineCollection, PathCollection, PolyCollection

from nvcourse import overlap
from nvcourse.chapters import ch06_fabrics, ch06b_nccl_in_practice, ch07b_overlap


def test_the_hottest_fabric_cables_are_the_thickest_lines():
    fig, text = ch06_fabrics.allreduce_view(128, "ib-ndr", 1.0, "dmodk", "random", "ring")
    ax = fig.axes[0]
    hot = [c for c in ax.collections if isinstance(c, LineCollection) and c.get_zorder() == 3]
    rest = [c for c in ax.collections if isinstance(c, PathCollection) and c.get_zorder() == 1]
    assert hot and rest
    assert min(hot[0].get_linewidths()) > max(w for c in rest for w in c.get_linewidths())
    assert "thickest lines, in orange: the hottest cables" in text


def test_the_exposed_time_is_a_hatched_band_in_the_figure_and_its_legend():
    toy = overlap.dp_bucket_timeline(100e6, 1.0, 25e6, lambda nbytes: 0.3)  # the chapter's toy step
    fig = ch07b_overlap.timeline_figure(toy, unit=1.0, unit_label="s")
    ax = fig.axes[0]
    bands = [c for c in ax.collections if isinstance(c, PolyCollection) and c.get_hatch()]
    assert len(bands) == 1 and bands[0].get_hatch() == ch07b_overlap.EXPOSED_HATCH
    legend = {t.get_text(): h for t, h in zip(ax.get_legend().get_texts(), ax.get_legend().legend_handles, strict=True)}
    assert legend["GPU waits"].get_hatch() == ch07b_overlap.EXPOSED_HATCH
    assert not any(legend[k].get_hatch() for k in ("compute", "collective"))


def test_a_pasted_input_error_is_a_note_that_starts_with_a_warning_sign():
    box = ch06b_nccl_in_practice.nccl_tests_box()
    box.controls["text"].value = "hello world"
    assert box.last_error and "expected" in box.last_error
    assert 'class="nvcourse-note"' in box.readout.value and "\u26a0 " in box.readout.value
