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
from sympy.physics.vector.printing import vlatex

from servo.lie.symbolic import exact, polynomial_text

from .. import bibliography
from ..entries.own import reader_name


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


#: Heaviside's step in printed equations, as H (sympy prints its own Heaviside as theta, which clashes with
#: an angle theta)
H = sp.Function("H")


def _indicators(expr):
    """Piecewise((f, g > 0), (0, True)) -> f H(g) with Heaviside's H: a one-sided force reads as a force
    times the step of the quantity that switches it (g < 0 gives H(-g)); other Piecewise stay.
    H(g) = 1 for g > 0 and 0 for g < 0."""
    def rewrite(pw):
        pieces = pw.args
        if len(pieces) == 2 and pieces[1].cond == sp.true and pieces[1].expr == 0:
            c = pieces[0].cond
            if isinstance(c, (sp.StrictGreaterThan, sp.GreaterThan)):
                return pieces[0].expr * H(c.lhs - c.rhs)
            if isinstance(c, (sp.StrictLessThan, sp.LessThan)):
                return pieces[0].expr * H(c.rhs - c.lhs)
        return pw
    return expr.replace(lambda x: isinstance(x, sp.Piecewise), rewrite)


def _prime_text(expr):
    """Plain text with time derivatives as primes (x'' for the second derivative of x(t)) everywhere, also
    inside function arguments (where sympy's vsprint falls back to Derivative(x, t))."""
    ders = sorted(expr.atoms(sp.Derivative), key=lambda d: -sum(n for _, n in d.variable_count))
    rules = {d: sp.Symbol(str(d.expr.func) + "'" * sum(n for _, n in d.variable_count)) for d in ders
             if isinstance(d.expr, sp.core.function.AppliedUndef)}
    e = expr.xreplace(rules)
    funcs = {f: sp.Symbol(str(f.func)) for f in e.atoms(sp.core.function.AppliedUndef)
             if f.args and all(isinstance(a, sp.Symbol) and str(a) == "t" for a in f.args)}
    return sp.sstr(e.xreplace(funcs))


def _generic_rows(eqs):
    """[(lhs, relation, rhs)] in LaTeX and in plain text for a list of sympy relations (the Lagrangian
    systems in coordinates): float data that are short decimals become exact rationals (1.0 x'' -> x''),
    time derivatives print as dots (LaTeX) or primes (text)."""
    latex, text = [], []
    for e in eqs:
        if not isinstance(e, sp.Basic):
            text.append(str(e))
            continue
        e = _indicators(exact(e))
        if isinstance(e, sp.core.relational.Relational):
            op = {"==": "=", ">=": "\\geq", "<=": "\\leq", ">": ">", "<": "<", "!=": "\\neq"}.get(e.rel_op, e.rel_op)
            latex.append((vlatex(e.lhs), op, vlatex(e.rhs)))
            text.append(f"{_prime_text(e.lhs)} {'=' if e.rel_op == '==' else e.rel_op} {_prime_text(e.rhs)}")
        else:
            latex.append((vlatex(e), "=", "0"))
            text.append(f"{_prime_text(e)} = 0")
    return latex, text


def _system_equations(entry):
    sysm = entry.system
    if not hasattr(sysm, "equations"):
        return None
    try:
        return sysm.equations(symbolic=True) if entry.kind == "lie-group" else sysm.equations()
    except TypeError:
        return sysm.equations()


def equation_rows(entry):
    """[(lhs, relation, rhs)] in LaTeX, one per equation (the report draws each row with mathtext), and
    the model in vector notation (LaTeX, '' when unknown)."""
    eq = _system_equations(entry)
    if eq is not None and hasattr(eq, "rows"):
        return [(lhs, "=", rhs) for lhs, rhs in eq.rows("latex")], getattr(eq, "model_latex", "")
    if eq is None and "algebra" in entry.extras:
        eq = _lie_poisson_equations(entry)
    if eq is None:
        return [], ""
    eqs = list(eq) if isinstance(eq, (list, tuple, sp.MatrixBase)) else [eq]
    return _generic_rows(eqs)[0], ""


