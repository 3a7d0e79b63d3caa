"""Chapters 04b and 08b after a fresh learner's walkthrough: each sentence it found contradicting the chapter, the
dashboard or the model now says what the model does, in every state its controls allow; words it met before their
definition are defined where first used; constants packed into one sentence moved to tables (checked here where they
state a number)."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest

from nvcourse import catalog, isolation
from nvcourse.costmodel import configure, predict, tuning
from nvcourse.costmodel.latency import latency_s

ROOT = Path(__file__).resolve().parents[1]
NB04B = ROOT / "notebooks" / "04b_predicting_collectives.ipynb"
NB08B = ROOT / "notebooks" / "08b_security_and_observability.ipynb"


@cache
def _cells(path: Path) -> dict[str, str]:
    """Markdown cells by id, whitespace runs read as one space."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return {c["id"]: re.sub(r"\s+", " ", "".join(c["source"])) for c in cells if c["cell_type"] == "markdown"}


def _text(path: Path) -> str:
    return " ".join(_cells(path).values())


# ---------------------------------------------------------------------------------------------------------- 04b


def test_04b_key_point_gives_the_trees_step_count_as_section_4_does():
    # "RHD cuts the steps to O(log n), and NCCL's tree to O(log k) across k nodes (inside a node it is a chain)"
    text = _text(NB04B)
    assert ("RHD cuts the steps to $O(\\log n)$, and NCCL's tree to $O(\\log k)$ across $k$ nodes (inside a node it "
            "is a chain)") in _cells(NB04B)["c018"]
    assert "trees and RHD cut the steps to $O(\\log n)$" not in text

    def tree(g: int, k: int) -> float:
        return latency_s("allreduce", "tree", "LL", configure("dgx-h100", g, k))

    # inside a node the tree's latency grows by the same step with every GPU: linear, a chain
    steps = [tree(g + 1, 1) - tree(g, 1) for g in range(2, 8)]
    assert all(s == pytest.approx(steps[0]) for s in steps) and steps[0] > 0
    # across nodes it grows with floor(log2 k): the same at 4 and 7 nodes, one step more at 8
    assert tree(8, 4) == pytest.approx(tree(8, 7)) and tree(8, 8) > tree(8, 7)
    # one node of 8 H100, 8 bytes: the tree is no faster than the ring (its steps are not O(log n) there)
    t, r = (predict("allreduce", "dgx-h100", 8, 8, algo=a, proto="LL").time_s for a in ("tree", "ring"))
    assert t >= r


def test_04b_device_launch_is_the_models_gpu_time_not_nccls_estimate():
    # "`device` is the GPUs' time alone, with no host time: the quantity NCCL's tuner estimates"
    text = _text(NB04B)
    assert "`device` is the GPUs' time alone, with no host time: the quantity NCCL's tuner estimates." in text
    assert "what NCCL's tuner predicts" not in text
    from nvcourse.chapters import ch04b_predicting

    src = Path(ch04b_predicting.__file__).read_text(encoding="utf-8")
    assert "device: GPU time only (what NCCL's tuner estimates)" in src and "(NCCL's tuner); " not in src
    # the two differ: on 2 x 8 H100 at 4 KiB the model's device time is above NCCL's own estimate
    p = predict("allreduce", "dgx-h100", 8, 4096, nodes=2, launch="device")
    assert p.time_s > p.candidates_estimate_s[f"{p.algo}/{p.proto}"] * 1.1


