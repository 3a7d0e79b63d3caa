"""The translation store: templates (.pot) from the English sources, catalogs (.po) merged from them, .mo compiled.

* ``locales/notebooks.pot``: one entry per paragraph, heading, list item and table of ``notebooks/*.ipynb`` and
  ``solutions/*.ipynb`` (the quizzes too; :mod:`.i18n_markdown` cuts them), located by ``path:cell-id``.
* ``locales/nvcourse.pot``: every ``_("...")`` / ``ngettext(...)`` / ``pgettext(context, ...)`` string of
  ``nvcourse/`` (Babel's extractor; a context becomes the entry's ``msgctxt``),
  located by file (no line numbers: moving code does not make the template stale); then the string fields of the
  data files shown to learners (``DATA_FIELDS``), located by ``file:table.key.field``, which display code passes
  through :func:`nvcourse.i18n.data_text` (the data files stay English, the one source).
* ``locales/<lang>/LC_MESSAGES/{notebooks,nvcourse}.po``: the translations; ``nvcourse.mo`` is compiled from
  ``nvcourse.po`` (the notebooks' catalog is applied at build time, it needs no .mo).

Templates carry no dates, so extracting twice gives the same bytes and ``--check`` can compare them.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import nbformat
import polib
from babel.messages.extract import extract_from_file

from .._data import DISPLAYED, displayed_records, load_file
from . import generated
from .i18n_markdown import units

ROOT = Path(__file__).resolve().parents[2]
LOCALES = ROOT / "locales"
SOURCE_DIRS = ("notebooks", "solutions")
DOMAINS = ("notebooks", "nvcourse")
#: Python files whose strings are not for learners (maintainers' tools)...
SKIP_PY = ("nvcourse/devtools/",)
#: ...except the generators of pages learners read in every language (the cheat sheet)
LEARNER_PY = ("nvcourse/devtools/cheatsheet.py",)
#: Babel keyword specs: ``(1, "c")`` is the context argument (``msgctxt``) of ``pgettext(context, message)``
KEYWORDS = {"_": None, "ngettext": (1, 2), "pgettext": ((1, "c"), 2), "npgettext": ((1, "c"), 2, 3)}
WRAP = 100
HEADER = {"Project-Id-Version": "nvcourse", "MIME-Version": "1.0",
          "Content-Type": "text/plain; charset=UTF-8", "Content-Transfer-Encoding": "8bit"}
PLURAL_FORMS = {"fr": "nplurals=2; plural=(n > 1);"}
#: The displayed string fields of ``nvcourse/data/*.toml`` (defined beside the data reader, which translates them)
DATA_FIELDS = DISPLAYED
#: Fuzzy matching: how alike an old English text must be to offer its translation for a changed one.
FUZZY_RATIO = 0.6


def source_notebooks(root: Path = ROOT) -> list[Path]:
    """The English notebooks (not the language folders under them)."""
    return [p for d in SOURCE_DIRS for p in sorted((root / d).glob("*.ipynb"))]


def _new_file(lang: str | None = None) -> polib.POFile:
    po = polib.POFile(wrapwidth=WRAP)
    po.metadata = dict(HEADER)
    if lang:
        po.metadata.update({"Language": lang, "Plural-Forms": PLURAL_FORMS.get(lang, "nplurals=2; plural=(n != 1);")})
    return po


def _add(po: polib.POFile, index: dict, msgid: str, where: str, comment: str = "", plural: str = "",
         context: str | None = None) -> None:
    entry = index.get((context, msgid))
    if entry is None:
        entry = polib.POEntry(msgid=msgid, msgstr="", comment=comment, msgid_plural=plural,
                              msgstr_plural={0: "", 1: ""} if plural else {}, msgctxt=context)
        po.append(entry)
        index[(context, msgid)] = entry
    if (where, "") not in entry.occurrences:
        entry.occurrences.append((where, ""))


def notebooks_template(root: Path = ROOT) -> polib.POFile:
    """One entry per unit of every English notebook, in reading order; a repeated text is one entry."""
    po, index = _new_file(), {}
    for path in source_notebooks(root):
        rel = path.relative_to(root).as_posix()
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "markdown":
                continue
            for unit in units(cell.source):
                _add(po, index, unit.text, f"{rel}:{cell.get('id', '')}", comment=unit.kind)
    return po


def python_template(root: Path = ROOT) -> polib.POFile:
    """Every ``_()`` / ``ngettext()`` literal of ``nvcourse/`` (Babel's Python extractor), in file order, then the
    displayed data-file fields (``DATA_FIELDS``)."""
    po, index = _new_file(), {}
    for path in sorted((root / "nvcourse").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(SKIP_PY) and rel not in LEARNER_PY:
            continue
        for _line, message, _comments, ctx in extract_from_file("python", path, keywords=KEYWORDS):
            if isinstance(message, tuple):
                _add(po, index, message[0], rel, plural=message[1], context=ctx)
            elif message:
                _add(po, index, message, rel, context=ctx)
    _add_data_fields(po, index, root)
    return po


def _add_data_fields(po: polib.POFile, index: dict, root: Path) -> None:
    """``DATA_FIELDS``' strings, in file and record order."""
    for name, tables in DATA_FIELDS.items():
        data = load_file(root / "nvcourse" / "data" / name)  # root may be a checkout other than the package's
        for table, fields in tables:
            for key, record in displayed_records(data, table, fields):
                for field in fields:
                    if isinstance(record.get(field), str) and record[field]:
                        _add(po, index, record[field], f"nvcourse/data/{name}:{table}.{key}.{field}")


def templates(root: Path = ROOT) -> dict[str, polib.POFile]:
    return {"notebooks": notebooks_template(root), "nvcourse": python_template(root)}


def extract(root: Path = ROOT, check: bool = False) -> list[str]:
    """Write ``locales/*.pot`` (or with ``check``, compare): the problems found (stale templates)."""
    problems = []
    for domain, po in templates(root).items():
        path = root / "locales" / f"{domain}.pot"
        if generated.refresh(path, str(po) + "\n", check) and check:
            problems.append(f"STALE template (run `python3 tasks.py i18n extract`): {path.relative_to(root)}")
    return problems


def _same_place(a: polib.POEntry, b: polib.POEntry) -> bool:
    return bool({o[0] for o in a.occurrences} & {o[0] for o in b.occurrences})


def _fuzzy_source(entry: polib.POEntry, gone: list[polib.POEntry]) -> polib.POEntry | None:
    """The translated entry that left the template most like ``entry`` (same cell first), or None."""
    for pool in ([g for g in gone if _same_place(g, entry)], gone):
        best = max(pool, default=None, key=lambda g: difflib.SequenceMatcher(None, g.msgid, entry.msgid).ratio())
        if best and difflib.SequenceMatcher(None, best.msgid, entry.msgid).ratio() >= FUZZY_RATIO:
            return best
    return None


def merge(template: polib.POFile, old: polib.POFile, lang: str) -> polib.POFile:
    """``template`` with ``old``'s translations: kept when the English is unchanged, offered as *fuzzy* (with the
    previous English) when it changed, empty when new; translations no longer used are kept as obsolete."""
    known = {(e.msgctxt, e.msgid): e for e in old}  # an entry is its context and its English
    wanted = {(t.msgctxt, t.msgid) for t in template}
    gone = [e for e in old if (e.msgctxt, e.msgid) not in wanted and (e.msgstr or any(e.msgstr_plural.values()))]
    po = _new_file(lang)
    for t in template:
        e = polib.POEntry(msgid=t.msgid, msgid_plural=t.msgid_plural, comment=t.comment, msgctxt=t.msgctxt,
                          occurrences=list(t.occurrences), msgstr="", msgstr_plural=dict(t.msgstr_plural))
        prev = known.get((t.msgctxt, t.msgid))
        if prev is not None:
            e.msgstr, e.msgstr_plural = prev.msgstr, dict(prev.msgstr_plural) or e.msgstr_plural
            e.flags = [f for f in prev.flags if f == "fuzzy"]
            e.previous_msgid = prev.previous_msgid if "fuzzy" in e.flags else None
        elif (src := _fuzzy_source(t, gone)) is not None:
            e.msgstr, e.flags, e.previous_msgid = src.msgstr, ["fuzzy"], src.msgid
            gone.remove(src)
        po.append(e)
    for g in gone:
        g.obsolete, g.occurrences = True, []
        po.append(g)
    return po


def po_path(lang: str, domain: str, root: Path = ROOT) -> Path:
    return root / "locales" / lang / "LC_MESSAGES" / f"{domain}.po"


def update(lang: str, root: Path = ROOT) -> list[Path]:
    """Merge the templates into ``locales/<lang>/LC_MESSAGES/*.po``; returns the catalogs written."""
    written = []
    for domain in DOMAINS:
        pot = polib.pofile(str(root / "locales" / f"{domain}.pot"), wrapwidth=WRAP)
        path = po_path(lang, domain, root)
        old = polib.pofile(str(path), wrapwidth=WRAP) if path.exists() else _new_file(lang)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(str(merge(pot, old, lang)) + "\n", encoding="utf-8")
        written.append(path)
    return written


def done(entry: polib.POEntry) -> bool:
    """Translated and not fuzzy (what the build uses)."""
    return not entry.obsolete and entry.translated()


def compile_mo(lang: str, root: Path = ROOT) -> Path:
    """``nvcourse.mo`` from ``nvcourse.po``: the translated, not fuzzy entries only (others stay English)."""
    src = polib.pofile(str(po_path(lang, "nvcourse", root)))
    out = _new_file(lang)
    for e in src:
        if done(e):
            out.append(e)
    mo = po_path(lang, "nvcourse", root).with_suffix(".mo")
    out.save_as_mofile(str(mo))
    return mo
