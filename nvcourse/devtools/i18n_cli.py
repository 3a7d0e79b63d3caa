"""The translation workflow (``python3 tasks.py i18n ...``):

    python3 tasks.py i18n extract [--check]   # locales/*.pot from the English (--check: exit 1 if stale)
    python3 tasks.py i18n update              # merge the templates into locales/fr/LC_MESSAGES/*.po
    python3 tasks.py i18n build [--execute]   # notebooks/fr/, solutions/fr/, exercises/fr/ and the .mo
    python3 tasks.py i18n status [--check]    # % translated per chapter (--check: exit 1 on a pofilter problem)

A changed English paragraph: ``extract`` then ``update`` turn it into a fuzzy entry (the old French offered, the
previous English shown); translate it in the .po, remove the ``fuzzy`` flag, then ``build``. See docs/authoring.md.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict

import polib

from . import i18n_build, i18n_catalog, i18n_checks

ROOT = i18n_catalog.ROOT


def cmd_extract(args: argparse.Namespace) -> int:
    problems = i18n_catalog.extract(check=args.check)
    for p in problems:
        print(p)
    if not args.check:
        print("wrote locales/notebooks.pot, locales/nvcourse.pot")
    return 1 if problems else 0


def cmd_update(args: argparse.Namespace) -> int:
    for path in i18n_catalog.update(args.lang):
        po = polib.pofile(str(path))
        print(f"{path.relative_to(ROOT)}: {len(po.translated_entries())} translated, "
              f"{len(po.fuzzy_entries())} fuzzy, {len(po.untranslated_entries())} untranslated")
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    mo = i18n_catalog.compile_mo(args.lang)
    print(f"compiled {mo.relative_to(ROOT)}")
    built = i18n_build.build(args.lang)
    for b in built:
        left = b.units - b.translated
        print(f"{b.path.relative_to(ROOT)}: {b.translated}/{b.units} units translated"
              + (f", {left} left in English" if left else ""))
    if args.execute:
        i18n_build.execute([b.path for b in built], args.lang)
        i18n_build.build(args.lang)  # exercises/<lang>/ again (they are generated from the executed solutions)
    return 0


def chapter_status(po: polib.POFile) -> dict[str, tuple[int, int, int]]:
    """Notebook path → (units, translated, fuzzy); a unit shared by notebooks counts in each."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for e in po:
        if e.obsolete:
            continue
        for where in {o[0].rsplit(":", 1)[0] for o in e.occurrences}:
            c = counts[where]
            c[0] += 1
            c[1] += i18n_catalog.done(e)
            c[2] += "fuzzy" in e.flags
    return {k: (v[0], v[1], v[2]) for k, v in sorted(counts.items())}


def cmd_status(args: argparse.Namespace) -> int:
    problems = []
    for domain in i18n_catalog.DOMAINS:
        path = i18n_catalog.po_path(args.lang, domain)
        if not path.exists():
            print(f"{path.relative_to(ROOT)}: missing (run `python3 tasks.py i18n update`)")
            continue
        po = polib.pofile(str(path))
        rows = chapter_status(po) if domain == "notebooks" else {
            f"nvcourse/ (_() strings, {domain}.po)": (len([e for e in po if not e.obsolete]),
                                                      len([e for e in po if i18n_catalog.done(e)]),
                                                      len(po.fuzzy_entries()))}
        for where, (units, done, fuzzy) in rows.items():
            pct = 100 * done / units if units else 100.0
            print(f"{pct:5.1f} %  {done:4d}/{units:<4d} {f'({fuzzy} fuzzy)' if fuzzy else '':11s} {where}")
        problems += [f"{path.name}: {p}" for p in i18n_checks.catalog_problems(po)]
    for p in problems:
        print(p)
    return 1 if args.check and problems else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 tasks.py i18n", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, func, helptext in (("extract", cmd_extract, "write locales/*.pot from the English sources"),
                                 ("update", cmd_update, "merge the templates into locales/LANG/LC_MESSAGES/*.po"),
                                 ("build", cmd_build, "build the edition's notebooks and compile the .mo"),
                                 ("status", cmd_status, "print the share translated per chapter")):
        p = sub.add_parser(name, help=helptext, description=helptext)
        p.set_defaults(func=func)
        p.add_argument("--lang", default="fr", choices=["fr"], help="the edition's language (default: fr)")
        if name in ("extract", "status"):
            p.add_argument("--check", action="store_true",
                           help="exit 1 if a template is stale" if name == "extract"
                           else "exit 1 if a translation changed a number, unit, code span, URL or LaTeX")
        if name == "build":
            p.add_argument("--execute", action="store_true",
                           help="then execute the edition's notebooks with NVCOURSE_LANG set (French outputs)")
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())

