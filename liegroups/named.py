"""Named Lie algebras in documented bases.

| name | basis | brackets |
| --- | --- | --- |
| so3 (= Bianchi IX) | e1, e2, e3 (infinitesimal rotations) | [e_i, e_j] = eps_ijk e_k |
| su2 | i sigma_k / 2 ... as -i sigma_k / 2 | isomorphic to so(3) (same C) |
| se2 = e2 | e1, e2 (translations), e3 (rotation) | [e3, e1] = e2, [e3, e2] = -e1 |
| se3 = e3 | e1..e3 rotations, e4..e6 translations | [R_i, R_j] = eps R_k, [R_i, T_j] = eps T_k |
| sl2 | h, e, f | [h, e] = 2e, [h, f] = -2f, [e, f] = h |
| so21 (= Bianchi VIII) | e1, e2, e3 | [e1, e2] = -e3, [e2, e3] = e1, [e3, e1] = e2 |
| heisenberg (= Bianchi II) | x, y, z | [x, y] = z |
| so4, so(n) | L12, L13, L14, L23, L24, L34 (L_ij, i < j) | from the matrices E_ij - E_ji |

Each is built from matrices (so the Jacobi identity holds by construction) or from the table above.
The Bianchi classification of real 3-dimensional algebras is :func:`bianchi`.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .algebra import LieAlgebra
from .closed_forms import STRUCTURE_CONSTANTS
from .errors import LieAlgebraError


@lru_cache(maxsize=None)
def so3() -> LieAlgebra:
    """so(3): [e_i, e_j] = eps_ijk e_k. Euler-Poincare gives Euler's equations m' = m x w."""
    return LieAlgebra(STRUCTURE_CONSTANTS["so3"], basis=("e1", "e2", "e3"), name="so(3)")


@lru_cache(maxsize=None)
def su2() -> LieAlgebra:
    """su(2) from the matrices -i sigma_k / 2 (isomorphic to so(3): [e_i, e_j] = eps_ijk e_k)."""
    s = [np.array([[0, 1], [1, 0]]), np.array([[0, -1j], [1j, 0]]), np.array([[1, 0], [0, -1]])]
    return LieAlgebra.from_matrices([-0.5j * m for m in s], basis=("s1", "s2", "s3"), name="su(2)")


def _se2_matrices():
    T1 = np.zeros((3, 3)); T1[0, 2] = 1
    T2 = np.zeros((3, 3)); T2[1, 2] = 1
    R = np.zeros((3, 3)); R[0, 1] = -1; R[1, 0] = 1
    return [T1, T2, R]


@lru_cache(maxsize=None)
def se2() -> LieAlgebra:
    """se(2) = e(2), basis (e1, e2, e3) = (translation along the body axis, transverse, rotation):
    [e3, e1] = e2, [e3, e2] = -e1, [e1, e2] = 0. Velocities (u, v, w) as in Chaplygin's sleigh."""
    return LieAlgebra.from_matrices(_se2_matrices(), basis=("u", "v", "w"), name="se(2)")


e2 = se2


@lru_cache(maxsize=None)
def se3() -> LieAlgebra:
    """se(3) = e(3), basis (R1, R2, R3, T1, T2, T3): rotations first, then translations.

    Euler-Poincare gives Kirchhoff's equations M' = M x Omega + P x V, P' = P x Omega.
    """
    mats = []
    for i in range(3):
        X = np.zeros((4, 4))
        e = np.zeros(3); e[i] = 1
        X[:3, :3] = np.array([[0, -e[2], e[1]], [e[2], 0, -e[0]], [-e[1], e[0], 0]])
        mats.append(X)
    for i in range(3):
        X = np.zeros((4, 4)); X[i, 3] = 1
        mats.append(X)
    return LieAlgebra.from_matrices(mats, basis=("R1", "R2", "R3", "T1", "T2", "T3"), name="se(3)")


e3 = se3


@lru_cache(maxsize=None)
def sl2() -> LieAlgebra:
    """sl(2, R), basis (h, e, f): [h, e] = 2e, [h, f] = -2f, [e, f] = h."""
    h = np.array([[1.0, 0], [0, -1]])
    e = np.array([[0.0, 1], [0, 0]])
    f = np.array([[0.0, 0], [1, 0]])
    return LieAlgebra.from_matrices([h, e, f], basis=("h", "e", "f"), name="sl(2)")


