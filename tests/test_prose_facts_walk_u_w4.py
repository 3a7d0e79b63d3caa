"""Guards for the fixes after a fresh learner walked chapters 07b, 07c, 08b and 09 (walkthrough U, W4): each
claim is computed from the chapter's model over the states its dashboard allows and looked for in the notebook as
written (line breaks read as spaces), so a change of model or text that breaks it fails here."""

import json
import re
from pathlib import Path

import pytest

from nvcourse import capstone, overlap, serving
from nvcourse.chapters import ch07b_overlap as ch07b
from nvcourse.chapters import ch07c_inference as ch07c
from nvcourse.chapters import ch08b_security_and_observability as ch08b
from nvcourse.chapters import ch09_capstone
from nvcourse.observability import counters, drill
from nvcourse.units import format_time

ROOT = Path(__file__).resolve().parents[1]
NB07B, NB07C = "07b_overlapping_communication.ipynb", "07c_communication_for_inference.ipynb"
NB08B, NB09 = "08b_security_and_observability.ipynb", "09_capstone_design_a_cluster.ipynb"


def _nb(nb: str) -> list[dict]:
    return json.loads((ROOT / "notebooks" / nb).read_text(encoding="utf-8"))["cells"]


def cell(nb: str, cid: str) -> str:
    return re.sub(r"\s+", " ", next("".join(c["source"]) for c in _nb(nb) if c["id"] == cid))


def shown(nb: str, cid: str) -> str:
    """The committed text outputs of a code cell (stream and text/markdown)."""
    out = []
    for o in next(c for c in _nb(nb) if c["id"] == cid)["outputs"]:
        out.append("".join(o.get("text", "")))
        out.append("".join(o.get("data", {}).get("text/markdown", "")))
    return "".join(out)


# ------------------------------------------------------------------------------------------------------------ 07b
def test_07b_the_reused_letters_are_said_once_at_the_top():
    top = cell(NB07B, "c000")
    assert ("Two letters change meaning from chapter 07: here $G$ is a gradient's size in bytes (not the GPU count) "
            "and $F$ a layer width (not peak FLOP/s, here $C$).") in top
    # one place: the two local reminders it replaces are gone, and C is the FLOP/s where the chapter uses it
    assert "not chapter 07's GPU count" not in cell(NB07B, "c004")
    assert "not chapter 07's peak FLOP/s" not in cell(NB07B, "c014")
    assert "With $C$ the GPU's FLOP/s" in cell(NB07B, "c014")


def test_07b_collective_matmul_says_what_it_does_before_its_names():
    text = cell(NB07B, "c010")
    said = ("**Collective matmul** does that overlapping: it cuts the GEMM and its collective into $c$ chunks and runs "
            "them as a two-stage pipeline, chunk $i$'s reduce-scatter running while chunk $i+1$ is multiplied.")
    assert said in text
    for name in ("`--tp-comm-overlap`", "userbuffers", "async-TP", "Wang et al. 2023"):
        assert text.index(said) < text.index(name), name


def test_07b_section_2_says_why_the_two_dp_cases_differ_ranks_per_node():
    small = overlap.dp_scenario("llama3-8b", "dgx-h100", 64)
    big = overlap.dp_scenario("llama3-70b", "dgx-h100", 64, tp=8)
    assert (small.gpus_per_node, big.gpus_per_node) == (8, 1)  # r = 8 against r = 1
    assert 0.8 < small.grad_bytes / big.grad_bytes < 1.2  # "Gradient sizes are alike"
    assert small.min_bucket() < float("inf") and big.min_bucket() == float("inf")  # one hides, one does not
    s2 = cell(NB07B, "c006").split("## 3.")[0]
    assert ("Gradient sizes are alike; $r$ (DP ranks per node, each with its own NIC) differs. The 8B model's 8 DP "
            "ranks in a node share its 8 NICs ($r$ = 8), while TP 8 leaves one rank of each 70B DP group per node, "
            "whose NIC carries the whole ring ($r$ = 1).") in s2


