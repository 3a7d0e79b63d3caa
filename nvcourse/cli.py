"""The ``nvcourse`` command line.

Sub-commands (a stable interface; see README "Command line"):

* ``nvcourse doctor`` — environment check;
* ``nvcourse systems [--json]`` — the hardware catalog;
* ``nvcourse links [--json]`` — link types with the alpha-beta model's parameters;
* ``nvcourse predict ...`` — collective cost model (``nvcourse.costmodel``);
* ``nvcourse bench ...`` — nccl-tests-style measurement on CPU processes (``nvcourse.collectives``);
* ``nvcourse topo FILE`` — read ``nvidia-smi topo -m`` output (``nvcourse.topology``).

Each feature module registers its own sub-command through a ``register(subparsers)`` function so that
this file stays a thin dispatcher; it also handles every sub-command's errors the same way.

Errors and exit statuses (any sub-command, present or later; the classes are in :mod:`nvcourse.errors`):

* **0** success; **1** a runtime failure (:class:`~nvcourse.errors.RuntimeFailure` — a worker died, a
  timeout, an engine missing — or any unexpected exception); **2** bad usage or input (argparse errors,
  :class:`~nvcourse.errors.UsageError`, ``ValueError``, ``KeyError``, a missing or unreadable file, and
  :class:`~nvcourse.errors.ResourceError` when a request does not fit in RAM or /dev/shm);
  **130** Ctrl-C (SIGINT, honoured even when the shell started the command with SIGINT ignored); **143**
  SIGTERM (raised as :class:`~nvcourse.errors.Terminated`, a ``KeyboardInterrupt``, so every clean-up path runs).
* The report is one line on stderr, ``nvcourse: error: <message>`` (``nvcourse: interrupted ...`` after
  a signal); ``--debug`` (before or after the sub-command) or ``NVCOURSE_DEBUG=1`` adds the traceback.
* Language: ``--help``, argparse's own words, the error lines and doctor's lines follow :mod:`nvcourse.i18n`
  (``NVCOURSE_LANG=fr`` or a French locale; :mod:`nvcourse.cli_i18n`); ``--json`` keys and values stay English and
  the exit statuses are the same in every language.
* A sub-command handler returns its status (``0``/``None``, or ``1`` when e.g. a verification
  failed) and raises for everything else; it never calls ``sys.exit`` with a traceback-bearing error.
"""

from __future__ import annotations

import argparse
import faulthandler
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from . import __version__
from .cli_i18n import Parser
from .errors import (
    EXIT_FAILURE,
    EXIT_INTERRUPT,
    EXIT_TERMINATED,
    EXIT_USAGE,
    NvcourseError,
    Terminated,
    UsageError,
)
from .i18n import translate as _
from .textio import print_json, quiet_stdout

__all__ = ["main", "build_parser", "print_json", "UsageError", "debug_requested"]



_SPACES = " \u00a0\u202f"  # space, no-break space, narrow no-break space: none of them breaks a line


def printable(text: str) -> str:
    """``text`` with control characters (a stray CR, a tab, a line separator in an argument) escaped, so a
    message stays one line on the terminal; the no-break spaces of French typography stay as they are."""
    return "".join(c if c.isprintable() or c in _SPACES else c.encode("unicode_escape").decode("ascii") for c in text)


class _Parser(Parser):
    """argparse with a one-line error (no usage block) and exit status 2, in the course's language; sub-parsers
    inherit it."""

    def error(self, message: str):  # type: ignore[override]
        line = _("{prog}: error: {message} (see {prog} --help)").format(prog=self.prog, message=printable(message))
        self.exit(EXIT_USAGE, line + "\n")


def _feature_modules() -> tuple:
    """The modules that contribute sub-commands, each with ``register(subparsers) -> None``, in --help order.

    Imported here, not at the top: :func:`main` builds the parser once its SIGTERM and Ctrl-C handlers are in
    place, and these imports (numpy, networkx, the models) take a second on a loaded machine, so a signal during
    start-up still ends with one line and status 143 or 130 instead of a traceback.
    """
    from . import catalog_cli, doctor
    from .cluster import cli as cluster_cli
    from .collectives import cli as collectives_cli
    from .costmodel import cli as costmodel_cli
    from .nccl import cli as nccl_cli
    from .topology import cli as topology_cli

    return catalog_cli, doctor, costmodel_cli, collectives_cli, topology_cli, nccl_cli, cluster_cli


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="nvcourse",
        description=_("How GPUs talk to each other: catalog, cost models, CPU collectives and topology tools."),
        epilog=_("Exit status: 0 ok, 1 runtime failure, 2 bad input, 130 Ctrl-C, 143 SIGTERM. "
                 "--debug or NVCOURSE_DEBUG=1 shows tracebacks."),
    )
    parser.add_argument("--version", action="version", version=f"nvcourse {__version__}",
                        help=_("show program's version number and exit"))
    parser.add_argument("--debug", action="store_true", help=_("show the traceback of an error"))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in _feature_modules():
        module.register(sub)
    for p in sub.choices.values():  # `nvcourse bench ... --debug` works too, for every sub-command
        try:
            p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                           help=_("show the traceback of an error"))
        except argparse.ArgumentError:  # a sub-command that defines its own --debug keeps it
            pass
    return parser


