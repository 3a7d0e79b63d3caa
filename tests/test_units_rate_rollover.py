"""format_rate rolls over to the next unit when rounding reaches 1000 (no '1e+03 MB/s' in a readout)."""

import pytest

from nvcourse.units import format_rate


@pytest.mark.parametrize(
    ("rate", "bits", "expected"),
    [
        (999.6e6, False, "1 GB/s"),
        (999.4e6, False, "999 MB/s"),
        (999.96e9, False, "1 TB/s"),
        (1.0e9, False, "1 GB/s"),
        (12.34e9, False, "12.3 GB/s"),
        (124.96e6, True, "1 Gb/s"),
        (50e9, True, "400 Gb/s"),
    ],
)
def test_format_rate_rolls_over(rate: float, bits: bool, expected: str) -> None:
    assert format_rate(rate, bits=bits) == expected


@pytest.mark.parametrize("rate", [x * 1e6 for x in (999.5, 999.6, 999.9, 999.99)] + [999.7e9, 999.9e3])
def test_format_rate_never_prints_scientific(rate: float) -> None:
    text = format_rate(rate)
    assert "e+" not in text and not text.startswith("1000 ")
