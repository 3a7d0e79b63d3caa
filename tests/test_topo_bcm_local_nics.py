"""``nvcourse topo`` on NCCL's topology XML: Broadcom PEX switch levels merged as NCCL merges them, and each GPU's
nearest NICs picked as NCCL picks its local NICs.

Expected values are read from the fixtures' XML text (quoted in the comments) and worked with NCCL's rules at
v2.30.7-1, never taken from the tool's output:

- src/graph/topo.cc ``getBcmGen`` / ``ncclTopoFlattenBcmSwitches``: a PCI node's id is vendor << 48 | device << 32 |
  subsystem_vendor << 16 | subsystem_device (``ncclTopoGetIntDevice``); with its low 12 bits masked, Gen4 is
  0x1000c0101000a000 (either level), Gen5 0x1000c03010000000 at level 0 and 0x1000c03010001000 at level 1; a level-0
  switch absorbs the PCI nodes of the same generation at level 1 linked to it. Gen5 first in v2.20.3-1.
- src/graph/paths.cc ``ncclTopoSetPaths``: one PCI node between two devices is PATH_PIX, a PCI-PCI hop PATH_PXB; a
  path's bandwidth is its slowest link. src/graph/topo.cc ``ncclTopoGetLocal``: a GPU's local NETs are those of most
  path bandwidth, then lowest path type. ``ncclTopoAddPci``: a ``<pci>`` link is width x lane rate / 80 GB/s (32.0
  GT/s: 240, 5.0 GT/s: 30); ``ncclTopoAddNet``: a net is speed / 8000 GB/s; ``ncclTopoAddCpu``: a ``<nic>`` straight
  under ``<cpu>`` is linked at LOC_BW (5000), an Intel CPU of family 6 and model >= 0xCF is Emerald Rapids, whose link
  to another CPU is ERP_QPI_BW = 40 GB/s (src/graph/topo.h).
"""

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from nvcourse.cli import main
from nvcourse.topology.topo_local import inter_cpu_GBps
from nvcourse.topology.topo_parser import parse_topo

FIX = Path(__file__).parent / "fixtures"
OCI_H100 = FIX / "tables_heldout" / "oci-bm-gpu-h100-8.xml"
OCI_A100 = FIX / "tables_heldout" / "oci-bm-gpu4-8-a100.xml"
MODAL = FIX / "tables_heldout2" / "modal-b200x8-gvisor-vm.xml"
GB10 = FIX / "tables_heldout" / "nvidia-gb10-dgx-spark-pr2202.xml"
RTPLLM = FIX / "tables_heldout2" / "rtpllm-cx8-bond-8gpu.xml"
DGX_A100_TEXT = Path(__file__).parents[1] / "nvcourse" / "data" / "topo" / "dgx-a100-10nic.txt"


def read(path: Path):
    return parse_topo(path.read_text(encoding="utf-8"))


def _out(capsys, *argv: str) -> str:
    assert main(["topo", *map(str, argv)]) == 0
    return capsys.readouterr().out


def _label(res, name: str) -> str:
    return next(k for k, v in res.nic_names.items() if v == name)


def _gpu(res, bus: str) -> str:
    return next(g for g, d in res.xml["gpus"].items() if d["bus_id"] == bus)


# --- Broadcom PEX switches ------------------------------------------------------------------------------------------

def _bcm5_level(pci: ET.Element) -> int | None:
    """NCCL's Gen5 rule read off the attributes (not the tool's code): vendor 0x1000, device 0xc030, subsystem vendor
    0x1000, and the subsystem device's top nibble is the level."""
    if (pci.get("vendor"), pci.get("device"), pci.get("subsystem_vendor")) != ("0x1000", "0xc030", "0x1000"):
        return None
    return int(pci.get("subsystem_device"), 16) >> 12


