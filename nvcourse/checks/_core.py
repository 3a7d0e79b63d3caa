"""The machinery of the exercise checkers: a result object, safe calls, number diagnosis, rendering.

A checker never raises and never shows a traceback. Whatever the learner's code does (still the
``raise NotImplementedError()`` stub, another exception, ``None``, a string, a list), the checker
returns a :class:`Result` that says what is right, what is wrong and what to try next. In Jupyter the
result renders as a coloured box (``_repr_html_``); everywhere else as plain text (``repr``).
"""

from __future__ import annotations

import functools
import html
import math
import numbers
import re
import zlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ..i18n import translate as _

__all__ = [
    "learner_value",
    "Result",
    "Case",
    "CheckError",
    "safe_checker",
    "to_number",
    "close",
    "diagnose",
    "call_learner",
    "check_function",
    "rng_for",
    "fmt",
]

PASS, FAIL, TODO, ERROR, RECORDED = "pass", "fail", "todo", "error", "recorded"


def _title(status: str) -> str:
    """The verdict's title in the current language (read at each call: the language can change)."""
    return {PASS: _("Correct"), FAIL: _("Not quite"), TODO: _("Not done yet"), ERROR: _("Cannot check this yet"),
            RECORDED: _("Recorded")}[status]


_ICONS = {PASS: "✔", FAIL: "✘", TODO: "…", ERROR: "!", RECORDED: "•"}  # all in DejaVu Sans
_COLOURS = {PASS: ("#e8f5e9", "#2e7d32"), FAIL: ("#ffebee", "#c62828"), TODO: ("#fff8e1", "#b26a00"),
            ERROR: ("#fff8e1", "#b26a00"), RECORDED: ("#e3f2fd", "#1565c0")}  # recorded: neutral blue
MAX_SHOWN = 3

def _todo_message() -> str:  # shown after the title "Not done yet", so it does not say it again
    return _("replace the `raise NotImplementedError()` line (under `# YOUR CODE HERE`) with your "
             "code, run the cell again, then run this check.")


_CODE_RE = re.compile(r"`([^`\n]+)`")
_EM_RE = re.compile(r"(?<![\w*])\*(\w[^*\n]*?\w|\w)\*(?![\w*])")


def _inline_html(text: str) -> str:
    """Escaped HTML of a feedback line, with its `code` and *emphasis* marks rendered, not shown raw."""
    parts = _CODE_RE.split(text)  # odd items are code spans
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append(f"<code>{html.escape(part)}</code>")
        else:
            out.append(_EM_RE.sub(r"<em>\1</em>", html.escape(part)))
    return "".join(out)


class CheckError(Exception):
    """Raised inside a checker to stop with a message for the learner (becomes a failed Result)."""

    def __init__(self, message: str, hint: str = "", status: str = FAIL) -> None:
        super().__init__(message)
        self.message, self.hint, self.status = message, hint, status


