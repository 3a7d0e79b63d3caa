"""Chapters 06b, 06c and 06d after a fresh learner's walkthrough (S2): each sentence it found to contradict the
chapter's dashboards, its readers or another chapter now says when it holds, or says what the reader reports.

Markdown cannot compute: the sentence must appear in the chapter as written (line breaks read as spaces).
"""

import json

from test_prose_facts_core import ROOT, prose

from nvcourse.chapters import ch06c_multinode_lab as ch06c
from nvcourse.cluster import record
from nvcourse.fabric import ecmp_qp
from nvcourse.nccl.ncclog import read_text

NCCL = "06b_nccl_in_practice.ipynb"
LAB = "06c_multinode_lab.ipynb"
RUN = "06d_bringup_and_fault_runbook.ipynb"


# ------------------------------------------------------------------------------------------------------------ 06b
def test_06b_key_point_puts_nvls_on_one_nvswitch_node_only():
    text = prose(NCCL)
    assert "on one NVSwitch node, busbw above the ring bound is NVLS at work" in text
    assert "on NVSwitch systems busbw above the ring bound is NVLS" not in text


def test_06b_defines_redop_in_section_2_before_the_readout_uses_it():
    text = prose(NCCL)
    define = text.index("**`redop`** is the reduction operation")
    assert define < text.index("redop and in-place columns")


# ------------------------------------------------------------------------------------------------------------ 06c
def test_06c_key_point_says_when_more_qps_help_slowly_and_when_a_few_suffice():
    text = prose(LAB)
    assert ("When connections are at least as many as uplinks, more QPs per connection shrink ECMP hot spots only "
            "slowly") in text
    assert "with far fewer connections than uplinks, 2–4 QPs remove most of it" in text
    slow = [ecmp_qp.expected_slowdown(c, u, q) for c, u in ((32, 32), (64, 16)) for q in (1, 4)]
    assert slow[1] > 2 and slow[3] > 1.4        # 4 QPs leave most of the hot spot when connections >= uplinks
    for c, u in ((8, 64), (4, 16)):             # far fewer connections: 2-4 QPs remove most of it
        one, four = (ecmp_qp.expected_slowdown(c, u, q) for q in (1, 4))
        assert one > 1.3 and four - 1 < (one - 1) * 0.1


def test_06c_flat_ring_error_range_and_where_it_is_closest():
    text = prose(LAB)
    assert ("In the recorded run the flat ring stays within 3–11 % of the model at every size, closest from 64 MiB "
            "up") in text
    rows = record.compare_hier(record.load(), "hier")
    shown = [int(ch06c._pct(r["flat_err"]).rstrip("%")) for r in rows]
    assert (min(shown), max(shown)) == (3, 11)
    big = [s for r, s in zip(rows, shown, strict=True) if r["bytes"] >= 64 * 2**20]
    small = [s for r, s in zip(rows, shown, strict=True) if r["bytes"] < 64 * 2**20]
    assert max(big) < min(small)


def test_06c_hierarchical_key_point_says_reliably_as_the_prose_does():
    text = prose(LAB)
    assert "pays off reliably only when the in-node path is much faster than the NIC" in text
    v = ch06c.hier_verdict(record.load())
    assert 0 < len(v["wins"]) < len(v["sizes"])    # the recorded run wins at some sizes without a much faster path


def test_06c_latency_question_names_a_shape_the_dashboard_offers():
    text = prose(LAB)
    assert "At 400 Gb/s and α = 5 µs, with 16 nodes × 8 ranks, where does latency start to matter?" in text
    controls = ch06c.lab_dashboard().controls
    assert 16 in controls["nodes"].options and 8 in controls["ranks"].options
    assert 400.0 in controls["nic_Gbps"].options
    assert "fat-trees and hashed flows onto them (as Ethernet's ECMP does; InfiniBand routes them, §2)" in text


# ------------------------------------------------------------------------------------------------------------ 06d
def test_06d_read_policy_row_says_what_the_reader_shows():
    text = prose(RUN)
    assert ("`nvcourse ncclog` flags such sends as a problem: on Ampere or newer GPUs they mean "
            "`NCCL_NET_GDR_READ=0` is set.") in " ".join(text.split())
    line = "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [{d}] via NET/IB/0{g}\n"
    log = read_text(line.format(d="receive", g="/GDRDMA") * 2 + line.format(d="send", g="") * 2)
    assert log.gdr is False
    assert any("send connections without /GDRDMA" in p["problem"] for p in log.problems)


def test_06d_counter_rule_says_the_reader_reports_any_rise():
    text = prose(RUN)
    assert "It reports any rise, however small, and does not know the interval: judge yourself whether it is fast." \
        in text
    once = "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/local_ack_timeout_err:91316\n"
    rise = read_text(once + once.replace("91316", "91320"))
    assert [s["signature"] for s in rise.signatures] == ["roce_lossy"]


def test_06d_fabric_card_names_the_qos_page_without_a_repository_path():
    from nvcourse import _data

    fixes = [rec["fix"] for rec in _data.load("runbook")["signatures"].values() if "RoCE QoS end to end" in rec["fix"]]
    assert fixes and not any("docs/" in f for f in fixes)
    assert "](../docs/runbook-roce-qos.md)" in prose(RUN)     # the chapter links the page where it names it


def test_log_reader_names_every_unchanged_counter():
    base = "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/"
    once = base + "out_of_sequence:12\n" + base + "packet_seq_err:7\n"
    notes = read_text(once + once).notes
    (still,) = [n for n in notes if "unchanged between two readings" in n]
    assert still.startswith("2 counters") and "out_of_sequence" in still and "packet_seq_err" in still


def test_06d_gdr_table_is_read_by_its_first_column():
    # §5: "the NIC line decides only when no channel line ends in /GDRDMA": in the table, the rows whose channel
    # lines carry /GDRDMA accept any NIC line, and the rows without it differ only by the NIC line
    text = prose(RUN)
    assert "Read the table by its first column: the NIC line decides only when no channel line ends in `/GDRDMA`." \
        in text
    nb = json.loads((ROOT / "notebooks" / RUN).read_text(encoding="utf-8"))
    raw = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in raw.split("\n")
            if line.startswith("| ") and "GDRDMA" in line.split("|")[1]]
    with_gdr = [r for r in rows if not r[0].startswith("none")]
    without = [r for r in rows if r[0].startswith("none")]
    assert len(with_gdr) == 2 and all(r[1] == "Enabled, or none" for r in with_gdr)
    assert len(without) == 3 and len({r[1] for r in without}) == 3 and len({r[2] for r in without}) == 3
