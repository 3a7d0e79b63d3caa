"""Every command in README.md, docs/*.md and the notebooks' shell cells, run as written and checked for meaning.

The commands are read from the files (fenced blocks and inline code that starts with a command), never retyped
here. Each one is classified below, by its text, as run (with a check of what it printed or wrote), a server
(started, probed, stopped) or skipped with a stated reason; a command added to the docs without a
classification fails :func:`test_every_documented_command_is_classified`.

How "as written" is kept:

* ``[OPTION]`` groups (the README's optional parts) run twice: without them, and with them, where a choice
  ``a|b|c`` takes its first value. A trailing ``# comment`` is not part of the command.
* Commands that write files run in a scratch copy of the checkout (tracked files, ``.venv`` linked, so tasks.py
  installs nothing); placeholders name fixtures copied there under that name (``my_topo.txt``, ``run.txt``,
  ``nccl.log``: real outputs kept in the repository) or a scratch folder (``DIR``).
* ``sudo``: as root, a ``sudo`` that runs its command is first on PATH when the machine has none (a container);
  not root, those commands skip. ``nvcourse`` and ``python`` are the course's virtual environment, as after
  ``python3 tasks.py lab``. A notebook's ``!{sys.executable} ...`` gets the interpreter, as IPython does.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = ROOT / ".venv" / "bin"
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
STARTS = re.compile(r"^(sudo |python3? |py |\.venv/bin/|nvcourse |pip3? |PYTHONPATH=|jupyter |git |bash |npm |"
                    r"docker |torchrun |mpirun )")
FIXTURES = {"my_topo.txt": "nvcourse/data/topo/a100-8gpu-simple.txt",
            "run.txt": "tests/fixtures/nccl_tests/allreduce_h100_2nodes_srun_label_nccltests290.txt",
            "nccl.log": "tests/fixtures/ncclog/graph_nvls_h100_2nodes_nccl1519.log"}


# -- extraction ---------------------------------------------------------------------------------------------
def _strip_comment(line: str) -> str:
    return re.split(r"\s+#\s", line, maxsplit=1)[0].strip()


def documented() -> dict[str, list[str]]:
    """{command: [where it is written]} from README.md, docs/*.md and the notebooks' shell cells."""
    found: dict[str, list[str]] = {}
    for f in [ROOT / "README.md", ROOT / "README.fr.md", *sorted((ROOT / "docs").glob("*.md")),
              *sorted((ROOT / "docs" / "fr").glob("*.md"))]:
        text = f.read_text(encoding="utf-8")
        for body in re.findall(r"```[a-z]*\n(.*?)```", text, re.S):
            for line in body.splitlines():
                if STARTS.match(line.strip()):
                    found.setdefault(_strip_comment(line), []).append(f.name)
        for span in re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S)):
            if STARTS.match(span.strip()):
                found.setdefault(span.strip(), []).append(f.name)
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(nb.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code":
                src = "".join(cell["source"])
                for line in src.splitlines():
                    if line.lstrip().startswith("!"):
                        found.setdefault(line.strip(), []).append(nb.name)
                if src.startswith(("%%bash", "%%sh")):
                    found.setdefault(src, []).append(nb.name)
    return found


def variants(cmd: str) -> list[str]:
    """The command without its ``[optional]`` parts and, when it has some, with them (first of ``a|b``)."""
    group = r"(?<=\s)\[([^\]]*)\]"  # [--json] after a space; split()[0] in Python code is not one
    if not re.search(group, cmd) or cmd.startswith("!"):
        return [cmd]
    bare = re.sub(r"\s+" + group, "", cmd)
    full = re.sub(group, lambda m: re.sub(r"(\S+?)\|\S+", r"\1", m.group(1)), cmd)
    return [bare, full]


# -- running ------------------------------------------------------------------------------------------------
@dataclass
class Result:
    rc: int
    out: str
    err: str
    cwd: Path


def _env(tmp: Path) -> dict[str, str]:
    shim = tmp / "shim"
    shim.mkdir(exist_ok=True)
    if IS_ROOT and shutil.which("sudo") is None:  # a container: root already, sudo not installed
        (shim / "sudo").write_text('#!/bin/sh\nexec "$@"\n')
        (shim / "sudo").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NVCOURSE_HUB")}
    env["PATH"] = os.pathsep.join([str(shim), str(VENV_BIN), env.get("PATH", "")])
    env["NVCOURSE_CLUSTER_PREFIX"] = "nvdoc-"  # never the namespaces of another run on this machine
    env["NVCOURSE_HUB_ACCOUNT_PREFIX"] = "nvdoc-"  # never the learner accounts of another hub on this machine
    env["NVCOURSE_CLUSTER_STATE"] = str(tmp / "cluster-state")
    return env


def scratch_copy(tmp: Path) -> Path:
    """The checkout's tracked files in ``tmp/course`` with the virtual environment linked, plus the fixtures."""
    dest = tmp / "course"
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True).stdout.split("\0")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    (dest / ".venv").symlink_to(ROOT / ".venv")
    git = ["git", "-c", "user.name=docs test", "-c", "user.email=docs@test.invalid"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "scratch copy"]):  # release reads git
        subprocess.run([*git, *args], cwd=dest, check=True, capture_output=True)
    for name, rel in FIXTURES.items():
        shutil.copy2(ROOT / rel, dest / name)
    return dest


def run(cmd: str, cwd: Path, tmp: Path, timeout: float = 300) -> Result:
    if cmd.startswith("!"):  # a notebook's shell line: IPython expands {sys.executable}
        cmd = cmd[1:].replace("{sys.executable}", sys.executable)
    cmd = cmd.replace(" DIR", f" {tmp / 'dir-out'}")
    proc = subprocess.run(["bash", "-c", cmd], cwd=cwd, env=_env(tmp), capture_output=True, text=True,
                          timeout=timeout)
    return Result(proc.returncode, proc.stdout, proc.stderr, cwd)


# -- what each command must show ----------------------------------------------------------------------------
def ok(*needles: str) -> Callable[[Result], None]:
    def check(r: Result) -> None:
        assert r.rc == 0, r.err[-2000:]
        for n in needles:
            assert n in r.out + r.err, f"{n!r} not in the output"
    return check


def json_list(key: str) -> Callable[[Result], None]:
    def check(r: Result) -> None:
        assert r.rc == 0, r.err[-2000:]
        data = json.loads(r.out)
        rows = data if isinstance(data, list) else data.get(key, data)
        assert rows and key in json.dumps(rows)
    return check


def json_has(files: tuple[str, ...] = (), **expected) -> Callable[[Result], None]:
    def check(r: Result) -> None:
        assert r.rc == 0, r.err[-2000:]
        data = json.loads(r.out)
        for k, v in expected.items():
            assert data[k] == v, f"{k}: {data[k]!r} != {v!r}"
        for f in files:
            assert (r.cwd / f).stat().st_size > 1000, f"{f} not written"
    return check


def binder_ok(r: Result) -> None:
    """Published: the link for the tag; not yet (no GitHub remote or no tag): one line saying what to give."""
    if r.rc == 0:
        assert r.out.startswith("https://mybinder.org/v2/gh/") and "00_start_here.ipynb" in r.out
    else:
        assert r.rc == 2 and len(r.err.strip().splitlines()) == 1 and ("--repo" in r.err or "--ref" in r.err)


def usage_line(r: Result) -> None:
    """A maintainers' tool named in prose without its arguments (it needs a clone of NCCL): one usage line, exit 2."""
    assert r.rc == 2 and len(r.err.strip().splitlines()) == 1 and r.err.startswith("usage:"), r.err[-500:]


def at_home_ok(r: Result) -> None:
    """The learners' pre-install check: ready here, or (no route to PyPI from this machine) says why."""
    if r.rc != 0 and "URLError" in r.err:
        pytest.skip("this machine cannot reach pypi.org; the check says so in its last line")
    assert r.rc == 0 and re.fullmatch(r"ready for nvcourse: Python 3\.\d+\.\d+\n", r.out), r.err[-500:]


def bench_ok(r: Result) -> None:
    assert r.rc == 0, r.err[-2000:]
    assert "Out of bounds values : 0 OK" in r.out and r.out.count("\n  ") >= 3


def predict_ok(r: Result) -> None:
    assert r.rc == 0, r.err[-2000:]
    text = r.out
    if text.lstrip().startswith(("{", "[")):
        data = json.loads(text)
        assert data["busbw_GBps"] > 0
    else:
        assert re.search(r"\d+(\.\d+)?\s*(GB/s|us|ms)", text)


def topo_ok(r: Result) -> None:
    assert r.rc == 0, r.err[-2000:]
    assert "GPU7" in r.out and ("NV12" in r.out or '"links"' in r.out)
    if "--draw topo.png" in r.cmd_text:  # type: ignore[attr-defined]
        assert (r.cwd / "topo.png").stat().st_size > 1000


def release_ok(r: Result) -> None:
    assert r.rc == 0, r.err[-2000:]
    out = Path(re.search(r"--learners (\S+)", r.cmd_text).group(1))  # type: ignore[attr-defined]
    assert (out / "notebooks" / "00_start_here.ipynb").is_file() and not (out / "solutions").exists()


AT_HOME = next((c for c in documented() if c.startswith('python3 -c "import sys, ensurepip')), "at-home check")
SKIP = "skip"
SERVER = "server"
CLUSTER = "cluster"
WRITES = "writes"  # runs in the scratch copy
BENCH = "a benchmark, minutes on 2 cores; its report is committed (benchmarks/) and re-measured by hand"
NAME = "names a subcommand in prose; its full forms are run from the README's command block"
PLACEHOLDER = "a template with placeholders (an authoring step for a chapter not written yet)"

CASES: dict[str, tuple] = {
    "python3 tasks.py lab": (SERVER, "lab"),
    "python3 tasks.py test": (SKIP, "the whole test suite, of which this test is part (CI runs it)"),
    "nvcourse doctor": (ok("[OK  ] python", "jupyterlab"),),
    "nvcourse systems": (ok("dgx-h100", "gb200-nvl72"),),
    "nvcourse systems --json": (json_list("dgx-h100"),),
    "nvcourse links": (ok("nvlink4", "pcie4"),),
    "nvcourse links --json": (json_list("nvlink4"),),
    "nvcourse predict allreduce --system dgx-h100 --gpus 8 --bytes 1GiB": (predict_ok,),
    "nvcourse predict allreduce --system dgx-h100 --gpus 8 --bytes 1GiB --nodes 4 --fabric ib-ndr --algo auto "
    "--proto auto --launch device --json": (predict_ok,),
    "nvcourse predict allreduce --system gb200-nvl72 --gpus 72 --min-bytes 8 --max-bytes 8GiB": (ok("8589934592"),),
    "nvcourse bench allreduce --procs 4 --min-bytes 1KiB --max-bytes 64MiB": (bench_ok,),
    "nvcourse bench allreduce --procs 4 --min-bytes 1KiB --max-bytes 64MiB --algo ring --backend shm --json "
    "--format nccl-tests": (json_list("busbw_GBps"),),
    "nvcourse topo my_topo.txt": (WRITES, topo_ok),
    "nvcourse topo my_topo.txt --json --draw topo.png": (WRITES, topo_ok),
    "nvcourse nccl-tests run.txt": (WRITES, ok("busbw")),
    "nvcourse nccl-tests run.txt --system dgx-h100 --gpus 8 --nodes 2 --json --plot out.png": (WRITES, json_has(
        ("out.png",), op="allreduce", nranks=16)),
    "nvcourse ncclog nccl.log": (WRITES, ok("NCCL", "ranks")),
    "nvcourse ncclog nccl.log --json": (WRITES, json_has(nranks=16)),
    "sudo nvcourse cluster up --nodes 2 --ranks-per-node 2 --nic 1Gbit": (CLUSTER,),
    "sudo nvcourse cluster up --nodes 2 --ranks-per-node 2 --nic 1Gbit --latency 50us --oversubscription 2:1":
        (CLUSTER,),
    "sudo nvcourse cluster run --backend torch -- nvcourse bench allreduce --procs 4 --bytes 64MiB": (CLUSTER,),
    "sudo nvcourse cluster status; sudo nvcourse cluster down": (CLUSTER,),
    "sudo nvcourse cluster status --json; sudo nvcourse cluster down": (CLUSTER,),
    "nvcourse --help": (ok("bench", "predict", "cluster"),),
    "nvcourse bench": (SKIP, NAME),
    "mpirun --bind-to numa": (SKIP, "an Open MPI option named in the glossary's NUMA entry, not run alone"),
    "nvcourse predict": (SKIP, NAME),
    "nvcourse cluster": (SKIP, NAME),
    "nvcourse nccl-tests": (SKIP, NAME),
    "nvcourse ncclog": (SKIP, NAME),
    "nvcourse systems` / `nvcourse links": (SKIP, NAME),
    "python -m nvcourse.costmodel.sweeps": (ok("calibration"),),
    "python -m nvcourse.costmodel.sweeps --markdown docs/model-validation.md": (WRITES, ok()),
    "python -m nvcourse.costmodel.nccl_history": (usage_line,),
    "python -m nvcourse.devtools.architecture": (ok(),),
    "python -m nvcourse.devtools.cheatsheet": (WRITES, ok()),
    "nvcourse predict --nccl-version X.Y": (SKIP, "X.Y is a placeholder for an NCCL release"),
    "python -m nvcourse.devtools.doors binder": (binder_ok,),
    "nvcourse predict --registered": (SKIP, "names an option in prose; predict's full forms are run above"),
    "python -m nvcourse.devtools.agenda": (ok(),),
    "python -m nvcourse.devtools.reading_time": (ok("total reading"),),
    "python -m nvcourse.devtools.reader_score tests/fixtures/pasted_heldout": (ok("fields right"),),
    "python -m nvcourse.devtools.reader_score tests/fixtures/pasted_heldout2": (ok("fields right"),),
    "python -m nvcourse.devtools.reader_score tests/fixtures/pasted_heldout3": (ok("fields right"),),
    "python -m nvcourse.devtools.reader_score tests/fixtures/pasted_heldout4": (ok("fields right"),),
    "python -m nvcourse.devtools.reader_score tests/fixtures/tables_heldout": (ok("260/260 fields right"),),
    "python -m nvcourse.devtools.reader_score tests/fixtures/pasted_heldout5": (ok("138/138 fields right"),),
    "python -m nvcourse.devtools.reader_score tests/fixtures/tables_heldout2": (ok("46/46 fields right"),),
    "python -m nvcourse.devtools.tuner_check tests/fixtures/tables_heldout/h200x8-nccl2.30.4-ctc-probe.log --system "
    "hgx-h200 --gpus 8 --nccl-version 2.30": (ok("agree: 21 of 21 cells enabled on either side"),),
    "python -m nvcourse.devtools.quiz_report /var/lib/nvcourse-hub/homes/*/.nvcourse/quiz": (
        SKIP, "reads the answers of a running hub's learners; the report itself is tested on answer files"),
    "python -m nvcourse.devtools.quiz_report export.csv": (SKIP, "export.csv is the room's form export"),
    "python3 tasks.py handouts --answer-key": (WRITES, ok(), "slow"),
    AT_HOME: (at_home_ok,),
    'py -c "…"': (SKIP, "Windows' launcher with the same code, which runs above with python3"),
    "python -m nvcourse.devtools.doors binder --repo OWNER/REPO --ref TAG": (ok(
        "https://mybinder.org/v2/gh/OWNER/REPO/TAG?urlpath=lab/tree/notebooks/00_start_here.ipynb"),),
    "python3 tasks.py lab --no-browser --ip 0.0.0.0": (SERVER, "lab"),
    "python3 tasks.py lab --lang fr": (SERVER, "lab"),
    "python -m nvcourse.devtools.quiz_report DIR|FILE": (SKIP, "a synopsis: DIR|FILE stands for the two forms above"),
    "python3 tasks.py budget": (SKIP, BENCH),
    "python3 tasks.py latency": (SKIP, BENCH),
    "python3 tasks.py lint": (ok(),),
    "python3 tasks.py execute": (SKIP, "re-executes every notebook (about 15 minutes); nbval checks them in the suite"),
    "python3 tasks.py execute NOTEBOOK...": (SKIP, PLACEHOLDER),
    "python3 tasks.py execute notebooks/NN_topic.ipynb": (SKIP, PLACEHOLDER),
    "python3 tasks.py exercises": (WRITES, ok()),
    "python3 tasks.py exercises --check": (ok(),),
    "python3 tasks.py i18n extract": (WRITES, ok("wrote")),
    "python3 tasks.py i18n extract --check": (SKIP, "tests/test_i18n.py runs the same check (the templates are fresh)"),
    "python3 tasks.py i18n update": (WRITES, ok("notebooks.po")),
    "python3 tasks.py i18n build": (WRITES, ok("compiled")),
    "python3 tasks.py i18n status": (ok("%"),),
    "python3 tasks.py i18n status --check": (ok("%"),),
    "python -m nvcourse.devtools.pct2nb /tmp/draft.py notebooks/NN_topic.ipynb": (SKIP, PLACEHOLDER),
    ".venv/bin/python -m pytest notebooks/NN_topic.ipynb": (SKIP, PLACEHOLDER),
    "python3 tasks.py slides": (WRITES, ok(), "slow"),
    "python3 tasks.py handouts": (WRITES, ok(), "slow"),
    "python3 tasks.py slides --lang fr": (WRITES, ok("artifacts/slides/fr"), "slow"),
    "python3 tasks.py handouts --lang fr": (WRITES, ok("artifacts/handouts/fr"), "slow"),
    "python3 tasks.py release --learners DIR": (WRITES, release_ok),
    "python3 tasks.py hub": (SERVER, "hub"),
    "python3 tasks.py hub --users 30 --ip 0.0.0.0": (SERVER, "hub"),
    "sudo python3 tasks.py hub --users 30 --ip 0.0.0.0": (SERVER, "hub"),
    "sudo python3 tasks.py hub --stop": (SKIP, "stops whatever hub runs in the default state folder (another test's, "
                                          "or CI's); tests/test_ctrl_c_long_commands.py and test_hub.py run --stop"),
    "python3 tasks.py wheelhouse DIR": (SKIP, "downloads about 700 MB of wheels from PyPI"),
    "python3 tasks.py wheelhouse /media/usb/wheels": (SKIP, "downloads about 700 MB of wheels onto a USB stick"),
    "python3 tasks.py lab --offline /media/usb/wheels": (ok(),) if Path("/media/usb/wheels").is_dir() else (
        SKIP, "needs the wheelhouse on a USB stick at /media/usb/wheels"),
    "sudo python -m nvcourse.cluster.record": (SKIP, "re-records the committed cluster run (minutes; changes data)"),
    "git tag workshop-YYYY-MM-DD": (SKIP, "YYYY-MM-DD is the workshop's date; it tags the instructor's repository"),
    "git clone …; cd …; python3 tasks.py lab": (SKIP, "… is the repository's address, where the course is published"),
    ".venv/bin/python benchmarks/widget_latency.py": (SKIP, BENCH),
    "sudo .venv/bin/python benchmarks/hub_load.py --learners 30": (SKIP, BENCH),
    ".venv/bin/python benchmarks/hub_load.py --learners 8": (SKIP, BENCH),
    "!{sys.executable} -m nvcourse doctor": (ok("[OK  ] python", "jupyterlab"),),
    "!{sys.executable} -m nvcourse systems": (ok("dgx-h100"),),
}


