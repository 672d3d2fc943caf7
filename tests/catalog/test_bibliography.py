"""The bibliography: every author-year citation in the code has an entry, every catalog entry cites
bibliography keys, entries carry what the source papers' first pages say, and unknown keys fail clearly.

Expected values come from the papers themselves (title pages: journal, volume, year, pages, DOI) and
from synthetic texts written here (a citation of a work that does not exist must be reported)."""

import io
import re
import tokenize
from pathlib import Path

import pytest

import catalog
from catalog import bibliography
from catalog.bibliography import UnknownWorkError

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("liegroups", "integrators", "servo", "catalog")


def comments_and_strings(source):
    """The comments and string literals (docstrings included) of Python source."""
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (tokenize.COMMENT, tokenize.STRING):
            out.append((tok.start[0], tok.string))
    return out


def unresolved_in(path):
    """["file:line: Name (year)"] for the author-year citations of ``path`` without a bibliography entry."""
    bad = []
    for line, text in comments_and_strings(Path(path).read_text(encoding="utf-8")):
        bad += [f"{path}:{line}: {c}" for c in bibliography.unresolved(text)]
    return bad


def python_files():
    return sorted(p for pkg in SCANNED for p in (ROOT / pkg).rglob("*.py"))


def test_every_citation_in_the_code_has_an_entry():
    files = python_files()
    assert len(files) > 50
    bad = [b for f in files for b in unresolved_in(f)]
    assert not bad, "citations without a bibliography entry:\n" + "\n".join(bad)


def test_the_scan_sees_the_citations_it_should():
    # written in servo/coordinates/one_sided.py's docstring: "Kozlov 2019, sections 2, 3 and 6; Salnikova,
    # Kugushev, Demidov 2023"; a scan that found nothing would make the test above vacuous
    found = set()
    for _, text in comments_and_strings((ROOT / "servo/coordinates/one_sided.py").read_text(encoding="utf-8")):
        found.update(bibliography.citations_in(text))
    assert {("Kozlov", 2019), ("Demidov", 2023)} <= found
    total = sum(len(bibliography.citations_in(t)) for f in python_files()
                for _, t in comments_and_strings(f.read_text(encoding="utf-8")))
    assert total >= 40


def test_a_citation_of_an_unknown_work_is_reported(tmp_path):
    f = tmp_path / "synthetic.py"
    f.write_text('"""Derived in Nobody (1999) and in Kozlov 2017."""\n'
                 "x = 1  # see Somebody et al. 2001; Yoshida's (1990) composition is known\n"
                 "# Moser & Veselov 1991, Hairer-McLachlan-Razakarivony 2008, Moser-Veselov (1991)\n")
    bad = unresolved_in(f)
    assert [b.split(": ", 1)[1] for b in bad] == ["Nobody (1999)", "Kozlov (2017)", "Somebody (2001)"]


@pytest.mark.parametrize("name, year, key", [
    ("Kozlov", 2019, "kozlov2019"), ("Kozlov", 2008, "kozlov2008"), ("Talamucci", 2025, "talamucci2025"),
    ("Salnikova", 2023, "salnikova2023"), ("Demidov", 2023, "salnikova2023"),
    ("Munthe-Kaas", 1999, "munthe-kaas1999"), ("Moser-Veselov", 1991, "moser-veselov1991"),
    ("Loan", 2003, "moler-vanloan2003"), ("Chetaev", 1932, "cetaev1932"), ("Béghin", 1922, "beghin1922"),
    ("Norsett", 1993, "hairer-norsett-wanner1993"),
])
def test_lookup_by_author_and_year(name, year, key):
    assert bibliography.lookup(name, year) == [key]


def test_keys_named_in_the_design_exist():
    for k in ("kozlov2019", "kozlov2008", "talamucci2025", "salnikova2023", "kozlov_servo_lectures",
              "munthe-kaas1999", "celledoni2003", "mclachlan1993", "moser-veselov1991", "yoshida1990",
              "hairer2006", "sommese-wampler2005", "cartwright-sturmfels2013", "ellis-maccallum1969",
              "crouch-grossman1993", "hairer-mclachlan-razakarivony2008", "kahan1965", "jacobi1849",
              "byrd-friedman1971", "yoshida1983", "furta1996", "goriely2001", "beghin1922", "cetaev1932"):
        assert bibliography.get(k).key == k


