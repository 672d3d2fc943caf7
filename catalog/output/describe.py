"""Text about an entry for ``liedyn show`` and the report: equations, realizability, first integrals,
and the reduced homogeneous quadratic system whose invariant lines ``liedyn lines`` computes.

Equations come from the system itself when it can print them (``system.equations(symbolic=True)``
for the ``servo.lie`` systems; ``system.equations()`` for Lagrangian systems); for a bare Lie-Poisson problem
they are derived here from the structure constants: m_j' = sum_{i,k} w_i C[i,j,k] m_k with
w = I^-1 m + c (the conventions of ``liegroups.algebra``).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from .. import bibliography


def _lie_poisson_equations(entry):
    g = entry.extras["algebra"]
    n = g.dim
    c = np.asarray(entry.extras.get("hamiltonian_shift", np.zeros(n)), float)
    m = sp.symbols(" ".join(entry.labels[:n]) if len(entry.labels) >= n else f"m1:{n + 1}")
    m = list(m) if isinstance(m, (tuple, list)) else [m]
    Iinv = entry.extras.get("inverse_inertia")
    Iinv = np.linalg.inv(np.asarray(entry.extras["inertia"], float)) if Iinv is None else np.asarray(Iinv, float)
    w = [sum(sp.nsimplify(round(Iinv[i, k], 12)) * m[k] for k in range(n)) + sp.nsimplify(round(c[i], 12))
         for i in range(n)]
    C = g.structure_constants
    eqs = []
    for j in range(n):
        rhs = sum(sp.nsimplify(round(C[i, j, k], 12)) * w[i] * m[k]
                  for i in range(n) for k in range(n) if C[i, j, k] != 0)
        eqs.append(sp.Eq(sp.Symbol(f"{m[j]}'"), sp.expand(rhs)))
    return eqs


def equations(entry):
    """(plain-text lines, LaTeX string) of the entry's equations of motion."""
    sysm = entry.system
    eq = None
    if hasattr(sysm, "equations"):
        try:
            eq = sysm.equations(symbolic=True) if entry.kind == "lie-group" else sysm.equations()
        except TypeError:
            eq = sysm.equations()
    if eq is None and "algebra" in entry.extras:
        eq = _lie_poisson_equations(entry)
    if eq is None:
        return list(entry.extras.get("equations_text", [])), ""
    if hasattr(eq, "latex"):
        latex = eq.latex() if callable(eq.latex) else str(eq.latex)
    elif isinstance(eq, (list, tuple)):
        latex = r" \\ ".join(sp.latex(e) for e in eq)
    else:
        latex = sp.latex(eq)
    if isinstance(eq, (list, tuple)):
        text = [sp.sstr(e) if isinstance(e, sp.Basic) else str(e) for e in eq]
    elif isinstance(eq, sp.MatrixBase):
        text = [sp.sstr(e) for e in eq]
    else:
        text = str(eq).splitlines()
    return text, latex


def references(entry):
    """The full citation of each of the entry's references (bibliography keys; free text passes through)."""
    return [bibliography.reference_text(r) for r in entry.references]


def realizability(entry):
    """The number (I^-1 a, b) for constrained Lie-group entries (None where it does not apply)."""
    sysm = entry.system
    if entry.model in ("free",) or not hasattr(sysm, "realizability"):
        return None
    try:
        v = sysm.realizability()
    except TypeError:
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return str(v)


def integrals(entry):
    """The names of the first integrals the entry claims, plus the system's own (with expressions)."""
    out = [{"name": k, "source": "catalog claim"} for k in (entry.first_integrals or {})]
    sysm = entry.system
    if hasattr(sysm, "first_integrals"):
        try:
            fi = sysm.first_integrals()
        except Exception:  # a system that cannot list them is not fatal for a description
            fi = None
        items = fi.items() if isinstance(fi, dict) else ((getattr(f, "name", str(f)), f) for f in (fi or ()))
        for k, f in items:
            expr = getattr(f, "expr", None)
            out.append({"name": str(k), "source": "system", "expr": None if expr is None else sp.sstr(expr)})
    return out


def quadratic_system(entry):
    """The homogeneous quadratic system x' = v(x) of the entry, or None.

    Free Euler-Poincare systems are already quadratic: v_j(m) = sum_{i,k} (I^-1 m)_i C[i,j,k] m_k, so
    Q[j, l, k] = sum_i (I^-1)[i, l] C[i, j, k]. Constrained systems give theirs through ``reduced()``.
    """
    from servo import QuadraticSystem

    sysm = entry.system
    if entry.model == "free" and "algebra" in entry.extras and not np.any(entry.extras.get("hamiltonian_shift", 0)):
        C = entry.extras["algebra"].structure_constants
        Iinv = np.linalg.inv(np.asarray(entry.extras["inertia"], float))
        return QuadraticSystem(np.einsum("il,ijk->jlk", Iinv, C), variables=list(entry.labels))
    if hasattr(sysm, "reduced"):
        red = sysm.reduced()
        if isinstance(red, QuadraticSystem):
            return red
        for attr in ("system", "quadratic", "qs", "q"):
            q = getattr(red, attr, None)
            if isinstance(q, QuadraticSystem):
                return q
    return None


def integrability_verdict(entry, max_degree=4, lines=None):
    """The Kovalevskaya-exponent verdict on homogeneous polynomial first integrals of degree <= ``max_degree`` of
    the entry's reduced system, or None when it has none: {"header", "rows", "text", "ruled_out", "open"}.

    A degree is "ruled out" when some Darboux point d (v(d) = -d) has exponents rho with no resonance
    m = sum k_i rho_i, k_i >= 0, 1 <= |k| <= m (the theorem of servo.quadratic.kovalevskaya, after Yoshida
    1983 and Furta 1996); otherwise "not ruled out" (the test is necessary, not sufficient, for an integral).
    One row per degree: degree, verdict, the certifying Darboux point and its exponents, the closest miss.
    """
    q = quadratic_system(entry)
    if q is None:
        return None
    ob = q.integrability_obstructions(max_degree, lines=lines)

    def fmt(z):
        z = complex(z)
        return f"{z.real:.4g}" if abs(z.imag) <= 1e-12 * max(1.0, abs(z)) else f"{z.real:.4g}{z.imag:+.4g}i"

    rows = []
    for m in range(1, max_degree + 1):
        c = ob.certificates.get(m)
        if c is None:
            rows.append([m, "not ruled out", "-", "-", "-"])
        else:
            rows.append([m, "ruled out", "(" + ", ".join(fmt(x) for x in c.darboux_point) + ")",
                         "(" + ", ".join(fmt(x) for x in c.exponents) + ")", f"{c.margin:.3g}"])
    return {"header": ["degree", "homogeneous polynomial integral", "Darboux point d", "Kovalevskaya exponents",
                       "closest miss |sum k rho - m|"],
            "rows": rows, "text": str(ob), "ruled_out": list(ob.ruled_out), "open": list(ob.open_degrees)}
