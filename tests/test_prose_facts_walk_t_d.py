"""Sentences of chapters 07, 07b and 08 that a fresh learner found at odds with a readout, the rule another chapter
applies, or each other: each now holds against the model it describes. Expected values come from the chapters'
text; markdown line breaks read as spaces."""

import html
import json
import re
from functools import cache
from pathlib import Path

import pytest

from nvcourse import rooflines
from nvcourse.chapters import ch08_reliability as ch08
from nvcourse.observability import counters

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
NB07, NB07B, NB08 = ("07_training_at_scale.ipynb", "07b_overlapping_communication.ipynb",
                     "08_reliability_and_operations.ipynb")


@cache
def cell(nb: str, cid: str) -> str:
    cells = json.loads((NOTEBOOKS / nb).read_text(encoding="utf-8"))["cells"]
    return next(re.sub(r"\s+", " ", "".join(c["source"])) for c in cells if c["id"] == cid)


def test_07b_key_point_threshold_is_c_over_r_w_as_in_section_7():
    """The key point's number is §7's DP threshold C/(rW), not C/W: the §7 example (8,192 tokens per GPU, 8 ranks
    per node) lies below C/W and still hides, so 'below C/W, communication-bound' would be wrong there."""
    key = cell(NB07B, "c018")
    assert "$C/(rW)$ in tokens per GPU is the one number to remember" in key
    assert "$r = 1$ gives $C/W$): below it DP is communication-bound on that link" in key
    assert "- $C/W$ in tokens per GPU" not in key
    C, W = rooflines.gpu_rates("dgx-h100", link="nic")
    example = rooflines.dp_roofline(8192, C, W, per_node=8)
    assert 8192 < C / W and not example.comm_bound  # the case C/W gets wrong
    for r in (1, 2, 4, 8):  # the key point's rule is the model's, for every ranks-per-node
        for tokens in (512, 2048, 4096, 8192, 32768):
            assert rooflines.dp_roofline(tokens, C, W, per_node=r).comm_bound == (tokens < C / (r * W))


def _rows(table: str) -> dict[str, list[str]]:
    """The alert table's body rows by metric, cells as text (the collapsed counter notes dropped)."""
    table = re.sub(r"<details>.*?</details>", "", table)
    out = {}
    for tr in re.findall(r"<tr>(.*?)</tr>", table)[1:]:
        tds = [html.unescape(re.sub(r"<[^>]+>", "", td)) for td in re.findall(r"<td[^>]*>(.*?)</td>", tr)]
        out[tds[0]] = tds
    return out


@pytest.mark.parametrize("fraction", [0.05, 0.3, 0.5, 0.9])
def test_08_alert_table_writes_the_rules_08b_and_09_apply(fraction):
    """08's table and prose state the step-time and symbol-error levels as 08b's thresholds table (the rows 09's
    readout uses too) writes them, and say that busbw's fixed levels give way to the job's own, derived in 08b."""
    rows = _rows(ch08.alerts_table_html())
    th = counters.alert_thresholds(fraction)
    by = {r[0]: r for r in th.rows()}
    step = next(r for m, r in rows.items() if m.startswith("step time"))
    for ours, theirs in zip(step[2:4], by["step time / baseline"][1:3], strict=True):  # strict ">", as 08b/09
        assert ours.split()[0] == theirs.split()[0] == ">" and float(ours.split()[1]) == float(theirs.split()[1])
    sym = next(r for m, r in rows.items() if "symbol errors" in m)
    assert by["SymbolError growth on a port"][1] == "≥ 1 new per hour, three hours running"
    assert (sym[2], sym[3]) == ("≥ 1, three hours running", "≥ 100 in any one hour")
    assert "three hours" not in sym[4]  # the window belongs to the warn level only, as in 08b and 06d's rule
    assert "critical at ≥ 100 per hour" in next(r["when"] for r in counters.ib_link_rule() if "Symbol" in r["counter"])
    pol = counters.alert_policy()
    note = ("The busbw levels (0.9 and 0.8) are a starting default: chapter 08b (§4.1) derives a job's own from how "
            "much of its step is bandwidth-bound (warn at 1 − 0.5·f*, critical at 1 − f*, f* being the link loss that "
            "slows the step by 10%), and chapter 09 applies those.")
    assert note in html.unescape(ch08.alerts_table_html())
    f = counters.tolerable_link_loss(fraction)
    assert th.busbw_ratio_warn == pytest.approx(1 - pol.warn_margin * f) and th.busbw_ratio_critical == 1 - f
    text = cell(NB08, "c016")
    assert ("warn when a step is more than 5 % over its healthy baseline, critical past 10 %") in text
    assert (round(pol.step_ratio_warn - 1, 2), pol.max_job_slowdown) == (0.05, 0.10)


