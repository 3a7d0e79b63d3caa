"""The NCCL readers' own words in French: ``nvcourse ncclog``'s paragraph and problems, ``nvcourse nccl-tests``'
verdicts, findings and evidence (nvcourse/nccl/ncclog_explain.py, diagnose.py, gdr.py, ncclog_lines.py).

The text report speaks the reader's language; ``--json`` is a stable interface, English byte for byte in every
language. The walk reads every fixture the readers are tested on, plus a few lines built from real ones, and shows
every catalog entry of these modules (tests/i18n_walks.py).
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from i18n_walks import run_walk, speaks

ROOT = Path(__file__).resolve().parents[1]
NBSP = "\u00a0"
NCCLOG = "tests/fixtures/ncclog/ib_error4_gdr_vm_nccl660.log"
NCCL_TESTS = "tests/fixtures/nccl_tests/allreduce_h100_2nodes_srun_label_nccltests290.txt"
PATHS = ("nvcourse/nccl/ncclog_explain.py", "nvcourse/nccl/diagnose.py", "nvcourse/nccl/gdr.py",
         "nvcourse/nccl/ncclog_lines.py", "nvcourse/nccl/signatures.py", "nvcourse/nccl/ncclog_faults.py",
         "nvcourse/nccl/nccltests_shape.py", "nvcourse/nccl/forced.py", "nvcourse/nccl/known_bugs.py")
UNREACHABLE = frozenset({
    "no model figure",  # the model gives a busbw above 0 for every size it covers
    # _settle_transition always replaces this evidence (large sizes short too) or drops the cause (they are not)
    "mid sizes at {ratio}x the model; read the large sizes first (the bandwidth band) for the path",
    # the overlay asks the model for a ring, which all-to-all has not: an all-to-all run gets no bands today
    "all-to-all across nodes",
})


def _cli(args: list[str], language: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("LC_ALL", "LC_MESSAGES", "LANG")}
    return subprocess.run([sys.executable, "-m", "nvcourse", *args], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env={**env, "NVCOURSE_LANG": language})


@pytest.mark.parametrize("args, english, french", [
    (["ncclog", NCCLOG],
     ["What looks wrong: ", "PCIe ACS breaking GPUDirect RDMA is the usual cause"],
     [f"Ce qui semble anormal{NBSP}: ", f"erreur de complétion IB 4 (une erreur de protection locale){NBSP}: "
      "l'ACS PCIe qui casse GPUDirect RDMA en est la cause habituelle"]),
    (["nccl-tests", NCCL_TESTS, "--system", "dgx-h100"],
     ["well below the model (0.34x); plateau 155 GB/s matches none of the levels (ring level 347, level of the "
      "node's NICs 376 GB/s)", "155 GB/s is 0.41x the node's NICs (376 GB/s)"],
     [f"nettement sous le modèle (0,34×){NBSP}; le plateau de 155{NBSP}GB/s ne correspond à aucun des niveaux "
      f"(niveau de l'anneau 347, niveau des NIC du nœud 376{NBSP}GB/s)",
      f"155{NBSP}GB/s vaut 0,41× les NIC du nœud (376{NBSP}GB/s)"]),
], ids=["ncclog", "nccl-tests"])
def test_the_readers_verdicts_read_french_and_json_stays_english(args, english, french):
    en, fr = _cli(args, "en"), _cli(args, "fr")
    assert en.returncode == fr.returncode == 0, en.stderr + fr.stderr
    assert all(s in en.stdout for s in english)
    assert [s for s in french if s not in fr.stdout] == []
    assert [s for s in english if s in fr.stdout] == []
    json_en, json_fr = _cli([*args, "--json"], "en"), _cli([*args, "--json"], "fr")
    assert json_en.returncode == 0 and json_en.stdout == json_fr.stdout  # byte for byte
    assert all(s in json_en.stdout for s in english)  # the English texts, in every language


WALK = r'''
import copy, glob, re, sys
from nvcourse.nccl import ncclog, nccltests
from nvcourse.nccl.diagnose import band_name, diagnose
from nvcourse.nccl.ncclog_explain import problems
out = []


def counted(log, keep):
    """``log`` with every count the paragraph states cut to ``keep`` (1: the singular forms) or doubled (2)."""
    c = copy.deepcopy(log)
    cut = (lambda xs: xs[:1]) if keep == 1 else (lambda xs: xs * 2)
    for name in ("hosts", "net_devices", "warnings", "p2p_disabled_pairs", "signatures", "tuning_tables",
                 "tuning_picks"):
        setattr(c, name, cut(getattr(c, name)))
    c.nranks = c.nranks and (1 if keep == 1 else c.nranks)
    c.channels = c.channels and (1 if keep == 1 else c.channels)
    c.channels_printed = c.channels_printed and (1 if keep == 1 else c.channels_printed)
    for g in c.graphs:
        g["channels"] = min(g["channels"], 1) if keep == 1 else g["channels"]
    if keep == 1:
        c.transports = {k: 1 for k in c.transports}
        c.nvls["channels"] = None if c.nvls["channels"] is None else 1
        c.gdr_connections = {k: min(v, 1) for k, v in c.gdr_connections.items()}
        c.gdr_by_direction = {d: {k: min(v, 1) for k, v in by.items()} for d, by in c.gdr_by_direction.items()}
    else:
        c.transports = {k: 2 * v for k, v in c.transports.items()}
    return c


def show_log(text):
    try:
        log = ncclog.read_text(text)
    except ValueError:
        return
    out.append(ncclog.explain(log))
    out.extend(str(v) for p in log.problems for v in p.values())
    for keep in (1, 2):  # the singular and plural forms of every count
        c = counted(log, keep)
        out.append(ncclog.explain(c))
        out.extend(str(v) for p in problems(c) for v in p.values())
    if log.tuning_tables:  # a table of one algorithm and one protocol
        c = counted(log, 1)
        c.tuning_picks = []
        c.tuning_tables = [{**t, "algorithms": t["algorithms"][:1], "protocols": t["protocols"][:1]}
                           for t in c.tuning_tables]
        out.append(ncclog.explain(c))
    if log.gdr_connections.get("without"):  # one connection in all, and it without GDR
        c = counted(log, 1)
        c.gdr_connections = {"without": 1}
        out.extend(str(v) for p in problems(c) for v in p.values())


def show_run(run, **kw):
    d = diagnose(run, **kw)
    out.extend(b["verdict"] for b in d.bands)
    out.extend(band_name(b["band"]) for b in d.bands)
    out.extend(str(v) for b in d.bands for c in b["causes"] for v in c.values())
    out.extend(str(v) for f in d.findings for v in f.values())
    out.extend(d.notes)


for f in sorted(glob.glob("tests/fixtures/ncclog*/*") + glob.glob("tests/fixtures/runbook/*")
                + glob.glob("nvcourse/data/nccl/*.log")):
    show_log(open(f, encoding="utf-8", errors="replace").read())
# lines built from real ones (tests/test_ncclog_reader.py says where each comes from)
H = "h:1:2 [0] NCCL INFO "
real = open("nvcourse/data/nccl/ib_cumem_gdrdma_2nodes_aks30.log", encoding="utf-8").read()
sends_off = re.sub(r"(\[send\] via NET/IB/\d+)/GDRDMA", r"\1", real)
for text in (sends_off, H + "NCCL_NET_GDR_READ set by environment to 0\n" + sends_off,
             re.sub(r"(\[receive\] via NET/IB/\d+)/GDRDMA", r"\1", real, count=1),
             H + "NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_0'\n" + H + "Using network IB\n",
             H + "Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct\n",
             H + "NET/Socket : Using [0]lo:127.0.0.1<0>\n" + H + "Using network Socket\n",
             H + "32 coll channels, 32 collnet channels, 16 nvls channels, 32 p2p channels, 32 p2p channels per peer\n",
             H + "NCCL_IB_TC set by environment to 26\n",
             H + "NCCL version 2.18.3+cuda12.1\n" + H + "NCCL version 2.19.3+cuda12.3\n"):
    show_log(text)
# the notes a paste of counters gets (tests/test_signatures.py): read once, unchanged, healthy, margin, peers
once = "     rx_prio3_pause: 1843\n     tx_prio3_pause: 12\n"
healthy = ("Physical Counters and BER Info\n------------------------------\n"
           "Effective Physical Errors          : 0\nEffective Physical BER             : 15E-255\n"
           "Link Down Counter                  : 0\nRaw Physical BER                   : 2E-9\n")
margin = healthy.replace("Effective Physical Errors          : 0", "Effective Physical Errors : 42").replace(
    "15E-255", "3E-12")
one = "     rx_prio3_pause: 1843\n"
for text in (once, once + once, one + one, healthy, margin, "        SW Power Cap                      : Active\n" * 4,
             "        SW Power Cap                      : Active\n", healthy + healthy):
    show_log(text)
single = nccltests.read_text(open("nvcourse/data/nccl/h100_8gpu_single_node_markdown_indented.txt").read())
ring_level = copy.deepcopy(single)  # the same run at the ring level: NVLS not at work
for r in ring_level.rows:
    r["oop_busbw_GBps"] *= 0.78
wrong = copy.deepcopy(single)  # values out of bounds: the run's results are wrong
wrong.out_of_bounds = 3
runs = [single, ring_level, wrong] + [nccltests.read_text(open(f, encoding="utf-8").read())
                               for f in sorted(glob.glob("nvcourse/data/nccl/*_*nodes*.txt")
                                               + glob.glob("tests/fixtures/nccl_tests/*"))]
for run in runs:
    run.notes.append("several processes printed rank 0: nccl-tests was likely built without MPI=1")
    for kw in ({}, {"system": "dgx-h100"}, {"system": "dgx-h100", "gpus": 8, "nodes": 1},
               {"system": "dgx-h100", "gpus": 8, "nodes": 4},
               {"system": "gb200-nvl72", "gpus": 4, "nodes": 2}):
        show_run(run, **kw)
# #wrong counted in the rows, no "Out of bounds" footer printed (an old or cut output)
unfooted = copy.deepcopy(single)
unfooted.out_of_bounds = None
unfooted.rows[0]["oop_wrong"] = 2
show_run(unfooted)
# a plateau under a third of the NICs while the command sets NCCL_NET_GDR_LEVEL (nccl-tests#319)
show_run(nccltests.read_text(open("tests/fixtures/pasted_dev/nccltests319_h100_2node_ib_doca_mpirun_fenced.txt",
                                  encoding="utf-8").read()))
# only zero-byte rows (a run from -b 0 cut after its first row): rows, but no size to overlay
zero = copy.deepcopy(single)
zero.rows = [dict(single.rows[0], bytes=0)]
show_run(zero, system="dgx-h100", gpus=8, nodes=1)
# busbw 0.00 at every size under mpirun -np 16: one rank per process (nccl-tests#294, held-out set 6)
show_run(nccltests.read_text(open("tests/fixtures/pasted_heldout5/nccltests294_h100_rows_only_no_header_duplicate_"
                                  "sizes_busbw_zero_mpirun_np16_nccl_conf.txt", encoding="utf-8").read()))
# every pasted fixture set (the held-out ones too): logs and nccl-tests outputs as people paste them
for f in sorted(glob.glob("tests/fixtures/pasted_*/*")):
    text = open(f, encoding="utf-8", errors="replace").read()
    show_log(text)
    try:
        first = nccltests.read_text(text)  # the run a report reads, with what else the paste holds
    except ValueError:
        continue
    show_run(first)
    one = copy.deepcopy(first)  # one row left: the singular forms of the notes that count rows
    one.rows = one.rows[:1]
    show_run(one)
# lines below NCCL and around it, built from the real ones of tests/test_ncclog_faults.py
warn_efa = "libfabric:85:1747438790::core:core:fi_getinfo_():1392<warn> fi_getinfo: provider efa output empty list\n"
prompt = "[root@gpu3 ~]# lsmod | grep nvidia_peermem\n[root@gpu3 ~]# lsmod | grep nv_peer_mem\n[root@gpu3 ~]#\n"
for text in (
        H + "GPU Direct RDMA Enabled for GPU 81000 / HCA 1 (distance 6 <= 7), read 0\n"
        + H + "GPU Direct RDMA Enabled for GPU 81000 / HCA 0 (distance 7 <= 7), read 0\n"
        + H + "GPU Direct RDMA Enabled for GPU 41000 / HCA 0 (distance 6 <= 7), read 0\n",
        H + "GPU Direct RDMA Enabled for GPU 81000 / HCA 1 (distance 6 <= 7), read 0\n"
        + H + "GPU Direct RDMA Enabled for GPU 81000 / HCA 0 (distance 7 <= 7), read 0\n"
        + H + "GPU Direct RDMA Enabled for GPU 41000 / HCA 0 (distance 6 <= 7), read 0\n"
        + H + "GPU Direct RDMA Enabled for GPU 41000 / HCA 1 (distance 7 <= 7), read 0\n",
        H + "NET/IB : No device found.\n" + H + "NET/Socket : Using [0]eth0:10.0.0.1<0>\n" + H
        + "Using network Socket\n" + H + "comm 0x5581 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0\n",
        warn_efa + H + "NET/OFI Selected provider is efa, fabric is efa-direct (found 4 nics)\n",
        "libfabric:85:1747438790::efa:core:efa_device_construct():90<warn> ibv_query_device failed\n",
        prompt + H + "NCCL version 2.12.9+cuda11.6\n",
        prompt + "NCCL version 2.18.3+cuda12.2\n" + H + "DMA-BUF is available on GPU device 0\n",
        prompt + "NCCL version 2.18.3+cuda12.2\n",
        H + "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE ; OOB eth0:10.0.0.1<0>\n" + H + "Using network IB\n"
        + H + "Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0\n",
        "Hypervisor vendor:     KVM\n" + open("tests/fixtures/ncclog/ib_error4_gdr_vm_nccl660.log").read(),
        H + "NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.1<0>\n" + H + "Using network IB\n"
        + open("tests/fixtures/ncclog/graph_nvls_h100_2nodes_nccl1519.log").read()):
    show_log(text)
# an integer type's old error column above 0 out of place, and other runs with no Avg line and no name
old = nccltests.read_text(open("tests/fixtures/pasted_heldout3/nccltests104_sendrecv_g2_uint8_two_outputs_old_error_"
                               "column.txt", encoding="utf-8").read())
old.rows[0]["oop_error"] = 300.0
show_run(old)
old.op = None
show_run(old)
# the published sweeps
for f in sorted(glob.glob("tests/fixtures/heldout_sweeps/*") + glob.glob("tests/fixtures/calibration_sweeps/*")):
    try:
        show_run(nccltests.read_text(open(f, encoding="utf-8").read()))
    except ValueError:  # a sweep kept as a table of figures, not as nccl-tests printed it
        pass
# two of them with the command their fixture's header describes typed above (the header is the course's note, not
# read): NCCL_ALGO=RING with NVLS off, and NVLS off alone (the overlay models the setting)
for command, f in (("NCCL_ALGO=RING NCCL_NVLS_ENABLE=0 ./all_reduce_perf -b 8 -e 8G -f 2 -g 8 -w 5 -n 20",
                    "together-h100-8gpu-single-process-ring-allreduce.txt"),
                   ("mpirun --bind-to numa -x NCCL_NVLS_ENABLE=0 -np 128 all_reduce_perf -b 8 -e 32G -f 2 -g 1",
                    "oci-oke-gb200-2rack-128gpu-allreduce.txt")):
    show_run(nccltests.read_text(command + "\n" + open("tests/fixtures/heldout_sweeps/" + f, encoding="utf-8").read()))
# a setting the model cannot follow on the system asked for: NVLS forced, modelled on A100 (no NVLink SHARP)
forced = open("nvcourse/data/nccl/h100_8gpu_single_node_markdown_indented.txt", encoding="utf-8").read()
show_run(nccltests.read_text("NCCL_ALGO=NVLS ./build/all_reduce_perf -b 8 -e 8G -f 2 -g 8\n" + forced),
         system="dgx-a100")
two = nccltests.read_text(open("tests/fixtures/pasted_heldout2/nccltests78_allreduce_then_alltoall_old_error_column_"
                               "v100.txt", encoding="utf-8").read())
two.other_runs = [dict(o, avg_busbw_GBps=None) for o in two.other_runs]
show_run(two)
sys.stdout.write("\n".join(out))
'''


@pytest.mark.parametrize("language", ["en", "fr"])
def test_every_reader_verdict_and_problem_speaks_the_language(language):
    speaks(run_walk(WALK, language), language, PATHS, UNREACHABLE, least=90)


def test_nccl_tests_signatures_speak_french_and_json_stays_english():
    # a real EKS p4d paste whose log lines match the runbook's EFA signature: its title, cause and fix come from
    # runbook.toml; the text report shows their translation, --json the data file's English, byte for byte
    paste = "tests/fixtures/heldout_sweeps/aws-eks-p4d-a100-2node-efa-allreduce-nccl2.8.txt"
    fr, en = _cli(["nccl-tests", paste], "fr"), _cli(["nccl-tests", paste], "en")
    assert fr.returncode == en.returncode == 0, fr.stderr + en.stderr
    assert "signature: AWS EFA: NCCL through the aws-ofi-nccl plugin" in en.stdout
    assert f"signature{NBSP}: AWS EFA{NBSP}: NCCL via le plugin aws-ofi-nccl" in fr.stdout
    assert f"correctif{NBSP}: installez le plugin" in fr.stdout and "fix: install the plugin" not in fr.stdout
    jfr, jen = _cli(["nccl-tests", paste, "--json"], "fr"), _cli(["nccl-tests", paste, "--json"], "en")
    assert jfr.stdout == jen.stdout and "AWS EFA: NCCL through the aws-ofi-nccl plugin" in jen.stdout
