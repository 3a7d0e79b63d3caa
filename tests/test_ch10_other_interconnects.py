"""Chapter 10: the sourced contrast and the numerics lab (BF16 rounding emulated bit for bit)."""

from __future__ import annotations

import numpy as np
import pytest

from nvcourse import catalog
from nvcourse.chapters import ch10_other_interconnects as ch


def test_bf16_rounding_by_hand():
    x = np.array([1.0, 1 + 2**-8, 1 + 1.5 * 2**-8, 1 + 3 * 2**-8, -2.0], dtype=np.float32)
    # 1 + 2^-8 is half way between 1 and 1 + 2^-7: ties go to the even mantissa (1); 1.5 and 3 ulp-halves round up
    assert ch.to_bf16(x).tolist() == [1.0, 1.0, 1 + 2**-7, 1 + 2**-6, -2.0]


def test_pair_bandwidth_from_data_and_catalog():
    mesh, switch = ch.pair_bandwidth_rows()
    assert mesh["one_peer_GBps"] == 64 and mesh["all_peers_GBps"] == 7 * 64  # 128 GB/s bidirectional per link
    assert switch["one_peer_GBps"] == switch["all_peers_GBps"] == catalog.get_system("dgx-h100").scaleup_GBps_dir


def test_ring_rounding_grows_with_ranks_fp32_does_not():
    two, eight, big = (ch.ring_vs_fp32_error(n) for n in (2, 8, 72))
    assert two["ring_bf16"] == pytest.approx(two["fp32_accumulate"])  # one addition: one rounding either way
    assert eight["ring_bf16"] > 1.5 * eight["fp32_accumulate"]
    assert big["ring_bf16"] > 4 * big["fp32_accumulate"]
    assert big["fp32_accumulate"] == pytest.approx(two["fp32_accumulate"], rel=0.2)  # one rounding: flat
    assert ch.order_changes_bits(2) == 0.0 and ch.order_changes_bits(8) > 0.3


def test_tables_and_box():
    t = ch.contrast_table_html()
    assert "MI300X" in t and "UALink" in t and "TPU v4" in t and "NVL576" in t
    box = ch.numerics_box()
    before = box.readout.value
    box.controls["ranks"].value = 64
    assert box.last_error is None and box.readout.value != before


def test_data_is_sourced():
    d = ch.raw()
    for key in ("mi300x", "ualink", "tpu_v4", "gb300"):
        for field, src in d[key]["src"].items():
            assert field in d[key] and src in d["sources"], (key, field)
