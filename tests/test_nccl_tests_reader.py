"""nvcourse.nccl.nccltests on real nccl-tests outputs (tests/fixtures/nccl_tests, sources in each file's header).

Every expected value below was written by reading the fixture text, not from the reader's output. The reader was
developed against the DEV fixtures; the HELD-OUT ones were tested only after the reader was written.
"""

from pathlib import Path

import pytest

from nvcourse.nccl.diagnose import diagnose, recognise_system
from nvcourse.nccl.nccltests import op_from_ratio, read_all, read_text, version_from_code

FIX = Path(__file__).parent / "fixtures" / "nccl_tests"
DATA = Path(__file__).parents[1] / "nvcourse" / "data" / "nccl"


def path(name):
    """Fixtures the chapter uses live in nvcourse/data/nccl, the others under tests/fixtures."""
    return FIX / name if (FIX / name).exists() else DATA / name


def load(name):
    return read_text(path(name).read_text(encoding="utf-8"))


ROW_KEYS = {"bytes", "count", "type", "redop", "root", "oop_time_us", "oop_algbw_GBps", "oop_busbw_GBps", "oop_wrong",
            "ip_time_us", "ip_algbw_GBps", "ip_busbw_GBps", "ip_wrong"}


# ---------------------------------------------------------------- DEV fixtures
def test_socket_rtx5090_mpirun_tags_and_library_version():
    r = load("socket_rtx5090_2ranks_mpirun_v2_18.txt")
    assert (r.op, r.op_source) == ("allreduce", "header")
    assert r.nccl_version == "2.29.7" and r.nccl_tests_version == "2.18.0"
    assert r.nranks == 2 and r.gpus == ["NVIDIA GeForce RTX 5090"] and r.hosts == ["lab"]
    assert r.ranks[1] == {"rank": 1, "group": 0, "pid": 2994448, "host": "lab", "device": 0,
                          "bus_id": "0000:02:00", "gpu": "NVIDIA GeForce RTX 5090"}
    assert r.header == {"nthread": 1, "ngpus": 1, "min_bytes": 1048576, "max_bytes": 134217728, "step": 2,
                        "step_kind": "factor", "warmup_iters": 10, "iters": 50, "agg_iters": 1, "validation": 1,
                        "graph": 0}
    assert len(r.rows) == 8 and set(r.rows[0]) >= ROW_KEYS
    assert r.rows[4] == {"bytes": 16777216, "count": 4194304, "type": "float", "redop": "sum", "root": -1,
                         "oop_time_us": 7728.29, "oop_algbw_GBps": 2.17, "oop_busbw_GBps": 2.17, "oop_wrong": 0,
                         "ip_time_us": 7659.38, "ip_algbw_GBps": 2.19, "ip_busbw_GBps": 2.19, "ip_wrong": 0}
    assert r.out_of_bounds == 0 and r.avg_busbw_GBps == 1.57614


def test_a100_two_nodes_kubectl_noise():
    r = load("a100_2nodes_16ranks_oke.txt")
    assert r.op == "allreduce" and r.op_source == "busbw/algbw ratio"
    assert r.nranks == 16 and r.hosts == ["nccl-allreduce-job0-mpiworker-0", "nccl-allreduce-job0-mpiworker-1"]
    assert r.gpus == ["NVIDIA A100-SXM4-40GB"] and r.nccl_version is None
    assert len(r.rows) == 31
    assert r.rows[0]["bytes"] == 8 and r.rows[0]["oop_time_us"] == 36.47
    last = r.rows[-1]
    assert (last["bytes"], last["oop_time_us"], last["oop_busbw_GBps"], last["ip_busbw_GBps"]) == (
        8589934592, 67689.0, 237.94, 237.52)
    assert r.avg_busbw_GBps == 66.4834 and r.out_of_bounds == 0
    assert recognise_system(r) == ("dgx-a100", 8, 2)


def test_alltoall_single_gpu_na_and_command_line_op():
    r = load("alltoall_rtx5090_1gpu_na.txt")
    assert (r.op, r.op_source, r.nranks) == ("alltoall", "command line", 1)
    assert r.header["step"] == 1048576 and r.header["step_kind"] == "bytes"
    row = r.rows[0]
    assert (row["redop"], row["oop_algbw_GBps"], row["oop_busbw_GBps"], row["ip_time_us"], row["ip_wrong"]) == (
        "none", 1715.44, 0.0, 0.78, None)
    assert r.avg_busbw_GBps == 0.0


def test_old_error_column_and_truncated_row():
    r = load("allreduce_128gpu_old_error_column_truncated.txt")
    assert len(r.rows) == 6 and r.rows[-1]["bytes"] == 131072
    row = r.rows[0]
    assert row["root"] is None and row["redop"] == "sum"
    assert row["oop_wrong"] is None and row["oop_error"] == 1e-06 and row["ip_error"] == 1e-06
    assert r.op == "allreduce"  # 2.15 / 1.08 ~ 2(n-1)/n for large n
    assert any("truncated" in n for n in r.notes)


