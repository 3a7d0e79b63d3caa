"""Model-free checks of ``nvcourse nccl-tests`` (nvcourse/nccl/nccltests_shape.py and what diagnose.py says with
them): a busbw collapse as size grows, out-of-place and in-place times far apart, the old ``error`` column, one rank,
ranks sharing a GPU, rows and runs a paste leaves out, a system assumed from the GPU name, the latency floor across
nodes, and a plateau at the ring level under a model that expects another algorithm.

Every expected figure below was read from the fixture's text (its rows, device lines and command), never from the
reader's output; lines built for a test are real rows with one figure changed, said where it is done.
"""

import glob
import re
from pathlib import Path

import pytest

from nvcourse._data import load
from nvcourse.nccl import nccltests_shape as shape
from nvcourse.nccl.diagnose import diagnose
from nvcourse.nccl.nccltests import read_all, read_text

ROOT = Path(__file__).parents[1]
FIX = ROOT / "tests" / "fixtures"
NCCL1453 = FIX / "nccl_tests" / "allreduce_h100_rank_tags_mid_row_nccl1453.txt"
A3MEGA = FIX / "pasted_heldout2" / "a3mega_mpirun_quoted_cmd_hash_stripped_header_h100.txt"
T104 = FIX / "pasted_heldout3" / "nccltests104_sendrecv_g2_uint8_two_outputs_old_error_column.txt"
T78 = FIX / "pasted_heldout2" / "nccltests78_allreduce_then_alltoall_old_error_column_v100.txt"
T37 = FIX / "pasted_heldout2" / "nccltests37_allgather_g8_v100_no_hash_old_columns_oob_failed.txt"
T190 = FIX / "pasted_heldout4" / "nccltests190_hypercube_srun_bash_c_long_options_pmix_errors_cut_in_devices.txt"


def _read(path: Path):
    return read_text(path.read_text(encoding="utf-8"))


def _every_paste() -> list[tuple[str, object]]:
    """(file, run) for every run of every nccl-tests paste among the fixtures and the course's samples."""
    out = []
    for f in sorted(glob.glob(str(FIX / "*" / "*")) + glob.glob(str(ROOT / "nvcourse" / "data" / "nccl" / "*"))):
        if f.endswith((".toml", ".xml", ".md")):
            continue
        try:
            runs = read_all(Path(f).read_text(encoding="utf-8", errors="replace"))
        except ValueError:
            continue
        out += [(Path(f).name, r) for r in runs]
    return out


# ---------------------------------------------------------------- the busbw collapse and the time gaps (nccl#1453)
def test_nccl1453_busbw_collapse_between_32_and_64_mib_is_a_finding():
    # the paste's rows: 33554432 ... 2180.1 15.39 29.50, then 67108864 ... 24410 2.75 5.27, 134217728 ... 5.22,
    # 268435456 ... 4.09, 536870912 ... 5.31 (the 1 GiB row is cut)
    d = diagnose(_read(NCCL1453))
    f = next(f for f in d.findings if f["case"] == "busbw_collapse")
    assert "from 29.5 GB/s at 33554432 B to 5.27 GB/s at 67108864 B" in f["finding"]
    assert "at or under 5.31 GB/s up to 536870912 B" in f["finding"]
    assert f"({24410 / 2180.1:.1f}x the time for 2x the bytes)" in f["finding"]
    # worded as a hypothesis with what to try, citing the thread where the shape was seen
    assert f["cause"].startswith("a guess from the rows alone")
    assert "NCCL_PROTO=Simple" in f["cause"] and "NCCL_ALGO=Ring" in f["cause"] and "/GDRDMA" in f["cause"]
    assert f["source"] == "https://github.com/NVIDIA/nccl/issues/1453"


def test_nccl1453_out_of_place_and_in_place_times_that_disagree_are_a_finding():
    # 2097152: 2325.3 us out of place, 416.7 us in place; 1048576: 1626.5 vs 2302.3; 4194304: 622.6 vs 625.8 (fine)
    d = diagnose(_read(NCCL1453))
    f = next(f for f in d.findings if f["case"] == "inplace_time_gap")
    assert f"2097152 B: 2325.3 us out of place, 416.7 us in place ({2325.3 / 416.7:.1f}x)" in f["finding"]
    assert f"1048576 B: 1626.5 us out of place, 2302.3 us in place ({2302.3 / 1626.5:.1f}x)" in f["finding"]
    assert "4194304" not in f["finding"]
    assert f["cause"].startswith("a guess from the rows alone") and "-n 100 -w 20" in f["cause"]