def _all_variants() -> list[tuple[str, str]]:
    out: dict[str, str] = {}
    for cmd, where in documented().items():
        for v in variants(cmd):
            out.setdefault(v, where[0])
    return list(out.items())


ALL = _all_variants()


def test_commands_are_found_in_the_docs():
    cmds = {c for c, _ in ALL}
    assert "python3 tasks.py lab" in cmds and "!{sys.executable} -m nvcourse doctor" in cmds
    assert any(c.startswith("sudo nvcourse cluster run") for c in cmds)


def test_every_documented_command_is_classified():
    missing = sorted({c for c, _ in ALL} - set(CASES))
    assert not missing, f"documented commands this test does not know yet (add them to CASES): {missing}"


def _case(cmd: str) -> tuple:
    if cmd not in CASES:
        pytest.fail(f"not classified: {cmd!r}")
    return CASES[cmd]


PLAIN = [(c, w) for c, w in ALL if c in CASES and not isinstance(CASES[c][0], str)]
WRITING = [(c, w) for c, w in ALL if c in CASES and CASES[c][0] == WRITES]
SKIPPED = [(c, w) for c, w in ALL if c in CASES and CASES[c][0] == SKIP]


@pytest.mark.parametrize("cmd, where", PLAIN, ids=[c[:60] for c, _ in PLAIN])
def test_documented_command_in_the_checkout(cmd, where, tmp_path):
    check = _case(cmd)[0]
    r = run(cmd, ROOT, tmp_path)
    r.cmd_text = cmd  # type: ignore[attr-defined]
    check(r)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    return scratch_copy(tmp_path_factory.mktemp("docs"))