# ---------------------------------------------------------------- HELD-OUT fixtures
def test_heldout_rtx5090_pcie_p2p_sweep_without_footer():
    # aikitoria/open-gpu-kernel-modules README @ 08dc345: 8x RTX 5090 over PCIe, -g 8; the README stops after the
    # last row (no "Out of bounds" / "Avg bus bandwidth" lines). Also the PCIe sweep of data/measurements.toml.
    r = load("allreduce_rtx5090_8gpu_pcie_p2p_v2_18.txt")
    assert (r.op, r.op_source) == ("allreduce", "header")
    assert r.nccl_version == "2.29.7" and r.nccl_tests_version == "2.18.2"
    assert r.nranks == 8 and r.hosts == ["crazy"] and r.gpus == ["NVIDIA GeForce RTX 5090"]
    assert r.ranks[7] == {"rank": 7, "group": 0, "pid": 27238, "host": "crazy", "device": 7,
                          "bus_id": "0000:f1:00", "gpu": "NVIDIA GeForce RTX 5090"}
    assert r.header["ngpus"] == 8 and (r.header["min_bytes"], r.header["max_bytes"]) == (8, 134217728)
    assert (r.header["warmup_iters"], r.header["iters"], r.header["graph"]) == (1, 20, 0)
    assert len(r.rows) == 25 and r.rows[0]["bytes"] == 8 and r.rows[-1]["bytes"] == 134217728
    assert r.rows[9] == {"bytes": 4096, "count": 1024, "type": "float", "redop": "sum", "root": -1,
                         "oop_time_us": 36.29, "oop_algbw_GBps": 0.11, "oop_busbw_GBps": 0.20, "oop_wrong": 0,
                         "ip_time_us": 35.21, "ip_algbw_GBps": 0.12, "ip_busbw_GBps": 0.20, "ip_wrong": 0}
    assert r.rows[-1]["ip_time_us"] == 5329.43 and r.rows[-1]["oop_busbw_GBps"] == 43.86
    assert r.avg_busbw_GBps is None


def test_the_pcie_sweep_in_the_data_is_the_fixtures_in_place_column():
    from nvcourse.costmodel import sweeps

    r = load("allreduce_rtx5090_8gpu_pcie_p2p_v2_18.txt")
    pts = [p for p in sweeps.points() if p.sweep == "aikitoria-rtx5090-pcie-allreduce-8gpu"]
    assert [p.bytes for p in pts] == [row["bytes"] for row in r.rows]
    assert [round(p.time_s * 1e6, 2) for p in pts] == [row["ip_time_us"] for row in r.rows]
    assert not pts[0].covered and pts[0].nccl_version == "2.29.7" and pts[0].launch == "single-process"


def test_heldout_h100_single_node_markdown_indented():
    r = load("h100_8gpu_single_node_markdown_indented.txt")
    assert r.op == "allreduce" and r.nranks == 8 and r.hosts == ["host"]
    assert r.gpus == ["NVIDIA H100 80GB HBM3"]
    assert r.header["ngpus"] == 8 and r.header["min_bytes"] == 268435456 and r.header["max_bytes"] == 2147483648
    assert len(r.rows) == 4
    assert r.rows[0] == {"bytes": 268435456, "count": 67108864, "type": "float", "redop": "sum", "root": -1,
                         "oop_time_us": 1119.8, "oop_algbw_GBps": 239.71, "oop_busbw_GBps": 419.49, "oop_wrong": 0,
                         "ip_time_us": 1117.4, "ip_algbw_GBps": 240.24, "ip_busbw_GBps": 420.42, "ip_wrong": 0}
    assert r.rows[-1]["oop_busbw_GBps"] == 470.73 and r.rows[-1]["ip_busbw_GBps"] == 470.63
    assert r.out_of_bounds == 0 and r.avg_busbw_GBps == 448.212


def test_heldout_h100_two_nodes_k8s():
    r = load("h100_2nodes_16ranks_k8s_mpijob.txt")
    assert r.op == "allreduce" and r.nranks == 16
    assert r.hosts == ["nccl-tests-h100-worker-0", "nccl-tests-h100-worker-1"]
    assert len(r.rows) == 5
    first = r.rows[0]
    assert (first["bytes"], first["count"], first["oop_time_us"], first["oop_algbw_GBps"], first["oop_busbw_GBps"],
            first["ip_time_us"], first["ip_algbw_GBps"], first["ip_busbw_GBps"]) == (
        536870912, 134217728, 5202.3, 103.20, 193.50, 5377.7, 99.83, 187.19)
    assert r.rows[-1]["bytes"] == 8589934592 and r.rows[-1]["oop_busbw_GBps"] == 196.52
    assert r.avg_busbw_GBps == 194.675 and r.out_of_bounds == 0


def test_heldout_sendrecv_inferred_from_na_inplace():
    r = load("sendrecv_a40_2nodes_truncated.txt")
    assert r.nranks == 2 and r.hosts == ["gpu23", "gpu24"] and r.gpus == ["NVIDIA A40"]
    assert r.op == "sendrecv"
    assert len(r.rows) == 5 and r.rows[-1]["bytes"] == 4096
    assert all(row["ip_wrong"] is None and row["oop_wrong"] == 0 for row in r.rows)
    assert r.rows[2]["ip_time_us"] == 31.11
    assert any("truncated" in n for n in r.notes)
    assert r.out_of_bounds is None and r.avg_busbw_GBps is None


def test_heldout_rows_only_tree_two_nodes():
    r = load("tree_h100_2nodes_1gpu_rows_only.txt")
    assert (r.op, r.op_source) == ("allreduce", "command line")
    # no device lines; busbw = algbw (18.53 / 18.53) is 2(n-1)/n for n = 2, as the command's "-np 2 ... -g 1" says
    assert r.nranks == 2 and r.header == {} and any("busbw/algbw" in n for n in r.notes)
    assert len(r.rows) == 5
    assert r.rows[0]["oop_time_us"] == 113.2 and r.rows[0]["ip_busbw_GBps"] == 22.46
    assert r.rows[-1]["bytes"] == 33554432 and r.rows[-1]["oop_busbw_GBps"] == 41.31
    assert any("truncated" in n for n in r.notes)


