"""Chapters 06c, 07 and 08 after a fresh learner's walkthrough (Q1): a ratio stated once under one definition, each
word defined or linked where it is first used, no course API names in the prose, and the long tables collapsed.

Markdown cannot compute: the sentence must appear in the chapter as written (line breaks read as spaces).
"""

import json
import re
from functools import cache

from test_prose_facts_core import ROOT

from nvcourse import catalog


@cache
def cells(notebook: str) -> dict[str, str]:
    nb = json.loads((ROOT / "notebooks" / notebook).read_text(encoding="utf-8"))
    return {c["id"]: re.sub(r"\s+", " ", "".join(c["source"])) for c in nb["cells"]}


@cache
def shown(notebook: str) -> dict[str, str]:
    """What each code cell printed (text and HTML), as stored."""
    nb = json.loads((ROOT / "notebooks" / notebook).read_text(encoding="utf-8"))
    out = {}
    for c in nb["cells"]:
        parts = []
        for o in c.get("outputs", []):
            parts.append("".join(o.get("text", "")))
            parts.append("".join(o.get("data", {}).get("text/html", "")))
        out[c["id"]] = "\n".join(parts)
    return out


# ---------------------------------------------------------------- 06c

N06C = "06c_multinode_lab.ipynb"


def test_06c_nvlink_against_nic_is_eight_achievable_and_nine_at_line_rate_as_in_01_and_02():
    # 01 and 02 say "eight times" (achievable rates); 06c printed 9x (line rates) alone: it now prints both, and
    # its prose and check-yourself give achievable first, like the other chapters
    h100 = catalog.get_system("dgx-h100")
    nvl = catalog.get_link(h100.scale_up_link).achievable_GBps_dir * h100.links_per_gpu
    nic = catalog.get_link(h100.nic_link).achievable_GBps_dir
    assert round(nvl / nic) == 8 and round(h100.scaleup_GBps_dir / h100.scaleout_GBps_dir_per_gpu) == 9
    line = shown(N06C)["ad98be07"]
    assert (f"NVLink {nvl:.0f} vs NIC {nic:.0f} GB/s achievable, about 8x (9x at line rate: "
            f"{h100.scaleup_GBps_dir:.0f} vs {h100.scaleout_GBps_dir_per_gpu:.0f} GB/s)") in line
    c = cells(N06C)
    assert "about 8× the NIC per GPU at achievable rates, 9× at line rates" in c["2aed01e9"]
    assert "about 8× the NIC per GPU at achievable rates (9× at line rates)" in c["c182191a"]
    assert "about 9× the NIC" not in " ".join(c.values())


def test_06c_defines_verbs_bulk_synchronous_and_tbf_where_first_used():
    c = cells(N06C)
    order = list(c)
    first = next(cid for cid in order if "verbs" in c[cid])
    assert first == "a10209e9" and "[verbs](../docs/glossary.md#verbs) (the RDMA programming interface)" in c[first]
    assert ("(a collective step is bulk-synchronous: every rank waits for the slowest before the next step starts)"
            in c["ab0d5c40"])
    # "tbf" is printed by the recorded run's note (cell 71f41ac1): the prose before it says what it is
    assert "rate shaped with tbf" in shown(N06C)["71f41ac1"]
    assert "**tbf**, token-bucket filter" in c["360ff868"]
    assert order.index("360ff868") < order.index("71f41ac1")
    assert all("tbf" not in c[cid] for cid in order[:order.index("360ff868")])


def test_06c_facts_tables_are_collapsed_and_the_tc_arithmetic_sits_in_a_box():
    out = shown(N06C)
    for cid in ("3c80faaf", "07b7263b"):
        assert out[cid].strip().startswith("<details><summary>Details and sources: "), cid
    box = cells(N06C)["a10209e9"]
    opened, closed = box.index("<details><summary>Setting NCCL_IB_TC and the GID</summary>"), box.index("</details>")
    assert opened < box.index("DSCP × 4 plus the two ECN bits") < box.index("NCCL picks by itself since version 2.21") \
        < closed
    assert box.index("**NCCL's settings**: on RoCE, NCCL must also be told the traffic class") < opened


def test_06c_ends_with_its_exercises_and_the_next_chapter_like_every_chapter():
    last = list(cells(N06C).values())[-1]
    assert last.rstrip().endswith(
        "**Practice:** [exercises/06c_multinode_lab_exercises.ipynb](../exercises/06c_multinode_lab_exercises.ipynb)"
        " · next: [06d — bring-up and fault runbook](06d_bringup_and_fault_runbook.ipynb)")
    assert (ROOT / "exercises" / "06c_multinode_lab_exercises.ipynb").is_file()
    assert (ROOT / "notebooks" / "06d_bringup_and_fault_runbook.ipynb").is_file()


# ---------------------------------------------------------------- 07

N07 = "07_training_at_scale.ipynb"


