"""Chapter 06d's runbook data and module: real fixtures, signatures that match them, the drill, the PCIe arithmetic.

The fixtures in tests/fixtures/runbook/ are public pastes kept byte for byte (URL in the ``%%`` header). Expected
values below were read from those texts, not from the module's output.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nvcourse import _data
from nvcourse.chapters import ch06d_runbook as ch

ROOT = Path(__file__).resolve().parents[1]
FIX = Path(__file__).parent / "fixtures" / "runbook"
DATA = _data.load("runbook")


def _body(name: str) -> list[str]:
    return [ln for ln in (FIX / name).read_text().splitlines() if not ln.startswith("%%")]


def test_every_fixture_names_its_public_source():
    files = sorted(FIX.iterdir())
    assert len(files) >= 10
    for f in files:
        first = f.read_text().splitlines()[0]
        # a thread (issue or pull request), or a file pinned at its commit
        assert re.match(r"%% source: https://github\.com/[\w.-]+/[\w.-]+/((issues|pull)/\d+|blob/[0-9a-f]{40}/\S+) ",
                        first), f.name


def test_every_fixture_is_used_and_every_named_fixture_exists():
    named = {x for s in DATA["signatures"].values() for x in s["fixtures"]}
    named |= {s["fixture"] for s in DATA["drill"]["steps"].values() if "fixture" in s}
    on_disk = {f.name for f in FIX.iterdir()}
    assert named == on_disk


@pytest.mark.parametrize("sig_id", [k for k, s in DATA["signatures"].items() if s["fixtures"] and s["log_patterns"]])
def test_each_signature_matches_each_of_its_fixtures(sig_id):
    sig = DATA["signatures"][sig_id]
    pats = [re.compile(p) for p in sig["log_patterns"]]
    for name in sig["fixtures"]:
        assert any(p.search(ln) for p in pats for ln in _body(name)), (sig_id, name)


# Healthy lines read from the fixtures and sources: the broken-state patterns must not fire on them.
HEALTHY = {
    "acs_redirect": ["`ACSCtl:\tSrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-`",
                     # nccl#606: source validation alone does not redirect peer-to-peer traffic
                     "ACSCtl: SrcValid+ TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-"],
    "pcie_downtrained": ["    LnkCap: Port #0, Speed 16GT/s, Width x16, ASPM L1, Exit Latency L1 <16us",
                         "LnkSta:\tSpeed 16GT/s (ok), Width x16 (ok)"],  # the drill's healthy A100 link
    "roce_lossy": ["/sys/class/infiniband/mlx5_0/ports/1/hw_counters/out_of_buffer:0",
                   "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/duplicate_request:0"],
    "gdr_distance": ["learn01:2228637:2230195 [3] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'"],
    "no_peermem": ["NCCL INFO GPU Direct RDMA Disabled for GPU ca000 / HCA 0 (distance 7 > 4)"],
}


@pytest.mark.parametrize("sig_id", sorted(HEALTHY))
def test_signatures_do_not_fire_on_healthy_or_other_layers_lines(sig_id):
    pats = [re.compile(p) for p in DATA["signatures"][sig_id]["log_patterns"]]
    for line in HEALTHY[sig_id]:
        assert not any(p.search(line) for p in pats), (sig_id, line)


def test_signature_records_are_complete_and_sourced():
    keys = {"id", "layer", "title", "command", "healthy", "broken", "log_patterns", "nccl_tests", "cause", "fix",
            "source_url", "src", "fixtures"}
    urls = {v["url"] for v in DATA["sources"].values()}
    for sid, s in DATA["signatures"].items():
        assert keys <= set(s), sid
        assert s["id"] == sid and s["layer"] in ch.LAYERS
        assert s["source_url"] in urls, sid
        for key in re.split(r",\s*", s["src"]):
            assert key in DATA["sources"], (sid, key)


def test_every_source_is_cited():
    cited = " ".join([s["src"] for s in DATA["signatures"].values()] + [c["src"] for c in DATA["cloud"].values()]
                     + [DATA["drill"]["story_src"]])
    cited_keys = set(re.split(r"[,\s]+", cited))
    # the chapter's prose cites these directly (QoS/AR pages, RAS, nccl-tests -R)
    prose = {"nccl-ras", "nccl-tests-readme", "meta-roce", "nvidia-roce-qos", "nccl-ib-ar", "sharp-docs", "nccl1392"}
    assert set(DATA["sources"]) <= cited_keys | prose


def test_drill_outputs_are_quoted_from_their_fixtures():
    for name, step in DATA["drill"]["steps"].items():
        if "output" not in step:  # no public output: the box says so and shows a healthy reading instead
            assert "fixture" not in step and step["healthy_of"] in DATA["signatures"], name
            continue
        # the backticks an issue's Markdown put around a pasted line are not the command's output
        body = [ln.strip("`") for ln in _body(step["fixture"])]
        for line in step["output"].splitlines():
            assert line in body, (name, line)
    assert DATA["drill"]["answer"] in DATA["signatures"]
    assert set(DATA["drill"]["best_steps"]) <= set(DATA["drill"]["steps"])


def test_drill_verdict():
    ok, words = ch.drill_verdict("no_peermem", ["nccl_log"])
    assert ok and "found in 1 step;" in words and "not needed" not in words
    ok, words = ch.drill_verdict("no_peermem", ["acs", "nccl_log", "gids"])
    assert ok and "not needed: acs, gids" in words
    ok, _ = ch.drill_verdict("acs_redirect", ["acs"])
    assert not ok


def test_pcie_line_rates_by_hand():
    assert ch.pcie_GBps_dir(16, 16) == pytest.approx(16 * 16 * 128 / 130 / 8)  # 31.5 GB/s, PCIe 4.0 x16
    assert ch.pcie_GBps_dir(2.5, 16) == pytest.approx(4.0)  # 2.5 GT/s x 16 x 8/10 / 8
    # jan#183: LnkCap 16GT/s x16, LnkSta 2.5GT/s x16 -> 4.0 / 31.51 of the link
    assert ch.link_fraction(16, 16, 2.5, 16) == pytest.approx(4.0 / (16 * 16 * 128 / 130 / 8))
    assert ch.link_fraction(16, 16, 16, 8) == pytest.approx(0.5)


def test_read_lnk_on_real_pastes():
    assert ch.read_lnk("\n".join(_body("lnksta_speed_downgraded_jan183.txt"))) == {"cap": (16.0, 16),
                                                                                    "sta": (2.5, 16)}
    assert ch.read_lnk("\n".join(_body("lnksta_width_downgraded_geerlingguy480.txt"))) == {"sta": (5.0, 1)}


@pytest.mark.parametrize(("call", "msg"), [
    (lambda: ch.pcie_GBps_dir(64, 16), "speed_GTps must be between 2.5 and 32"),
    (lambda: ch.pcie_GBps_dir(16, 0), "width must be"),
    (lambda: ch.signatures("disk"), "layer must be one of"),
    (lambda: ch.drill_step_html("reboot"), "step must be one of"),
])
def test_bad_input_is_one_clear_line(call, msg):
    with pytest.raises(ValueError, match=msg):
        call()


def test_tables_and_drill_render():
    for layer in ch.LAYERS:
        if layer != "cloud":
            t = ch.checks_table_html(layer)
            assert t.count("<tr>") >= 2 and "href=" in t
    assert "SRD" in ch.cloud_table_html()
    assert "GPU Direct RDMA Disabled" in ch.drill_step_html("nccl_log")
    assert "https://github.com/NVIDIA/nccl/issues/1676" in ch.sources_html()
    # the data file's record keys are internals: the table shows each source's title only
    assert "nccl1676<" not in ch.sources_html() and ">key<" not in ch.sources_html()


def test_drill_box_follows_its_control():
    box = ch.drill_box()
    seen = set()
    for step in DATA["drill"]["steps"]:
        box.controls["step"].value = step
        assert box.last_error is None, step
        assert DATA["drill"]["steps"][step]["command"][:20] in box.readout.value.replace("&#x27;", "'")
        seen.add(box.readout.value)
    assert len(seen) == len(DATA["drill"]["steps"])


def test_the_reader_finds_the_drill_signature_only_where_it_is():
    # nvcourse ncclog's signature matching (nvcourse.nccl.signatures) on the drill's real outputs: the broken step
    # names its cause; the healthy outputs (ACS off, a routable GID, a zero counter, a capable link) name nothing
    assert ch.drill_signatures("nccl_log") == ["no_peermem"]
    for step in ("acs", "gids", "counters", "lnksta"):
        assert ch.drill_signatures(step) == [], step
    assert "signature: GPUDirect RDMA off" in ch.drill_step_html("nccl_log")
    assert "no failure signature" in ch.drill_step_html("acs")


def test_the_reader_names_each_fixture_s_signature():
    from nvcourse.nccl.signatures import match_text

    for sid, sig in DATA["signatures"].items():
        for name in sig["fixtures"]:
            if sig["log_patterns"]:
                assert sid in [m["signature"] for m in match_text((FIX / name).read_text())], (sid, name)


@pytest.mark.parametrize("layer", [k for k in ch.LAYERS if k != "cloud"])
def test_summary_keeps_every_fact_behind_its_details(layer):
    import html as _html

    page = ch.checks_html(layer)
    summary, rest = page.split("<details>", 1)
    assert summary.count("<th ") == 3  # check, run, broken looks like: a table a learner can read
    assert ch.LOOK_AT[layer] in summary
    assert rest.count("<details>") == len(ch.signatures(layer))  # then each check's card collapsed under its title
    for s in ch.signatures(layer):  # nothing deleted: every field of every check is on the page
        for key in ("command", "healthy", "broken", "nccl_tests", "cause", "fix", "source_url"):
            assert _html.escape(s[key]) in rest, (layer, s["id"], key)


def test_look_at_sentences_hold_for_the_data():
    # pcie: the two marks named are exactly what the broken outputs show and the healthy ones lack
    acs, lnk = DATA["signatures"]["acs_redirect"], DATA["signatures"]["pcie_downtrained"]
    assert "ReqRedir+" in acs["broken"] and "ReqRedir+" not in acs["healthy"]
    assert "(downgraded)" in lnk["broken"] and "(downgraded)" not in lnk["healthy"]
    # gpu_nic: the NIC line decides (Disabled for HCA: peer memory; Enabled for HCA with channels lacking /GDRDMA:
    # distance), and the reader agrees on each case
    from nvcourse.nccl.ncclog import read_text

    peer, dist = DATA["signatures"]["no_peermem"], DATA["signatures"]["gdr_distance"]
    assert "Disabled for HCA" in peer["broken"] and "Enabled for HCA" in dist["broken"]
    assert "/GDRDMA" in dist["broken"] and "/GDRDMA" in dist["healthy"] and "GDRDMA" in peer["healthy"]
    chan = "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0\n"
    for nic, want in (("Disabled", "no_peermem"), ("Enabled", "gdr_distance")):
        log = read_text(f"h:1:2 [0] NCCL INFO NET/IB : GPU Direct RDMA {nic} for HCA 0 'mlx5_0'\n" + chan)
        assert log.gdr is False and want in {p.get("signature") for p in log.problems}, nic
    # cloud: every fabric's log line is in the summary; the full table is behind the details
    cloud = ch.cloud_html()
    assert cloud.index("Cloud fabrics") < cloud.index("<details>") < cloud.index("SRD")
    assert ch.sources_html().startswith("<details>")


def test_ib_tc_is_the_whole_traffic_class_byte():
    # NCCL copies NCCL_IB_TC into the GRH traffic_class byte (DSCP << 2 | ECN): DSCP 26 sent ECN-capable is 106
    from nvcourse.runbook import ib_tc, roce_qos_example

    assert ib_tc(26, 2) == 106 and ib_tc(46) == 184 and ib_tc(63, 3) == 255
    for bad in ({"dscp": 64}, {"dscp": -1}, {"dscp": 26, "ecn": 4}):
        with pytest.raises(ValueError, match="dscp|ecn"):
            ib_tc(**bad)
    q = roce_qos_example()
    assert (q["ib_tc"], q["wrong_dscp"]) == (q["dscp"] * 4 + q["ecn"], q["dscp"] // 4)
    # the worked page states the same number as the data derives, and the checks never say "the DSCP value"
    doc = (ROOT / "docs" / "runbook-roce-qos.md").read_text()
    assert f"NCCL_IB_TC = {q['dscp']} × 4 + {q['ecn']} = {q['ib_tc']}" in doc
    assert "DSCP value" not in DATA["signatures"]["roce_lossy"]["fix"]
    assert f"= {q['ib_tc']}." in ch.ib_tc_text() and f"DSCP {q['wrong_dscp']}" in ch.ib_tc_text()


def test_slow_node_table_has_a_slow_pair_without_node_644():
    # read from the fixture: both pairs with 644 are slow, and so is 284-678; the record must say so
    pairs = {}
    for line in _body("slow_node_pairs_nccltests106.txt"):
        names, busbw = line.split()[:2]
        pairs[tuple(n.replace("se02gn", "") for n in names.split(","))] = float(busbw)
    slow = {p for p, v in pairs.items() if v < 60}
    assert slow == {("644", "699"), ("641", "644"), ("284", "678")}
    assert all("644" in p for p in slow - {("284", "678")})
    rec = DATA["signatures"]["slow_node"]
    assert "284-678" in rec["nccl_tests"] and "does not contain 644" in rec["nccl_tests"]


@pytest.mark.parametrize("fixture", [FIX / "gdr_distance_nccl1151.log",
                                     ROOT / "tests/fixtures/ncclog_format_strings/gdr_off_distance_v2_29_format.log",
                                     ROOT / "tests/fixtures/ncclog_format_strings/gdr_off_distance_v2_30_format.log"])
def test_the_gdr_level_rule_allows_the_fix_in_every_version(fixture):
    # The peer-memory fix says when NCCL_NET_GDR_LEVEL may be raised. Its rule must fire for GDR off by distance in
    # every NCCL version, including 2.30.3+, whose INFO log has no "(distance X > Y)" line at all.
    from nvcourse.nccl.ncclog import read_text

    rule = DATA["signatures"]["no_peermem"]["fix"].split("raise NCCL_NET_GDR_LEVEL", 1)[1]
    assert "only if the log says 'distance'" not in rule
    assert "Enabled for HCA" in rule and "/GDRDMA" in rule and "TRACE" in rule
    text = fixture.read_text()
    log = read_text(text)
    assert "gdr_distance" in {p.get("signature") for p in log.problems}
    if "2.30" in fixture.name:   # the rule's criterion, not the distance line, is what this log offers
        assert "(distance" not in text and "Enabled for HCA" in text and "/GDRDMA" not in text


def test_distance_numbers_match_their_version():
    # Each "(distance X > Y)" example is SYS > PXB of the version it is quoted for (the healthy text's table).
    dist = DATA["signatures"]["gdr_distance"]
    table = {"2.25": (7, 4), "2.26": (8, 5), "2.27": (9, 5)}
    for ver, (sys_, pxb) in table.items():
        assert f"PXB {pxb} and SYS {sys_}" in dist["healthy"], ver
    broken = dist["broken"]
    assert "(distance 7 > 4)' up to 2.25" in broken
    assert "'distance 8 > 5' in 2.26" in broken and "'distance 9 > 5' in 2.27 and 2.28" in broken


def test_nvlink_speed_figures_are_told_apart():
    # nvidia-smi's 26.562 GB/s per link is the raw signalling rate; the catalog's data rate is 25 GB/s per direction.
    from nvcourse import catalog

    link = catalog.get_link("nvlink4")
    healthy = DATA["signatures"]["nvlink_inactive"]["healthy"]
    assert "26.562 GB/s" in healthy and "signalling" in healthy
    assert f"{link.line_GBps_dir:g} GB/s per direction" in healthy
    assert abs(2 * 106.25 / 8 - 26.5625) < 1e-9 and "2 lanes x 106.25 Gb/s" in healthy
    assert f"about {link.line_GBps_dir * link.efficiency:.1f}" in healthy


def _md06d() -> str:
    import json

    nb = json.loads((ROOT / "notebooks" / "06d_bringup_and_fault_runbook.ipynb").read_text())
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")


def test_the_gdr_lines_are_net_lines_and_the_course_says_to_turn_net_on():
    # NCCL prints 'GPU Direct RDMA Enabled/Disabled for HCA' and the '(distance X > Y)' line as INFO(NCCL_NET) (the
    # distance line NCCL_GRAPH|NCCL_NET from 2.27); the default NCCL_DEBUG_SUBSYS is INIT,BOOTSTRAP,ENV (INIT,ENV
    # before 2.23), so a default log has neither: the chapter and the check must turn NET on, and the decision table
    # must have a row for a log without the NIC line.
    text = _md06d()
    assert "set `NCCL_DEBUG=INFO` and `NCCL_DEBUG_SUBSYS=INIT,ENV,NET`" in text
    assert "| none ends in `/GDRDMA` | none | not known yet: the log was taken without `NET`" in text
    assert "a log taken with the default\nsubsystems never has it, at any version" in text
    assert "an ordinary `NCCL_DEBUG=INFO` log from 2.30.3" not in text
    assert "NCCL_DEBUG_SUBSYS=INIT,ENV,NET" in DATA["signatures"]["no_peermem"]["command"]
    assert "NET" in ch.LOOK_AT["gpu_nic"] and "NCCL_DEBUG_SUBSYS" in ch.LOOK_AT["gpu_nic"]


def test_send_and_receive_gdr_lines_are_read_apart_in_the_table_and_by_the_reader():
    # NCCL decides GDR for sends (a GDR read) under NCCL_NET_GDR_READ, apart from receives (src/graph/paths.cc
    # ncclTopoCheckGdr: NET_GDR_READ default -2, reads off before compute capability 8.0 without an NVLink peer or a
    # lone GPU). The table's row, the sentence under the layer table and the reader must all say so, for the same
    # lines: the real aks30 log's receive lines with /GDRDMA and its send lines with /GDRDMA removed.
    import re

    from nvcourse.nccl.ncclog import read_text

    text = _md06d()
    assert ("| `[receive]` lines end in `/GDRDMA`, `[send]` lines do not | Enabled, or none | GDR works for receives; "
            "sends follow NCCL's read policy (section 10), not a missing module |") in text
    assert "**Sends without `/GDRDMA`** are NCCL's read policy, `NCCL_NET_GDR_READ`, on by default from Ampere." in text
    assert "`nvcourse ncclog` flags such sends as a problem" in " ".join(text.split())
    assert "NCCL_NET_GDR_READ" in ch.LOOK_AT["gpu_nic"] and "[send]" in ch.LOOK_AT["gpu_nic"]
    real = (ROOT / "nvcourse" / "data" / "nccl" / "ib_cumem_gdrdma_2nodes_aks30.log").read_text(encoding="utf-8")
    log = read_text(re.sub(r"(\[send\] via NET/IB/\d+)/GDRDMA", r"\1", real))
    assert log.gdr_by_direction["receive"] == {"gdrdma": 4} and log.gdr_by_direction["send"] == {"without": 4}
    gdr = [p for p in log.problems if "GDR" in p["problem"]]
    assert len(gdr) == 1 and "off by policy" in gdr[0]["problem"] and "peermem" not in str(gdr[0])
    assert log.gdr is False     # as the row says: the reader shows GDR off and lists the sends as a problem


def test_the_pcie_layer_checks_the_iommu_with_its_commands_and_fix():
    # bare-metal GPUDirect RDMA needs 1:1 addresses (CUDA GPUDirect RDMA guide, Supported Systems); with the Intel
    # IOMMU on, Linux requests ACS at boot (commit 50310600ebda)
    rec = DATA["signatures"]["iommu_translation"]
    assert rec["layer"] == "pcie"
    for word in ("/proc/cmdline", "dmesg | grep -e DMAR -e IOMMU", "/sys/kernel/iommu_groups", "iommu=pt"):
        assert word in rec["command"]
    assert "pass-through" in rec["fix"] and "ATS" in rec["fix"] and "ACS back on at every boot" in rec["cause"]
    assert {"cuda-gdr", "linux-vtd-acs"} <= {x.strip() for x in rec["src"].split(",")}
    assert all(x.strip() in DATA["sources"] for x in rec["src"].split(","))
    pcie = ch.checks_html("pcie")
    assert "The IOMMU translates device addresses" in pcie and "iommu" in ch.LOOK_AT["pcie"].lower()
    assert "`iommu=pt`" in _md06d()


def test_the_drill_opens_on_the_page_not_on_an_answer():
    # the first command is the learner's prediction: the box shows the page alone until one is picked
    box = ch.drill_box()
    first = box.readout.value
    assert box.last_error is None and "The page:" in first
    assert "signature:" not in first and "GPU Direct RDMA Disabled" not in first
    # each choice shows the command itself; its value is the step name the exercise takes
    steps = DATA["drill"]["steps"]
    assert [v for _label, v in box.controls["step"].options[1:]] == list(steps)
    assert [label for label, _v in box.controls["step"].options[1:]] == [s["command"] for s in steps.values()]


def test_the_distance_versions_are_told_once_in_view():
    # the per-version distance lines (7 > 4, 8 > 5, 9 > 5, 9 > 6) are shown in one table, on the reference page §5
    # links; the gpu_nic summary points there, and the full 'broken' text (their data home) stays in the card
    html_ = ch.checks_html("gpu_nic")
    summary, cards = html_.split("<details", 1)
    assert "distance 8 &gt; 5" not in summary and "the reference page linked in section 5" in summary
    assert "distance 8 &gt; 5" in cards
    text = _md06d()
    ref = (ROOT / "docs" / "runbook-reference.md").read_text(encoding="utf-8")
    assert "`distance 8 > 5`" not in text and "| 2.26 | the same form, `distance 8 > 5` |" in ref
    assert "(../docs/runbook-reference.md#the-distance-line-in-each-nccl-version)" in text
    assert "### The distance line in each NCCL version" in ref


def test_the_numa_prose_and_check_name_the_wrong_socket_and_the_variable_as_a_fix():
    # ncclTopoGetCpuAffinity: NCCL_IGNORE_CPU_AFFINITY=1 uses the GPU's cores (a workaround); the default intersects
    # the launcher's cores with the GPU's, and an empty intersection prints 'Affinity for GPU N is empty, ignoring'
    # (from 2.28; up to 2.27 no 'Setting affinity' line)
    text = _md06d()
    assert "If you find `NCCL_IGNORE_CPU_AFFINITY=1` set, it is a fix, not a leftover to remove" in text
    assert "`Affinity for GPU 0 is empty, ignoring`" in text
    numa = DATA["signatures"]["numa_affinity"]
    assert "NCCL_IGNORE_CPU_AFFINITY=1 set" not in numa["broken"] and "empty, ignoring" in numa["broken"]
    assert "or set NCCL_IGNORE_CPU_AFFINITY=1" in numa["fix"]


def test_the_order_table_names_each_section_it_points_to():
    # §1's map of the bring-up order: each row's section number is the "## N." section of that layer, in order
    import re

    text = _md06d()
    rows = re.findall(r"^\| (\d) \| ([^|]+) \| [^|]+ \| (\d) \|$", text, flags=re.M)
    assert [int(r[0]) for r in rows] == [1, 2, 3, 4, 5, 6]
    for _order, layer, section in rows:
        heading = re.search(rf"^## {section}\. (.+)$", text, flags=re.M).group(1)
        assert heading.lower().startswith(layer.strip().split()[0].lower()), (layer, heading)


def test_the_worked_gdr_fault_is_the_cited_case():
    # §5's worked fault is a distance (NVIDIA/nccl#1151), not the drill's case (nccl#1676, a missing peer-memory
    # path): its log line is the stored excerpt's, its diagnosis the distance record's
    fixture = (ROOT / "tests" / "fixtures" / "runbook" / "gdr_distance_nccl1151.log").read_text()
    text = " ".join(_md06d().split())
    assert "NCCL INFO GPU Direct RDMA Disabled for GPU ca000 / HCA 0 (distance 7 > 4)" in fixture
    assert "NCCL INFO GPU Direct RDMA Disabled for GPU ca000 / HCA 0 (distance 7 > 4)" in text
    assert "one GPU and one RDMA NIC per machine, not on one PCIe switch" in fixture
    assert "each with one GPU and one RDMA NIC that do not share a PCIe switch" in text
    rec = DATA["signatures"]["gdr_distance"]
    assert rec["source_url"] == "https://github.com/NVIDIA/nccl/issues/1151"
    assert "PXB 4 and SYS 7 up to 2.25" in rec["healthy"]
    assert "(7, `SYS`: through the CPUs) is longer than the default limit (4, `PXB`, in that version)" in text
    assert "SYS 7 up to 2.25" in rec["healthy"]
    peer = DATA["signatures"]["no_peermem"]
    assert "upgrade NCCL to 2.23 or later if the module is loaded but not seen" in peer["fix"]
    # the version notes it no longer carries are on the reference page the chapter links
    ref = " ".join((ROOT / "docs" / "runbook-reference.md").read_text(encoding="utf-8").split())
    assert "](../docs/runbook-reference.md)" in text
    for moved in ("NCCL's default debug subsystems are `INIT,BOOTSTRAP,ENV` (`INIT,ENV` before NCCL 2.23)",
                  "A send is a GDR *read* of GPU memory", "driver 515.43 and CUDA 11.7 or later",
                  "`NCCL_CROSS_NIC`", "SR-IOV", "`-R 2` registers them symmetrically", "`NCCL_DEBUG_FILE`",
                  "Linux also turns ACS back on at every boot", "`NCCL_NET_GDR_C2C` is 1, its default; hence `> 6`"):
        assert moved in ref and moved not in text, moved


def test_roce_drop_counters_are_read_as_counters_one_reading_a_note_two_a_rise():
    # the chapter's rule (section 6): one reading of a cumulative counter is a reading, two readings are a rise.
    # The paste below is the nccl#394 fixture's lines; the second reading is written for the test.
    from nvcourse.nccl.ncclog import read_text

    once = "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/local_ack_timeout_err:91316\n"
    log = read_text(once)
    assert log.signatures == [] and log.problems == [] and "one reading cannot tell" in log.notes[0]
    flat = read_text(once + once)
    assert flat.signatures == [] and "unchanged between two readings" in flat.notes[0]
    rise = read_text(once + once.replace("91316", "91400"))
    assert [s["signature"] for s in rise.signatures] == ["roce_lossy"]
    assert "rose by 84" in rise.signatures[0]["line"]
    # the storm counters stay the exception: the NIC's stall detector should never count at all
    assert DATA["signatures"]["pfc_storm"]["log_patterns"]


def test_drill_counters_step_shows_no_other_case_s_fault_lines():
    # the drill's case (nccl#1676) published no counter reading, and its answer says RDMA works: the counters step
    # must not show another case's drops (nccl#394's), but say so and show what a healthy port reads
    step = DATA["drill"]["steps"]["counters"]
    assert "output" not in step and step["src"] == DATA["drill"]["story_src"]
    page = ch.drill_step_html("counters")
    assert "91316" not in page and "https://github.com/NVIDIA/nccl/issues/394" not in page
    assert "No output of this command was published for this case. On a healthy cluster it shows:" in page
    assert "out_of_sequence, packet_seq_err and local_ack_timeout_err at 0" in page
    for step in DATA["drill"]["steps"].values():
        if "fixture" in step:
            url = DATA["sources"][step["src"]]["url"]
            assert url in (FIX / step["fixture"]).read_text().splitlines()[0]
