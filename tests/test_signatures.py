"""Failure signatures as data (nvcourse.nccl.signatures): the runbook's records, applied by the readers.

The fixtures are the runbook's real public outputs (tests/fixtures/runbook, URL in each header); which signature
each shows is the data file's own `fixtures` list. A record added at test time shows that a new cause needs data
only, no code.
"""

import json
from pathlib import Path

import pytest

from nvcourse.cli import main
from nvcourse.nccl import signatures
from nvcourse.nccl.ncclog import explain, read_text

RUNBOOK = Path(__file__).parent / "fixtures" / "runbook"
DATA = Path(__file__).parents[1] / "nvcourse" / "data" / "nccl"
EXPECT = [(sid, name) for sid, rec in signatures.records().items() for name in rec.get("fixtures", [])
          if rec.get("log_patterns")]


@pytest.mark.parametrize("sid,name", EXPECT, ids=[f"{s}-{n}" for s, n in EXPECT])
def test_ncclog_names_the_signature_of_each_runbook_fixture(sid, name, capsys):
    assert main(["ncclog", str(RUNBOOK / name), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    found = {s["signature"]: s for s in d["signatures"]}
    assert sid in found and found[sid]["source"].startswith("http") and found[sid]["fix"]
    # a record with fault = false (a cloud fabric recognised) is a note, never a problem
    fault = signatures.records()[sid].get("fault", True)
    assert any(p.get("signature") == sid for p in d["problems"]) is fault


def test_gdr_signature_replaces_the_generic_no_gdr_problem():
    log = read_text((RUNBOOK / "gdr_disabled_peermem_nccl1676.log").read_text())
    assert log.problems[0]["signature"] == "no_peermem"
    assert "no_gdr" not in {p["case"] for p in log.problems}


def test_a_record_added_as_data_is_read_without_code(monkeypatch):
    rec = {"title": "made-up cause", "cause": "c", "fix": "f", "source_url": "https://example.org/x",
           "log_patterns": [r"NCCL WARN .*frobnicated"]}
    monkeypatch.setattr(signatures, "records", lambda: {"made_up": rec})
    signatures._compiled.cache_clear()
    try:
        log = read_text("0: host:1:2 [0] NCCL WARN the link is frobnicated\n")
        assert [s["signature"] for s in log.signatures] == ["made_up"]
        assert log.signatures[0]["line"] == "host:1:2 [0] NCCL WARN the link is frobnicated"
    finally:
        signatures._compiled.cache_clear()


def test_a_bad_pattern_names_its_record(monkeypatch):
    monkeypatch.setattr(signatures, "records", lambda: {"broken": {"log_patterns": ["("]}})
    signatures._compiled.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"\[signatures.broken\]"):
            signatures.match_text("x")
    finally:
        signatures._compiled.cache_clear()


def test_shm_between_gpus_of_a_node_is_named_when_no_variable_explains_it():
    """HAND-MADE two-GPU log in NCCL's wording ('Channel 00 : 0[0] -> 1[1] via SHM/direct/direct', as 2.2x prints
    it): GPUs of one node joined through host memory, and no variable in the log to explain it."""
    text = "".join(f"box:{100 + r}:{200 + r} [{r}] NCCL INFO Channel 0{c} : {r}[{r}] -> {1 - r}[{1 - r}] via "
                   "SHM/direct/direct\n" for r in (0, 1) for c in (0, 1))
    log = read_text(text)
    shm = [p for p in log.problems if "via SHM" in p["problem"]]
    assert shm and shm[0]["problem"].startswith("4 connections") and shm[0]["signature"] == "acs_redirect"
    with_env = read_text("box:100:200 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1\n" + text)
    assert not [p for p in with_env.problems if "via SHM" in p["problem"]]  # the variable explains it


def test_lspci_paste_without_nccl_lines_is_read_for_its_signature():
    log = read_text((RUNBOOK / "lnksta_speed_downgraded_jan183.txt").read_text())
    assert log.lines == 0 and [s["signature"] for s in log.signatures] == ["pcie_downtrained"]
    assert "LnkSta:" in log.signatures[0]["line"]


def test_nccl_tests_json_carries_signatures(capsys, tmp_path):
    f = tmp_path / "run.txt"
    f.write_text("host:1:2 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1\n"
                 + (DATA / "h100_8gpu_single_node_markdown_indented.txt").read_text())
    assert main(["nccl-tests", str(f), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [s["signature"] for s in d["diagnosis"]["signatures"]] == ["p2p_forced_off"]


# ---------------------------------------------------------------- cumulative counters, ACS and mlxlink lines
# Counter names and layouts as the tools print them: mlx5 `ethtool -S` (rx_prio3_pause, tx_pause_storm_*_events:
# Linux net/mlx5e en_stats.c), `mlxlink -c` "Physical Counters and BER Info" (names as in scitix/sichek#125), lspci.
def _sigs(text):
    return {s["signature"] for s in read_text(text).signatures}


def test_one_reading_of_pause_counters_is_not_a_storm_two_growing_readings_are():
    once = "     rx_prio3_pause: 1843\n     tx_prio3_pause: 12\n"
    log = read_text(once)
    assert log.signatures == [] and log.problems == []
    assert [c["delta"] for c in log.counters] == [None, None] and "one reading cannot tell" in log.notes[0]
    assert "Nothing" not in explain(log) and "two readings" in explain(log)
    flat = read_text(once + once)
    assert flat.signatures == [] and "2 counters unchanged" in flat.notes[0]
    grown = read_text(once + "     rx_prio3_pause: 1843\n     tx_prio3_pause: 5012\n")
    (hit,) = grown.signatures
    assert hit["signature"] == "pfc_storm" and "rose by 5000" in hit["line"]
    # the NIC's own stall detector is a storm in one reading
    assert _sigs("     tx_pause_storm_warning_events: 3\n") == {"pfc_storm"}
    assert _sigs("     tx_pause_storm_warning_events: 0\n     tx_pause_storm_error_events: 0\n") == set()


@pytest.mark.parametrize("line,broken", [
    ("\t\tACSCtl:\tSrcValid- TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd- EgressCtrl- DirectTrans-", True),
    ("ACSCtl: SrcValid- TransBlk- ReqRedir+ CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-", True),
    ("ACSCtl: SrcValid+ TransBlk- ReqRedir- CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-", True),
    ("ACSCtl: SrcValid+ TransBlk+ ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-", False),
    ("ACSCtl: SrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-", False),
])
def test_acs_rule_is_a_plus_after_reqredir_or_cmpltredir(line, broken):
    log = read_text(line + "\n")
    assert (_sigs(line) == {"acs_redirect"}) is broken
    if not broken:
        assert "read as healthy" in log.notes[0]


def test_mlxlink_symbol_errors_effective_errors_and_link_down_counter():
    healthy = ("Physical Counters and BER Info\n------------------------------\n"
               "Time Since Last Clear [Min]        : 348349.5\nEffective Physical Errors          : 0\n"
               "Effective Physical BER             : 15E-255\nLink Down Counter                  : 0\n"
               "Link Error Recovery Counter        : 0\nRaw Physical BER                   : 2E-9\n")
    log = read_text(healthy)
    assert log.signatures == [] and any("read as healthy" in n for n in log.notes)
    # the course's one link-health rule: effective and raw BER are the margin (a note, never a fault), symbol errors
    # count since the last clear, so only two readings with a rise are a fault
    margin = read_text(healthy.replace("Effective Physical Errors          : 0", "Effective Physical Errors : 42")
                       .replace("15E-255", "3E-12"))
    assert margin.signatures == [] and any("not a fault to page on" in n for n in margin.notes)
    for line in ("Symbol Errors                      : 55\n", "SymbolErrorCounter:..............55\n"):
        assert _sigs(line) == set() and "55" in read_text(line).notes[0]
        assert _sigs(line + line.replace("55", "70")) == {"ib_link_ber"}
        assert _sigs(line + line) == set()
    down = healthy.replace("Link Down Counter                  : 0", "Link Down Counter                  : 4")
    assert _sigs(down) == set() and "Link Down Counter 4" in read_text(down).notes[0]
    assert _sigs(down + down.replace(": 4", ": 6")) == {"ib_link_ber"}


def test_power_cap_is_a_fault_only_when_one_gpu_differs_and_efa_is_not_a_fault():
    cap = "        SW Power Cap                      : Active\n"
    same = read_text(cap * 4)
    assert same.signatures == [] and "on all 4 GPU readings" in same.notes[0]
    odd = read_text(cap * 3 + cap.replace("Active", "Not Active"))
    assert {s["signature"] for s in odd.signatures} == {"clocks_power"}
    assert "Active on 3, Not Active on 1" in odd.signatures[0]["line"]
    assert _sigs("        HW Slowdown                       : Active\n") == {"clocks_power"}
    efa = read_text((RUNBOOK / "efa_ofi_provider_nccl1597.log").read_text())
    assert "efa_libfabric" in {s["signature"] for s in efa.signatures}
    assert "efa_libfabric" not in {p.get("signature") for p in efa.problems}
    assert any(n.startswith("recognised, not a fault: AWS EFA") for n in efa.notes)


# Real lines, as printed in public logs (each URL above its line); the wrong-socket case itself is NCCL's own
# format (src/graph/topo.cc ncclTopoGetCpuAffinity, from 2.28) with a GPU on cores 0-31 and a rank pinned to 32-63:
# no public paste of it was found.
_AFFINITY_LINES = [
    # https://github.com/NVIDIA/nccl/issues/2057 (a VM: NCCL does not know the GPU's cores, so no wrong socket)
    ("VM-16-64-ubuntu:28471:28471 [0] NCCL INFO ncclTopoGetCpuAffinity: Affinity for GPU 0 is empty, ignoring. "
     "(GPU affinity =  ; CPU affinity = 0-19).", False),
    # https://github.com/pytorch/ci-infra/pull/490 (the rank's cores are inside the GPU's: healthy)
    ("mt-l-x86iavx512-45-172-t4-4-csmpw-runner-g4sfw-workflow:202016:202219 [1] NCCL INFO ncclTopoGetCpuAffinity: "
     "Affinity for GPU 1 is 24-46,72-93. (GPU affinity = 24-47,72-95 ; CPU affinity = 24-46,72-93).", False),
    # https://github.com/NVIDIA/nccl/issues/1017 (NCCL_IGNORE_CPU_AFFINITY=1 set: NCCL binds to the GPU's cores)
    ("ib-vm-4:689754:689868 [2] NCCL INFO Setting affinity for GPU 2 to ffffff,ffffffff,ffffffff", False),
    ("NCCL INFO NCCL_IGNORE_CPU_AFFINITY set by environment to 1.", False),
    ("host:1:1 [0] NCCL INFO ncclTopoGetCpuAffinity: Affinity for GPU 0 is empty, ignoring. "
     "(GPU affinity = 0-31 ; CPU affinity = 32-63).", True),
]


@pytest.mark.parametrize("line,wrong_socket", _AFFINITY_LINES)
def test_numa_rule_flags_an_empty_affinity_with_known_gpu_cores_never_the_workaround_variable(line, wrong_socket):
    found = {s["signature"] for s in signatures.match_text(line)}
    assert ("numa_affinity" in found) is wrong_socket
    rec = signatures.records()["numa_affinity"]
    # the variable is the workaround (NCCL then uses the GPU's own cores), never the fault
    assert "NCCL_IGNORE_CPU_AFFINITY=1" in rec["fix"] and "do not set" not in rec["fix"]