def test_heldout_old_format_without_redop_column():
    r = load("old_format_no_redop_2gpu_v2_6.txt")
    assert len(r.rows) == 12
    row = r.rows[0]
    assert (row["bytes"], row["count"], row["type"], row["redop"], row["root"]) == (65536, 8192, "float", None, None)
    assert (row["oop_time_us"], row["oop_busbw_GBps"], row["ip_time_us"], row["ip_busbw_GBps"]) == (
        16.57, 1.98, 13.83, 2.37)
    assert row["oop_error"] == 0.0 and row["oop_wrong"] is None
    assert r.rows[-1]["oop_time_us"] == 3298.6 and r.rows[-1]["ip_busbw_GBps"] == 21.86
    assert r.out_of_bounds == 0 and r.avg_busbw_GBps == 6.6972
    # busbw == algbw with no rank count: broadcast, reduce, sendrecv and 2-rank allreduce all fit
    assert r.op is None and set(r.op_candidates) == {"broadcast", "reduce", "sendrecv", "allreduce"}


def test_heldout_efa_interleaved_nccl_info():
    r = load("efa_aws_libfabric_mpirun_tagged.log")
    assert r.op == "allreduce" and r.nranks == 2 and r.gpus == ["Tesla T4"]
    assert r.nccl_version == "2.12.7"
    assert len(r.rows) == 31 and r.rows[0]["bytes"] == 0 and r.rows[0]["oop_time_us"] == 6.36
    last = r.rows[-1]
    assert (last["bytes"], last["oop_time_us"], last["oop_busbw_GBps"], last["ip_time_us"], last["ip_busbw_GBps"]) == (
        1073741824, 344981.0, 3.11, 344454.0, 3.12)
    assert r.avg_busbw_GBps == 1.15327 and r.out_of_bounds == 0


def test_heldout_nvls_rows_truncated():
    r = load("nvls_allreduce_rows_truncated_mscclpp.txt")
    assert r.op == "allreduce" and len(r.rows) == 6
    assert r.rows[0]["oop_time_us"] == 5.45 and r.rows[-1]["bytes"] == 32768 and r.rows[-1]["ip_busbw_GBps"] == 7.76
    assert any("truncated" in n for n in r.notes)


def test_heldout_header_without_complete_row_gives_what_it_shows():
    # cut after the first row's out-of-place half: no row to read, but the command, header and 8 device lines are
    r = load("tree_rtx4090_8gpu_pcie_one_row.txt")
    assert r.rows == [] and r.notes[-1].startswith("no complete result row")
    assert (r.op, r.op_source, r.nranks, r.hosts, r.gpus) == (
        "allreduce", "command line", 8, ["gpu59"], ["NVIDIA GeForce RTX 4090"])
    assert (r.header["min_bytes"], r.header["max_bytes"], r.header["iters"]) == (8, 134217728, 20)
    assert r.launch["env"] == {"NCCL_ALGO": "TREE"}


def test_text_with_no_header_device_line_or_row_is_still_rejected():
    with pytest.raises(ValueError, match="expected result rows"):
        read_text("all_reduce_perf hangs for me, any idea?\n")


# ---------------------------------------------------------------- helpers and diagnosis
def test_version_codes():
    assert version_from_code(22902) == "2.29.2" and version_from_code(21903) == "2.19.3"
    assert version_from_code(2708) == "2.7.8"


def test_op_from_ratio_formulas():
    assert op_from_ratio(1.75, 8) == ["allreduce"]
    assert set(op_from_ratio(0.875, 8)) == {"allgather", "reducescatter", "alltoall"}
    assert op_from_ratio(1.5, None) == ["allreduce"]


def test_two_runs_in_one_paste():
    names = ("socket_rtx5090_2ranks_mpirun_v2_18.txt", "a100_2nodes_16ranks_oke.txt")
    text = "".join(path(n).read_text() for n in names)
    runs = read_all(text)
    assert [len(r.rows) for r in runs] == [8, 31]


def test_diagnosis_nvls_signature_single_node_h100():
    r = load("h100_8gpu_single_node_markdown_indented.txt")
    d = diagnose(r)
    assert (d.system, d.gpus, d.nodes) == ("dgx-h100", 8, 1)
    band = {b["band"]: b for b in d.bands}["bandwidth"]
    assert "NVLS" in band["verdict"] and band["busbw_GBps"] > 400


def test_diagnosis_two_nodes_above_nic_rate_cites_tree():
    # 2 x 8 A100: 237.94 GB/s at 8 GB, above what a DGX A100's 8 HDR NICs carry (8 x 25 GB/s line)
    d = diagnose(load("a100_2nodes_16ranks_oke.txt"))
    assert (d.system, d.gpus, d.nodes) == ("dgx-a100", 8, 2)
    band = {b["band"]: b for b in d.bands}["bandwidth"]
    assert band["causes"][0]["case"] == "tree_beats_nic"
    assert band["causes"][0]["source"].startswith("https://github.com/NVIDIA/")


def test_diagnosis_ring_level_busbw_is_not_called_above_the_nics():
    # 2 x 8 H100 at 196.52 GB/s: below the 8 NDR NICs of a DGX H100 together, so no tree note
    d = diagnose(load("h100_2nodes_16ranks_k8s_mpijob.txt"))
    band = {b["band"]: b for b in d.bands}["bandwidth"]
    assert "tree_beats_nic" not in {c["case"] for c in band["causes"]}


