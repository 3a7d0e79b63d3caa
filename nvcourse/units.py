"""Parse and format sizes and rates: the one place where units are decided.

Conventions (the same as nccl-tests):

* sizes are in **bytes**; ``GB`` = 10**9 bytes, ``GiB`` = 2**30 bytes;
* rates are in **bytes per second**; ``GB/s`` = 10**9 B/s, ``Gb/s`` = 10**9 *bits*/s = 1.25e8 B/s;
* a bare number is bytes (or bytes per second for a rate);
* anything else is an error, never a guess: ``"12 parsecs"`` raises :class:`ValueError`.

Case matters where it changes meaning: ``b`` is a bit, ``B`` is a byte, so ``Gb/s`` and ``GB/s`` differ
by a factor of eight. For the same reason, lower-case ``gb`` is rejected rather than guessed.
"""

from __future__ import annotations

import math
import re
from typing import Final

from .i18n import translate as _

__all__ = [
    "percent_spec",
    "SIZE_UNITS",
    "RATE_UNITS",
    "parse_size",
    "parse_rate",
    "parse_time",
    "format_size",
    "format_rate",
    "format_time",
    "gbps_to_GBps",
    "GBps_to_gbps",
]

_DECIMAL = {"": 1, "k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15}
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50}

#: Size units accepted by :func:`parse_size`, mapped to bytes.
SIZE_UNITS: Final[dict[str, int]] = {
    "B": 1,
    **{f"{p}B": f for p, f in _DECIMAL.items() if p},
    **{f"{p}B": f for p, f in _BINARY.items()},
}

#: Rate units accepted by :func:`parse_rate`, mapped to bytes per second.
RATE_UNITS: Final[dict[str, float]] = {
    **{f"{p}B/s": float(f) for p, f in _DECIMAL.items()},
    **{f"{p}B/s": float(f) for p, f in _BINARY.items()},
    **{f"{p}b/s": f / 8 for p, f in _DECIMAL.items()},
    **{f"{p}bps": f / 8 for p, f in _DECIMAL.items() if p},
    **{f"{p}Bps": float(f) for p, f in _DECIMAL.items() if p},
}

_TIME_UNITS: Final[dict[str, float]] = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_QUANTITY = re.compile(rf"^\s*(?P<num>{_NUMBER})\s*(?P<unit>[^\s\d.+-][^\s]*)?\s*$")


def _split(text: str | int | float, what: str) -> tuple[float, str]:
    if isinstance(text, bool):
        raise ValueError(_("{what} must be a number or a string such as '64MiB', got {value}").format(
            what=what, value=repr(text)))
    if isinstance(text, (int, float)):
        return float(text), ""
    if not isinstance(text, str):
        raise ValueError(_("{what} must be a number or a string such as '64MiB', got {value}").format(
            what=what, value=type(text).__name__))
    m = _QUANTITY.match(text)
    if not m:
        raise ValueError(_("{what}: cannot read {value}; expected a number followed by a unit, e.g. '64MiB'").format(
            what=what, value=repr(text)))
    return float(m.group("num")), m.group("unit") or ""


def _check_positive(value: float, original: object, what: str, allow_zero: bool) -> None:
    if not math.isfinite(value):
        raise ValueError(_("{what} must be finite, got {value}").format(what=what, value=repr(original)))
    if value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(_("{what} must be {bound}, got {value}").format(what=what, bound=bound, value=repr(original)))


def parse_size(text: str | int | float, *, what: str = "size", allow_zero: bool = False) -> int:
    """Return a size in bytes.

    Accepts ``4096``, ``"4096"``, ``"64MiB"``, ``"1GB"``, ``"1.5 GiB"``, ``"8B"``. Decimal prefixes
    (k, M, G, T) are powers of ten, binary prefixes (Ki, Mi, Gi, Ti) powers of two. The result must
    be a whole number of bytes.

    Raises:
        ValueError: unknown unit, a bit unit (``Gb``), a negative, zero or fractional byte count.
    """
    value, unit = _split(text, what)
    unit = unit or "B"
    if unit not in SIZE_UNITS:
        hint = _(" (that is bits; sizes are in bytes: use 'B')") if unit.endswith("b") else ""
        if unit in ("K", "M", "G", "T"):  # nccl-tests' -b/-e suffixes, which are powers of two
            hint = _(" (nccl-tests reads {text} as {unit}iB: write {value}{unit}iB, or {value}{unit}B for "
                     "10^n)").format(text=repr(text), unit=unit, value=f"{value:g}")
        allowed = ", ".join([_("(none)"), *SIZE_UNITS])
        raise ValueError(_("{what}: unknown unit {unit} in {text}{hint}; allowed units: {allowed}").format(
            what=what, unit=repr(unit), text=repr(text), hint=hint, allowed=allowed))
    nbytes = value * SIZE_UNITS[unit]
    _check_positive(nbytes, text, what, allow_zero)
    rounded = round(nbytes)
    if abs(nbytes - rounded) > 1e-6 * max(1.0, abs(nbytes)):
        raise ValueError(_("{what} must be a whole number of bytes, got {text} = {nbytes} B").format(
            what=what, text=repr(text), nbytes=nbytes))
    # a positive size that rounds to 0 bytes (1e-9 B) is 0: refused as 0 is, or a sweep from it would never grow
    _check_positive(float(rounded), text, what, allow_zero)
    return int(rounded)