def test_07b_section_3_ties_the_two_numbers_of_the_same_case_where_the_table_is_read():
    sc = overlap.dp_scenario("llama3-8b", "dgx-h100", 64)
    at0, at15 = (sc.timeline(25 * 2**20, sm_fraction=f).exposed_s for f in (0.0, 0.15))
    first = "".join(next(c["source"] for c in _nb(NB07B) if c["id"] == "c008")).split("\n\n")[0]
    first = re.sub(r"\s+", " ", first)
    assert first.startswith('Yes, by far: "fully hidden" communication still costs compute time.')
    assert (f"The table's 15 % row, where the dashboard of §8 also starts, shows {format_time(at15)} exposed for the "
            f"25 MiB case that §2 put at {format_time(at0)}: the difference is the SM slowdown.") in first
    assert ch07b.overlap_dashboard().controls["sm_fraction"].value == 0.15


def test_07b_q3_says_why_its_prefetch_numbers_exceed_section_4s():
    def exposed(nodes: int, sm: float, prefetch: int) -> float:
        return ch07b.fsdp_case("llama3-8b", "dgx-h100", nodes, prefetch=prefetch, sm_fraction=sm).exposed_s

    # §4 prints 8 nodes with no SMs taken; Q3 reads the dashboard: 64 nodes, 15 % taken
    assert 'ch.prefetch_lines("llama3-8b", "dgx-h100", 8)' in "".join(
        next(c["source"] for c in _nb(NB07B) if c["id"] == "c009"))
    assert round(exposed(64, 0.15, 0) * 1e3) == 248 and round(exposed(64, 0.15, 1) * 1e3) == 42
    for d in (0, 1):  # "64 nodes lengthen every gather"
        assert exposed(64, 0.0, d) > exposed(8, 0.0, d)
    with_sm, without = exposed(64, 0.15, 1), exposed(64, 0.0, 1)
    assert with_sm - without > 0.5 * with_sm  # "most of the 42 ms is the 15 % SM slowdown"
    assert ("Both exceed §4's (8 nodes, no SMs taken): 64 nodes lengthen every gather, and most of the 42 ms is the "
            "15 % SM slowdown.") in cell(NB07B, "c016")


def test_07b_reading_time_did_not_grow():
    from nvcourse.devtools import reading_time

    assert reading_time.measure_chapter(ROOT / "notebooks" / NB07B).reading_min <= 41


# ------------------------------------------------------------------------------------------------------------ 07c
def test_07c_section_2_opens_with_what_to_trust():
    s2 = cell(NB07C, "c004").split("## 2.")[1]
    trust = "What to trust: a measurement beats a model; the models (the course's and NCCL's) rank the options."
    assert trust in s2
    assert s2.index(trust) < s2.index("At decode sizes a custom one-shot kernel") < s2.index("**Predict**")
    assert s2.index("This section answers:") < s2.index(trust)


def test_07c_section_10_adds_only_the_mechanism_of_the_techniques_section_8_defines():
    s8, more = cell(NB07C, "c020a"), cell(NB07C, "c07cmore")
    assert "**§8's techniques in more detail.** §8 says what each is and gives its result; here, only the mechanism." \
        in more
    # each definition or result said once: in §8 (or its table), not again in §10
    assert "caches one small compressed vector per token and layer" in s8 and "caches one compressed" not in more
    assert "a decode step recorded once and replayed" in s8 and "records a decode step once" not in more
    assert "checks several drafted tokens per step" in s8 and "serves more than one output token" not in more
    from nvcourse.chapters import ch07c_serving

    dp = next(r for r in ch07c_serving.serving_rows() if r["key"] == "attention-dp")
    assert "8×" in dp["short"] and "eight times" not in more  # the table gives the ratio; §10 does not retype it


def test_07c_descriptor_sentence_says_what_the_table_shows():
    from nvcourse import inference

    prompt = 32768 * inference.kv_bytes_per_token("llama3-70b") / 8
    small, page = serving.paged_kv_transfer(prompt, 16384), serving.paged_kv_transfer(prompt, 2**20)
    ratio = small["time_s"] / page["time_s"]
    assert round(ratio) == 5 and page["bound"] == "link" and small["bound"] == "descriptors"
    assert ("With 16 KiB descriptors the transfer is about five times slower than with 1 MiB ones, which run at the "
            "link's rate.") in cell(NB07C, "c020c")
    from nvcourse.chapters import ch07c_serving

    short = next(r for r in ch07c_serving.serving_rows() if r["key"] == "paged")["short"]
    assert short == f"16 KiB descriptors: {ratio:.1f}× slower than 1 MiB ones"


