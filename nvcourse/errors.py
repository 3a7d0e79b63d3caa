"""The errors every part of nvcourse raises for the command line to report, and their exit statuses.

Any sub-command (``nvcourse doctor``, ``bench``, ``topo`` ... and any later one registered through
``register(subparsers)``) raises one of these; :func:`nvcourse.cli.main` turns it into **one line on
stderr** and an exit status, never a traceback (unless ``--debug`` or ``NVCOURSE_DEBUG=1``):

===================  ======  ===========================================================================
raise                status  when
===================  ======  ===========================================================================
:class:`UsageError`  2       bad command-line input or a bad input file (a ``ValueError``, so library
                             callers can catch it as one); plain ``ValueError``/``KeyError``/missing file
                             are treated the same
:class:`ResourceError`  2    the request does not fit this machine (RAM, /dev/shm): the message gives the
                             numbers and how to raise the limit
:class:`RuntimeFailure` 1    the input was fine but the run failed: a worker died, a timeout, an engine
                             missing (a ``RuntimeError``); any other unexpected exception is also 1
``KeyboardInterrupt``  130   Ctrl-C (SIGINT)
:class:`Terminated`    143   SIGTERM (a ``KeyboardInterrupt`` subclass, so every clean-up path that
                             handles an interrupt handles it too)
===================  ======  ===========================================================================

The message should name the parameter or the failing part and say what to do; it is printed as
``nvcourse: error: <message>`` (only its first line unless debugging).
"""

from __future__ import annotations

__all__ = ["NvcourseError", "UsageError", "ResourceError", "RuntimeFailure", "Terminated", "EXIT_USAGE",
           "EXIT_FAILURE", "EXIT_INTERRUPT", "EXIT_TERMINATED"]

EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPT = 130  # 128 + SIGINT, what shells report for a Ctrl-C'd command
EXIT_TERMINATED = 143  # 128 + SIGTERM


class NvcourseError(Exception):
    """Base of the errors the command line reports as one line; ``exit_code`` is the process status."""

    exit_code = EXIT_FAILURE


class UsageError(NvcourseError, ValueError):
    """Bad input (an argument, a file's content): exit status 2."""

    exit_code = EXIT_USAGE


class ResourceError(UsageError):
    """The request does not fit the machine (memory, /dev/shm); exit status 2 (choose a smaller size)."""


class RuntimeFailure(NvcourseError, RuntimeError):
    """The run failed although the input was valid (worker died, timeout, engine missing): exit status 1."""

    exit_code = EXIT_FAILURE


class Terminated(KeyboardInterrupt):
    """Raised in the main thread by the command line's SIGTERM handler: exit status 143."""
