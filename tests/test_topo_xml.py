"""``nvcourse topo`` on NCCL's topology XML (tests/fixtures/topo_xml, source in each file's first comment).

Expected values read from the XML text: GPUs in PCI bus order, NICs in NCCL's dev order, the path code of each
pair from where the two devices sit in the PCIe tree. Two devices that meet only at their CPU are PHB, NCCL's path
type for any path through the CPU node (src/graph/paths.cc ncclTopoSetPaths, v2.30.7-1); the XML records no host
bridge, so nvidia-smi's NODE (different host bridges of one NUMA node) cannot be told from its PHB.
"""

import json
from pathlib import Path

import pytest
from cli_runs import exit_code
from hypothesis import given, settings
from hypothesis import strategies as st

from nvcourse.cli import main
from nvcourse.topology.topo_parser import parse_topo
from nvcourse.topology.topo_xml import looks_like_xml

FIX = Path(__file__).parent / "fixtures" / "topo_xml"
IBM = FIX / "h100_vsi_8nic_roce_ibm_cloud.xml"
ALL = sorted(FIX.glob("*.xml"))


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.stem)
def test_every_dump_carries_its_source_and_reads(path):
    text = path.read_text(encoding="utf-8")
    assert "source: http" in text.split("<system", 1)[0]
    res = parse_topo(text)
    assert res.gpus and res.source_format == "nccl-xml"
    # the same JSON keys as a `topo -m` read, plus the XML's own
    assert {"gpus", "nics", "links", "nic_names", "affinity", "graph", "notes"} <= set(res.to_json())


def test_ibm_h100_vsi_codes_from_the_tree():
    res = parse_topo(IBM.read_text(encoding="utf-8"))
    assert res.gpus == [f"GPU{i}" for i in range(8)] and len(res.nics) == 8
    assert res.nic_names["NIC0"] == "mlx5_0" and res.nic_names["NIC7"] == "mlx5_7"
    # every GPU has 5+5+4+4 = 18 links to the four NVSwitch targets f3..f6
    assert {res.codes[("GPU0", g)] for g in res.gpus[1:]} == {"NV18"}
    # GPU0 (bus a4) and mlx5_7 (bus a3) sit under bridge a1: PIX; mlx5_6 under ab, same <cpu numaid="0">: they
    # meet only at the CPU, PHB; mlx5_0 (bus e9) is on NUMA node 1: SYS
    assert res.codes[("GPU0", "NIC7")] == "PIX" and res.codes[("GPU0", "NIC6")] == "PHB"
    assert res.codes[("GPU0", "NIC0")] == "SYS" and res.codes[("GPU7", "NIC0")] == "PIX"
    x = res.xml
    assert x["gpus"]["GPU0"]["bus_id"] == "0000:a4:00.0" and x["gpus"]["GPU0"]["sm"] == 90
    assert x["gpus"]["GPU1"]["nvlinks"][0] == {"target": "0000:f6:00.0", "count": 4, "tclass": "0x068000"}
    assert {n["speed_Gbps"] for n in x["nics"].values()} == {200.0}
    assert res.affinity["GPU0"]["numa_affinity"] == "0" and res.affinity["GPU7"]["numa_affinity"] == "1"
    assert res.nvswitch_inferred


