"""A paste that forces NCCL's algorithm (NCCL_ALGO, NCCL_PROTO, NCCL_NVLS_ENABLE): the overlay models what was forced,
and the bands do not blame a missing NVLS on a run told not to use it (nvcourse.nccl.forced)."""

import json
from pathlib import Path

import pytest
from cli_runs import run_main

from nvcourse.nccl import nccltests
from nvcourse.nccl.diagnose import diagnose
from nvcourse.nccl.forced import _ALGO, _PROTO, enabled, model_request, read_settings

FIX = Path(__file__).parent / "fixtures"
TOGETHER = FIX / "heldout_sweeps" / "together-h100-8gpu-single-process-ring-allreduce.txt"
# the command the fixture's header describes ("# launch: nccl-tests all_reduce_perf -b 8 -e 8G -f 2 -g 8 -w 5 -n 20
# (...), NCCL_ALGO=RING NCCL_NVLS_ENABLE=0 (config 'ring' of benchmarks/run_nccl_sharp_test.sh ..."), typed above the
# published output as a learner pastes it: the header is the course's note, which the reader does not read
TOGETHER_COMMAND = "NCCL_ALGO=RING NCCL_NVLS_ENABLE=0 ./all_reduce_perf -b 8 -e 8G -f 2 -g 8 -w 5 -n 20\n"


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
    said = "ran `NCCL_ALGO=Ring ./build/all_reduce_perf -g 8` on each node\n"  # a command in backticks in a sentence
    assert read_settings(said, {})["NCCL_ALGO"] == {"value": "Ring", "from": "command line text"}
    # two mentions that disagree, or a mention on a line that starts no *_perf binary, set nothing
    assert read_settings("all_reduce_perf NCCL_ALGO=Ring vs NCCL_ALGO=Tree\n", {}) == {}
    assert read_settings("NCCL_ALGO=Tree is faster here\n", {}) == {}
    assert read_settings("%% NCCL_ALGO=Ring all_reduce_perf\n", {}) == {}  # the course's own note on a fixture


@pytest.mark.parametrize("line", [
    "ran all_reduce_perf -g 8 with NCCL_ALGO=Ring",  # a sentence: the binary and a setting named, no command
    "we ran all_reduce_perf with NCCL_ALGO=Tree unset",
    "- `all_reduce_perf -b 8 -e 128M -f 2 -g 1` hangs; the addition of `NCCL_PROTO=SIMPLE` results in",  # nccl#1184
    "# launch: NCCL_ALGO=Ring all_reduce_perf -b 8 -e 8G",  # a fixture's header: the course's note
    "# NCCL_ALGO=Tree ./build/all_reduce_perf -b 8 -e 8G -g 8",  # a script's line left out
    "$ ./build/all_reduce_perf -b 8 -e 8G -g 8  # NCCL_ALGO=Tree left out",  # a shell comment after the command
    "    # mpirun -np 16 -x NCCL_ALGO=Tree ./all_reduce_perf",  # indented, still a comment
])
def test_prose_and_comments_set_nothing(line):
    assert read_settings(line + "\n", {}) == {}


@pytest.mark.parametrize(("text", "name", "value"), [
    # a conda environment before the prompt (nccl-tests#82: "(base) gandiva@v100-gpu-1:~/nccl-tests$ mpirun ...")
    ("(base) user@v100-1:~/nccl-tests$ mpirun -np 2 -x NCCL_PROTO=Simple ./build/broadcast_perf -g 1\n",
     "NCCL_PROTO", "Simple"),
    ("[root@gpu3 ~]# NCCL_ALGO=Tree ./build/all_reduce_perf -b 8 -e 8G -g 8\n", "NCCL_ALGO", "Tree"),
    ("srun -N 2 --export=ALL,NCCL_NVLS_ENABLE=0 ./all_gather_perf -g 4\n", "NCCL_NVLS_ENABLE", "0"),
    ("sudo env NCCL_ALGO=Ring /opt/nccl-tests/build/all_reduce_perf_mpi -g 1\n", "NCCL_ALGO", "Ring"),
    # continuation lines: the assignment is on a line of its own, the binary two lines below
    ("mpirun -np 16 \\\n  -x NCCL_ALGO=Tree \\\n  ./build/all_reduce_perf -b 8 -e 8G\n", "NCCL_ALGO", "Tree"),
])
def test_a_command_line_sets_what_it_assigns(text, name, value):
    assert read_settings(text, {}) == {name: {"value": value, "from": "command line text"}}


def test_a_real_prompt_line_is_read_and_a_fixture_header_is_not():
    # nccl-tests#82: the mpirun line after a conda prompt, which the launch reader does not take for the command
    run = nccltests.read_text((FIX / "nccl_tests" / "broadcast_v100_2nodes_socket_v2_9_warn.txt").read_text())
    assert run.settings == {"NCCL_ALGO": {"value": "Ring", "from": "command line text"},
                            "NCCL_PROTO": {"value": "Simple", "from": "command line text"}}
    # the published Together output with the course's "# launch: ... NCCL_ALGO=RING NCCL_NVLS_ENABLE=0" header
    assert nccltests.read_text(TOGETHER.read_text(encoding="utf-8")).settings == {}


def test_forced_ring_is_modelled_and_nvls_not_blamed():
    run = nccltests.read_text(TOGETHER_COMMAND + TOGETHER.read_text(encoding="utf-8"))
    assert run.settings == {"NCCL_ALGO": {"value": "RING", "from": "environment"},
                            "NCCL_NVLS_ENABLE": {"value": "0", "from": "environment"}}
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


def test_forced_settings_in_json(capsys, tmp_path):
    paste = tmp_path / "paste.txt"
    paste.write_text(TOGETHER_COMMAND + TOGETHER.read_text(encoding="utf-8"), encoding="utf-8")
    code, out, _ = run_main(["nccl-tests", str(paste), "--json"], capsys)
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