def test_oci_h100_gpu_and_nic_below_one_gen5_switch_are_pix():
    """Every GPU-NIC pair whose bridges meet at a Gen5 level-0 switch through two level-1 ones is PIX, every other
    GPU-NIC pair is not: worked out from the XML with NCCL's rule, independently of the reader."""
    res = read(OCI_H100)
    root = ET.fromstring(OCI_H100.read_text(encoding="utf-8").split("-->", 1)[1].strip())
    expected = set()
    for top in root.iter("pci"):
        if _bcm5_level(top) != 0:
            continue
        subs = [p for p in top.findall("pci") if _bcm5_level(p) == 1]
        gpus = [p.get("busid") for s in subs for p in s.findall("pci") if p.find("gpu") is not None]
        nets = [n.get("name") for s in subs for p in s.findall("pci") for n in p.iter("net")]
        expected |= {(g, n) for g in gpus for n in nets}
    assert len(expected) == 16  # 8 switches, each over one GPU and one dual-port NIC
    for g, d in res.xml["gpus"].items():
        for nic, name in res.nic_names.items():
            assert (res.codes[(g, nic)] == "PIX") == ((d["bus_id"], name) in expected), (g, name)


def test_oci_h100_switches_merged_and_said_with_the_release():
    res = read(OCI_H100)
    # <pci busid="0000:08:00.0" ... device="0xc030" subsystem_vendor="0x1000" subsystem_device="0x0072"> holds
    # 0000:0d:00.0 (subsystem_device 0x1003, over GPU 0000:0f:00.0) and 0000:0a:00.0 (0x1003, over mlx5_0/mlx5_1)
    first = res.xml["bcm_switches"][0]
    assert (first["bus_id"], first["gen"], first["merged"]) == ("0000:08:00.0", 5, ["0000:0d:00.0", "0000:0a:00.0"])
    assert first["nccl_from"] == "2.20.3" and len(res.xml["bcm_switches"]) == 8
    gpu0 = _gpu(res, "0000:0f:00.0")
    assert res.codes[(gpu0, _label(res, "mlx5_0"))] == "PIX" and res.codes[(gpu0, _label(res, "mlx5_3"))] == "PHB"
    note = next(n for n in res.notes if n.startswith("8 Broadcom PEX Gen5 switches (0x1000:0xc030: 0000:08:00.0,"))
    assert "NCCL 2.20.3 and later merge the lower level into the upper one" in note
    assert "16 GPU-NIC pairs below one such switch are PIX, not the PXB" in note
    assert "GPUDirect RDMA is the same either way" in note
    # PIX and PXB are both within NCCL's default GPUDirect RDMA level: no GPU is told it loses it
    assert not any("nearest NIC only through a CPU" in n for n in res.notes)
    # the merged level-1 bridges run at 32.0 GT/s x16 (48 GB/s): the only slow uplinks are the level-0 ones at
    # 5.0 GT/s x16 (16 x 30 / 80 = 6 GB/s)
    assert {u["bus_id"] for u in res.xml["slow_uplinks"]} == {m["bus_id"] for m in res.xml["bcm_switches"]}


def test_oci_h100_nearest_nic_line_is_pix(capsys):
    out = _out(capsys, OCI_H100)
    # GPU 0000:0f:00.0 and mlx5_0/mlx5_1 (0000:0c:00.0) below 0000:08:00.0; 0000:2d:00.0 and mlx5_3/mlx5_4 below
    # 0000:26:00.0; 0000:d8:00.0 and mlx5_16/mlx5_17 below 0000:d1:00.0 (GPUs numbered in bus order)
    assert "Nearest NIC per GPU: GPU0 mlx5_0/mlx5_1 (PIX), GPU1 mlx5_3/mlx5_4 (PIX)," in out
    assert "GPU7 mlx5_16/mlx5_17 (PIX)" in out and "(PXB)" not in out.split("Nearest NIC per GPU:")[1].split("\n")[0]


