"""The model's copy of NCCL's tuner against the TUNING tables NCCL printed on four held-out NVSwitch machines
(tests/fixtures/tables_heldout: 8 x H200 on NCCL 2.30.4, with and without NVLS; 6 and 2 x H100 on 2.29.2), through
``python -m nvcourse.devtools.tuner_check``. Expected figures are the tables' own (read from the text); the model's
are computed. These tests pin that every cell agrees, as docs/model-validation.md says."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvcourse.devtools.tuner_check import compare, main

FIX = Path(__file__).parent / "fixtures" / "tables_heldout"
LOGS = {
    "h200x8-nccl2.30.4-ctc-probe.log": ("hgx-h200", 8, "2.30", True),
    "h200x8-nccl2.30.4-nvlsoff-ctc-probe.log": ("hgx-h200", 8, "2.30", False),
    "h100x6-nccl2.29.2-nvls-g6auto.log": ("dgx-h100", 6, "2.29", True),
    "h100x2-nccl2.29.2-g2auto.log": ("dgx-h100", 2, "2.29", True),
}


def cells(name: str) -> dict:
    system, gpus, version, nvls = LOGS[name]
    out = compare((FIX / name).read_text(encoding="utf-8"), system, gpus, nccl_version=version, nvls=nvls)
    return {(x.op, x.algo, x.proto): x for x in out}


#: the tree all-reduce cells of the 2-GPU log (the last difference, explained on 2026-12-07)
TREE2 = {("allreduce", "tree", p) for p in ("LL", "LL128", "Simple")}


@pytest.mark.parametrize("name", LOGS)
def test_every_cell_agrees(name):
    cs = cells(name)
    on = {k for k, x in cs.items() if x.nccl_bw_GBps > 0}
    assert len(on) == (18 if not LOGS[name][3] else 21)
    # the pairs NCCL enables are the pairs the model enables: none missing on either side
    assert on == {k for k, x in cs.items() if x.model_bw_GBps is not None}
    differ = {k for k in on if not cs[k].agrees}
    assert differ == set()
    for k in on:  # NCCL's latency formula is the model's wherever both enable a pair, broadcast and reduce included
        assert cs[k].model_latency_us == pytest.approx(cs[k].nccl_latency_us, abs=0.06)


@pytest.mark.parametrize("name", LOGS)
def test_nccl_rings_run_at_twelve_channels_of_30(name):
    """The table's ring all-reduce Simple bandwidth x 2(n-1)/n is NCCL's search's channels x speed: 12 x 30 = 360
    GB/s on an NVLink4 GPU, which the model's copy of the search gives; the time keeps the links' 18 x 20.6."""
    from nvcourse.costmodel import nccl_table, protocols
    from nvcourse.costmodel.config import configure

    system, gpus, version, _ = LOGS[name]
    x = cells(name)[("allreduce", "ring", "Simple")]
    assert x.nccl_bw_GBps * 2 * (gpus - 1) / gpus == pytest.approx(360.0, abs=0.1)
    c = configure(system, gpus, nccl_version=version)
    g = nccl_table.ring_graph(c)
    assert (g.channels, g.speed_GBps) == (12, 30.0)
    cost = protocols.nccl_cost("allreduce", "ring", "Simple", c)
    assert 1 / cost.s_per_byte / 1e9 * 2 * (gpus - 1) / gpus == pytest.approx(18 * 20.6)


def test_broadcast_and_reduce_rings_cost_one_step_on_a_switch_only():
    """One step's latency on one switch node (sameChannels), n steps across nodes, as before."""
    from nvcourse.costmodel.config import configure
    from nvcourse.costmodel.latency import latency_s

    one = latency_s("broadcast", "ring", "LL", configure("dgx-h100", 8))
    assert one * 1e6 == pytest.approx(cells("h200x8-nccl2.30.4-ctc-probe.log")[("broadcast", "ring", "LL")]
                                      .nccl_latency_us, abs=0.06)
    two = latency_s("broadcast", "ring", "LL", configure("dgx-h100", 8, 2))
    assert two * 1e6 == pytest.approx(6.6 + 16 * 2.7, abs=0.01)  # nsteps = 16 ranks x NCCL's net LL step