#: A deck or handout build executes every chapter (~4 min on an idle 2-core machine); on a loaded one it has taken
#: over 10. The limit only stops a hang, so it is generous: a build that is slow is not a build that is broken.
SLOW_TIMEOUT_S = 2400
WRITING_PARAMS = [pytest.param(c, w, id=c[:60], marks=[pytest.mark.slow] if "slow" in CASES[c][2:] else [])
                  for c, w in WRITING]


@pytest.mark.parametrize("cmd, where", WRITING_PARAMS)
def test_documented_command_in_a_scratch_copy(cmd, where, scratch, tmp_path):
    case = _case(cmd)
    r = run(cmd, scratch, tmp_path, timeout=SLOW_TIMEOUT_S if "slow" in case[2:] else 600)
    r.cmd_text = cmd.replace(" DIR", f" {tmp_path / 'dir-out'}")  # type: ignore[attr-defined]
    case[1](r)


@pytest.mark.parametrize("cmd, where", SKIPPED, ids=[c[:60] for c, _ in SKIPPED])
def test_documented_command_skipped_with_a_reason(cmd, where):
    pytest.skip(f"{where}: {_case(cmd)[1]}")


# -- servers: started as written, probed, stopped --------------------------------------------------------------
def _start(cmd: str, tmp: Path) -> tuple[subprocess.Popen, Path, Path]:
    out, err = tmp / "out.txt", tmp / "err.txt"
    with open(out, "w") as o, open(err, "w") as e:
        proc = subprocess.Popen(["bash", "-c", f"exec {cmd}"], cwd=ROOT, env=_env(tmp), stdout=o, stderr=e,
                                start_new_session=True)
    return proc, out, err