def test_07c_dashboard_notes_a_kv_path_the_chosen_system_does_not_have():
    from nvcourse import catalog

    d = ch07c.inference_dashboard()
    for system in d.controls["system"].options:
        for label, (path, _sid, senders) in ch07c.KV_PATHS.items():
            d.controls["system"].value, d.controls["kv_path"].value = system, label
            d.update()
            text = d.readout.value
            assert d.last_error is None, (system, label)
            missing = path == "nvlink" and catalog.get_system(system).gpus_per_domain < 2 * senders
            assert ("not available on this system" in text) == missing, (system, label)
            assert "TTFT" in text
    assert catalog.get_system("dgx-h100").gpus_per_domain < 16 <= catalog.get_system("gb200-nvl72").gpus_per_domain


def test_07c_section_6_asks_its_worked_question_before_the_answer():
    s6 = cell(NB07C, "c012").split("## 6.")[1] + " " + cell(NB07C, "c014")
    answer = ("Answer: over one NIC the move is a sizeable part of the time to first token (TTFT); over eight NICs or "
              "NVLink, a small one.")
    assert answer in cell(NB07C, "c014") and "Answer:" not in cell(NB07C, "c012")
    assert s6.index("**Worked question.**") < s6.index("**Predict**") < s6.index(answer)


# ------------------------------------------------------------------------------------------------------------ 08b
def test_08b_drill_noise_hint_holds_for_every_incident_it_can_draw():
    intro = cell(NB08B, "c029")
    assert ("noise: in most incidents one healthy port's raw bit error rate (raw BER: errors FEC is correcting) is "
            "high enough to be listed, which alone is not a fault") in intro
    assert "well above the others'" not in intro
    listed_one = total = 0
    for seed in range(200):
        for name in drill.INCIDENTS:
            run = drill.incident(name, seed)
            healthy = [p for p, v in run.ports.items() if p != run.component
                       and v.get("raw_ber", 0.0) >= drill.RAW_BER_SHOWN]
            assert len(healthy) <= 1, (seed, name)  # "one healthy port", never more
            listed_one += len(healthy) == 1
            total += 1
            if run.fault == "flapping link":  # the faulty port's raw BER is the highest: no hint points to the noise
                assert run.ports[run.component]["raw_ber"] > max(
                    (v["raw_ber"] for p, v in run.ports.items() if p != run.component), default=0.0)
    assert total > listed_one >= 0.9 * total  # "in most incidents", not all


@pytest.mark.parametrize("nodes", [1, 2, 4, 16, 64])
def test_08b_thresholds_readout_rounds_the_tolerable_loss_one_way_and_never_shows_c_as_zero(nodes):
    d = ch08b.thresholds_dashboard()
    compute = [10 ** (e / 10) for e in range(-30, 1, 5)]  # the compute slider's range, 1 ms to 1 s
    for compute_s in compute:
        for exp in (24, 27, 30, 33):  # the gradients slider, 16 MiB to 8 GiB
            c = counters.bandwidth_fraction("dgx-h100", 8, 2**exp, compute_s, nodes=nodes)
            t = counters.alert_thresholds(c)
            text = ch08b.thresholds_readout(c, t)
            loss = f"{t.tolerable_loss:.1%}"
            assert f"may lose up to <b>{loss}</b>" in text
            assert f"a link losing {loss} of its bandwidth" in text and f"tolerable loss ({loss})" in text
            shown_c = re.search(r"c = <b>([\d.]+)%</b>", text).group(1)
            assert float(shown_c) > 0, (compute_s, exp, nodes)
            assert f"&lt; {1 - t.tolerable_loss:.3f}" in text  # critical busbw is 1 − the loss said above
    assert list(d.controls["nodes"].options) == [1, 2, 4, 16, 64]


def test_08b_thresholds_extreme_state_reads_consistently():
    c = counters.bandwidth_fraction("dgx-h100", 8, 2**24, 1.0, nodes=1)
    t = counters.alert_thresholds(c)
    text = ch08b.thresholds_readout(c, t)
    assert "c = <b>0.01%</b>" in text and "<b>99.9%</b>" in text and "(100%)" not in text
    assert "&lt; 0.001" in text


