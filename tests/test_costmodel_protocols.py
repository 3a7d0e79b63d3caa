"""NCCL's protocols and algorithms in the cost model: hand-worked cases, properties, the size sweeps' data."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nvcourse import catalog
from nvcourse.cli import main
from nvcourse.costmodel import NCCL_ALGORITHMS, configure, pair_cost, predict, predict_sweep, sweeps, tuning

H100_B = 18 * 25e9 * 0.824  # 370.8e9 B/s: ring bus bandwidth of 8 H100 (catalog: 18 NVLink 4 x 25 GB/s x 0.824)


# ---- hand-worked, one per protocol, constants read off NCCL 2.30.7 tuning.cc (data/nccl_tuning.toml) ----


def test_ring_ll_on_nvlink_by_hand():
    # base 6.6 + 2(n-1) = 14 steps x 0.6 us = 15.0 us. LL bus bandwidth = min(llMaxBw Hopper 1 node 141,
    # 0.5 x 370.8) = 141 GB/s; algbw = busbw x n / nsteps = 141 x 8/14 = 80.571 GB/s
    c = pair_cost("allreduce", "ring", "LL", configure("dgx-h100", 8))
    assert c.latency_s == pytest.approx(15.0e-6)
    assert 1 / c.s_per_byte == pytest.approx(141e9 * 8 / 14)


def test_ring_ll128_on_nvlink_by_hand():
    # base 14.0 + 14 x 1.9 = 40.6 us; busbw = min(0.92 x 370.8 = 341.14, 16 channels x 36.7 = 587.2) GB/s
    c = pair_cost("allreduce", "ring", "LL128", configure("dgx-h100", 8))
    assert c.latency_s == pytest.approx(40.6e-6)
    assert 1 / c.s_per_byte == pytest.approx(0.92 * H100_B * 8 / 14)


def test_ring_simple_on_nvlink_by_hand():
    # base 8.4 + 14 x 3.4 = 56.0 us; full bandwidth 370.8 GB/s of busbw
    c = pair_cost("allreduce", "ring", "Simple", configure("dgx-h100", 8))
    assert c.latency_s == pytest.approx(56.0e-6)
    assert 1 / c.s_per_byte == pytest.approx(H100_B * 8 / 14)


def test_pcie_has_no_ll128_and_uses_pci_latencies():
    # NCCL enables LL128 only over NVLink: a PCIe box gets LL and Simple; LL ring: 6.6 + 14 x 1.0 = 20.6 us
    p = predict("allreduce", "pcie-8gpu", 8, 8)
    assert set(k.split("/")[1] for k in p.candidates_time_s) == {"LL", "Simple"}
    assert p.proto == "LL" and p.latency_s == pytest.approx(20.6e-6)
    with pytest.raises(ValueError, match="proto 'LL128'"):
        predict("allreduce", "pcie-8gpu", 8, 8, algo="ring", proto="LL128")


def test_tree_ll_across_two_nodes_by_hand():
    # tree: base 6.8 + 2 x ((8-1) x 0.6 NVLink + log2(2) x 5.0 net) = 25.2 us
    c = pair_cost("allreduce", "tree", "LL", configure("dgx-h100", 8, 2))
    assert c.latency_s == pytest.approx(25.2e-6)


def test_nvls_nvlstree_and_pat_latencies_by_hand():
    assert pair_cost("allreduce", "nvls", "Simple", configure("dgx-h100", 8)).latency_s == pytest.approx(25e-6)
    # NVLSTree on 4 nodes: 25 (NVLS in the node) + 2 x log2(4) x 20.9 (net) = 108.6 us
    assert pair_cost("allreduce", "nvlstree", "Simple", configure("dgx-h100", 8, 4)).latency_s == pytest.approx(
        108.6e-6
    )
    # PAT all-gather, 16 nodes x 1 GPU: 8.0 + log2(16) x 14/3.5 + 16 x 2.8 = 68.8 us
    assert pair_cost("allgather", "pat", "Simple", configure("dgx-h100", 1, 16)).latency_s == pytest.approx(68.8e-6)


def test_done_when_8_bytes_on_8_h100():
    # NCCL's tuner model picks ring/LL at 8 B on one 8-GPU H100 node (NVLS's 25 us is slower): 15.0 us
    p = predict("allreduce", "dgx-h100", 8, 8)
    assert (p.algo, p.proto) == ("ring", "LL")
    assert p.time_s == pytest.approx(15.0e-6, rel=1e-3)
    assert p.candidates_time_s["nvls/Simple"] > p.time_s


def test_course_algorithms_are_never_auto_but_available_by_name():
    p = predict("allreduce", "dgx-a100", 8, 1024)
    assert p.algo in NCCL_ALGORITHMS["allreduce"] and p.nccl_algorithm
    d = predict("allreduce", "dgx-a100", 8, 1024, algo="direct")
    assert d.algo == "direct" and not d.nccl_algorithm and d.proto == "Simple"


def test_cli_proto_flag_and_json(capsys):
    assert main(["predict", "allreduce", "--system", "dgx-h100", "--gpus", "8", "--bytes", "8", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["proto"] == "LL" and "ring/LL" in d["candidates_time_s"] and "nvls/Simple" in d["candidates_time_s"]
    # added field: NCCL's own formulas per pair; the same keys, never above the model's time
    assert set(d["candidates_estimate_s"]) == set(d["candidates_time_s"])
    assert all(d["candidates_estimate_s"][k] <= d["candidates_time_s"][k] for k in d["candidates_time_s"])
    argv = ["predict", "allreduce", "--system", "dgx-h100", "--gpus", "8", "--bytes", "1MiB", "--proto", "Simple"]
    assert main([*argv, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["proto"] == "Simple" and all(k.endswith("/Simple") for k in d["candidates_time_s"])
    with pytest.raises(SystemExit) as exc:
        main(["predict", "allreduce", "--system", "dgx-h100", "--gpus", "8", "--bytes", "8", "--proto", "LL256"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "proto" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


# ---- properties ----

_CONFIGS = [("dgx-h100", 8, 1), ("dgx-h100", 8, 2), ("dgx-h100", 8, 16), ("dgx-a100", 8, 1), ("dgx-a100", 4, 4),
            ("pcie-8gpu", 8, 1), ("gb200-nvl72", 72, 1), ("gb200-nvl72", 36, 2), ("dgx-b200", 8, 1),
            ("dgx-1-v100", 8, 2), ("dgx-h100", 1, 32)]  # fmt: skip
_OPS = ["allreduce", "allgather", "reducescatter", "broadcast", "reduce"]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(_CONFIGS), st.sampled_from(_OPS), st.lists(st.integers(1, 2**36), min_size=2, max_size=6))
def test_time_grows_with_size(cfg, op, sizes):
    # except across one of NCCL's NVLS chunk thresholds, where a larger call runs fewer loops (pipeline.py): there
    # it may be faster, by no more than the extra loops of the smaller call
    system, g, k = cfg
    s = np.sort(np.array(sizes, dtype=float))
    sw = predict_sweep(op, system, g, s, nodes=k)
    # the envelope NCCL chooses on (before the channel ramp) grows; so does each pair's time with the ramp
    t = np.min([np.asarray(c.choice_time(s)) for c in sw.costs.values()], axis=0)
    assert np.all(np.diff(t) >= -_nvls_threshold_slack_s(op, system, g, k, s) - 1e-15)
    for key, c in sw.costs.items():
        if c.ramp is not None:
            tc = np.asarray(c.time(s))
            assert np.all(np.diff(tc) >= -1e-12 * tc[1:]), key


def _nvls_threshold_slack_s(op, system, g, k, sizes):
    """For each pair of neighbouring sizes: the smaller one's NVLS extra-loops time where NCCL's chunk differs
    between the two (a threshold lies between them), else 0; all 0 where NCCL runs no NVLS pipeline."""
    try:
        pipe = pair_cost(op, "nvls", "Simple", configure(system, g, k)).pipeline
    except ValueError:  # no NVLS here
        pipe = None
    if pipe is None:
        return np.zeros(len(sizes) - 1)
    chunk = np.asarray(pipe.chunk_bytes_at(sizes), dtype=float).reshape(-1)
    across = chunk[:-1] != chunk[1:]
    return np.where(across, np.asarray(pipe.extra_loops_s(sizes[:-1]), dtype=float).reshape(-1), 0.0)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(_CONFIGS), st.sampled_from(_OPS), st.integers(1, 2**36))
def test_auto_is_never_slower_than_any_forced_nccl_pair(cfg, op, nbytes):
    system, g, k = cfg
    # auto picks before the channel ramp (as NCCL picks the pair, then the channels): by that time it is never slower
    auto = predict(op, system, g, nbytes, nodes=k)
    c = configure(system, g, k)
    mine = float(pair_cost(op, auto.algo, auto.proto, c).choice_time(nbytes))
    for algo in NCCL_ALGORITHMS[op]:
        for proto in tuning.PROTOCOLS:
            try:
                forced = predict(op, system, g, nbytes, nodes=k, algo=algo, proto=proto)
            except ValueError:
                continue  # not an algorithm/protocol NCCL runs here
            assert mine <= float(pair_cost(op, forced.algo, forced.proto, c).choice_time(nbytes)) * (1 + 1e-12)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(_CONFIGS), st.sampled_from(tuning.PROTOCOLS), st.integers(1, 2**36))
def test_ring_allreduce_is_reducescatter_plus_allgather(cfg, proto, nbytes):
    # same steps and bytes as RS then AG; the all-reduce pays NCCL's per-call base latency once, not twice
    system, g, k = cfg
    c = configure(system, g, k)
    try:
        ar, rs, ag = (pair_cost(op, "ring", proto, c) for op in ("allreduce", "reducescatter", "allgather"))
    except ValueError:
        return  # protocol not enabled here (LL128 over PCIe)
    base = tuning.base_latency_us("ring", proto) * 1e-6
    # NCCL's straight line (before its size corrections, which only the all-reduce gets: the ring plateau)
    line = {name: cs.latency_s + nbytes * cs.s_per_byte for name, cs in (("ar", ar), ("rs", rs), ("ag", ag))}
    assert line["ar"] == pytest.approx(line["rs"] + line["ag"] - base, rel=1e-9)
    if (k > 1 and proto == "Simple") and ar.correction is not None:
        assert ar.time(nbytes) >= line["ar"]  # the plateau only adds
    else:
        assert ar.time(nbytes) == pytest.approx(rs.time(nbytes) + ag.time(nbytes) - base, rel=1e-9)


@pytest.mark.parametrize("system", ["dgx-h100", "dgx-a100", "pcie-8gpu", "gb200-nvl72"])
def test_more_gpus_never_lower_the_latency_term(system):
    top = min(catalog.get_system(system).gpus_per_domain, 16) if system != "pcie-8gpu" else 8
    for op in _OPS:
        for algo in ("ring", "tree"):
            for proto in tuning.PROTOCOLS:
                lats = []
                for g in range(2, top + 1):
                    for k in (1, 2, 4):
                        try:
                            lats.append((g, k, pair_cost(op, algo, proto, configure(system, g, k)).latency_s))
                        except ValueError:
                            pass
                for g, k, lat in lats:
                    for g2, k2, lat2 in lats:
                        if g2 >= g and k2 >= k:
                            assert lat2 >= lat - 1e-15, (op, algo, proto, g, k, g2, k2)


# ---- the sweeps' data: sources and units ----


def test_every_sweep_is_sourced_and_consistent():
    raw = sweeps._raw_sweeps()
    assert len(raw) >= 5
    for s in raw:
        assert s["url"].startswith("https://"), s["id"]
        assert s["system"] in catalog.systems(), s["id"]
        assert s["launch"] in ("single-process", "process-per-gpu"), s["id"]
        assert isinstance(s["cuda_graphs"], bool) and isinstance(s["nccl_version"], str)
        assert s["quote"] and s["note"], s["id"]
        assert ("time_us" in s) != ("busbw_GBps" in s), s["id"]
        values = s.get("time_us", s.get("busbw_GBps"))
        assert len(values) == len(s["sizes"]) and all(v > 0 for v in values), s["id"]
        assert s["sizes"] == sorted(s["sizes"]) and len(set(s["sizes"])) == len(s["sizes"]), s["id"]
        # every sweep reaches the bandwidth plateau: 1 GiB, or its last four sizes at one busbw (within 5 %)
        if max(s["sizes"]) < 2**30:
            last = [p.bytes / p.time_s for p in sweeps.points() if p.sweep == s["id"]][-4:]
            assert max(last) / min(last) < 1.05, s["id"]
        if "busbw_GBps" in s:  # two printed decimals: only >= 0.10 GB/s (<= 5 % rounding) is used
            assert min(s["busbw_GBps"]) >= 0.10, s["id"]
        if not s.get("covered", True) or "covered_up_to_bytes" in s:
            assert s["uncovered_why"], s["id"]
        if "covered_up_to_bytes" in s:  # described up to a size the run has, and not beyond its last size
            assert s["covered_up_to_bytes"] in s["sizes"][:-1], s["id"]
    # a published time is the busbw column's size x factor / busbw: one row checked by hand
    # (Azure ND H100 v5, 1 GiB: busbw 466.35 GB/s -> 1.75 x 1073741824 / 466.35e9 = 4.0293 ms)
    pts = [p for p in sweeps.points() if p.sweep == "azure-nd-h100-v5-allreduce" and p.bytes == 2**30]
    assert pts[0].time_s == pytest.approx(4.0293e-3, rel=1e-4)


def test_sweep_report_states_bands_and_systems():
    rows = sweeps.compare()
    bands = sweeps.band_medians(rows)
    assert set(bands) == {"<= 64 KiB", "64 KiB-16 MiB", ">= 16 MiB"}
    assert all(0 <= m < 10 and n > 0 for m, n in bands.values())
    text = sweeps.report(rows)
    assert "IN-SAMPLE" in text and "runs the model describes" in text and "per sweep at >= 1 GiB" in text
    # a sweep that forced NVLS is predicted as NVLS, one that forced the ring as the ring
    picked = {(r.point.sweep, r.algo) for r in rows}
    assert ("azure-nd-h100-v5-allreduce", "nvls") in picked
    assert all(a == "ring" for s, a in picked if s == "azure-nd-gb200-v6-allreduce-4gpu")
    assert math.isfinite(sum(r.error for r in rows))


def test_validation_figures_stay_where_the_report_states_them():
    # the figures the README quotes (python -m nvcourse.costmodel.sweeps); a model change that worsens them fails here
    rows = sweeps.compare()
    covered = sweeps.band_medians([r for r in rows if r.point.covered])
    assert covered["<= 64 KiB"][0] <= sweeps.TARGETS["<= 64 KiB"]
    assert covered["64 KiB-16 MiB"][0] <= sweeps.TARGETS["64 KiB-16 MiB"]
    # 10.9 % and 10.6 % with NCCL's size corrections (tree factors, ring plateau) and the host CPU terms, on the
    # catalog's NICs (the seen AWS EFA runs, p5 139 % below 64 KiB, are reported apart in the appendix)
    own_nics = sweeps.band_medians([r for r in rows if r.point.covered
                                    and not (r.point.fabric or "").startswith("efa-")])
    # (14.6 % between 64 KiB and 16 MiB since runs once held out count as seen, 2026-12-07: the 2 x 8 B200 all-reduce on
    # InfiniBand, 39 % there, and SuperBench's one-process A100 all-to-all, 64 %; 17.4 % since SuperBench's one-process
    # A100 broadcast and reduce joined them, 2026-12-07, 51-52 % there, with the 4-H100 all-reduce: 14.6 % without them)
    assert own_nics["<= 64 KiB"][0] <= 0.12 and own_nics["64 KiB-16 MiB"][0] <= 0.175
    # the held-out launch floor (data/launch.toml) is what brings the small sizes in: GPU time alone misses more
    device = sweeps.band_medians([r for r in sweeps.compare(with_launch=False) if r.point.covered])
    assert device["<= 64 KiB"][0] > covered["<= 64 KiB"][0] and device["64 KiB-16 MiB"][0] > covered["64 KiB-16 MiB"][0]
    # target 5 %: 2.5 % on the catalog's NICs since the NVLS pipeline charges the loops a shrunken chunk adds (6.2 %
    # without them); with the AWS EFA runs (p5, 2-32 nodes, fast by 8-20 % from 8 nodes, and the two seen 2-node
    # EFA runs) 4.5 %; 3.1 % since SuperBench's 8-A100 one-process all-gather joined the calibration runs (2026-12-07:
    # x0.57-0.79 from 16 to 128 MiB, its NCCL of 2021 not printed); 3.8-3.9 % since runs once held out count as seen
    # (SuperBench's all-to-all, 6-11 % fast from 256 MiB, the 2- and 4-node B200 send/recv, the 2-node B200 all-reduce);
    # 4.0 % since SuperBench's broadcast and reduce and the 4-H100 all-reduce joined them (2026-12-07)
    own = [r for r in rows if r.point.covered and not (r.point.fabric or "").startswith("efa-")]
    assert sweeps.band_medians(own)[">= 16 MiB"][0] <= 0.041
    assert covered[">= 16 MiB"][0] <= sweeps.TARGETS[">= 16 MiB"]
    large = sweeps.system_medians(rows)
    misses = {k for k, (m, _) in large.items() if m > sweeps.TARGETS["per system >= 1 GiB"]}
    assert misses == {"coreweave-gb200-nvl72-allreduce"}  # NVL72 NVLS ~18 % fast; every other run within 15 %
    # NCCL's NVLSTree cap (perChMaxNVLSTreeBw) brings the 2-node H100 NVLSTree run within 2.1 % (11 % without it; 1.2 %
    # before NVLSTree's pipeline fill, a constant two loops, about 136 us, that brought 16-512 MiB from x0.66-0.95 to
    # x0.96-1.03 and moves 1-16 GiB from x1.01 to x1.02)
    assert large["nccl-tests-309-h100-2node-ib-allreduce"][0] <= 0.021
    fill = [r for r in rows if r.point.sweep == "nccl-tests-309-h100-2node-ib-allreduce"
            and 16 * 2**20 <= r.point.bytes <= 512 * 2**20]
    assert all(0.95 <= r.predicted_s / r.point.time_s <= 1.04 for r in fill) and {r.algo for r in fill} == {"nvlstree"}
    # the appendix's note on NVLSTree's fill quotes this run's bands as they are now
    from nvcourse.costmodel import appendix

    note = next(n for n in appendix.IN_SAMPLE_NOTES if n.startswith("NVLSTree across nodes"))
    run = sweeps.band_medians([r for r in rows if r.point.sweep == "nccl-tests-309-h100-2node-ib-allreduce"])
    assert f"64 KiB-16 MiB 19.9 -> {100 * run['64 KiB-16 MiB'][0]:.1f} %" in note
    assert f">= 16 MiB 5.2 -> {100 * run['>= 16 MiB'][0]:.1f} %" in note