def test_oci_a100_gen4_levels_merged_nics_become_pix():
    """<pci 0000:05:00.0 subsystem_device="0xa096"> holds 0000:0a:00.0 and 0000:11:00.0 (both 0xa096, vendor 0x1000
    device 0xc010 subsystem_vendor 0x1000: Gen4), over mlx5_18/19 (0000:0c:00.0) and mlx5_26/27 (0000:16:00.0): one
    switch after the merge. The GPUs sit one NVIDIA bridge (0x10de) lower, so they stay PXB to those NICs."""
    res = read(OCI_A100)
    assert res.codes[(_label(res, "mlx5_18"), _label(res, "mlx5_26"))] == "PIX"
    gpu = _gpu(res, "0000:0f:00.0")  # under 0000:0d:00.0 (0x10de bridge) under 0000:0a:00.0
    assert res.codes[(gpu, _label(res, "mlx5_18"))] == "PXB" and res.codes[(gpu, _label(res, "mlx5_26"))] == "PXB"
    top = next(m for m in res.xml["bcm_switches"] if m["bus_id"] == "0000:05:00.0")
    assert (top["gen"], top["merged"], top["nccl_from"]) == (4, ["0000:0a:00.0", "0000:11:00.0"], "2.9.6")
    note = next(n for n in res.notes if n.startswith("8 Broadcom PEX Gen4 switches"))
    assert "16 NIC-NIC pairs below one such switch are PIX" in note


def _bridge(bus: str, device: str, sub_vendor: str, sub_device: str, inner: str, speed: str = "32.0 GT/s PCIe") -> str:
    return (f'<pci busid="{bus}" class="0x060400" vendor="0x1000" device="{device}" subsystem_vendor="{sub_vendor}" '
            f'subsystem_device="{sub_device}" link_speed="{speed}" link_width="16">{inner}</pci>')


_GPU = ('<pci busid="{bus}" class="0x030200" vendor="0x10de" link_speed="32.0 GT/s PCIe" link_width="16">'
        '<gpu dev="{dev}" sm="90" rank="{dev}" gdr="1"/></pci>')
_NIC = ('<pci busid="{bus}" class="0x020000" vendor="0x15b3" link_speed="32.0 GT/s PCIe" link_width="16"><nic>'
        '<net name="{name}" dev="{dev}" speed="{speed}" port="1" gdr="1"/></nic></pci>')


def _system(inner: str) -> str:
    cpu = '<cpu numaid="0" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">'
    return f'<system version="1">{cpu}{inner}</cpu></system>'


def _two_level(device: str, sub_vendor: str, top_sub: str, low_sub: str, speed: str = "32.0 GT/s PCIe") -> str:
    gpu = _bridge("0000:02:00.0", device, sub_vendor, low_sub, _GPU.format(bus="0000:03:00.0", dev=0), speed)
    nic = _bridge("0000:04:00.0", device, sub_vendor, low_sub, _NIC.format(bus="0000:05:00.0", name="mlx5_0", dev=0,
                                                                            speed=400000), speed)
    return _system(_bridge("0000:01:00.0", device, sub_vendor, top_sub, gpu + nic))


@pytest.mark.parametrize("device,sub_vendor,top_sub,low_sub,code,gen,since", [
    ("0xc030", "0x1000", "0x0072", "0x1003", "PIX", 5, "2.20.3"),   # Gen5: level 0 over level 1
    ("0xc030", "0x1000", "0x0072", "0x0072", "PXB", None, None),    # Gen5: both level 0, nothing merged
    ("0xc030", "0x15d9", "0x1d25", "0x1d25", "PXB", None, None),    # another subsystem vendor (a Supermicro board)
    ("0xc010", "0x1000", "0xa032", "0xa032", "PIX", 4, "2.9.6"),    # Gen4, the very same id
    ("0xc010", "0x1000", "0xa032", "0xa096", "PIX", 4, "2.20.3"),   # Gen4, same masked id: from getBcmGen on
])
def test_which_broadcom_ids_nccl_merges(device, sub_vendor, top_sub, low_sub, code, gen, since):
    res = parse_topo(_two_level(device, sub_vendor, top_sub, low_sub))
    assert res.codes[("GPU0", "NIC0")] == code
    merges = res.xml["bcm_switches"]
    assert ([(m["gen"], m["nccl_from"], m["merged"]) for m in merges]
            == ([] if gen is None else [(gen, since, ["0000:02:00.0", "0000:04:00.0"])]))