@pytest.mark.parametrize("qos", ["none", "ets", "strict"])
def test_08b_noisy_neighbour_at_duty_zero_says_the_neighbour_is_idle(qos):
    from nvcourse import isolation

    dash = ch08b.noisy_neighbour_dashboard()
    for nbytes in (2**20, 2**28, 2**32):
        _fig, idle = dash._render(qos=qos, share=0.5, duty=0.0, nbytes=nbytes)
        alone = isolation.noisy_neighbour(nbytes, qos=qos, victim_share=0.5, duty=0.0).alone_rate_GBps
        cells = re.findall(r"<td[^>]*>(.*?)</td>", idle)
        row = cells.index("while the neighbour is idle")
        assert cells[row + 1] == f"{alone:.2f}"  # the victim's rate alone: an idle neighbour shares nothing
        assert "while the neighbour sends" not in idle and "Traceback" not in idle
        assert idle.startswith("<p>Victim all-reduce: <b>×1.00</b>")
        _fig, busy = dash._render(qos=qos, share=0.5, duty=0.1, nbytes=nbytes)
        assert "while the neighbour sends" in busy and "is idle" not in busy


# ------------------------------------------------------------------------------------------------------------ 09
def _targets() -> capstone.Targets:
    ns = {"capstone": capstone}
    exec(next("".join(c["source"]) for c in _nb(NB09) if c["id"] == "c003").rsplit("\n", 1)[0], ns)
    return ns["targets"]


def _starting_design() -> capstone.Design:
    ns = {"capstone": capstone}
    exec(next("".join(c["source"]) for c in _nb(NB09) if c["id"] == "c011").split("report =")[0], ns)
    return ns["my_design"]


def test_09_decision_log_labels_the_failing_starting_design_plainly():
    design = _starting_design()
    report = capstone.evaluate(design, _targets())
    assert (design.gpus, design.tp, design.pp) == (512, 8, 2)
    assert [g.name for g in report.failed] == ["time"]
    log = shown(NB09, "c013")
    assert "512 GPUs of dgx-h100, TP 8 × PP 2" in log and "time FAIL" in log  # what the committed log prints
    assert ("As committed, `report` is still §5's starting design (512 GPUs, TP 8, PP 2), which fails the time gate "
            "on purpose: the log below is that failing example (its Evidence row reads \"time FAIL\"), not a decision "
            "to sign.") in cell(NB09, "g9-10")


def test_09_labels_name_the_pipeline_depth_where_512_gpus_means_two_layouts():
    reports = capstone.compare_systems(_targets(), ["dgx-h100"], [512])
    assert reports[0].design.pp == 1 and _starting_design().pp == 2
    assert ("the survey runs 512 DGX H100 GPUs as PP 1, not as the PP 2 design §4 and §5 start from."
            in cell(NB09, "c004"))
    code = "".join(next(c["source"] for c in _nb(NB09) if c["id"] == "g9-02"))
    assert "ch.compared_jobs(report, big)" in code and "capstone.Design(\"dgx-h100\", 1024, tp=8, pp=1)" in code
    assert list(ch09_capstone.compared_jobs(reports[0], reports[0])) == ["your 512 GPUs, PP 1", "512 GPUs, PP 1"]
    assert "With AR off it cuts even the 512-GPU PP 2 job to" in cell(NB09, "g9-03")


def test_09_section_8_1_opens_with_a_one_line_map_in_its_order():
    raw = "".join(next(c["source"] for c in _nb(NB09) if c["id"] == "g9-01")).split("### 8.1 The fabric\n\n")[1]
    first = raw.split("\n\n")[0]
    assert first.count(";") == 3 and first.startswith("*In this part:* predict, then a table of seven fabrics")
    parts = ("table of seven fabrics", "why the weak rows lose", "a dashboard", "your own fabric's gates")
    assert [first.index(p) for p in parts] == sorted(first.index(p) for p in parts)
    code = "".join(next(c["source"] for c in _nb(NB09) if c["id"] == "g9-02"))
    assert "ch.fabric_choices()" in code and len(ch09_capstone.fabric_choices()) == 7  # "seven fabrics"
    ids = [c["id"] for c in _nb(NB09)]
    assert ids.index("g9-02") < ids.index("g9-04") < ids.index("g9-05")  # table, dashboard, your gates


def test_09_core_minutes_did_not_grow():
    from nvcourse.devtools import reading_time

    row = reading_time.measure_chapter(ROOT / "notebooks" / NB09)
    assert row.core_min <= 21 and row.reading_min <= 40
