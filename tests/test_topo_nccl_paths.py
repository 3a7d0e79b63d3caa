"""``nvcourse topo`` after the fabric review of its output (/work/staging/review_topo.md, items 1, 4, 7, 8, 13, 15):
the path code of devices that meet only at a CPU, NICs listed as PCI devices only, PCIe uplinks slower than the
devices below them, the NVLink headline of a file that lists its links once per peer, the widths NCCL reads as x16,
NIC rows whose columns a paste lost, and the ``nvidia-smi topo -p2p`` matrix pasted after ``topo -m``.

Expected values are read from the fixtures' text (the bus ids, classes, speeds and widths quoted in each comment) or
from NCCL's source at v2.30.7-1 (the function named), never from the tool's output.
"""

import json
from pathlib import Path

import pytest

from nvcourse.cli import main
from nvcourse.topology.topo_graph import build_graph
from nvcourse.topology.topo_parser import example_files, parse_topo, read_topo
from nvcourse.topology.topo_pcie import nccl_pci_GBps, nccl_width
from nvcourse.topology.topo_result import TopoResult

FIX = Path(__file__).parent / "fixtures"
XMLS = sorted(FIX.glob("topo_xml/*.xml")) + sorted(FIX.glob("tables_heldout/*.xml")) + sorted(
    FIX.glob("tables_heldout2/*.xml"))
MODAL = FIX / "tables_heldout2" / "modal-b200x8-gvisor-vm.xml"
P4D = FIX / "tables_heldout" / "aws-p4d-24xl.xml"
IBM = FIX / "topo_xml" / "h100_vsi_8nic_roce_ibm_cloud.xml"
OCI_H100 = FIX / "tables_heldout" / "oci-bm-gpu-h100-8.xml"


def read(path: Path):
    return parse_topo(path.read_text(encoding="utf-8"))


def cli_text(capsys, path) -> str:
    assert main(["topo", str(path)]) == 0
    return capsys.readouterr().out


# -- item 1: devices that meet only at their CPU are PHB --------------------------------------------------------

@pytest.mark.parametrize("path", XMLS, ids=lambda p: p.stem)
def test_an_xml_file_never_gets_nvidia_smis_node(path):
    """NCCL has no NODE path type (src/include/graph.h PATH_LOC .. PATH_DIS); a path through the CPU node is PHB
    (src/graph/paths.cc ncclTopoSetPaths), and the XML records no host bridge to tell nvidia-smi's NODE from PHB."""
    assert "NODE" not in read(path).codes.values()


def test_modal_b200_gpus_and_nics_meet_only_at_their_cpu():
    """modal's file: under <cpu numaid="0"> the NICs sit in <pci busid="0000:00:00.0"/"0002:00:00.0"
    class="0x060000"><nic> (mlx5_0..mlx5_8) beside the GPUs' <pci busid="0002:00:01.0".."0002:00:04.0">; under
    numaid 1, mlx5_9..12 beside 0003:00:01.0..04.0. Same socket: 4 x 9 + 4 x 4 = 52 pairs, all PHB; with gdr="1"
    on every net, NCCL still turns GPUDirect RDMA off at its default level: PHB is above P2C (paths.cc
    ncclTopoCheckGdr: distance > netGdrLevel)."""
    res = read(MODAL)
    names = {n: res.nic_names[n] for n in res.nics}
    same = [(g, n) for g in res.gpus for n in res.nics
            if (int(g[3:]) < 4) == (names[n] in {f"mlx5_{i}" for i in range(9)})]
    assert len(same) == 52 and {res.codes[p] for p in same} == {"PHB"}
    assert {res.codes[(g, n)] for g in res.gpus for n in res.nics} - {"PHB"} == {"SYS"}
    note = next(n for n in res.notes if "nearest NIC only through a CPU" in n)
    assert note.startswith("GPU0, GPU1, GPU2, GPU3, GPU4, GPU5, GPU6, GPU7 reach") and "(PHB or SYS)" in note
    assert "NCCL does not use GPUDirect RDMA" in note and "NCCL_NET_GDR_LEVEL=PHB" in note
    assert any(n.startswith("devices that meet only at their CPU (no PCIe switch in common) are PHB") for n in
               res.notes)


