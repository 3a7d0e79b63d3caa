"""The `nvidia-smi topo -m` reader on the real outputs shipped in nvcourse/data/topo, on broken input, and fuzzed."""

import io
import json
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nvcourse import cli
from nvcourse.topology import bisection_bandwidth, nccl_rings
from nvcourse.topology.topo_parser import example_files, parse_topo, read_topo

EXAMPLES = example_files()


def text_of(stem):
    return EXAMPLES[stem].read_text(encoding="utf-8")


def test_examples_are_shipped_with_a_source_line():
    assert set(EXAMPLES) >= {"dgx1-v100-cube-mesh", "dgx-a100-10nic", "hgx-h20-nvswitch", "a100-8gpu-simple",
                             "pcie-8gpu-vllm"}
    for stem in EXAMPLES:
        assert text_of(stem).startswith("# Source: ")


def test_dgx1_cube_mesh():
    r = read_topo(EXAMPLES["dgx1-v100-cube-mesh"])
    assert r.gpus == [f"GPU{i}" for i in range(8)] and r.nics == ["mlx5_0"]
    # from the GPU0 row: X NV1 NV1 NV2 NV2 SYS SYS SYS NODE
    assert [r.codes[("GPU0", d)] for d in r.devices[1:]] == ["NV1", "NV1", "NV2", "NV2", "SYS", "SYS", "SYS", "NODE"]
    nv = r.nvlink_pairs()
    # 16 NVLink pairs: 8 single and 8 double (24 links = 8 GPUs x 6 / 2)
    assert len(nv) == 16 and sorted(nv.values()).count(2) == 8 and sum(nv.values()) == 24
    assert not r.nvswitch_inferred
    assert r.affinity["GPU4"] == {"cpu_affinity": "12-23,36-47"}
    assert r.codes[("mlx5_0", "GPU2")] == "PIX"


def test_dgx_a100_with_nic_legend_and_numa_columns():
    r = read_topo(EXAMPLES["dgx-a100-10nic"])
    assert len(r.gpus) == 8 and r.nics == [f"NIC{i}" for i in range(10)]
    assert r.nic_names["NIC8"] == "mlx5_8" and r.has_legend
    assert r.affinity["GPU4"] == {"cpu_affinity": "112-127,240-255", "numa_affinity": "7", "gpu_numa_id": "N/A"}
    assert r.codes[("NIC8", "NIC9")] == "PIX" and r.codes[("GPU6", "NIC7")] == "PXB"
    # 18 devices -> 18 x 17 / 2 = 153 unordered pairs
    assert len(r.links()) == 153
    # 7 peers x NV12 = 84 links per GPU: no GPU has that many, so a switch is inferred
    assert r.nvswitch_inferred
    kinds = [k for _, k in r.graph.nodes(data="kind")]
    assert kinds.count("nvswitch") == 1 and kinds.count("nic") == 10


def test_hgx_h20_rail_nics():
    r = read_topo(EXAMPLES["hgx-h20-nvswitch"])
    assert r.nic_names["NIC0"] == "mlx5_1"
    assert all(r.codes[(f"GPU{i}", f"NIC{i}")] == "PIX" for i in range(8))
    assert r.codes[("GPU0", "NIC4")] == "SYS" and r.codes[("GPU0", "NIC1")] == "NODE"
    # each GPU and its PIX NIC share one PCIe switch in the rebuilt graph
    G = read_topo(EXAMPLES["hgx-h20-nvswitch"], pcie="pcie5").graph
    sw = [n for n in G.neighbors("GPU3") if G.nodes[n]["kind"] == "pcie_switch"]
    assert len(sw) == 1 and "NIC3" in set(G.neighbors(sw[0]))


def test_simple_matrix_after_a_shell_prompt_groups_cpus_by_numa():
    r = read_topo(EXAMPLES["a100-8gpu-simple"])
    assert r.nics == [] and r.affinity["GPU5"]["numa_affinity"] == "1"
    cpus = [n for n, k in r.graph.nodes(data="kind") if k == "cpu"]
    assert len(cpus) == 2  # NUMA 0 holds GPU0-3, NUMA 1 holds GPU4-7


