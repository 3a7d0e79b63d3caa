"""The course's languages: English (the source) and French, with the standard library's gettext.

    from nvcourse.i18n import translate as _, ngettext
    label = _("GPUs needed (model states only)")

(``translate`` is the public name; modules import it as ``_``, the name Babel's extractor and translators know.)

The language is read at each call, so a kernel started with ``NVCOURSE_LANG=fr`` speaks French and a test can
switch languages by setting the variable:

1. ``NVCOURSE_LANG`` (``fr``, ``fr_FR.UTF-8``, ``en``...) decides when set;
2. otherwise the POSIX locale variables, first set of ``LC_ALL``, ``LC_MESSAGES``, ``LANG`` (their precedence):
   French when it starts with ``fr``;
3. otherwise English.

Catalogs: ``locales/<lang>/LC_MESSAGES/nvcourse.mo`` (domain ``nvcourse``), compiled from the ``.po`` next to it
by ``python3 tasks.py i18n build`` and committed, so a clean clone or Binder needs no build step and no package
beyond the standard library. A missing catalog or a string not yet translated falls back to English silently.

French numbers (decided once, see docs/fr/glossaire.md): decimal comma (``1,12``); thousands grouped by a narrow
no-break space U+202F (``16 384``); a no-break space U+00A0 between a number and its unit or ``%``
(``900 GB/s``, ``90 %``); unit symbols unchanged (GB, GB/s, Gb/s, TB: the datasheets' symbols, and GB/s never
becomes bits). English keeps Python's formatting (``1.12``, ``16,384``).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import gettext
import numbers
import os
import re
from collections.abc import Iterator
from pathlib import Path

__all__ = ["DOMAIN", "LOCALES", "language", "english", "translate", "data_text", "ngettext", "pgettext",
           "npgettext", "number", "whole", "times", "localize_numbers"]

DOMAIN = "nvcourse"
#: locales/<lang>/LC_MESSAGES/<domain>.mo at the repository root (nvcourse is installed editable).
LOCALES = Path(__file__).resolve().parents[1] / "locales"
#: Languages with a catalog; anything else is English.
LANGUAGES = ("en", "fr")

NNBSP = "\u202f"  # narrow no-break space: French thousands separator
NBSP = "\u00a0"  # no-break space: between a number and its unit


#: set by :func:`english`: the language forced for the code inside it, whatever the environment says
_FORCED: contextvars.ContextVar[str | None] = contextvars.ContextVar("nvcourse_language", default=None)


def _pick(value: str) -> str:
    return "fr" if value.strip().lower().startswith("fr") else "en"


def language() -> str:
    """``"fr"`` or ``"en"``: English inside :func:`english`; else NVCOURSE_LANG, else the first set of LC_ALL,
    LC_MESSAGES, LANG, else English."""
    if (forced_here := _FORCED.get()) is not None:
        return forced_here
    forced = os.environ.get("NVCOURSE_LANG", "").strip()
    if forced:
        return _pick(forced)
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "").strip()
        if value:
            return _pick(value)
    return "en"


@functools.lru_cache(maxsize=None)
def _translations(lang: str, localedir: str) -> gettext.NullTranslations:
    """The compiled catalog of ``lang``; a NullTranslations (English) when there is none."""
    if lang == "en":
        return gettext.NullTranslations()
    return gettext.translation(DOMAIN, localedir, languages=[lang], fallback=True)


def glossary_href(anchor: str = "") -> str:
    """The glossary's address as a chapter's readout links it, in the learner's language: the English chapters sit in
    ``notebooks/`` and link ``docs/glossary.md``; a translated edition's chapters sit one folder deeper, in
    ``notebooks/<lang>/``, and link their own ``docs/<lang>/glossary.md`` (same anchors)."""
    lang = language()
    translated = LOCALES.parent / "docs" / lang / "glossary.md"
    path = f"../../docs/{lang}/glossary.md" if lang != "en" and translated.exists() else "../docs/glossary.md"
    return path + (f"#{anchor}" if anchor else "")


def translate(message: str) -> str:
    """``message`` in the current language (English when no translation exists)."""
    return _translations(language(), str(LOCALES)).gettext(message)


@contextlib.contextmanager
def english() -> Iterator[None]:
    """English for everything computed inside, whatever the environment says: the values of ``--json`` (a stable
    interface, English in every language) are built inside it, the text shown to a person outside it."""
    token = _FORCED.set("en")
    try:
        yield
    finally:
        _FORCED.reset(token)


def data_text(text: str) -> str:
    """A string field of a data file (``nvcourse/data/*.toml``) shown to a learner, in the current language.

    The extractor collects the displayed fields (``i18n_catalog.DATA_FIELDS``) into ``nvcourse.po``, so the data
    files stay English, the one source, and a French reader sees the translation; not translated yet: English."""
    return translate(text) if text else text


_ = translate  # the conventional gettext name, for ``from nvcourse import i18n; i18n._(...)``


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural form of a message for ``n`` in the current language (French: 0 and 1 singular)."""
    return _translations(language(), str(LOCALES)).ngettext(singular, plural, n)


def pgettext(context: str, message: str) -> str:
    """``message`` in the current language, read in ``context`` (the catalog's ``msgctxt``): one English word that
    two French ones translate, such as "step" (``"training"``: *pas*; ``"algorithm"``, ``"runbook"``: *étape*)."""
    return _translations(language(), str(LOCALES)).pgettext(context, message)


def npgettext(context: str, singular: str, plural: str, n: int) -> str:
    """:func:`ngettext` read in ``context`` (see :func:`pgettext`)."""
    return _translations(language(), str(LOCALES)).npgettext(context, singular, plural, n)


def whole(value: int) -> str:
    """An integer as the current language writes it in running text: English as Python prints it (``8388608``,
    no separator, as before), French grouped by thousands with U+202F (``8 388 608``); anything else (``None``
    where a count is not known) as ``str`` writes it."""
    return number(value, ",d") if language() == "fr" and isinstance(value, numbers.Integral) else str(value)


def times(factor: str) -> str:
    """A multiplier after a count or before a factor in the current language: English ``x2``, French ``×2``
    (``factor`` already formatted, e.g. by :func:`number`)."""
    return ("×" if language() == "fr" else "x") + factor


def number(value: float, spec: str = "g") -> str:
    """``value`` formatted with the format ``spec`` (e.g. ``".2f"``, ``",.0f"``), in the current language's style."""
    text = format(value, spec)
    if language() == "fr" and re.search(r"\de[+-]\d", text, re.IGNORECASE):
        return text.replace(".", ",")  # 1,81e-03: the mantissa's decimal comma (the exponent has no separator)
    return localize_numbers(text) if language() == "fr" else text


_NUMBER_RE = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w])")
_UNIT_RE = re.compile(r"(\d) (?=%|[kKMGTP]?i?[Bb](?:/s)?\b|[mµn]?s\b|W\b|kW\b|Gb/s\b|GT/s\b)")


def localize_numbers(text: str) -> str:
    """English-formatted numbers in ``text`` written the French way when French is on (``1,234.5 GB`` →
    ``1 234,5 GB`` with U+202F and U+00A0); the text unchanged in English. For readouts built by unit helpers."""
    if language() != "fr":
        return text

    def swap(m: re.Match[str]) -> str:
        whole = m.group(1).replace(",", NNBSP)
        return whole + (("," + m.group(2)[1:]) if m.group(2) else "")

    return _UNIT_RE.sub(lambda m: m.group(1) + NBSP, _NUMBER_RE.sub(swap, text))
