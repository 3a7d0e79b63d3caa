"""Guards for the sentences and readouts fixed after fresh-learner walkthrough U (chapters 06, 06b, 08 and 10)."""

import json
import re

import pytest
from test_prose_facts_core import ROOT, prose

from nvcourse import catalog, costmodel
from nvcourse.fabric import allreduce_on_fabric, fat_tree

FAB = "06_multinode_fabrics.ipynb"
NCCL = "06b_nccl_in_practice.ipynb"
REL = "08_reliability_and_operations.ipynb"
NUM = "10_other_interconnects_and_numerics.ipynb"


def cell(notebook: str, cid: str) -> str:
    nb = json.loads((ROOT / "notebooks" / notebook).read_text(encoding="utf-8"))
    return re.sub(r"\s+", " ", next("".join(c["source"]) for c in nb["cells"] if c.get("id") == cid))


# ------------------------------------------------------------------------------------------------------------ 06
@pytest.mark.parametrize("nodes", [2, 16, 128, 512])
@pytest.mark.parametrize("nbytes", [2**16, 64 * 2**20, 2**30])
def test_06_sharp_formula_is_the_models_nvls_in_node_phase(nodes, nbytes):
    # t_SHARP = α_NVLS + α_SHARP + max(t_NVLS − α_NVLS, n / (g β_net)): the in-node phase is NVLS, not a ring
    from nvcourse.fabric import data

    e = allreduce_on_fabric(fat_tree(nodes), nbytes, algorithm="sharp", routing="dmodk")
    g = 8
    nv = costmodel.pair_cost("allreduce", "nvls", "Simple", costmodel.configure("dgx-h100", g, fabric="ib-ndr"))
    net = catalog.get_link("ib-ndr").achievable_GBps_dir * 1e9
    alpha = data.collnet_alpha_s()
    want = nv.latency_s + alpha + max(float(nv.time(nbytes)) - nv.latency_s, nbytes / g / net)
    assert e.time_s == pytest.approx(want, rel=1e-9)
    ring_style = costmodel.cost("reducescatter", "ring", costmodel.configure("dgx-h100", g, fabric="ib-ndr"))
    if nbytes == 2**30:  # a ring-style in-node phase would be visibly slower: the formula must not show one
        assert 2 * ring_style.time(nbytes) > 1.2 * e.time_s
    text = cell(FAB, "r4c06a02")
    assert (r"t_\text{SHARP} = \alpha_\text{NVLS} + \alpha_\text{SHARP} + \max\!\Big(t_\text{NVLS} - "
            r"\alpha_\text{NVLS},\ \tfrac{n}{g\,\beta_\text{net}}\Big)") in text
    assert r"\max\!\Big(2\tfrac{g-1}{g}\tfrac{n}{\beta_\text{NVL}}" not in text
    assert "SHARP's in-node phase on these H100 nodes is not an NVLink ring: it is NVLink SHARP" in text
    assert ("the pace. That phase uses another SHARP: NVLink SHARP, the NVSwitch's own reduction (§7)."
            in cell(FAB, "c015"))
    assert catalog.get_system("dgx-h100").in_switch_reduction


def test_06_static_routes_paragraph_is_split_and_keeps_its_claims():
    text = prose(FAB)
    for piece in ("**InfiniBand's static routes are not random.** On a packed ring they never collide.",
                  "On scattered jobs of 64 to 256 nodes (below: 128) they collide less than hashing. At 512 nodes, "
                  "with a third tier of core switches, they do no better.",
                  "core switches, they do no better. Adaptive routing or packet spraying (Spectrum-X) spreads traffic "
                  "over all paths."):
        assert piece in text


def test_06_double_binary_tree_links_the_glossary_entry():
    assert "[**double binary tree**](../docs/glossary.md#double-binary-tree)" in cell(FAB, "c012")
    glossary = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    assert '<a id="double-binary-tree"></a>**double binary tree**' in glossary


def _time(nodes, nic, over, routing, placement, algorithm):
    link = catalog.get_link(nic)
    fab = fat_tree(nodes, rails=8, port_GBps_dir=link.line_GBps_dir, oversubscription=over)
    return allreduce_on_fabric(fab, 2**30, algorithm=algorithm, nic_link=nic, routing=routing,
                               placement=placement).time_s


