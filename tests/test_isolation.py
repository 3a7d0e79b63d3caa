"""Isolation model (nvcourse.isolation) and the sourced data behind it (data/security.toml)."""

from __future__ import annotations

import math

import pytest

from nvcourse import costmodel, isolation
from nvcourse.observability import counters


@pytest.mark.parametrize("module", [isolation, counters])
def test_every_figure_names_a_source(module):
    data = module.raw()
    sources = set(data["sources"])

    def walk(node):
        if isinstance(node, dict):
            src = node.get("src")
            if isinstance(src, dict):
                for key, s in src.items():
                    assert key in node, f"src names {key!r}, which is not a field here"
                    assert s in sources or s.startswith(("assumption:", "derived:")), s
            elif isinstance(src, str):  # one key, or several joined by ", " when a record rests on two sources
                keys = [src] if src.startswith(("assumption:", "derived:")) else src.split(", ")
                assert all(k in sources or k.startswith(("assumption:", "derived:")) for k in keys), src
            for k, v in node.items():
                if k != "sources":
                    walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(data)
    for s in data["sources"].values():
        assert s["url"].startswith("https://") and s["title"]


def test_nvl72_split_gives_each_tenant_the_course_model_allreduce():
    a, b = isolation.nvl72_split([9, 9], 2**30)
    assert a.gpus == b.gpus == 36  # 9 trays of 4 GPUs
    p = costmodel.predict("allreduce", "gb200-nvl72", 36, 2**30)
    assert a.time_s == pytest.approx(p.time_s) and a.algo == p.algo


def test_nvl72_split_small_tenant_gets_less_busbw_than_the_whole_rack():
    whole = isolation.nvl72_split([18])[0]
    big, small = isolation.nvl72_split([16, 2])
    assert whole.gpus == 72 and small.gpus == 8
    assert small.busbw_GBps < big.busbw_GBps
    # NCCL's NVLS loop moves GPUs x chunk per channel, so 64 GPUs fill their pipeline a little sooner than 72:
    # at 1 GiB the 64-GPU tenant may edge past the whole rack, by no more than a few per cent
    assert big.busbw_GBps == pytest.approx(whole.busbw_GBps, rel=0.03)


@pytest.mark.parametrize("trays", [[10, 9], [0, 4], [], [1.5]])
def test_nvl72_split_rejects_impossible_splits(trays):
    with pytest.raises(ValueError, match="trays"):
        isolation.nvl72_split(trays)


def test_pkey_membership_rules():
    assert isolation.pkey_partition(0x8001) == (1, True)
    assert isolation.pkey_partition(0x7FFF) == (0x7FFF, False)
    assert isolation.pkeys_can_talk(0xFFFF, 0x7FFF)  # default partition: full and limited member
    assert not isolation.pkeys_can_talk(0x7FFF, 0x7FFF)  # two limited members
    assert not isolation.pkeys_can_talk(0x8001, 0x8002)  # different partitions
    with pytest.raises(ValueError, match="pkey"):
        isolation.pkey_partition(0x10000)


@pytest.mark.parametrize(
    "addr, who",
    [
        ("127.0.0.1", "this host only"),
        ("::1", "this host only"),
        ("0.0.0.0", "every interface"),
        ("::", "every interface"),
        ("10.0.0.5", "private network"),
        ("192.168.1.2", "private network"),
        ("8.8.8.8", "internet"),
        ("::ffff:127.0.0.1", "this host only"),
        # documentation ranges stand for public addresses in examples; ipaddress calls them private
        ("203.0.113.7", "internet"),
        ("192.0.2.1", "internet"),
        ("198.51.100.20", "internet"),
        ("2001:db8::1", "internet"),
        ("172.16.0.9", "private network"),
        ("fd00::5", "private network"),
        ("169.254.3.4", "private network"),
    ],
)
def test_exposure_of_an_address(addr, who):
    assert isolation.exposure(addr) == who


def test_exposure_table_shows_every_kind_of_reach():
    # the chapter's table must show a public example as "internet" (TEST-NET-3 once read as "private network")
    from nvcourse.chapters import ch08b_security_and_observability as ch

    html = ch.exposure_table().data
    for who in ("this host only", "every interface", "private network", "internet"):
        assert who in html


def test_exposure_rejects_a_hostname():
    with pytest.raises(ValueError, match="address"):
        isolation.exposure("master-node")


def test_noisy_neighbour_per_flow_fairness_ets_and_strict_priority():
    # 16 nodes, 2 per leaf (8 NICs each), 2:1 oversubscription: 8 uplinks of 50 GB/s = 400 GB/s per leaf.
    # Each leaf has one victim node (8 ring flows up) and one neighbour node (8 rails x 7 peers = 56 flows up).
    none = isolation.noisy_neighbour(qos="none")
    assert none.alone_rate_GBps == pytest.approx(50.0)  # alone: the NIC is the limit
    assert none.shared_rate_GBps == pytest.approx(400 / (8 + 56))  # per-flow share of the leaf's uplinks
    ets = isolation.noisy_neighbour(qos="ets", victim_share=0.5)
    assert ets.shared_rate_GBps == pytest.approx(0.5 * 400 / 8)  # the class's half of the uplinks, 8 flows
    strict = isolation.noisy_neighbour(qos="strict")
    assert strict.shared_rate_GBps == pytest.approx(50.0) and strict.slowdown == pytest.approx(1.0)
    assert none.slowdown > ets.slowdown > 1.0


def test_noisy_neighbour_duty_cycle_interpolates():
    full = isolation.noisy_neighbour(duty=1.0)
    half = isolation.noisy_neighbour(duty=0.5)
    assert isolation.noisy_neighbour(duty=0.0).slowdown == pytest.approx(1.0)
    assert half.slowdown == pytest.approx(1 + (full.slowdown - 1) / 2)


@pytest.mark.parametrize(
    "kw, name",
    [({"qos": "fair"}, "qos"), ({"duty": 2}, "duty"), ({"nodes": 5}, "nodes"), ({"victim_share": 1.0}, "victim_share")],
)
def test_noisy_neighbour_bad_input(kw, name):
    with pytest.raises(ValueError, match=name):
        isolation.noisy_neighbour(**kw)


def test_cc_measurements_are_labelled_single_setups():
    rows = isolation.cc_measurements()
    assert {r["arch"] for r in rows} == {"hopper", "blackwell"}
    for r in rows:
        assert 0 < r["throughput_ratio_low"] <= r["throughput_ratio_high"] <= 1.0
        assert "single published setup" in r["label"]
    assert all(r["arch"] == "blackwell" for r in isolation.cc_measurements("blackwell"))
    with pytest.raises(ValueError, match="arch"):
        isolation.cc_measurements("ampere")


def test_security_constants_match_the_standards():
    d = isolation.raw()
    assert d["infiniband"]["pkey_bits"] == 16 and d["infiniband"]["default_pkey"] == 0xFFFF
    assert d["ethernet"]["vlan_ids_usable"] == 2 ** d["ethernet"]["vlan_id_bits"] - 2
    assert d["ethernet"]["priorities"] == 2 ** d["ethernet"]["pcp_bits"]
    assert not math.isnan(isolation.nvl72_split([1])[0].busbw_GBps)