def test_diagnosis_wrong_results_first():
    r = load("socket_rtx5090_2ranks_mpirun_v2_18.txt")
    r.rows[3]["oop_wrong"] = 5
    d = diagnose(r)
    assert d.findings[0]["case"] == "wrong_nonzero"


def test_unrecognised_gpu_gives_a_note_not_an_overlay():
    d = diagnose(load("efa_aws_libfabric_mpirun_tagged.log"))
    assert d.system is None and d.overlay == [] and "not recognised" in d.notes[0]


# ---------------------------------------------------------------- SECOND HELD-OUT round (added after the chapter)
def test_heldout2_reduce_scatter_rows_only():
    r = load("reduce_scatter_2x4gpu_rows_only_nccltests128.txt")
    assert len(r.rows) == 7 and [x["bytes"] for x in r.rows[-2:]] == [128, 256]
    assert r.rows[5]["count"] == 4 and r.rows[5]["ip_algbw_GBps"] == 0.01
    # count x 4 B x 8 ranks = size: the per-rank count of the reduce-scatter family, with a reduction
    assert r.op == "reducescatter" and r.nranks == 8
    assert any("truncated" in n for n in r.notes)


def test_heldout2_broadcast_old_columns_with_warn_lines():
    r = load("broadcast_v100_2nodes_socket_v2_9_warn.txt")
    assert (r.op, r.op_source) == ("broadcast", "command line")
    assert r.nranks == 2 and r.hosts == ["v100-gpu-1", "v100-gpu-5"] and r.gpus == ["Tesla V100-PCIE-16GB"]
    assert r.ranks[1]["group"] is None and r.ranks[1]["pid"] == 9210
    assert r.nccl_version == "2.9.6" and r.header["validation"] == 0 and "graph" not in r.header
    assert len(r.rows) == 1
    row = r.rows[0]
    assert (row["bytes"], row["count"], row["redop"], row["root"], row["oop_time_us"], row["ip_time_us"]) == (
        8, 2, None, 0, 45.82, 38.17)
    assert row["oop_wrong"] is None and row["oop_error"] is None


# ---------------------------------------------------------------- THIRD HELD-OUT round
def test_heldout3_old_rank_lines_and_error_column():
    r = load("allreduce_2080ti_4ranks_old_error_npkit19.txt")
    assert r.nranks == 4 and r.hosts == ["gpu9"] and r.gpus == ["NVIDIA GeForce RTX 2080 Ti"]
    assert [x["pid"] for x in r.ranks] == [20141, 20142, 20143, 20144]
    assert r.ranks[2]["bus_id"] == "0xb1" and r.ranks[2]["group"] is None
    assert r.header["validation"] == 1 and "agg_iters" not in r.header and r.header["warmup_iters"] == 5
    assert len(r.rows) == 3
    first = r.rows[0]
    got = (first["bytes"], first["count"], first["redop"], first["root"], first["oop_time_us"], first["ip_time_us"])
    assert got == (8, 2, "sum", None, 40.17, 62.08)
    assert first["oop_error"] == 1e-07 and first["ip_error"] == 0.0 and first["oop_wrong"] is None
    # every busbw is 0.00 at these sizes: no ratio to read, and count = S/4 rules out the per-rank-count family
    assert r.op is None
    assert any("truncated" in n for n in r.notes)


# ---------------------------------------------------------------- FOURTH HELD-OUT round
def test_heldout4_mpirun_timestamp_output_tags():
    r = load("timestamp_tagged_h100_roce_nccl1368.txt")
    assert (r.op, r.op_source) == ("allreduce", "command line")
    assert len(r.rows) == 1
    row = r.rows[0]
    got = (row["bytes"], row["count"], row["oop_time_us"], row["oop_busbw_GBps"], row["ip_time_us"])
    assert got == (1048576, 262144, 354.9, 5.76, 345.7) and row["ip_busbw_GBps"] == 5.92
    assert any("truncated" in n for n in r.notes)


def test_rank_tags_in_the_middle_of_rows():
    """nccl#1453: every write carries '[0]', so rows read '... sum      -1[0]    1626.5 ...'; the excerpt starts
    with the tail of a row and ends inside the 1 GiB row. Ten whole rows, 1 MiB to 512 MiB."""
    r = load("allreduce_h100_rank_tags_mid_row_nccl1453.txt")
    assert [row["bytes"] for row in r.rows] == [2**20 * 2**i for i in range(10)]
    assert r.rows[0] == {"bytes": 1048576, "count": 262144, "type": "float", "redop": "sum", "root": -1,
                         "oop_time_us": 1626.5, "oop_algbw_GBps": 0.64, "oop_busbw_GBps": 1.24, "oop_wrong": 0,
                         "ip_time_us": 2302.3, "ip_algbw_GBps": 0.46, "ip_busbw_GBps": 0.87, "ip_wrong": 0}
    assert r.rows[-1]["oop_busbw_GBps"] == 5.31 and r.op == "allreduce"
    assert any("truncated row" in n for n in r.notes)


def test_nranks_from_busbw_over_algbw_when_no_device_lines():
    """nccl#1453 pastes no device lines; its ring lines (another excerpt of the thread) list ranks 0-23. On the
    row with the largest algbw, 29.50 / 15.39 = 1.9168 = 2(n-1)/n gives n = 24.0, and the 2-decimal rounding
    cannot move it to 23 or 25."""
    r = load("allreduce_h100_rank_tags_mid_row_nccl1453.txt")
    assert r.nranks == 24 and any("inferred from busbw/algbw" in n for n in r.notes)


