"""environment.yml (Binder, conda-forge) and pyproject.toml must name the same runtime dependencies
with compatible pins, and Binder must install nvcourse itself."""

import re
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
CONDA_TO_PYPI = {"matplotlib-base": "matplotlib"}
CONDA_ONLY = {"python", "pip"}


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def conda_spec(dep: str) -> tuple[str, SpecifierSet]:
    m = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*(.*)$", dep)
    name, ver = m.group(1), m.group(2).replace(" ", "")
    if ver.startswith("=") and not ver.startswith("=="):  # conda 'x=4.2' means 4.2.*
        ver = "==" + ver[1:].rstrip(".*") + ".*"
    return norm(CONDA_TO_PYPI.get(name, name)), SpecifierSet(ver)


def load_env():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda, pip = {}, []
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            pip += dep.get("pip", [])
        else:
            name, spec = conda_spec(dep)
            conda[name] = spec
    return env, conda, pip


def load_pyproject():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return {norm(r.name): r.specifier for r in map(Requirement, data["project"]["dependencies"])}, data


def witnesses(spec: SpecifierSet) -> list[Version]:
    """Versions named by a specifier's lower bounds / pins: one of them must satisfy the other side."""
    out = []
    for s in spec:
        if s.operator in ("==", ">=", "~="):
            v = s.version.rstrip(".*")
            out.append(Version(v + ".0" * max(0, 2 - v.count("."))))
    return out


def test_conda_forge_only():
    env, _, _ = load_env()
    assert env["channels"][0] == "conda-forge"
    assert "defaults" not in env["channels"]


def test_same_runtime_dependencies():
    _, conda, _ = load_env()
    deps, _ = load_pyproject()
    assert set(conda) - CONDA_ONLY == set(deps)


@pytest.mark.parametrize("name", sorted(load_pyproject()[0]))
def test_pins_are_compatible(name):
    _, conda, _ = load_env()
    pypi = load_pyproject()[0][name]
    for v in witnesses(conda[name]):
        assert pypi.contains(v), f"{name}: environment.yml allows {v}, which pyproject.toml ({pypi}) rejects"
    for v in witnesses(pypi):
        assert conda[name].contains(v), (
            f"{name}: pyproject.toml allows {v}, which environment.yml ({conda[name]}) rejects"
        )


def test_python_version_is_supported():
    _, conda, _ = load_env()
    _, data = load_pyproject()
    requires = SpecifierSet(data["project"]["requires-python"])
    for v in witnesses(conda["python"]):
        assert requires.contains(v)


def test_binder_installs_nvcourse_itself():
    # repo2docker builds environment.yml before the repository is copied in, so postBuild installs it
    post = (ROOT / "postBuild").read_text()
    assert post.startswith("#!"), "postBuild must be an executable script"
    assert re.search(r"pip install [^\n]*(-e )?\.(\s|$)", post), "postBuild must pip-install the repository"
    assert (ROOT / "postBuild").stat().st_mode & 0o111, "postBuild must be executable"


def test_witnesses_catch_an_incompatible_pin():
    # the check itself can fail: ipywidgets 7 against ">=8.1,<9"
    _, bad = conda_spec("ipywidgets=7.8")
    assert not all(SpecifierSet(">=8.1,<9").contains(v) for v in witnesses(bad))