def _wait_for(path: Path, pattern: str, proc: subprocess.Popen, timeout: float) -> re.Match | None:
    end = time.monotonic() + timeout
    while time.monotonic() < end and proc.poll() is None:
        m = re.search(pattern, path.read_text(errors="replace"))
        if m:
            return m
        time.sleep(1)
    return None


def _interrupt(proc: subprocess.Popen, timeout: float = 120) -> int:
    """Ctrl-C as a terminal sends it: SIGINT to the whole foreground process group (one that already exited, e.g.
    a hub that refused to start, has nothing left to stop)."""
    try:
        os.killpg(proc.pid, signal.SIGINT)
    except ProcessLookupError:
        return proc.wait()
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise


SERVERS = [(c, w) for c, w in ALL if c in CASES and CASES[c][0] == SERVER]


@pytest.mark.slow
@pytest.mark.parametrize("cmd, where", SERVERS, ids=[c[:60] for c, _ in SERVERS])
def test_documented_server_starts_serves_and_stops(cmd, where, tmp_path):
    kind = _case(cmd)[1]
    if cmd.startswith("sudo") and not IS_ROOT:
        pytest.skip("needs root")
    if kind == "hub":
        _hub(cmd, tmp_path)
    else:
        _lab(cmd, tmp_path)