def test_cuda_version_from_the_nccl_version_line():
    r = load("broadcast_v100_2nodes_socket_v2_9_warn.txt")  # "NCCL version 2.9.6+cuda11.2"
    assert (r.nccl_version, r.cuda) == ("2.9.6", "11.2")


# ---------------------------------------------------------------- elided rows and the pasted command line
def test_elision_line_and_skipped_sizes_mark_rows_left_out():
    rows = SAMPLE_ROWS.splitlines()
    assert read_text(SAMPLE_ROWS).elided is False
    assert read_text("\n".join([*rows[:2], "   ...", *rows[2:]])).elided is True
    assert read_text("\n".join([*rows[:2], "[1,0]<stdout>:[...]", *rows[2:]])).elided is True
    assert read_text("\n".join([rows[0], "...", *rows[1:]])).elided is False  # before any row: device lines
    # 1 MiB then 4 MiB under "step: 2(factor)": the 2 MiB row was cut
    assert read_text("\n".join([rows[0], rows[1], rows[3]])).elided is True


SAMPLE_ROWS = """\
# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 \
validation: 1 graph: 0
     1048576        262144     float     sum      -1    113.4    9.24   17.33      0    108.9    9.63   18.05      0
     2097152        524288     float     sum      -1    130.8   16.03   30.06      0    129.0   16.25   30.48      0
     4194304       1048576     float     sum      -1    180.0   23.30   43.70      0    179.3   23.39   43.86      0"""


def test_pasted_launch_command_is_read():
    """The launcher, its rank count and hosts and the environment it passes, from the forms the launchers document:
    Open MPI `-x VAR=VAL`, Slurm `--export=ALL,VAR=VAL`, MPICH/Intel MPI `-genv VAR VAL`, `VAR=VAL cmd`, `export`."""
    mpi = read_text("$ mpirun -np 16 -H a:8,b:8 --mca btl ^openib \\\n  -x NCCL_IB_HCA=mlx5_0:1,mlx5_3:1 \\\n"
                    "  -x LD_LIBRARY_PATH ./build/all_reduce_perf -b 1M -e 4M -f 2\n" + SAMPLE_ROWS).launch
    assert (mpi["launcher"], mpi["np"], mpi["hosts"]) == ("mpirun", 16, "a:8,b:8")
    assert mpi["env"] == {"NCCL_IB_HCA": "mlx5_0:1,mlx5_3:1"} and mpi["ib_hcas"] == ["mlx5_0", "mlx5_3"]
    assert mpi["binary"] == "all_reduce_perf" and mpi["args"] == ["-b", "1M", "-e", "4M", "-f", "2"]
    srun = read_text("export NCCL_DEBUG=INFO\nNCCL_ALGO=Ring srun -N 2 -n 16 -c 12 --export=ALL,NCCL_IB_HCA=^mlx5_4 "
                     "all_reduce_perf_mpi -b 1M\n" + SAMPLE_ROWS).launch
    assert (srun["launcher"], srun["np"]) == ("srun", 16)  # srun's -c is CPUs per task, not ranks
    assert srun["env"] == {"NCCL_DEBUG": "INFO", "NCCL_ALGO": "Ring", "NCCL_IB_HCA": "^mlx5_4"}
    assert srun["ib_hcas"] == []  # '^' names the devices NCCL leaves out
    hydra = read_text("mpiexec -genv NCCL_PROTO Simple -n 4 ./all_reduce_perf\n" + SAMPLE_ROWS).launch
    assert (hydra["launcher"], hydra["np"], hydra["env"]) == ("mpiexec", 4, {"NCCL_PROTO": "Simple"})
    bare = read_text(SAMPLE_ROWS).launch
    assert bare["launcher"] is None and bare["env"] == {} and bare["binary"] is None


def test_device_lines_cut_before_the_last_rank_still_give_the_rank_count():
    """CoreWeave's NVL72 example keeps only '#  Rank 71 ...': 72 ranks, and busbw/algbw = 2*71/72 says allreduce."""
    r = read_text((Path(__file__).parent / "fixtures" / "pasted_heldout" /
                   "coreweave_nvl72_gb200_allreduce_cut_at_rank71.txt").read_text(encoding="utf-8"))
    assert (r.nranks, r.op, r.hosts) == (72, "allreduce", ["slurm-gb200-207-171"])
    assert "device lines for 71 of 72 ranks are not in the paste" in r.notes


# ---------------------------------------------------------------- lines from tests/fixtures/pasted_heldout2 (real)

_AR_COLS = ("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw"
            "   busbw #wrong\n")


def test_lines_that_lost_their_hash_to_markdown_are_still_read():
    # an A3 Mega note: the parameter line and rank 0 lost their "#"; nccl-tests issue 37: the footer lost it
    text = ("nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
            "validation: 1 graph: 0\n\nUsing devices\n"
            "  Rank  0 Group  0 Pid   6899 on ztan-mig-235z device  0 [0000:04:00] NVIDIA H100 80GB HBM3\n"
            "#  Rank  1 Group  0 Pid   6900 on ztan-mig-235z device  1 [0000:05:00] NVIDIA H100 80GB HBM3\n"
            + _AR_COLS +
            "  8589934592    2147483648     float     sum      -1    47535  180.71  338.82      0    47743  179.92  "
            "337.35      0\n"
            " Out of bounds values : 2 FAILED\n Avg bus bandwidth    : 128.942\n")
    run = read_text(text)
    assert (run.header["min_bytes"], run.header["max_bytes"], run.header["iters"], run.header["warmup_iters"]) == (
        8, 8589934592, 20, 5)
    assert [r["rank"] for r in run.ranks] == [0, 1]
    assert (run.out_of_bounds, run.avg_busbw_GBps) == (2, 128.942)