def test_source_papers_as_on_their_first_pages():
    # title pages: "THEORETICAL AND APPLIED MECHANICS Volume 46 (2019) Issue 1, 1-14, DOI 10.2298/TAM190123005K";
    # "Regular and Chaotic Dynamics, 2008, Vol. 13, No. 5, pp. 431-435 ... DOI: 10.1134/S1560354708050055";
    # "AppliedMath 2025, 5(1), 29; https://doi.org/10.3390/appliedmath5010029"; "DOI: 10.31857/S2686954323600167"
    k19, k08 = bibliography.get("kozlov2019"), bibliography.get("kozlov2008")
    assert (k19.volume, k19.year, k19.pages, k19.doi) == ("46", 2019, "1-14", "10.2298/TAM190123005K")
    assert k19.title == "On the dynamics of systems with one-sided non-integrable constraints"
    assert (k08.volume, k08.year, k08.pages, k08.doi) == ("13", 2008, "431-435", "10.1134/S1560354708050055")
    assert "46 (2019) 1-14" in k19.text() and "doi:10.2298/TAM190123005K" in k19.text()
    t = bibliography.get("talamucci2025")
    assert (t.volume, t.year, t.pages, t.doi) == ("5", 2025, "29", "10.3390/appliedmath5010029")
    s = bibliography.get("salnikova2023")
    assert s.surnames() == ("Salnikova", "Kugushev", "Demidov") and s.doi == "10.31857/S2686954323600167"
    assert bibliography.get("kozlov_servo_lectures").surnames() == ("Kozlov",)


def test_entries_are_complete_and_dois_well_formed():
    for k in bibliography.keys():
        e = bibliography.get(k)
        assert e.authors and e.title and e.venue, k
        assert e.year is None or 1600 <= e.year <= 2030, k
        assert e.doi == "" or re.fullmatch(r"10\.\d{4,9}/\S+", e.doi), (k, e.doi)
        assert e.text().endswith(".") and e.title in e.text(), k
    assert bibliography.get("moler-vanloan2003").surnames() == ("Moler", "Van Loan")


def test_bibtex_record_fields():
    rec = bibliography.get("kozlov2019").bibtex()
    assert rec.startswith("@article{kozlov2019,\n") and rec.endswith("\n}")
    fields = dict(re.findall(r"^  (\w+) = \{(.*)\},?$", rec, flags=re.M))
    assert fields["pages"] == "1--14" and fields["volume"] == "46" and fields["year"] == "2019"
    assert fields["journal"] == "Theoretical and Applied Mechanics" and fields["author"] == "V. V. Kozlov"
    assert rec.count("{") == rec.count("}")
    many = bibliography.get("salnikova2023").bibtex()
    assert "author = {T. V. Salnikova and E. I. Kugushev and A. A. Demidov}" in many


def test_cite_joins_in_order():
    keys = ["salnikova2023", "kozlov2019"]
    lines = bibliography.cite(keys).split("\n")
    assert lines == [bibliography.get(k).text() for k in keys]
    assert bibliography.cite(keys, bibtex=True).count("\n@") == 1
    assert bibliography.cite("kozlov2008") == bibliography.get("kozlov2008").text()


def test_unknown_key_names_it_and_close_matches():
    with pytest.raises(UnknownWorkError, match=r"'kozlov2018'.*kozlov2019") as exc:
        bibliography.get("kozlov2018")
    assert isinstance(exc.value, catalog.CatalogError) and isinstance(exc.value, ValueError)
    with pytest.raises(UnknownWorkError, match="kozlov2008"):
        bibliography.cite(["kozlov2019", "kozlov208"])


def test_catalog_entries_cite_bibliography_keys():
    for name in catalog.names():
        refs = catalog.get(name).references
        assert refs, name
        unknown = [r for r in refs if not bibliography.is_key(r)]
        assert not unknown, f"{name}: references that are not bibliography keys: {unknown}"


def test_no_seed_file_names_left():
    pattern = re.compile(r"seeds/0\d\d|0\d\d_[0-9a-f]{16}\.txt|\bseed 00\d")
    files = [ROOT / "README.md"] + [p for d in SCANNED + ("tests", "examples", "benchmarks")
                                    for ext in ("*.py", "*.md", "*.toml") for p in (ROOT / d).rglob(ext)]
    bad = [str(p.relative_to(ROOT)) for p in files if pattern.search(p.read_text(encoding="utf-8"))]
    assert not bad
