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
NNBSP = "\u202f"
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


# -- predict, systems, links, cluster inputs, the readers' reports, the checkers ------------------------------

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
_PREDICT = ["predict", "allreduce", "--system", "dgx-h100", "--gpus", "8", "--bytes", "1MiB"]


@pytest.mark.parametrize("change, french, english", [
    ({"--gpus": "0"}, f"gpus doit être un entier de 1 à 8 pour dgx-h100 (GPU par nœud{NBSP}: un domaine NVLink ou "
                      f"un hôte){NBSP}; reçu 0",
     "gpus must be an integer from 1 to 8 for dgx-h100 (GPUs per node: one NVLink domain or host); got 0"),
    ({"--system": "nope"}, f"system doit être l'une de ces valeurs{NBSP}: pcie-8gpu, dgx-1-v100, dgx-a100, dgx-h100, "
                           f"hgx-h200, dgx-b200, gb200-nvl72{NBSP}; reçu 'nope'",
     "system must be one of pcie-8gpu, dgx-1-v100, dgx-a100, dgx-h100, hgx-h200, dgx-b200, gb200-nvl72; got 'nope'"),
    ({"--bytes": "1XB"}, f"bytes{NBSP}: unité inconnue 'XB' dans '1XB'{NBSP}; unités permises{NBSP}: (aucune), B, kB, "
                         "KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB",
     "bytes: unknown unit 'XB' in '1XB'; allowed units: (none), B, kB, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB"),
    ({"--fabric": "x"}, "fabric doit être l'une de ces valeurs", "fabric must be one of"),
    ({"--nccl-version": "9.9"}, "nccl_version doit être l'une de ces valeurs", "nccl_version must be one of"),
    ({"--algo": "x"}, "algo doit être l'une de ces valeurs", "algo must be one of"),
], ids=["gpus", "system", "bytes", "fabric", "nccl-version", "algo"])
def test_predict_input_errors_in_french_and_english(lang, capsys, change, french, english):
    args = list(_PREDICT)
    for option, value in change.items():
        if option in args:
            args[args.index(option) + 1] = value
        else:
            args += [option, value]
    code, out, err_en = _main(capsys, args)
    assert code == 2 and out == "" and err_en.startswith(f"nvcourse: error: {english}")
    lang.setenv("NVCOURSE_LANG", "fr")
    code, out, err = _main(capsys, args)
    assert code == 2 and out == "" and err.startswith(f"nvcourse{NBSP}: erreur{NBSP}: {french}")
    assert err.count("\n") == 1 and " must be " not in err and "; got " not in err


def test_predict_comment_lines_in_french(lang, capsys):
    _, english, _ = _main(capsys, _PREDICT)
    assert english.startswith("# nvcourse predict: allreduce on dgx-h100, 8 GPUs per node x 1 node = 8 ranks")
    assert "\n# model: NCCL's per-(algorithm, protocol) latencies" in english
    lang.setenv("NVCOURSE_LANG", "fr")
    code, out, _ = _main(capsys, _PREDICT)
    assert code == 0
    assert out.startswith(f"# nvcourse predict{NBSP}: allreduce sur dgx-h100, 8 GPU par nœud × 1 nœud = 8 rangs")
    assert f"\n# modèle{NBSP}: latences de NCCL par (algorithme, protocole)" in out
    assert f"\n# limité par la latence{NBSP}: latence " in out
    # the column header is nccl-tests' own, so a predicted row lines up with a pasted run
    assert english.splitlines()[2] == out.splitlines()[2] and "time(us)" in out