def test_pcie_server_rebuilds_the_same_tree_as_the_catalog_model():
    """vLLM #11122: GPU0-GPU1 PIX (one leaf switch), PXB within a socket, SYS across.

    With PCIe 4 x16 links (31.5 GB/s per direction): the sockets meet through one root-port uplink each,
    so the bisection is 31.5, as in the hand calculation for the catalog's pcie-8gpu model.
    """
    r = read_topo(EXAMPLES["pcie-8gpu-vllm"], pcie="pcie4")
    G = r.graph
    leaf = [n for n in G.neighbors("GPU0") if G.nodes[n]["kind"] == "pcie_switch"]
    assert len(leaf) == 1 and "GPU1" in set(G.neighbors(leaf[0]))
    assert sum(1 for _, k in G.nodes(data="kind") if k == "cpu") == 2
    assert bisection_bandwidth(G).GBps_dir == pytest.approx(31.5)


def test_nvlink_generation_gives_bandwidth():
    """DGX-1 matrix with NVLink 2 (25 GB/s per link per direction): quads split cuts 6 links = 150."""
    r = read_topo(EXAMPLES["dgx1-v100-cube-mesh"], nvlink="nvlink2")
    H = r.graph.subgraph(r.gpus)
    assert H.edges["GPU0", "GPU3"]["GBps_dir"] == 50.0
    assert bisection_bandwidth(H).GBps_dir == pytest.approx(150.0)
    assert nccl_rings(H).n_rings == 6
    with pytest.raises(ValueError, match="nvlink="):
        bisection_bandwidth(read_topo(EXAMPLES["dgx1-v100-cube-mesh"]).graph.subgraph(r.gpus))
    with pytest.raises(ValueError):
        parse_topo(text_of("dgx1-v100-cube-mesh"), nvlink="pcie4")


def test_tabs_and_crlf_give_the_same_matrix():
    for stem in EXAMPLES:
        text = text_of(stem)
        tabbed = "\r\n".join("\t".join(line.split()) if not line.startswith("#") else line
                             for line in text.splitlines())
        assert parse_topo(tabbed).codes == parse_topo(text).codes


# ----------------------------------------------------------------------------------------- broken input

GOOD = """\
        GPU0    GPU1    GPU2    mlx5_0  CPU Affinity
GPU0     X      NV2     SYS     PIX     0-7
GPU1    NV2      X      SYS     PIX     0-7
GPU2    SYS     SYS      X      SYS     8-15
mlx5_0  PIX     PIX     SYS      X
"""


def test_good_small_matrix():
    r = parse_topo("$ nvidia-smi topo -m\n" + GOOD)
    assert r.links() == [
        {"a": "GPU0", "b": "GPU1", "type": "NV2"}, {"a": "GPU0", "b": "GPU2", "type": "SYS"},
        {"a": "GPU0", "b": "mlx5_0", "type": "PIX"}, {"a": "GPU1", "b": "GPU2", "type": "SYS"},
        {"a": "GPU1", "b": "mlx5_0", "type": "PIX"}, {"a": "GPU2", "b": "mlx5_0", "type": "SYS"},
    ]


@pytest.mark.parametrize(
    "broken, message",
    [
        (GOOD.replace("GPU1    NV2      X      SYS     PIX     0-7", "GPU1    NV2      X      SYS"),
         r"line 3: row GPU1 has 3 entries"),
        (GOOD.replace("SYS     SYS      X      SYS     8-15", "SYS     SYS      X      SYS     8-15  9 10"),
         r"line 4: row GPU2 has"),
        (GOOD.replace("GPU2    SYS     SYS", "GPU2    SYS     FOO"), r"line 4: unknown code 'FOO'"),
        (GOOD.replace("GPU2    SYS     SYS", "GPU2    SYS     NV0"), r"line 4: unknown code 'NV0'"),
        ("\n".join(GOOD.splitlines()[:-1]) + "\n", r"line 4: the matrix is not square.*mlx5_0"),
        (GOOD.replace("mlx5_0  PIX     PIX", "mlx5_0  PIX     PXB"),
         r"line 5: asymmetric matrix: GPU1->mlx5_0 is PIX but mlx5_0->GPU1 is PXB"),
        (GOOD.replace("GPU1    NV2      X", "GPU1     X      NV2"), r"line 3: .*X"),
        (GOOD + "GPU0     X      NV2     SYS     PIX\n", r"line 6: row 'GPU0' appears twice"),
        (GOOD.replace("GPU2    SYS", "GPU9    SYS"), r"line 4: row label 'GPU9'"),
        ("nothing to see here\n", r"line 1: no matrix header"),
        ("GPU0 GPU0\nGPU0 X\n", r"line 1: device 'GPU0' appears twice"),
    ],
)
def test_malformed_input_names_the_line(broken, message):
    with pytest.raises(ValueError, match=message):
        parse_topo(broken)


