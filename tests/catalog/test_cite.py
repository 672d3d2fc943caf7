"""``liedyn cite``: the works an entry rests on, from the bibliography, for catalog entries and TOML files.

Expected values: the entry's own ``references`` (keys) and the source papers' title pages (journal,
volume, year, pages of Kozlov 2019); the error paths end with one ``liedyn: error:`` line and status 2."""

import json
import re
from pathlib import Path

import catalog
from catalog import bibliography

DATA = Path(__file__).resolve().parents[2] / "catalog" / "entries" / "data"


def cli(capsys, *args):
    from catalog.cli.main import main

    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cite_entry_prints_each_reference_in_full(capsys):
    keys = catalog.get("beghin_body").references
    code, out, err = cli(capsys, "cite", "beghin_body")
    assert code == 0, err
    lines = out.strip().split("\n")
    assert len(lines) == len(keys) == 4
    # Kozlov (2019) as on its title page: Theoretical and Applied Mechanics, volume 46 (2019), 1-14
    assert any(l.startswith("V. V. Kozlov, \"On the dynamics of systems with one-sided non-integrable")
               and "Theoretical and Applied Mechanics 46 (2019) 1-14" in l for l in lines)
    assert any("Beghin" in l or "Béghin" in l for l in lines)


def test_cite_bibtex_and_json(capsys):
    keys = catalog.get("one_sided_sleigh").references
    code, out, err = cli(capsys, "cite", "one_sided_sleigh", "--bibtex")
    assert code == 0, err
    assert re.findall(r"^@\w+\{([^,]+),$", out, flags=re.M) == list(keys)
    code, out, err = cli(capsys, "cite", "one_sided_sleigh", "--json")
    rows = json.loads(out)
    assert [r["key"] for r in rows] == list(keys) and "salnikova2023" in keys
    s = next(r for r in rows if r["key"] == "salnikova2023")
    assert s["doi"] == "10.31857/S2686954323600167" and s["year"] == 2023


def test_cite_toml_file_keys_and_free_text(tmp_path, capsys):
    code, out, err = cli(capsys, "cite", DATA / "flywheel.toml")
    assert code == 0, err
    assert out.strip() == bibliography.get("kozlov_servo_lectures").text()
    f = tmp_path / "mine.toml"
    f.write_text((DATA / "flywheel.toml").read_text().replace(
        'references = ["kozlov_servo_lectures"]', 'references = ["kozlov2008", "My notes, 2024", "kozlov2018"]'))
    code, out, err = cli(capsys, "cite", f)
    assert code == 0, err
    lines = out.strip().split("\n")
    assert "Regular and Chaotic Dynamics 13 (2008) 431-435" in lines[0]
    assert lines[1] == "My notes, 2024  (not in the bibliography)"
    assert "did you mean kozlov2019" in lines[2]


def test_cite_all_lists_the_whole_bibliography(capsys):
    code, out, err = cli(capsys, "cite", "--all")
    assert code == 0, err
    assert len(out.strip().split("\n")) == len(bibliography.keys()) >= 40
    code, out, err = cli(capsys, "cite", "--all", "--bibtex")
    assert out.count("\n@") + out.startswith("@") == len(bibliography.keys())


def test_cite_errors_one_line_exit_2(capsys):
    for args, msg in ((["cite"], "NAME"), (["cite", "beghin_body", "--all"], "not both"),
                      (["cite", "beghin_bdy"], "did you mean beghin_body")):
        code, out, err = cli(capsys, *args)
        assert code == 2 and out == ""
        assert err.count("\n") == 1 and err.startswith("liedyn: error:") and msg in err, err