@dataclass
class Result:
    """What a checker found. ``passed`` is what tests assert on; ``message`` the plain-text feedback.

    ``status`` is ``"pass"``, ``"fail"`` (a wrong answer), ``"todo"`` (still the stub), ``"error"``
    (the code raised or returned something that is not an answer) or ``"recorded"`` (an input kept for a
    later check, e.g. a prediction: nothing to fix, but not "correct" either). ``right`` and ``wrong`` list what
    was checked, ``hint`` says what to try, ``notes`` add context (shown in every case).
    """

    name: str
    status: str
    summary: str
    right: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    hint: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.status in (PASS, RECORDED)

    @property
    def message(self) -> str:
        lines = [_("{icon} {name}: {title} — {summary}").format(
            icon=_ICONS[self.status], name=self.name, title=_title(self.status), summary=self.summary)]
        lines += [f"  ✔ {r}" for r in self.right]
        lines += [f"  ✘ {w}" for w in self.wrong]
        if self.hint:
            lines.append("  " + _("Hint: {hint}").format(hint=self.hint))
        lines += ["  " + _("Note: {note}").format(note=n) for n in self.notes]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.message

    __str__ = __repr__

    def _repr_html_(self) -> str:
        bg, fg = _COLOURS[self.status]
        esc = _inline_html
        parts = [
            f'<div class="nvcourse-check nvcourse-check-{self.status}" style="border-left:5px solid {fg};'
            f'background:{bg};padding:6px 10px;margin:4px 0;font-family:sans-serif;font-size:0.95em">',
            f'<b style="color:{fg}">'
            + _("{icon} {name}: {title}").format(icon=_ICONS[self.status], name=esc(self.name),
                                                 title=_title(self.status))
            + f"</b> — {esc(self.summary)}",
        ]
        items = [f'<li style="color:#2e7d32">✔ {esc(r)}</li>' for r in self.right]
        items += [f'<li style="color:#c62828">✘ {esc(w)}</li>' for w in self.wrong]
        if items:
            parts.append('<ul style="list-style:none;margin:4px 0;padding-left:8px">' + "".join(items) + "</ul>")
        if self.hint:
            parts.append("<div><b>" + _("Hint:") + f"</b> {esc(self.hint)}</div>")
        for n in self.notes:
            parts.append('<div style="color:#555"><i>' + _("Note:") + f"</i> {esc(n)}</div>")
        parts.append("</div>")
        return "".join(parts)


def safe_checker(fn: Callable[..., Result]) -> Callable[..., Result]:
    """Decorator: whatever goes wrong inside a checker becomes a Result, never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Result:
        try:
            return fn(*args, **kwargs)
        except CheckError as exc:
            return Result(fn.__name__, exc.status, exc.message, hint=exc.hint)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # a bug in the checker itself: still no traceback for the learner
            return Result(
                fn.__name__,
                ERROR,
                _("the checker itself failed ({error}).").format(error=f"{type(exc).__name__}: {exc}"),
                hint=_("Run the cells above again from the top; if it persists, report it to the course authors."),
            )

    return wrapper


# ------------------------------------------------------------------------------------------------
# numbers


def fmt(x: Any) -> str:
    """A short, deterministic rendering of a value for feedback."""
    if isinstance(x, bool) or x is None:
        return repr(x)
    if isinstance(x, numbers.Integral):
        return f"{int(x):,}".replace(",", "_") if abs(int(x)) >= 10**5 else str(int(x))
    if isinstance(x, numbers.Real):
        x = float(x)
        if x == 0 or not math.isfinite(x):
            return repr(x)
        return f"{x:.4g}"
    if isinstance(x, str):
        return repr(x if len(x) <= 40 else x[:37] + "...")
    if isinstance(x, (tuple, list)):
        inner = ", ".join(fmt(v) for v in list(x)[:6])
        more = ", ..." if len(x) > 6 else ""
        return f"({inner}{more})" if isinstance(x, tuple) else f"[{inner}{more}]"
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."


def _quantity(what: str) -> str:
    """``what`` (the quantity a checker expects, in English: it also picks the hints) in the current language;
    a quantity not listed here stays as given."""
    known = {"a number": _("a number"), "a probability": _("a probability"), "a fraction": _("a fraction"),
             "a fraction between 0 and 1": _("a fraction between 0 and 1"), "hours": _("hours"),
             "a time in seconds": _("a time in seconds"), "a number of bytes": _("a number of bytes"),
             "a size in bytes": _("a size in bytes"), "a chunk in bytes": _("a chunk in bytes"),
             "a rate in bytes per second": _("a rate in bytes per second"),
             "GB/s per direction": _("GB/s per direction"), "a whole number of GPUs": _("a whole number of GPUs"),
             "a number of nodes": _("a number of nodes"), "a number of all-reduces": _("a number of all-reduces"),
             "True or False": _("True or False")}
    return known.get(what, what)


def to_number(value: Any, what: str = "a number") -> float:
    """Convert a learner's return value to float, or raise CheckError saying what was returned instead."""
    if value is None:
        raise CheckError(_("your code returned None."), _("Did you forget the `return` statement (or return the "
                                                          "value inside the function instead of printing it)?"))
    what = _quantity(what)
    if isinstance(value, bool):
        raise CheckError(_("your code returned {value}, a bool, but {what} was expected.").format(
            value=repr(value), what=what), _("Return the number itself, not a comparison."))
    if isinstance(value, str):
        raise CheckError(_("your code returned the string {value}, but {what} was expected.").format(
            value=fmt(value), what=what),
            _("Return a number (a float or an int), not formatted text: the check does the formatting."))
    if isinstance(value, np.ndarray):
        if value.size != 1:
            raise CheckError(_("your code returned an array of shape {shape}, but {what} was expected.").format(
                shape=value.shape, what=what), _("Return a single number for a single input."))
        value = value.reshape(()).item()
    if isinstance(value, (list, tuple, dict, set)):
        raise CheckError(_("your code returned a {type} ({value}), but {what} was expected.").format(
            type=type(value).__name__, value=fmt(value), what=what), _("Return one number, not a collection."))
    if isinstance(value, numbers.Real):
        v = float(value)
        if math.isnan(v):
            raise CheckError(_("your code returned NaN (not a number)."),
                             _("Look for 0/0 or inf - inf in your formula."))
        return v
    raise CheckError(_("your code returned a {type}, but {what} was expected.").format(
        type=type(value).__name__, what=what), _("Return a plain number (float or int)."))