def test_systems_and_links_tables_in_french_with_their_columns_aligned(lang, capsys):
    english = {c: _main(capsys, [c])[1] for c in ("systems", "links")}
    assert "GPUs/host" in english["systems"] and "achievable" in english["links"]
    lang.setenv("NVCOURSE_LANG", "fr")
    for command, words, gone in [
        ("systems", ["GPU/hôte", "dom. NVLink", "réd. commut.", "NIC/hôte", "débit de ligne", "non"],
         ["GPUs/host", "NVLink dom.", "in-switch red.", "NICs/host", "line rate", " no "]),
        ("links", ["efficacité", "atteign.", "UNE liaison"], ["efficiency", "achievable", "ONE link"]),
    ]:
        code, out, _ = _main(capsys, [command])
        assert code == 0
        assert all(w in out for w in words), command
        assert not any(w in out for w in gone), command
        header, rule = out.splitlines()[:2]
        assert len(header) == len(rule) == len(english[command].splitlines()[0]), command  # short French fits
        rows_en, rows_fr = english[command].splitlines()[2:], out.splitlines()[2:]
        assert [len(r) for r in rows_fr[:4]] == [len(r) for r in rows_en[:4]], command


@pytest.mark.parametrize("kwargs, french", [
    ({"nodes": 0}, f"nodes doit être un entier de 1 à 16{NBSP}; reçu 0"),
    ({"nic": "fast"}, f"nic doit être un débit comme 1Gbit, 500Mbit ou 10Gb/s{NBSP}; reçu 'fast'"),
    ({"nic": "100Gbit"}, f"nic doit être compris entre 800kbit et 40Gbit{NBSP}; reçu '100Gbit'"),
    ({"latency": "1s"}, f"latency doit valoir au plus 100ms{NBSP}; reçu '1s'"),
    ({"leaf_uplink": "1Gbit", "oversubscription": "2:1"},
     f"leaf-uplink et oversubscription{NBSP}: donnez l'un ou l'autre, pas les deux"),
    ({"oversubscription": "2"}, f"oversubscription doit s'écrire comme 2:1{NBSP}; reçu '2'"),
    ({"straggler": "5:1Mbit"}, f"straggler doit s'écrire NŒUD:DÉBIT avec NŒUD de 0 à 1, p.{NBSP}ex. "
                               f"1:100Mbit{NBSP}; reçu '5:1Mbit'"),
], ids=["nodes", "nic-unit", "nic-range", "latency", "uplink-and-oversubscription", "oversubscription",
        "straggler"])
def test_cluster_input_checks_in_french(lang, kwargs, french):
    """Only the input checks (make_spec): no cluster is started."""
    from nvcourse.cluster.spec import make_spec

    args = {"nodes": 2, "ranks_per_node": 1, **kwargs}
    with pytest.raises(ValueError) as english:
        make_spec(**args)
    assert " must " in str(english.value) or "give one, not both" in str(english.value)
    lang.setenv("NVCOURSE_LANG", "fr")
    with pytest.raises(ValueError) as info:
        make_spec(**args)
    assert str(info.value) == french


_NCCL_TESTS = os.path.join(FIXTURES, "nccl_tests", "allreduce_h100_2nodes_srun_label_nccltests290.txt")
_NCCLOG = os.path.join(FIXTURES, "ncclog", "ib_error4_gdr_vm_nccl660.log")
_TOPO_XML = os.path.join(FIXTURES, "topo_xml", "h100_vsi_8nic_roce_ibm_cloud.xml")


