"""Text in and out of the command line, shared by every sub-command and by the readers that take a file.

One helper per job: :func:`print_json` writes a result the same way everywhere; :func:`read_input` reads a
pasted or saved tool output (a path, or ``-`` for stdin) with the same limits everywhere.
"""

from __future__ import annotations

import json
import os
import sys

from .i18n import translate as _

__all__ = ["MAX_INPUT_BYTES", "print_json", "quiet_stdout", "read_input"]

#: A paste larger than this is not a log anyone meant to read whole (64 MiB).
MAX_INPUT_BYTES = 64 * 1024 * 1024


def print_json(obj: object) -> None:
    """Write JSON to stdout the same way for every sub-command."""
    json.dump(obj, sys.stdout, indent=2, sort_keys=False)
    sys.stdout.write("\n")


def quiet_stdout() -> None:
    """After a broken pipe (``... | head``), point stdout at /dev/null so that the interpreter's final flush is
    silent instead of a BrokenPipeError traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def read_input(path: str) -> str:
    """Text of ``path`` (``-``: stdin); ValueError for input over :data:`MAX_INPUT_BYTES` or binary."""
    if path == "-":
        data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    else:
        with open(path, "rb") as fh:
            data = fh.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        raise ValueError(_("FILE is larger than {mib} MiB: pass the part with the results").format(
            mib=MAX_INPUT_BYTES // 2**20))
    if b"\x00" in data:
        raise ValueError(_("FILE is binary: expected the text nccl-tests or NCCL printed"))
    return data.decode("utf-8", errors="replace")
