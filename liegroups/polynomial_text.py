"""A polynomial in m1..mn written as sympy's ``str`` writes it, without building the sympy expression.

The invariant names of a problem are "casimir:<F>" with <F> the string sympy prints for a Casimir F
(integrators/core/problems.py ``casimir_names``). Building F as a sympy expression and printing it took
~0.5 s for a quartic Casimir of a 10-dimensional algebra in a random basis (~700 terms; issue 24): most
of the first build of such a system. For the coefficients the Casimir search produces (sympy Integers,
or Floats of 53 bits) this module writes the same string from the exponents directly, following sympy's
StrPrinter (sympy/printing/str.py ``_print_Add``, ``_print_Mul``, ``_print_Float``; order of terms
from ``Expr.as_ordered_terms``):

- the variables ordered by name as strings (m1 < m10 < m2 < ... : sympy's default sort key of a Symbol);
- the terms by decreasing lexicographic order of their exponents over the variables in that order;
- a term is its coefficient and its factors ``mi`` / ``mi**e`` joined by ``*``; an Integer coefficient 1
  is left out and -1 written as a leading ``-``; a Float is written with 15 significant digits, trailing
  zeros stripped (mpmath's ``to_str``, as sympy does inside a product), never left out (``1.0*m1``);
- terms joined by `` + `` / `` - ``; a leading negative term starts with ``-``.

:func:`polynomial_text` returns None for any other coefficient (a Rational, a Float of other precision, a
symbol): the caller then prints the sympy expression. The tests compare it with sympy's string.
"""

from __future__ import annotations


def _coefficient_text(c):
    """(sign, text of |c| or "" for an Integer 1) or None when c is not an Integer or a 53-bit Float."""
    if getattr(c, "is_Integer", False) or (isinstance(c, int) and not isinstance(c, bool)):
        v = int(c)
        return ("-" if v < 0 else "+"), ("" if abs(v) == 1 else str(abs(v)))
    if getattr(c, "is_Float", False) and getattr(c, "_prec", None) == 53:
        from mpmath.libmp import from_float, to_str
        v = float(c)
        return ("-" if v < 0 else "+"), to_str(from_float(abs(v)), 15, strip_zeros=True)
    return None


def polynomial_text(terms, names):
    """sympy's ``str`` of sum_e c_e prod_i names[i]**e_i, from ``terms`` {exponents: coefficient}; None when a
    coefficient is not an Integer or a 53-bit Float (see the module docstring)."""
    order = sorted(range(len(names)), key=lambda i: names[i])      # variables by name, as strings
    items = []
    for ex, c in terms.items():
        if c == 0:
            continue
        ct = _coefficient_text(c)
        if ct is None:
            return None
        items.append((tuple(ex[i] for i in order), ct))
    if not items:
        return "0"
    items.sort(reverse=True)                                        # decreasing lex order
    parts = []
    for key, (sign, coeff) in items:
        factors = [names[i] if e == 1 else f"{names[i]}**{e}" for i, e in zip(order, key) if e]
        if not factors:          # a constant term: the number itself
            coeff = coeff or "1"
        text = "*".join(([coeff] if coeff else []) + factors)
        parts.append((sign, text))
    sign, text = parts[0]
    out = ("-" if sign == "-" else "") + text
    for sign, text in parts[1:]:
        out += f" {sign} {text}"
    return out