def test_the_shape_rules_fire_on_nccl1453_only():
    """The rules are meant never to fire on a normal sweep: over every nccl-tests paste of the fixtures and samples
    (healthy sweeps on 1 to 512 GPUs, protocol dips, EFA, TCP and socket runs), only nccl#1453 trips them."""
    runs = _every_paste()
    assert len(runs) > 100
    collapses = {name for name, r in runs if shape.step_down(r.rows)}
    gaps = {name for name, r in runs if shape.time_gaps(r.rows, r.nranks)}
    assert collapses == gaps == {NCCL1453.name}


def test_a_dip_that_recovers_or_a_smaller_drop_is_no_collapse():
    # the nccl#1453 rows around the drop (bytes, out-of-place time us, busbw GB/s), then the same with changes
    rows = [{"bytes": 33554432, "oop_time_us": 2180.1, "oop_busbw_GBps": 29.50},
            {"bytes": 67108864, "oop_time_us": 24410.0, "oop_busbw_GBps": 5.27},
            {"bytes": 134217728, "oop_time_us": 49264.0, "oop_busbw_GBps": 5.22}]
    assert shape.step_down(rows)["before"]["bytes"] == 33554432
    recovers = [*rows[:2], {**rows[2], "oop_busbw_GBps": 29.0}]  # back above half of 29.5 at the next size
    assert shape.step_down(recovers) is None
    halved = [rows[0], {**rows[1], "oop_busbw_GBps": 14.0}, {**rows[2], "oop_busbw_GBps": 14.0}]  # 2.1x, not 3x
    assert shape.step_down(halved) is None
    assert shape.step_down(rows[:2]) is None  # one size after the drop: it cannot say the drop stays
    # a gap of 68 us in the latency band (snellius 2-node allreduce, 16384 B: 90.85 vs 22.59 us) is not enough
    assert shape.time_gaps([{"bytes": 16384, "oop_time_us": 90.85, "ip_time_us": 22.59}], 8) == []


# ---------------------------------------------------------------- the old error column
def test_tolerance_is_nccl_tests_own():
    # nccl-tests before 2.13 (src/common.cu DeltaMaxValue x (nranks - 1)): float 1e-5, half 1e-2, integers exact
    assert shape.tolerance("float", 8) == pytest.approx(7e-5)
    assert shape.tolerance("half", 2) == pytest.approx(1e-2)
    assert shape.tolerance("uint8", None) == 0.0
    assert shape.tolerance("float", None) is None  # a float's tolerance needs the rank count


def test_tolerance_reads_the_data_file_and_knows_every_type_nccl_tests_printed():
    # data/nccl_readers.toml [nccl_tests_check] holds DeltaMaxValue with its source (repository, file, function,
    # commit); the reader keeps no copy. test_typenames of nccl-tests 2.x and NCCL 1's, then NCCL's float aliases
    check = load("nccl_readers")["nccl_tests_check"]
    assert re.search(r"github\.com/NVIDIA/nccl-tests/blob/[0-9a-f]{40}/src/common\.cu \(DeltaMaxValue", check["src"])
    for dtype in ("int8", "uint8", "int32", "uint32", "int64", "uint64", "char", "int"):
        assert shape.tolerance(dtype, 4) == shape.tolerance(dtype, None) == 0.0
    for dtype, alias in (("half", "float16"), ("float", "float32"), ("double", "float64")):
        assert shape.tolerance(alias, 3) == shape.tolerance(dtype, 3) == check["float_delta_max"][dtype] * 2
    assert shape.tolerance("bfloat16", 5) == pytest.approx(4e-2) and shape.tolerance("double", 2) == 1e-12
    assert shape.tolerance("fp8", 8) is None  # a type the old check never saw


def test_in_place_error_of_old_sendrecv_is_not_a_check():
    # nccltests104: uint8, "0e+00" out of place, "3e+02" in place; old sendrecv_perf did not check in place
    run = _read(T104)
    d = diagnose(run)
    assert not [f for f in d.findings if f["case"] == "wrong_nonzero"]
    note = next(n for n in d.notes if n.startswith("the in-place error column of sendrecv"))
    assert "(3e+02 at 37748744 B)" in note and "is not a check" in note


def test_out_of_place_error_on_an_integer_type_is_wrong_data():
    # the nccltests104 row with its two error figures swapped: 3e+02 out of place, which nccl-tests does check
    text = T104.read_text(encoding="utf-8").replace("3.22  0e+00    11698    3.23    3.23  3e+02",
                                                    "3.22  3e+02    11698    3.23    3.23  0e+00")
    d = diagnose(read_text(text))
    f = next(f for f in d.findings if f["case"] == "wrong_nonzero")
    assert f["finding"].startswith("the error column")
    assert "reads 3e+02 at 37748744 B out of place for uint8" in f["finding"]
    assert "none: integer types must match exactly" in f["finding"] and "results are wrong" in f["finding"]