def test_the_json_link_says_phb(capsys):
    assert main(["topo", str(MODAL), "--json"]) == 0
    links = json.loads(capsys.readouterr().out)["links"]
    assert {"a": "GPU0", "b": "NIC0", "type": "PHB"} in links


def test_a_c2c_gpu_is_told_p2c_not_a_gdr_loss():
    """DGX Spark GB10: the GPU has <c2c bw="43125" count="8"/> and the two <net> hang straight off <cpu>: NCCL
    merges C2C + PHB into P2C for the GPU's nearest NICs (paths.cc mergePathType, ncclTopoComputePaths), which the
    default GDR level (P2C, NCCL_NET_GDR_C2C=1) allows."""
    res = read(FIX / "tables_heldout" / "nvidia-gb10-dgx-spark-pr2202.xml")
    assert {res.codes[("GPU0", n)] for n in res.nics} == {"PHB"}
    assert any("GPU0, joined to its CPU by C2C" in n and "P2C" in n for n in res.notes)
    assert not any("nearest NIC only through a CPU" in n for n in res.notes)


# -- item 2: the switch a file states is a flag, not a note's wording ----------------------------------------------

def _more_nvlinks_than_a_gpu_has() -> TopoResult:
    gpus = [f"GPU{i}" for i in range(3)]
    codes = {(a, b): "NV18" for a in gpus for b in gpus if a != b}  # 2 peers x 18 = 36 links: more than any GPU has
    return TopoResult(list(gpus), list(gpus), [], codes)


def test_the_switch_note_follows_the_flag_not_another_notes_text():
    stated = _more_nvlinks_than_a_gpu_has()
    stated.nvswitch_stated = True
    build_graph(stated, None, None)
    assert stated.nvswitch_inferred and not any("a switch must be present" in n for n in stated.notes)
    worded = _more_nvlinks_than_a_gpu_has()
    worded.notes.append("NVLinks go to NVSwitches (tclass 0x068000): the old note's words, without the flag")
    build_graph(worded, None, None)
    assert any("a switch must be present" in n for n in worded.notes)


def test_an_xml_file_with_switch_links_sets_the_flag_a_paste_does_not():
    assert read(OCI_H100).nvswitch_stated  # <nvlink target="0000:1c:00.0" count="5" tclass="0x068000"/>
    assert not read_topo(example_files()["dgx-a100-10nic"]).nvswitch_stated


# -- item 7: NICs listed as PCI devices only -------------------------------------------------------------------

def test_p4d_efas_are_placed_from_the_tree(capsys):
    """aws-p4d-24xl.xml: under each switch ffff:ff:0N.0 two GPUs (..:1c.0, ..:1d.0) and one EFA
    <pci busid="0000:N0:1b.0" class="0x020000" vendor="0x1d0f" device="0xefa0"/>, switches 1-2 on numaid 0,
    3-4 on numaid 1. NCCL fills the <nic><net> in when it runs (src/graph/xml.cc ncclTopoFillNet)."""
    res = read(P4D)
    assert res.nics == ["NIC0", "NIC1", "NIC2", "NIC3"] and res.nic_names == {}
    pci = res.xml["pci_nics"]
    assert [pci[n]["bus_id"] for n in res.nics] == ["0000:10:1b.0", "0000:20:1b.0", "0000:90:1b.0", "0000:a0:1b.0"]
    assert pci["NIC0"] == {"bus_id": "0000:10:1b.0", "class": "0x020000", "vendor": "0x1d0f", "device": "0xefa0",
                           "numa": "0"}
    assert res.xml["nics"] == {}  # no <net>: nothing NCCL names yet (the scored NIC count stays 0)
    assert res.codes[("GPU0", "NIC0")] == res.codes[("GPU1", "NIC0")] == "PIX"
    assert res.codes[("GPU2", "NIC0")] == "PHB" and res.codes[("GPU4", "NIC0")] == "SYS"
    out = cli_text(capsys, P4D)
    assert ("NICs listed as PCI devices only (NCCL names them when it runs): NIC0 0000:10:1b.0 (PIX: GPU0, GPU1), "
            "NIC1 0000:20:1b.0 (PIX: GPU2, GPU3)") in out
    assert "note: 4 NICs are PCI devices only" in out and "no NIC as NCCL names one" not in out


