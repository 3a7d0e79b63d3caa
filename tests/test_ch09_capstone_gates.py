"""Chapter 09's fabric and serving views drive nvcourse.capstone_gates."""

from nvcourse import capstone
from nvcourse import capstone_gates as cg
from nvcourse.chapters import ch09_capstone
from nvcourse.markup import html_escape

TARGETS = capstone.Targets(model="llama3-70b", training_tokens=2e12, max_days=30, max_usd=3e6, min_goodput=0.9,
                           min_efficiency=0.7, max_MW=3)
A = capstone.evaluate(capstone.Design("dgx-h100", 1024, tp=8), TARGETS)


def test_fabric_options_table_has_one_row_per_fabric():
    fabrics = {"IB static": cg.FabricChoice(routing="dmodk"), "IB adaptive": cg.FabricChoice()}
    t = ch09_capstone.fabric_options_html(A, fabrics)
    assert t.count("<tr>") == 1 + len(fabrics)
    assert "✘ fabric busbw" in t and "✔ all" in t  # marks DejaVu has, with words (no emoji font needed)


def test_fabric_dashboard_follows_its_controls_and_explains_sharp_on_ethernet():
    d = ch09_capstone.fabric_dashboard(A)
    # IB's default, adaptive routing: random nodes pass, and the readout says what AR needs in the switches
    assert "fabric busbw" in d.readout.value and "✘ FAIL" not in d.readout.value
    assert "Needs: adaptive routing enabled in the switches" in d.readout.value
    d.controls["routing"].value = "dmodk"  # AR off in the switches: the static routes fail at 128 scattered nodes
    assert "✘ FAIL" in d.readout.value and "static routes" in d.readout.value and "Needs:" not in d.readout.value
    d.controls["sharp"].value = True
    assert "✘ FAIL" not in d.readout.value and "NCCL_COLLNET_ENABLE=1" in d.readout.value
    d.controls["sharp"].value = False
    d.controls["nic"].value = "roce-400g"  # static routes are InfiniBand's: Ethernet shows ECMP, and says so
    assert "Static routes are InfiniBand's" in d.readout.value and "ECMP hashing" in d.readout.value
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


def test_fabric_compare_has_one_row_per_fabric_and_the_full_tables_behind_a_toggle():
    fabrics = {"IB static": cg.FabricChoice(routing="dmodk"), "IB adaptive": cg.FabricChoice(),
               "IB + SHARP": cg.FabricChoice(sharp=True)}
    small = capstone.evaluate(capstone.Design("dgx-h100", 512, tp=8), TARGETS)
    html = ch09_capstone.fabric_compare_html({"512": small, "1,024": A}, fabrics)
    short, full = html.split("<details>")
    assert short.count("<tr>") == 1 + len(fabrics) and short.count("<th ") == 1 + 2 * 2
    for name, f in fabrics.items():  # the share printed is the gate's, for each job
        row = short.split(f">{name}</td>")[1].split("</tr>")[0]
        for rep in (small, A):
            assert f">{cg.fabric_gate(rep, f).ratio:.0%}</td>" in row
    assert ch09_capstone.fabric_options_html(A, fabrics) in full
    # what each row assumes is configured, in words, for the rows that need something (not static routes)
    assert f"<b>IB + SHARP</b> needs: {html_escape(cg.NEEDS['SHARP'])}" in short and "NCCL_COLLNET_ENABLE=1" in short
    assert "<b>IB adaptive</b>, <b>IB + SHARP</b> need: adaptive routing enabled in the switches" in short
    assert "<b>IB static</b>" not in short


def test_serving_summary_and_monitoring_readouts():
    st = cg.ServingTargets("llama3-70b", 30, 1000, 20000, prompt_tokens=4096)
    plans = [cg.serving_plan(st, s, batch=32) for s in ("dgx-h100", "gb200-nvl72")]
    short, full = ch09_capstone.serving_summary_html(plans).split("<details>")
    assert short.count("<tr>") == 1 + len(plans) and "TTFT ms" in short
    assert all(ch09_capstone.serving_html(p) in full for p in plans)
    fr = cg.fabric_gate(A, cg.FabricChoice(routing="ideal"))
    mon = cg.monitoring_requirements(fr)
    short, full = ch09_capstone.monitoring_html(mon).split("<details>")
    th = mon.thresholds
    assert f"&lt; {th.busbw_ratio_critical:.3f}" in short and f"<b>{th.tolerable_loss:.1%}</b>" in short
    assert all(c in full for c in ("LinkDownedCounter", "Xid 79"))
    # InfiniBand: 8 of chapter 08b's 9 fault classes (RoCE congestion belongs to the other fabric kind), and it says so
    from nvcourse.observability import counters

    assert (len(mon.counters), len(counters.signals())) == (8, 9)
    assert "each of the 8 fault classes that apply to this fabric (chapter 08b lists 9;" in short + full
    row = ch09_capstone.monitoring_entry(mon)
    assert "partition (P_Key) mismatch" in row and "DCGM_FI_DEV" not in row and len(row) < 400
    log = ch09_capstone.decision_log_rows(fabric=fr, serving=plans[0], isolation_result=cg.isolation_requirements(
        A, cg.FabricChoice(routing="ideal"), cg.IsolationTargets()), monitoring=mon)
    assert log.count("\n| **") == 4 and log.splitlines()[-1].startswith("| **Monitoring** |")