def close(got: float, expected: float, rtol: float = 1e-6, atol: float = 0.0) -> bool:
    return math.isclose(got, expected, rel_tol=rtol, abs_tol=atol) if math.isfinite(expected) else got == expected


#: The ×2 slips of a rate (bandwidth) are about directions and peers; for other quantities (bytes of memory,
#: GPU or node counts, times) those causes mislead, so the hint says only what a factor 2 can mean there.
def _rate_x2() -> dict[float, str]:
    return {
        2.0: _("off by a factor of 2 (too large): per direction vs bidirectional? n vs n−1? a send counted twice?"),
        0.5: _("off by a factor of 2 (too small): per direction vs bidirectional? n−1 vs n? a missing factor 2?"),
    }


_RATE_WORDS = ("/s", "per second", "bandwidth", "rate")
_OUT_OF_RANGE = "lies between 0 and 1"


def _ratios() -> tuple[tuple[float, str], ...]:
    """Ratios got/expected that point at a classic slip, with the hint. Checked in this order."""
    return (
        (2.0, _("off by a factor of 2 (too large): something counted twice, or a factor 2 that does not belong?")),
        (0.5, _("off by a factor of 2 (too small): a term or a factor 2 missing (something that happens twice)?")),
        (8.0, _("off by a factor of 8 (too large): bits vs bytes? Gb/s ÷ 8 = GB/s.")),
        (1 / 8, _("off by a factor of 8 (too small): bits vs bytes? 1 byte = 8 bits.")),
        (2**30 / 1e9, _("off by 7.4 %: GiB (2^30 B) vs GB (10^9 B)?")),
        (1e9 / 2**30, _("off by 7.4 %: GB (10^9 B) vs GiB (2^30 B)?")),
        (2**20 / 1e6, _("off by 4.9 %: MiB (2^20 B) vs MB (10^6 B)?")),
        (1e6 / 2**20, _("off by 4.9 %: MB (10^6 B) vs MiB (2^20 B)?")),
        (1e3, _("1000 times too large: ms vs µs, or a unit prefix (k, M, G) applied twice?")),
        (1e-3, _("1000 times too small: µs vs ms, or a missing unit prefix (k, M, G)?")),
        (1e6, _("a million times too large: µs vs s? (α in the catalog is in µs; the model uses seconds)")),
        (1e-6, _("a million times too small: s vs µs?")),
        (1e9, _("10^9 times too large: nanoseconds, or GB where bytes were expected (or the reverse)?")),
        (1e-9, _("10^9 times too small: this function works in base units (bytes, seconds, bytes/s), not GB or GB/s.")),
        (2.0**-30, _("2^30 times too small: you returned GiB; return bytes.")),
        (60.0, _("60 times too large: minutes vs seconds (or hours vs minutes)?")),
        (1 / 60, _("60 times too small: seconds vs minutes?")),
        (3600.0, _("3600 times too large: hours vs seconds?")),
        (1 / 3600, _("3600 times too small: seconds vs hours?")),
        (math.sqrt(2), _("√2 too large: a factor 2 inside a square root?")),
        (1 / math.sqrt(2), _("√2 too small: a missing factor 2 inside the square root?")),
        (-1.0, _("right size, wrong sign.")),
    )