def test_04b_protocol_table_carries_every_ring_base_latency():
    for proto, name in zip(tuning.PROTOCOLS, ("**LL** (low latency)", "**LL128**", "**Simple**"), strict=True):
        alphas = " / ".join(
            f"{x:.1f}" if x < 10 else f"{x:g}"
            for x in (tuning.hw_latency_us(k, "ring", proto) for k in ("nvlink", "pci", "net")))
        # the full constants sit in reference section 12; section 2b's short table shows the NVLink α
        short, folded = _cells(NB04B)["e2115298"], _cells(NB04B)["b4c06a12"]
        pattern = r"\| " + re.escape(name) + r" \|[^|]*\| ([^|]*) \| ([^|]*) \|"
        row = re.search(pattern, folded)
        assert row, proto
        assert row.group(1) == f"{alphas} µs" and row.group(2) == f"{tuning.base_latency_us('ring', proto):g} µs"
        nvlink = alphas.split(" / ")[0]
        assert re.search(r"\| " + re.escape(name) + r" \|[^|]*\|[^|]*\| " + re.escape(nvlink) + r" µs \|", short)
    # "on a ring, 6.6 µs with LL and 8.4 µs with Simple", said in section 2b itself
    ll, simple = (f"{tuning.base_latency_us('ring', p):g}" for p in ("LL", "Simple"))
    assert f"on a ring, {ll} µs with LL and {simple} µs with Simple." in short
    # section 2's one figure is the catalog's NVLink α, the Simple protocol's
    assert (f"the one it runs for large messages: {catalog.get_link('nvlink4').alpha_us:g} µs per NVLink step"
            in _cells(NB04B)["c004"])


def test_04b_nvlstree_cap_sets_the_two_node_algbw():
    # "On two H100 nodes the NVLSTree cap, not the NICs, sets the model's algbw: 235 GB/s at 1 GiB (fill included),
    # 245 GB/s at 16 GiB" (the sizes named: test_prose_facts_walk_u_w3)
    gib, p = (predict("allreduce", "dgx-h100", 8, s * 2**30, nodes=2, algo="nvlstree") for s in (1, 16))
    # §8's constants, in reference §12
    assert (f"On two H100 nodes the NVLSTree cap, not the NICs, sets the model's algbw: {gib.algbw_GBps:.0f} GB/s at "
            f"1 GiB (fill included), {p.algbw_GBps:.0f} GB/s at 16 GiB") in " ".join(_cells(NB04B)["b4c06a12"].split())
    nics = configure("dgx-h100", 8, nodes=2).nic_Bps_per_gpu * 8 / 1e9
    assert p.algbw_GBps < nics  # the NICs would allow more: the cap sets it


@pytest.mark.parametrize("state", [
    ("allreduce", "auto", "gb200-nvl72", 72, 1),  # NVLS at both sizes
    ("sendrecv", "auto", "dgx-h100", 8, 1),       # direct/Simple at both
    ("alltoall", "auto", "dgx-a100", 8, 2),
    ("allreduce", "ring", "dgx-h100", 8, 1),      # chosen by name: LL at 8 B, Simple at 1 GiB
    ("allreduce", "auto", "dgx-h100", 8, 1),
])
def test_04b_readout_says_the_pick_changes_only_where_it_does(state):
    from nvcourse.chapters.ch04b_predicting import readout_html

    op, algo, system, gpus, nodes = state
    small, big = (predict(op, system, gpus, s, nodes=nodes, algo=algo) for s in (8, 2**30))
    head = readout_html(op, system, gpus, nodes, algo, "device", None).split("<details>")[0]
    same = (small.algo, small.proto) == (big.algo, big.proto)
    assert ("The pick is the same at both sizes" in head) == same
    assert ("Look at how the pick changes from 8 B to 1 GiB" in head) == (not same)
    if state[2] == "gb200-nvl72":
        assert same


@pytest.mark.parametrize("system", ["dgx-h100", "hgx-h200"])
def test_04b_hopper_symmetric_all_reduce_is_lower_beyond_128_kib(system):
    # "For an all-reduce it stays lower beyond: on 3 or more H100 at every size, on 2 up to 16 MiB."
    from nvcourse.chapters.ch04b_predicting import SIZES

    assert ("For an all-reduce it stays lower beyond: on 3 or more H100 at every size, on 2 up to 16 MiB."
            in _cells(NB04B)["b4c06a12"])

    def ratio(g: int, s: float) -> float:
        return (predict("allreduce", system, g, s, registered=True).time_s
                / predict("allreduce", system, g, s).time_s)

    for g in range(3, 9):
        assert all(ratio(g, s) < 1 for s in SIZES), g
    assert all(ratio(2, s) < 1 for s in SIZES if s <= 16 * 2**20)
    assert ratio(2, 32 * 2**20) > 1
    # the readout's example on 8 H100 at 1 GiB
    assert ratio(8, 2**30) < 0.7


