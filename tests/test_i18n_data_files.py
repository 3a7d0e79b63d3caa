"""The data files' texts shown to learners (nvcourse/data/*.toml, ``i18n_catalog.DATA_FIELDS``) in French: the
extractor collects them into nvcourse.pot located by ``file:table.key.field``, every one is translated, and display
code reads them through ``i18n.data_text``; the data files stay English, the one source."""

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import polib
import pytest

from nvcourse import i18n
from nvcourse._data import displayed_records
from nvcourse.devtools import i18n_catalog, i18n_checks

ROOT = Path(__file__).resolve().parents[1]


def _data_strings() -> dict[str, str]:
    """``file:table.key.field`` -> the English text, read from the data files themselves."""
    out = {}
    for name, tables in i18n_catalog.DATA_FIELDS.items():
        data = tomllib.loads((ROOT / "nvcourse" / "data" / name).read_text(encoding="utf-8"))
        for table, fields in tables:
            for key, record in displayed_records(data, table, fields):
                out.update({f"nvcourse/data/{name}:{table}.{key}.{f}": record[f] for f in fields if record.get(f)})
    return out


def test_the_template_holds_every_displayed_data_field_with_its_place():
    strings = _data_strings()
    assert len(strings) >= 180
    pot = {e.msgid: {o[0] for o in e.occurrences} for e in polib.pofile(str(ROOT / "locales" / "nvcourse.pot"))}
    missing = [where for where, text in strings.items() if where not in pot.get(text, set())]
    assert missing == []


def test_every_data_text_is_translated_and_keeps_numbers_units_and_code():
    po = {e.msgid: e for e in polib.pofile(str(i18n_catalog.po_path("fr", "nvcourse"))) if not e.obsolete}
    for where, text in _data_strings().items():
        entry = po.get(text)
        assert entry is not None and i18n_catalog.done(entry), f"not translated: {where}"
        assert i18n_checks.entry_problems(text, entry.msgstr) == [], where


@pytest.fixture
def lang(monkeypatch):
    for var in ("NVCOURSE_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


def test_data_text_speaks_the_language_and_passes_unknown_text_through(lang):
    cause = _data_strings()["nvcourse/data/nccl_cases.toml:cases.slow_rank.cause"]
    assert i18n.data_text(cause) == cause and i18n.data_text(None) is None
    lang.setenv("NVCOURSE_LANG", "fr")
    french = i18n.data_text(cause)
    assert french != cause and "rang" in french and i18n.data_text("not in any catalog") == "not in any catalog"
    with i18n.english():
        assert i18n.data_text(cause) == cause


def test_the_ncclog_reader_shows_the_data_files_cause_and_fix_in_french():
    """A real log whose problems cite a case and a runbook signature: their cause and fix read French."""
    po = {e.msgid: e.msgstr for e in polib.pofile(str(i18n_catalog.po_path("fr", "nvcourse")))}
    strings = _data_strings()
    cause = strings["nvcourse/data/nccl_cases.toml:cases.acs_hint.cause"]
    env = {k: v for k, v in os.environ.items() if k not in ("LC_ALL", "LC_MESSAGES", "LANG")}
    log = "tests/fixtures/ncclog/ib_error4_gdr_vm_nccl660.log"
    done = subprocess.run([sys.executable, "-m", "nvcourse", "ncclog", log], capture_output=True, text=True,
                          cwd=ROOT, env={**env, "NVCOURSE_LANG": "fr"}, timeout=120)
    assert done.returncode == 0
    assert po[cause] in done.stdout and cause not in done.stdout


def test_a_changed_data_text_becomes_a_new_template_entry(tmp_path):
    """A changed data text replaces the old one in the template, so the committed template is stale until extracted
    and the French entry is offered as fuzzy (i18n_catalog.merge)."""
    for part in ("nvcourse", "locales"):
        subprocess.run(["cp", "-r", str(ROOT / part), str(tmp_path / part)], check=True)
    path = tmp_path / "nvcourse" / "data" / "nccl_env.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("upper bound on the number of channels", "the most channels NCCL may use"),
                    encoding="utf-8")
    msgids = {e.msgid for e in i18n_catalog.python_template(tmp_path)}
    assert "the most channels NCCL may use" in msgids and "upper bound on the number of channels" not in msgids
