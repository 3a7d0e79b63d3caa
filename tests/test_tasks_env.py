"""tasks.py installs the package once per pyproject.toml: a command with fewer extras never reinstalls it."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import tasks  # noqa: E402  (tasks.py is a script at the root, not a package module)


def _fake_venv(tmp_path: Path, monkeypatch) -> list[str]:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("")
    monkeypatch.setattr(tasks, "VENV", venv)
    calls: list[str] = []

    def run(cmd, **kw):
        calls.append(str(cmd[-1]))  # the pip spec
        return 0

    monkeypatch.setattr(tasks, "run", run)
    return calls


def test_test_then_lab_then_hub_installs_once(tmp_path, monkeypatch):
    """In CI the suite starts `tasks.py lab` and `tasks.py hub`: reinstalling then made `.venv/bin/nvcourse`
    vanish for a moment under the other tests."""
    calls = _fake_venv(tmp_path, monkeypatch)
    tasks.ensure_env("test")
    tasks.ensure_env()
    tasks.ensure_env("hub")  # test's packages include the hub's
    assert calls == [".[test]"]


def test_a_new_extra_adds_to_what_is_installed_and_a_changed_pyproject_reinstalls(tmp_path, monkeypatch):
    calls = _fake_venv(tmp_path, monkeypatch)
    tasks.ensure_env()
    tasks.ensure_env("hub")
    tasks.ensure_env("hub")
    assert calls == [".", ".[hub]"]
    (tasks.VENV / ".nvcourse-install").write_text("a digest in the old format")
    tasks.ensure_env()
    assert calls[-1] == "."