def test_04b_words_are_said_before_they_are_used():
    cells = _cells(NB04B)
    # EFA: section 11's table has no AWS column since its two held-out EFA runs count as seen, so it says no "EFA";
    # the key points name it only in words
    sec11 = cells["800dda6a"]
    assert "EFA" not in sec11
    assert "EFA" not in cells["c018"] or "AWS's own network (EFA)" in cells["c018"]
    # an NVL72 tray, two chapters before chapter 05 introduces it
    assert "not the 4-GPU compute tray (one board of 4 GPUs)" in cells["c008"]


def test_04b_worked_example_at_4_gib_is_the_two_rings():
    ll, ring = (predict("allreduce", "dgx-h100", 8, 4 * 2**30, algo="ring", proto=p) for p in ("LL", "Simple"))
    assert ring.time_s < ll.time_s
    assert (f"| 4 GiB | {ll.time_s * 1e3:.0f} ms (NCCL also caps LL at {tuning.ll_max_bw_GBps('hopper', 1):.0f} GB/s "
            f"of busbw here) | {ring.time_s * 1e3:.0f} ms | LL wins") in _cells(NB04B)["e2115298"]
    assert "LL wins the 8-byte call" in _cells(NB04B)["e2115298"]
    assert predict("allreduce", "dgx-h100", 8, 8).proto == "LL"


def test_04b_nvls_rows_two_to_four_gpus_never_pick_nvls():
    from nvcourse.chapters.ch04b_predicting import SIZES
    from nvcourse.costmodel import predict_sweep

    for g in (2, 3, 4):
        assert "nvls" not in set(predict_sweep("allreduce", "dgx-h100", g, SIZES).algo), g
    assert "| 2 to 4 | at no size: the ring wins |" in _cells(NB04B)["b4c06a05"]


def test_04b_channels_example_moved_to_the_reference_section():
    cells = _cells(NB04B)
    assert "8 H800s, the export H100 with 8 NVLinks instead of 18, run 16 channels" in cells["b4c06a12"]
    assert ("over all of a GPU's NVLinks. 8 H800s, the export H100 with 8 NVLinks instead of 18, run 16 channels."
            in cells["b4c06a12"])
    assert "its **channels**, each on its own slice of the buffer: section 12." in cells["e2115298"]


# ---------------------------------------------------------------------------------------------------------- 08b


def test_08b_share_0_9_bound_is_the_largest_slowdown_the_dashboard_shows():
    # "(×1.05 at most)": the largest over every size (1 MiB .. 4 GiB) and duty (0 .. 1) rounds to 1.05
    worst = max(isolation.noisy_neighbour(2**e, qos="ets", victim_share=0.9, duty=d / 10).slowdown
                for e in range(20, 33) for d in range(0, 11))
    assert round(worst, 2) == 1.05
    assert "(×1.05 at most)" in _cells(NB08B)["c015a"] and "1.06" not in _cells(NB08B)["c015a"]


def test_08b_dcqcn_pfc_and_evpn_are_linked_or_said_where_first_used():
    cells = _cells(NB08B)
    ids = list(cells)
    first = next(i for i in ids if "DCQCN" in cells[i])
    assert first == "c012" and "[DCQCN](../docs/glossary.md#pfc-ecn)" in cells[first]
    first_pfc = next(i for i in ids if re.search(r"\bPFC\b", cells[i]))
    assert "[PFC](../docs/glossary.md#pfc-ecn)" in cells[first_pfc]
    assert "VXLAN/EVPN" not in _text(NB08B)
    assert "announced to the switches by EVPN, a routing protocol" in cells["c010"]


def test_08b_single_tray_ring_from_4_mib():
    # "from 4 MiB only a single tray": 64 MiB still runs a ring on 1 or 2 trays, 128 MiB only on 1
    def ring_trays(e: int) -> set[int]:
        return {t for t in range(1, 18) if isolation.nvl72_split([t, 18 - t], 2**e)[0].algo == "ring"}

    assert ring_trays(21) == {1, 2} and all(ring_trays(e) == {1} for e in range(22, 33))
    assert "from 4 MiB only a single tray." in _cells(NB08B)["c034"]
