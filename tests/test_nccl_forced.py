"""A paste that forces NCCL's algorithm (NCCL_ALGO, NCCL_PROTO, NCCL_NVLS_ENABLE): the overlay models what was forced,
and the bands do not blame a missing NVLS on a run told not to use it (nvcourse.nccl.forced)."""

import json
from pathlib import Path

from cli_runs import run_main

from nvcourse.nccl import nccltests
from nvcourse.nccl.diagnose import diagnose
from nvcourse.nccl.forced import _ALGO, _PROTO, enabled, model_request, read_settings

FIX = Path(__file__).parent / "fixtures"
# the fixture's launch line: "... all_reduce_perf -b 8 -e 8G ... NCCL_ALGO=RING NCCL_NVLS_ENABLE=0 (config 'ring' ..."
TOGETHER = FIX / "heldout_sweeps" / "together-h100-8gpu-single-process-ring-allreduce.txt"


NEW, OLD = (2, 30, 7), (2, 23, 4)


def test_parse_list_as_nccl_reads_it():
    # the examples of NCCL's own comment above parseList (src/graph/tuning.cc, 2.24 and later)
    value = "ring,collnetdirect;allreduce:tree,collnetdirect;broadcast:ring"
    assert enabled(value, _ALGO, "allreduce", NEW) == {"tree", "collnet"}
    assert enabled(value, _ALGO, "broadcast", NEW) == {"ring"}
    assert enabled(value, _ALGO, "allgather", NEW) == {"ring", "collnet"}
    assert enabled("^LL128;allreduce:LL128", _PROTO, "allreduce", NEW) == {"LL128"}
    assert enabled("^LL128;allreduce:LL128", _PROTO, "allgather", NEW) == {"LL", "Simple"}
    assert "nvls" not in enabled("^NVLS", _ALGO, "allreduce", NEW)
    assert enabled("RING", _ALGO, "allreduce", NEW) == {"ring"}  # case does not matter (strcasecmp)
    assert enabled("ring;tree", _ALGO, "allreduce", NEW) is None  # a second entry without a prefix: NCCL refuses it
    assert enabled("bogus", _ALGO, "allreduce", NEW) is None


def test_parse_list_before_2_24_and_with_no_version():
    # up to v2.23.4-1 parseList splits on ',' only and ignores names it does not know: "allreduce:tree" is one
    # unknown token, so nothing is enabled; "CollNet" is NCCL 2.7-2.13's name
    assert enabled("allreduce:tree", _ALGO, "allreduce", OLD) == set()
    assert enabled("Tree,bogus", _ALGO, "allreduce", OLD) == {"tree"}
    assert enabled("^Ring", _ALGO, "allreduce", OLD) == set(_ALGO.values()) - {"ring"}
    assert enabled("CollNet", _ALGO, "allreduce", (2, 12, 12)) == {"collnet"}
    # no version printed: a plain list reads alike in both rules; a prefixed one does not, so it is not read
    assert enabled("Ring", _ALGO, "allreduce") == {"ring"}
    assert enabled("allreduce:tree", _ALGO, "allreduce") is None


def test_settings_from_the_command_nccl_log_and_command_text():
    assert read_settings("", {"NCCL_ALGO": "Ring"}) == {"NCCL_ALGO": {"value": "Ring", "from": "environment"}}
    log = "host:1:1 [0] NCCL INFO NCCL_ALGO set by environment to Tree\nhost:1:1 [0] NCCL INFO NCCL_NVLS_ENABLE set " \
          "by environment to 0.\n"
    assert read_settings(log, {}) == {"NCCL_ALGO": {"value": "Tree", "from": "NCCL log"},
                                      "NCCL_NVLS_ENABLE": {"value": "0", "from": "NCCL log"}}
    said = "ran all_reduce_perf -g 8 with NCCL_ALGO=Ring\n"
    assert read_settings(said, {})["NCCL_ALGO"] == {"value": "Ring", "from": "command line text"}
    # two mentions that disagree, or a mention on a line that starts no *_perf binary, set nothing
    assert read_settings("all_reduce_perf NCCL_ALGO=Ring vs NCCL_ALGO=Tree\n", {}) == {}
    assert read_settings("NCCL_ALGO=Tree is faster here\n", {}) == {}
    assert read_settings("%% NCCL_ALGO=Ring all_reduce_perf\n", {}) == {}  # the course's own note on a fixture


def test_forced_ring_is_modelled_and_nvls_not_blamed():
    run = nccltests.read_text(TOGETHER.read_text(encoding="utf-8"))
    assert run.settings == {"NCCL_ALGO": {"value": "RING", "from": "command line text"},
                            "NCCL_NVLS_ENABLE": {"value": "0", "from": "command line text"}}
    req = model_request(run)
    assert (req["algo"], req["proto"], req["nvls"]) == ("ring", "auto", False)
    d = diagnose(run)
    assert d.system == "dgx-h100" and d.model_request["algo"] == "ring"
    assert {p["model_algo"] for p in d.overlay} == {"ring"}
    causes = [c["case"] for b in d.bands for c in b["causes"]]
    assert "nvls_missing" not in causes
    big = next(b for b in d.bands if b["band"] == "bandwidth")
    # the fixture's three largest sizes: 366.72, 368.09 (8 GiB) and 363.84 GB/s out of place, at the ring's level
    assert big["level"]["matches"] == "ring" and big["plateau_ratio"] >= 0.85
    assert "nvls" not in big["level"]["levels_GBps"]
    assert any("NCCL_ALGO=RING" in n and "ring" in n for n in d.notes)


def test_forced_settings_in_json(capsys):
    code, out, _ = run_main(["nccl-tests", str(TOGETHER), "--json"], capsys)
    d = json.loads(out)
    assert code == 0 and d["settings"]["NCCL_ALGO"]["value"] == "RING"
    assert d["diagnosis"]["model_request"]["algo"] == "ring" and d["diagnosis"]["model_request"]["nvls"] is False
    assert all(c["case"] != "nvls_missing" for b in d["diagnosis"]["bands"] for c in b["causes"])


def test_single_algorithm_left_by_exclusion_and_nvls_off():
    run = nccltests.NcclTestsRun(op="allreduce", settings={"NCCL_ALGO": {"value": "^NVLS,NVLSTree,Tree",
                                                                         "from": "environment"}})
    assert model_request(run)["algo"] == "ring"  # NCCL's allreduce choices are ring, tree, nvls, nvlstree
    run.settings = {"NCCL_NVLS_ENABLE": {"value": "0", "from": "environment"}}
    assert (model_request(run)["algo"], model_request(run)["nvls"]) == ("auto", False)
    run.settings = {"NCCL_PROTO": {"value": "Simple", "from": "environment"}}
    assert model_request(run)["proto"] == "Simple"