def diagnose(
    got: float, expected: float, variants: dict[str, float] | None = None, rtol: float = 2e-3, what: str = ""
) -> str:
    """The most specific hint for a wrong number: a known mistake (``variants``: hint → the value that
    mistake gives), else a tell-tale ratio (factor 2, 8, GiB/GB, 1000, ...), else ``""``. ``what`` names the
    quantity (``"GB/s"``, ``"a time in seconds"``): a rate's factor 2 also suggests per direction vs both."""
    is_rate = any(w in what.lower() for w in _RATE_WORDS)
    for hint, value in (variants or {}).items():
        if value is not None and math.isfinite(value) and close(got, value, rtol, 1e-300):
            return hint
    share = next((w for w in ("probability", "fraction") if w in what.lower()), "")
    if share and not 0 <= got <= 1:
        share = _("probability") if share == "probability" else _("fraction")
        return _("A {share} lies between 0 and 1, and {got} does not: something counted twice, or 1 − p "
                 "missing?").format(share=share, got=fmt(got))
    if expected != 0 and math.isfinite(got) and got != 0:
        ratio = got / expected
        for r, hint in _ratios():
            if math.isclose(ratio, r, rel_tol=rtol):
                return _rate_x2().get(r, hint) if is_rate else hint
    return ""


# ------------------------------------------------------------------------------------------------
# calling the learner's code


class LearnerRaised(Exception):
    def __init__(self, exc: BaseException) -> None:
        super().__init__(str(exc))
        self.exc = exc


def call_learner(fn: Callable[..., Any], *args: Any) -> Any:
    """Call the learner's function; NotImplementedError → a TODO CheckError, others → :class:`LearnerRaised`."""
    try:
        return fn(*args)
    except NotImplementedError as exc:
        raise CheckError(_todo_message(), status=TODO) from exc
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:
        raise LearnerRaised(exc) from exc


def learner_value(value: Any, name: str) -> Any:
    """The learner's answer: ``value`` itself, or what it returns when it is a function (called with no
    arguments). A :class:`Result` instead when there is nothing to check yet: ``...`` (TODO), a function
    that raises NotImplementedError (TODO) or another exception (ERROR, with a hint for that exception)."""
    if callable(value):
        try:
            value = call_learner(value)
        except CheckError as err:
            return Result(name, err.status, err.message, hint=err.hint)
        except LearnerRaised as raised:
            return Result(name, ERROR, _("your code raised {error}.").format(error=describe_exception(raised.exc)),
                          hint=exception_hint(raised.exc))
    if value is ...:
        return Result(
            name, TODO, _("you have not answered yet (the value is `...`)."), hint=_("Replace `...` with your answer.")
        )
    return value


def describe_exception(exc: BaseException) -> str:
    text = str(exc)
    text = text if len(text) <= 120 else text[:117] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def exception_hint(exc: BaseException) -> str:
    if isinstance(exc, NameError):
        return _("A name is not defined: run the setup cell at the top of the notebook first, and check the "
                 "spelling of your variables.")
    if isinstance(exc, TypeError):
        return _("Check that your function takes the arguments in the order shown in its signature, and their types.")
    if isinstance(exc, ZeroDivisionError):
        return _("A division by zero: check which quantity can be 0 (or 1 − 1 = 0) for these inputs.")
    if isinstance(exc, (AttributeError, KeyError)):
        return _("Check the name of the attribute or key you look up (e.g. in `catalog`).")
    return _("Read the error message above; it names what went wrong.")


