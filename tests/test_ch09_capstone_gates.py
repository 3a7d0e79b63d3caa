"""Chapter 09's fabric and serving views drive nvcourse.capstone_gates."""

from nvcourse import capstone
from nvcourse import capstone_gates as cg
from nvcourse.chapters import ch09_capstone

TARGETS = capstone.Targets(model="llama3-70b", training_tokens=2e12, max_days=30, max_usd=3e6, min_goodput=0.9,
                           min_efficiency=0.7, max_MW=3)
A = capstone.evaluate(capstone.Design("dgx-h100", 1024, tp=8), TARGETS)


def test_fabric_options_table_has_one_row_per_fabric():
    fabrics = {"IB static": cg.FabricChoice(), "IB adaptive": cg.FabricChoice(routing="ideal")}
    t = ch09_capstone.fabric_options_html(A, fabrics)
    assert t.count("<tr>") == 1 + len(fabrics)
    assert "✘ fabric busbw" in t and "✔ all" in t  # marks DejaVu has, with words (no emoji font needed)


def test_fabric_dashboard_follows_its_controls_and_explains_sharp_on_ethernet():
    d = ch09_capstone.fabric_dashboard(A)
    assert "fabric busbw" in d.readout.value and "✘ FAIL" in d.readout.value  # IB D-mod-k, random nodes
    d.controls["routing"].value = "ideal"
    assert "❌" not in d.readout.value
    d.controls["nic"].value = "roce-400g"
    d.controls["sharp"].value = True
    # SHARP on Ethernet: shown without SHARP and said so, not the model's error meant for code ("use sharp=False")
    assert d.last_error is None and "SHARP is InfiniBand only" in d.readout.value
    assert "Traceback" not in d.readout.value and "sharp=False" not in d.readout.value
    _, without = ch09_capstone.fabric_view(A, "roce-400g", "rail", 1.0, "ideal", False, "random")
    assert d.readout.value.endswith(without)


def test_serving_html_marks_the_chosen_tp():
    p = cg.serving_plan(cg.ServingTargets("llama3-70b", 30, 1000, 20000), "dgx-h100", batch=32)
    h = ch09_capstone.serving_html(p)
    assert h.count(">chosen<") == 1 and f"TP {p.tp} ×" in h
    assert "👉" not in h  # no emoji: a plain Debian/Chromium machine has no font for it
    assert "$" not in h