@pytest.mark.parametrize("algorithm", ["ring", "tree", "hierarchical"])
def test_06_predict_first_answers_follow_the_model(algorithm):
    text = cell(FAB, "c018a")
    # 1. on 128 random nodes, RoCE with ECMP costs more than NDR with static routes, whatever crosses the network
    assert "**1.** RoCE with ECMP costs more, for every algorithm" in text
    assert (_time(128, "roce-400g", 1.0, "ecmp", "random", algorithm)
            > _time(128, "ib-ndr", 1.0, "dmodk", "random", algorithm))
    # 2. at 4:1 on 128 nodes, random placement loses time and packed none (every state: walk_v_b)
    assert "From 64 nodes, random placement loses for ring, tree and hierarchical, and packed nothing" in text
    for nic, routing in (("ib-ndr", "dmodk"), ("ib-ndr", "ideal"), ("roce-400g", "ecmp")):
        loss = {p: _time(128, nic, 4.0, routing, p, algorithm) / _time(128, nic, 1.0, routing, p, algorithm)
                for p in ("packed", "random")}
        assert loss["packed"] <= 1.01 < loss["random"], (nic, routing, loss)


def _readout(algorithm, nodes, nbytes, nic="ib-ndr", routing="dmodk", placement="random"):
    from nvcourse.chapters.ch06_fabrics import allreduce_view

    _fig, html = allreduce_view(nodes, nic, 1.0, routing, placement, algorithm, nbytes)
    return html


@pytest.mark.parametrize(("algorithm", "nodes", "nbytes", "placement"), [
    ("sharp", 512, 2**30, "random"), ("tree", 16, 2**30, "packed"), ("ring", 4, 2**16, "packed")])
def test_06_efficiency_over_100_is_explained_where_it_shows(algorithm, nodes, nbytes, placement):
    html = _readout(algorithm, nodes, nbytes, placement=placement)
    head = html.split("<details>")[0]
    pct = re.search(r"scaling efficiency vs 2 nodes</td>\s*<td[^>]*>(\d+)%", head)
    if pct and int(pct.group(1)) > 100:
        assert ("(over 100 %: bus bandwidth counts 2(p−1)/p of the buffer, a factor that grows with the GPU "
                "count p)") in head
    else:
        assert "over 100 %" not in head


def test_06_efficiency_over_100_happens_where_the_walkthrough_saw_it():
    html = _readout("sharp", 512, 2**30)
    assert "(over 100 %: bus bandwidth counts 2(p−1)/p" in html.split("<details>")[0]


@pytest.mark.parametrize("algorithm", ["ring", "tree"])
def test_06_nvlink_alone_says_what_it_is(algorithm):
    sentence = re.sub(r"<[^>]+>", "", _readout(algorithm, 512, 2**16).split("<details>")[0].split("</table>")[1])
    means = ("(the same ring with NVLink's bandwidth and latency on every step)" if algorithm == "ring" else
             "(the chain through one node's GPUs)")
    assert re.search(r"NVLink alone would take [\d.]+ [mµ]?s " + re.escape(means), sentence), sentence


def test_06_readout_details_do_not_repeat_the_table():
    details = _readout("tree", 128, 2**30).split("<details>")[1]
    assert "scaling efficiency vs 2 nodes" not in details and "Time inside nodes" in details


# ----------------------------------------------------------------------------------------------------------- 06b
def test_06b_names_the_h20_board_the_table_reads():
    from nvcourse.chapters import ch06b_nccl_in_practice as ch

    assert ("Below, a real HGX board of 8 H20 GPUs (a Hopper GPU) with 8 [rail](../docs/glossary.md#rail) NICs"
            in cell(NCCL, "c020"))
    assert "8× H20 HGX board" in ch.affinity_table_html(ch.hopper_topology()[0])


def test_06b_gdrdma_list_is_short_with_one_pointer_to_section_8():
    text = cell(NCCL, "c022")
    part = text[text.index("When `/GDRDMA` is missing"):]
    assert part.startswith("When `/GDRDMA` is missing, check in this order (§8 has the details of the last two: "
                           "reading the switches' setting, the default level by NCCL version):")
    assert part.count("§8") == 1 and "(§8:" not in part


def test_06b_section_8_opens_with_a_map():
    text = cell(NCCL, "r4c06b01")
    assert "**What each item is for:** hiding GPUs and `-R 2` explain runs of §1" in text
    assert text.index("**What each item is for:**") < text.index("**Hiding GPUs from a task (§1).**")


