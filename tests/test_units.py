"""Units: sizes in bytes, rates in bytes per second, decimal GB vs binary GiB, bits vs bytes."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nvcourse import units


@pytest.mark.parametrize(
    "text, expected",
    [
        ("4096", 4096),
        (4096, 4096),
        ("64MiB", 64 * 1024 * 1024),
        ("64 MiB", 67108864),
        ("1GB", 1_000_000_000),
        ("1GiB", 1073741824),
        ("1.5GiB", 1610612736),
        ("8B", 8),
        ("2kB", 2000),
        ("2KiB", 2048),
        ("1e3", 1000),
    ],
)
def test_parse_size_examples(text, expected):
    assert units.parse_size(text) == expected


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("12 parsecs", "unknown unit 'parsecs'"),
        ("64Mb", "that is bits"),
        ("64gb", "unknown unit 'gb'"),
        ("8G", "nccl-tests reads '8G' as GiB: write 8GiB"),
        ("-5MiB", "must be > 0"),
        ("0", "must be > 0"),
        ("0.5B", "whole number of bytes"),
        ("1e-9", "must be > 0"),  # positive, but 0 bytes once rounded
        ("", "cannot read"),
        ("MiB", "cannot read"),
        ("nan", "cannot read"),
    ],
)
def test_parse_size_rejects_with_clear_message(text, fragment):
    with pytest.raises(ValueError) as info:
        units.parse_size(text, what="--bytes")
    assert fragment in str(info.value)
    assert "--bytes" in str(info.value)


def test_unknown_unit_lists_allowed_units():
    with pytest.raises(ValueError, match="allowed units: .*GiB"):
        units.parse_size("3 furlongs")


def test_zero_allowed_only_when_asked():
    assert units.parse_size("0", allow_zero=True) == 0


@pytest.mark.parametrize(
    "text, bytes_per_s",
    [
        ("900 GB/s", 900e9),
        ("400Gb/s", 50e9),  # 400 gigabits = 50 gigabytes
        ("400Gbps", 50e9),
        ("25GBps", 25e9),
        ("100 Mb/s", 12.5e6),
        ("1e9", 1e9),
    ],
)
def test_parse_rate_examples(text, bytes_per_s):
    assert units.parse_rate(text) == pytest.approx(bytes_per_s)


def test_bits_and_bytes_differ_by_eight():
    assert units.parse_rate("8Gb/s") == pytest.approx(units.parse_rate("1GB/s"))


@pytest.mark.parametrize("bad", ["12 parsecs/s", "fast", "-1GB/s", "0 GB/s", "400 GB"])
def test_parse_rate_rejects(bad):
    with pytest.raises(ValueError, match="rate"):
        units.parse_rate(bad)


def test_parse_time():
    assert units.parse_time("2.5us") == pytest.approx(2.5e-6)
    assert units.parse_time("10 ms") == pytest.approx(0.01)
    assert units.parse_time(3) == 3.0
    with pytest.raises(ValueError, match="allowed units"):
        units.parse_time("3 fortnights")


def test_format_examples():
    assert units.format_size(2**26) == "64 MiB"
    assert units.format_size(1e9, binary=False) == "1 GB"
    assert units.format_size(3) == "3 B"
    assert units.format_rate(450e9) == "450 GB/s"
    assert units.format_rate(50e9, bits=True) == "400 Gb/s"
    assert units.format_time(2.5e-6) == "2.5 µs"
    assert units.format_time(0.125) == "125 ms"


def test_gbps_conversions():
    assert units.gbps_to_GBps(400) == 50
    assert units.GBps_to_gbps(50) == 400


@given(st.integers(min_value=1, max_value=2**50))
def test_size_round_trip_through_binary_units(n):
    for unit, factor in (("B", 1), ("KiB", 2**10), ("MiB", 2**20)):
        if n % factor == 0:
            assert units.parse_size(f"{n // factor}{unit}") == n


@given(st.floats(min_value=1e-3, max_value=1e6, allow_nan=False))
def test_rate_parse_is_linear(x):
    assert math.isclose(units.parse_rate(f"{x}GB/s"), x * 1e9, rel_tol=1e-12)
    assert math.isclose(units.parse_rate(f"{x}Gb/s"), x * 1e9 / 8, rel_tol=1e-12)