def test_07_node_means_the_nvlink_domain_and_the_search_goes_past_a_gb200_host():
    # §4: "TP up to the **node**, which in this model means the NVLink domain or, on PCIe, the server (8 GPUs on a DGX
    # or PCIe server, up to 64 of an NVL72 rack's 72 GPUs)": node_size is max(host, domain), TP a power of two in it
    from nvcourse import training
    from nvcourse.training.step import _pow2_upto

    text = cells(N07)["c008"]
    assert ("TP up to the **node**, which in this model means the NVLink domain or, on PCIe, the server: 8 GPUs on a "
            "DGX or PCIe server, 64 on an NVL72 rack (the largest power of two within its 72 GPUs)") in text
    for sid, size in (("pcie-8gpu", 8), ("dgx-h100", 8), ("gb200-nvl72", 72)):
        assert training.node_size(sid) == size
    assert catalog.get_system("pcie-8gpu").gpus_per_host == 8
    assert _pow2_upto(training.node_size("gb200-nvl72"))[-1] == 64
    nvl72 = catalog.get_system("gb200-nvl72")
    assert training.best_config("llama3-8b", "gb200-nvl72", 8192).tp > nvl72.gpus_per_host  # t16 on 4-GPU hosts


def test_07_defines_global_batch_virtual_stages_and_recomputation_before_they_are_used():
    c = cells(N07)
    order = list(c)
    assert ("One optimizer step processes the **global batch**, the sequences all replicas see before the weights "
            "change") in c["c004"]
    assert all("global batch" not in c[cid] for cid in order[:order.index("c004")])
    definition = ("can be **interleaved**: each GPU then holds $v$ separate chunks of layers (**virtual stages**) "
                  "instead of one block, so the pipeline fills and drains $v$ times faster")
    assert definition in c["c004"]
    text = c["c004"]
    assert text.index(definition) < text.index("We assume 4 interleaved virtual stages")
    assert "(bubble, exposed communication, recomputation: forward layers run again in the backward pass to save " \
           "memory)" in text
    assert order.index("c004") < order.index("c005")  # virtual_stages=4 in the cell after the definition


def test_07_prose_names_no_course_function():
    md = {c["id"] for c in json.loads((ROOT / "notebooks" / N07).read_text(encoding="utf-8"))["cells"]
          if c["cell_type"] == "markdown"}
    prose07 = " ".join(v for k, v in cells(N07).items() if k in md)
    assert "`best_config`" not in prose07 and "`training.step_time(" not in prose07
    assert "the cell below passes the expert count, top-k and active parameters" in cells(N07)["c011a"]


def test_07_reference_section_keeps_what_left_section_2():
    from nvcourse.devtools.reading_time import PATH

    assert "## 8." in PATH["07"]
    ref, sec2 = cells(N07)["c016a"], cells(N07)["c004"] + cells(N07)["c006"]
    assert ref.startswith("## 8. Reference: how the model times collectives, and the first stage's memory")
    for moved in ("Collective times** come from the course's collective cost model (chapters 04b and 06)",
                  "Meta's H100s each had one 400 Gb/s **RoCE** (Ethernet) port rather than InfiniBand",
                  "plain [DDP](../docs/glossary.md#ddp) holds 16 bytes per parameter of its share",
                  "ignores Meta's fix, balancing layers away from the first and last stages"):
        assert moved in ref and moved not in sec2, moved
    assert "(Meta's were Ethernet: §8)" in sec2 and "exceeds an H100's 80 GB; §8 says why" in sec2


# ---------------------------------------------------------------- 08

N08 = "08_reliability_and_operations.ipynb"


def test_08_introduces_mtbi_before_the_readout_prints_it():
    c, out = cells(N08), shown(N08)
    order = list(c)
    assert "job's **mean time between interruptions** (**MTBI**) is" in c["c004"]
    assert all("MTBI" not in c[cid] and "MTBI" not in out.get(cid, "") for cid in order[:order.index("c004")])
    # the goodput dashboard (cell c011) prints "MTBI ... h" in its readout; it comes after the definition
    import matplotlib.pyplot as plt

    from nvcourse.chapters import ch08_reliability as ch08

    _live, readout = ch08.GoodputView()(16384, 60, 10, 1.0)
    plt.close("all")
    assert "MTBI" in readout and order.index("c004") < order.index("c011") and "ch.goodput_dashboard()" in c["c011"]


def test_08_alert_table_collapses_the_long_counter_note_and_says_what_ufm_is():
    from nvcourse import reliability as rel
    from nvcourse.chapters import ch08_reliability as ch08

    table = ch08.alerts_table_html()
    sym = next(a for a in rel.alerts() if a.counter.startswith("SymbolErrorCounter"))
    name, note = sym.counter.split(": ", 1)
    assert len(note.split()) > 40  # the long explanation the learner met inside a code cell
    assert f'overflow-wrap:anywhere">{name}</code><details><summary>what it counts</summary>' in table
    assert "<code" not in table.split(name, 1)[1].split("</details>", 1)[0]  # the note is prose, not code
    ufm = "<p>UFM, in the counter names, is NVIDIA's Unified Fabric Manager"
    assert ufm in table and "glossary.md#ufm" in table
    assert ufm in shown(N08)["c017"]  # the stored output is the table the module renders now


def test_08_recovery_features_come_one_per_bullet_and_collnet_is_explained():
    text = cells(N08)["c024"]
    for item in ("- **RAS** (since NCCL 2.24)", "- **`ncclCommShrink`** (NCCL 2.27)",
                 "- Its partner **`ncclCommGrow`** (NCCL 2.29)", "- **Non-blocking communicators**: every call"):
        assert item in text, item
    assert "NCCL has four features that make recovery cheaper at scale" in text
    assert "CollNet (NCCL's use of [InfiniBand SHARP](../docs/glossary.md#sharp), switches that add the data)" in text
