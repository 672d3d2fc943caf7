"""``liedyn cite NAME`` and ``liedyn cite --all``: the works an entry rests on, as citations or BibTeX.

NAME is a catalog entry or a TOML file; its ``references`` are keys of :mod:`catalog.bibliography`
(a TOML file may also cite a work by free text, printed as written). ``--all`` prints the whole
bibliography.
"""

from __future__ import annotations

import difflib

from .. import bibliography
from .common import add_common, emit_json, resolve


def cite_rows(refs):
    """One dict per reference: key (None for free text), text, bibtex (None for free text), and the fields."""
    rows = []
    for r in refs:
        if bibliography.is_key(r):
            e = bibliography.get(r)
            rows.append({"key": e.key, "text": e.text(), "bibtex": e.bibtex(), "authors": list(e.authors),
                         "title": e.title, "venue": e.venue, "year": e.year, "volume": e.volume,
                         "pages": e.pages, "doi": e.doi or None})
        else:
            close = difflib.get_close_matches(str(r), bibliography.keys(), n=2, cutoff=0.8) if " " not in str(r) else []
            rows.append({"key": None, "text": str(r), "bibtex": None, "did_you_mean": close})
    return rows


def cmd_cite(args):
    if args.all and args.name:
        raise bibliography.CatalogError("give NAME or --all, not both")
    if args.all:
        refs = bibliography.keys()
    elif args.name:
        refs = list(resolve(args.name, args.param).references)
    else:
        raise bibliography.CatalogError("give a catalog entry or TOML file NAME, or --all for the whole bibliography")
    rows = cite_rows(refs)
    if args.json:
        emit_json(rows)
        return 0
    if args.bibtex:
        print("\n\n".join(r["bibtex"] if r["bibtex"] else f"% not in the bibliography: {r['text']}" for r in rows))
        return 0
    for r in rows:
        hint = f"; did you mean {', '.join(r['did_you_mean'])}?" if r.get("did_you_mean") else ""
        print(r["text"] if r["key"] else f"{r['text']}  (not in the bibliography{hint})")
    if not rows:
        print("(no references)")
    return 0


def add_parsers(sub):
    p = sub.add_parser("cite", help="full citations of the works an entry rests on (--all: the whole bibliography)")
    p.add_argument("name", metavar="NAME", nargs="?", help="catalog entry name or a path to a .toml file")
    p.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                   help="override a documented default parameter (repeatable)")
    p.add_argument("--all", action="store_true", help="every work of the bibliography")
    p.add_argument("--bibtex", action="store_true", help="BibTeX records instead of one-line citations")
    add_common(p)
    p.set_defaults(func=cmd_cite)
