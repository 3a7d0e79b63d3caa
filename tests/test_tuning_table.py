"""NCCL's TUNING table read from real logs (tests/fixtures/ncclog_tuning and ncclog, URL in each file's header),
and ``nvcourse predict ... --tuning LOG``.

Expected cells are read from the fixture text. The strongest check: the eBPF log also prints NCCL's own pick
for every call ("Broadcast: 1024 Bytes -> Algo RING proto LL"), and the pick computed from the table must equal it.
"""

import json
import math
from pathlib import Path

import pytest
from cli_runs import exit_code
from hypothesis import given, settings
from hypothesis import strategies as st

from nvcourse.cli import main
from nvcourse.nccl import tuning_table
from nvcourse.nccl.ncclog import read_text

FIX = Path(__file__).parent / "fixtures"
EBPF = FIX / "ncclog_tuning" / "rtx5090_2ranks_socket_v2_29_7_ebpf.log"
OLD = FIX / "ncclog_tuning" / "old_layout_collnet_cut_nccl754.log"
H800 = FIX / "ncclog" / "tuning_table_h800_tree_nccl1154.log"


def load(p):
    return read_text(p.read_text(encoding="utf-8"))


def test_new_layout_three_blocks_with_pat_alone():
    (t,) = load(EBPF).tuning_tables
    assert t["layout"] == "2.18+" and not t["truncated"]
    assert t["algorithms"] == ["Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"]
    ar = t["collectives"]["allreduce"]
    assert ar["Ring"]["Simple"] == {"latency_us": 36.4, "algbw_GBps": 2.4}
    assert ar["Tree"]["LL"] == {"latency_us": 16.8, "algbw_GBps": 0.5}
    assert ar["CollNetChain"]["Simple"] == {"latency_us": 14.0, "algbw_GBps": 0.0}
    assert t["collectives"]["allgather"]["PAT"]["Simple"] == {"latency_us": 17.6, "algbw_GBps": 3.6}
    assert t["max_threads"]["Ring"]["Simple"] == 256 and t["max_threads"]["NVLS"]["Simple"] == 640


def test_picks_from_the_table_equal_the_picks_nccl_printed():
    log = load(EBPF)
    (t,) = log.tuning_tables
    assert len(log.tuning_picks) == 18 and log.tuning_picks[0] == {
        "op": "broadcast", "bytes": 1024, "algo": "RING", "proto": "LL", "time_us": None}
    for p in log.tuning_picks:
        mine = tuning_table.pick(t, p["op"], p["bytes"])
        assert (mine["algo"].upper(), mine["proto"].upper()) == (p["algo"], p["proto"]), p


def test_switch_point_read_by_hand_from_the_table():
    """Ring LL 16.6 us / 1.2 GB/s against Ring Simple 36.4 / 2.4: equal at 19.8 us x 2400 B/us = 47520 B."""
    (t,) = load(EBPF).tuning_tables
    sizes = [1024 * 2 ** i for i in range(12)]
    sw = tuning_table.switch_points(sizes, tuning_table.picks(t, "allreduce", sizes))
    assert sw == [{"from_bytes": 32768, "to_bytes": 65536, "before": "Ring/LL", "after": "Ring/Simple"}]


def test_old_layout_cut_inside_a_row():
    (t,) = load(OLD).tuning_tables
    assert t["layout"] == "2.8-2.17" and t["truncated"] is True
    assert t["algorithms"] == ["Tree", "Ring", "CollNet"]
    assert t["collectives"]["broadcast"]["Ring"]["Simple"] == {"latency_us": 18.0, "algbw_GBps": 3.0}
    ag = t["collectives"]["allgather"]
    assert ag["Ring"]["Simple"] == {"latency_us": 105.6, "algbw_GBps": 3.2} and "Simple" not in ag["CollNet"]
    assert t["max_threads"]["Ring"]["Simple"] == 256


def test_h800_paste_cut_in_the_broadcast_row():
    (t,) = load(H800).tuning_tables
    assert t["truncated"] is True and t["algorithms"] == ["Tree", "Ring", "CollNetDirect"]
    assert t["max_threads"]["CollNetDirect"] == {"LL": 0, "LL128": 0, "Simple": 640}
    assert "allreduce" not in t["collectives"]


def test_tree_correction_applies_to_tree_allreduce_only():
    table = {"collectives": {"allreduce": {"Tree": {"Simple": {"latency_us": 10.0, "algbw_GBps": 100.0}}}}}
    # 64 KiB >> 6 = 1024 = 2^10: NCCL's Simple factor at index 10 is 0.6 ([size_correction] in nccl_tuning.toml)
    t = tuning_table.pick(table, "allreduce", 65536)["time_us"]
    assert t == pytest.approx(10.0 + 65536 / (1000 * 100.0 * 0.6))


