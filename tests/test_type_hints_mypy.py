"""A type checker reads the public API's annotations as a user's code sees them (mypy, when installed).

Two small client files are checked in one mypy run. ``GOOD`` uses liegroups and servo.lie the way the
README does, with the types a reader expects written out (an algebra's bracket is a float array, a
system's equations are ``Equations``, ``subs`` keeps the class, the second kind's multiplier is a
pair): mypy must find nothing. ``BAD`` makes one mistake per line marked ``# error: <code>``: mypy must
report exactly those lines, so the check is not passing because the annotations are ``Any``.

Only the client files are checked (``--follow-imports=silent``): the library's function bodies are not
typed to mypy's standard yet. sympy ships no type information, so its types are ``Any`` here. The cache
lives in the temporary directory, so a second run takes about a second.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api")

ROOT = Path(__file__).resolve().parents[1]

GOOD = '''
import numpy as np
import sympy as sp
from numpy.typing import NDArray

from integrators import IntegrationResult
from liegroups import SO3, Casimir, LieAlgebra, LieGroupsError, check_structure_constants, named
from servo import (Equations, FirstIntegral, Nonholonomic, PoissonSphere, Reduced, ServoError, ServoFirstKind,
                   ServoSecondKind, euler_form, planar_path, reconstruct_motion)

g: LieAlgebra = named.so3()
x: NDArray[np.float64] = g.bracket([1.0, 0.0, 0.0], [0.0, 1.0, 0.0])
n: int = g.dim
kind: str | None = g.closed_form
cas: list[Casimir] = list(g.casimirs())
c0: NDArray[np.float64] = cas[0]([1.0, 2.0, 3.0])
C: NDArray[np.float64] = check_structure_constants(g.structure_constants)
R: NDArray[np.float64] = SO3.exp([0.1, 0.2, 0.3])
solvable: bool = named.se2().is_solvable()
s = ServoSecondKind(g, [2.0, 1.0, 0.5], a=[0, 0, 1], b=[0, 0.4, 1])
state: NDArray[np.float64] = s.state_from(w=[1.0, 0.5, 0.0], lam=0.3)
res: IntegrationResult = s.simulate(state, 1.0, steps=10)
eq: Equations = s.equations()
latex: str = eq.latex()
ints: list[FirstIntegral] = s.first_integrals()
red: Reduced = s.reduced()
lam, lamdot = s.multiplier(state)
I1 = sp.Symbol("I1")
first: ServoFirstKind = ServoFirstKind(g, [I1, 2, 3], a=[0, 0, 1], b=[0, 1, 1]).subs({I1: 1.0})
nh: Nonholonomic = Nonholonomic(g, np.eye(3), a=[0, 0, 1])
r: float | sp.Expr = nh.realizability()
e: sp.Expr = PoissonSphere(s, 1.0).energy_expr()
xs, ys, phis = planar_path(reconstruct_motion(res).y)
J: NDArray[np.float64] = euler_form(s).J
try:
    named.bianchi("VI")
except (LieGroupsError, ServoError) as exc:
    message: str = str(exc)
'''

BAD = '''
from liegroups import named
from servo import Equations, ServoSecondKind

g = named.so3()
dim: str = g.dim  # error: assignment
s = ServoSecondKind(g, [2.0, 1.0, 0.5], a=[0, 0, 1], b=[0, 0.4, 1])
eq: int = s.equations()  # error: assignment
s.simulate([1.0, 0.0, 0.0, 0.0], "ten")  # error: arg-type
single: float = s.multiplier([1.0, 0.0, 0.0, 0.0])  # error: assignment
named.bianchi(6)  # error: arg-type
'''


@pytest.fixture(scope="module")
def mypy_report(tmp_path_factory):
    d = tmp_path_factory.mktemp("clients")
    (d / "good_client.py").write_text(GOOD, encoding="utf-8")
    (d / "bad_client.py").write_text(BAD, encoding="utf-8")
    cache = Path(tempfile.gettempdir()) / "liedyn-mypy-cache"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MYPYPATH", str(ROOT))     # this tree, before any installed copy
        out, err, status = mypy_api.run([
            "--follow-imports=silent", "--ignore-missing-imports", "--no-error-summary",
            "--show-error-codes", f"--cache-dir={cache}", "--python-version=3.11",
            str(d / "good_client.py"), str(d / "bad_client.py")])
    assert not err, err
    return out


def _errors(report, name):
    return sorted((int(m.group(1)), m.group(2))
                  for m in re.finditer(rf"{name}:(\d+): error: .*\[([a-z-]+)\]$", report, re.M))


def test_public_api_type_checks_in_user_code(mypy_report):
    assert _errors(mypy_report, "good_client.py") == [], mypy_report


def test_wrong_use_of_the_api_is_reported(mypy_report):
    expected = sorted((i + 1, m.group(1)) for i, line in enumerate(BAD.splitlines())
                      if (m := re.search(r"# error: ([a-z-]+)", line)))
    assert len(expected) == 5
    assert _errors(mypy_report, "bad_client.py") == expected, mypy_report