def test_a_merged_bridge_has_no_uplink_of_its_own():
    """NCCL removes the merged node and links its children to the upper switch with their own links, so a slow
    lower-level bridge is no bottleneck to NCCL: 8.0 GT/s x16 (12 GB/s) below devices at 48 GB/s is not reported."""
    res = parse_topo(_two_level("0xc030", "0x1000", "0x0072", "0x1003", speed="8.0 GT/s PCIe"))
    assert res.xml["slow_uplinks"] == []
    res = parse_topo(_two_level("0xc030", "0x1000", "0x0072", "0x0072", speed="8.0 GT/s PCIe"))  # not merged
    assert {u["bus_id"] for u in res.xml["slow_uplinks"]} == {"0000:02:00.0", "0000:04:00.0"}


def test_only_one_lower_level_is_merged():
    """A level-1 Gen5 bridge under another level-1 one: the upper level-1 is merged, the lower stays (NCCL merges
    only the PCI nodes linked to the level-0 switch), so a GPU below it is PXB to a NIC on the switch."""
    gpu = _bridge("0000:02:00.0", "0xc030", "0x1000", "0x1003",
                  _bridge("0000:06:00.0", "0xc030", "0x1000", "0x1003", _GPU.format(bus="0000:03:00.0", dev=0)))
    nic = _bridge("0000:04:00.0", "0xc030", "0x1000", "0x1003",
                  _NIC.format(bus="0000:05:00.0", name="mlx5_0", dev=0, speed=400000))
    res = parse_topo(_system(_bridge("0000:01:00.0", "0xc030", "0x1000", "0x0072", gpu + nic)))
    assert res.codes[("GPU0", "NIC0")] == "PXB"
    assert res.xml["bcm_switches"][0]["merged"] == ["0000:02:00.0", "0000:04:00.0"]


# --- NCCL's local NICs ----------------------------------------------------------------------------------------------

def test_modal_nearest_nics_follow_nccl_bandwidth_first(capsys):
    """Modal's B200 file: under <cpu numaid="0" ... modelid="207">, <pci 0000:00:00.0 (32.0 GT/s x16)> holds mlx5_0..3
    (speed 100000) and mlx5_4 (200000), <pci 0002:00:00.0 (32.0 GT/s x16)> mlx5_5..8 (400000), and the GPUs
    0002:00:01.0..04.0 sit at 32.0 GT/s x16; <cpu numaid="1"> holds mlx5_9..12 (400000) and GPUs 0003:00:01.0..04.0.
    Paths from GPU0: mlx5_0..3 min(48, 48, 12.5) = 12.5, mlx5_4 25, mlx5_5..8 min(48, 48, 50) = 48, all PHB;
    mlx5_9..12 SYS at min(48, 40, 48, 50) = 40. So NCCL's local NICs are mlx5_5..8 (ties kept), not all nine PHB."""
    res = read(MODAL)
    local = res.xml["local_nics"]
    assert [res.nic_names[n] for n in local["GPU0"]["nics"]] == ["mlx5_5", "mlx5_6", "mlx5_7", "mlx5_8"]
    assert (local["GPU0"]["path"], local["GPU0"]["GBps"]) == ("PHB", 48.0)
    rated = {res.nic_names[n]: bw for n, bw in local["GPU0"]["nic_GBps"].items()}
    assert (rated["mlx5_0"], rated["mlx5_4"], rated["mlx5_5"], rated["mlx5_9"]) == (12.5, 25.0, 48.0, 40.0)
    assert [res.nic_names[n] for n in local["GPU4"]["nics"]] == ["mlx5_9", "mlx5_10", "mlx5_11", "mlx5_12"]
    out = _out(capsys, MODAL)
    line = next(ln for ln in out.splitlines() if ln.startswith("Nearest NIC per GPU: "))
    assert line == ("Nearest NIC per GPU: " + ", ".join(
        [f"GPU{i} mlx5_5/mlx5_6/mlx5_7/mlx5_8 (PHB)" for i in range(4)]
        + [f"GPU{i} mlx5_9/mlx5_10/mlx5_11/mlx5_12 (PHB)" for i in range(4, 8)]))
    note = next(n for n in res.notes if n.startswith("the nearest NIC line follows NCCL's pick"))
    assert ("GPU0, GPU1, GPU2, GPU3 take mlx5_5, mlx5_6, mlx5_7, mlx5_8 (PHB, 48 GB/s), not mlx5_0, mlx5_1, mlx5_2, "
            "mlx5_3, mlx5_4 (PHB, at most 25 GB/s)") in note
    assert "GPU4" not in note  # their pick by code was already mlx5_9..12
    data = json.loads(_out(capsys, MODAL, "--json"))
    assert data["nccl_xml"]["local_nics"]["GPU0"]["nics"] == local["GPU0"]["nics"]