def test_predict_with_tuning_text_and_json(capsys):
    args = ["predict", "allreduce", "--system", "dgx-h100", "--gpus", "8", "--min-bytes", "1KiB", "--max-bytes",
            "1MiB", "--tuning", str(EBPF)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "NCCL's switch points: 32768-65536 B: Ring/LL -> Ring/Simple" in out and "model's switch points" in out
    assert main([*args, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    by = {r["bytes"]: r["tuning"] for r in rows}
    assert by[32768]["algo"] == "Ring" and by[32768]["proto"] == "LL" and by[32768]["switch_from"] is None
    assert by[65536]["proto"] == "Simple" and by[65536]["switch_from"] == "Ring/LL"
    assert by[1024]["time_us"] == pytest.approx(16.6 + 1024 / 1200)
    assert by[1024]["printed"] is None  # the log printed broadcast picks only
    assert {"time_s", "algo", "proto", "busbw_GBps"} <= set(rows[0])  # the model's fields stay


def test_predict_one_size_with_tuning_json(capsys):
    assert main(["predict", "allreduce", "--system", "dgx-h100", "--gpus", "8", "--bytes", "1MiB", "--tuning",
                 str(EBPF), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["tuning"]["algo"] == "Ring" and d["tuning"]["proto"] == "Simple"


@pytest.mark.parametrize("op,where", [("alltoall", "no TUNING table with a row for alltoall"),
                                      ("allreduce", "no TUNING table with a row for allreduce")])
def test_predict_tuning_bad_input_exits_2(op, where, capsys):
    log = OLD if op == "allreduce" else EBPF  # the cut nccl#754 paste stops before its AllReduce row
    assert exit_code(["predict", op, "--system", "dgx-h100", "--gpus", "8", "--bytes", "1MiB", "--tuning",
                      str(log)]) == 2
    err = capsys.readouterr().err
    assert "--tuning" in err and where in err and "Traceback" not in err


def test_predict_tuning_missing_file_exits_2(capsys, tmp_path):
    assert exit_code(["predict", "allreduce", "--system", "dgx-h100", "--gpus", "8", "--bytes", "1MiB", "--tuning",
                      str(tmp_path / "nope.log")]) == 2
    assert "--tuning" in capsys.readouterr().err


def test_tables_of_two_processes_printed_at_once_do_not_mix():
    """The eBPF log's table as two processes would print it at the same time (lines interleaved, pids 1 and 2)."""
    rows = [ln for ln in EBPF.read_text().splitlines() if "|" in ln and "NCCL INFO" in ln]
    a = [ln.replace("lab:3038984:3038984", "lab:1:1") for ln in rows]
    b = [ln.replace("lab:3038984:3038984", "lab:2:2").replace("36.4/   2.4", "99.9/   9.9") for ln in rows]
    log = read_text("\n".join(x for pair in zip(a, b, strict=True) for x in pair))
    t1, t2 = log.tuning_tables
    assert not t1["truncated"] and not t2["truncated"]
    assert t1["collectives"]["allreduce"]["Ring"]["Simple"] == {"latency_us": 36.4, "algbw_GBps": 2.4}
    assert t2["collectives"]["allreduce"]["Ring"]["Simple"] == {"latency_us": 99.9, "algbw_GBps": 9.9}


_CELLS = ["Algorithm", "Protocol", "Max NThreads", "AllReduce", "Broadcast", "Latency/AlgBw", "Tree", "Ring/ LL",
          "LL", "Simple", "12.5/ 3.0", "0.0/", "512", "", "x/y", "-1.0/ 0.0"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_CELLS), min_size=1, max_size=12), max_size=25))
def test_fuzz_table_lines_never_raise_and_picks_stay_sane(rows):
    text = "".join("h:1:2 [0] NCCL INFO " + " | ".join(r) + " |\n" for r in rows)
    log = read_text(text + "h:1:2 [0] NCCL INFO Using network IB\n")
    for t in log.tuning_tables:
        for op in t["collectives"]:
            p = tuning_table.pick(t, op, 1 << 20)
            assert p is None or math.isfinite(p["time_us"])


def test_agreement_with_the_printed_picks_is_reported():
    log = load(EBPF)
    assert tuning_table.agreement(log.tuning_tables[0], log.tuning_picks) == {"matches": 18, "calls": 18,
                                                                              "differ": []}
    assert "NCCL's printed pick for 18 of 18 calls" in log.to_json()["explanation"]


def test_author_trimmed_table_and_padded_pick_lines():
    """eBPF repo, all_gather (H5's fixture): only Tree and Ring columns kept, pick lines padded ('AllGather:    16
    Bytes -> Algo RING  proto LL') or run together ('AllGather:131072 Bytes'). Ring LL 11.6/2.4 against Ring
    Simple 22.4/4.8 cross at 10.8 us x 4800 B/us = 51840 B; NCCL picked PAT at 32 KiB, a column the author cut."""
    log = load(FIX / "ncclog_tuning" / "rtx5090_socket_allgather_trimmed_table_and_picks_v2_29.log")
    (t,) = log.tuning_tables
    assert t["algorithms"] == ["Tree", "Ring"] and set(t["collectives"]) == {"allgather", "reducescatter"}
    assert t["collectives"]["allgather"]["Ring"]["Simple"] == {"latency_us": 22.4, "algbw_GBps": 4.8}
    assert len(log.tuning_picks) == 23 and log.tuning_picks[11] == {
        "op": "allgather", "bytes": 32768, "algo": "PAT", "proto": "SIMPLE", "time_us": None}
    agree = tuning_table.agreement(t, log.tuning_picks)
    assert (agree["matches"], agree["calls"]) == (22, 23)
    assert agree["differ"] == [{"op": "allgather", "bytes": 32768, "nccl": "PAT/SIMPLE", "table": "Ring/LL"}]


def test_predict_tuning_shows_the_picks_nccl_printed(capsys):
    args = ["predict", "broadcast", "--system", "dgx-h100", "--gpus", "8", "--min-bytes", "1KiB", "--max-bytes",
            "128KiB", "--tuning", str(EBPF), "--json"]
    assert main(args) == 0
    by = {r["bytes"]: r["tuning"] for r in json.loads(capsys.readouterr().out)}
    assert by[16384]["printed"] == "RING/LL" and by[32768]["printed"] == "RING/SIMPLE"
    assert (by[32768]["algo"], by[32768]["proto"]) == ("Ring", "Simple")
    assert main(args[:-1]) == 0 and "NCCL printed" in capsys.readouterr().out


HELD = FIX / "tables_heldout"


@pytest.mark.parametrize("log", sorted(HELD.glob("*.log")), ids=lambda p: p.stem)
def test_predict_tuning_runs_on_every_held_out_log(log, capsys):
    """The seven held-out TUNING logs (tests/fixtures/tables_heldout): every row gets NCCL's pick from the table."""
    assert main(["predict", "allreduce", "--system", "dgx-h100", "--gpus", "8", "--min-bytes", "1KiB", "--max-bytes",
                 "1GiB", "--step-factor", "32", "--tuning", str(log), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 5 and all(r["tuning"]["algo"] and r["tuning"]["time_us"] > 0 for r in rows)


def test_predict_tuning_on_the_held_out_h200_table_without_nvls(capsys):
    """8 x H200, NCCL 2.30.4, NCCL_NVLS_ENABLE=0. From the table's AllReduce row (Ring LL 15.0/80.6, LL128 40.6/189.3,
    Simple 56.0/205.7; us / GB/s), by hand: 32 MiB on Ring/LL128 at 40.6 + 33554432 / 189.3e3 = 217.9 us (Simple
    219.1); 1 GiB on Ring/Simple at 56.0 + 1073741824 / 205.7e3 = 5275.9 us (LL128 5712.8). The log printed
    'AllReduce: 1024 Bytes -> Algo RING proto LL'."""
    log = HELD / "h200x8-nccl2.30.4-nvlsoff-ctc-probe.log"
    args = ["predict", "allreduce", "--system", "hgx-h200", "--gpus", "8", "--no-nvls", "--min-bytes", "1KiB",
            "--max-bytes", "1GiB", "--step-factor", "32", "--tuning", str(log), "--json"]
    assert main(args) == 0
    by = {r["bytes"]: r for r in json.loads(capsys.readouterr().out)}
    assert by[1024]["tuning"]["printed"] == "RING/LL" and (by[1024]["tuning"]["algo"], by[1024]["tuning"]["proto"]) \
        == ("Ring", "LL")
    assert (by[2**25]["tuning"]["algo"], by[2**25]["tuning"]["proto"]) == ("Ring", "LL128")
    assert by[2**25]["tuning"]["time_us"] == pytest.approx(217.9, abs=0.1)
    assert (by[2**30]["tuning"]["algo"], by[2**30]["tuning"]["proto"]) == ("Ring", "Simple")
    assert by[2**30]["tuning"]["time_us"] == pytest.approx(5275.9, abs=0.1)
    assert all(r["nvls_enabled"] is False and r["algo"] != "nvls" for r in by.values())


def test_predict_tuning_says_when_the_table_has_nvls_off_and_the_model_not(capsys):
    """The H200 table printed with NCCL_NVLS_ENABLE=0 (every NVLS and NVLSTree cell 0.0/0.0) against the model with
    NVLS on, which picks NVLS at 1 GiB: a note says to add --no-nvls; with it, or with the NVLS-on table, no note."""
    args = ["predict", "allreduce", "--system", "hgx-h200", "--gpus", "8", "--min-bytes", "1KiB", "--max-bytes", "1GiB",
            "--step-factor", "1024"]
    hint = "add --no-nvls to compare like with like"
    assert main([*args, "--tuning", str(HELD / "h200x8-nccl2.30.4-nvlsoff-ctc-probe.log")]) == 0
    assert hint in capsys.readouterr().out
    assert main([*args, "--no-nvls", "--tuning", str(HELD / "h200x8-nccl2.30.4-nvlsoff-ctc-probe.log")]) == 0
    assert hint not in capsys.readouterr().out
    assert main([*args, "--tuning", str(HELD / "h200x8-nccl2.30.4-ctc-probe.log")]) == 0
    assert hint not in capsys.readouterr().out