@pytest.mark.parametrize("args, english, french, labels", [
    (["nccl-tests", _NCCL_TESTS, "--system", "dgx-h100"],
     ["op: allreduce (from the busbw/algbw ratio and the redop and in-place columns)",
      "ranks: 16; GPUs: NVIDIA H100 80GB HBM3; hosts: 2; NCCL version not printed",
      "rows: 11 sizes, 8388608 to 8589934592 B", "model: dgx-h100, 8 GPUs per node x 2 nodes"],
     [f"opération{NBSP}: allreduce (d'après le rapport busbw/algbw et les colonnes redop et in-place)",
      f"rangs{NBSP}: 16{NBSP}; GPU{NBSP}: NVIDIA H100 80GB HBM3{NBSP}; hôtes{NBSP}: 2{NBSP}; "
      f"version de NCCL{NBSP}: non affichée",
      f"lignes{NBSP}: 11 tailles, de 8{NNBSP}388{NNBSP}608 à 8{NNBSP}589{NNBSP}934{NNBSP}592{NBSP}B",
      f"modèle{NBSP}: dgx-h100, 8 GPU par nœud × 2 nœuds",
      f"cause probable{NBSP}: ", f"indice{NBSP}: "],
     ["op: ", "ranks: ", "rows: ", "model: ", "likely: ", "evidence: ", "note: ", "Avg bus bandwidth (as printed)"]),
    (["ncclog", _NCCLOG],
     ["(a local protection error): PCIe ACS breaking GPUDirect RDMA is the usual cause: likely a local"],
     [f"l'ACS PCIe qui casse GPUDirect RDMA en est la cause habituelle. Cause probable{NBSP}: "],
     [": likely ", "What looks wrong", "is the usual cause"]),
    (["topo", _TOPO_XML],
     ["GPU pairs by connection: NV18 x28", "NVLinks per GPU: GPU0 18", "PCIe links of the GPUs and NICs: ",
      "(give --nvlink/--pcie generations to compute bandwidth metrics)"],
     [f"Paires de GPU par type de connexion{NBSP}: NV18 x28", f"NVLinks par GPU{NBSP}: GPU0 18",
      f"Liaisons PCIe des GPU et des NIC{NBSP}: ", f"GPU{NBSP}: 8 (GPU0", f"NIC{NBSP}: 8 (NIC0=mlx5_0",
      f"Débits des NIC{NBSP}: mlx5_0 200 Gb/s", "(donnez les générations --nvlink/--pcie", f"remarque{NBSP}: "],
     ["GPU pairs by connection", "NIC speeds", "NVLinks per GPU", "PCIe links of", "note: ", "(give "]),
    (["topo", _TOPO_XML, "--nvlink", "nvlink4"],
     ["metrics (NVLink fabric, GB/s per direction): bisection "],
     [f"métriques (réseau NVLink, GB/s par sens){NBSP}: bissection ", ", anneaux ", ", sauts "],
     ["metrics (", "NVLink fabric"]),
], ids=["nccl-tests", "ncclog", "topo", "topo-metrics"])
def test_the_readers_text_reports_in_french_json_unchanged(lang, capsys, args, english, french, labels):
    code, out_en, _ = _main(capsys, args)
    assert code == 0 and all(line in out_en for line in english)
    json_en = _main(capsys, [*args, "--json"])
    lang.setenv("NVCOURSE_LANG", "fr")
    code, out, _ = _main(capsys, args)
    assert code == 0
    missing = [line for line in french if line not in out]
    assert missing == []
    left = [label for label in labels if label in out]
    assert left == []  # every fixed label, finding and problem is French
    assert _main(capsys, [*args, "--json"]) == json_en  # field names and values