def test_gb10_takes_the_faster_socket_interface():
    """DGX Spark GB10: wlP9s9 (speed 10000) under <pci 0009:01:00.0 link_speed="5.0 GT/s PCIe" link_width="1">,
    1 x 30 / 80 = 0.375 GB/s; tailscale0 (speed 10000) in a <nic> straight under <cpu>, linked at LOC_BW, so
    min(5000, 1.25) = 1.25 GB/s; the GPU reaches its CPU by C2C (43125 x 8 / 1000 = 345 GB/s). Both PHB."""
    res = read(GB10)
    pick = res.xml["local_nics"]["GPU0"]
    assert [res.nic_names[n] for n in pick["nics"]] == ["tailscale0"] and pick["GBps"] == 1.25
    assert pick["nic_GBps"][_label(res, "wlP9s9")] == 0.375


def test_bandwidth_beats_a_nearer_path_type_and_the_gdr_note_follows():
    """A 10 Gb/s NIC on the GPU's switch (PIX, 1.25 GB/s) and a 400 Gb/s one on the CPU (PHB, min(48, 48, 50) = 48):
    NCCL's local NIC is the PHB one, which its default GPUDirect RDMA level does not reach, so the note says so."""
    near = _NIC.format(bus="0000:05:00.0", name="slow0", dev=0, speed=10000)
    far = _NIC.format(bus="0000:81:00.0", name="fast0", dev=1, speed=400000)
    res = parse_topo(_system(_bridge("0000:01:00.0", "0x0001", "0x0001", "0x0001",
                                     _GPU.format(bus="0000:03:00.0", dev=0) + near) + far))
    assert res.codes[("GPU0", "NIC0")] == "PIX" and res.codes[("GPU0", "NIC1")] == "PHB"
    assert res.xml["local_nics"]["GPU0"]["nics"] == ["NIC1"]
    assert any(n.startswith("GPU0 reaches its nearest NIC only through a CPU") for n in res.notes)
    assert any("GPU0 takes fast0 (PHB, 48 GB/s), not slow0 (PIX, 1.25 GB/s)" in n for n in res.notes)


def test_no_pick_without_speeds_and_topo_m_text_keeps_ties(capsys):
    """rtp-llm's file gives its <net>s no speed: no NCCL pick, the line keeps every NIC at the best code. A
    `topo -m` matrix has no speeds either: DGX A100's GPU0 row reads PXB for NIC0 and NIC1 (mlx5_0, mlx5_1)."""
    assert read(RTPLLM).xml["local_nics"] == {}
    out = _out(capsys, DGX_A100_TEXT)
    assert "Nearest NIC per GPU: GPU0 mlx5_0/mlx5_1 (PXB), GPU1 mlx5_0/mlx5_1 (PXB), GPU2 mlx5_2/mlx5_3 (PXB)" in out


@pytest.mark.parametrize("attrs,expected", [
    ('arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="207"', 40.0),  # >= 0xCF: ERP_QPI_BW
    ('arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143"', 22.0),  # >= 0x8F: SRP_QPI_BW
    ('arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="85"', 10.0),   # >= 0x55: SKL_QPI_BW
    ('arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="79"', 6.0),    # BDW_QPI_BW
    ('arch="x86_64" vendor="AuthenticAMD" familyid="25" modelid="1"', 16.0),   # AMD_BW
    ('arch="arm64"', 6.0), ('arch="ppc64"', 32.0),                             # ARM_BW, P9_BW
    ('arch="x86_64" vendor="GenuineIntel"', None), ('numaid="0"', None),      # NCCL reads the host when it runs
])
def test_inter_cpu_bandwidth_as_nccl_sets_it(attrs, expected):
    assert inter_cpu_GBps(ET.fromstring(f"<cpu {attrs}/>")) == expected
