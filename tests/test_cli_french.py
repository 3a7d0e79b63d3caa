"""The command line speaks French under NVCOURSE_LANG=fr or a French locale: argparse's own words, every help and
description, the one-line errors and doctor's lines; ``--json`` stays English byte for byte, exit statuses do not
change, and English is argparse's own output."""

import argparse
import gettext
import json
import os
import subprocess
import sys

import pytest
from cli_runs import run_main

from nvcourse import _validate, cli_i18n, i18n
from nvcourse.cli import build_parser, classify

NBSP = "\u00a0"
#: helps that are not prose (a placeholder showing the syntax)
NOT_PROSE = {"-- COMMAND ..."}


@pytest.fixture
def lang(monkeypatch):
    for var in ("NVCOURSE_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


def _run(args, **env):
    clean = {k: v for k, v in os.environ.items() if k not in ("NVCOURSE_LANG", "LC_ALL", "LC_MESSAGES", "LANG")}
    return subprocess.run([sys.executable, "-m", "nvcourse", *args], capture_output=True, text=True, timeout=120,
                          env={**clean, **env})


def _main(capsys, args):
    """(status, stdout, stderr) of ``nvcourse ARGS`` run in this process."""
    return run_main(args, capsys)


def _texts(parser: argparse.ArgumentParser, prefix: str = "nvcourse") -> dict[str, str]:
    """Every description, epilog and help of the command line, sub-commands included, by where it is."""
    out = {f"{prefix} description": parser.description, f"{prefix} epilog": parser.epilog}
    for action in parser._actions:
        out[f"{prefix} {'/'.join(action.option_strings) or action.dest}"] = action.help
        if isinstance(action, argparse._SubParsersAction):
            for summary in action._choices_actions:
                out[f"{prefix} {summary.dest} (summary)"] = summary.help
            for name, sub in action.choices.items():
                out.update(_texts(sub, f"{prefix} {name}"))
    return {k: v for k, v in out.items() if v and v is not argparse.SUPPRESS and v not in NOT_PROSE}


# -- French ---------------------------------------------------------------------------------------------------


def test_every_help_description_and_epilog_is_french(lang):
    english = _texts(build_parser())
    lang.setenv("NVCOURSE_LANG", "fr")
    french = _texts(build_parser())
    assert french.keys() == english.keys()
    assert len(english) > 100  # every sub-command and option, not a few
    untranslated = [k for k in english if french[k] == english[k]]
    assert untranslated == []
    assert "%" not in "".join(french.values()).replace("%%", "")  # argparse formats helps with %


def test_main_help_in_french_with_argparse_own_words(lang, capsys):
    lang.setenv("NVCOURSE_LANG", "fr")
    code, out, _ = _main(capsys, ["--help"])
    assert code == 0
    assert out.startswith(f"usage{NBSP}: nvcourse [-h] [--version] [--debug] COMMAND ...")
    assert f"arguments positionnels{NBSP}:" in out and f"\noptions{NBSP}:" in out
    assert "-h, --help  afficher cette aide et quitter" in out
    assert "systems   lister les systèmes du catalogue matériel" in out
    assert "Code de sortie" in out and "show this help" not in out and "usage:" not in out


def test_a_french_locale_is_enough(lang):
    r = _run(["predict", "--help"], LANG="fr_FR.UTF-8")
    assert r.returncode == 0
    assert r.stdout.startswith(f"usage{NBSP}: nvcourse predict") and "Prédit une collective" in r.stdout
    assert "GPU par nœud (par domaine NVLink ou par hôte)" in r.stdout


@pytest.mark.parametrize("args, line", [
    (["predict", "allreduce"], f"nvcourse predict{NBSP}: erreur{NBSP}: arguments obligatoires manquants{NBSP}: "
                               "--system, --gpus (voir nvcourse predict --help)"),
    (["predict", "allreduce", "--system", "dgx-h100", "--gpus", "x", "--bytes", "1"],
     f"nvcourse predict{NBSP}: erreur{NBSP}: argument --gpus{NBSP}: valeur invalide pour le type int{NBSP}: 'x' "
     "(voir nvcourse predict --help)"),
    (["cluster", "bogus"], f"nvcourse cluster{NBSP}: erreur{NBSP}: argument ACTION{NBSP}: choix invalide{NBSP}: "
                           f"'bogus' (valeurs possibles{NBSP}: 'up', 'run', 'status', 'down') "
                           "(voir nvcourse cluster --help)"),
    (["systems", "--bogus"], f"nvcourse{NBSP}: erreur{NBSP}: arguments non reconnus{NBSP}: --bogus "
                             "(voir nvcourse --help)"),
    (["bench", "allreduce", "--procs", "0"], f"nvcourse{NBSP}: erreur{NBSP}: procs doit être un entier de 1 à 64"
                                             f"{NBSP}; reçu 0"),
    (["bench", "nope"], f"nvcourse{NBSP}: erreur{NBSP}: op doit être l'une de ces valeurs{NBSP}: 'allreduce', "
                        f"'reducescatter', 'allgather', 'broadcast'{NBSP}; reçu 'nope'"),
    (["predict", "allreduce", "--system", "dgx-h100", "--gpus", "8", "--min-bytes", "2"],
     f"nvcourse{NBSP}: erreur{NBSP}: --max-bytes est obligatoire avec --min-bytes"),
    (["ncclog", "/nonexistent/log.txt"],
     f"nvcourse{NBSP}: erreur{NBSP}: Aucun fichier ou dossier de ce type{NBSP}: /nonexistent/log.txt"),
], ids=["required", "invalid-int", "invalid-choice", "unrecognized", "integer-range", "choice", "sweep", "no-file"])
def test_errors_are_one_french_line_with_status_2(lang, capsys, args, line):
    lang.setenv("NVCOURSE_LANG", "fr")
    code, out, err = _main(capsys, args)
    assert code == 2 and out == ""
    assert err == line + "\n"


def test_the_validate_templates_keep_the_name_limits_and_value(lang):
    lang.setenv("NVCOURSE_LANG", "fr")
    cases = [
        (lambda: _validate.integer("dp", 0), f"dp doit être un entier >= 1{NBSP}; reçu 0"),
        (lambda: _validate.integer("tp", 9, maximum=8), f"tp doit être un entier de 1 à 8{NBSP}; reçu 9"),
        (lambda: _validate.number("alpha_s", float("nan")), f"alpha_s doit être un nombre fini{NBSP}; reçu nan"),
        (lambda: _validate.number("beta", 0.0, positive=True), f"beta doit être > 0{NBSP}; reçu 0.0"),
        (lambda: _validate.number("size", -1.0), f"size doit être >= 0{NBSP}; reçu -1.0"),
        (lambda: _validate.fraction("goodput", 1.5),
         f"goodput doit être compris entre 0 exclu et 1 inclus{NBSP}; reçu 1.5"),
        (lambda: _validate.choice("algo", "x", ("ring", "tree")),
         f"algo doit être l'une de ces valeurs{NBSP}: 'ring', 'tree'{NBSP}; reçu 'x'"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError) as info:
            call()
        assert str(info.value) == message


def test_doctor_lines_in_french_and_its_json_in_english(lang, capsys):
    code_en, json_en, _ = _main(capsys, ["doctor", "--json"])
    lang.setenv("NVCOURSE_LANG", "fr")
    code_fr, json_fr, _ = _main(capsys, ["doctor", "--json"])
    assert (code_fr, json_fr) == (code_en, json_en)
    assert {c["name"] for c in json.loads(json_fr)} >= {"shared memory", "CPU cores", "widgets in JupyterLab"}
    code, out, _ = _main(capsys, ["doctor"])
    assert code == code_en
    assert "mémoire partagée" in out and "cœurs CPU" in out and "widgets JupyterLab" in out
    assert "shared memory" not in out and "usable" not in out
    assert ("Tout est prêt" in out) == (code == 0)


@pytest.mark.parametrize("args", [
    ["systems", "--json"], ["links", "--json"], ["doctor", "--json"],
    ["predict", "allreduce", "--system", "dgx-h100", "--gpus", "8", "--bytes", "64MiB", "--json"],
    ["predict", "allgather", "--system", "dgx-a100", "--gpus", "8", "--nodes", "2", "--min-bytes", "1KiB",
     "--max-bytes", "1MiB", "--json"],
])
def test_json_is_byte_identical_in_both_languages(lang, capsys, args):
    english = _main(capsys, args)
    lang.setenv("NVCOURSE_LANG", "fr")
    french = _main(capsys, args)
    assert french == english and english[0] == 0 and english[1].lstrip().startswith(("[", "{"))


def test_every_argparse_phrase_is_translated_with_its_fields(lang):
    english = cli_i18n.argparse_messages()
    lang.setenv("NVCOURSE_LANG", "fr")
    french = cli_i18n.argparse_messages()
    for en, fr in zip(english, french):
        assert fr != en or en == "options", en
        fields = sorted(part.split(")")[0] for part in en.split("%(")[1:])
        assert sorted(part.split(")")[0] for part in fr.split("%(")[1:]) == fields, en
        assert fr.count("%s") == en.count("%s") and fr.count("%r") == en.count("%r"), en


def test_interruptions_and_internal_errors_in_french(lang):
    lang.setenv("NVCOURSE_LANG", "fr")
    assert classify(KeyboardInterrupt()) == (130, "interrompu (Ctrl-C)")
    assert classify(MemoryError()) == (1, f"mémoire insuffisante{NBSP}; essayez une taille plus petite")


# -- English and the language switch ----------------------------------------------------------------------------


def test_english_is_argparse_own_output(lang, capsys):
    code, out, _ = _main(capsys, ["--help"])
    assert code == 0 and out.startswith("usage: nvcourse [-h]")
    assert "\npositional arguments:\n" in out and "\noptions:\n" in out
    assert "show this help message and exit" in out and "show program's version number and exit" in out
    code, _, err = _main(capsys, ["predict", "allreduce"])
    assert code == 2
    assert err == ("nvcourse predict: error: the following arguments are required: --system, --gpus "
                   "(see nvcourse predict --help)\n")


def test_argparse_gettext_is_put_back_after_a_french_run(lang, capsys):
    lang.setenv("NVCOURSE_LANG", "fr")
    _main(capsys, ["predict", "allreduce"])
    _main(capsys, ["systems", "--help"])
    assert argparse._ is gettext.gettext and argparse.ngettext is gettext.ngettext
    lang.setenv("NVCOURSE_LANG", "en")
    with cli_i18n.argparse_speaks():  # English swaps nothing
        assert argparse._ is gettext.gettext
    assert i18n.language() == "en"
