"""catalog.from_file: a user's own system from TOML, and one error per bad key (naming the key)."""

import numpy as np
import pytest

import catalog
from catalog import TomlEntryError

DATA = __import__("pathlib").Path(__file__).parents[2] / "catalog" / "entries" / "data"  # shipped example


def test_flywheel_file_matches_catalog_entry():
    """The TOML flywheel is the catalog's flywheel_body (same I, a, b, initial state): same motion, and the
    Casimir |m + lambda b|^2 claimed by the second-kind model is conserved."""
    e = catalog.from_file(DATA / "flywheel.toml")
    assert e.name == "my_flywheel" and e.model == "servo2" and e.t_end == 5.0 and e.steps == 400
    ref = catalog.get("flywheel_body", t_end=5.0, steps=400)
    np.testing.assert_allclose(e.initial_state, ref.initial_state, atol=1e-15)
    r, rr = catalog.simulate(e), catalog.simulate(ref, method="rkmk4")
    np.testing.assert_allclose(r.y, rr.y, atol=1e-12)
    assert all(v.passed for v in catalog.checks(e, r))
    assert any("Casimir" in k for k in e.first_integrals)


def test_structure_constants_and_free_model(tmp_path):
    """so(3) given by its structure constants eps_ijk, free model: the claims are energy and |m|^2."""
    eps = np.zeros((3, 3, 3))
    for i, j, k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
        eps[i, j, k], eps[j, i, k] = 1, -1
    f = tmp_path / "top.toml"
    f.write_text(f"algebra = {{ structure_constants = {eps.tolist()} }}\ninertia = [2.0, 1.0, 0.6666666666666666]\n"
                 "[initial]\nm = [0.4535961214255773, 0.0, 0.8912073600614354]\n[simulation]\nt_end = 1.0\nsteps = 200\n")
    e = catalog.from_file(f)
    r = catalog.simulate(e, method="rkmk4")
    # the independent reference value m(1) of the Euler top with these data
    np.testing.assert_allclose(r.y[-1], [0.36911008, -0.37284632, 0.85131861], atol=1e-7)
    assert len(e.first_integrals) == 2 and all(v.passed for v in catalog.checks(e, r))


BASE = 'algebra = "so3"\ninertia = [2.0, 1.0, 0.5]\nmodel = "servo1"\na = [0, 0, 1]\nb = [0, 1, 1]\n[initial]\nw = [1.0, 0.5, 0.0]\n'


@pytest.mark.parametrize("text, key, msg", [
    (BASE.replace('"so3"', '"so7"'), "algebra", "unknown algebra"),
    (BASE.replace("[2.0, 1.0, 0.5]", "[2.0, 1.0]"), "inertia", "expected 3 numbers"),
    (BASE.replace("[2.0, 1.0, 0.5]", "[2.0, 1.0, -0.5]"), "inertia", "not positive definite"),
    (BASE.replace("[2.0, 1.0, 0.5]", "[[2, 1, 0], [0, 1, 0], [0, 0, 1]]"), "inertia", "not symmetric"),
    (BASE.replace('"servo1"', '"servo3"'), "model", "unknown model"),
    (BASE.replace("a = [0, 0, 1]\n", ""), "a", "needs the constraint covector"),
    (BASE.replace("a = [0, 0, 1]", "a = [0, 0, 0]"), "a", "non-zero"),
    (BASE.replace("b = [0, 1, 1]", "b = [0, 1]"), "b", "expected 3 numbers"),
    (BASE.replace("w = [1.0, 0.5, 0.0]", "w = [1.0, 0.5, 0.1]"), "initial", "off the constraint"),
    (BASE + "lambda = 1.0\n", "initial.lambda", "no lambda"),
    ("colour = 3\n" + BASE, "colour", "unknown key"),
    (BASE + "colour = 3\n", "initial.colour", "unknown key"),
    (BASE.replace("[initial]\nw = [1.0, 0.5, 0.0]\n", ""), "initial", "missing"),
])
def test_bad_files_name_the_key(tmp_path, text, key, msg):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(TomlEntryError, match=rf"key '{key}'.*{msg}"):
        catalog.from_file(f)


def test_unrealizable_file(tmp_path):
    """(I^-1 a, b) = 0: b orthogonal to I^-1 a = (0, 0, 2) is not realizable (Kozlov's lectures, condition (*))."""
    f = tmp_path / "u.toml"
    f.write_text(BASE.replace("b = [0, 1, 1]", "b = [0, 1, 0]"))
    with pytest.raises(ValueError, match="(?i)realiz"):
        catalog.from_file(f)


def test_not_toml(tmp_path):
    f = tmp_path / "x.toml"
    f.write_text("algebra = [unclosed\n")
    with pytest.raises(TomlEntryError, match="not valid TOML"):
        catalog.from_file(f)


def test_several_constraints_from_toml(tmp_path):
    """a (and b) as lists of covectors: the vakonomic body with w1 = w2 = 0 turns uniformly about e3
    with s = 0.5 while u = lambda1 e1 + lambda2 e2 rotates about e3 by -s t (u* = -s (I e3 - I33 e3) = 0
    for a diagonal inertia), derived as in catalog.entries.multi_constrained."""
    f = tmp_path / "two.toml"
    f.write_text('algebra = "so3"\ninertia = [3.0, 2.0, 1.0]\nmodel = "vakonomic"\n'
                 'a = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]\n[initial]\nw = [0.0, 0.0, 0.5]\nlambda = [0.1, 0.2]\n'
                 '[simulation]\nt_end = 2.0\nsteps = 200\n')
    e = catalog.from_file(f)
    run = catalog.simulate(e)
    ang = -0.5 * run.t
    lam = np.stack([0.1 * np.cos(ang) - 0.2 * np.sin(ang), 0.1 * np.sin(ang) + 0.2 * np.cos(ang)], -1)
    assert np.max(np.abs(run.y[:, 3:] - lam)) < 1e-10
    assert e.labels[-2:] == ("lambda1", "lambda2")


def test_several_constraints_toml_errors_name_the_key(tmp_path):
    f = tmp_path / "bad.toml"
    f.write_text('algebra = "so3"\ninertia = [3.0, 2.0, 1.0]\nmodel = "servo1"\n'
                 'a = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]\nb = [1.0, 0.0, 0.0]\n[initial]\nw = [0.0, 0.0, 0.5]\n')
    with pytest.raises(catalog.TomlEntryError, match="key 'b'.*as many control covectors"):
        catalog.from_file(f)
    f.write_text('algebra = "so3"\ninertia = [3.0, 2.0, 1.0]\nmodel = "nonholonomic"\n'
                 'a = [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]\n[initial]\nw = [0.0, 0.0, 0.5]\n')
    with pytest.raises(catalog.TomlEntryError, match=r"key 'a\[1\]'.*non-zero"):
        catalog.from_file(f)
    f.write_text('algebra = "so3"\ninertia = [3.0, 2.0, 1.0]\nmodel = "nonholonomic"\n'
                 'a = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]\n[initial]\nw = [0.0, 0.1, 0.5]\n')
    with pytest.raises(catalog.TomlEntryError, match=r"off the constraint: \(a_2, w\)"):
        catalog.from_file(f)
