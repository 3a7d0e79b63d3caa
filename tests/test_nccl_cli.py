"""`nvcourse nccl-tests` and `nvcourse ncclog`: exit codes, JSON fields, bad input, fuzzing, bench round trip."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runs import run_main
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nvcourse.cli import main
from nvcourse.collectives.cli import run_shm
from nvcourse.nccl import ncclog, nccltests
from nvcourse.nccl.format import format_nccl_tests

FIX = Path(__file__).parent / "fixtures"
DATA = Path(__file__).parents[1] / "nvcourse" / "data" / "nccl"
ROW_KEYS = {"bytes", "count", "type", "redop", "root", "oop_time_us", "oop_algbw_GBps", "oop_busbw_GBps", "oop_wrong",
            "ip_time_us", "ip_algbw_GBps", "ip_busbw_GBps", "ip_wrong"}


def run_cli(args, capsys):
    return run_main(args, capsys)


def test_nccl_tests_json_fields(capsys):
    code, out, _ = run_cli(["nccl-tests", str(DATA / "h100_2nodes_16ranks_k8s_mpijob.txt"), "--json"],
                           capsys)
    assert code == 0
    d = json.loads(out)
    for key in ("op", "nranks", "nccl_version", "gpus", "rows", "out_of_bounds", "avg_busbw_GBps", "diagnosis"):
        assert key in d
    assert set(d["rows"][0]) >= ROW_KEYS
    assert d["diagnosis"]["system"] == "dgx-h100" and d["diagnosis"]["bands"]


def test_nccl_tests_text_report_and_plot(capsys, tmp_path):
    png = tmp_path / "o.png"
    code, out, _ = run_cli(["nccl-tests", str(DATA / "h100_8gpu_single_node_markdown_indented.txt"),
                            "--plot", str(png)], capsys)
    assert code == 0 and "bandwidth" in out and "NVLS" in out
    assert png.stat().st_size > 1000


def test_system_given_for_unrecognised_gpus(capsys):
    f = FIX / "nccl_tests" / "tree_h100_2nodes_1gpu_rows_only.txt"
    code, out, _ = run_cli(["nccl-tests", str(f), "--system", "dgx-h100", "--gpus", "1", "--nodes", "2", "--json"],
                           capsys)
    assert code == 0
    d = json.loads(out)
    assert d["nranks"] == 2 and d["diagnosis"]["nodes"] == 2 and len(d["diagnosis"]["overlay"]) == 5


def test_ncclog_json(capsys):
    code, out, _ = run_cli(["ncclog", str(DATA / "h800_nvls_not_available_nccl892.log"), "--json"], capsys)
    d = json.loads(out)
    assert code == 0
    for key in ("version", "ranks", "hosts", "devices", "net", "gdr", "transports", "channels", "rings", "trees",
                "nvls", "tuning", "warnings", "explanation"):
        assert key in d
    assert d["nvls"]["channels"] == 0


@pytest.mark.parametrize("args, expect", [
    (["nccl-tests", "FILE"], "expected result rows"),
    (["ncclog", "FILE"], "expected NCCL_DEBUG=INFO lines"),
    (["nccl-tests", "FILE", "--system", "dgx-h999"], "--system must be one of"),
    (["nccl-tests", "FILE", "--gpus", "0"], "--gpus must be an integer >= 1"),
])
def test_bad_input_exits_2_with_message(args, expect, capsys, tmp_path):
    f = tmp_path / "x.txt"
    f.write_text("this is not what nccl printed\n1 2 3\n")
    code, _, err = run_cli([str(f) if a == "FILE" else a for a in args], capsys)
    assert code == 2 and expect in err and "Traceback" not in err


def test_binary_and_missing_files_exit_2(capsys, tmp_path):
    f = tmp_path / "b.bin"
    f.write_bytes(b"\x00\x01\x02")
    assert run_cli(["nccl-tests", str(f)], capsys)[0] == 2
    assert run_cli(["ncclog", str(tmp_path / "missing.log")], capsys)[0] == 2


_LINES = st.sampled_from([
    "# nThread 1 nGpus 8 minBytes 8 maxBytes 128 step: 2(factor) warmup iters: 5 iters: 20 validation: 1",
    "#  Rank  0 Group  0 Pid 1 on h device  0 [0x1b] NVIDIA H100 80GB HBM3",
    "#  size  count  type  redop  root  time  algbw  busbw #wrong  time  algbw  busbw #wrong",
    "  1048576  262144  float  sum  -1  27.52  38.10  66.67  0  27.41  38.26  66.95  0",
    "     1048576        262144     float     sum      -1    27.52   38.10",
    "     8  2  float  none  3  1.0  0.00  0.00  N/A  1.0  0.00  0.00  N/A",
    "# Out of bounds values : 3 FAILED", "# Avg bus bandwidth    : nan",
    "h:1:2 [0] NCCL INFO Channel 00/02 :    0   1", "h:1:2 [0] NCCL INFO Trees [0] 1/-1/-1->0->-1",
    "[1,0]<stdout>:h:1:2 [3] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via NET/IB/0/GDRDMA", "NCCL version 2.99.1+cuda9",
    "h:1:2 [0] NCCL WARN boom", "h:1:2 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 1", "", "\r", "> ```",
])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_LINES, st.text(max_size=80)), max_size=25))
def test_fuzz_readers_never_raise_anything_but_valueerror(lines):
    text = "\n".join(lines)
    for reader in (nccltests.read_text, ncclog.read_text):
        try:
            out = reader(text)
        except ValueError:
            continue
        json.dumps(out.to_json())  # whatever was read serialises


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=200))
def test_fuzz_cli_bytes_never_traceback(tmp_path_factory, data):
    f = tmp_path_factory.mktemp("fz") / "in.txt"
    f.write_bytes(data)
    for cmd in ("nccl-tests", "ncclog"):
        try:
            code = main([cmd, str(f), "--json"])
        except SystemExit as exc:
            code = exc.code
        assert code in (0, 2)


def test_bench_nccl_tests_format_round_trip():
    rows = run_shm("allreduce", [4096, 65536], 2, iters=3, warmup=1)
    text = format_nccl_tests(rows, "allreduce", 2, iters=3, warmup=1)
    run = nccltests.read_text(text)
    assert (run.op, run.op_source, run.nranks) == ("allreduce", "header", 2)
    assert [r["bytes"] for r in run.rows] == [4096, 65536]
    for got, want in zip(run.rows, rows, strict=True):
        assert got["count"] == want["bytes"] // 4 and got["type"] == "float" and got["redop"] == "sum"
        assert got["oop_time_us"] == pytest.approx(want["time_s"] * 1e6, abs=0.006)
        assert got["oop_busbw_GBps"] == pytest.approx(want["busbw_GBps"], abs=0.006)
        assert got["oop_wrong"] == 0 and got["ip_time_us"] is None
    assert run.out_of_bounds == 0


def test_bench_cli_pipes_into_nccl_tests():
    env_py = [sys.executable, "-m", "nvcourse"]
    bench = subprocess.run([*env_py, "bench", "allgather", "-n", "3", "--min-bytes", "3KiB", "--max-bytes", "12KiB",
                            "--iters", "2", "--warmup", "1", "--format", "nccl-tests"],
                           capture_output=True, text=True, timeout=120, check=True)
    read = subprocess.run([*env_py, "nccl-tests", "-", "--json"], input=bench.stdout, capture_output=True,
                          text=True, timeout=120, check=True)
    d = json.loads(read.stdout)
    assert d["op"] == "allgather" and d["nranks"] == 3
    assert [r["bytes"] for r in d["rows"]] == [3072, 6144, 12288]
    assert [r["count"] for r in d["rows"]] == [256, 512, 1024]  # per-rank count, as nccl-tests prints for allgather


def test_a_paste_cut_before_its_first_row_is_read_and_plot_refuses_it(capsys, tmp_path):
    # nccl-tests#313 (held-out set 3): command, UCX warnings, header and 8 device lines, cut at the column header
    paste = FIX / "pasted_heldout3" / "nccltests313_alltoall_g8_h20_ucx_warns_cut_at_column_header.txt"
    code, out, err = run_cli(["nccl-tests", str(paste)], capsys)
    assert code == 0 and "op: alltoall (from the command line)" in out and "ranks: 8" in out
    assert "rows: none" in out and "note: no complete result row" in out and "Traceback" not in out + err
    code, out, err = run_cli(["nccl-tests", str(paste), "--plot", str(tmp_path / "x.png")], capsys)
    assert code == 2 and "--plot needs result rows" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("extra", [[], ["--system", "dgx-h100", "--gpus", "1", "--nodes", "1"]])
def test_an_operation_without_a_model_ring_is_never_told_to_pass_system(extra, capsys):
    # a real RTX 5090 all-to-all paste: the model has no ring for all-to-all, so no --system gives an overlay;
    # the note says so instead of sending the reader to flags that cannot help
    paste = str(FIX / "nccl_tests" / "alltoall_rtx5090_1gpu_na.txt")
    code, out, err = run_main(["nccl-tests", paste, *extra], capsys)
    assert code == 0, err
    assert "note: the model has no overlay for alltoall, whatever the system" in out
    assert "pass --system" not in out and "no model overlay:" not in out