def test_06b_paste_boxes_show_system_and_source_as_a_caption_not_raw_headers():
    from nvcourse.chapters import ch06b_nccl_in_practice as ch

    for name in (*ch.SAMPLES, *ch.LOGS):
        assert "%%" not in ch.box_text(name)
    box = ch.ncclog_box()
    static = box.static_html()
    assert "%% system" not in static and "%% source" not in static
    assert "system: a container, 8x H800" in static and "036260b61d3a" not in static
    assert 'source: <a href="https://github.com/NVIDIA/nccl/issues/892">' in static
    tests_box = ch.nccl_tests_box()
    assert "%% system" not in tests_box.static_html() and "system: 1 node, 8x H100" in tests_box.static_html()


# ------------------------------------------------------------------------------------------------------------ 08
def test_08_xid_lists_are_told_apart_in_one_clause():
    from nvcourse import _data

    text = cell(REL, "c016")
    assert ("The XID rule's action names the commonest XIDs that take a node out; the second table lists, for each "
            "fault class, its counters and XIDs") in text
    action = next(a["action"] for a in _data.load("reliability")["alerts"] if a["metric"] == "XID errors")
    signals = _data.load("observability")["signals"]
    lost = next(s for s in signals if s["fault"] == "GPU lost")
    assert "drain" in action and "drain the node" in lost["reading"]
    named = set(re.findall(r"\d+", action.split(":")[0]))
    listed = set(re.findall(r"\d+", " ".join(s["counter"] for s in signals if "Xid" in s["counter"])))
    assert named <= listed and listed - named  # the table's list is the longer one


def test_08_link_health_paragraph_is_split():
    text = cell(REL, "c016")
    assert "Page on two things: - symbol errors (`SymbolErrorCounter`)" in text
    assert "judged as a rate, not one increment; - link flaps." in text


def test_08_q4_answers_with_what_the_chapter_teaches():
    text = cell(REL, "c024")
    answer = text[text.index("4. A worker hangs"):]
    for untaught in ("NCCL_IB_TIMEOUT", "NCCL_IB_RETRY_CNT", "TORCH_NCCL_ASYNC_ERROR_HANDLING"):
        assert untaught not in prose(REL)
    assert "A timeout (§6)" in answer and "NCCL's RAS (§6) then tells you which rank stopped answering" in answer


def test_08_fault_message_is_read_in_the_prose():
    from nvcourse.collectives import CollectiveError, Fault, ProcessGroup

    with pytest.raises(CollectiveError) as caught, ProcessGroup(4, timeout_s=1.0) as pg:
        pg.run("allreduce", nbytes="1MiB", algo="ring", iters=3, warmup=0,
               fault=Fault(rank=2, step=2, iteration=1, action="hang"))
    message = str(caught.value)
    assert "did not finish" in message and "steps done per rank" in message
    assert "Read the error: *did not finish* lists the ranks still inside the call" in cell(REL, "c022")


def test_08_alert_actions_are_short_with_the_commands_collapsed():
    from nvcourse.chapters import ch08_reliability as ch

    html = ch.alerts_table_html()
    visible = re.sub(r"<details>.*?</details>", "", html, flags=re.S)
    assert "analyze_perf_json" not in visible and "analyze_perf_json" in html


# ------------------------------------------------------------------------------------------------------------ 10
def test_10_cross_node_symmetric_kernels_say_what_they_mean_for_fp32():
    from nvcourse.costmodel import tuning

    cross = tuning.raw()["symmetric"]["cross_node"]
    assert "allreduce" not in cross["ops"]
    text = cell(NUM, "c008")
    assert ("So across nodes an all-reduce still rounds at every hop, whatever NCCL's version: its inter-node part "
            "runs a ring or a tree, and NCCL's cross-node symmetric kernels (all-gather from "
            f"{cross['allgather_since']}, reduce-scatter from {cross['since']}) include no all-reduce.") in text
    assert "do those two only" not in text


def test_06_first_faster_line_says_when_an_algorithm_never_beats_the_ring():
    # the committed 1 GiB cell printed "hierarchical None nodes": an algorithm that never wins says so, in words
    from nvcourse.chapters import ch06_fabrics as ch06

    nodes = [2, 4, 8, 16, 32, 64, 128, 256, 512]
    line = ch06.first_faster_line(nodes, ch06.scaling_figure(nodes, 2**30, routing="dmodk")[1])
    assert "None" not in line and "hierarchical not up to 512 nodes" in line
    nb = json.loads((ROOT / "notebooks" / "06_multinode_fabrics.ipynb").read_text(encoding="utf-8"))
    printed = "".join("".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", []))
    assert "None nodes" not in printed and "faster than the flat ring: tree from" in printed