def debug_requested(argv: Sequence[str] | None = None) -> bool:
    """True when ``NVCOURSE_DEBUG`` is set to something other than ``0``/empty, or ``--debug`` is in argv."""
    env = os.environ.get("NVCOURSE_DEBUG", "").strip().lower()
    if env not in ("", "0", "false", "no", "off"):
        return True
    return "--debug" in (sys.argv[1:] if argv is None else list(argv))


def _first_line(text: str) -> str:
    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip()]
    if not lines:
        return ""
    return lines[0] + (_(" (more with --debug)") if len(lines) > 1 else "")


def _os_reason(exc: OSError) -> str:
    """The C library's English reason for a file error (``No such file or directory``), in the learner's language
    when it is one of the usual four; any other reason as the system wrote it."""
    usual = {"No such file or directory": _("No such file or directory"), "Permission denied": _("Permission denied"),
             "Is a directory": _("Is a directory"), "Not a directory": _("Not a directory")}
    reason = exc.strerror or type(exc).__name__
    return usual.get(reason, reason)


def classify(exc: BaseException) -> tuple[int, str]:
    """``(exit status, one-line message)`` for an exception that escaped a sub-command."""
    if isinstance(exc, KeyboardInterrupt):
        terminated = isinstance(exc, Terminated)
        what = _("terminated (SIGTERM)") if terminated else _("interrupted (Ctrl-C)")
        detail = _first_line(exc.args[0]) if exc.args else ""
        return (EXIT_TERMINATED if terminated else EXIT_INTERRUPT), f"{what}{': ' + detail if detail else ''}"
    if isinstance(exc, NvcourseError):
        return exc.exit_code, _first_line(str(exc)) or type(exc).__name__
    if isinstance(exc, KeyError):
        return EXIT_USAGE, _first_line(str(exc.args[0]) if exc.args else _("missing key"))
    if isinstance(exc, (ValueError, FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError)):
        if isinstance(exc, OSError) and exc.filename is not None:
            return EXIT_USAGE, _("{reason}: {file}").format(reason=_os_reason(exc), file=exc.filename)
        return EXIT_USAGE, _first_line(str(exc)) or type(exc).__name__
    if isinstance(exc, MemoryError):
        return EXIT_FAILURE, _("out of memory; try a smaller size")
    if isinstance(exc, (OSError, RuntimeError, TimeoutError)):
        return EXIT_FAILURE, _first_line(f"{type(exc).__name__}: {exc}")
    return EXIT_FAILURE, _first_line(_("internal error {kind}: {error}; please report it with --debug").format(
        kind=type(exc).__name__, error=exc))


@contextmanager
def sigterm_raises() -> Iterator[None]:
    """While active (main thread only), SIGTERM raises :class:`~nvcourse.errors.Terminated` so clean-up runs,
    and Ctrl-C raises KeyboardInterrupt even when SIGINT was inherited as ignored: a shell script's background
    job (`cmd &` without job control), nohup'ed or harness-started commands get SIGINT ignored, and
    `nvcourse bench` then ran to its last size after Ctrl-C."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def _raise(signum, frame):
        raise Terminated()

    old = signal.signal(signal.SIGTERM, _raise)
    if hasattr(signal, "SIGUSR1"):  # `kill -USR1 PID` prints where a stuck command is (all threads' stacks)
        try:  # to the real stderr: under a test's capture sys.stderr has no file descriptor
            faulthandler.register(signal.SIGUSR1, file=sys.__stderr__, all_threads=True)
        except (ValueError, OSError, AttributeError, RuntimeError):
            pass
    old_int = signal.getsignal(signal.SIGINT)
    if old_int is signal.SIG_IGN or old_int is signal.SIG_DFL:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)
        if old_int is signal.SIG_IGN or old_int is signal.SIG_DFL:
            signal.signal(signal.SIGINT, old_int)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one sub-command and return its status; on an error print one line and raise ``SystemExit`` with
    the status of the module docstring (as argparse does for usage errors)."""
    debug = debug_requested(argv)
    try:
        with sigterm_raises():
            parser = build_parser()
            args = parser.parse_args(argv)
            debug = debug or bool(getattr(args, "debug", False))
            handler: Callable[[argparse.Namespace], int] = args.handler
            return int(handler(args) or 0)
    except SystemExit:  # argparse (--help, --version, usage errors) and explicit exits
        raise
    except BrokenPipeError:  # e.g. `nvcourse systems | head`
        quiet_stdout()
        return 0
    except BaseException as exc:
        code, message = classify(exc)
        if debug:
            traceback.print_exc()
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        if code in (EXIT_INTERRUPT, EXIT_TERMINATED):
            line = _("nvcourse: {message}").format(message=printable(message))
        else:
            line = _("nvcourse: error: {message}").format(message=printable(message))
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
        raise SystemExit(code) from None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