def test_nvls_graph_takes_twice_from_the_head():
    """NVLS: one channel per GPU; with the head's second share, (n + 1) x speed must fit in the GPU's 370.8 GB/s:
    40 GB/s on 8 GPUs, 50 on 6, 60 on 2; the tables' all-gather bandwidth follows (208.2, 177.1, 25.5)."""
    from nvcourse.costmodel import nccl_table
    from nvcourse.costmodel.config import configure

    want = {"h200x8-nccl2.30.4-ctc-probe.log": 40.0, "h100x6-nccl2.29.2-nvls-g6auto.log": 50.0,
            "h100x2-nccl2.29.2-g2auto.log": 60.0}
    for name, speed in want.items():
        system, gpus, version, _ = LOGS[name]
        g = nccl_table.nvls_graph(configure(system, gpus, nccl_version=version))
        assert (g.channels, g.speed_GBps) == (gpus, speed)
        x = cells(name)[("allgather", "nvls", "Simple")]
        assert x.agrees and x.nccl_bw_GBps == pytest.approx(gpus * speed * 0.85 * ((gpus - 1) / gpus) ** 2, abs=0.06)


def test_tree_allreduce_on_two_gpus_splits_its_channels_between_both_ports():
    """On 2 H100 NCCL's tree all-reduce bandwidths (61.1 / 180.6 / 232.2 GB/s) are 12 channels of 60 GB/s, capped at
    12 x 38.7 (perChMaxTreeBw): the log's trees run 0-5 from GPU 0 and 6-11 from GPU 1. On more GPUs, one port."""
    from nvcourse.costmodel import nccl_table
    from nvcourse.costmodel.config import configure

    text = (FIX / "h100x2-nccl2.29.2-g2auto.log").read_text(encoding="utf-8")
    trees = next(line for line in text.splitlines() if "[0] NCCL INFO Trees" in line)
    assert trees.count("1/-1/-1->0->-1") == 12 and trees.count("-1/-1/-1->0->1") == 12  # half the channels each way
    g = nccl_table.tree_graph(configure("dgx-h100", 2))
    assert (g.channels, g.speed_GBps) == (12, 60.0)
    cs = cells("h100x2-nccl2.29.2-g2auto.log")
    assert cs[("allreduce", "tree", "Simple")].nccl_bw_GBps == pytest.approx(12 * 38.7 / 2, abs=0.05)
    assert all(cs[k].agrees for k in TREE2)
    assert nccl_table.tree_graph(configure("dgx-h100", 8)).speed_GBps == 30.0


def test_the_model_chooses_with_the_table_and_times_with_the_links():
    """predict's pick uses NCCL's table (choice_s_per_byte); its time the links' rate, 3 % faster on a ring."""
    from nvcourse.costmodel import protocols
    from nvcourse.costmodel.config import configure

    cost = protocols.nccl_cost("allreduce", "ring", "Simple", configure("dgx-h100", 8))
    assert cost.choice_s_per_byte / cost.s_per_byte == pytest.approx(370.8 / 360.0)
    size = 2**30
    assert cost.nccl_estimate(size) > cost.time(size) * 0.99  # the estimate uses the slower table bandwidth
    # across nodes the model has no copy of the search: it chooses with its own bandwidth
    assert protocols.nccl_cost("allreduce", "ring", "Simple", configure("dgx-h100", 8, 2)).choice_s_per_byte is None


def test_nvls_off_log_has_no_nvls_on_either_side():
    cs = cells("h200x8-nccl2.30.4-nvlsoff-ctc-probe.log")
    assert all(x.nccl_bw_GBps == 0 and x.model_bw_GBps is None for k, x in cs.items() if k[1] in ("nvls", "nvlstree"))


