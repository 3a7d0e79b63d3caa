"""Chapters 06 and 06b after a fresh learner's walkthrough (Q6): each sentence it found to contradict the dashboard,
a readout or the other chapter now says when it holds, and each word it met before its definition is defined or
linked where it is first used.

Markdown cannot compute: the sentence must appear in the chapter as written (line breaks read as spaces).
"""

import pytest
from test_prose_facts_core import prose

from nvcourse.fabric import allreduce_on_fabric, fat_tree, node_order, ring_flows, simulate

FAB = "06_multinode_fabrics.ipynb"
NCCL = "06b_nccl_in_practice.ipynb"


def _slowest(nodes: int, placement: str, routing: str) -> float:
    fab = fat_tree(nodes)
    return simulate(fab, *ring_flows(fab, node_order(fab, placement, seed=0)), routing=routing, seed=0).min_rate_GBps


# ------------------------------------------------------------------------------------------------------------ 06
def test_06_static_routes_collide_less_on_64_to_256_nodes_never_on_a_packed_ring_and_no_better_at_512():
    text = prose(FAB)
    assert ("**InfiniBand's static routes are not random.** On a packed ring they never collide. On scattered jobs "
            "of 64 to 256 nodes (below: 128) they collide less than hashing. At 512 nodes, with a third tier of core "
            "switches, they do no better.") in text
    for nodes in (64, 128, 256, 512):
        assert _slowest(nodes, "packed", "dmodk") == pytest.approx(50.0)
    for nodes in (64, 128, 256):
        assert _slowest(nodes, "random", "dmodk") > _slowest(nodes, "random", "ecmp") * 1.2
    assert _slowest(512, "random", "dmodk") == pytest.approx(_slowest(512, "random", "ecmp"))


def test_06_section_5_table_says_adaptive_routing_and_static_routes_are_slower_when_scattered():
    text = prose(FAB)
    assert ("The hierarchical all-reduce of 1 GiB on 128 nodes, packed and randomly placed, with adaptive routing (the "
            "dashboard starts from static routes, which make random placement slower):") in text
    for over in (1, 2, 4):
        f = fat_tree(128, oversubscription=over)
        t = {r: allreduce_on_fabric(f, 2**30, algorithm="hierarchical", routing=r, placement="random").time_s
             for r in ("ideal", "dmodk")}
        assert t["dmodk"] > t["ideal"] * 1.5


def test_06_section_4_verdicts_say_their_settings_and_the_ring_on_2_nodes_is_the_models_not_ncclss_tuner():
    text = prose(FAB)
    assert ("The verdicts below hold for these figures (NDR, static routes, packed); the dashboard of §6 shows other "
            "settings.") in text
    assert "NCCL's own tuner may still pick the tree on 2 nodes (06b)." in text
    # the dashboard's other settings do differ: on 2 HDR nodes at 1 GiB the tree beats the ring
    hdr = fat_tree(2, port_GBps_dir=25.0)
    t = {a: allreduce_on_fabric(hdr, 2**30, algorithm=a, nic_link="ib-hdr", routing="dmodk").time_s
         for a in ("ring", "tree")}
    assert t["tree"] < t["ring"]


def test_06_words_the_learner_met_undefined_are_explained_or_linked():
    text = prose(FAB)
    assert "(credit-based: a port sends only when the next hop has announced buffer space for it)" in text
    assert "supports in-network reduction ([SHARP](../docs/glossary.md#sharp), §4)" in text
    assert "even with NCCL's LL/LL128 [protocols](../docs/glossary.md#protocol):" in text
    assert "of NVIDIA's reference architectures (RA, the table's first column)" in text
    assert "is [NVLS](../docs/glossary.md#nvls) inside one 8×H100 node" in text


def test_06_section_3_keeps_one_idea_per_paragraph_and_the_queue_pairs_move_to_the_reference_section():
    text = prose(FAB)
    s3 = text[text.index("## 3. Routing"):text.index("## 4. ")]
    s7 = text[text.index("## 7. Reference"):]
    assert "Its fixes (more flows per transfer, packet spraying) are in §7." in s3
    assert "NCCL_IB_QPS_PER_CONNECTION" not in s3 and "NCCL_IB_QPS_PER_CONNECTION" in s7
    assert "have accepted adaptive routing by default since NCCL 2.16" in s7


# ----------------------------------------------------------------------------------------------------------- 06b
def _plain(html: str) -> str:
    import html as _h
    import re

    return " ".join(_h.unescape(re.sub(r"<[^>]+>", " ", html)).split())


def test_06b_the_nics_the_model_takes_are_the_dgx_a100s_hdr_and_the_runs_roce_carries_188():
    from nvcourse import catalog

    text = prose(NCCL)
    sysm = catalog.get_system("dgx-a100")
    hdr, roce = catalog.get_link(sysm.nic_link), catalog.get_link("roce-200g")
    assert hdr.kind == "infiniband" and hdr.line_Gbps_dir == roce.line_Gbps_dir == 200
    n, a, b = sysm.nics_per_host, hdr.achievable_GBps_dir, roce.achievable_GBps_dir
    assert (f"The model takes the catalog's DGX A100, whose NICs are InfiniBand HDR: together {n} × {a:g} = "
            f"{n * a:g} GB/s achievable, the figure the verdict below prints. This run's 200 GbE RoCE NICs carry a "
            f"little less, {n} × {b:g} = {n * b:g} GB/s.") in text


