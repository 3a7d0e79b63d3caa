"""The ``nvcourse`` command line.

Sub-commands (a stable interface; see README "Command line"):

* ``nvcourse doctor`` — environment check;
* ``nvcourse systems [--json]`` — the hardware catalog;
* ``nvcourse links [--json]`` — link types with the alpha-beta model's parameters;
* ``nvcourse predict ...`` — collective cost model (``nvcourse.costmodel``);
* ``nvcourse bench ...`` — nccl-tests-style measurement on CPU processes (``nvcourse.collectives``);
* ``nvcourse topo FILE`` — read ``nvidia-smi topo -m`` output (``nvcourse.topology``).

Bad input exits with status 2 and a one-line message naming the parameter and what is allowed, never a
traceback. Each feature module registers its own sub-command through a ``register(subparsers)``
function so that this file stays a thin dispatcher.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable, Sequence

from . import __version__

# Modules that contribute sub-commands with `register(subparsers) -> None`. A module that does not
# exist yet (a chapter still being written) is skipped, so the command line never breaks on it.
_FEATURE_MODULES = (
    "nvcourse.catalog_cli",
    "nvcourse.doctor",
    "nvcourse.costmodel.cli",
    "nvcourse.collectives.cli",
    "nvcourse.topology.cli",
    "nvcourse.nccl.cli",
    "nvcourse.cluster.cli",
)


class UsageError(ValueError):
    """Bad command-line input: reported as ``nvcourse: error: ...`` with exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nvcourse",
        description="How GPUs talk to each other: catalog, cost models, CPU collectives and topology tools.",
    )
    parser.add_argument("--version", action="version", version=f"nvcourse {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in _FEATURE_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:  # only skip the feature module itself being absent
            if exc.name != name and not name.startswith(str(exc.name) + "."):
                raise
            continue
        module.register(sub)
    return parser


def print_json(obj: object) -> None:
    """Write JSON to stdout the same way for every sub-command."""
    json.dump(obj, sys.stdout, indent=2, sort_keys=False)
    sys.stdout.write("\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return int(handler(args) or 0)
    except (ValueError, KeyError, FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        parser.exit(2, f"nvcourse: error: {message}\n")
    except BrokenPipeError:  # e.g. `nvcourse systems | head`
        return 0
    except KeyboardInterrupt:
        parser.exit(130, "nvcourse: interrupted\n")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