def _hub(cmd: str, tmp: Path) -> None:
    from nvcourse.devtools import hub, hub_accounts

    if not hub_accounts.is_root() and "0.0.0.0" in cmd:
        pytest.skip("a room's hub needs root (one Unix account per learner); the docs say sudo")
    if shutil.which("npm") is None:
        pytest.skip("the hub's proxy comes from npm: apt-get install npm")
    import psutil

    if [c for c in psutil.net_connections("tcp") if c.laddr and c.laddr.port == 8000 and c.status == "LISTEN"]:
        pytest.skip("port 8000 is in use on this machine (another hub?)")
    proc, out, err = _start(cmd, tmp)
    try:
        m = _wait_for(out, r"learners open (https://\S+)", proc, 300)
        assert m, f"no board line; stderr: {err.read_text()[-1500:]}"
        state = hub.default_dir()
        board = out.read_text()
        admin = (state / "secrets" / "instructor-password").read_text().strip()
        assert admin not in board and "learner30" in board  # the board line has no instructor password
        assert str(state / "secrets" / "instructor-password") in err.read_text()
        ctx = ssl.create_default_context(cafile=str(state / "secrets" / "hub.crt"))
        with urllib.request.urlopen("https://127.0.0.1:8000/hub/login", timeout=30, context=ctx) as resp:
            assert resp.status == 200 and b"password" in resp.read().lower()
        if hub_accounts.is_root():
            assert len(hub_accounts.ours(state)) == 30
    finally:
        rc = _interrupt(proc)
    # tasks.py reports a Ctrl-C with its own status (130) once the hub has stopped
    assert rc in (0, 130) and "hub: stopped" in err.read_text(), err.read_text()[-1500:]
    assert hub_accounts.ours(hub.default_dir()) == [] and not (hub.default_dir() / "secrets").exists()