def test_command_line(capsys, tmp_path):
    log = FIX / "h200x8-nccl2.30.4-ctc-probe.log"
    assert main([str(log), "--system", "hgx-h200", "--gpus", "8", "--nccl-version", "2.30"]) == 0
    out = capsys.readouterr().out
    assert out.strip().endswith("agree: 21 of 21 cells enabled on either side") and "<- differs" not in out
    empty = tmp_path / "none.log"
    empty.write_text("NCCL INFO NCCL version 2.30.4\n", encoding="utf-8")
    assert main([str(empty), "--system", "hgx-h200", "--gpus", "8"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: LOG must hold an NCCL TUNING table") and err.count("\n") == 1


def test_the_appendix_states_the_figures_these_logs_give():
    """docs/model-validation.md (tuner_notes.TUNER_NOTES) quotes figures the logs and the model give, checked here."""
    from nvcourse.costmodel import nccl_table
    from nvcourse.costmodel.config import configure
    from nvcourse.costmodel.tuner_notes import TUNER_NOTES

    text = " ".join(TUNER_NOTES)
    h200, h6, h2 = (cells(n) for n in ("h200x8-nccl2.30.4-ctc-probe.log", "h100x6-nccl2.29.2-nvls-g6auto.log",
                                       "h100x2-nccl2.29.2-g2auto.log"))
    g = nccl_table.ring_graph(configure("dgx-h100", 8))
    assert f"{g.channels} ring channels of {g.speed_GBps:g} GB/s = {g.channels * g.speed_GBps:g} GB/s" in text
    ll = h200[("broadcast", "ring", "LL")]
    assert f"{ll.nccl_latency_us:.1f} us with LL on 8 GPUs (the model had 11.4)" in text  # 6.6 + 8 x 0.6 before
    ag = [c[("allgather", "nvls", "Simple")].nccl_bw_GBps for c in (h200, h6, h2)]
    assert "({:.1f} GB/s on 8 H200, {:.1f} on 6 H100, {:.1f} on 2;".format(*ag) in text
    ar = [c[("allreduce", "nvls", "Simple")].nccl_bw_GBps for c in (h200, h6, h2)]
    assert "({:.1f}, {:.1f} and {:.1f} GB/s)".format(*ar) in text
    tree2 = [h2[("allreduce", "tree", p)] for p in ("LL", "LL128", "Simple")]
    assert "({:.1f} / {:.1f} / {:.1f} GB/s".format(*(x.nccl_bw_GBps for x in tree2)) in text
    g2 = nccl_table.tree_graph(configure("dgx-h100", 2))
    assert f"{g2.channels} channels of {g2.speed_GBps:g} GB/s" in text


def test_bus_to_algorithm_bandwidth_as_nccl_converts_it():
    # tuning.cc: a ring n/nsteps, a tree 0.5, NVLS n/nsteps for all-reduce and 1 for all-gather/reduce-scatter
    from nvcourse.costmodel.nccl_table import algbw_ratio

    assert algbw_ratio("allreduce", "ring", 8) == 8 / 14 and algbw_ratio("allgather", "ring", 8) == 8 / 7
    assert algbw_ratio("broadcast", "ring", 8) == 1.0 and algbw_ratio("allreduce", "tree", 8) == 0.5
    assert algbw_ratio("allreduce", "nvls", 8) == 8 / 14 and algbw_ratio("allgather", "nvls", 8) == 1.0


def test_release_keys_sort_as_releases():
    from nvcourse.costmodel.tuning import version_key

    assert sorted(["2.19", "2.9", "2.30", "2.28.9"], key=version_key) == ["2.9", "2.19", "2.28.9", "2.30"]


def test_the_per_link_nvlink_figure_follows_the_release():
    # topo.h: SM90_NVLINK_BW 20.0 in 2.19, 20.6 from 2.20; SM100 40.0 from 2.25, 40.1 from 2.28; before 2.25 a
    # Blackwell GPU (cc >= 90) takes the SM90 figure, so NCCL's search gives it Hopper's graphs
    import dataclasses

    from nvcourse.costmodel import nccl_table
    from nvcourse.costmodel.config import configure

    def port(system: str, version: str) -> float:
        return nccl_table.port_GBps(dataclasses.replace(configure(system, 8), nccl_version=version))

    assert port("dgx-h100", "2.19") == pytest.approx(18 * 20.0) and port("dgx-h100", "2.20") == pytest.approx(18 * 20.6)
    assert port("dgx-b200", "2.24") == pytest.approx(18 * 20.6) and port("dgx-b200", "2.25") == pytest.approx(18 * 40.0)
    assert port("dgx-b200", "2.28") == pytest.approx(18 * 40.1) and port("dgx-a100", "2.30") == pytest.approx(12 * 20.0)
    old = nccl_table.ring_graph(dataclasses.replace(configure("dgx-b200", 8), nccl_version="2.24"))
    assert (old.channels, old.speed_GBps) == (12, 30.0)
    new = nccl_table.ring_graph(configure("dgx-b200", 8))
    assert (new.channels, new.speed_GBps) == (16, 45.0)