def model_text(entry):
    """The model in vector notation, one line of unicode ('' when the system does not say)."""
    eq = _system_equations(entry)
    return getattr(eq, "model_text", "") or ""


def equations(entry):
    """(plain-text lines, LaTeX ``align`` block) of the entry's equations of motion.

    Lie-group systems print through :class:`servo.lie.symbolic.Equations` (basis names, exact
    rationals, unicode text); Lagrangian systems as their sympy relations with exact rationals,
    derivatives as primes (text) and dots (LaTeX).
    """
    eq = _system_equations(entry)
    if eq is not None and hasattr(eq, "rows"):
        return str(eq).splitlines(), eq.latex()
    if eq is None and "algebra" in entry.extras:
        eq = _lie_poisson_equations(entry)
    if eq is None:
        return list(entry.extras.get("equations_text", [])), ""
    eqs = list(eq) if isinstance(eq, (list, tuple, sp.MatrixBase)) else [eq]
    rows, text = _generic_rows(eqs)
    body = " \\\\\n".join(f"{lhs} &{op} {rhs}" for lhs, op, rhs in rows)
    latex = f"\\begin{{align}}\n{body}\n\\end{{align}}" if rows else ""
    return text, latex


def references(entry):
    """The full citation of each of the entry's references (bibliography keys; free text passes through)."""
    return [bibliography.reference_text(r) for r in entry.references]


def realizability_verdict(entry):
    """What the report and ``liedyn show`` say about realizability, or None where it does not apply.

    A dict with ``expr`` (the quantity: (I^-1 a, b) for a Lie-group system with one constraint,
    det(A I^-1 B^T) with several, det (A^-1 M, dphi/dq') in coordinates), ``formula`` (its value or
    expression as text: the exact rational and its decimal value when the data are rational, "2138/2709 ≈
    0.789221114803"), ``value`` (a number: the constant, or the expression at the entry's initial state;
    None when it cannot be evaluated), ``realizable`` (value != 0) and ``where`` ("everywhere" for a
    constant, "at the initial state" for an expression); constants also carry ``exact`` (the rational as
    text, or None).
    """
    sysm = entry.system
    r = _raw_realizability(entry)
    if r is None:
        return None
    lie = entry.kind == "lie-group"
    expr = getattr(sysm, "realizability_label", "(I^-1 a, b)") if lie else "det (A^-1 M, dphi/dq')"
    try:
        v = float(r)
    except (TypeError, ValueError):
        pass
    else:
        q = realizability_exact(entry)
        formula = f"{v:.12g}" if q is None else (str(q) if q.q == 1 else f"{q} \u2248 {v:.12g}")
        return {"expr": expr, "formula": formula, "value": v, "exact": None if q is None else str(q),
                "realizable": v != 0.0, "where": "everywhere"}
    S = getattr(sysm, "system", None)
    r = exact(sp.sympify(r))
    formula = _prime_text(r)
    value = None
    init = entry.initial_state
    if S is not None and hasattr(S, "plain") and isinstance(init, dict) and "q0" in init and "qd0" in init:
        plain = S.plain(r)
        subs = {**dict(zip(S.qs, init["q0"])), **dict(zip(S.us, init["qd0"]))}
        try:
            value = float(plain.subs(subs))
        except (TypeError, ValueError):
            value = None
    return {"expr": expr, "formula": formula, "value": value,
            "realizable": None if value is None else value != 0.0, "where": "at the initial state"}