def _lab(cmd: str, tmp: Path) -> None:
    proc, out, err = _start(cmd, tmp)
    try:
        m = _wait_for(err, r"(http://127\.0\.0\.1:\d+/lab\?token=\w+)", proc, 300)
        assert m, f"JupyterLab did not print its address: {err.read_text()[-1500:]}"
        url, names = m.group(1), []
        for _ in range(30):  # the address is printed as the server starts listening: retry a refused connection
            try:
                with urllib.request.urlopen(url.replace("/lab?", "/api/contents?"), timeout=30) as resp:
                    names = [c["name"] for c in json.loads(resp.read())["content"]]
                break
            except OSError:
                assert proc.poll() is None, f"JupyterLab exited: {err.read_text()[-1500:]}"
                time.sleep(1)
        assert "00_start_here.ipynb" in names or "notebooks" in names  # it serves the course
        if "--lang fr" in cmd:
            _french_interface(url)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(60)


def _french_interface(url: str) -> None:
    """The French edition's JupyterLab: its interface locale is fr_FR and the French language pack is installed."""
    token = url.split("?", 1)[1]
    base = url.split("/lab?")[0]
    with urllib.request.urlopen(f"{base}/lab/api/settings/@jupyterlab/translation-extension:plugin?{token}",
                                timeout=30) as resp:
        assert json.loads(resp.read())["settings"]["locale"] == "fr_FR"
    with urllib.request.urlopen(f"{base}/lab/api/translations/?{token}", timeout=30) as resp:
        langs = json.loads(resp.read())["data"]
    assert "fr_FR" in langs and langs["en"]["displayName"] == "Anglais"  # the pack answers, in French


