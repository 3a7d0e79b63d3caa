"""Chapter 06b's paste boxes: the sentences around them say what the readers report, on the shipped samples and on
an empty or unusable paste (a one-line ⚠ note, never a traceback). Expected values come from the chapter's text and
the samples' own numbers, not from the reader's output. Markdown line breaks are read as spaces."""

import json
import re
from functools import cache
from pathlib import Path

import pytest

from nvcourse.chapters import ch06b_nccl_in_practice as ch
from nvcourse.nccl import diagnose

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "06b_nccl_in_practice.ipynb"


@cache
def cell(cid: str) -> str:
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    return next(re.sub(r"\s+", " ", "".join(c["source"])) for c in nb["cells"] if c["id"] == cid)


def _band(name: str, band: str) -> dict:
    run = ch.read_sample(ch.SAMPLES[name])
    return next(b for b in diagnose(run).bands if b["band"] == band)


def _plain(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&#x27;", "'")


# ------------------------------------------------------------------------------------------------ nccl-tests box
def test_size_bands_are_where_the_prose_puts_them():
    assert "latency (< 64 KiB), transition, bandwidth (≥ 32 MiB)" in cell("c010")
    diag = diagnose(ch.read_sample(ch.SAMPLES["2 nodes x 8 A100 (RoCE)"]))
    bands = {b["band"]: b["sizes"] for b in diag.bands}
    assert bands["latency"][1] < 64 * 1024 <= bands["transition"][0]
    assert bands["transition"][1] < 32 * 2**20 == bands["bandwidth"][0]


def test_the_a100_sample_prints_the_nics_rate_and_the_tree_cause_the_prose_promises():
    assert 'Pick the sample "2 nodes x 8 A100" below' in cell("c010")
    assert "the figure the verdict below prints." in cell("c010")
    assert any(name.startswith("2 nodes x 8 A100") for name in ch.SAMPLES)
    b = _band("2 nodes x 8 A100 (RoCE)", "bandwidth")
    assert "is above the 192 GB/s all the node's NICs carry" in b["verdict"]  # 8 x 24 GB/s, c010
    assert any("tree" in c["cause"] and "nccl-tests/issues/196" in c["source"] for c in b["causes"])
    box = ch.nccl_tests_box()
    box.controls["sample"].value = "2 nodes x 8 A100 (RoCE)"
    assert box.last_error is None and "192 GB/s all the node's NICs carry" in _plain(box.readout.value)


def test_the_one_node_h100_sample_is_above_the_ring_bound_and_called_nvls():
    assert "The single-node H100 sample shows the other signature" in cell("c012")
    b = _band("8x H100, one node (NVSwitch)", "bandwidth")
    levels = b["level"]["levels_GBps"]
    assert b["level"]["plateau_GBps"] > levels["ring"] and b["level"]["matches"] == "nvls"
    assert "NVLS (in-switch reduction) is at work" in b["verdict"]


def test_unrecognised_gpus_ask_for_the_controls_the_prose_names():
    assert "give `system`, GPUs per node and nodes when the GPU names are not recognised" in cell("c012")
    box = ch.nccl_tests_box()
    box.controls["sample"].value = "2 nodes x 1 T4 over AWS EFA (with NCCL INFO lines)"
    text = _plain(box.readout.value)
    assert box.last_error is None and "not recognised from the GPU names" in text
    assert "pick the system, GPUs/node and nodes above" in text
    # a send/recv run: the model has no ring for it, so no control gives an overlay and none is offered
    # (the reader says so itself, before asking for a system: the same one note with or without a system)
    box.controls["sample"].value = "2 nodes x 1 A40 (no op line: which test ran?)"
    text = _plain(box.readout.value)
    assert box.last_error is None and "not recognised from the GPU names" not in text
    no_overlay = "the model has no overlay for sendrecv, whatever the system"
    assert "pick the system" not in text and text.count(no_overlay) == 1
    box.controls["system"].value = "dgx-a100"
    text = _plain(box.readout.value)
    assert "cannot run here" not in text and text.count(no_overlay) == 1


BAD_TESTS_PASTES = {
    "empty": ("", "the box is empty"),
    "blank lines": ("  \n\n  ", "the box is empty"),
    "not nccl-tests": ("hello\nthis is not a benchmark\n", "expected result rows"),
    "cut off before the rows": ("# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 "
                                "agg iters: 1 validation: 1 graph: 0\n", "no complete result row"),
}


@pytest.mark.parametrize("case", sorted(BAD_TESTS_PASTES))
def test_an_unusable_nccl_tests_paste_gets_one_line_naming_what_was_expected(case):
    assert ("(an empty box, text with no result rows, a run cut off before its first row) replaces the readout "
            "with a one-line note that starts with a ⚠ warning sign") in cell("c012")
    text, says = BAD_TESTS_PASTES[case]
    box = ch.nccl_tests_box()
    box.controls["sample"].value = ch._PASTE
    box.controls["text"].value = text
    err = box.last_error
    assert err and "\n" not in err and says in err and "Traceback" not in box.readout.value
    assert "expected" in err or "paste what" in err
    assert "⚠" in box.readout.value and "#fff4ce" in box.readout.value  # the yellow note


# ------------------------------------------------------------------------------------------------ log box
def test_the_h800_log_answers_the_predict_question():
    assert "in the H800 log (first sample) the user set `NCCL_ALGO=...,NVLS`" in cell("c014")
    assert next(iter(ch.LOGS)).startswith("8x H800")
    box = ch.ncclog_box()
    text = _plain(box.readout.value)
    assert "NVLS: NOT supported, 0 nvls channels" in text and "NCCL_ALGO=" in text
    raw = ch.sample_text(ch.LOGS["8x H800: NVLS not available"])
    assert "NVLS multicast support is not available" in raw and "0 nvls channels" in raw  # the two deciding lines
    assert "`NVLS multicast support is not available` and `0 nvls channels` decide" in cell("c017")


def test_the_log_reader_takes_every_paste_shape_the_prose_lists():
    assert "§8 lists the shapes and wordings it reads" in cell("c017")
    text = cell("r4c06b01")
    for words in ("with or without `host:pid:tid` prefixes", "with mpirun's `[1,0]<stdout>:` tags", "grep-filtered",
                  "NCCL 2.7 wording", "2.2x"):
        assert words in text
    raw = {k: ch.sample_text(v) for k, v in ch.LOGS.items()}
    box = ch.ncclog_box()
    seen = {}
    for name in ch.LOGS:
        box.controls["sample"].value = name
        assert box.last_error is None, name
        seen[name] = _plain(box.readout.value)
    assert re.search(r"^NCCL INFO ", raw["8x H800: NVLS not available"], flags=re.M)  # no host:pid:tid prefix
    assert re.search(r"^\S+:\d+:\d+ \[\d+\] NCCL INFO", raw["2 nodes x 8 H100: NVLS available"], flags=re.M)
    assert "<stdout>:" in raw["AWS EFA plugin, mpirun tags"] and "NCCL 2.12.7" in seen["AWS EFA plugin, mpirun tags"]
    assert "filtered paste?" in seen["2 nodes x 8 H100: NVLS available"]
    assert "NCCL 2.7.6" in seen["A100, IB, NCCL 2.7.6 wording"]
    assert "P2P/CUMEM/read" in seen["2 nodes, IB with GDRDMA, P2P/CUMEM (NCCL 2.2x)"]


@pytest.mark.parametrize(("text", "says"), [
    ("", "the box is empty"),
    ("nothing from NCCL here\n", "expected NCCL_DEBUG=INFO lines such as"),
    ("#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
     "     1048576        262144     float     sum      -1    27.50   38.13   66.73      0\n",
     "expected NCCL_DEBUG=INFO lines such as"),
])
def test_an_unusable_log_paste_gets_one_line_with_an_example(text, says):
    assert ("An empty box, or text with no NCCL line in it (an nccl-tests table, say), gets the same kind of "
            "one-line ⚠ note, with an example of the line it looks for") in cell("c017")
    box = ch.ncclog_box()
    box.controls["sample"].value = ch._PASTE
    box.controls["text"].value = text
    err = box.last_error
    assert err and "\n" not in err and says in err and "NCCL INFO" in err
    assert "⚠" in box.readout.value and "Traceback" not in box.readout.value


# ------------------------------------------------------------------------------------------------ check yourself
def test_q1_most_rows_of_the_sweep_are_below_the_bandwidth_band():
    answer = cell("c026")
    assert "most rows of a sweep from 8 B lie below the bandwidth band (32 MiB and up): 22 of the 31 in §2" in answer
    run = ch.read_sample("2 nodes x 8 A100 (RoCE)")
    below = [r for r in run.rows if r["bytes"] < 32 * 2**20]
    tiny = [r for r in run.rows if r["bytes"] < 64 * 1024]
    assert (len(below), len(run.rows), len(tiny)) == (22, 31, 13) and len(below) > len(run.rows) / 2  # "most"
    top = run.rows[-1]["oop_busbw_GBps"]
    assert round(top) == 238 and max(r["oop_busbw_GBps"] for r in below) < top / 2  # "none above half of 238"
    assert "13 of them (below 64 KiB) near 0" in answer and max(r["oop_busbw_GBps"] for r in tiny) < top / 100
    assert ch.band_counts(run) == {"latency": 13, "transition": 9, "bandwidth": 9}


def test_q5_asks_only_what_the_chapter_teaches():
    text = cell("c026")
    assert "`root`" not in text and "N/A" not in text  # neither is shown in the chapter
    assert "all-reduce 2(n−1)/n" in cell("c007") and "broadcast, reduce, send/recv 1" in cell("c007")
    assert f"2(16−1)/16 = {2 * 15 / 16}" in text
    run = ch.read_sample("2 nodes x 8 A100 (RoCE)")
    assert run.nranks == 16 and run.op == "allreduce" and run.op_source == "busbw/algbw ratio"
    last = run.rows[-1]
    assert last["oop_busbw_GBps"] / last["oop_algbw_GBps"] == pytest.approx(1.875, abs=0.005)


# ------------------------------------------------------------------------------------------------ host plumbing
def test_acs_prose_names_the_redirect_bits_the_runbook_checks():
    from nvcourse import _data

    text = cell("r4c06b01")  # the reference section (§8) reads the ACS line
    assert "shows `SrcValid+` where it is on" not in text
    assert "a `+` after `ReqRedir` or `CmpltRedir`" in text and "`SrcValid+` alone only validates" in text
    acs = _data.load("runbook")["signatures"]["acs_redirect"]
    assert acs["command"] == "sudo lspci -vvv | grep ACSCtl"
    srcvalid_only = "ACSCtl: SrcValid+ TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-"
    assert any(re.search(p, acs["broken"]) for p in acs["log_patterns"])
    assert not any(re.search(p, srcvalid_only) for p in acs["log_patterns"])
    assert any(re.search(p, srcvalid_only) for p in acs["healthy_patterns"])


def test_gdr_level_default_is_pxb_in_prose_and_table():
    # NCCL's default (src/graph/paths.cc, 2.18 to 2.30): netGdrLevel = PATH_PXB (P2C with NCCL_NET_GDR_C2C on)
    from nvcourse import _data

    text = cell("c022")
    assert "Its default is `PXB`" in text and "(`PHB` or `SYS`) needs a higher level" in text
    when = _data.load("nccl_env")["vars"]["NCCL_NET_GDR_LEVEL"]["when"]
    assert "The default level is PXB" in when and "(PHB or SYS" in when and "(PXB, PHB)" not in when
    assert "default level is PXB" in _plain(ch.env_table_html())


def test_glossary_links_point_at_existing_entries():
    glossary = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    anchors = set(re.findall(r'<a id="([a-z0-9-]+)"></a>', glossary))
    text = " ".join(cell(c) for c in ("c020", "c022"))
    used = set(re.findall(r"glossary\.md#([a-z0-9-]+)", text))
    assert {"gpudirect-rdma", "p2p", "numa", "acs", "pxn"} <= used <= anchors


def test_words_met_in_06b_before_their_chapter_are_explained_where_first_used():
    # DMA-BUF and the IOMMU are explained in 06d, SRD in 06d, CollNet with SHARP: 06b says what each is, or links
    # the glossary, in the cell that first names it (the readouts of the boxes may name SRD and CollNet too)
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    first: dict[str, str] = {}
    for c in nb["cells"]:
        for word in ("DMA-BUF", "IOMMU", "SRD", "CollNet"):
            if c["cell_type"] == "markdown" and word not in first and re.search(rf"\b{word}\b", cell(c["id"])):
                first[word] = cell(c["id"])
    assert "DMA-BUF (the Linux kernel's generic way for two devices to share a buffer)" in first["DMA-BUF"]
    assert "the IOMMU, the unit that translates and checks device addresses," in first["IOMMU"]
    assert "[SRD](../docs/glossary.md#srd)" in first["SRD"]
    assert "in-network reduction, on [SHARP](../docs/glossary.md#sharp) switches" in first["CollNet"]


# ------------------------------------------------------------------------------------------------ §1 and §7 agree
def test_the_pairs_case_states_the_levels_and_the_slow_pair_without_the_bad_node():
    # the per-pair table of the cited thread, as stored: the prose's two levels and its third slow pair
    text = cell("c025")
    assert "near 88 GB/s and near 49 GB/s" in text and "the pair 284–678, which does not contain 644" in text
    assert "draining 644 alone would leave the job slow" in text
    rows = [line.split() for line in (ROOT / "tests" / "fixtures" / "runbook" / "slow_node_pairs_nccltests106.txt")
            .read_text(encoding="utf-8").splitlines() if line.startswith("se02")]
    busbw = {frozenset(r[0].replace("se02gn", "").split(",")): float(r[1]) for r in rows}
    slow = {pair for pair, bw in busbw.items() if abs(bw - 49) < 1.5}
    fast = {pair for pair, bw in busbw.items() if abs(bw - 88) < 1.5}
    assert slow | fast == set(busbw)
    assert {p for p in busbw if "644" in p} <= slow and frozenset({"284", "678"}) in slow


def test_the_flags_table_and_the_prose_give_g_the_same_meaning():
    assert "(`-g` is GPUs per thread, `-t` threads per process)" in cell("c004")
    table = _plain(ch.flags_table_html())
    assert "-g, --ngpus GPUs per thread (a process drives -t x -g GPUs" in table
    assert "GPUs driven by each process" not in table


def test_the_ladder_measures_one_node_with_one_process_per_gpu_as_the_key_points_say():
    assert "Run **one process per GPU**" in cell("c026")
    ladder = _plain(ch.ladder_html())
    assert "mpirun -np 8 all_reduce_perf -b 8 -e 8G -f 2 -g 1 (one process per GPU" in ladder
    assert "-g 8" not in ladder


def test_code_cells_name_samples_by_their_shown_names_not_file_names():
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    assert not re.search(r"\.(txt|log)\b", code)
    for name in re.findall(r'sample_text\("([^"]+)"\)', code):
        assert name in ch.SAMPLES or name in ch.LOGS


def test_the_short_variable_table_groups_every_variable_and_keeps_the_full_one():
    from nvcourse import _data

    names = set(_data.load("nccl_env")["vars"])
    grouped = [v for _g, group, _w in ch._ENV_GROUPS for v in group]
    assert sorted(grouped) == sorted(names)  # each variable in exactly one group
    assert "The first table groups the variables by why you would touch one" in cell("c018")
    short, full = ch.env_table_html().split("<details>", 1)
    assert all(n in short and n in full for n in names)


# ------------------------------------------------------------------------------------------------ §1 launch, §5, §6
def _shown_srun_lines() -> list[str]:
    """Every srun command a learner can copy: the English notebooks and docs (not the readers' test pastes)."""
    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "notebooks").glob("*.ipynb"))]
    texts += [p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md"))]
    texts.append((ROOT / "README.md").read_text(encoding="utf-8"))
    return [m.group(0) for t in texts for m in re.finditer(r"srun -[^\"\n`]*", t)]


def test_the_slurm_command_gives_every_task_its_nodes_gpus():
    # nccl-tests opens device = local rank (common.cu: gpus[i] = localRank*nThreads*nGpus + i unless
    # NCCL_TESTS_DEVICE is set); --gpus-per-task=1 binds one GPU per task (device 0): ranks 1-7 fail
    from nvcourse.nccl.launch import read_launch

    lines = _shown_srun_lines()
    assert "srun -N 2 --ntasks-per-node=8 --gpus-per-node=8 --mpi=pmix ./build/all_reduce_perf" in " ".join(lines)
    for line in lines:
        assert "--gpus-per-task" not in line or "--gpu-bind=none" in line, line
    text = cell("c004")
    assert "With `--gpus-per-task=1` Slurm shows each task only its own GPU, numbered 0" in text
    assert "add `--gpu-bind=none`" in text
    launch = read_launch("srun -N 2 --ntasks-per-node=8 --gpus-per-node=8 --mpi=pmix ./build/all_reduce_perf "
                         "-b 8 -e 8G -f 2 -g 1\n")
    assert (launch["launcher"], launch["np"]) == ("srun", 16)


def test_the_ib_hca_example_uses_exact_names():
    # NCCL env.rst, NCCL_IB_HCA: entries are prefixes unless the list starts with '=' (mlx5_1 also takes mlx5_10)
    from nvcourse import _data
    from nvcourse.nccl.launch import hca_list

    what = _data.load("nccl_env")["vars"]["NCCL_IB_HCA"]["what"]
    assert "e.g. =mlx5_0:1,mlx5_1:1" in what and "^=mlx5_9" in what
    assert hca_list("=mlx5_0:1,mlx5_1:1") == ["mlx5_0", "mlx5_1"] and hca_list("^=mlx5_9") == []
    assert "e.g. =mlx5_0:1,mlx5_1:1" in _plain(ch.env_table_html())


def test_dma_buf_log_line_is_a_probe_and_gdrdma_is_the_proof():
    # chapter 06d says the same: the start-up line is a probe (nccl-tests#245), /GDRDMA on the channel lines is use
    text = cell("c022")
    assert "`DMA-BUF is available on GPU device 0` is only a probe at start-up" in text
    assert "what proves GPUDirect RDMA is in use is the channel lines ending in `/GDRDMA`" in text
    assert "only a probe at start-up, not proof" in re.sub(r"\s+", " ", (ROOT / "notebooks" /
                                                                         "06d_bringup_and_fault_runbook.ipynb")
                                                            .read_text(encoding="utf-8"))
    assert "`PHB`: through the CPU's PCIe host bridge" in text
    assert "EFA, Elastic Fabric Adapter, is AWS's own network card" in cell("c014")


def test_the_log_table_shows_the_lines_to_read_first_and_keeps_the_others_one_click_away():
    text = cell("c014")
    head, details = text.split("<details>")
    for line in ("`NCCL version 2.x.y+cudaZ`", "[send] via NET/IB/11/GDRDMA", "`via SHM`", "NVLS multicast support",
                 "NCCL WARN"):
        assert line in head, line
    assert "`Trees [0] ...`" in details and "`Pattern 4, crossNic 0" in details
    assert "Read them top down: the version, the network, then per peer whether the channel line ends in `/GDRDMA`" \
        in head


def test_footer_share_and_factor_one_answer_and_words():
    """06b §2: the footer of the RoCE sample is about 28 % of its largest size; Check yourself 5 names the 2-rank
    all-reduce (factor 2(n−1)/n = 1) as a candidate; PHB/NODE/SYS and CollNet are glossed or linked."""
    nb = json.loads((ROOT / "notebooks" / "06b_nccl_in_practice.ipynb").read_text(encoding="utf-8"))
    text = {c["id"]: re.sub(r"\s+", " ", "".join(c["source"])) for c in nb["cells"]}
    run = ch.read_sample("2 nodes x 8 A100 (RoCE)")
    share = run.avg_busbw_GBps / run.rows[-1]["oop_busbw_GBps"]
    assert f"{share:.0%}" == "28%"
    assert "this sweep from 8 B reports about 28 % of what the fabric delivers at its largest size" in text["c009"]
    assert 2 * (2 - 1) / 2 == 1
    assert "on 2 ranks an all-reduce's 2(n−1)/n is also 1, so it is a candidate too" in text["c026"]
    assert "at `PHB`, `NODE` or `SYS` ([glossary](../docs/glossary.md#p2p))" in text["r4c06b01"]  # §8
    assert "CollNet, NCCL's path for in-network reduction, on [SHARP]" in text["r4c06b01"]
    assert "CollNet" not in " ".join(t for k, t in text.items() if k in ("c004", "c012"))  # named first in §8


def test_data_direct_line_is_quoted_per_release_and_one_grep_finds_every_form():
    """§8 quotes the Data Direct line as each NCCL release prints it (NVIDIA/nccl, src/transport/net_ib.cc at
    v2.27.3-1: no prefix, NET subsystem only; v2.27.5-1: also INIT; v2.27.6-1 and v2.27.7-1: 'NET/IB: ' prefix,
    'device:%s'; v2.28.3-1 on: 'device %s'), and the grep it gives matches every quoted form."""
    text = cell("r4c06b01")
    grep = "Data Direct DMA Interface is detected"
    assert f"grep for `{grep}`, which all of them contain" in text
    forms = {"2.27.3": "`Data Direct DMA Interface is detected for device:mlx5_0`",
             "2.27.6, 2.27.7": "`NET/IB: Data Direct DMA Interface is detected for device:mlx5_0`",
             "2.28 and later": "`NET/IB: Data Direct DMA Interface is detected for device mlx5_0`"}
    for release, line in forms.items():
        assert f"| {release} | {line}" in text and grep in line
    assert "logged only when `NCCL_DEBUG_SUBSYS` includes `NET` (the default is `INIT,BOOTSTRAP,ENV`)" in text
    body = " ".join(cell(c) for c in ("c020", "c022"))
    assert "Data Direct DMA Interface" not in body
    assert ("Two variations are in §8: **PXN** ([glossary](../docs/glossary.md#pxn)), where a GPU sends through "
            "another GPU's NIC, and **Grace systems (GB200, GB300)**, which attach the GPU to its CPU by "
            "NVLink-C2C instead of PCIe.") in body
    assert "NCCL has two Grace-only paths for it, **P2C** and **Data Direct**." in text


# ------------------------------------------------------------------------------------------------ readouts, short first
def test_host_plumbing_rows_say_one_nic_each_and_the_numa_node_of_each_half():
    """§6: "each GPU has one NIC on its own PCIe switch, and GPUs 0–3 run best on NUMA node 0, GPUs 4–7 on node 1",
    read from the stored `nvidia-smi topo -m` (PIX pairs and the NUMA Affinity column), not from the table's text."""
    assert ("each GPU has one NIC on its own PCIe switch (\"one each\"), and GPUs 0–3 run best on NUMA node 0, "
            "GPUs 4–7 on node 1") in cell("c022")
    res, _fig, _legend = ch.hopper_topology()
    for g in res.gpus:
        pix = [n for n in res.nics if "PIX" in (res.codes.get((g, n)), res.codes.get((n, g)))]
        assert len(pix) == 1, g
        assert res.affinity[g]["numa_affinity"] == ("0" if int(g[3:]) < 4 else "1"), g
    short, full = ch.affinity_table_html(res).split("<details>")
    assert _plain(short).count("one each") == 2 and "GPU0, GPU1, GPU2, GPU3" in short and "mlx5_1" in full
    # the PXN definition and the link-level tools moved, not lost: §8 and §7
    assert "`NCCL_PXN_DISABLE=1` turns it off" in cell("r4c06b01")
    assert "`ib_write_bw` from perftest between two hosts (add `--use_cuda=<gpu>`" in cell("c025")


def test_log_readout_shows_five_fields_first_and_shows_a_container_not_its_id():
    from nvcourse.nccl.ncclog import read_text as read_log

    log = read_log(ch.sample_text("8x H800: NVLS not available"))
    html = ch.log_html(log)
    short, rest = html.split("<details>")
    for field in ("net", "GDR", "transports", "NVLS", "WARN lines"):
        assert f">{field}</td>" in short, field
    for field in ("version", "ranks", "hosts", "channels"):
        assert f">{field}</td>" in rest and f">{field}</td>" not in short, field
    # the log's only host is a container (its id, a hash to a learner): shown as words, never the id
    assert "036260b61d3a" in log.hosts and "036260b61d3a" in ch.sample_text("8x H800: NVLS not available")
    assert "036260b61d3a" not in html and "036260b61d3a" not in ch.log_explanation(log)
    assert "(a container)" in _plain(short) and ">a container</td>" in rest
    assert "1 host seen (a container)" in ch.log_explanation(log)
    caption = ch.sample_caption("8x H800: NVLS not available")
    assert "036260b61d3a" not in caption and "system: a container, 8x H800 on NVSwitch" in caption
    # a log read for its topology search keeps the search graphs in the short table
    h20 = ch.log_html(read_log(ch.sample_text("H20 node: the topology search's ring graph, crossNic 1")))
    assert ">search graphs</td>" in h20.split("<details>")[0]


def test_box_with_gpus_per_node_from_the_device_lines_still_checks_the_ranks_and_hides_a_zero_ring_level():
    box = ch.nccl_tests_box()
    box.controls["sample"].value = "8x H100, one node (NVSwitch)"  # 8 ranks on 1 host: 8 GPUs/node
    box.controls["nodes"].value = 100000
    text = _plain(box.readout.value)
    assert "GPUs/node x nodes = 800000, but the paste has 8 ranks" in text and "ring level 0 GB/s" not in text
    box.controls["nodes"].value = 1
    assert "but the paste has" not in _plain(box.readout.value)


def test_the_flags_table_shows_the_sweep_gpus_and_check_first_and_folds_the_others():
    assert ("The flags that set the sweep, the GPUs per process and the check come first; the others are one click "
            "away:") in cell("c002")
    short, more = ch.flags_table_html().split("<details>")
    for flag in ("-b, --minbytes", "-e, --maxbytes", "-f, --stepfactor", "-g, --ngpus", "-c, --check"):
        assert flag in short and flag not in more, flag
    for flag in ("-n, --iters", "-w, --warmup_iters", "-G, --cudagraph", "-d, --datatype", "-R, --local_register"):
        assert flag in more and flag not in short, flag


def test_the_nccl_tests_readout_points_at_the_bandwidth_band_only_where_there_is_one():
    look = "Read the bandwidth band first: it compares the large sizes with the model."
    for name in ch.SAMPLES:
        run = ch.read_sample(name)
        diag = diagnose(run)
        has_band = any(b["band"] == "bandwidth" for b in diag.bands)
        html = _plain(ch.report_html(run, diag))
        assert (look in html) == has_band, name
        assert not has_band or html.index(look) < html.index("bandwidth (")
    assert any(any(b["band"] == "bandwidth" for b in diagnose(ch.read_sample(n)).bands) for n in ch.SAMPLES)
    assert not all(any(b["band"] == "bandwidth" for b in diagnose(ch.read_sample(n)).bands) for n in ch.SAMPLES)