def test_a_footer_quoted_above_the_table_is_not_its_footer_and_zero_busbw_still_gives_the_op():
    # aws-k8s-tester PR 503: a reply quotes another run's footer, then pastes a table whose busbw are all 0.00;
    # count = size / 4 B (8 B -> 2 floats) rules out reduce_scatter, in-place #wrong 0 rules out sendrecv
    text = (">        [1,0]<stdout>:# Avg bus bandwidth    : 92.3405 \n\nHere is one example with p5.48xlarge:\n\n"
            "[1,0]<stdout>:" + _AR_COLS +
            "[1,0]<stdout>:           8             2     float     sum      -1    12.90    0.00    0.00      0    "
            "12.87    0.00    0.00      0\n"
            "[1,0]<stdout>:          16             4     float     sum      -1    12.88    0.00    0.00      0    "
            "12.83    0.00    0.00      0\n")
    run = read_text(text)
    assert run.avg_busbw_GBps is None and run.op == "allreduce" and run.op_source == "count/size"


def test_a_second_table_after_a_footer_is_a_second_run_and_old_alltoall_rows_are_read():
    # nccl-tests issue 78: all_reduce then alltoall, no "# nThread" line between; old alltoall rows print an
    # empty redop column
    old = ("#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  "
           "error\n")
    text = (old + "   268435456      67108864     float     sum   122131    2.20    4.33  2e-06   122165    2.20    "
            "4.33  2e-06\n# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 4.32178 \n```\n\nalltoall result\n"
            "```\n#\n" + old + "   268435456       1048576     float           520935    0.52    0.51  0e+00   519562 "
            "   0.52    0.51  1e+00\n# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.507636 \n")
    first, second = read_all(text)
    assert (first.op, first.avg_busbw_GBps) == ("allreduce", 4.32178)
    assert second.avg_busbw_GBps == 0.507636 and second.rows[0]["redop"] is None
    assert (second.rows[0]["oop_time_us"], second.rows[0]["ip_busbw_GBps"]) == (520935, 0.51)


def test_a_binary_started_directly_gives_its_rank_count_from_g():
    # li-plus/playground: "./build/sendrecv_perf ... -g 8" and rows only: one process, 8 GPUs
    rows = ("   134217728      33554432     float     sum      -1   1211.2  110.81  110.81      0   1211.8  110.76  "
            "110.76    N/A\n")
    run = read_text("```\n./build/sendrecv_perf -b 128M -e 1G -f 2 -g 8\n#\n" + _AR_COLS + rows)
    assert (run.nranks, run.op) == (8, "sendrecv")
    # the same binary named inside a comment, after srun, is not a direct start: no rank count from -g
    launched = "# launch: srun -u -l --mpi=pmix $P/sendrecv_perf -b 128M -g 1, 2 nodes x 8 tasks\n" + _AR_COLS + rows
    assert read_text(launched).nranks is None


# ------------------------------------------------ third held-out set's misses, as general rules (lines from there)
H3 = Path(__file__).parent / "fixtures" / "pasted_heldout3"
NCCL1184_ROWS = """\
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
      262144         65536     float     sum      -1    325.1    0.81    0.81      0    325.3    0.81    0.81      0
"""


def test_a_line_of_bare_assignments_is_the_environment():
    # NVIDIA/nccl#1184: "The commands were run with" a fenced line of VAR=VAL, then `all_reduce_perf ... -g 1`
    r = read_text("```\nNCCL_DEBUG=INFO NCCL_SOCKET_IFNAME=bond0 UCX_NET_DEVICES=bond0\n```\n" + NCCL1184_ROWS)
    assert r.launch["env"] == {"NCCL_DEBUG": "INFO", "NCCL_SOCKET_IFNAME": "bond0", "UCX_NET_DEVICES": "bond0"}
    # a sentence with a lower-case assignment in it is not a setting
    r = read_text("I tried x=1 and it hangs\n" + NCCL1184_ROWS)
    assert r.launch["env"] == {}


def test_allreduce_busbw_equal_to_algbw_means_two_ranks():
    # 0.81 / 0.81: 2(n-1)/n = 1 only for n = 2 (the post: a DGX-H100 and a DGX-A100, one GPU each)
    r = read_text("- `all_reduce_perf -b 8 -e 128M -f 2 -g 1` gets stuck\n" + NCCL1184_ROWS)
    assert (r.op, r.nranks) == ("allreduce", 2) and any("busbw/algbw = 1.0000" in n for n in r.notes)


def test_device_lines_cut_short_of_the_launcher_count():
    # IBM/pytorch-communication-benchmarks#1: mpirun -np 8, nGpus 1, the paste ends after Rank 6's line
    r = read_text((H3 / "ibmpcb1_mpirun_x_env_k8s_worker_h100_cut_in_device_lines.txt").read_text(encoding="utf-8"))
    assert r.rows == [] and len(r.ranks) == 7 and r.nranks == 8
    assert any("device lines for 1 of 8 ranks are not in the paste" in n for n in r.notes)
    assert r.launch["env"]["NCCL_ALGO"] == "Ring" and r.launch["np"] == 8


# ------------------------------------------------ fourth held-out set's misses, as general rules (lines from there)
H4 = Path(__file__).parent / "fixtures" / "pasted_heldout4"


