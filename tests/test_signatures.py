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
from nvcourse.nccl.ncclog import read_text

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
    assert any(p.get("signature") == sid for p in d["problems"])


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
    assert shm and shm[0]["problem"].startswith("4 connection(s)") and shm[0]["signature"] == "acs_redirect"
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
