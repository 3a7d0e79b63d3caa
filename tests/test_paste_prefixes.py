"""Launcher and collector prefixes (nvcourse.nccl.paste) on NCCL logs and nccl-tests outputs alike.

Two kinds of test: real pastes that carry a prefix on every line (fixtures with their URL; expected values read
from the text), and every real fixture of both readers re-read with each prefix kind put in front of every line
(the read must not change: a prefix is what a launcher adds, never what the tool printed).
"""

from pathlib import Path

import pytest

from nvcourse.nccl import ncclog, nccltests
from nvcourse.nccl.paste import clean_line

ROOT = Path(__file__).parent / "fixtures"
DATA = Path(__file__).parents[1] / "nvcourse" / "data" / "nccl"
LOGS = sorted([*ROOT.joinpath("ncclog").glob("*.log"), *DATA.glob("*.log")])
OUTPUTS = sorted([*ROOT.joinpath("nccl_tests").glob("*.txt"), *DATA.glob("*.txt")])
OUTPUTS = [p for p in OUTPUTS if p.name != "README.md"]

# what each launcher puts before a line (the forms documented by Slurm srun --label, Open MPI --tag-output /
# --timestamp-output, torchrun --tee, Ray, kubectl logs --prefix --timestamps, syslog, pdsh)
PREFIXES = {
    "srun": "0: ",
    "srun-padded": " 12: ",
    "openmpi": "[1,0]<stdout>:",
    "openmpi-stderr": "[1,3]<stderr>:",
    "openmpi-timestamp": "Thu Jul 18 15:41:05 2024<stdout>:",
    "torchrun": "[default0]:",
    "ray": "(RayWorkerWrapper pid=1019, ip=10.0.0.5) ",
    "skypilot": "(worker1, rank=1, pid=2769, ip=10.100.10.12) ",
    "kubectl": "[pod/nccl-test-launcher-x7k2p/mpi-launcher] ",
    "iso-timestamp": "2024-07-18T15:41:05.123456789Z ",
    "syslog": "Jul 18 15:41:05 node007 slurmstepd[4242]: ",
    "rsyslog": "2024-07-18T15:41:05.123456+00:00 node007 slurmstepd[4242]: ",
    "nccl-warn-timestamp": "[2025-03-10 12:34:56] ",
    "pdsh": "node007: ",
    "nested": "2024-07-18T15:41:05Z [1,0]<stdout>:node007: ",
    "row-tag": "[STAT]:",
}


def _prefixed(text: str, prefix: str) -> str:
    # %% comment lines are the course's own; leave them unprefixed like a fixture header
    return "\n".join(line if line.startswith("%%") else prefix + line for line in text.splitlines()) + "\n"


@pytest.mark.parametrize("kind", sorted(PREFIXES))
@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.stem)
def test_every_ncclog_fixture_reads_the_same_with_a_prefix(path, kind):
    text = path.read_text(encoding="utf-8")
    plain = ncclog.read_text(text).to_json()
    assert ncclog.read_text(_prefixed(text, PREFIXES[kind])).to_json() == plain


@pytest.mark.parametrize("kind", sorted(PREFIXES))
@pytest.mark.parametrize("path", OUTPUTS, ids=lambda p: p.stem)
def test_every_nccl_tests_fixture_reads_the_same_with_a_prefix(path, kind):
    text = path.read_text(encoding="utf-8")
    plain = [r.to_json() for r in nccltests.read_all(text)]
    assert [r.to_json() for r in nccltests.read_all(_prefixed(text, PREFIXES[kind]))] == plain


def test_nccl_own_prefix_and_rows_are_never_stripped():
    own = "node007:291005:291005 [0] NCCL INFO Using network IB"
    assert clean_line(own) == own
    row = "     8388608       2097152     float     sum      -1    215.3   38.96   73.04    N/A"
    assert clean_line(row) == row.strip()
    assert clean_line("NCCL INFO   Algorithm   |     Tree    |") == "NCCL INFO   Algorithm   |     Tree    |"


def test_srun_labelled_full_log_is_not_empty():
    """A full NCCL log whose every line carries srun's label used to read as empty."""
    src = (DATA / "ib_cumem_gdrdma_2nodes_aks30.log").read_text(encoding="utf-8")
    log = ncclog.read_text(_prefixed(src, "0: "))
    assert log.transports == {"P2P/CUMEM/read": 6, "NET/IB/GDRDMA": 8} and log.gdr is True and log.channels == 15


def test_real_srun_labelled_two_node_h100_sweep():
    r = nccltests.read_text((ROOT / "nccl_tests" / "allreduce_h100_2nodes_srun_label_nccltests290.txt").read_text())
    assert r.op == "allreduce" and r.op_source == "busbw/algbw ratio"
    assert r.nranks == 16 and r.hosts == ["node005", "node007"] and r.gpus == ["NVIDIA H100 80GB HBM3"]
    assert len(r.rows) == 11 and r.rows[0]["bytes"] == 8388608 and r.rows[0]["oop_wrong"] is None
    assert (r.rows[-1]["bytes"], r.rows[-1]["oop_time_us"], r.rows[-1]["oop_busbw_GBps"]) == (8589934592, 103530.0,
                                                                                             155.57)
    assert r.avg_busbw_GBps == 142.735 and r.out_of_bounds == 0 and r.header["iters"] == 200


def test_real_srun_labelled_scatter_is_read_as_rooted_split_not_none():
    """A scatter (redop none, root 0): the op is inferred from the columns, never read as 'none'."""
    r = nccltests.read_text((ROOT / "nccl_tests" / "scatter_srun_label_awsome_distributed_training.txt").read_text())
    assert r.op is None and r.op_candidates == ["scatter", "gather"]
    # 536870912 B as 8388608 floats: 16 ranks (size = count x 4 B x ranks), and busbw/algbw = 76.71/81.82 = 15/16
    assert r.nranks == 16
    assert [row["bytes"] for row in r.rows] == [0, 536870912, 1073741824, 2147483648]
    assert r.rows[-1]["redop"] == "none" and r.rows[-1]["root"] == 0 and r.rows[-1]["oop_busbw_GBps"] == 79.2


def test_scatter_named_on_the_command_line_wins():
    text = ("$ srun --label scatter_perf -b 8 -e 2G -f 2 -g 1\n"
            + (ROOT / "nccl_tests" / "scatter_srun_label_awsome_distributed_training.txt").read_text())
    r = nccltests.read_text(text)
    assert (r.op, r.op_source) == ("scatter", "command line")


def test_real_fork_tagged_rows_are_read():
    # abhivijay96/nccl-tests prints "[STAT]:" before every result row (tests/fixtures/heldout_sweeps; its URL is in
    # the header): the 12288-byte all-reduce row reads 26.46 us out of place, 27.02 in place, as printed
    text = (ROOT / "heldout_sweeps" / "coreweave-a100-8gpu-single-process-allreduce.txt").read_text(encoding="utf-8")
    assert "[STAT]:12288          3072     float     sum      -1    26.46" in text
    rows = {r["bytes"]: r for r in nccltests.read_all(text)[0].rows}
    assert rows[12288]["oop_time_us"] == 26.46 and rows[12288]["ip_time_us"] == 27.02
    assert max(rows) == 402653184
