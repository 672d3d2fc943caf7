"""Symbolic helpers shared by the systems in coordinates (no system classes here, so every module of
``servo.coordinates`` can import them without a cycle).

* :func:`vectorize`: a list of sympy expressions lambdified once into a batched numpy function;
* :func:`scalar_writer`: the same expressions as one-state Python source numba compiles, f(*arrays, out);
* :func:`exact_str`: sympy's text of an expression with its floats exact (the problems' expression source);
* :func:`as_covector`: a covector given as a list / Matrix / array checked to n sympy entries;
* :func:`free_parameters`: the sympy symbols of an expression other than q, q' and t.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from ..errors import LagrangianError, SymbolicParameterError


def vectorize(exprs, args):
    """Lambdify a list of scalar sympy expressions once into f(*arrays) -> array (..., len(exprs)).

    Constants and broadcast inputs are expanded to the common batch shape, so the result always has
    shape broadcast(args) + (len(exprs),).
    """
    exprs = [sp.sympify(e) for e in exprs]
    f = sp.lambdify(args, exprs, modules="numpy", cse=True)

    m = len(exprs)

    def call(*vals):
        if all(type(v) is float or type(v) is int for v in vals):  # one state (the hot path)
            return np.array(f(*vals), dtype=float).reshape(m)
        vals = [np.asarray(v, dtype=float) for v in vals]
        shape = np.broadcast_shapes(*[v.shape for v in vals]) if vals else ()
        outs = f(*vals)
        if shape == ():
            return np.array(outs, dtype=float).reshape(m)
        out = np.empty(shape + (m,))
        for i, o in enumerate(outs):
            out[..., i] = o
        return out

    return call


def vectorize_split(exprs, groups):
    """Lambdify ``exprs`` once into f(*arrays) -> (..., len(exprs)), each array (..., len(group)) filling one
    group of symbols; the dtype of the inputs is kept (complex arrays give complex results: the implicit
    discrete schemes differentiate these functions by complex steps)."""
    exprs = [sp.sympify(e) for e in exprs]
    flat = [x for g in groups for x in g]
    f = sp.lambdify(flat, exprs, modules="numpy", cse=True)
    sizes = [len(g) for g in groups]

    def call(*arrays):
        arrays = [np.asarray(a) for a in arrays]
        shape = np.broadcast_shapes(*[a.shape[:-1] for a in arrays])
        vals = [a[..., i] for a, m in zip(arrays, sizes) for i in range(m)]
        outs = f(*vals)
        dtype = np.result_type(*arrays, float)
        out = np.empty(shape + (len(exprs),), dtype=dtype)
        for i, o in enumerate(outs):
            out[..., i] = o
        return out

    return call


def as_covector(a, n, what="covector"):
    """Turn a list / sympy Matrix / 1-d array of n entries into a list of sympy expressions.

    A scalar (a single expression where n entries were expected) raises LagrangianError naming the
    expected shape.
    """
    if isinstance(a, (sp.MatrixBase, np.ndarray)):
        a = list(np.asarray(a, dtype=object).ravel()) if isinstance(a, np.ndarray) else list(a)
    elif isinstance(a, (sp.Basic, int, float, str)) or not hasattr(a, "__iter__"):
        raise LagrangianError(f"{what} must be a sequence of n = {n} entries (a covector), "
                              f"got the scalar {a!r}")
    a = [sp.sympify(x) for x in a]
    if len(a) != n:
        raise LagrangianError(f"{what} has {len(a)} entries, the system has n = {n} coordinates")
    if all(x == 0 for x in a):
        raise LagrangianError(f"{what} is identically zero; condition a != 0 (Kozlov 2019, (1.1)) fails")
    return a


def free_parameters(exprs, allowed):
    """The free sympy symbols of ``exprs`` outside ``allowed`` (the parameters), sorted by name."""
    out = set()
    for e in exprs:
        out |= sp.sympify(e).free_symbols - set(allowed)
    return tuple(sorted(out, key=str))


def require_numeric(symbols, what, name):
    """Raise SymbolicParameterError if ``symbols`` is not empty (a numeric operation on a symbolic system)."""
    if symbols:
        names = ", ".join(str(s) for s in symbols)
        raise SymbolicParameterError(f"{what} needs numeric parameters but {name} has symbols {names}; "
                                     f"use .subs({{symbol: value, ...}}) first")


def control_rows(control, k, n, what="control"):
    """Control covectors M_nu, one per constraint, as k lists of n sympy expressions.

    Accepts one covector (k = 1: a list / Matrix / array of n entries) or a list of k of them. A scalar
    expression, or a wrong number of rows or entries, raises LagrangianError naming the expected shape
    (k covectors of n entries).
    """
    if control is None or isinstance(control, (sp.Basic, int, float, str)) or not hasattr(control, "__iter__"):
        raise LagrangianError(f"{what} must be {k} covector(s) of n = {n} entries (shape ({k}, {n}) or ({n},) "
                              f"for one constraint), got the scalar {control!r}")
    if isinstance(control, sp.MatrixBase):
        rows = [list(control)] if 1 in control.shape and k == 1 and len(control) == n else \
            [list(control.row(i)) for i in range(control.rows)]
    else:
        rows = list(control)
        if k == 1 and len(rows) == n and not any(isinstance(r, (list, tuple, sp.MatrixBase, np.ndarray))
                                                 for r in rows):
            rows = [rows]
    if len(rows) != k:
        raise LagrangianError(f"{what}: one covector per constraint needed, {len(rows)} given for k = {k} "
                              f"(expected shape ({k}, {n}))")
    return [as_covector(r, n, f"{what} covector {i}") for i, r in enumerate(rows)]


def second_kind_pieces(system, N_plain):
    """For T* = T + sum lambda_nu N_nu (servo-constraints of the second kind; Kozlov (2019), section 7):
    dN/dq' (k x n Matrix), the Hessians d^2 N_nu/dq'^2 and the vectors [N_nu] minus their acceleration
    term, (d^2 N/dq' dq) q' + d^2 N/dq' dt - dN/dq, for N_nu in plain symbols."""
    S = system
    NJ = sp.Matrix(N_plain).jacobian(S.us)
    H = [sp.hessian(x, S.us) for x in N_plain]
    dN = [sp.Matrix([sum(sp.diff(x, ui, qj) * uj for qj, uj in zip(S.qs, S.us))
                     + sp.diff(x, ui, S.t) - sp.diff(x, qi) for qi, ui in zip(S.qs, S.us)]) for x in N_plain]
    return NJ, H, dN


def subs_control(control, mapping):
    """A control (None, a Matrix, an expression or nested lists of them) with parameters substituted."""
    if control is None:
        return None
    if isinstance(control, sp.MatrixBase):
        return control.subs(mapping)
    if isinstance(control, (list, tuple)):
        return [subs_control(v, mapping) for v in control]
    return sp.sympify(control).subs(mapping) if isinstance(control, (sp.Basic, int, float)) else control


def scalar_writer(exprs, groups, name="f"):
    """A function f(a_0, ..., a_{g-1}, out) writing the sympy ``exprs`` into out[0..m-1] for ONE state: group g
    of symbols read from the 1-d array a_g (printed as a_g[i]), common subexpressions once (sympy.cse),
    numpy calls by name (numba compiles it; complex arrays give complex values: complex-step derivatives)."""
    from sympy.printing.numpy import NumPyPrinter
    subs = {x: sp.Symbol(f"a{g}[{i}]") for g, grp in enumerate(groups) for i, x in enumerate(grp)}
    exprs = [sp.sympify(e).xreplace(subs) for e in exprs]
    reps, reduced = sp.cse(exprs, symbols=sp.numbered_symbols("c_"))
    pr = NumPyPrinter({"fully_qualified_modules": True})
    args = ", ".join(f"a{g}" for g in range(len(groups)))
    lines = [f"def {name}({args}, out):"]
    lines += [f"    {s_} = {pr.doprint(e)}" for s_, e in reps]
    lines += [f"    out[{i}] = {pr.doprint(e)}" for i, e in enumerate(reduced)]
    env = {"numpy": np}
    exec(compile("\n".join(lines) + "\n", f"<liedyn scalar {name}>", "exec"), env)
    return env[name]


def exact_str(e):
    """sympy's text of the expression ``e`` (sympify reads it back) with every float by repr, so it reads back
    to the same double (sympy's own str keeps 15 digits)."""
    from sympy.printing.str import StrPrinter

    class _Exact(StrPrinter):
        def _print_Float(self, expr):
            return repr(float(expr))

    return _Exact().doprint(sp.sympify(e))