def test_08_check_yourself_1_reads_as_the_dashboard_shows_it():
    """Check yourself 1 (4,096 GPUs, a 2-minute checkpoint) quotes the MTBI and Young's interval as the dashboard
    prints them at that setting, and its arithmetic holds unrounded."""
    import matplotlib.pyplot as plt

    from nvcourse import reliability as rel

    text = cell(NB08, "c024")
    view = ch08.GoodputView()
    _live, readout = view(4096, 120, 10, 1.0)
    legend = [t.get_text() for t in view.legend.get_texts()]
    plt.close("all")
    m = rel.cluster_mtbf_hours(4096) * 3600
    tau = rel.young_interval(120, m)
    assert f"MTBI {m / 3600:.2f} h" in readout and f"Young: {tau / 60:.0f} min" in legend
    answer = (f"M = 1/(4,096 × 1.97e-5) ≈ {m / 3600:.2f} h; τ = √(2 × 120 s × {round(m, -1):,.0f} s) ≈ "
              f"{round(tau, -1):,.0f} s ≈ {tau / 60:.0f} min.")
    assert answer in text
    assert (tau / 60 > 54.4) and round(tau / 60) == 54  # 55, from the rounded rate, is what the dashboard never shows


def test_08_predict_answer_best_interval_as_the_dashboard_prints_it():
    import matplotlib.pyplot as plt

    from nvcourse import reliability as rel

    m = rel.cluster_mtbf_hours(16384) * 3600
    best = rel.best_goodput(checkpoint_s=60, restart_s=600, mtbf_s=m)[0] / 60
    for restart in (5, 10):  # only the restart changes: the readout's "at N min" does not move
        _live, readout = ch08.GoodputView()(16384, 60, restart, 1.0)
        assert f"at {best:.0f} min" in readout
    plt.close("all")
    assert f"stays at about {best:.0f} minutes ({best:.1f}) when only the restart changes" in cell(NB08, "c011a")


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_08_fault_message_leaves_no_empty_parentheses_in_either_language(monkeypatch, lang):
    """The timeout message as the process group writes it, in English and in French (whose catalogue puts a
    no-break space before ';'): the chapter's message drops the pids and leaves no '( ;' behind."""
    from nvcourse.collectives import CollectiveError
    from nvcourse.i18n import translate

    monkeypatch.setenv("NVCOURSE_LANG", lang)
    template = translate("{what} timed out: no progress for {seconds} s; ranks {ranks} did not finish "
                         "(pids {pids}; steps done per rank {steps})")
    assert (lang == "fr") == ("pids {pids}\u00a0;" in template)  # the case the pattern missed
    raw = template.format(what="allreduce", seconds="1", ranks=[0, 1], pids=[31, 32], steps=[3, 2])
    shown = ch08.fault_message(CollectiveError(raw))
    assert "pid" not in shown and "31" not in shown
    assert not re.search(r"\(\s*;", shown) and "()" not in shown
    assert re.search(r"\(\w[^()]*\[3, 2\]\)$", shown), shown  # "(steps done per rank [3, 2])", a word first


