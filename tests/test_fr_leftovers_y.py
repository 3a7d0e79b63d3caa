"""Guards for the last English a French reader saw in chapters 04 and 06c (code side): the formulas dashboard's
labels, the emulated links' measured times, the lab dashboard's NIC rates and the readouts' decimal comma. Each in
French (``NVCOURSE_LANG=fr``) and, where it must not move, in English, byte for byte."""

import gettext
import json
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from nvcourse import i18n
from nvcourse.chapters import ch04_collectives as ch04
from nvcourse.chapters import ch06c_multinode_lab as ch06c

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
NBSP = "\u00a0"
#: The emulated links' labels as chapter 04 builds them, and this run's times (seconds) in the notebook's shape.
TIMES = {("pcie", "PCIe Gen4 x16"): (0.0519, 0.0702), ("nvlink", "18 x NVLink 4"): (0.0218, 0.02)}


@pytest.fixture
def fr(monkeypatch):
    monkeypatch.setenv("NVCOURSE_LANG", "fr")
    yield
    plt.close("all")


@pytest.fixture
def en(monkeypatch):
    monkeypatch.setenv("NVCOURSE_LANG", "en")
    yield
    plt.close("all")


class _Marked(gettext.NullTranslations):
    """A stand-in catalog that marks every message ``_()`` translates: what carries the mark went through it."""

    def gettext(self, message: str) -> str:
        return "«" + message + "»"


def _cell(notebook: str, cell_id: str) -> str:
    nb = json.loads((NOTEBOOKS / notebook).read_text(encoding="utf-8"))
    return "".join(next(c for c in nb["cells"] if c.get("id") == cell_id)["source"])


def _tradeoff() -> dict[str, list[dict]]:
    return {ch04.emulated_label(kind, name): [{"algo": "ring", "time_s": ring}, {"algo": "tree", "time_s": tree}]
            for (kind, name), (ring, tree) in TIMES.items()}


# ------------------------------------------------------------------------------------ 1. formulas dashboard
def test_04_the_formulas_cell_is_one_call_and_types_no_label():
    cell = _cell("04_collectives_and_allreduce.ipynb", "c016")
    assert cell.strip() == "ch.formulas_dashboard()"


def test_04_every_formulas_label_goes_through_the_catalog(fr, monkeypatch):
    monkeypatch.setattr(i18n, "_translations", lambda lang, localedir: _Marked())
    d = ch04.formulas_dashboard()
    labels = {name: c.description for name, c in d.controls.items()}
    assert all(label.startswith("«") and label.endswith("»") for label in labels.values()), labels


def test_04_formulas_labels_are_french(fr):
    labels = [c.description for c in ch04.formulas_dashboard().controls.values()]
    assert "p ranks" not in labels and "size" not in labels, labels


def test_04_formulas_readout_writes_alpha_and_beta_the_french_way(fr):
    d = ch04.formulas_dashboard()
    # the log sliders' own readouts would print 3.4: hidden, the readout prints α and β with a decimal comma
    assert not d.controls["alpha_us"].readout and not d.controls["beta_GBps"].readout
    assert f"3,4{NBSP}µs" in d.readout.value and f"371{NBSP}GB/s" in d.readout.value
    assert d.controls["size"].label == f"256{NBSP}KiB"
    d.controls["alpha_us"].value = 1000.0
    assert f"1\u202f000{NBSP}µs" in d.readout.value and "e+" not in d.readout.value


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_04_formulas_dashboard_keeps_its_controls(monkeypatch, lang):
    # same ranges, defaults and values in both languages, as the notebook cell had them
    monkeypatch.setenv("NVCOURSE_LANG", lang)
    d = ch04.formulas_dashboard()
    try:
        a, b, p, s = (d.controls[k] for k in ("alpha_us", "beta_GBps", "procs", "size"))
        assert (a.min, a.max, a.value) == pytest.approx((-1, 3, 3.4))
        assert (b.min, b.max, b.value) == pytest.approx((-1, 3, 370.8))
        assert list(p.options) == [2, 4, 8, 16, 32, 64] and p.value == 4
        assert [v for _label, v in s.options] == [2**e for e in range(6, 31)] and s.value == 2**18
        assert d.values == {"alpha_us": pytest.approx(3.4), "beta_GBps": pytest.approx(370.8), "procs": 4,
                            "size": 2**18}
    finally:
        plt.close("all")


def test_04_formulas_dashboard_english_is_as_before(en):
    d = ch04.formulas_dashboard()
    assert [c.description for c in d.controls.values()] == ["α (µs)", "β (GB/s)", "p ranks", "size"]
    assert d.controls["alpha_us"].readout and d.controls["beta_GBps"].readout
    assert d.controls["size"].label == "256 KiB"
    assert d.readout.value.startswith("At 256 KiB the fastest is")  # no α/β line in English
    assert ("α (µs) = 3.4, β (GB/s) = 371, p ranks = 4, size = 256 KiB" in d.static_html())


