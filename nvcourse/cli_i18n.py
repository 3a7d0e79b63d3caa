"""argparse's own words (``usage:``, ``options``, ``the following arguments are required`` ...) in the learner's
language, through the course's catalog.

argparse writes its fixed phrases with the standard library's ``gettext`` (the names ``_`` and ``ngettext`` of the
``argparse`` module, looked up each time a phrase is needed), which knows nothing of ``locales/``.
:class:`Parser` points those two names at :func:`nvcourse.i18n.translate` / :func:`nvcourse.i18n.ngettext` while it
is built, parses and formats its help, and puts them back after; sub-parsers are of the same class, so they speak
the same language. In English nothing is swapped at all: the output is argparse's own, byte for byte. A phrase the
catalog lacks (another Python version's wording) stays English.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager

from .i18n import language, ngettext
from .i18n import translate as _

__all__ = ["Parser", "argparse_speaks", "argparse_messages"]


def argparse_messages() -> tuple[str, ...]:
    """The phrases of argparse (Python 3.11 to 3.13) a learner meets, in the current language.

    Each is argparse's exact English text (its ``%`` fields included), written here as a literal so the
    extractor puts it in the template; at run time argparse itself asks for them."""
    return (
        _("usage: "), _("positional arguments"), _("options"), _("show this help message and exit"),
        _("argument %(argument_name)s: %(message)s"), _("unrecognized arguments: %s"),
        _("the following arguments are required: %s"), _("one of the arguments %s is required"),
        _("not allowed with argument %s"), _("ignored explicit argument %r"),
        _("expected one argument"), _("expected at most one argument"), _("expected at least one argument"),
        ngettext("expected %s argument", "expected %s arguments", 2),
        _("ambiguous option: %(option)s could match %(matches)s"), _("invalid %(type)s value: %(value)r"),
        _("invalid choice: %(value)r (choose from %(choices)s)"),
        _("unknown parser %(parser_name)r (choices: %(choices)s)"),
        _("can't open '%(filename)s': %(error)s"),
    )


@contextmanager
def argparse_speaks() -> Iterator[None]:
    """While active, argparse's phrases come from the course's catalog (nothing changes in English).

    Re-entrant (a sub-parser parses inside its parent's parse) and always restored; the command line runs it in
    one thread."""
    if language() == "en" or not hasattr(argparse, "_") or not hasattr(argparse, "ngettext"):
        yield  # English, or an argparse that no longer keeps these two names: its own words
        return
    saved = argparse._, argparse.ngettext  # type: ignore[attr-defined]
    argparse._, argparse.ngettext = _, ngettext  # type: ignore[attr-defined]
    try:
        yield
    finally:
        argparse._, argparse.ngettext = saved  # type: ignore[attr-defined]


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose own words (group titles, ``-h``'s help, usage, errors) follow the course's
    language; its sub-parsers are of the same class."""

    def __init__(self, *args, **kwargs) -> None:
        with argparse_speaks():  # the titles "positional arguments", "options" and -h's help are set here
            super().__init__(*args, **kwargs)

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        with argparse_speaks():
            return super().parse_known_args(args, namespace)

    def parse_args(self, args=None, namespace=None):  # type: ignore[override]
        with argparse_speaks():  # "unrecognized arguments" is worded here, after parse_known_args
            return super().parse_args(args, namespace)

    def format_usage(self) -> str:
        with argparse_speaks():
            return super().format_usage()

    def format_help(self) -> str:
        with argparse_speaks():
            return super().format_help()
