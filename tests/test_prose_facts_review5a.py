"""Sentences of chapters 02, 03, 04b, 06b and 06c that a senior NCCL reviewer corrected: each is in the notebook
in its corrected form, and the table or model next to it says the same. Markdown line breaks are read as spaces."""

import json
import re
from functools import cache
from pathlib import Path

from nvcourse.chapters import ch03_topology

ROOT = Path(__file__).resolve().parents[1]


@cache
def text(notebook: str) -> str:
    nb = json.loads((ROOT / "notebooks" / notebook).read_text(encoding="utf-8"))
    return re.sub(r"\s+", " ", " ".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"))


def _plain(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&#x27;", "'")


# NCCL's ncclTopoCheckP2p (src/graph/paths.cc, 2.30.7): "By default don't use P2P across CPU Host Bridges and further
# apart: int p2pLevel = PATH_PXB"; an AMD x86 host with at most two GPU devices gets PATH_SYS; NCCL_P2P_LEVEL
# overrides both.
def test_nccl_uses_p2p_only_up_to_pxb_by_default_in_02_03_and_06b():
    assert ("NCCL itself uses GPU peer-to-peer only up to `PXB` by default: between GPUs at `PHB`, `NODE` or `SYS` it "
            "copies through host memory (`via SHM` in its log). That is its default, not a fault; `NCCL_P2P_LEVEL` "
            "raises the limit, and on an AMD host with only two GPUs NCCL uses peer-to-peer up to `SYS`.") in text(
        "02_pcie_vs_nvlink.ipynb")
    t03 = text("03_topologies_and_nvswitch.ipynb")
    assert ("NCCL uses GPU peer-to-peer only up to `PXB` by default: at `PHB`, `NODE` and `SYS` it copies through "
            "host memory (`via SHM`), except on an AMD host with only two GPUs (peer-to-peer up to `SYS`).") in t03
    assert "avoid `SYS` for peer-to-peer" not in t03 and "NCCL may stage" not in t03
    html = ch03_topology.codes_table_html()
    assert ("NCCL uses GPU peer-to-peer only up to PXB by default, up to SYS on an AMD host with only two GPUs"
            in _plain(html))
    rows = {_plain(r).split()[0]: _plain(r) for r in html.split("<tr>")[2:]}
    for code in ("PHB", "NODE", "SYS"):  # every code beyond PXB says NCCL copies through host memory
        assert "NCCL copies through host memory" in rows[code], code
    for code in ("NV#", "PIX", "PXB"):
        assert "host memory" not in rows[code], code
    assert ("between GPUs that reach each other only through the CPU, at `PHB`, `NODE` or `SYS` "
            "([glossary](../docs/glossary.md#p2p)), `via SHM` is NCCL's "
            "default") in text("06b_nccl_in_practice.ipynb")


# NCCL's symmetric-kernel model (src/sym_kernels.cc) only ranks symmetric kernels; with both buffers registered NCCL
# takes one without asking the classic model (src/scheduler/symmetric_sched.cc: "we don't fall back").
def test_04b_and_06b_say_the_blackwell_ratio_is_two_models_and_measurements_beat_both():
    from nvcourse.chapters import ch06b_nccl_in_practice as ch06b
    from nvcourse.costmodel import predict

    t04b = text("04b_predicting_collectives.ipynb")
    assert ("NCCL has two, never compared: one ranks the symmetric kernels, the other picks the classic path's "
            "algorithm and protocol.") in t04b
    assert "they are slower than plain buffers" not in t04b
    assert ("A user measured about 3 µs for an 8-byte symmetric all-reduce on 8 × B200 "
            "([nccl#1940](https://github.com/NVIDIA/nccl/issues/1940)), and an NVIDIA engineer under 8 µs up to 1 KB "
            "on a 4-GPU GB200 node ([nccl-tests#333](https://github.com/NVIDIA/nccl-tests/issues/333)): below both "
            "estimates.") in t04b
    for system, gpus, sizes, measured_us in (("dgx-b200", 8, (8,), 3.0), ("gb200-nvl72", 4, (8, 64, 1024), 8.0)):
        for size in sizes:
            for registered in (False, True):
                assert predict("allreduce", system, gpus, size, registered=registered).time_s * 1e6 > measured_us
    table = _plain(ch06b.flags_table_html())
    assert "2 symmetric memory (NCCL 2.27 and later; section 8 says what it changes)" in table
    assert ("NCCL's [symmetric kernels](../docs/glossary.md#symmetric-kernels); published runs show lower "
            "small-message latency, on Blackwell too, whatever NCCL's cost model estimates: chapter 04b, section 12."
            ) in text("06b_nccl_in_practice.ipynb")


def test_04b_and_the_readme_date_ncclss_behaviour_by_the_release_the_tables_come_from():
    from nvcourse.costmodel import tuning

    version = tuning.raw()["source"]["version"]
    assert version == "2.30.7"
    assert f"The constants are NCCL's tuner's own, as of NCCL {version} (later releases may change them)" in text(
        "04b_predicting_collectives.ipynb")
    readme = re.sub(r"\s+", " ", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert f"2.8-2.30, default 2.30: NCCL's behaviour as of {version})" in readme


# NCCL_IB_TC (src/transport/net_ib, default 0) is the IP traffic-class byte: DSCP in the upper six bits, ECN below.
def test_06c_gives_nccl_ib_tc_as_the_traffic_class_byte():
    t06c = text("06c_multinode_lab.ipynb")
    dscp, ecn = 26, 0b10
    assert (f"DSCP × 4 plus the two ECN bits, default 0. DSCP {dscp} gives {dscp * 4}, or {dscp * 4 + ecn} with ECN "
            f"bits `10`; set to {dscp}, NCCL would send DSCP {dscp >> 2}, usually a lossy class") in t06c
    assert "(06d_bringup_and_fault_runbook.ipynb) §6 and the [RoCE QoS runbook](../docs/runbook-roce-qos.md)" in t06c
    assert "## 6. Fabric: RoCE and InfiniBand" in text("06d_bringup_and_fault_runbook.ipynb")
    assert (ROOT / "docs" / "runbook-roce-qos.md").is_file()
    # NCCL_IB_TC is not the only class knob: NCCL_IB_FIFO_TC gives the CTS/FIFO control messages their own
    # (src/transport/net_ib/connect.cc), so the chapter names both and never says "only"
    assert "set `NCCL_IB_TC` (the traffic-class byte, DSCP × 4 + ECN: §1; and `NCCL_IB_FIFO_TC`" in t06c
    assert "set only `NCCL_IB_TC`" not in t06c


# LL128 has two conditions in NCCL's tuner (src/graph/tuning.cc): NVLink inside the node, and a GPU-to-NIC path
# that stays off the CPU for the steps across the network (<= PXB, or <= PXN on Hopper/Blackwell); a NIC at PHB/SYS
# gets no LL128 across the network, so 02 must not say LL128 runs on "the steps across the network too"
def test_02_says_when_ll128_crosses_the_network():
    t02 = text("02_pcie_vs_nvlink.ipynb")
    assert "the steps across the network too" not in t02
    assert "a NIC reached through the CPU gets no LL128" in " ".join(t02.split())
