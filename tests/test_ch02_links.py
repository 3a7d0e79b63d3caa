"""Chapter 02 helpers: measurements data, tables and dashboards."""
import pytest

from nvcourse import catalog, linkmodel
from nvcourse.chapters import ch02_links as linkviz


def test_measurements_reference_catalog_links_and_sources():
    ms = linkmodel.link_measurements()
    assert len(ms) >= 6
    for m in ms:
        catalog.get_link(m.link)  # raises if unknown
        assert m.source.startswith("https://")
        assert 0 < m.measured_GBps_dir <= m.line_GBps_dir, f"{m.id}: a measurement above line rate is a unit error"


def test_line_and_model_scale_with_link_count():
    h100 = next(m for m in linkmodel.link_measurements() if m.id == "h100-nvlink-8gpu-allreduce")
    assert h100.line_GBps_dir == 450.0  # 18 x 25 GB/s
    assert h100.model_GBps_dir == pytest.approx(370.8)  # 18 x 20.6 GB/s
    # the measured 370 GB/s is within 1 % of the model built from NCCL's per-link figure
    assert abs(h100.measured_GBps_dir / h100.model_GBps_dir - 1) < 0.01


def test_tables_contain_every_link_and_measurement():
    table = linkviz.link_table_html()
    for link in catalog.links().values():
        assert link.name in table
    assert linkviz.spec_vs_measured_html().count("<tr>") == len(linkmodel.link_measurements()) + 1


def test_plot_rejects_unknown_choice():
    with pytest.raises(ValueError, match="allowed: PCIe Gen4 x16"):
        linkviz.plot_effective_bandwidth(["PCIe Gen9"])
    with pytest.raises(ValueError, match="at least one"):
        linkviz.plot_effective_bandwidth([])


def test_alpha_beta_dashboard_reports_regime():
    d = linkviz.alpha_beta_dashboard()
    assert "bandwidth-bound" not in d.readout.value or "latency-bound" not in d.readout.value
    d.controls["size"].value = 2**10  # 1 KiB on 371 GB/s: latency-bound
    assert "latency-bound" in d.readout.value
    d.controls["size"].value = 2**30
    assert "bandwidth-bound" in d.readout.value


def test_chooser_dashboard_never_tracebacks_on_empty_selection():
    d = linkviz.link_chooser_dashboard()
    d.controls["links"].value = ()
    assert d.last_error is not None and "choose at least one link" in d.readout.value


def _pixels(live):
    import io

    import numpy as np
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(live.png())))


def test_alpha_beta_view_updated_in_place_draws_what_a_fresh_one_draws():
    import numpy as np

    view = linkviz._AlphaBetaView()
    for state in [(3.4, 370.8, 2**20), (100.0, 1.0, 1), (0.1, 2000.0, 2**34)]:
        live, text = view(*state)
        live.png()
    live, text = view(5.0, 50.0, 2**24)
    fresh, fresh_text = linkviz._AlphaBetaView()(5.0, 50.0, 2**24)
    assert text == fresh_text and "16 MiB" in text
    assert np.array_equal(_pixels(live), _pixels(fresh))
    assert live.full_draws == 1  # three updates, the axes were drawn once


def test_link_chooser_view_shows_only_the_chosen_links():
    import numpy as np

    view = linkviz._ChooserView()
    view(tuple(linkviz.PER_GPU_CHOICES), True).png()
    live = view(("PCIe Gen4 x16", "H100: 18 x NVLink 4"), False)
    assert [t.get_text() for t in view.legend.get_texts()] == ["PCIe Gen4 x16", "H100: 18 x NVLink 4"]
    visible = [a for a in live.artists if a.get_visible()]
    assert len(visible) == 2 * 2 + 1  # two curves and two n½ dots, no line rates, the legend
    again = linkviz._ChooserView()(("PCIe Gen4 x16", "H100: 18 x NVLink 4"), False)
    assert np.array_equal(_pixels(live), _pixels(again))
    with pytest.raises(ValueError, match="choose at least one link"):
        view((), True)