@pytest.mark.parametrize("name, nics, first_bus, first_gpus", [
    # ndv2: <pci busid="0101:00:00.0" class="0x020700"/> flat under numaid 0 with GPUs 0001..0004: they meet at the CPU
    ("tables_heldout/azure-ndv2.xml", 1, "0101:00:00.0", {"GPU0": "PHB", "GPU3": "PHB", "GPU4": "SYS"}),
    # ndv4: 0101 and 0102 share switch ffff:ff:02.0 with GPUs 0001 and 0002 (GPU0, GPU1 in bus order)
    ("tables_heldout2/azure-ndv4-a100.xml", 8, "0101:00:00.0", {"GPU0": "PIX", "GPU1": "PIX", "GPU2": "SYS"}),
    # ndv5: 0101 shares switch ffff:ff:01.0 with GPU 0001 only
    ("tables_heldout/azure-ndv5.xml", 8, "0101:00:00.0", {"GPU0": "PIX", "GPU1": "PHB"}),
])
def test_azure_infiniband_hcas_listed_as_pci_devices(name, nics, first_bus, first_gpus):
    res = read(FIX / name)
    assert len(res.nics) == nics and len(res.xml["pci_nics"]) == nics and res.xml["nics"] == {}
    assert res.xml["pci_nics"]["NIC0"]["bus_id"] == first_bus
    assert res.xml["pci_nics"]["NIC0"]["class"] == "0x020700"
    assert {g: res.codes[(g, "NIC0")] for g in first_gpus} == first_gpus


def test_a_dump_with_named_nics_has_no_pci_only_ones():
    res = read(IBM)
    assert res.xml["pci_nics"] == {} and len(res.xml["nics"]) == 8


# -- item 4: bridge uplinks slower than a device below ---------------------------------------------------------

@pytest.mark.parametrize("speed, width, gbps", [
    # src/graph/topo.cc ncclTopoAddPci: bw = width * kvDictPciGen[speed] / 80, width 0 -> 16; kvDictPciGen in
    # 100 Mb/s per lane: 2.5 GT/s 15, 5 GT/s 30, 8 GT/s 60, 16 GT/s 120, 32 GT/s 240, 64 GT/s 480, else 60
    ("5.0 GT/s PCIe", "16", 6.0), ("2.5 GT/s PCIe", "1", 0.1875), ("16.0 GT/s PCIe", "16", 24.0),
    ("32.0 GT/s PCIe", "0", 48.0), ("64.0 GT/s PCIe", "16", 96.0), ("8 GT/s", "16", 12.0), ("16 GT/s", "8", 12.0),
    ("", "0", 12.0),  # an empty speed: the dictionary's fallback, 60
    ("16.0 GT/s", "16", 12.0),  # no " PCIe": kvConvertToInt's prefix match finds no entry, so 60 too
    (None, "16", None), ("32.0 GT/s PCIe", None, None),  # left out: NCCL reads it from sysfs when it runs
])
def test_nccl_pci_bandwidth_follows_ncclTopoAddPci(speed, width, gbps):
    assert nccl_pci_GBps(speed, width) == gbps


def test_width_zero_is_x16():
    assert nccl_width(0) == 16 and nccl_width(8) == 8


@pytest.mark.parametrize("name, count, bus, speed, width, nccl, below", [
    # OCI H100: 8 Broadcom switches (subsystem 0x0072) at link_speed="5.0 GT/s PCIe" link_width="16" above
    # 32.0 GT/s x16 GPUs and CX-7s
    ("tables_heldout/oci-bm-gpu-h100-8.xml", 8, "0000:08:00.0", "5.0 GT/s PCIe", 16, 6.0, 48.0),
    # IBM VSI: 8 bridges 0x104c:0x8232 at 2.5 GT/s x1 above GPUs and NICs at 32.0 GT/s, link_width="0" (x16)
    ("topo_xml/h100_vsi_8nic_roce_ibm_cloud.xml", 8, "0000:a1:00.0", "2.5 GT/s PCIe", 1, 0.1875, 48.0),
    # p5: 8 bridges at 16.0 GT/s x16 above a 32.0 GT/s x16 GPU (and four 16.0 GT/s x8 EFAs)
    ("tables_heldout/aws-p5-48xl-pr1226.xml", 8, "0000:00:00.0", "16.0 GT/s PCIe", 16, 24.0, 48.0),
])
def test_the_slowest_uplink_is_named_with_what_nccl_models(name, count, bus, speed, width, nccl, below):
    res = read(FIX / name)
    ups = res.xml["slow_uplinks"]
    assert len(ups) == count
    assert ups[0] == {"bus_id": bus, "link_speed": speed, "link_width": width, "nccl_GBps": nccl, "below_GBps": below}
    note = next(n for n in res.notes if "PCIe bridges link up to their parents slower" in n)
    assert note.startswith(f"{count} PCIe bridges")
    assert f"the slowest, {bus} ({speed} x{width}), NCCL models at {nccl:g} GB/s against {below:g} GB/s" in note