# -- the cluster block: up, run, status, down, as the README orders them ------------------------------------------
def _cluster_cmds() -> list[str]:
    return [c for c, _ in ALL if c in CASES and CASES[c][0] == CLUSTER]


@pytest.mark.slow
@pytest.mark.skipif(not (IS_ROOT and shutil.which("ip") and shutil.which("tc")),
                    reason="network namespaces need root, ip and tc")
def test_documented_cluster_commands_measure_the_network(tmp_path):
    from nvcourse.cluster import model
    from nvcourse.collectives import engines

    if not engines.torch_available():
        pytest.skip("the cluster run's torchrun needs torch (pip install torch==2.13.0)")
    cmds = _cluster_cmds()
    ups = [c for c in cmds if " up " in c]
    runs = [c for c in cmds if " run " in c]
    downs = [c for c in cmds if "down" in c]
    assert ups and runs and downs
    nic = model.payload_Bps(125e6) / 1e9  # 1 Gb/s NICs, as the up command makes them
    try:
        r = run(ups[0], ROOT, tmp_path)
        assert r.rc == 0 and "cluster up: 2 nodes x 2 ranks" in r.out, r.err
        for cmd in runs:
            r = run(cmd, ROOT, tmp_path, timeout=900)
            assert r.rc == 0, r.err[-2000:]
            assert "backend torch" in r.out  # the launcher's engine, not each node's shared memory
            row = [ln.split() for ln in r.out.splitlines() if ln.strip().startswith("67108864")]
            busbw = float(row[0][6])
            assert 0.3 * nic < busbw < 1.05 * nic, f"busbw {busbw} GB/s is not a 1 Gb/s NIC's ({nic:.3f} GB/s)"
        for cmd in downs:
            r = run(cmd, ROOT, tmp_path)
            assert r.rc == 0 and "cluster down" in r.out, r.err
            if "--json" in cmd:
                assert json.loads(r.out[: r.out.rindex("}") + 1])["up"] is True
            r = run(ups[-1], ROOT, tmp_path)  # the other shape of up, for the next status/down
            assert r.rc == 0, r.err
    finally:
        subprocess.run(["bash", "-c", "nvcourse cluster down"], env=_env(tmp_path), capture_output=True)