def require_callable(name: str, fn: Any, what: str) -> None:
    if callable(fn):
        return
    if isinstance(fn, numbers.Number):
        raise CheckError(_("you passed the number {value}, but this check needs your function.").format(value=fmt(fn)),
                         _("Pass the function itself: {call} — no parentheses after the name.").format(
                             call=f"`check.{name}({what})`"), status=ERROR)
    raise CheckError(_("you passed a {type}, but this check needs your function.").format(type=type(fn).__name__),
                     _("Pass the function itself: {call}.").format(call=f"`check.{name}({what})`"), status=ERROR)


def rng_for(name: str) -> np.random.Generator:
    """A generator seeded by the checker's name: the same random cases on every run and machine."""
    return np.random.default_rng(zlib.crc32(name.encode()))


@dataclass(frozen=True)
class Case:
    """One input of a function check: positional ``args`` (named ``names`` in feedback), the expected value
    and a dict of known mistakes (hint → the value that mistake would give)."""

    args: tuple
    expected: float
    variants: dict[str, float] = field(default_factory=dict)
    label: str = ""


def _args_text(names: Sequence[str], case: Case) -> str:
    return ", ".join(f"{n}={fmt(a)}" for n, a in zip(names, case.args))


def _call_text(name: str, names: Sequence[str], case: Case) -> str:
    text = f"{name}({_args_text(names, case)})"
    return f"[{case.label}] {text}" if case.label else text


def best_hint(hints: Sequence[str], default: str = "") -> str:
    """The hint found for most failing inputs (ties: the first found), else ``default``."""
    found = [h for h in hints if h]
    if not found:
        return default
    marks = (_OUT_OF_RANGE, _("lies between 0 and 1"))
    impossible = [h for h in found if any(m in h for m in marks)]  # a value that cannot be the quantity says the most
    if impossible:
        return impossible[0]
    counts = Counter(found)
    return max(found, key=lambda h: (counts[h], -found.index(h)))


def check_function(
    name: str,
    fn: Any,
    names: Sequence[str],
    cases: Sequence[Case],
    *,
    what: str = "a number",
    rtol: float = 1e-6,
    atol: float = 0.0,
    hint: str = "",
    success: str = "",
    convert: Callable[[Any], float] | None = None,
    show: Callable[[float], str] = fmt,
) -> Result:
    """Run ``fn`` on every case and compare with the expected value; the feedback names the failing inputs,
    the most specific hint found, and how many cases passed. ``show`` writes a converted value back in the
    answer's own terms (e.g. ``True``/``False`` for a yes-or-no answer that ``convert`` made a number)."""
    require_callable(name, fn, name)
    convert = convert or (lambda v: to_number(v, what))
    ok, bad, hints = 0, [], []
    for case in cases:
        try:
            got = convert(call_learner(fn, *case.args))
        except LearnerRaised as raised:
            bad.append(_("{call} raised {error}").format(call=_call_text(name, names, case),
                                                          error=describe_exception(raised.exc)))
            hints.append(exception_hint(raised.exc))
            continue
        except CheckError as err:
            if err.status == TODO:
                raise
            bad.append(f"{_call_text(name, names, case)}: {err.message}")
            hints.append(err.hint)
            continue
        if close(got, case.expected, rtol, atol):
            ok += 1
            continue
        bad.append(_("{call} returned {got}, expected {expected}").format(
            call=_call_text(name, names, case), got=show(got), expected=show(case.expected)))
        hints.append(diagnose(got, case.expected, case.variants, what=what))
    total = len(cases)
    if not bad:
        return Result(name, PASS, _("right on all {total} inputs (hand-picked and random).").format(total=total),
                      notes=[success] if success else [])
    shown = bad[:MAX_SHOWN]
    if len(bad) > MAX_SHOWN:
        shown.append(_("... and {n} more wrong inputs").format(n=len(bad) - MAX_SHOWN))
    found = best_hint(hints, hint)
    right = [_("right on {ok} of {total} inputs").format(ok=ok, total=total)] if ok else []
    return Result(name, FAIL, _("wrong on {bad} of {total} inputs.").format(bad=len(bad), total=total), right=right,
                  wrong=shown, hint=found)
