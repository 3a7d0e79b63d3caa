"""Doors into the course besides a local install: the Binder link comes from where the course is published
(never a hand-typed repository), and the Codespaces devcontainer installs the course as ``tasks.py lab`` does."""

from __future__ import annotations

import ast
import inspect
import json
import re
import sys
from pathlib import Path

import pytest

from nvcourse.devtools import doors

ROOT = Path(__file__).resolve().parents[1]


def test_github_remotes_are_read_in_both_forms():
    assert doors.github_repo("https://github.com/jdoe/nvcourse.git") == "jdoe/nvcourse"
    assert doors.github_repo("git@github.com:jdoe/nvcourse.git") == "jdoe/nvcourse"
    assert doors.github_repo("https://gitlab.com/jdoe/nvcourse") is None


def test_binder_link_opens_chapter_00_at_a_tag():
    url = doors.binder_url("jdoe/nvcourse", "workshop-2026-12-10")
    assert url == ("https://mybinder.org/v2/gh/jdoe/nvcourse/workshop-2026-12-10"
                   "?urlpath=lab/tree/notebooks/00_start_here.ipynb")
    with pytest.raises(ValueError, match="repo"):
        doors.binder_url("nvcourse", "v1")


def test_no_configured_repository_is_one_line_exit_2(monkeypatch, capsys):
    monkeypatch.setattr(doors, "_git", lambda *a: "")
    assert doors.main(["binder"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--repo OWNER/REPO" in err


def test_the_readme_links_binder_only_for_the_configured_repository():
    # A Binder link must be the one built from the checkout's GitHub remote; unpublished, there is none.
    links = re.findall(r"mybinder\.org/v2/gh/([\w.-]+/[\w.-]+)/", (ROOT / "README.md").read_text(encoding="utf-8"))
    configured = doors.github_repo(doors._git("remote", "get-url", "origin"))
    assert all(repo == configured for repo in links), f"Binder links to {links}, configured: {configured}"


def test_the_devcontainer_installs_what_tasks_lab_installs():
    spec = json.loads((ROOT / ".devcontainer" / "devcontainer.json").read_text(encoding="utf-8"))
    sys.path.insert(0, str(ROOT))
    try:
        import tasks
    finally:
        sys.path.remove(str(ROOT))
    # tasks.py lab installs with ensure_env(extras=<the edition's extra>, wheelhouse=...): for the English course
    # (what the container opens) no extra and no wheelhouse online; the container calls the same function.
    lab_calls = [n for n in ast.walk(ast.parse(inspect.getsource(tasks.cmd_lab)))
                 if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "ensure_env"]
    assert len(lab_calls) == 1 and not lab_calls[0].args
    assert [k.arg for k in lab_calls[0].keywords] == ["extras", "wheelhouse"]
    assert tasks.EDITIONS["en"][2] == ""  # the English edition needs no extra
    code = re.fullmatch(r'python3 -c "(.*)"', spec["postCreateCommand"]).group(1)
    calls = [n for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Call)]
    assert [ast.unparse(c) for c in calls] == ["tasks.ensure_env()"]  # no extras, no wheelhouse: as lab online
    # The image's Python satisfies the project's requires-python.
    need = re.search(r'requires-python = ">=(\d+)\.(\d+)"', (ROOT / "pyproject.toml").read_text()).groups()
    have = re.search(r"python:(\d+)\.(\d+)", spec["image"]).groups()
    assert tuple(map(int, have)) >= tuple(map(int, need))
    assert 8888 in spec["forwardPorts"]
    assert (ROOT / spec["customizations"]["codespaces"]["openFiles"][0]).is_file()
