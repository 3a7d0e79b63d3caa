"""nccltests37 (pasted_heldout2): an old allgather output whose busbw = algbw, and a wrong 4 GiB allgather on
8 GPUs of one process, the NCCL bug of that era (NCCL c38f174, first in 2.6.4)."""

from pathlib import Path

from nvcourse.nccl import nccltests
from nvcourse.nccl.diagnose import diagnose
from nvcourse.nccl.known_bugs import ALLGATHER_4G_FIX, allgather_4g_hint

FIX = Path(__file__).parent / "fixtures"
# "all_gather_perf -g 8 -b 4294967296 -e 4294967296 -n 100", old columns "time algbw busbw error", one row
# "4294967296  134217728  float  29122  129.05  129.05  1e+00 ...", "Out of bounds values : 2 FAILED"
OLD = FIX / "pasted_heldout2" / "nccltests37_allgather_g8_v100_no_hash_old_columns_oob_failed.txt"


def test_old_allgather_busbw_equal_to_algbw_is_no_mismatch():
    run = nccltests.read_text(OLD.read_text(encoding="utf-8"))
    # nccl-tests before ec1b5e2 (2020-06): algbw = count x 4 B x (8 - 1) / 29122 us = 129.05 GB/s, busbw = algbw
    assert round(134217728 * 4 * 7 / 29122e-6 / 1e9, 2) == run.rows[0]["oop_algbw_GBps"] == 129.05
    assert not any("does not match" in n for n in run.notes)
    assert any(n.startswith("busbw = algbw (ratio 1.000): nccl-tests before June 2020") for n in run.notes)


def test_a_new_allgather_with_busbw_equal_algbw_still_gets_the_mismatch_note():
    text = ("# nThread 1 nGpus 8 minBytes 1048576 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 "
            "agg iters: 1 validation: 1 graph: 0\n"
            "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw "
            "  busbw  #wrong\n"
            "     1048576         32768     float    none      -1    20.00   52.43   52.43       0    20.00   52.43 "
            "  52.43       0\n")
    run = nccltests.read_text("all_gather_perf -g 8\n" + text)
    assert any("does not match allgather" in n for n in run.notes)


def test_the_4gib_allgather_gets_the_nccl_fix_hint():
    run = nccltests.read_text(OLD.read_text(encoding="utf-8"))
    hint = allgather_4g_hint(run)
    assert hint and "8 GPUs per process" in hint and "NCCL 2.6.4" in hint and ALLGATHER_4G_FIX in hint
    finding = diagnose(run).findings[0]
    assert finding["case"] == "wrong_nonzero" and "4 GiB (2^32 B)" in finding["finding"]


def test_no_hint_on_a_fixed_release_one_gpu_per_process_or_a_smaller_size():
    run = nccltests.read_text(OLD.read_text(encoding="utf-8"))
    run.nccl_version = "2.6.4"
    assert allgather_4g_hint(run) is None
    run.nccl_version = "2.5.6"
    assert allgather_4g_hint(run) is not None
    run.launch = {**run.launch, "args": ["-g", "1"]}
    assert allgather_4g_hint(run) is None
    run.launch = {**run.launch, "args": ["-g", "8"]}
    run.rows = [{**run.rows[0], "bytes": 2**32 - 2**20}]
    assert allgather_4g_hint(run) is None