def test_nic_legend_must_name_a_nic_of_the_matrix():
    with pytest.raises(ValueError, match="line 8"):
        parse_topo(GOOD + "\nNIC Legend:\n  NIC5: mlx5_5\n")


# ----------------------------------------------------------------------------------------- fuzzing

_TOKENS = ["GPU0", "GPU1", "GPU2", "NIC0", "mlx5_0", "X", "NV1", "NV12", "NV0", "PIX", "PXB", "PHB", "NODE", "SYS",
           "SOC", "CPU", "Affinity", "NUMA", "ID", "0-7", "N/A", "Legend:", "NIC", "NIC0:", "=", "$", "\t", "", "€",
           "NV99999"]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.sampled_from(_TOKENS), max_size=8).map(" ".join), max_size=8).map("\n".join))
def test_fuzz_token_soup_raises_only_value_error(text):
    try:
        parse_topo(text)
    except ValueError:
        pass


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=300))
def test_fuzz_arbitrary_text_raises_only_value_error(text):
    try:
        parse_topo(text)
    except ValueError:
        pass


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_fuzz_mutated_real_output_raises_only_value_error(data):
    text = text_of(data.draw(st.sampled_from(sorted(EXAMPLES))))
    tokens = text.split(" ")
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(tokens) - 1))
        tokens[i] = data.draw(st.sampled_from(_TOKENS + ["\n", "GPU3\n"]))
    try:
        parse_topo(" ".join(tokens), nvlink="nvlink4", pcie="pcie5")
    except ValueError:
        pass


_CODE = st.one_of(st.sampled_from(["PIX", "PXB", "PHB", "NODE", "SYS"]), st.integers(1, 18).map(lambda k: f"NV{k}"))


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 6), st.integers(0, 3), st.data())
def test_fuzz_valid_matrices_round_trip(n_gpu, n_nic, data):
    names = [f"GPU{i}" for i in range(n_gpu)] + [f"NIC{i}" for i in range(n_nic)]
    codes = {}
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            code = data.draw(_CODE) if a.startswith("GPU") and b.startswith("GPU") else data.draw(
                st.sampled_from(["PIX", "PXB", "PHB", "NODE", "SYS"]))
            codes[(a, b)] = codes[(b, a)] = code
    sep = data.draw(st.sampled_from([" ", "  ", "\t", " \t "]))
    lines = [sep + sep.join(names) + sep + "CPU Affinity"]
    for a in names:
        cells = ["X" if a == b else codes[(a, b)] for b in names]
        lines.append(sep.join([a, *cells] + (["0-7"] if a.startswith("GPU") else [])))
    r = parse_topo("\n".join(lines))
    assert r.codes == codes and r.devices == names
    assert len(r.links()) == len(names) * (len(names) - 1) // 2


# ----------------------------------------------------------------------------------------- command line


def test_cli_json(capsys):
    assert cli.main(["topo", str(EXAMPLES["hgx-h20-nvswitch"]), "--json", "--nvlink", "nvlink4"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["gpus"] == [f"GPU{i}" for i in range(8)] and len(out["nics"]) == 8
    assert {"a": "GPU0", "b": "GPU1", "type": "NV18"} in out["links"]
    assert len(out["links"]) == 16 * 15 // 2
    # NV18 on H20 (NVLink 4): 4 GPUs x 18 x 25 = 1800 GB/s per direction
    assert out["metrics"]["bisection_GBps_dir"] == pytest.approx(1800.0)


def test_cli_reads_stdin(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(GOOD))
    assert cli.main(["topo", "-"]) == 0
    assert "GPUs: 3" in capsys.readouterr().out


def test_cli_malformed_input_exits_2_without_traceback(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_text(GOOD.replace("GPU2    SYS     SYS", "GPU2    SYS     FOO"))
    with pytest.raises(SystemExit) as exc:
        cli.main(["topo", str(bad)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "line 4" in err and "Traceback" not in err