@pytest.mark.parametrize("name", ["tables_heldout2/oci-bm-gpu-a100-v2-8.xml",
                                  "topo_xml/h200_vm_dump_cut_nccltests256.xml", "tables_heldout/aws-p4d-24xl.xml"])
def test_no_uplink_note_where_no_bridge_is_slower(name):
    """OCI A100: every bridge, GPU and NIC at 16 GT/s x16; the H200 VM: no bridge at all; p4d: 8 GT/s x16 all."""
    res = read(FIX / name)
    assert res.xml["slow_uplinks"] == [] and not any("PCIe bridge" in n for n in res.notes)


def test_one_slow_bridge_is_said_in_the_singular():
    text = ('<system version="1"><cpu numaid="0">'
            '<pci busid="0000:01:00.0" class="0x060400" link_speed="16.0 GT/s PCIe" link_width="16">'
            '<pci busid="0000:02:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">'
            '<gpu dev="0" sm="90" rank="0" gdr="1"/></pci></pci>'
            '<pci busid="0000:81:00.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">'
            '<pci busid="0000:82:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">'
            '<gpu dev="1" sm="90" rank="1" gdr="1"/></pci></pci></cpu></system>')
    res = parse_topo(text)
    assert [u["bus_id"] for u in res.xml["slow_uplinks"]] == ["0000:01:00.0"]
    assert any(n.startswith("a PCIe bridge links up to its parent slower than a GPU or NIC below it: 0000:01:00.0 "
                            "(16.0 GT/s PCIe x16), NCCL models at 24 GB/s against 48 GB/s") for n in res.notes)


# -- item 8 and the widths: what the text shows ------------------------------------------------------------------

def test_modal_headline_shows_a_gpus_links_not_their_sum(capsys):
    """Each modal GPU lists 7 <nvlink target=(another GPU's bus id) count="18" tclass="0x068000"/>: a B200's 18
    links, written once per peer; NCCL adds the 7 lines to the one NVSwitch node (topo.cc ncclTopoConnectNodes)."""
    out = cli_text(capsys, MODAL)
    line = next(x for x in out.splitlines() if x.startswith("NVLinks per GPU: "))
    assert line.startswith("NVLinks per GPU: GPU0 18, GPU1 18") and "GPU0 126" not in line
    assert "listed once for each of 7 peer GPUs, with the NVSwitch class: NCCL adds the lines up to 126" in line


def test_self_targeted_nvlinks_are_not_counted_as_links(capsys):
    """azure-ncv4.xml: each GPU's only <nvlink> targets its own bus id (count 12): no GPU-to-GPU NVLink."""
    out = cli_text(capsys, FIX / "tables_heldout" / "azure-ncv4.xml")
    assert "NVLinks per GPU" not in out and "4 GPUs list NVLinks whose target is the GPU itself" in out


def test_width_zero_and_an_empty_speed_are_shown_as_nccl_reads_them(capsys):
    # IBM: 8 GPUs and 8 NICs at link_speed="32.0 GT/s PCIe" link_width="0"
    assert ("PCIe links of the GPUs and NICs: 32.0 GT/s PCIe x16 (16) -- the file gives width 0 for 16 of them, "
            "which NCCL reads as x16") in cli_text(capsys, IBM)
    # ncv4: 4 GPUs with link_speed="" link_width="0"
    out = cli_text(capsys, FIX / "tables_heldout" / "azure-ncv4.xml")
    assert "x0" not in out and "an empty speed for 4 of them, which NCCL rates as 8 GT/s" in out


# -- item 15: the topo -p2p matrix ----------------------------------------------------------------------------