def test_error_column_joins_the_out_of_bounds_finding():
    # nccltests37: allgather, float, 8 ranks, "1e+00" in both modes, "Out of bounds values : 2 FAILED"
    d = diagnose(_read(T37))
    (f,) = [f for f in d.findings if f["case"] == "wrong_nonzero"]
    assert "out of bounds 2" in f["finding"]
    assert "reads 1e+00 at 4294967296 B out of place and in place for float" in f["finding"]
    assert "at most 7e-05 on 8 ranks" in f["finding"]


def test_small_float_errors_are_not_findings():
    # aws-eks-p4d (nccl 2.8): float, 16 ranks, error 5e-07 at most: under 1e-5 x 15
    run = read_text((FIX / "heldout_sweeps" / "aws-eks-p4d-a100-2node-efa-allreduce-nccl2.8.txt").read_text())
    assert shape.error_excess(run) == []


# ---------------------------------------------------------------- other runs in the paste
def test_a_second_run_is_named():
    # nccltests78: all_reduce table, then an alltoall table (2 rows, "# Avg bus bandwidth    : 0.507636")
    run = _read(T78)
    assert [(o["rows"], o["avg_busbw_GBps"]) for o in run.other_runs] == [(2, 0.507636)]
    assert "other_runs" in run.to_json()
    note = next(n for n in diagnose(run).notes if "runs in the paste" in n)
    assert note.startswith("2 runs in the paste; this report reads the first (allreduce)")
    assert "2 sizes, Avg bus bandwidth 0.507636 GB/s" in note


def test_device_lines_of_the_second_output_are_not_called_missing():
    # nccltests104: the second output prints "Rank 0 ... on x0 device 0 [0x05] NVIDIA GeForce GTX 1080" and Rank 1
    run = _read(T104)
    (other,) = run.other_runs
    assert (other["rows"], other["device_lines"], other["hosts"], other["gpus"]) == (
        0, 2, ["x0"], ["NVIDIA GeForce GTX 1080"])
    assert not any(n.startswith("no device lines:") for n in run.notes)
    assert any(n.startswith("no device lines in this output (another output in the paste has them)")
               for n in run.notes)
    note = next(n for n in diagnose(run).notes if "runs in the paste" in n)
    assert "no result row; device lines: 2 ranks on x0, NVIDIA GeForce GTX 1080" in note


# ---------------------------------------------------------------- rows left out, op candidates, launcher wording
def test_elided_rows_are_said():
    # eks_mpijob: a "   ..." line between the 0-byte row and the 64 MiB row, 7 rows in all
    d = diagnose(_read(FIX / "pasted_dev" / "eks_mpijob_ompi_tagged_indented_elided_p5.txt"))
    assert any(n.startswith("sizes are missing between the rows read") and "the 7 sizes shown" in n for n in d.notes)


def test_columns_that_fit_several_operations_name_them():
    # 2080 Ti: redop "sum", count = size / 4 (8 B -> 2 floats), every algbw 0.00, no root column, 4 ranks
    run = _read(FIX / "nccl_tests" / "allreduce_2080ti_4ranks_old_error_npkit19.txt")
    assert run.op is None and set(run.op_candidates) == {"allreduce", "reduce", "sendrecv"}


def test_one_process_is_not_processes():
    # nccltests190: "srun -N 1 -n 1 ... --ngpus 4", one device line of 4
    run = _read(T190)
    assert any("(srun starts 1 process of 4 GPUs)" in n for n in run.notes)


# ---------------------------------------------------------------- system assumed, latency floor, ring-level plateau
def test_a_system_taken_from_the_gpu_name_is_an_assumption():
    # a3mega: 16 x "NVIDIA H100 80GB HBM3" on ztan-mig-235z and ztan-mig-gq73; nothing names the system
    run = _read(A3MEGA)
    d = diagnose(run)
    assert d.system == "dgx-h100" and d.system_from == "gpu name" and d.to_json()["system_from"] == "gpu name"
    assert any(n.startswith("model: dgx-h100 assumed from the GPU name (NVIDIA H100 80GB HBM3) alone")
               and "pass --system, --gpus and --nodes" in n for n in d.notes)
    given = diagnose(run, system="dgx-h100")
    assert given.system_from == "given" and not any("assumed" in n for n in given.notes)


def test_a_four_gpu_board_is_not_called_a_cut_down_catalog_system():
    # nccltests190: 4 x NVIDIA A100-SXM4-40GB in one process ("--ngpus 4"), recognised as the 8-GPU dgx-a100
    d = diagnose(_read(T190))
    assert any("this run uses 4 GPUs per node of the catalog's 8" in n for n in d.notes)