def _h4(name: str):
    return read_text((H4 / name).read_text(encoding="utf-8"))


def test_a_prompt_in_brackets_starts_the_command_a_sentence_naming_the_binary_does_not():
    # nccl-tests#289: "When run hypercube_perf test with 2*5090, ..." comes before the prompt
    # "[root@localhost build]# NCCL_DEBUG=INFO ./hypercube_perf -b 1g -e 32g -g 8 -f 2"
    r = _h4("nccltests289_hypercube_g2_rtx5090_debug_info_prefix_invalid_ordinal_cut_in_devices.txt")
    assert r.launch["env"] == {"NCCL_DEBUG": "INFO"} and r.launch["args"][:2] == ["-b", "1g"]
    # a name in backticks inside a sentence is not a command either (tinygrad/open-gpu-kernel-modules#17)
    r = _h4("tinygrad17_alltoall_g2_rtx4090_p2p_level_prefix_inplace_na_cut.txt")
    assert r.launch["env"] == {"NCCL_P2P_LEVEL": "SYS"} and r.launch["args"][-2:] == ["-g", "2"]


def test_srun_bash_c_script_gives_its_exports_and_the_binary():
    # nccl-tests#190: srun -N 1 -n 1 ... bash -c "module load ...; export OMPI_MCA_pml=ucx; export
    # NCCL_P2P_DIRECT_DISABLE=1; ./build/hypercube_perf --nthreads 1 --ngpus 4 ..."; one device line survives the cut
    r = _h4("nccltests190_hypercube_srun_bash_c_long_options_pmix_errors_cut_in_devices.txt")
    assert (r.launch["launcher"], r.launch["np"], r.launch["binary"]) == ("srun", 1, "hypercube_perf")
    assert r.launch["env"] == {"OMPI_MCA_pml": "ucx", "NCCL_P2P_DIRECT_DISABLE": "1"}
    assert len(r.ranks) == 1 and r.nranks == 4  # 1 process x "nGpus 4"


def test_a_command_in_backticks_with_srun_nodes_times_tasks_per_node():
    # nebius/soperator#428: `OMPI_MCA_btl_tcp_if_include=eth0 srun ... --nodes=2 --ntasks-per-node=8 ... -g 1`,
    # 12 of the 16 device lines
    r = _h4("soperator428_srun_pmix_all_reduce_perf_mpi_2x8_h100_cut_in_device_lines.txt")
    assert (r.launch["launcher"], r.launch["np"], r.launch["binary"]) == ("srun", 16, "all_reduce_perf_mpi")
    assert r.launch["env"] == {"OMPI_MCA_btl_tcp_if_include": "eth0"} and r.launch["args"][-1] == "1"
    assert len(r.ranks) == 12 and r.nranks == 16 and "_srun" not in r.launch


def test_a_log_of_several_tests_names_each_block_by_its_own_preamble():
    # A script that runs alltoall_perf, sendrecv_perf, all_reduce_perf, all_gather_perf and reduce_scatter_perf one
    # after another into one log (xxrjun/nccl-tests-cluster): each test's "# nccl-tests version" and "# Collective test
    # starting" lines come before its "# nThread" header, after the previous test's rows. Expected values read from
    # the log: each block's first out-of-place time at 33554432 B.
    text = (Path(__file__).parent / "fixtures" / "calibration_sweeps"
            / "xxrjun-h100-8gpu-one-node-five-collectives.txt").read_text(encoding="utf-8")
    runs = read_all(text)
    assert [(r.op, r.op_source, r.rows[0]["oop_time_us"]) for r in runs] == [
        ("alltoall", "header", 124.22), ("sendrecv", "header", 423.47), ("allreduce", "header", 183.38),
        ("allgather", "header", 124.08), ("reducescatter", "header", 112.04)]
    shared = {(r.nccl_tests_version, r.nccl_version, r.nranks, len(r.rows)) for r in runs}
    assert shared == {("2.17.6", "2.28.7", 8, 10)}


# ------------------------------------------------ sixth held-out set's miss, as a general rule (lines from there)
def test_rows_under_nccl_lines_and_no_device_line_take_the_hosts_the_nccl_lines_name():
    # tinygrad/open-gpu-kernel-modules#45: three NCCL INFO lines, then rows; no command, header or device line
    path = Path(__file__).parent / "fixtures" / "pasted_heldout5" / (
        "tinygrad45_allreduce_rows_after_nccl_info_lines_no_header_rtx4090_window.txt")
    r = read_text(path.read_text(encoding="utf-8"))
    assert r.ranks == [] and r.hosts == ["i-56butc28zq2jtjaluzq7va7p6"] and len(r.rows) == 9
    assert any("hosts are those NCCL's log lines in the paste name" in n for n in r.notes)
    # device lines, where there are some, name the hosts, whatever host NCCL's lines print
    both = read_text("other:1:2 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
                     "#  Rank  0 Group  0 Pid   1 on      node1 device  0 [0x1b] NVIDIA H100 80GB HBM3\n"
                     "           8             2     float     sum      -1     8.49    0.00    0.00      0     8.37"
                     "    0.00    0.00      0\n")
    assert both.hosts == ["node1"] and not any("log lines" in n for n in both.notes)


