"""``nvcourse topo`` on the network devices and C2C links of NCCL's topology XML (nvcourse.topology.topo_nets).

Expected values are read from the fixture text and worked with NCCL's formulas (v2.30.7-1): a ``<pci>`` link is
``width x rate / 80`` GB/s (src/graph/topo.cc ncclTopoAddPci, kvDictPciGen: 32.0 GT/s is 240, 16.0 GT/s 120), a net
``speed / 8000`` GB/s (ncclTopoAddNet, speed in Mb/s), C2C ``bw x count / 1000`` GB/s (ncclTopoAddC2c; NVML gives
``bw`` per link in MB/s); NCCL's socket transport reports guid = dev, port 0, maxconn 65536 and defaults to 10000
Mb/s when it cannot read the interface's speed (src/transport/net_socket.cc).
"""

from pathlib import Path

from nvcourse.cli import main
from nvcourse.topology.topo_nets import is_socket_net, net_notes
from nvcourse.topology.topo_parser import parse_topo

FIX = Path(__file__).parent / "fixtures"
MODAL = FIX / "tables_heldout2" / "modal-b200x8-gvisor-vm.xml"
GB10 = FIX / "tables_heldout" / "nvidia-gb10-dgx-spark-pr2202.xml"
HOST1 = FIX / "topo_xml" / "a100pcie_2gpu_roce_gdr0_host1_nccl2397.xml"
OCI_A100 = FIX / "tables_heldout" / "oci-bm-gpu4-8-a100.xml"
IBM = FIX / "topo_xml" / "h100_vsi_8nic_roce_ibm_cloud.xml"


def _notes(path: Path) -> list[str]:
    return parse_topo(path.read_text(encoding="utf-8")).notes


def test_modal_nets_of_four_adapters_share_one_x16_link():
    # <pci busid="0002:00:00.0" ... link_speed="32.0 GT/s PCIe" link_width="16"><nic> holds mlx5_5..mlx5_8, each
    # speed="400000" with its own guid (0x3456.., 0x945a.., 0x144f.., 0x3c5a..): 16 x 240 / 80 = 48 GB/s for the
    # link, 4 x 400 = 1600 Gb/s = 200 GB/s of ports
    note = next(n for n in _notes(MODAL) if n.startswith("mlx5_5, mlx5_6, mlx5_7, mlx5_8 sit under one PCI device"))
    assert "(0002:00:00.0)" in note and "(32.0 GT/s PCIe x16), which it models at 48 GB/s" in note
    assert "1600 Gb/s (200 GB/s) of line rate in total" in note
    assert "within 48 GB/s per direction (a planning budget, not a rate limit)" in note
    assert "4 different GUIDs, so 4 adapters" in note


def test_modal_first_nic_mixes_speeds_and_two_guids():
    # 0000:00:00.0 holds mlx5_0..3 (100000 Mb/s, guid 0x6e65480003739de0, ports 1-4) and mlx5_4 (200000, guid
    # 0xa45e86000317e390): 4 x 100 + 200 = 600 Gb/s = 75 GB/s against 48 GB/s
    note = next(n for n in _notes(MODAL) if n.startswith("mlx5_0, mlx5_1, mlx5_2, mlx5_3, mlx5_4 sit under"))
    assert "600 Gb/s (75 GB/s)" in note and "speeds differ (100/200 Gb/s)" in note and "2 different GUIDs" in note


def test_modal_mixed_speeds_name_the_slower_nics():
    # speeds 100000, 200000, 400000 in the file; the 400 Gb/s ones are mlx5_5..mlx5_12
    note = next(n for n in _notes(MODAL) if n.startswith("NICs of different speeds"))
    assert "(100/200/400 Gb/s)" in note and "mlx5_0, mlx5_1, mlx5_2, mlx5_3, mlx5_4 are no GPU's local NIC" in note
    assert "mlx5_5" not in note and "NCCL_IB_HCA" in note


def test_dual_port_nic_on_a_gen4_x8_slot_is_pcie_bound():
    # host1: mlx5_0 and mlx5_1 (speed 100000 each, one guid 0x78ad550003d3ebe8) under <pci busid="0000:16:00.0"
    # link_speed="16.0 GT/s PCIe" link_width="8">: 8 x 120 / 80 = 12 GB/s against 200 Gb/s = 25 GB/s
    note = next(n for n in _notes(HOST1) if n.startswith("mlx5_0+mlx5_1 (0000:16:00.0)"))
    assert "(16.0 GT/s PCIe x8), modelled at 12 GB/s against 200 Gb/s (25 GB/s)" in note
    assert "GUID" not in note  # one adapter: two ports of one GUID


def test_ordinary_dual_port_nics_get_one_note_not_eight():
    # OCI A100: eight dual-port 100 Gb/s NICs, each under a 16.0 GT/s PCIe x16 <pci> (24 GB/s against 25 GB/s)
    notes = [n for n in _notes(OCI_A100) if "sit under one PCI device" in n]
    assert len(notes) == 1 and notes[0].count("+") == 8 and "modelled at 24 GB/s" in notes[0]


def test_single_port_nics_get_no_shared_link_note():
    # IBM VSI: one <net> per <nic>
    assert not [n for n in _notes(IBM) if "sit under one PCI device" in n or "different speeds" in n]


def test_gb10_socket_nets_c2c_and_gpu_gdr():
    notes = _notes(GB10)
    sock = next(n for n in notes if n.startswith("wlP9s9, tailscale0 carry what NCCL's socket transport reports"))
    assert "the file lists no RDMA NIC" in sock and "may be NCCL's default, not the link's speed" in sock
    # <c2c bw="43125" count="8"/>: 43125 x 8 / 1000 = 345 GB/s; the GPU's <pci> is 2.5 GT/s PCIe x16: 16 x 15 / 80 = 3
    c2c = next(n for n in notes if n.startswith("GPU0 is joined to its CPU by C2C"))
    assert "8 links of 43125 MB/s" in c2c and "= 345 GB/s" in c2c and "(2.5 GT/s PCIe x16, 3 GB/s" in c2c
    # <gpu dev="0" sm="121" rank="0" gdr="0">
    assert any(n.startswith("GPU0 reports gdr 0") for n in notes)
    # the GPU's own gdr is 0: no claim that P2C keeps GPUDirect RDMA
    assert not any("P2C" in n and "keeps GPUDirect RDMA" in n for n in notes)
    assert any("P2C, which the default GPUDirect RDMA level allows from 2.27, though a GPU that reports gdr 0 gets "
               "none" in n
               for n in notes)


def test_gb10_pcie_line_does_not_blame_a_difference(capsys):
    assert main(["topo", str(GB10)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("PCIe links"))
    assert "they differ" not in line and "C2C, not PCIe, joins GPU0 to the CPU" in line


def test_socket_signature():
    sock = {"dev": 1, "port": 0, "guid": "0x1", "maxconn": 65536, "gdr": "0"}
    assert is_socket_net(sock)
    assert not is_socket_net(sock | {"maxconn": 131072}) and not is_socket_net(sock | {"guid": "0x2"})
    assert not is_socket_net(sock | {"gdr": "1"})


def test_net_notes_without_speed_or_link():
    # a hand-written file: two nets under one <pci> that states no link; no speeds -> nothing to claim
    nets = [{"name": f"ib{i}", "dev": i, "speed_Gbps": None, "port": 1, "gdr": "1", "guid": "0x10", "maxconn": None,
             "bus_id": "0000:01:00.0"} for i in range(2)]
    assert net_notes(nets, [{"bus_id": "0000:01:00.0", "link_speed": None, "link_width": None}], 0) == []