def test_a_high_floor_across_nodes_points_at_the_network_path():
    # a3mega, 8..32768 B out of place: 135.8, 123.2, 123.3, 123.4, 123.0, ... 155.2 us: the floor is 123.0 us
    bands = {b["band"]: b for b in diagnose(_read(A3MEGA)).bands}
    small = bands["latency"]
    assert small["floor_us"] == 123.0
    assert "at least 123 us per operation" in small["verdict"] and "network path's latency" in small["verdict"]
    assert "launch and synchronisation costs dominate" not in small["verdict"]
    # one node: launch and synchronisation, as before (8 x H100 in one node, nccl-tests#212)
    one = diagnose(_read(ROOT / "nvcourse" / "data" / "nccl" / "h100_8gpu_single_node_markdown_indented.txt"),
                   system="dgx-h100", gpus=8, nodes=1)
    assert all("network path" not in b["verdict"] for b in one.bands)


def test_a_plateau_at_the_ring_level_blames_no_slow_rank():
    # a3mega's three largest sizes: 318.40, 330.58, 338.82 GB/s out of place -> plateau 330.58
    bands = {b["band"]: b for b in diagnose(_read(A3MEGA)).bands}
    big, mid = bands["bandwidth"], bands["transition"]
    assert big["level"]["matches"] == "ring" and big["level"]["plateau_GBps"] == 330.58
    assert "slow_rank" not in {c["case"] for c in big["causes"] + mid["causes"]}
    assert "not a slow rank" in big["verdict"] and "model's higher figure" in big["verdict"]
    assert "the large sizes reach the ring level" in mid["verdict"] and "not a slow rank" in mid["verdict"]
    assert "each operation costs at least 123 us" in mid["verdict"]


# ---------------------------------------------------------------- one rank, a shared GPU, the average's wording
def test_one_rank_gets_its_own_finding():
    # alltoall_rtx5090_1gpu_na: "33554432 ... 19.56  1715.44  0.00  0  0.78  43046.10  0.00  N/A", one Rank line
    d = diagnose(_read(FIX / "nccl_tests" / "alltoall_rtx5090_1gpu_na.txt"))
    (f,) = [f for f in d.findings if f["case"] == "one_rank"]
    assert f["finding"].startswith("1 rank: no data leaves the GPU; busbw is 0 for alltoall")
    assert "out-of-place algbw 1715.44 GB/s at 33554432 B is a copy inside the GPU" in f["finding"]
    assert "in place, 0.78 us (43046.1 GB/s) is a call that moved nothing" in f["finding"]
    assert "read the large-size rows" not in f["cause"] and "2 GPUs or more" in f["cause"]


def test_a_one_gpu_in_place_no_op_is_said():
    # nixpkgs251856: all_gather_perf on one RTX 4090, in place "0.05  619657.10"
    d = diagnose(_nixpkgs())
    f = next(f for f in d.findings if f["case"] == "one_rank")
    assert "in place, 0.05 us (619657.1 GB/s) is a call that moved nothing" in f["finding"]


def _nixpkgs():
    (path,) = glob.glob(str(FIX / "pasted_heldout4" / "nixpkgs251856_all_gather_1gpu*"))
    return read_text(Path(path).read_text(encoding="utf-8"))


def test_two_ranks_on_one_gpu_are_said():
    # socket_rtx5090: Rank 0 and Rank 1 both "on lab device 0 [0000:02:00] NVIDIA GeForce RTX 5090"
    d = diagnose(_read(FIX / "nccl_tests" / "socket_rtx5090_2ranks_mpirun_v2_18.txt"))
    (f,) = [f for f in d.findings if f["case"] == "shared_gpu"]
    assert f["finding"] == "ranks 0, 1 print the same GPU (NVIDIA GeForce RTX 5090, bus 0000:02:00 on lab)"
    assert f["source"].startswith("https://github.com/NVIDIA/nccl/blob/") and "src/init.cc" in f["source"]


def test_the_old_bus_number_is_not_a_gpu():
    # aws-eks-p4d (old format): "device 0 [0x10]" and "device 1 [0x10]": two GPUs on PCI bus 0x10, not one GPU
    run = read_text((FIX / "heldout_sweeps" / "aws-eks-p4d-a100-2node-efa-allreduce-nccl2.8.txt").read_text())
    assert [r["bus_id"] for r in run.ranks[:2]] == ["0x10", "0x10"]
    assert shape.shared_gpus(run.ranks) == []


def test_the_average_finding_drops_the_one_rank_aside_when_busbw_is_not_zero():
    # a3mega: "# Avg bus bandwidth    : 70.742", the largest sizes above 300 GB/s
    f = next(f for f in diagnose(_read(A3MEGA)).findings if f["case"] == "avg_hides")
    assert "70.742" in f["finding"] and "one rank" not in f["cause"]
