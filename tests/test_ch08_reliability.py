"""Chapter 08's goodput dashboard: what it draws and says comes from nvcourse.reliability."""

import io

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pytest
from PIL import Image

from nvcourse import reliability as rel
from nvcourse.chapters import ch08_reliability as rv


def _pixels(live) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(live.png())))


def test_markers_and_readout_are_the_models_young_and_daly_intervals():
    view = rv.GoodputView()
    live, text = view(16384, 60, 10, 1.0)
    mtbf_s = rel.cluster_mtbf_hours(16384) * 3600
    daly = rel.daly_interval(60, mtbf_s)
    assert view.daly.get_xdata()[0] == pytest.approx(daly / 60)
    assert view.young.get_xdata()[0] == pytest.approx(rel.young_interval(60, mtbf_s) / 60)
    tau, best = rel.best_goodput(checkpoint_s=60, restart_s=600, mtbf_s=mtbf_s)
    assert view.daly.get_ydata()[0] == pytest.approx(best)
    assert f"best goodput {best:.1%}" in text and f"MTBI {mtbf_s / 3600:.2f} h" in text
    # the curve peaks where Daly says (within the plotted grid's resolution)
    curve = np.asarray(view.curve.get_ydata())
    assert curve.max() == pytest.approx(best, rel=1e-3)
    assert [t.get_text() for t in view.legend.get_texts()] == [f"Young: {rel.young_interval(60, mtbf_s) / 60:.0f} min",
                                                                f"Daly: {daly / 60:.0f} min"]


def test_more_gpus_or_more_failures_lower_the_best_goodput():
    view = rv.GoodputView()
    best = [float(view.daly.get_ydata()[0]) for g in (1024, 16384, 131072) if view(g, 60, 10, 1.0)]
    assert best[0] > best[1] > best[2]
    assert view(16384, 60, 10, 3.0)[0] and view.daly.get_ydata()[0] < best[1]


def test_updated_view_draws_what_a_fresh_one_draws_and_only_once():
    view = rv.GoodputView()
    for state in [(64, 5, 1, 0.1), (131072, 1200, 120, 10.0), (2048, 300, 30, 1.0)]:
        view(*state)[0].png()
    live, text = view(8192, 120, 20, 2.0)
    fresh, fresh_text = rv.GoodputView()(8192, 120, 20, 2.0)
    assert text == fresh_text
    assert np.array_equal(_pixels(live), _pixels(fresh))
    assert live.full_draws == 1


def test_dashboard_offers_only_valid_states():
    d = rv.goodput_dashboard()
    for g in rv.GPU_COUNTS[:: 3]:
        d.controls["gpus"].value = g
        assert d.last_error is None
    d.controls["rate_factor"].value = 10.0
    d.controls["checkpoint_s"].value = 1200
    assert d.last_error is None and "best goodput" in d.readout.value
