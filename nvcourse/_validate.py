"""Argument checks shared by every model: one message style for the whole course.

Every bad value is a ``ValueError`` whose message names the parameter, says what is allowed, then what came:
``"<name> must be <what is allowed>; got <value!r>"``. The CLI prints that line as it is (exit 2), so the
wording is part of its interface. The template is in the learner's language (:mod:`nvcourse.i18n`); the parameter
name, the limits and the values are format fields, never translated.

    >>> integer("dp", 0)
    Traceback (most recent call last):
    ...
    ValueError: dp must be an integer >= 1; got 0
    >>> fraction("goodput", 1.5)
    Traceback (most recent call last):
    ...
    ValueError: goodput must be in (0, 1]; got 1.5
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from numbers import Integral, Real
from typing import TypeVar

from .i18n import translate as _

__all__ = ["integer", "number", "fraction", "choice"]

T = TypeVar("T")


def integer(name: str, value: object, minimum: int = 1, maximum: int | None = None) -> int:
    """``value`` as an int in ``[minimum, maximum]`` (no bool, no float)."""
    ok = not isinstance(value, bool) and isinstance(value, Integral) and value >= minimum
    if maximum is None:
        if not ok:
            raise ValueError(_("{name} must be an integer >= {minimum}; got {value}").format(
                name=name, minimum=minimum, value=repr(value)))
    elif not ok or value > maximum:
        raise ValueError(_("{name} must be an integer from {minimum} to {maximum}; got {value}").format(
            name=name, minimum=minimum, maximum=maximum, value=repr(value)))
    return int(value)


def number(name: str, value: object, *, positive: bool = False) -> float:
    """``value`` as a finite float, ``>= 0`` (``> 0`` with ``positive=True``)."""
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
        raise ValueError(_("{name} must be a finite number; got {value}").format(name=name, value=repr(value)))
    if positive and value <= 0:
        raise ValueError(_("{name} must be > 0; got {value}").format(name=name, value=repr(value)))
    if not positive and value < 0:
        raise ValueError(_("{name} must be >= 0; got {value}").format(name=name, value=repr(value)))
    return float(value)


def fraction(name: str, value: object) -> float:
    """``value`` as a float in (0, 1]: a share, an efficiency, a slowdown factor."""
    if isinstance(value, bool) or not isinstance(value, Real) or not 0 < value <= 1:
        raise ValueError(_("{name} must be in (0, 1]; got {value}").format(name=name, value=repr(value)))
    return float(value)


def choice(name: str, value: T, allowed: Iterable[object], *, note: str = "") -> T:
    """``value`` when it is one of ``allowed``; the message lists them, then ``note`` (what they are, or the
    other kind of value accepted), e.g. ``model must be one of 'a', 'b' or a ModelSpec; got 'c'``."""
    allowed = tuple(allowed)
    if value not in allowed:
        raise ValueError(_("{name} must be one of {allowed}; got {value}").format(
            name=name, allowed=", ".join(map(repr, allowed)) + (" " + note if note else ""), value=repr(value)))
    return value
