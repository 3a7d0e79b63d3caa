"""Catalog integrity: every figure has a source and a unit, and stated totals agree with their parts."""

import math

import pytest

from nvcourse import catalog

RECORD_TABLES = ("links", "gpus", "systems")


def _numeric_fields(record):
    for key, value in record.items():
        if isinstance(value, bool) or key == "src":
            continue
        if isinstance(value, (int, float)) or (
            isinstance(value, list) and value and isinstance(value[0], (int, float))
        ):
            yield key, value


@pytest.mark.parametrize("table", RECORD_TABLES)
def test_every_numeric_field_has_a_unit_or_is_a_count(table):
    for rid, record in catalog.raw()[table].items():
        for key, _ in _numeric_fields(record):
            assert key in catalog.COUNT_FIELDS or key.endswith(catalog.UNIT_SUFFIXES), (
                f"{table}.{rid}.{key}: name must end in a unit suffix {catalog.UNIT_SUFFIXES} or be a count"
            )


@pytest.mark.parametrize("table", RECORD_TABLES)
def test_every_numeric_field_has_a_source(table):
    known = set(catalog.raw()["sources"])
    for rid, record in catalog.raw()[table].items():
        src = record.get("src", {})
        for key, _ in _numeric_fields(record):
            assert key in src, f"{table}.{rid}.{key} has no source in its `src` table"
            ref = src[key]
            if ref.startswith(("derived:", "assumption:")):
                assert len(ref.split(":", 1)[1].strip()) > 3, f"{table}.{rid}.{key}: say what was derived or assumed"
            else:
                assert ref in known, f"{table}.{rid}.{key} cites unknown source {ref!r}"
        assert set(src) <= set(record), f"{table}.{rid}: src names fields that do not exist: {set(src) - set(record)}"


def test_every_source_is_cited_and_has_a_url():
    cited = {ref for t in RECORD_TABLES for r in catalog.raw()[t].values() for ref in r.get("src", {}).values()}
    for key, s in catalog.sources().items():
        assert s.url.startswith("https://"), key
        assert key in cited, f"source {key!r} is never cited"


def test_required_ids_exist():
    assert {"pcie-8gpu", "dgx-1-v100", "dgx-a100", "dgx-h100", "hgx-h200", "dgx-b200", "gb200-nvl72"} <= set(
        catalog.systems()
    )
    assert {
        "pcie3",
        "pcie4",
        "pcie5",
        "pcie6",
        "nvlink1",
        "nvlink2",
        "nvlink3",
        "nvlink4",
        "nvlink5",
        "ib-edr",
        "ib-hdr",
        "ib-ndr",
        "ib-xdr",
        "roce-100g",
        "roce-200g",
        "roce-400g",
        "roce-800g",
    } <= set(catalog.links())
    assert {"p100", "v100", "a100", "h100", "h200", "b200"} <= set(catalog.gpus())


@pytest.mark.parametrize("link", list(catalog.links().values()), ids=lambda l: l.id)
def test_link_units_are_consistent(link):
    assert link.kind in catalog.LINK_KINDS
    assert 0.5 < link.efficiency <= 1.0
    if link.line_GBps_bidir is not None:
        assert link.line_GBps_bidir == pytest.approx(2 * link.line_GBps_dir)
    if link.line_Gbps_dir is not None:  # network ports are quoted in bits
        assert link.line_GBps_dir == pytest.approx(link.line_Gbps_dir / 8)
    if link.lanes and link.lane_rate_Gbps_dir:  # per-lane signalling x lanes = link rate (NVLink, IB)
        assert link.lanes * link.lane_rate_Gbps_dir / 8 == pytest.approx(
            link.line_Gbps_dir / 8 if link.line_Gbps_dir else link.line_GBps_dir
        )


@pytest.mark.parametrize("gen, expected", [(3, 15.75), (4, 31.5), (5, 63.0)])
def test_pcie_rate_follows_from_lanes_and_encoding(gen, expected):
    link = catalog.get_link(f"pcie{gen}")
    derived = link.lanes * link.lane_rate_GTps * 128 / 130 / 8  # GT/s x 128b/130b / 8 bits
    assert derived == pytest.approx(expected, rel=2e-3)
    assert link.line_GBps_dir == pytest.approx(derived, rel=2e-3)


@pytest.mark.parametrize("gpu", [g for g in catalog.gpus().values() if g.nvlink], ids=lambda g: g.id)
def test_links_times_per_link_rate_equals_nvidia_per_gpu_total(gpu):
    link = catalog.get_link(gpu.nvlink)
    assert gpu.nvlink_links * link.line_GBps_bidir == pytest.approx(gpu.nvlink_GBps_bidir)


def test_nvidia_headline_totals():
    # Hand-checked against NVIDIA's headline per-GPU NVLink figures (bidirectional): 160/300/600/900/1800 GB/s.
    totals = {g: catalog.get_gpu(g).nvlink_GBps_bidir for g in ("p100", "v100", "a100", "h100", "b200")}
    assert totals == {"p100": 160, "v100": 300, "a100": 600, "h100": 900, "b200": 1800}