def parse_rate(text: str | int | float, *, what: str = "rate") -> float:
    """Return a rate in **bytes per second**.

    Accepts ``"900 GB/s"`` (9e11 B/s), ``"400Gb/s"`` (5e10 B/s: bits), ``"400Gbps"``, ``"25GBps"``
    and a bare number of bytes per second.
    """
    value, unit = _split(text, what)
    unit = unit or "B/s"
    if unit not in RATE_UNITS:
        allowed = ", ".join([_("(none: B/s)"), *RATE_UNITS])
        raise ValueError(_("{what}: unknown unit {unit} in {text}{hint}; allowed units: {allowed}").format(
            what=what, unit=repr(unit), text=repr(text), hint="", allowed=allowed))
    rate = value * RATE_UNITS[unit]
    _check_positive(rate, text, what, allow_zero=False)
    return rate


def parse_time(text: str | int | float, *, what: str = "time") -> float:
    """Return a duration in seconds from ``"2.5us"``, ``"10 ms"``, ``"1s"`` or a bare number of seconds."""
    value, unit = _split(text, what)
    unit = unit or "s"
    if unit not in _TIME_UNITS:
        raise ValueError(_("{what}: unknown unit {unit} in {text}{hint}; allowed units: {allowed}").format(
            what=what, unit=repr(unit), text=repr(text), hint="", allowed=", ".join(_TIME_UNITS)))
    seconds = value * _TIME_UNITS[unit]
    _check_positive(seconds, text, what, allow_zero=True)
    return seconds


def _format(value: float, steps: list[tuple[float, str]], digits: int) -> str:
    for factor, unit in steps:
        if abs(value) >= factor:
            scaled = value / factor
            text = f"{scaled:.{digits}g}" if scaled < 10**digits else f"{scaled:.0f}"
            return f"{text} {unit}"
    factor, unit = steps[-1]
    return f"{value / factor:.{digits}g} {unit}"


def format_size(nbytes: float, *, binary: bool = True, digits: int = 3) -> str:
    """Format a byte count, e.g. ``format_size(2**26) == '64 MiB'``, ``format_size(1e9, binary=False) == '1 GB'``."""
    if binary:
        steps = [(2.0**50, "PiB"), (2.0**40, "TiB"), (2.0**30, "GiB"), (2.0**20, "MiB"), (2.0**10, "KiB"), (1.0, "B")]
    else:
        steps = [(1e15, "PB"), (1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"), (1.0, "B")]
    return _format(float(nbytes), steps, digits)


def format_rate(bytes_per_s: float, *, bits: bool = False, digits: int = 3) -> str:
    """Format a rate given in B/s as GB/s-style decimal units (or Gb/s with ``bits=True``).

    The value is rounded to ``digits`` significant digits before the unit is chosen, so a rate that rounds up to
    the next unit rolls over: ``format_rate(999.6e6) == '1 GB/s'``, never ``'1e+03 MB/s'``."""
    value = bytes_per_s * 8 if bits else bytes_per_s
    value = float(f"{value:.{digits}g}")  # round first: 999.6 MB/s must read 1 GB/s
    if bits:
        return _format(value, [(1e12, "Tb/s"), (1e9, "Gb/s"), (1e6, "Mb/s"), (1e3, "kb/s"), (1.0, "b/s")], digits)
    return _format(value, [(1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s"), (1.0, "B/s")], digits)


def format_time(seconds: float, *, digits: int = 3) -> str:
    """Format seconds as s, ms, µs or ns, e.g. ``format_time(2.5e-6) == '2.5 µs'``."""
    return _format(seconds, [(1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")], digits)


def gbps_to_GBps(gbit_per_s: float) -> float:
    """Gigabits per second → gigabytes per second (divide by 8)."""
    return gbit_per_s / 8.0


def GBps_to_gbps(gbyte_per_s: float) -> float:
    """Gigabytes per second → gigabits per second (multiply by 8)."""
    return gbyte_per_s * 8.0


def percent_spec(value: float, target: float) -> str:
    """The format spec (``".0%"``, ``".1%"`` ...) that shows ``value`` (a fraction) on the same side of ``target``
    as it is: 0.6996 against a ">= 70 %" target reads ``69.96%``, never a failing ``70%``; whole percents otherwise."""
    for digits in range(4):
        shown, limit = round(value * 100, digits), round(target * 100, digits)
        if (shown >= limit) == (value >= target) and (shown == limit) == (value == target):
            return f".{digits}%"
    return ".4%"