def test_busbw_zero_where_algbw_is_not_is_one_rank_and_under_mpirun_a_build_without_mpi():
    # nccl-tests#294: 'mpirun -np 16 ... all_reduce_perf', bare rows, busbw 0.00 at every size (sizes printed twice)
    path = Path(__file__).parent / "fixtures" / "pasted_heldout5" / (
        "nccltests294_h100_rows_only_no_header_duplicate_sizes_busbw_zero_mpirun_np16_nccl_conf.txt")
    r = read_text(path.read_text(encoding="utf-8"))
    assert r.op == "allreduce" and r.nranks == 1
    assert any(n.startswith("busbw 0.00 under mpirun -np 16: nccl-tests was likely built without MPI=1")
               for n in r.notes)
    finding = diagnose(r).findings[0]
    assert finding["finding"].startswith("busbw is 0.00 at every size while algbw is not")
    assert "MPI=1" in finding["cause"]
    # no launcher: one rank, no build finding; a busbw that is not 0 leaves the rank count to the ratio
    alone = read_text("$ ./build/all_gather_perf -b 1M -e 1M\n"
                      "  1048576   262144  float  none  -1   10.00  104.86    0.00    0   10.00  104.86    0.00    0\n")
    assert (alone.op, alone.nranks) == ("allgather", 1)
    assert any("1 rank inferred from busbw 0.00" in n for n in alone.notes)
    # no build finding: the one-rank finding only (a collective on one rank moves no data)
    assert not any("MPI=1" in n for n in alone.notes)
    assert [f["case"] for f in diagnose(alone).findings] == ["one_rank"]
    two = read_text("  1048576  262144  float  sum  -1  10.00  104.86  104.86  0  10.00  104.86  104.86  0\n")
    assert two.nranks == 2 and not any("1-rank" in n for n in two.notes)


def test_a_paste_cut_in_its_device_lines_takes_its_layout_from_the_command():
    # crickett-hpe/hpc-ai-envs#30 (held-out set 6): 'srun -N 2 --ntasks-per-node=1 ... all_reduce_perf -g 8', the
    # paste ends after 7 device lines on one host and before any row
    path = Path(__file__).parent / "fixtures" / "pasted_heldout5" / (
        "hpcaienvs30_env_srun_singularity_allreduce_g8_2nodes_a100_80gb_cut_in_devices.txt")
    r = read_text(path.read_text(encoding="utf-8"))
    assert r.launch["nodes"] == 2 and r.nranks == 16 and len(r.ranks) == 7
    assert recognise_system(r) == ("dgx-a100", 8, 2)
    d = diagnose(r)
    assert (d.system, d.gpus, d.nodes) == ("dgx-a100", 8, 2)
    assert d.overlay == [] and "no sizes > 0" not in d.notes  # no row: the reader's own note says so
    # no node count in the command: the catalog system's GPUs per host, where they divide the ranks
    r.launch["nodes"] = None
    assert recognise_system(r) == ("dgx-a100", 8, 2)


def test_failure_lines_and_a_launcher_count_without_device_lines():
    """From the review of every paste's output: nccl-tests' own failure lines ('host: Test CUDA failure file:line
    'msg'', src/common.h) are quoted in a note; with no device line, the launcher's count gives the ranks (read
    after busbw, so a one-rank-per-process run keeps its 1)."""
    h4 = Path(__file__).parent / "fixtures" / "pasted_heldout4"
    r = read_text((h4 / "nccltests289_hypercube_g2_rtx5090_debug_info_prefix_invalid_ordinal_cut_in_devices.txt")
                  .read_text(encoding="utf-8"))
    failed = "the paste shows a failure nccl-tests printed: Test CUDA failure common.cu:986 'invalid device ordinal'"
    assert failed in r.notes
    tagged = Path(__file__).parent / "fixtures" / "nccl_tests" / "timestamp_tagged_h100_roce_nccl1368.txt"
    r = read_text(tagged.read_text(encoding="utf-8"))
    assert r.ranks == [] and r.nranks == 40
    assert "no device lines: 40 ranks from the command (mpirun -np 40 x 1 GPU per process)" in r.notes


def test_the_gdr_cause_says_when_the_command_sets_the_gdr_level():
    # nccl-tests#319: 2 x 8 H100, plateau 89 GB/s, 'mpirun ... -x NCCL_NET_GDR_LEVEL=1 ...'
    path = Path(__file__).parent / "fixtures" / "pasted_dev" / "nccltests319_h100_2node_ib_doca_mpirun_fenced.txt"
    r = read_text(path.read_text(encoding="utf-8"))
    assert r.launch["env"]["NCCL_NET_GDR_LEVEL"] == "1"
    causes = [c for b in diagnose(r).bands for c in b.get("causes", []) if c["case"] == "no_gdr"]
    assert causes and all("the command sets NCCL_NET_GDR_LEVEL=1: NCCL uses GPUDirect RDMA only on GPU-NIC paths"
                          in c["evidence"] for c in causes)


def test_the_wrong_results_finding_says_what_the_output_did_not_print():
    # nccl-tests#37: an old output with an 'error' column and no #wrong, 'Out of bounds values : 2 FAILED';
    # NCCL#1184: #wrong counts and no 'Out of bounds' footer in the paste
    fx = Path(__file__).parent / "fixtures"
    old = read_text((fx / "pasted_heldout2" / "nccltests37_allgather_g8_v100_no_hash_old_columns_oob_failed.txt")
                    .read_text(encoding="utf-8"))
    found = diagnose(old).findings[0]["finding"]
    assert found.startswith("#wrong total not printed, out of bounds 2: results are wrong")
    cut = read_text((fx / "pasted_heldout3" / "nccl1184_allreduce_dgxh100_elided_rows_wrong_counts_env_line.txt")
                    .read_text(encoding="utf-8"))
    assert diagnose(cut).findings[0]["finding"].startswith("#wrong total 475896, out of bounds not printed")