# ------------------------------------------------------------------------------------- 2. measured times
def test_04_the_tradeoff_cell_prints_through_the_chapter_module():
    cell = _cell("04_collectives_and_allreduce.ipynb", "c027")
    assert "print(ch.tradeoff_lines(tradeoff))" in cell and ":28s" not in cell and "format_time" not in cell


def test_04_tradeoff_lines_never_glue_a_long_label(fr):
    tradeoff = _tradeoff()
    lines = ch04.tradeoff_lines(tradeoff).split("\n")
    assert max(len(label) for label in tradeoff) > 28  # the French labels: the old fixed width glued them
    starts = set()
    for label, line in zip(tradeoff, lines, strict=True):
        rest = line[len(label):]
        assert line.startswith(label) and rest[0] == " " and rest.lstrip().startswith("ring "), line
        starts.add(len(line) - len(rest.lstrip()))
    assert len(starts) == 1  # the algorithms line up under one another
    assert f"ring 51,9{NBSP}ms" in lines[0] and f"tree 70,2{NBSP}ms" in lines[0]  # decimal comma


def test_04_tradeoff_lines_follow_any_long_label(en):
    long = "a link whose name is much longer than twenty-eight characters"
    text = ch04.tradeoff_lines({long: [{"algo": "ring", "time_s": 1.5e-3}], "short": [{"algo": "tree",
                                                                                        "time_s": 2e-3}]})
    assert text == f"{long} ring 1.5 ms\n{'short':<{len(long) + 1}}tree 2 ms"


def test_04_tradeoff_lines_english_is_as_before(en):
    # the notebook's old cell, byte for byte
    from nvcourse.units import format_time

    tradeoff = _tradeoff()
    old = "\n".join(f"{label:28s}" + "   ".join(f"{r['algo']} {format_time(r['time_s'])}" for r in rows)
                    for label, rows in tradeoff.items())
    assert ch04.tradeoff_lines(tradeoff) == old


# ---------------------------------------------------------------------------------- 3. the NIC slider
def test_06c_nic_slider_reads_the_french_way(fr):
    d = ch06c.lab_dashboard()
    nic = d.controls["nic_Gbps"]
    labels = [label for label, _v in nic.options]
    assert nic.label == "1" and "1.0" not in labels and "0,25" in labels, labels
    assert not any("." in label for label in labels)
    assert nic.value == 1.0 and [v for _label, v in nic.options] == list(ch06c.LAB_NIC_GBPS)
    assert "NIC Gb/s = 1.0" not in d.static_html()


def test_06c_nic_slider_english_is_as_before(en):
    d = ch06c.lab_dashboard()
    nic = d.controls["nic_Gbps"]
    assert list(nic.options) == [0.25, 1.0, 10.0, 100.0, 400.0]  # as built before
    assert nic.label == "1.0" and nic.value == 1.0
    assert "NIC Gb/s = 1.0, α (µs) = 250" in d.static_html()


# -------------------------------------------------------------------------------- 4. decimal comma
def test_formula_settings_write_the_languages_decimal_mark(monkeypatch):
    monkeypatch.setenv("NVCOURSE_LANG", "fr")
    assert ch04.formula_settings(3.4, 370.8) == f"<div>α = 3,4{NBSP}µs, β = 371{NBSP}GB/s</div>"
    monkeypatch.setenv("NVCOURSE_LANG", "en")
    assert ch04.formula_settings(0.1, 1000.0) == "<div>α = 0.1 µs, β = 1,000 GB/s</div>"


# ------------------------------------------------------------------------------------------------ every float slider
def _slider_dashboard():
    import ipywidgets as w

    from nvcourse.widgets import Dashboard

    slider = w.FloatSlider(value=0.55, min=0.2, max=0.8, step=0.05, description="efficiency")
    return Dashboard({"x": slider}, lambda x: f"{x}"), slider


def test_a_float_sliders_value_is_written_the_french_way_beside_it(fr):
    # ipywidgets writes a float slider's readout with d3's format, always '0.55': in French the dashboard hides it
    # and a label beside the slider prints '0,55', following the slider (07's efficiency, 08's rate, 08b's share)
    board, slider = _slider_dashboard()
    box = board.children[0].children[0]
    assert not slider.readout and box.children[0] is slider and box.children[1].value == "0,55"
    slider.value = 0.6
    assert box.children[1].value == "0,60"
    assert board.values == {"x": 0.6}  # the control's value is what the render gets, as before


def test_a_float_slider_keeps_its_own_readout_in_english(en):
    board, slider = _slider_dashboard()
    assert slider.readout and board.children[0].children[0] is slider
