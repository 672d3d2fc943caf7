"""Printing of polynomials in the unknowns of the mechanics, as a mechanician writes them.

Numbers of the data that are exactly a short decimal or a fraction p/q with q <= 1000 become exact
rationals (:func:`exact_number`: 0.2 -> 1/5, 1/3.0 -> 1/3), factors print by their names in LaTeX
(``\\omega_{1}``, ``\\dot{\\omega}_{1}``) or unicode (``ω₁``, ``ω̇₁``), and terms come in graded
lexicographic order of the generators (:func:`polynomial_text`). Used by :mod:`servo.lie.symbolic`
and by the notebook displays.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import sympy as sp
from sympy.polys.orderings import grlex

__all__ = ["exact_number", "exact", "polynomial_text", "symbol_text", "MAX_DENOMINATOR", "MAX_DECIMAL_DIGITS"]

#: largest denominator of a fraction p/q accepted as the exact value of a float datum
MAX_DENOMINATOR = 1000
#: a float datum whose shortest decimal has at most this many significant digits is taken as that decimal
MAX_DECIMAL_DIGITS = 8

_SUB = str.maketrans("0123456789+-=()aehijklmnoprstuvx",
                     "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ")
_SUP = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
_GREEK = {n: sp.pretty(sp.Symbol(n), use_unicode=True) for n in (
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "kappa", "lambda", "mu", "nu", "xi",
    "pi", "rho", "sigma", "tau", "phi", "chi", "psi", "omega", "Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi",
    "Sigma", "Phi", "Psi", "Omega")}


# ----------------------------------------------------------------------------- exact numbers
def exact_number(x: float | sp.Basic) -> sp.Basic | float:
    """The exact rational of a float datum when there is one, else ``x`` unchanged.

    A float is taken as exact p/q when its shortest decimal representation has at most
    ``MAX_DECIMAL_DIGITS`` significant digits (0.2 -> 1/5, 0.35 -> 7/20), or when p/q with q <= 1000
    rounds to exactly the same double (1/3.0 -> 1/3, 1/3.5 -> 2/7). Integers stay integers.
    """
    if isinstance(x, sp.Float) or isinstance(x, float):
        f = float(x)
        if f != f or f in (float("inf"), float("-inf")):
            return x
        if f.is_integer():
            return sp.Integer(int(f))
        digits = repr(f).lower().split("e")[0].replace("-", "").replace(".", "").strip("0")
        if len(digits) <= MAX_DECIMAL_DIGITS:
            return sp.Rational(repr(f))
        fr = Fraction(f).limit_denominator(MAX_DENOMINATOR)
        if fr.numerator / fr.denominator == f:
            return sp.Rational(fr.numerator, fr.denominator)
        return sp.Float(f)
    return x


def exact(obj: sp.Basic | sp.MatrixBase | float | int | None) -> sp.Basic | sp.MatrixBase | None:
    """``obj`` (a sympy expression or Matrix) with every Float replaced by :func:`exact_number`."""
    if obj is None:
        return None
    if isinstance(obj, (float, int)):
        return exact_number(sp.Float(obj)) if isinstance(obj, float) else sp.Integer(obj)
    floats = {f: exact_number(f) for f in obj.atoms(sp.Float)}
    return obj.xreplace(floats) if floats else obj


# ----------------------------------------------------------------------------- printing
def _split_name(name):
    base, _, sub = name.partition("_")
    return base, sub


def symbol_text(name: str, style: str = "latex", dot: bool = False, power: int = 1) -> str:
    """One factor: ``omega_1`` as ``\\omega_{1}`` / ``ω₁``; ``dot`` adds a time derivative; ``power`` > 1
    an exponent."""
    base, sub = _split_name(name)
    if style == "latex":
        b = sp.latex(sp.Symbol(base))
        s = f"\\dot{{{b}}}" if dot else b
        if sub:
            s += f"_{{{sp.latex(sp.Symbol(sub)) if sub.isalpha() and len(sub) > 1 else sub}}}"
        return s + (f"^{{{power}}}" if power != 1 else "")
    b = _GREEK.get(base, base)
    s = b + ("\u0307" if dot else "")
    if sub:
        t = sub.translate(_SUB)
        s += t if all(ch not in "abcdefghijklmnopqrstuvwxyz0123456789" for ch in t) else "_" + _GREEK.get(sub, sub)
    return s + (str(power).translate(_SUP) if power != 1 else "")


def _coefficient_text(c, style):
    """(negative, text) of a coefficient; text is '' for 1."""
    if c.is_Number:
        neg = bool(c < 0)
        mag = -c if neg else c
        if mag == 1:
            return neg, ""
        if isinstance(mag, sp.Float):
            return neg, f"{float(mag):.10g}"
        if style == "latex":
            return neg, sp.latex(mag)
        return neg, (f"({mag})" if isinstance(mag, sp.Rational) and mag.q != 1 else str(mag))
    c = sp.expand(c)
    args = sp.Add.make_args(c)
    neg = all(a.could_extract_minus_sign() for a in args)
    mag = sp.expand(-c) if neg else c
    if isinstance(mag, sp.Add):
        # a sum: the positive terms first, so -I1 + I3 prints as (I3 - I1) as in the textbooks
        parts = sorted(sp.Add.make_args(mag), key=lambda a: a.could_extract_minus_sign())
        inner = []
        for a in parts:
            n = a.could_extract_minus_sign()
            t = sp.latex(-a if n else a) if style == "latex" else _plain(-a if n else a)
            inner.append((n, t, ""))
        txt = _join(inner, style)
        return neg, (f"\\left({txt}\\right)" if style == "latex" else f"({txt})")
    return neg, (sp.latex(mag) if style == "latex" else _plain(mag))


def _plain(x):
    txt = sp.pretty(x, use_unicode=True)
    return sp.sstr(x) if "\n" in txt else txt


def _join(terms, style):
    """Join (negative, coefficient text, monomial text) terms into a signed sum ('0' when empty)."""
    if not terms:
        return "0"
    out = []
    for k, (neg, ctext, mtext) in enumerate(terms):
        body = " ".join(x for x in (ctext, mtext) if x) or "1"
        if k == 0:
            out.append("- " + body if neg else body)
        else:
            out.append((" - " if neg else " + ") + body)
    return "".join(out)


def polynomial_text(expr: sp.Expr, gens: Sequence[sp.Symbol], names: Sequence[str], style: str = "latex",
                    dots: Sequence[bool] | None = None) -> str:
    """A polynomial in ``gens`` printed term by term: coefficients exact (``\\frac{1}{5}``), factors by
    their ``names`` (``\\omega_{1}``), terms in graded lexicographic order of ``gens`` (highest first).

    ``dots[i]`` marks gens[i] as a time derivative. ``style`` is "latex" or "unicode".
    """
    expr = sp.expand(expr)
    if expr == 0:
        return "0"
    dots = dots or [False] * len(gens)
    poly = sp.Poly(expr, *gens)
    terms = []
    # the order object, not the string "grlex": with python-flint installed sympy's flint-backed polynomials
    # read order.alias and fail on a string (AttributeError: 'str' object has no attribute 'alias')
    for monom, c in poly.terms(order=grlex):
        factors = [symbol_text(names[i], style, dots[i], p) for i, p in enumerate(monom) if p]
        if not factors:
            neg, ctext = _coefficient_text(c, style)
            if ctext == "":
                ctext = "1"
            terms.append((neg, ctext, ""))
            continue
        neg, ctext = _coefficient_text(c, style)
        terms.append((neg, ctext, " ".join(factors)))
    return _join(terms, style)