_CHECKER_WALK = """
import os, tempfile
os.environ["NVCOURSE_QUIZ_DIR"] = tempfile.mkdtemp()
from nvcourse.checks import ch04b as c, quiz
from nvcourse.checks._answers import questions, expected_answer, answer
out = []
def show(r):
    out.extend([str(r), r._repr_html_()])
def mistakes(check, reference, variants, *samples):
    show(check(reference)); show(check(lambda *args: 1.2345e-7))
    for key in dict.fromkeys(k for args in samples for k, v in variants(*args).items() if v is not None):
        def fn(*args, key=key):
            value = variants(*args).get(key)
            return reference(*args) if value is None else value
        show(check(fn))
mistakes(c.ring_protocol_time, c._ring_time, c._ring_variants, (8, 1024, 6.8, 0.6, 100.0))
mistakes(c.crossover_bytes, c._crossover, c._crossover_variants, (1e-6, 1e9, 1e-5, 1e11))
for fn in (lambda s, t, m: c._kink(s, t, m), lambda s, t, m: c._kink(s, t, 0),
           lambda s, t, m: s[s.index(c._kink(s, t, m)) - 1], lambda s, t, m: 3):
    show(c.protocol_switch(fn))
for kw in ({}, {"sequential": False}, {"whole_call": True}):
    show(c.nvls_chunk_bytes(lambda n, ch, h, kw=kw: c._nvls_chunk(n, ch, h, **kw)))
show(c.nvls_chunk_bytes(lambda n, ch, h: 7))
gib, mib = 2**30, 2**20
for call in ((gib, 24, 8), (6 * gib, 24, 32), (4 * gib, 24, 32), (8 * mib - 16, 16, 8)):  # each hand-picked label
    show(c.nvls_chunk_bytes(lambda n, ch, h, call=call: 7 if (n, ch, h) == call else c._nvls_chunk(n, ch, h)))
for form in quiz.FORMS:  # nothing answered yet
    show(quiz.finish(form))
for qid, q in sorted(questions().items()):
    if qid.startswith(("04b.", "quiz.")):
        out.extend([q.prompt, *q.choices.values(), *q.explanation()])
        for value in (list(q.choices) if q.choices else [expected_answer(qid), *q.variants().values(), 1e9]):
            check = quiz.record if qid in quiz.MISCONCEPTIONS else (quiz.answer if qid.startswith("quiz") else answer)
            show(check(qid, value))
        show(answer(qid, 1))
for form in quiz.FORMS:
    show(quiz.finish(form))
show(quiz.finish("x")); show(quiz.record("quiz.post.gbps", 1)); show(quiz.answer("quiz.gbps", 1))
keys = list(quiz.MISCONCEPTIONS)
show(quiz.score({k: expected_answer(k) for k in keys[:3]}))
show(quiz.score({k: expected_answer(k) for k in keys}))
show(quiz.score({"quiz.gbps": 400, **{k: expected_answer(k) for k in keys[1:]}}))
show(quiz.score({"bad": 1}))
def stub():
    raise NotImplementedError()
show(quiz.score({k: stub for k in keys}))
print("\\n".join(out))
"""


@pytest.mark.parametrize("language", ["fr", "en"])
def test_quiz_and_04b_checkers_speak_the_learner_language(language):
    """Every _() entry of the quiz and of chapter 04b's checkers is shown by a walk over each known mistake, each
    question's answers and the quiz's record/finish/score; in French no English one is left."""
    from i18n_walks import run_walk, speaks

    shown = run_walk(_CHECKER_WALK, language)
    speaks(shown, language, ("nvcourse/checks/quiz.py", "nvcourse/checks/ch04b.py"), least=100)
    if language == "fr":
        assert "Idée reçue" in shown and "Misconception" not in shown
    else:
        assert "Hint: Misconception: '" in shown and "Idée reçue" not in shown


def test_the_quiz_classes_a_french_tell_tale_answer_as_the_misconception(lang, tmp_path):
    from nvcourse.checks import _answers, quiz

    lang.setenv("NVCOURSE_QUIZ_DIR", str(tmp_path))
    english = _answers.verdict("quiz.post.gbps", 800)
    assert quiz.class_of(english, "quiz.post.gbps") == "misconception"
    lang.setenv("NVCOURSE_LANG", "fr")
    french = _answers.verdict("quiz.post.gbps", 800)
    assert french.hint.startswith(f"Idée reçue{NBSP}:")
    assert quiz.class_of(french, "quiz.post.gbps") == "misconception"
    assert quiz.class_of(_answers.verdict("quiz.post.gbps", 50), "quiz.post.gbps") == "other"


def test_topo_file_errors_in_french(lang, capsys, tmp_path):
    missing = str(tmp_path / "missing.txt")
    code, _, err = _main(capsys, ["topo", missing])
    assert code == 2 and err == (f"nvcourse: error: FILE {missing!r}: No such file or directory; give a file with the "
                                 "output of `nvidia-smi topo -m`, or - for standard input\n")
    lang.setenv("NVCOURSE_LANG", "fr")
    code, _, err = _main(capsys, ["topo", missing])
    assert code == 2 and err == (f"nvcourse{NBSP}: erreur{NBSP}: FILE {missing!r}{NBSP}: Aucun fichier ou dossier de "
                                 f"ce type{NBSP}; donnez un fichier avec la sortie de `nvidia-smi topo -m`, ou - pour "
                                 "l'entrée standard\n")
    code, _, err = _main(capsys, ["topo", str(tmp_path)])
    assert code == 2 and f"{NBSP}: Est un dossier{NBSP}; donnez un fichier" in err
