"""deploy/z2jh/values.yaml must pass the Zero to JupyterHub chart's own schema (the pinned version's
values.schema.yaml, kept next to it with its source) and keep the settings the course relies on.

Helm validates the chart's default values merged with the user's, so the test merges them the same way."""

import copy
from pathlib import Path

import jsonschema  # installed with JupyterLab (jupyter_server -> jupyter_events -> jsonschema)
import pytest
import yaml

Z2JH = Path(__file__).resolve().parents[1] / "deploy" / "z2jh"


def load(name: str) -> dict:
    return yaml.safe_load((Z2JH / name).read_text(encoding="utf-8"))


def merge(base: dict, over: dict) -> dict:
    """Helm's coalescing of values: maps merge key by key, anything else (lists too) is replaced."""
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def errors(values: dict) -> list[str]:
    merged = merge(load("chart-default-values.yaml"), values)
    validator = jsonschema.Draft7Validator(load("values.schema.yaml"))
    return sorted(f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(merged))


def parse_size(text: str | int | float) -> float:
    """Kubernetes quantities as the chart takes them: ``1G``/``2Gi``/``512M``/``0.5`` → number (bytes or cores)."""
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "K": 1e3, "M": 1e6, "G": 1e9}
    s = str(text)
    for suffix, factor in sorted(units.items(), key=lambda kv: -len(kv[0])):
        if s.endswith(suffix):
            return float(s[: -len(suffix)]) * factor
    return float(s)


@pytest.fixture(scope="module")
def values() -> dict:
    return load("values.yaml")


def test_values_pass_the_charts_schema(values):
    assert errors(values) == []


def test_the_schema_rejects_a_misspelt_key(values):
    # The check can fail: the chart's schema has additionalProperties: false, so a typo is not silently ignored.
    bad = copy.deepcopy(values)
    bad["singleuser"]["defaultURL"] = bad["singleuser"].pop("defaultUrl")
    assert any("defaultURL" in e for e in errors(bad))
    bad = copy.deepcopy(values)
    bad["cull"]["timeout"] = "an hour"
    assert any(e.startswith("cull.timeout") for e in errors(bad))


def test_shm_is_memory_backed_and_mounted_at_dev_shm(values):
    storage = values["singleuser"]["storage"]
    mounts = {m["name"]: m for m in storage["extraVolumeMounts"]}
    shm = [v for v in storage["extraVolumes"] if mounts.get(v["name"], {}).get("mountPath") == "/dev/shm"]
    assert len(shm) == 1
    assert shm[0]["emptyDir"]["medium"] == "Memory"
    # Bigger than a pod's default 64 MB, and within the memory limit it is charged to.
    size = parse_size(shm[0]["emptyDir"]["sizeLimit"])
    assert 64e6 < size <= parse_size(values["singleuser"]["memory"]["limit"])


def test_course_settings(values):
    single = values["singleuser"]
    assert single["defaultUrl"] == "/lab/tree/notebooks/00_start_here.ipynb"
    assert values["cull"]["enabled"] is True and values["cull"]["timeout"] == 3600
    assert values["hub"]["config"]["JupyterHub"]["authenticator_class"] == "shared-password"
    # Only placeholders are committed; the real passwords come from secrets.yaml (README.md, step 3).
    passwords = values["hub"]["config"]["SharedPasswordAuthenticator"]
    assert all(p.startswith("CHANGE-ME") for p in passwords.values()) and len(passwords["admin_password"]) >= 32
    for resource in ("memory", "cpu"):
        assert parse_size(single[resource]["limit"]) >= parse_size(single[resource]["guarantee"]) > 0
    # Room for the ~160 MiB per learner measured in benchmarks/HUB_LOAD.md plus a demo's workers.
    assert parse_size(single["memory"]["guarantee"]) >= 4 * 160 * 2**20
    # The learner's copy comes from where the image keeps the course (repo2docker --target-repo-dir).
    assert "/srv/nvcourse" in " ".join(single["lifecycleHooks"]["postStart"]["exec"]["command"])


def test_parse_size():
    assert parse_size("2Gi") == 2**31 and parse_size("1G") == 1e9 and parse_size(0.5) == 0.5


def test_kernels_are_culled_and_the_news_pop_up_is_off():
    files = load("values.yaml")["singleuser"]["extraFiles"]
    culling = files["kernel_culling"]
    assert culling["mountPath"] == "/etc/jupyter/jupyter_server_config.json"
    assert culling["data"]["MappingKernelManager"]["cull_idle_timeout"] == 1800
    news = files["news_off"]
    assert news["mountPath"] == "/etc/jupyter/labconfig/page_config.json"
    assert news["data"]["disabledExtensions"] == {"@jupyterlab/apputils-extension:announcements": True}