def _table(n, brackets):
    C = np.zeros((n, n, n))
    for (i, j), vec in brackets.items():
        C[i, j] = vec
        C[j, i] = -np.asarray(vec, dtype=float)
    return C


@lru_cache(maxsize=None)
def so21() -> LieAlgebra:
    """so(2,1) (Bianchi VIII): [e1, e2] = -e3, [e2, e3] = e1, [e3, e1] = e2."""
    C = _table(3, {(0, 1): [0, 0, -1], (1, 2): [1, 0, 0], (2, 0): [0, 1, 0]})
    return LieAlgebra(C, basis=("e1", "e2", "e3"), name="so(2,1)")


@lru_cache(maxsize=None)
def heisenberg() -> LieAlgebra:
    """Heisenberg algebra (Bianchi II): [x, y] = z, z central."""
    C = _table(3, {(0, 1): [0, 0, 1]})
    return LieAlgebra(C, basis=("x", "y", "z"), name="heisenberg")


@lru_cache(maxsize=None)
def so(n: int) -> LieAlgebra:
    """so(n) from L_ij = E_ij - E_ji (i < j), basis (L12, L13, ..., L(n-1)n), dimension n (n - 1) / 2."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise LieAlgebraError(f"so(n) needs an integer n >= 2, got {n!r}")
    n = int(n)
    mats, names = [], []
    for i in range(n):
        for j in range(i + 1, n):
            X = np.zeros((n, n))
            X[i, j], X[j, i] = 1.0, -1.0
            mats.append(X)
            names.append(f"L{i + 1}{j + 1}")
    return LieAlgebra.from_matrices(mats, basis=tuple(names), name=f"so({n})")


@lru_cache(maxsize=None)
def sl(n: int) -> LieAlgebra:
    """sl(n, R) from its matrices: E_ij (i != j, row by row), then H_k = E_kk - E_(k+1)(k+1), dimension
    n^2 - 1."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise LieAlgebraError(f"sl(n) needs an integer n >= 2, got {n!r}")
    n = int(n)
    mats, names = [], []
    for i in range(n):
        for j in range(n):
            if i != j:
                X = np.zeros((n, n))
                X[i, j] = 1.0
                mats.append(X)
                names.append(f"E{i + 1}{j + 1}")
    for k in range(n - 1):
        X = np.zeros((n, n))
        X[k, k], X[k + 1, k + 1] = 1.0, -1.0
        mats.append(X)
        names.append(f"H{k + 1}")
    return LieAlgebra.from_matrices(mats, basis=tuple(names), name=f"sl({n})")


def so4() -> LieAlgebra:
    """so(4) from L_ij = E_ij - E_ji, basis (L12, L13, L14, L23, L24, L34) (:func:`so` with n = 4)."""
    return so(4)


#: Bianchi types and whether they take the parameter ``a``
BIANCHI_TYPES = ("I", "II", "III", "IV", "V", "VI", "VI0", "VII", "VII0", "VIII", "IX")