def test_the_p2p_matrix_after_the_topo_m_one_is_read(capsys):
    """pcie-2gpu-indented-wrapped.txt ends with 'GPU0 X NS' / 'GPU1 NS X' and the legend 'NS = Not supported'."""
    path = example_files()["pcie-2gpu-indented-wrapped"]
    res = read_topo(path)
    assert res.p2p == {("GPU0", "GPU1"): "NS", ("GPU1", "GPU0"): "NS"}
    assert res.to_json()["p2p"] == [{"a": "GPU0", "b": "GPU1", "status": "NS"}]
    note = next(n for n in res.notes if "topo -p2p" in n)
    assert "GPU0-GPU1 NS (not supported)" in note and "host memory (SHM)" in note
    assert "if it is the read or write one" in note  # the paste does not show which capability was asked


_TOPO = """$ nvidia-smi topo -m
        GPU0    GPU1    GPU2    CPU Affinity
GPU0     X      NV2     PHB     0-7
GPU1    NV2      X      PHB     0-7
GPU2    PHB     PHB      X      0-7
"""


def test_a_read_matrix_with_an_nvlink_pair_says_nccl_stops():
    """NCCL checks NVML's read and write P2P status (paths.cc ncclTopoCheckP2p): not OK turns P2P off, and for GPUs
    on NVLink it returns an error ('P2P is disabled between NVLINK connected GPUs') unless
    NCCL_IGNORE_DISABLED_P2P=1."""
    res = parse_topo(_TOPO + "\n$ nvidia-smi topo -p2p r\n        GPU0    GPU1    GPU2\n"
                             "GPU0     X      CNS     OK\nGPU1    CNS      X      OK\nGPU2     OK     OK       X\n")
    note = next(n for n in res.notes if "topo -p2p" in n)
    assert note.startswith("nvidia-smi topo -p2p (read): no CUDA peer-to-peer for GPU0-GPU1 CNS (chipset not "
                           "supported)")
    assert "for GPUs joined by NVLink (GPU0-GPU1) NCCL stops with an error" in note


def test_an_all_ok_or_broken_p2p_matrix_adds_nothing():
    ok = parse_topo(_TOPO + "\n        GPU0    GPU1    GPU2\nGPU0     X      OK      OK\nGPU1    OK       X      OK\n"
                            "GPU2     OK     OK       X\n")
    assert len(ok.p2p) == 6 and not any("p2p" in n for n in ok.notes)
    broken = parse_topo(_TOPO + "\n        GPU0    GPU1    GPU2\nGPU0     X      NS\n")
    assert broken.p2p == {} and "p2p" not in broken.to_json()


# -- item 13: NIC rows whose columns were cut --------------------------------------------------------------------

_HEAD = "        GPU0    GPU1    CPU Affinity\nGPU0     X      NV2     0-7\nGPU1    NV2      X      0-7\n"


def test_cut_rows_that_carry_their_own_codes_use_them():
    res = parse_topo(_HEAD + "NIC0 PIX NODE X PIX\nNIC1 NODE PIX PIX X\n")
    assert res.nics == ["NIC0", "NIC1"] and res.codes[("NIC1", "NIC0")] == "PIX"
    assert res.codes[("GPU1", "NIC0")] == "NODE"


def test_cut_rows_the_tree_does_not_fix_are_marked_unknown():
    """Both NICs NODE to both GPUs: they may share a switch or not, so their code is '?', and the note says so."""
    res = parse_topo(_HEAD + "NIC0 NODE NODE\nNIC1 NODE NODE\n")
    assert res.codes[("NIC0", "NIC1")] == "?" and {"a": "NIC0", "b": "NIC1", "type": "?"} in res.links()
    assert any("not fixed, so marked ?: NIC0-NIC1" in n for n in res.notes)


@pytest.mark.parametrize("rows, words", [
    ("NIC0 PIX\n", "line 4: row NIC0 has 1 entries, the header has 2 device columns"),
    ("NIC0 X PIX\n", "line 4: 'X' off the diagonal in row NIC0, column GPU0"),
    ("NIC0 NV2 PIX\n", "line 4: NVLink code 'NV2' in row NIC0, column GPU0"),
    ("NIC0 PIX NODE X PIX\nNIC1 NODE PIX SYS X\n", "line 5: asymmetric matrix: NIC0->NIC1 is PIX but NIC1->NIC0"),
])
def test_malformed_cut_rows_fail_naming_the_line(rows, words):
    with pytest.raises(ValueError, match=words.replace("?", r"\?").replace("(", r"\(")):
        parse_topo(_HEAD + rows)
