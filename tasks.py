#!/usr/bin/env python3
"""Project commands. Needs only Python 3.11+; everything else is installed on first use.

    python3 tasks.py lab        # install what is missing, open the course in JupyterLab
    python3 tasks.py lab --offline DIR        # the same, installing only from a wheelhouse (no network)
    python3 tasks.py lab --lang fr            # the French edition, in JupyterLab's French interface
    python3 tasks.py wheelhouse DIR [--this-platform]   # every wheel the course needs, for a USB stick
    python3 tasks.py test       # install what is missing (Chromium, Open MPI, torch CPU, mpi4py), lint, run the tests
    python3 tasks.py lint       # ruff over the whole tree (configuration in pyproject.toml)
    python3 tasks.py execute    # re-execute every notebook in place, then regenerate exercises/
    python3 tasks.py exercises  # regenerate exercises/ from solutions/ (--check: fail if stale)
    python3 tasks.py budget     # execute the whole course as Binder would; time and peak memory per notebook
    python3 tasks.py latency    # time every dashboard's update (target: 150 ms per slider change)
    python3 tasks.py release --learners DIR [--solutions-url URL]   # the course without solutions/
    python3 tasks.py slides     # a reveal.js deck per chapter, offline (artifacts/slides/index.html)
    python3 tasks.py handouts   # each chapter and the quiz printed to PDF by Chromium (artifacts/handouts/)
    python3 tasks.py hub [--users 30] [--ip 0.0.0.0] [--port 8000]   # a classroom JupyterHub on this machine
    python3 tasks.py i18n extract|update|build|status   # the French edition: templates, catalogs, notebooks/fr/
    python3 tasks.py COMMAND --help         # what a command does and where its other arguments go

A virtual environment is kept in ``.venv/`` (override with NVCOURSE_VENV). Installs are skipped when
pyproject.toml has not changed since the last one.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = Path(os.environ.get("NVCOURSE_VENV", ROOT / ".venv"))
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
CHROMIUM_PACKAGES = ("chromium",)


def say(msg: str) -> None:
    print(f"[tasks] {msg}", flush=True)


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


#: Exit status after Ctrl-C (128 + SIGINT, as shells report it).
EXIT_INTERRUPTED = 130
#: The Ctrl-C that kills a command still running (two are its own: JupyterLab's confirm, the hub's kill-now).
KILL_AFTER_INTERRUPTS = 3


def run(cmd: list[str | Path], **kw) -> int:
    """Run ``cmd`` and return its exit status; after a Ctrl-C, let it finish stopping, then exit 130 (a third
    Ctrl-C kills a command that has not stopped).

    Ctrl-C in a terminal reaches the whole foreground process group, so the command has it too and stops on
    its own terms: JupyterLab asks to confirm, the classroom hub stops its learners' servers, pytest reports.
    ``subprocess.call`` would instead kill it 0.25 s later (before that cleanup) and raise a traceback here.
    """
    say(" ".join(str(c) for c in cmd))
    proc = subprocess.Popen([str(c) for c in cmd], **kw)
    interrupted = 0
    while True:
        try:
            rc = proc.wait()
            break
        except KeyboardInterrupt:
            interrupted += 1  # wait for the command: it received the same Ctrl-C
            if interrupted == KILL_AFTER_INTERRUPTS:  # a command that will not stop: kill it
                proc.kill()
    if interrupted:
        say(f"interrupted (the command exited with status {rc})")
        sys.exit(EXIT_INTERRUPTED)
    return rc


def ensure_env(extras: str = "", wheelhouse: Path | None = None) -> Path:
    """Create .venv if needed and install nvcourse (editable) with the given extras.

    With ``wheelhouse``, pip installs from that folder only (``--no-index``): a room without network.
    """
    py = venv_python()
    if not py.exists():
        say(f"creating virtual environment in {VENV}")
        venv.EnvBuilder(with_pip=True, upgrade_deps=False).create(VENV)
    wanted = {e for e in extras.split(",") if e}
    pyproject = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    marker = VENV / ".nvcourse-install"
    installed = installed_extras(marker, pyproject)
    # Installed extras are kept, never traded: `lab` (no extras) or `hub` after `test` installs nothing, so a test
    # run that calls `tasks.py lab` does not reinstall the package under the tests' feet (its `nvcourse` script
    # vanishes while pip rewrites it).
    if installed is None or not wanted <= installed | {i for e in installed for i in EXTRAS_IMPLY.get(e, ())}:
        union = sorted(wanted | (installed or set()))
        spec = f".[{','.join(union)}]" if union else "."
        offline = ["--no-index", "--find-links", str(wheelhouse)] if wheelhouse else []
        rc = run([py, "-m", "pip", "install", "--disable-pip-version-check", "-q", *offline, "-e", spec], cwd=ROOT)
        if rc != 0:
            sys.exit(f"[tasks] pip install failed (exit {rc})")
        marker.write_text(json.dumps({"pyproject_sha256": pyproject, "extras": union}))
    return py


#: Extras whose packages another extra already lists (pyproject.toml: the tests start a hub, so `test` has `hub`'s).
EXTRAS_IMPLY = {"test": ("hub", "i18n", "fr")}


def installed_extras(marker: Path, pyproject_sha256: str) -> set[str] | None:
    """The extras installed for this pyproject.toml (an empty set: the package alone), or None when the package
    must be installed again (no marker, an older marker format, or pyproject.toml changed since)."""
    try:
        data = json.loads(marker.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("pyproject_sha256") != pyproject_sha256:
        return None
    return set(data.get("extras", []))


def find_chromium() -> str | None:
    for path in (os.environ.get("NVCOURSE_CHROMIUM"), *CHROMIUM_CANDIDATES):
        if path and Path(path).exists():
            return path
    return shutil.which("chromium")


def apt_install(what: str, packages: tuple[str, ...], why: str) -> bool:
    """Install Debian ``packages`` (``what``, for ``why``) with apt-get when we are root; say first what and why.

    The one place tasks.py touches the system: everything else goes into .venv. Without root or apt-get it says
    what is missing and what will skip instead. True when apt-get succeeded.
    """
    is_root = hasattr(os, "geteuid") and os.geteuid() == 0
    if not (is_root and shutil.which("apt-get")):
        say(f"{what} not found and cannot install it (needs root and apt-get); {why} will skip")
        return False
    say(f"installing {what} from Debian's packages ({', '.join(packages)}) for {why}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    return (run(["apt-get", "update", "-q"], env=env) == 0
            and run(["apt-get", "install", "-y", "-q", "--no-install-recommends", *packages], env=env) == 0)


def ensure_chromium() -> str | None:
    """Install Debian's Chromium when missing and we are root (the browser test needs it)."""
    found = find_chromium()
    if found or os.environ.get("NVCOURSE_NO_BROWSER"):
        return found
    apt_install("Chromium", CHROMIUM_PACKAGES, "the browser test")
    return find_chromium()