def test_sparse_headline_is_twice_the_dense_peak():
    # NVIDIA's H100 page: BF16 1,979 TFLOPS "with sparsity"; the dense 989 is half of 1,978.9, rounded.
    # B200 (HGX, Lockwood's notes): BF16 2,250 matrix / 4,500 sparse.
    quoted = {g.id: g.bf16_sparse_TFLOPS for g in catalog.gpus().values() if g.bf16_sparse_TFLOPS}
    assert quoted == {"h100": 1979, "b200": 4500}
    for gid, sparse in quoted.items():
        assert abs(sparse / 2 - catalog.get_gpu(gid).bf16_TFLOPS) <= 1, gid


@pytest.mark.parametrize("system", list(catalog.systems().values()), ids=lambda s: s.id)
def test_system_consistency(system):
    gpu = system.gpu_spec
    if system.has_nvlink:
        assert system.links_per_gpu == gpu.nvlink_links
        assert system.scale_up_link == gpu.nvlink
    if system.switch_links_per_gpu:
        assert len(system.switch_links_per_gpu) == system.nvswitch_count
        assert sum(system.switch_links_per_gpu) == system.links_per_gpu
    assert system.nic.kind in ("infiniband", "ethernet")
    assert system.gpus_per_domain % system.gpus_per_host == 0 or system.gpus_per_domain == 1
    if system.in_switch_reduction:
        assert system.nvswitch_count > 0 and system.nvls_min_gpus is not None
    assert set(system.src) >= {"gpus_per_host", "links_per_gpu", "nics_per_host"}


def test_nvl72_is_one_tier_with_a_link_to_every_switch():
    nvl = catalog.get_system("gb200-nvl72")
    assert nvl.gpus_per_domain == 72 and nvl.nvswitch_count == 18 and nvl.switch_trays == 9
    assert set(nvl.switch_links_per_gpu) == {1}
    # 72 GPUs x 1.8 TB/s = 129.6 TB/s, NVIDIA's "130 TB/s" of GPU bandwidth
    assert math.isclose(72 * nvl.gpu_spec.nvlink_GBps_bidir / 1000, 129.6)


def test_switch_ports_add_up():
    # NVL72: 9 trays x 144 ports = 72 GPUs x 18 links; 144 ports x 100 GB/s (NVLink 5, both directions) = 14.4 TB/s
    nvl = catalog.get_system("gb200-nvl72")
    assert nvl.switch_trays * nvl.switch_tray_ports == nvl.gpus_per_domain * nvl.links_per_gpu
    assert nvl.switch_tray_ports == 2 * nvl.switch_chip_ports
    assert nvl.switch_tray_GBps_bidir == pytest.approx(nvl.switch_tray_ports * nvl.link.line_GBps_bidir)
    for sid in ("dgx-h100", "hgx-h200", "dgx-b200", "gb200-nvl72"):
        s = catalog.get_system(sid)
        # every chip has the ports its GPUs use (H100: 8 GPUs x 5 links on the busiest of the four chips = 40 of 64)
        per_chip_use = s.gpus_per_domain * max(s.switch_links_per_gpu)
        assert per_chip_use <= s.switch_chip_ports, sid


def test_derived_properties():
    h100 = catalog.get_system("dgx-h100")
    assert h100.scaleup_GBps_dir == 450.0  # 18 x 25 GB/s
    assert h100.scaleup_achievable_GBps_dir == pytest.approx(370.8)  # NCCL's 18 x 20.6
    assert h100.scaleout_GBps_dir_per_gpu == 50.0  # one 400 Gb/s NIC per GPU
    ndr = catalog.get_link("ib-ndr")
    assert ndr.beta_Bps == pytest.approx(47e9)
    assert ndr.alpha_s == pytest.approx(14e-6)


@pytest.mark.parametrize(
    "getter, bad", [(catalog.get_system, "dgx-9000"), (catalog.get_link, "nvlink9"), (catalog.get_gpu, "x")]
)
def test_unknown_ids_list_the_allowed_ones(getter, bad):
    with pytest.raises(ValueError, match=r"unknown .* allowed: "):
        getter(bad)


def test_describe_source_labels_assumptions():
    assert catalog.describe_source("assumption:foo bar").startswith("ASSUMPTION")
    assert catalog.describe_source("hc22").endswith(">")


def test_record_ids_match_their_keys():
    for table in (catalog.links(), catalog.gpus(), catalog.systems()):
        assert all(rec.id == key for key, rec in table.items())


def test_dgx1_mesh_and_socket_structure():
    # DGX-1 (V100): every GPU spends its 6 NVLink 2 links; quads {0..3} and {4..7} are fully connected;
    # the only cross-quad links are i <-> i+4; pairs like 0-5 have none (nvidia-smi topo -m: SYS).
    dgx1 = catalog.get_system("dgx-1-v100")
    links = dgx1.nvlink_map
    per_gpu = [sum(n for (a, b), n in links.items() if g in (a, b)) for g in range(8)]
    assert per_gpu == [6] * 8
    cross = {(a, b) for a, b in links if (a < 4) != (b < 4)}
    assert cross == {(0, 4), (1, 5), (2, 6), (3, 7)}
    assert (0, 5) not in links and (0, 6) not in links
    assert dgx1.gpu_socket == (0, 0, 0, 0, 1, 1, 1, 1)
    pcie = catalog.get_system("pcie-8gpu")
    assert len(set(pcie.gpu_pcie_leaf)) == 4 and len(pcie.gpu_socket) == pcie.gpus_per_host
