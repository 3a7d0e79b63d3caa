"""Chapter 04's pictures of the collectives (nvcourse/collectives/draw.py) speak the learner's language: the six
collectives' titles and meanings, rank names, before/after, the trace timeline's axis and title, and the measured vs
machine-model figure, in French under NVCOURSE_LANG=fr; in English the labels are unchanged and ``TITLES`` (public,
English) still holds the English titles.

The walk (tests/i18n_walks.py) draws every figure of the module; every catalog entry of it must be shown, and in
French no English one is left."""

from __future__ import annotations

import pytest
from i18n_walks import speaks, walk

_FRAME = """import sys
import matplotlib
matplotlib.use("Agg")
out = []


def labels(fig):
    fig = getattr(fig, "figure", fig)
    for ax in fig.axes:
        out.extend([ax.get_title(), ax.get_xlabel(), ax.get_ylabel()])
        out.extend(t.get_text() for t in [*ax.get_xticklabels(), *ax.get_yticklabels(), *ax.texts])
        out.extend(line.get_label() for line in ax.get_lines())
        legend = ax.get_legend()
        if legend is not None:
            out.extend(t.get_text() for t in legend.get_texts())


"""

_DRAW = """
from nvcourse.collectives import draw
from nvcourse.collectives.group import TraceEvent
labels(draw.draw_collectives())
events = [TraceEvent(rank=r, iteration=0, step=s, peer=(r - 1) % 2,
                     chunk=(r + s) % 2, nbytes=64, start=s * 1e-5 + r * 1e-6, end=s * 1e-5 + r * 1e-6 + 8e-6)
          for r in range(2) for s in range(2)]
labels(draw.plot_timeline(events))
labels(draw.plot_timeline([]))
rows = [{"op": "allreduce", "algo": a, "procs": 4, "nbytes": n, "measured_s": 1e-5 * n / 1024,
         "model_s": 8e-6 * n / 1024, "error": 0.25} for a in ("ring", "tree") for n in (1024, 4096)]
labels(draw.plot_measured_vs_machine(rows))
out.extend(x for pair in draw.titles().values() for x in pair)
"""


@pytest.fixture(scope="module", params=["en", "fr"])
def shown(request):
    return request.param, walk(_FRAME, _DRAW, request.param)


def test_every_collective_picture_label_is_shown_in_each_language(shown):
    language, text = shown
    speaks(text, language, ("nvcourse/collectives/draw.py",), least=15)


def test_the_six_pictures_read_in_the_language_and_titles_stay_english(shown):
    language, text = shown
    if language == "en":
        assert "broadcast (root 0)\nthe root's buffer is copied to every rank" in text
        assert "rank 3" in text and "before" in text and "time (µs)" in text
    else:
        assert "broadcast (racine 0)\nle tampon de la racine est copié sur chaque rang" in text
        assert "rang 3" in text and "avant" in text and "temps (µs)" in text
        assert "rank 3" not in text and "the root's buffer" not in text
    from nvcourse.collectives.draw import TITLES
    assert TITLES["broadcast"] == ("broadcast (root 0)", "the root's buffer is copied to every rank")