def bianchi(type: str, a: float | None = None) -> LieAlgebra:
    """Real 3-dimensional Lie algebra of Bianchi type ``type`` (roman numeral).

    Basis e1, e2, e3; unimodular types by [e1, e2] etc., the others as e3 acting on span(e1, e2):
    I abelian; II [e2, e3] = e1; III [e1, e3] = e1; IV [e1, e3] = e1, [e2, e3] = e1 + e2;
    V [e1, e3] = e1, [e2, e3] = e2; VI_a [e1, e3] = e1, [e2, e3] = a e2 (a not in {0, 1, -1});
    VI0 [e1, e3] = e1, [e2, e3] = -e2 (= e(1,1)); VII_a [e1, e3] = a e1 - e2, [e2, e3] = e1 + a e2
    (a > 0); VII0 [e1, e3] = -e2, [e2, e3] = e1 (= e(2)); VIII so(2,1); IX so(3).
    Classification and canonical forms: Bianchi (1898); Ellis and MacCallum (1969), table 1 (class A =
    unimodular: I, II, VI0, VII0, VIII, IX). Raises LieAlgebraError for an unknown
    type or a missing / forbidden / out-of-range parameter. Cached: equal arguments give the same object.
    """
    t = str(type).upper().replace("_", "")
    if t not in BIANCHI_TYPES:
        raise LieAlgebraError(f"unknown Bianchi type {type!r}; known: {', '.join(BIANCHI_TYPES)}")
    needs_a = t in ("VI", "VII")
    if needs_a and a is None:
        raise LieAlgebraError(f"Bianchi type {t} needs the parameter a")
    if not needs_a and a is not None:
        raise LieAlgebraError(f"Bianchi type {t} takes no parameter a (got a={a})")
    if needs_a:
        try:
            a = float(a)
        except (TypeError, ValueError):
            raise LieAlgebraError(f"Bianchi type {t}: the parameter a must be a real number, got {a!r}") from None
        if not np.isfinite(a):
            raise LieAlgebraError(f"Bianchi type {t}: the parameter a must be finite, got {a}")
    if t == "VI" and a in (0, 1, -1):
        raise LieAlgebraError(f"Bianchi VI_a needs a not in (0, 1, -1) (a=0 is III-like, 1 is V, -1 is VI0); got {a}")
    if t == "VII" and not a > 0:
        raise LieAlgebraError(f"Bianchi VII_a needs a > 0 (a = 0 is VII0); got {a}")
    tables = {
        "I": {},
        "II": {(1, 2): [1, 0, 0]},
        "III": {(0, 2): [1, 0, 0]},
        "IV": {(0, 2): [1, 0, 0], (1, 2): [1, 1, 0]},
        "V": {(0, 2): [1, 0, 0], (1, 2): [0, 1, 0]},
        "VI": {(0, 2): [1, 0, 0], (1, 2): [0, a, 0]} if t == "VI" else None,
        "VI0": {(0, 2): [1, 0, 0], (1, 2): [0, -1, 0]},
        "VII": {(0, 2): [a, -1, 0], (1, 2): [1, a, 0]} if t == "VII" else None,
        "VII0": {(0, 2): [0, -1, 0], (1, 2): [1, 0, 0]},
        "VIII": {(0, 1): [0, 0, -1], (1, 2): [1, 0, 0], (2, 0): [0, 1, 0]},
        "IX": {(0, 1): [0, 0, 1], (1, 2): [1, 0, 0], (2, 0): [0, 1, 0]},
    }
    return _bianchi_cached(t, a, tuple(tuple(map(tuple, _table(3, tables[t]).reshape(3, 9)))))


@lru_cache(maxsize=None)
def _bianchi_cached(t, a, rows):
    """One shared (immutable) algebra per type and parameter, so its Casimirs are computed once."""
    label = f"Bianchi {t}" + (f"_{a:g}" if a is not None else "")
    return LieAlgebra(np.array(rows).reshape(3, 3, 3), basis=("e1", "e2", "e3"), name=label)


def all_named() -> dict[str, LieAlgebra]:
    """Every named algebra (with a representative parameter for the Bianchi families), by name."""
    out = {
        "so3": so3(), "su2": su2(), "se2": se2(), "se3": se3(), "sl2": sl2(),
        "so21": so21(), "heisenberg": heisenberg(), "so4": so4(),
    }
    for t in BIANCHI_TYPES:
        a = {"VI": 2.0, "VII": 0.5}.get(t)
        out[f"bianchi_{t}"] = bianchi(t, a=a)
    return out


def get(name: str, **params: float) -> LieAlgebra:
    """Named algebra by string: 'so3', 'se2', 'e2', ..., or 'bianchi_VI' with a=..."""
    key = name.lower().replace("(", "").replace(")", "").replace(",", "").replace(" ", "")
    simple = {"so3": so3, "su2": su2, "se2": se2, "e2": se2, "se3": se3, "e3": se3, "sl2": sl2,
              "so21": so21, "heisenberg": heisenberg, "so4": so4}
    if key in simple:
        return simple[key]()
    if key.startswith("bianchi"):
        return bianchi(key[len("bianchi"):].lstrip("_").upper(), **params)
    raise LieAlgebraError(f"unknown algebra {name!r}; known: {', '.join(sorted(simple))}, bianchi_<type>")
