"""Run the ``nvcourse`` command line inside the test process (fast, and its output is captured by pytest)."""

from nvcourse.cli import main


def exit_code(args: list[str]) -> int:
    """The exit status of ``nvcourse ARGS`` (argparse's own errors exit through SystemExit)."""
    try:
        return main(args)
    except SystemExit as exc:
        return exc.code


def run_main(args: list[str], capsys) -> tuple[int, str, str]:
    """(status, stdout, stderr) of ``nvcourse ARGS``, read from pytest's ``capsys``."""
    code = exit_code(args)
    out = capsys.readouterr()
    return code, out.out, out.err