def test_08_cv_is_defined_where_the_jitter_bound_uses_it():
    from nvcourse import reliability as rel

    text = cell(NB08, "c014")
    assert r"$1 + \text{cv}\sqrt{2\ln N}$ (cv: the step time's standard deviation ÷ mean, 2 % here)" in text
    # 2 % is the jitter the table above uses: its x1.041 at 8 GPUs is 1 + 0.02 sqrt(2 ln 8)
    assert f"×{rel.jitter_slowdown(8, cv=0.02):.3f}" in text


def test_07_step_table_defines_its_symbols_where_it_uses_them():
    """§2's TP row counts $b\\,s\\,h$ values and says SMs: s and h are defined in that paragraph, SM links the
    glossary (07b, which defines it, comes later)."""
    text = cell(NB07, "c004")
    table = text[text.index("| part | what moves |"):]
    before = text[:text.index("| part | what moves |")]
    assert "micro-batches of $b$ sequences of $s$ tokens" in before
    assert r"($b\,s\,h$ values, $h$: hidden size)" in table
    assert "few [SMs](../docs/glossary.md#sm) on communication" in table
    glossary = (NOTEBOOKS.parent / "docs" / "glossary.md").read_text(encoding="utf-8")
    assert '<a id="sm"></a>' in glossary


def test_07b_says_when_its_symbols_mean_something_else_than_in_07():
    """07b reuses G (gradient bytes) and F (FFN width), which chapter 07 uses for the GPU count and the peak FLOP/s:
    07b says so once, at its top; MLP is glossed where TP first splits it."""
    assert "$G$ GPUs need" in cell(NB07, "c002") and "peak $F$" in cell(NB07, "c002")
    assert ("Two letters change meaning from chapter 07: here $G$ is a gradient's size in bytes (not the GPU count) "
            "and $F$ a layer width (not peak FLOP/s, here $C$).") in cell(NB07B, "c000")
    assert "With $G$ bytes of gradients" in cell(NB07B, "c004")
    c014 = cell(NB07B, "c014")
    assert "$F$ is the width of the MLP's inner layer" in c014
    c010 = cell(NB07B, "c010")
    assert "each layer's MLP (the feed-forward block, [glossary](../docs/glossary.md#ffn)) into two GEMMs" in c010
    earlier = " ".join(cell(NB07B, f"c{i:03d}") for i in range(10))
    assert "MLP" not in earlier.replace("MLP (the feed-forward block", "")  # c010 is the first use


def test_08_readout_never_prints_a_nonzero_rate_as_zero():
    """At every GPU count the slider offers, the readout's interruptions per day is not 0.0 and reads within 5 % of
    the rate (64 GPUs: 0.03, once printed 0.0)."""
    import matplotlib.pyplot as plt

    from nvcourse import reliability as rel

    view = ch08.GoodputView()
    for gpus in ch08.goodput_dashboard().controls["gpus"].options:
        _live, readout = view(gpus, 60, 10, 1.0)
        per_day = float(re.search(r"· ([\d.]+) interruptions per day", readout).group(1))
        true = 24 / rel.cluster_mtbf_hours(gpus)
        assert per_day > 0 and abs(per_day - true) <= max(0.05 * true, 0.05), (gpus, per_day, true)
    plt.close("all")


def test_08_headings_say_which_sections_are_off_the_core_path():
    """Every section reading_time.PATH keeps off chapter 08's core path says '(reference)' in its heading, as the
    objectives do; the core sections do not."""
    from nvcourse.devtools import reading_time as rt

    cells = json.loads((NOTEBOOKS / NB08).read_text(encoding="utf-8"))["cells"]
    headings = [line for c in cells if c["cell_type"] == "markdown" for line in "".join(c["source"]).splitlines()
                if re.match(r"## \d+\.", line)]
    assert len(headings) == 7
    for h in headings:
        assert h.endswith("(reference)") == h.startswith(rt.PATH["08"]), h