def test_cli_json_and_text(capsys):
    assert main(["topo", str(IBM), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["source_format"] == "nccl-xml" and d["nccl_xml"]["nics"]["NIC3"]["name"] == "mlx5_3"
    assert {"a": "GPU0", "b": "NIC7", "type": "PIX"} in d["links"]
    assert main(["topo", str(IBM), "--nvlink", "nvlink4"]) == 0
    out = capsys.readouterr().out
    assert "NIC speeds: mlx5_0 200 Gb/s" in out and "NVLinks per GPU: GPU0 18" in out


def test_topo_m_text_is_not_taken_for_xml():
    assert not looks_like_xml("        GPU0    GPU1\nGPU0     X      NV12\n")
    assert looks_like_xml('<?xml version="1.0"?>\n<system version="1">')


@pytest.mark.parametrize("text,words", [
    ('<system version="1">\n<cpu numaid="0">\n<pci busid="x">\n</system>\n', "line 4: malformed NCCL topology XML"),
    ('<system version="1"><cpu numaid="0"/></system>', "without any GPU"),
    ('<?xml version="1.0"?>\n<topology/>', "must start with <system"),
    ('<!DOCTYPE x [<!ENTITY a "b">]><system/>', "DOCTYPE/ENTITY"),
])
def test_malformed_xml_is_one_line_exit_2(text, words, tmp_path, capsys):
    f = tmp_path / "t.xml"
    f.write_text(text)
    assert exit_code(["topo", str(f)]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err and err.count("\n") == 1


@settings(max_examples=60, deadline=None)
@given(cut=st.integers(min_value=1, max_value=8000), junk=st.sampled_from(["", "<", "&", "</pci>", "\x00"]))
def test_fuzz_cut_dumps_raise_only_value_error(cut, junk):
    text = IBM.read_text(encoding="utf-8")
    try:
        parse_topo(text[:cut] + junk + text[cut:cut + 50])
    except ValueError:
        pass


def test_handmade_two_host_nvlink_domain_with_c2c_and_a_socket_nic():
    """HAND-MADE in NCCL's format, shaped like the GB200/GB300 dumps quoted in public issues: every GPU's NVLinks
    go to one switch target 'fffffff:ff:ff.0' (count 18), a <c2c> link to the Grace CPU, two hosts in one file
    (host_hash), and a socket NIC straight under <cpu>."""
    def host(h):
        gpus = "".join(
            f'<pci busid="000{i}:01:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">'
            f'<gpu dev="{i}" sm="100" rank="{2 * h + i}" gdr="1"><nvlink target="fffffff:ff:ff.0" count="18" '
            f'tclass="0x068000"/><c2c bw="44712" count="5"/></gpu></pci>' for i in (0, 1))
        return (f'<cpu host_hash="0x{h + 1:x}" numaid="0" arch="arm64" vendor="NVIDIA">{gpus}'
                f'<nic><net name="eth0" dev="0" speed="10000" port="0" gdr="0"/></nic></cpu>')
    res = parse_topo(f'<system version="2">{host(0)}{host(1)}</system>')
    assert res.gpus == ["GPU0", "GPU1", "GPU2", "GPU3"] and res.nics == ["NIC0", "NIC1"]
    assert {res.codes[("GPU0", g)] for g in ("GPU1", "GPU2", "GPU3")} == {"NV18"}
    # the socket NIC hangs straight off <cpu>: NCCL links it to the CPU node (a PCI link), so the GPU meets it there
    assert res.codes[("GPU0", "NIC0")] == "PHB" and res.xml["gpus"]["GPU0"]["c2c"] == [
        {"bw": 44712, "count": 5}]
    assert res.xml["nics"]["NIC0"]["speed_Gbps"] == 10.0 and res.xml["nics"]["NIC0"]["gdr"] == "0"
    assert any("2 hosts in one file" in n for n in res.notes)


BARE = FIX / "h200_baremetal_dump_cut_nccltests256.xml"
VM = FIX / "h200_vm_dump_cut_nccltests256.xml"


def test_cut_baremetal_dump_is_read_up_to_the_cut():
    """nccl-tests#256: the paste stops at the second <cpu>'s first <nic>; three GPUs and three NICs came before."""
    res = parse_topo(BARE.read_text(encoding="utf-8"))
    assert res.gpus == ["GPU0", "GPU1", "GPU2"] and [res.nic_names[n] for n in res.nics] == ["mlx5_0", "mlx5_1",
                                                                                            "mlx5_2"]
    # GPU 18 and mlx5_0 (19) share bridge 16; GPU 2a and mlx5_1 (29) bridge 27; GPU 3a and mlx5_2 (3b) bridge 38
    assert [res.codes[(f"GPU{i}", f"NIC{i}")] for i in range(3)] == ["PIX", "PIX", "PIX"]
    assert res.codes[("GPU0", "NIC1")] == "PHB" and res.codes[("GPU0", "GPU1")] == "NV18"
    assert {n["speed_Gbps"] for n in res.xml["nics"].values()} == {400.0}
    assert res.notes[0].startswith("the XML stops after line 53")


def test_cut_vm_dump_shows_the_flattened_tree_and_16_gts():
    """nccl-tests#256, the KVM guest: no bridges, numaid -1, NVLink to one switch target, links at 16 GT/s."""
    res = parse_topo(VM.read_text(encoding="utf-8"))
    assert res.gpus == ["GPU0"] and res.nic_names == {"NIC0": "mlx5_0"}
    # <pci busid="0000:05:00.0"><gpu> and <pci busid="0000:0d:00.0"><nic> both straight under <cpu numaid="-1">
    assert res.codes[("GPU0", "NIC0")] == "PHB"
    assert res.xml["gpus"]["GPU0"]["nvlinks"] == [{"target": "fffffff:ff:ff.0", "count": 18, "tclass": "0x068000"}]
    assert {p["link_speed"] for p in res.xml["pcie"]} == {"16.0 GT/s PCIe"}


def test_a_cut_inside_a_tag_or_a_wrong_nesting_is_still_an_error():
    text = BARE.read_text(encoding="utf-8")
    with pytest.raises(ValueError, match="malformed NCCL topology XML"):
        parse_topo(text.rstrip()[:-20])  # cut inside an attribute list
    with pytest.raises(ValueError, match="malformed NCCL topology XML"):
        parse_topo(text.replace("</gpu>", "</pci>", 1))


def test_a100_pcie_two_numa_nodes_dual_port_nic_without_gdr():
    """nccl#2397 (H5's fixtures): 2 A100 PCIe on NUMA 0 and 1, one dual-port 100 Gb/s NIC at x8 on NUMA 0 whose
    two ports NCCL lists under one <nic> with gdr="0"; the NIC's link is x8 on the first host, x16 on the second."""
    for host, width in ((1, 8), (2, 16)):
        res = parse_topo((FIX / f"a100pcie_2gpu_roce_gdr0_host{host}_nccl2397.xml").read_text(encoding="utf-8"))
        assert res.gpus == ["GPU0", "GPU1"] and res.nic_names == {"NIC0": "mlx5_0", "NIC1": "mlx5_1"}
        assert res.codes[("GPU0", "GPU1")] == "SYS" and res.codes[("GPU1", "NIC0")] == "SYS"
        assert res.codes[("NIC0", "NIC1")] == "PIX"
        assert {n["gdr"] for n in res.xml["nics"].values()} == {"0"}
        assert {n["speed_Gbps"] for n in res.xml["nics"].values()} == {100.0}
        assert [p["link_width"] for p in res.xml["pcie"] if p["class"] == "0x020000"] == [width]


def test_cli_text_names_the_narrow_link(capsys):
    assert main(["topo", str(FIX / "a100pcie_2gpu_roce_gdr0_host1_nccl2397.xml")]) == 0
    out = capsys.readouterr().out
    assert "PCIe links of the GPUs and NICs: 16.0 GT/s PCIe x8 (1), 16.0 GT/s PCIe x16 (2) -- they differ" in out
    assert "mlx5_0 100 Gb/s (gdr 0)" in out


def test_a_cloud_topo_file_that_lists_gpus_as_pci_devices_only():
    """AWS's p4d NCCL_TOPO_FILE (tests/fixtures/tables_heldout): 8 A100 as bare <pci class="0x030200"> leaves, two
    under each of four switches, two switches per CPU, and one EFA (class 0x020000) beside them; no <gpu>, no
    <nic>: the EFAs are NICs known only as PCI devices."""
    text = (Path(__file__).parent / "fixtures" / "tables_heldout" / "aws-p4d-24xl.xml").read_text(encoding="utf-8")
    res = parse_topo(text)
    assert res.gpus == [f"GPU{i}" for i in range(8)] and res.nics == ["NIC0", "NIC1", "NIC2", "NIC3"]
    buses = [res.xml["gpus"][g]["bus_id"] for g in res.gpus]
    assert buses == ["0000:10:1c.0", "0000:10:1d.0", "0000:20:1c.0", "0000:20:1d.0", "0000:90:1c.0", "0000:90:1d.0",
                     "0000:a0:1c.0", "0000:a0:1d.0"]
    assert all(g["pci_only"] and g["sm"] is None and g["nvlinks"] == [] for g in res.xml["gpus"].values())
    assert res.codes[("GPU0", "GPU1")] == "PIX" and res.codes[("GPU0", "GPU2")] == "PHB"
    assert res.codes[("GPU0", "GPU4")] == "SYS"
    assert any(n.startswith("8 of the GPUs are PCI devices only") for n in res.notes)
    assert any(n.startswith("4 NICs are PCI devices only") for n in res.notes)
    assert not any(n.startswith("no NIC as NCCL names one") for n in res.notes)


def test_a_dump_keeps_its_gpus_marked_as_gpu_elements():
    res = parse_topo(IBM.read_text(encoding="utf-8"))
    assert not any(g["pci_only"] for g in res.xml["gpus"].values())


def test_xml_with_no_gpu_at_all_is_one_line_exit_2(tmp_path, capsys):
    f = tmp_path / "nic_only.xml"
    f.write_text('<system version="1"><cpu numaid="0"><pci busid="0000:01:00.0" class="0x020000"><nic>'
                 '<net name="mlx5_0" dev="0" speed="200000"/></nic></pci></cpu></system>\n', encoding="utf-8")
    assert exit_code(["topo", str(f)]) == 2
    err = capsys.readouterr().err
    assert "without any GPU" in err and "display class" in err and "Traceback" not in err


def test_nvlinks_to_peer_gpus_with_the_switch_class_are_what_nccl_adds_up():
    """Modal's hand-written B200 file (held-out set 7): each GPU lists 7 peers with count 18 and tclass 0x068000;
    NCCL reads the class, not the target (one NVSwitch node, bandwidths added), so it sees 126 links per GPU."""
    held = Path(__file__).parent / "fixtures" / "tables_heldout2"
    res = parse_topo((held / "modal-b200x8-gvisor-vm.xml").read_text(encoding="utf-8"))
    note = next(n for n in res.notes if n.startswith("a GPU lists NVLinks to 7 other GPUs (count 18 each)"))
    assert "so it sees 126 links per GPU" in note
    assert {res.codes[(a, b)] for a in res.gpus for b in res.gpus if a != b} == {"NV18"}
    # a dump whose GPUs list their links to switch chips (OCI A100: 6 switches x 2) gets no such note
    oci = parse_topo((held / "oci-bm-gpu-a100-v2-8.xml").read_text(encoding="utf-8"))
    assert not any(n.startswith("a GPU lists NVLinks to") for n in oci.notes)


def test_bare_gpu_elements_and_nics_without_speed(capsys):
    """alibaba/rtp-llm's hand-written file (held-out set 7): <gpu dev="N"/> with no sm or nvlink, <net> with no
    speed. NCCL fills the SM version and the NVLinks in from the driver (src/graph/xml.cc ncclTopoGetXmlFromGpu,
    only where the element has none), so the note says the codes lack them; no empty 'NIC speeds:' line."""
    path = Path(__file__).parent / "fixtures" / "tables_heldout2" / "rtpllm-cx8-bond-8gpu.xml"
    res = parse_topo(path.read_text(encoding="utf-8"))
    assert any(n.startswith("8 <gpu> elements list no NVLink: given as NCCL_TOPO_FILE") for n in res.notes)
    assert main(["topo", str(path)]) == 0
    out = capsys.readouterr().out
    assert "NIC speeds" not in out and "NICs: 12" in out
    # a dump whose GPUs carry sm and nvlinks gets no such note
    oci = Path(__file__).parent / "fixtures" / "tables_heldout2" / "oci-bm-gpu-a100-v2-8.xml"
    assert not any("list no NVLink" in n for n in parse_topo(oci.read_text(encoding="utf-8")).notes)


FIXTURES = Path(__file__).parent / "fixtures"


def _notes(rel: str) -> list[str]:
    return parse_topo((FIXTURES / rel).read_text(encoding="utf-8")).notes


def test_what_nccl_does_with_a_files_gdr_and_paths_is_said():
    """From the fabric engineer's review of the XML outputs (2026-12-07), each against NCCL 2.30.7's source:
    a NIC with gdr 0 gets no GPUDirect RDMA (src/graph/paths.cc ncclTopoCheckGdr: net gdrSupport 0); a GPU
    whose nearest NIC is reached only through a CPU (PHB/SYS) gets none at the default NCCL_NET_GDR_LEVEL (PXB,
    or P2C with C2C), a GPU on C2C is left out; an NVLink to the GPU itself links nothing."""
    host1 = _notes("topo_xml/a100pcie_2gpu_roce_gdr0_host1_nccl2397.xml")
    assert any(n.startswith("mlx5_0, mlx5_1 report gdr 0: NCCL does not use GPUDirect RDMA") for n in host1)
    assert any(n.startswith("GPU0, GPU1 reach their nearest NIC only through a CPU") for n in host1)
    # a dump whose NICs sit on the GPUs' PCIe switches (OCI A100, PXB/PIX): neither note
    oci = _notes("tables_heldout2/oci-bm-gpu-a100-v2-8.xml")
    assert not any("gdr 0" in n or "nearest NIC only" in n for n in oci)
    # DGX Spark GB10: the GPU reaches the CPU over C2C, so no CPU-path note; its socket interfaces report gdr 0
    gb10 = _notes("tables_heldout/nvidia-gb10-dgx-spark-pr2202.xml")
    assert not any("nearest NIC only" in n for n in gb10) and any("tailscale0 report gdr 0" in n for n in gb10)
    ncv4 = _notes("tables_heldout/azure-ncv4.xml")
    assert any(n.startswith("4 GPUs list NVLinks whose target is the GPU itself") for n in ncv4)
    # a file that states its switch (tclass 0x068000) is not told a switch "must be present"
    assert not any("a switch must be present" in n for n in _notes("tables_heldout/oci-bm-gpu4-8-a100.xml"))


def test_differing_pcie_links_are_explained_as_nccl_writes_them(capsys):
    """NCCL writes sysfs max_link_speed/max_link_width, the lower of the device's and its port's (src/graph/xml.cc),
    so two widths in a dump are devices or slots, not a link that trained lower."""
    assert main(["topo", str(FIXTURES / "topo_xml/a100pcie_2gpu_roce_gdr0_host1_nccl2397.xml")]) == 0
    out = capsys.readouterr().out
    assert "16.0 GT/s PCIe x8 (1), 16.0 GT/s PCIe x16 (2) -- they differ: NCCL writes each device's widest" in out
    assert "trained lower, or a VM" not in out


def test_the_text_names_each_gpus_nearest_nic(capsys):
    """The IBM Cloud H100 file lists its NICs in the reverse order of the GPUs: GPU0's PIX partner is mlx5_7, so
    rails and NCCL_IB_HCA lists built from indices would pair every GPU with the wrong NIC."""
    assert main(["topo", str(FIXTURES / "topo_xml/h100_vsi_8nic_roce_ibm_cloud.xml")]) == 0
    out = capsys.readouterr().out
    assert "Nearest NIC per GPU: GPU0 mlx5_7 (PIX), GPU1 mlx5_6 (PIX)" in out and "GPU7 mlx5_0 (PIX)" in out
    # ties are listed together; a GPU on the other socket says SYS
    assert main(["topo", str(FIXTURES / "topo_xml/a100pcie_2gpu_roce_gdr0_host1_nccl2397.xml")]) == 0
    assert "Nearest NIC per GPU: GPU0 mlx5_0/mlx5_1 (PHB), GPU1 mlx5_0/mlx5_1 (SYS)" in capsys.readouterr().out