TORCH_PIN = "torch==2.13.0"  # a CPU build; another version could pull a multi-GB CUDA build
OPENMPI_PACKAGES = ("openmpi-bin", "libopenmpi-dev")


def _has_module(py: Path, module: str) -> bool:
    return subprocess.call([str(py), "-c", f"import {module}"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL) == 0


def ensure_engines(py: Path) -> None:
    """Install the engines the torch/MPI/cluster tests need when missing; those tests skip with a reason otherwise.

    torch 2.13.0 (CPU) and mpi4py come from pip; Open MPI (mpirun) from Debian's packages, as root only.
    NVCOURSE_NO_ENGINES=1 skips all of it.
    """
    if os.environ.get("NVCOURSE_NO_ENGINES"):
        say("NVCOURSE_NO_ENGINES set: not installing torch / Open MPI / mpi4py; their tests will skip")
        return
    pip = [py, "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    if not _has_module(py, "torch.distributed"):
        say(f"installing {TORCH_PIN} (CPU) for the torch engine and cluster tests")
        if run([*pip, TORCH_PIN]) != 0:
            say("torch install failed; the torch engine tests will skip")
    if shutil.which("mpirun") is None:
        apt_install("Open MPI (mpirun)", OPENMPI_PACKAGES, "the MPI engine tests")
    if shutil.which("mpirun") is not None and not _has_module(py, "mpi4py"):
        say("installing mpi4py for the MPI engine tests")
        if run([*pip, "mpi4py"]) != 0:
            say("mpi4py install failed; the MPI engine tests will skip")


#: --lang VALUE -> (the notebook JupyterLab opens, the JupyterLab locale, the extra with its language pack)
EDITIONS = {"en": ("notebooks/00_start_here.ipynb", "", ""),
            "fr": ("notebooks/fr/00_start_here.ipynb", "fr_FR", "fr")}


def lab_edition(args: list[str], command: str = "lab") -> tuple[str, list[str]] | None:
    """The ``--lang`` value (default ``en``) and the other arguments of ``command`` (lab, slides, handouts); None
    after saying what is allowed."""
    if "--lang" not in args:
        return "en", args
    i = args.index("--lang")
    lang = args[i + 1] if i + 1 < len(args) else ""
    if lang not in EDITIONS:
        say(f"{command} --lang must be one of {', '.join(EDITIONS)} (got {lang!r})")
        return None
    return lang, args[:i] + args[i + 2:]


def lab_settings(lang: str) -> dict[str, str]:
    """Environment for JupyterLab in ``lang``: the kernels' course language (NVCOURSE_LANG, read by nvcourse) and,
    for a translated edition, a settings folder of its own whose only setting is the interface's locale (the
    learner's usual JupyterLab settings are left as they are)."""
    _, locale, _ = EDITIONS[lang]
    if not locale:
        return {}
    settings = ROOT / "artifacts" / f"lab-{lang}" / "user-settings"
    plugin = settings / "@jupyterlab" / "translation-extension" / "plugin.jupyterlab-settings"
    plugin.parent.mkdir(parents=True, exist_ok=True)
    plugin.write_text(json.dumps({"locale": locale}) + "\n")
    return {"NVCOURSE_LANG": lang, "JUPYTERLAB_SETTINGS_DIR": str(settings)}


def cmd_lab(args: list[str]) -> int:
    edition = lab_edition(args)
    if edition is None:
        return 2
    lang, args = edition
    wheelhouse = None
    if "--offline" in args:
        i = args.index("--offline")
        if i + 1 >= len(args) or not Path(args[i + 1]).is_dir():
            say("lab --offline needs the wheelhouse folder: python3 tasks.py lab --offline DIR")
            return 2
        wheelhouse = Path(args[i + 1]).resolve()
        args = args[:i] + args[i + 2:]
    start, _, extra = EDITIONS[lang]
    py = ensure_env(extras=extra, wheelhouse=wheelhouse)
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in args:
        # JupyterLab refuses to start as root; in a container root is often the only user there is
        say("running as root (a container?): passing --allow-root to JupyterLab")
        args = [*args, "--allow-root"]
    env = {**os.environ, **lab_settings(lang)}
    return run([py, "-m", "jupyterlab", start, *args], cwd=ROOT, env=env)


def cmd_lint(args: list[str]) -> int:
    py = ensure_env("test")
    return run([py, "-m", "ruff", "check", ".", *args], cwd=ROOT)


def cmd_hub(args: list[str]) -> int:
    py = ensure_env("hub")
    return run([py, "-m", "nvcourse.devtools.hub", *args], cwd=ROOT)


def cmd_wheelhouse(args: list[str]) -> int:
    # Standard library only: runs with this Python, before any virtual environment exists.
    return run([sys.executable, ROOT / "nvcourse" / "devtools" / "wheelhouse.py", *args], cwd=ROOT)


def cmd_test(args: list[str]) -> int:
    py = ensure_env("test")
    if cmd_lint([]) != 0:  # a lint error fails the test command (and CI) before any test runs
        say("lint failed: fix what ruff reports above (python3 tasks.py lint)")
        return 1
    # No MPLBACKEND here: kernels must pick the inline backend, as in JupyterLab, or figures vanish
    env = {**os.environ, "JUPYTER_PLATFORM_DIRS": "1", "PYTHONHASHSEED": "0"}
    chromium = ensure_chromium()
    ensure_engines(py)
    if chromium:
        env["NVCOURSE_CHROMIUM"] = chromium
    rc = run([py, "-m", "pytest", *args], cwd=ROOT, env=env)
    return rc


def cmd_execute(args: list[str]) -> int:
    py = ensure_env("test")
    return run([py, "-m", "nvcourse.devtools.execute_notebooks", *args], cwd=ROOT)


def cmd_exercises(args: list[str]) -> int:
    py = ensure_env("test")
    return run([py, "-m", "nvcourse.devtools.make_exercises", *args], cwd=ROOT)


def cmd_budget(args: list[str]) -> int:
    py = ensure_env("test")
    return run([py, "benchmarks/binder_budget.py", *args], cwd=ROOT)


def cmd_latency(args: list[str]) -> int:
    py = ensure_env("test")
    return run([py, "benchmarks/widget_latency.py", *args], cwd=ROOT)


def cmd_release(args: list[str]) -> int:
    py = ensure_env()
    return run([py, "-m", "nvcourse.devtools.release", *args], cwd=ROOT)


def cmd_slides(args: list[str]) -> int:
    edition = lab_edition(args, "slides")  # refused before anything is installed
    if edition is None:
        return 2
    lang, args = edition
    py = ensure_env("test")
    return run([py, "-m", "nvcourse.devtools.slides", "--lang", lang, *args], cwd=ROOT)


def cmd_i18n(args: list[str]) -> int:
    py = ensure_env("i18n")
    return run([py, "-m", "nvcourse.devtools.i18n_cli", *args], cwd=ROOT)


def cmd_handouts(args: list[str]) -> int:
    edition = lab_edition(args, "handouts")  # refused before anything is installed
    if edition is None:
        return 2
    lang, args = edition
    py = ensure_env("test")
    chromium = ensure_chromium()
    env = {**os.environ, **({"NVCOURSE_CHROMIUM": chromium} if chromium else {})}
    return run([py, "-m", "nvcourse.devtools.handouts", "--lang", lang, *args], cwd=ROOT, env=env)


#: name -> (function, one line for the list, what it does and where its other arguments go)
COMMANDS = {
    "lab": (cmd_lab, "install what is missing, open the course in JupyterLab",
            "--offline DIR installs only from a wheelhouse folder (no network); --lang fr opens the French "
            "edition (notebooks/fr/, the kernels in French, JupyterLab's French language pack); other arguments go "
            "to JupyterLab (e.g. --no-browser --ip 0.0.0.0). As root, --allow-root is added."),
    "test": (cmd_test, "install what is missing (Chromium, Open MPI, torch CPU, mpi4py), lint, run the tests",
             "Runs ruff, then pytest (unit tests, nbval over the notebooks, the browser test). Arguments go to "
             "pytest (e.g. tests/test_cli.py -k json). As root, installs Chromium and Open MPI with apt-get; "
             "NVCOURSE_NO_BROWSER=1 / NVCOURSE_NO_ENGINES=1 skip them."),
    "lint": (cmd_lint, "ruff over the whole tree (configuration in pyproject.toml)",
             "Arguments go to ruff check (e.g. --fix)."),
    "execute": (cmd_execute, "re-execute notebooks in place, then regenerate exercises/",
                "Without paths: every notebook. With paths (notebooks/NN_topic.ipynb ...): only those."),
    "exercises": (cmd_exercises, "regenerate exercises/ from solutions/",
                  "--check: do not write; exit 1 if exercises/ is out of date."),
    "budget": (cmd_budget, "execute the course as Binder would; time and peak memory per notebook",
               "Arguments go to benchmarks/binder_budget.py."),
    "latency": (cmd_latency, "time every dashboard's update (target: 150 ms per slider change)",
                "Arguments go to benchmarks/widget_latency.py."),
    "release": (cmd_release, "the course without solutions/, for learners",
                "--learners DIR [--solutions-url URL]; arguments go to python -m nvcourse.devtools.release."),
    "slides": (cmd_slides, "a reveal.js deck per chapter, offline (artifacts/slides/index.html)",
               "--lang fr builds the French edition's decks (notebooks/fr/, the kernels in French) into "
               "artifacts/slides/fr/. Arguments go to python -m nvcourse.devtools.slides."),
    "handouts": (cmd_handouts, "each chapter and the quiz printed to PDF by Chromium (artifacts/handouts/)",
                 "--lang fr prints the French edition (notebooks/fr/, exercises/fr/, solutions/fr/ for the key) "
                 "into artifacts/handouts/fr/. Arguments go to python -m nvcourse.devtools.handouts (e.g. "
                 "--answer-key)."),
    "wheelhouse": (cmd_wheelhouse, "every wheel the course needs, for a USB stick",
                   "DIR [--this-platform]; arguments go to nvcourse/devtools/wheelhouse.py (standard library only)."),
    "i18n": (cmd_i18n, "the French edition: templates, catalogs, notebooks/fr/ (extract, update, build, status)",
             "extract [--check] writes locales/*.pot; update merges them into locales/fr/LC_MESSAGES/*.po; "
             "build [--execute] writes notebooks/fr/, solutions/fr/, exercises/fr/ and the .mo; status [--check] "
             "prints the share translated per chapter. Arguments go to python -m nvcourse.devtools.i18n_cli."),
    "hub": (cmd_hub, "a classroom JupyterHub on this machine",
            "Arguments go to python -m nvcourse.devtools.hub (e.g. --users 30 --ip 0.0.0.0 --port 8000; --stop stops "
            "a hub started earlier)."),
}


def build_parser() -> argparse.ArgumentParser:
    """``python3 tasks.py [-h] COMMAND [-h] [ARGS...]``: standard library only, nothing installed to show help."""
    parser = argparse.ArgumentParser(prog="python3 tasks.py", description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_, summary, details) in COMMANDS.items():
        sub.add_parser(name, help=summary, description=f"{summary}.\n\n{details}\n\nAn option of the tool "
                       f"itself that tasks.py also knows (-h) goes after --: python3 tasks.py {name} -- --help",
                       formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False)
    return parser


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in COMMANDS and argv[0] not in ("-h", "--help"):
        print(__doc__)
        return 2
    parser = build_parser()
    # tasks.py knows only -h: everything else after the command is the tool's (pytest, ruff, JupyterLab, ...)
    ns, rest = parser.parse_known_args(argv[:1] + [a for a in argv[1:2] if a in ("-h", "--help")])
    rest = argv[1:]
    if rest[:1] == ["--"]:
        rest = rest[1:]
    return COMMANDS[ns.command][0](rest)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:  # between commands (creating the venv, probing a module): nothing to clean up
        say("interrupted")
        sys.exit(EXIT_INTERRUPTED)
