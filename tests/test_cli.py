"""Command line: contract fields, exit status 2 and no traceback on bad input."""

import json
import subprocess
import sys

import pytest

from nvcourse import catalog
from nvcourse.cli import main


def run(*args):
    return subprocess.run([sys.executable, "-m", "nvcourse", *args], capture_output=True, text=True, timeout=60)


def test_systems_json_lists_every_system_with_sources(capsys):
    assert main(["systems", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["id"] for d in data] == list(catalog.systems())
    h100 = next(d for d in data if d["id"] == "dgx-h100")
    assert h100["gpus_per_domain"] == 8 and h100["links_per_gpu"] == 18 and h100["nvswitch_count"] == 4
    assert h100["in_switch_reduction"] is True and h100["nics_per_host"] == 8
    assert h100["scaleup_GBps_dir"] == 450.0
    assert all(h100["sources"][k] for k in ("links_per_gpu", "nics_per_host"))


def test_systems_table(capsys):
    assert main(["systems"]) == 0
    out = capsys.readouterr().out
    for sid in catalog.systems():
        assert sid in out


def test_links_json(capsys):
    assert main(["links", "--json"]) == 0
    data = {d["id"]: d for d in json.loads(capsys.readouterr().out)}
    assert data["ib-ndr"]["line_Gbps_dir"] == 400 and data["ib-ndr"]["line_GBps_dir"] == 50


def test_doctor_json(capsys):
    rc = main(["doctor", "--json"])
    checks = {c["name"]: c for c in json.loads(capsys.readouterr().out)}
    assert rc == 0
    assert checks["python"]["status"] == "OK" and checks["numpy"]["status"] == "OK"
    assert "shared memory" in checks


@pytest.mark.parametrize("args", [["systems", "--bogus"], ["nosuchcommand"], []])
def test_usage_errors_exit_2_without_traceback(args):
    r = run(*args)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()  # one line naming the problem and pointing at --help
    assert len(lines) == 1 and "error:" in lines[0] and "--help" in lines[0]


def test_value_error_becomes_exit_2(monkeypatch, capsys):
    import nvcourse.catalog_cli as cc

    def boom(_args):
        raise ValueError("unknown system 'x'; allowed: a, b")

    monkeypatch.setattr(cc, "_systems", boom)
    with pytest.raises(SystemExit) as info:
        main(["systems"])
    assert info.value.code == 2
    assert "nvcourse: error: unknown system 'x'; allowed: a, b" in capsys.readouterr().err


def test_doctor_shows_short_paths_and_does_not_send_a_notebook_to_itself(monkeypatch, capsys):
    import sys
    from pathlib import Path

    from nvcourse.doctor import _short_path

    root = Path(__file__).resolve().parents[1]
    assert _short_path(str(root / ".venv" / "bin" / "python")) == str(Path(".venv/bin/python"))
    assert _short_path(str(Path.home() / "x" / "python")).startswith("~/")
    monkeypatch.setitem(sys.modules, "ipykernel", sys)  # as when run from notebook 00
    main(["doctor"])
    assert "open notebooks/00_start_here" not in capsys.readouterr().out.lower()


def test_doctor_run_with_a_bang_from_notebook_00_does_not_send_it_to_itself(monkeypatch, capsys):
    # 00 runs `!{sys.executable} -m nvcourse doctor`: a child of the kernel, without ipykernel imported but with
    # the kernel's environment
    import sys

    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)
    for var in ("JPY_PARENT_PID", "JPY_SESSION_NAME"):
        monkeypatch.delenv(var, raising=False)
    main(["doctor"])
    said = capsys.readouterr().out.lower()
    if "all good" in said:  # a terminal run on a complete install: it says where to start
        assert "open notebooks/00_start_here" in said
    monkeypatch.setenv("JPY_PARENT_PID", "1234")
    main(["doctor"])
    assert "open notebooks/00_start_here" not in capsys.readouterr().out.lower()