def test_06b_says_nccl_often_picks_a_tree_on_2_nodes_as_chapter_06s_model_may_prefer_the_ring():
    text = prose(NCCL)
    assert "On 2 nodes NCCL often picks a tree (or its NVSwitch variant, §8)" in text
    assert "On 2 nodes NCCL often picks a tree, or on NVSwitch nodes NVLSTree" in text
    assert "Not broken: on 2 nodes NCCL often runs a tree" in text
    assert "NCCL uses a tree" not in text and "NCCL runs a tree" not in text


def test_06b_two_rank_samples_credit_the_columns_too_and_check_yourself_5_says_so():
    from nvcourse.chapters import ch06b_nccl_in_practice as ch
    from nvcourse.nccl import diagnose, read_nccl_tests

    ops = {}
    for name in ("2 nodes x 1 A40 (no op line: which test ran?)", "2 nodes x 1 T4 over AWS EFA (with NCCL INFO lines)"):
        run = read_nccl_tests(ch.sample_text(name))
        assert run.nranks == 2 and run.op_source == "busbw/algbw ratio"
        ops[run.op] = _plain(ch.report_html(run, diagnose(run)))
    assert set(ops) == {"sendrecv", "allreduce"}  # the same ratio (1), two answers: the columns decide
    for op, html in ops.items():
        assert f"op {op} (from the busbw/algbw ratio and the redop and in-place columns)" in html
    assert "the reader tells them apart by the redop and in-place columns" in prose(NCCL)


def test_06b_a_box_whose_gpus_and_nodes_disagree_with_the_paste_says_so():
    from nvcourse.chapters import ch06b_nccl_in_practice as ch

    box = ch.nccl_tests_box()
    box.controls["sample"].value = "8x H100, one node (NVSwitch)"
    assert "but the paste has" not in _plain(box.readout.value)
    box.controls["gpus"].value, box.controls["nodes"].value = 8, 2
    assert "GPUs/node x nodes = 16, but the paste has 8 ranks: the model below describes 16 GPUs, not the run" in (
        _plain(box.readout.value))
    box.controls["nodes"].value = 1
    assert "but the paste has" not in _plain(box.readout.value)
    # walkthrough X: where the model cannot describe the setting (72 GPUs on a DGX H100) no model is drawn, so no
    # note may speak of "the model below"
    box.controls["gpus"].value, box.controls["nodes"].value = 72, 2
    text = _plain(box.readout.value)
    assert "no model overlay" in text and "the model below" not in text


def test_06b_the_largest_size_is_8_gib():
    from nvcourse.chapters import ch06b_nccl_in_practice as ch

    run = ch.read_sample("2 nodes x 8 A100 (RoCE)")
    assert run.rows[0]["bytes"] == 8 and run.rows[-1]["bytes"] == 8 * 2**30
    text = prose(NCCL)
    assert "all-reduce from 8 B to 8 GiB" in text and "A sweep from 8 B to 8 GiB reports" in text
    assert "8 B to 8 GB" not in text


def test_06b_words_the_learner_met_undefined_are_defined_or_linked():
    text = prose(NCCL)
    assert ("the **ring level** (or ring bound) is the busbw the model's ring all-reduce reaches on this system (on "
            "one node: over NVLink); the **NVLS level** the busbw with in-switch reduction "
            "([NVLS](../docs/glossary.md#nvls)); the **level of the node's NICs** what all its NICs carry "
            "together.") in text
    assert "[PAT](../docs/glossary.md#pat)" in text
    assert "root complex (the root of the CPU's PCIe tree, joining its host bridges)" in text
    assert "NCCL's [symmetric kernels](../docs/glossary.md#symmetric-kernels)" in text


def test_06b_the_variables_what_and_when_go_through_the_data_catalogue(monkeypatch):
    """The French edition shows each variable's what/when translated: the table reads them through
    nvcourse._data.shown (which translates the displayed fields), not raw from the data file."""
    from nvcourse import _data
    from nvcourse.chapters import ch06b_nccl_in_practice as ch

    seen = []

    def marked(name, table, record):
        seen.append((name, table))
        return {k: f"@@{v}" if k in ("what", "when") else v for k, v in record.items()}

    monkeypatch.setattr(_data, "shown", marked)
    html = ch.env_table_html()
    n = len(_data.load("nccl_env")["vars"])
    assert seen == [("nccl_env", "vars")] * n and html.count("@@") == 2 * n


def test_06b_the_one_node_h100_readout_prints_the_ring_bound_it_is_above():
    """§3 says busbw above the ring bound means NVLS: the readout now prints that bound, and the plateau is above it."""
    import re

    from nvcourse.chapters import ch06b_nccl_in_practice as ch
    from nvcourse.nccl import diagnose, read_nccl_tests

    run = read_nccl_tests(ch.sample_text("8x H100, one node (NVSwitch)"))
    html = _plain(ch.report_html(run, diagnose(run)))
    m = re.search(r"plateau (\d+) GB/s is at the NVLS level \((\d+) GB/s\).*\(ring level (\d+) GB/s\)", html)
    assert m and int(m.group(1)) > int(m.group(3)) and html.count("ring level") == 1
    two = read_nccl_tests(ch.sample_text("2 nodes x 8 H100 (InfiniBand)"))  # already names it: not twice
    assert _plain(ch.report_html(two, diagnose(two))).count("ring level") == 1