def realizability_line(entry):
    """One line of text: 'realizability (I^-1 a, b) = 2138/2709 ≈ 0.789221114803  (realizable)', or None."""
    v = realizability_verdict(entry)
    if v is None:
        return None
    if v["where"] == "everywhere":
        return f"realizability {v['expr']} = {v['formula']}  ({'realizable' if v['realizable'] else 'NOT realizable'})"
    at = "" if v["value"] is None else (f" = {v['value']:.6g} at the initial state ("
                                         + ("realizable there" if v["realizable"] else "NOT realizable there") + ")")
    return f"realizability {v['expr']} = {v['formula']}{at}; realizable wherever it is non-zero"


def expression_text(expr, style="unicode"):
    """A first integral's expression with exact rationals, as a polynomial in its symbols (unicode or
    LaTeX); sympy's string for anything that is not a polynomial."""
    expr = exact(sp.sympify(expr))
    syms = sorted(expr.free_symbols, key=str)
    try:
        return polynomial_text(expr, syms, [str(x) for x in syms], style)
    except sp.PolynomialError:
        return sp.latex(expr) if style == "latex" else sp.sstr(expr)


def _raw_realizability(entry):
    """What the system's ``realizability()`` returns, or None where it does not apply."""
    sysm = entry.system
    if entry.model in ("free",) or not hasattr(sysm, "realizability"):
        return None
    try:
        return sysm.realizability()
    except TypeError:
        return None


def realizability_exact(entry):
    """The realizability of a Lie-group entry as an exact rational (``system.realizability_exact()``:
    det(A I^-1 B^T) in exact arithmetic) when its data are rational, else None."""
    sysm = entry.system
    if entry.kind != "lie-group" or entry.model == "free" or not hasattr(sysm, "realizability_exact"):
        return None
    return sysm.realizability_exact()


def realizability(entry):
    """The number (I^-1 a, b) (det(A I^-1 B^T) for several constraints) for constrained Lie-group entries, a
    float (None where it does not apply; see :func:`realizability_exact` for the rational)."""
    v = _raw_realizability(entry)
    if v is None:
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
        items = fi.items() if isinstance(fi, dict) else (
            (reader_name(f, formula=False) if hasattr(f, "name") else str(f), f) for f in (fi or ()))
        for k, f in items:
            expr = getattr(f, "expr", None)
            out.append({"name": str(k), "source": "system", "expr": None if expr is None else expression_text(expr),
                        "latex": None if expr is None else expression_text(expr, "latex")})
    return out


_GREEK = {"lambda": "\\lambda", "Gamma": "\\Gamma", "sum": "\\sum"}


def integral_title(name):
    """(LaTeX, text) of a first integral's name as ``servo`` spells it: 'casimir:m1**2 + m2**2 + m3**2(m + lambda b)'
    -> F(m + λ b) with F = m1² + m2² + m3² ('Casimir F(m + \\lambda b)' in LaTeX), 'linear:1' -> 'linear
    integral 1', 'energy' -> 'energy'."""
    import re

    kind, _, rest = str(name).partition(":")
    if not rest:
        return f"\\mathrm{{{kind}}}", kind
    arg = ""
    mo = re.search(r"\((m [^()]*)\)$", rest)
    if mo:
        arg, rest = mo.group(1), rest[:mo.start()]
    if kind == "casimir":
        try:
            F = sp.sympify(rest)
        except (sp.SympifyError, TypeError, SyntaxError):
            return f"\\mathrm{{Casimir}}", name
        if arg:
            ftex = expression_text(F, "latex")
            atex = re.sub(r"\b(lambda|Gamma|sum)", lambda w: _GREEK[w.group(1)], arg)
            text_arg = arg.replace("lambda", "\u03bb").replace("sum", "\u03a3")
            return (f"\\mathrm{{Casimir}}\\ F({atex}),\\ F = {ftex},\\ F({atex})",
                    f"Casimir F({text_arg}), F = {expression_text(F)}")
        return "\\mathrm{Casimir}", f"Casimir {expression_text(F)}"
    return f"\\mathrm{{{kind}\\ integral\\ {rest}}}", f"{kind} integral {rest}"


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
