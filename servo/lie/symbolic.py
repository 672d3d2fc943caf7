"""Symbolic equations of motion of the Lie-group systems, printed as a mechanician writes them.

For T = (I w, w)/2 on g with (ad*_w m)_j = sum_{i,k} w_i C[i,j,k] m_k (Kozlov's lectures on
servo-constraints, "Systems on Lie groups", "Servo-constraints of the second kind", "Rigid body with a
left-invariant servo-constraint"; Kozlov (2019), sections 6-7):

* free:          (I w)' = ad*_w (I w)                         (or m' = ad*_{K m + c} m when only K is given)
* first kind:    (I w)' = ad*_w (I w) + lambda b,  (a, w) = 0
* second kind:   (I w + lambda b)' = ad*_w (I w + lambda b),  (a, w) = 0

Printing. The unknowns are named after the algebra's basis (:func:`velocity_names`): omega_1..omega_n
on so(3) and the other algebras with numbered bases, (u, v, omega) on se(2), (omega_1..3, v_1..3) on
se(3), omega_<name> otherwise; momenta m_i, on se(3) (M_i, Gamma_i). Numbers of the data that are
exactly a short decimal or a fraction p/q with q <= 1000 (e.g. 0.2, 1/3 given as 1/3.0) become exact
rationals (:func:`exact_number`), so 0.2 prints as 1/5 and the inverse of 3 as 1/3, not 0.333333.
Each equation is printed with the time derivatives on the left, in the order of the unknowns, and the
remaining terms on the right, by total degree and then lexicographically in the order of the unknowns
(omega_1 > omega_2 > ... > lambda). :meth:`Equations.latex` is an ``align`` block (``\\dot{\\omega}_{1}``),
``str()`` is one line of unicode per equation (``3 ω̇₁ + (1/5) ω̇₂ = ...``), never ``Derivative(...)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import sympy as sp

from .symbols import coad_sym
from .printing import MAX_DECIMAL_DIGITS, MAX_DENOMINATOR, exact, exact_number, polynomial_text, symbol_text  # noqa: F401

__all__ = ["Equations", "free_equations", "first_kind_equations", "second_kind_equations", "omega_functions", "velocity_names", "momentum_names",
           "exact_number", "exact", "polynomial_text", "symbol_text"]

# ----------------------------------------------------------------------------- names


def dynamicsymbols(*args, **kwargs):
    """sympy's ``dynamicsymbols`` (functions of t), imported on first use: ``sympy.physics`` costs ~0.1 s of CPU
    at import, which every ``servo.lie`` system paid before its first symbolic equation (issue 24)."""
    from sympy.physics.mechanics import dynamicsymbols as ds
    return ds(*args, **kwargs)


def _time_symbol():
    """The time symbol t of ``dynamicsymbols``."""
    from sympy.physics.mechanics import dynamicsymbols as ds
    return ds._t


def _numbered(basis):
    """'e1' -> '1', 'L12' -> '12', 's3' -> '3'; None when the name is not letters followed by digits."""
    head = basis.rstrip("0123456789")
    tail = basis[len(head):]
    return tail if tail and head.isalpha() and len(head) <= 2 else None


def velocity_names(algebra) -> list[str]:
    """Names of the velocity components w_i in the algebra's basis (sympy names: ``omega_1``, ``u``).

    so(3) and numbered bases e1..en: omega_1..omega_n; se(2) (u, v, w): u, v, omega; se(3)
    (R1..R3, T1..T3): omega_1..omega_3, v_1..v_3; any other basis name x: omega_x.
    """
    kind = getattr(algebra, "closed_form", None) or getattr(algebra, "_closed_form", None)
    basis = tuple(algebra.basis or (f"e{i + 1}" for i in range(algebra.dim)))
    if kind == "se2":
        return ["u", "v", "omega"]
    if kind == "se3":
        return [f"omega_{i}" for i in (1, 2, 3)] + [f"v_{i}" for i in (1, 2, 3)]
    out = []
    for b in basis:
        sub = _numbered(b)
        out.append(f"omega_{sub if sub is not None else b}")
    if len(set(out)) != len(out):
        out = [f"omega_{i + 1}" for i in range(algebra.dim)]
    return out


def momentum_names(algebra) -> list[str]:
    """Names of the momenta m_i in g*: m_1..m_n; on se(3) (M_1..M_3, Gamma_1..Gamma_3) as for the heavy
    top; on se(2) (p_u, p_v, p_omega)."""
    kind = getattr(algebra, "closed_form", None) or getattr(algebra, "_closed_form", None)
    if kind == "se3":
        return [f"M_{i}" for i in (1, 2, 3)] + [f"Gamma_{i}" for i in (1, 2, 3)]
    if kind == "se2":
        return ["p_u", "p_v", "p_omega"]
    return [v.replace("omega", "m", 1) if v.startswith("omega") else f"m_{v}" for v in velocity_names(algebra)]


def omega_functions(n, names=None):
    """(t, (w_1(t), ..., w_n(t)), lambda(t)) as sympy dynamicsymbols (names default omega_1..omega_n)."""
    names = names or [f"omega_{i + 1}" for i in range(n)]
    return _time_symbol(), tuple(dynamicsymbols(nm) for nm in names), dynamicsymbols("lambda")


class Equations:
    """A list of sympy equations ``lhs = rhs`` in the unknown functions of time, printable for a paper.

    Attributes
    ----------
    eqs : list of sympy.Eq        the dynamic equations, then the constraint (if any)
    exprs : list of sympy.Expr    lhs - rhs for each equation (each must vanish)
    omega : tuple                  the unknown velocities w_i(t) (momenta m_i(t) for a system given by K)
    lam : sympy function, a tuple of them (several constraints) or None   lambda(t)
    t : sympy.Symbol
    constraint : sympy.Eq, a list of them (several constraints) or None   (a, w) = 0
    title : str                    the system's name and its equations in words
    model_latex : str              the model in vector notation (LaTeX), e.g. I \\dot\\omega = ...
    model_text : str               the same in unicode

    ``str(eq)`` gives one unicode line per equation, ``eq.latex()`` an ``align`` block,
    ``eq.latex(form="matrix")`` the matrix form A x' = f(x) with the constraint beside it.
    """

    def __init__(self, eqs: Iterable[sp.Equality], t: sp.Symbol, omega: Sequence[sp.Expr],
                 lam: sp.Expr | tuple[sp.Expr, ...] | None, constraint: sp.Equality | Sequence[sp.Equality] | None = None,
                 title: str = "", model_latex: str = "", model_text: str = "") -> None:
        self.eqs = list(eqs)
        self.t = t
        self.omega = tuple(omega)
        self.lam = lam
        self.constraint = constraint
        self._constraints = (list(constraint) if isinstance(constraint, (list, tuple))
                             else [] if constraint is None else [constraint])
        self.title = title
        self.model_latex = model_latex
        self.model_text = model_text

    @property
    def exprs(self) -> list[sp.Expr]:
        """lhs - rhs of each equation, expanded (each vanishes along a motion)."""
        return [sp.expand(e.lhs - e.rhs) for e in self.eqs]

    @property
    def unknowns(self) -> tuple[sp.Expr, ...]:
        """The unknown functions: the velocities (or momenta) and lambda(t) (or lambda_1..k) when present."""
        if isinstance(self.lam, tuple):
            return self.omega + self.lam
        return self.omega + ((self.lam,) if self.lam is not None else ())

    def __iter__(self):
        return iter(self.eqs)

    def __len__(self):
        return len(self.eqs)

    def __getitem__(self, k):
        return self.eqs[k]

    # ------------------------------------------------------------------ printing
    def _gens(self):
        """Plain symbols standing for the derivatives and the unknowns, their names and derivative flags."""
        u = self.unknowns
        names = [str(f.func) for f in u]
        dsyms = [sp.Dummy(f"d{nm}") for nm in names]
        fsyms = [sp.Dummy(nm) for nm in names]
        return u, names, dsyms, fsyms

    def _split(self, expr, u, dsyms, fsyms):
        """expr = sum(derivative terms) - (rest): (left polynomial, right polynomial) in the dummies."""
        rules = {f.diff(self.t): d for f, d in zip(u, dsyms)}
        e = sp.expand(sp.expand(expr).xreplace(rules).xreplace(dict(zip(u, fsyms))))
        if e.has(sp.Derivative):
            raise ValueError(f"equation {expr} has derivatives of order > 1 of {', '.join(map(str, u))}")
        left = sum((t for t in sp.Add.make_args(e) if t.free_symbols & set(dsyms)), sp.Integer(0))
        return left, sp.expand(left - e)

    def rows(self, style: str = "latex") -> list[tuple[str, str]]:
        """[(left, right)] as text: time derivatives on the left, the other terms on the right; the
        constraint last as (a, w) = 0."""
        u, names, dsyms, fsyms = self._gens()
        gens = dsyms + fsyms
        allnames = names + names
        dots = [True] * len(names) + [False] * len(names)
        out = []
        for e in self.eqs:
            expr = e.lhs - e.rhs
            if any(e is c or e == c for c in self._constraints):
                _, rhs = self._split(expr, u, dsyms, fsyms)
                out.append((polynomial_text(-rhs, gens, allnames, style, dots), "0"))
                continue
            left, right = self._split(expr, u, dsyms, fsyms)
            out.append((polynomial_text(left, gens, allnames, style, dots),
                        polynomial_text(right, gens, allnames, style, dots)))
        return out

    def __str__(self):
        return "\n".join(f"{lhs} = {rhs}" for lhs, rhs in self.rows("unicode"))

    def __repr__(self):
        return f"<Equations {self.title}: {len(self.eqs)} equations>\n{self}"

    def latex(self, env: str = "align", form: str = "components") -> str:
        """The equations as LaTeX for a paper.

        ``env="align"`` (default) gives ``\\begin{align} ... \\end{align}``, ``"aligned"`` the inner block
        for ``$$ ... $$`` (notebooks, MathJax). ``form="components"``: one row per component, time
        derivatives on the left (``3 \\dot{\\omega}_{1} + \\frac{1}{5} \\dot{\\omega}_{2} + ... &= ...``), the
        constraint as the last row. ``form="matrix"``: A x' = f(x) with the coefficient matrix A of the
        derivatives, then the constraint.
        """
        if env not in ("align", "aligned", "align*"):
            raise ValueError(f"env must be 'align', 'align*' or 'aligned', got {env!r}")
        if form == "components":
            body = " \\\\\n".join(f"{lhs} &= {rhs}" for lhs, rhs in self.rows("latex"))
        elif form == "matrix":
            body = self._matrix_latex()
        else:
            raise ValueError(f"form must be 'components' or 'matrix', got {form!r}")
        return f"\\begin{{{env}}}\n{body}\n\\end{{{env}}}"

    def _matrix_latex(self):
        u, names, dsyms, fsyms = self._gens()
        gens = dsyms + fsyms
        allnames = names + names
        dots = [True] * len(names) + [False] * len(names)
        dyn = [e for e in self.eqs if not any(e == c for c in self._constraints)]
        A, rhs = [], []
        for e in dyn:
            left, right = self._split(e.lhs - e.rhs, u, dsyms, fsyms)
            A.append([sp.expand(left).coeff(d) for d in dsyms])
            rhs.append(polynomial_text(right, gens, allnames, "latex", dots))
        used = [j for j in range(len(dsyms)) if any(row[j] != 0 for row in A)]
        mat = " \\\\ ".join(" & ".join(sp.latex(row[j]) for j in used) for row in A)
        vec = " \\\\ ".join(symbol_text(names[j], "latex", True) for j in used)
        f = " \\\\ ".join(rhs)
        out = (f"\\begin{{pmatrix}} {mat} \\end{{pmatrix}} \\begin{{pmatrix}} {vec} \\end{{pmatrix}} "
               f"&= \\begin{{pmatrix}} {f} \\end{{pmatrix}}")
        for lhs, _ in [r for e, r in zip(self.eqs, self.rows("latex")) if any(e == c for c in self._constraints)]:
            out += f" \\\\\n{lhs} &= 0"
        return out

    def pretty(self) -> str:
        """sympy's two-dimensional pretty print of each equation (derivatives as dots)."""
        from sympy.physics.vector.printing import vpprint  # noqa: F401  (registers the dot printer)
        from sympy.physics.vector.printing import VectorPrettyPrinter

        pp = VectorPrettyPrinter({"use_unicode": True})
        return "\n\n".join(pp.doprint(e) for e in self.eqs)

    def heading_latex(self) -> str:
        """The heading of the notebook display: the system's name and its model in math,
        ``\\text{ServoFirstKind on so(3):}\\quad I \\dot{\\omega} = ...`` ("" without a title)."""
        if not self.title:
            return ""
        name = self.title.split(": ", 1)[0]
        if self.model_latex:
            return f"\\text{{{name}:}}\\quad {self.model_latex}"
        return f"\\text{{{self.title}}}"

    def _repr_latex_(self):
        """Display math for Jupyter: the heading (:meth:`heading_latex`) centred above the ``aligned``
        block, in a ``gathered`` environment. The heading is not a row of the aligned block: there its text
        took the whole left column and the equations began right of its width (a block scrolling sideways)."""
        block = self.latex(env="aligned")
        head = self.heading_latex()
        if not head:
            return f"$${block}$$"
        return f"$$\\begin{{gathered}}\n{head} \\\\[6pt]\n{block}\n\\end{{gathered}}$$"

    def evalf(self) -> Equations:
        """The same equations with numeric coefficients as floats."""
        cons = [sp.Eq(sp.N(c.lhs), 0) for c in self._constraints]
        eqs = [sp.Eq(sp.N(e.lhs), sp.N(e.rhs)) for e in self.eqs[:len(self.eqs) - len(cons)]] + cons
        constraint = None if not cons else (cons if isinstance(self.constraint, (list, tuple)) else cons[0])
        return Equations(eqs, self.t, self.omega, self.lam, constraint, self.title, self.model_latex,
                         self.model_text)

    def on_constraint(self) -> Equations:
        """Eliminate one velocity with the constraint (a, w) = 0 (solved for the w_k with the last
        numeric non-zero a_k, or the last non-zero one); returns the dynamic equations only."""
        if self.constraint is None:
            return self
        if len(self._constraints) > 1:
            raise NotImplementedError("on_constraint() eliminates one velocity; with several constraints "
                                      "reduced() gives the equations on the constraint subspace")
        a = [sp.expand(self.constraint.lhs).coeff(w) for w in self.omega]
        cand = [k for k, ak in enumerate(a) if ak != 0]
        num = [k for k in cand if not getattr(a[k], "free_symbols", set())]
        k = (num or cand)[-1]
        sol = sp.solve(self.constraint.lhs, self.omega[k], dict=True)[0][self.omega[k]]
        rules = {sp.Derivative(self.omega[k], self.t): sp.diff(sol, self.t), self.omega[k]: sol}
        eqs = [sp.Eq(sp.expand(e.lhs.subs(rules)), sp.expand(e.rhs.subs(rules))) for e in self.eqs[:-1]]
        return Equations(eqs, self.t, tuple(w for i, w in enumerate(self.omega) if i != k), self.lam, None,
                         self.title + f" on the constraint ({self.omega[k].func} eliminated)", self.model_latex,
                         self.model_text)


MODEL_LATEX = {
    "free": r"I \dot{\omega} = \operatorname{ad}^*_{\omega} (I \omega)",
    "free_K": r"\dot{m} = \operatorname{ad}^*_{\omega} m, \quad \omega = K m + c",
    "servo1": r"I \dot{\omega} = \operatorname{ad}^*_{\omega} (I \omega) + \lambda b, \quad (a, \omega) = 0",
    "servo2": (r"\frac{d}{dt}(I \omega + \lambda b) = \operatorname{ad}^*_{\omega} (I \omega + \lambda b), "
               r"\quad (a, \omega) = 0"),
    "nonholonomic": r"I \dot{\omega} = \operatorname{ad}^*_{\omega} (I \omega) + \lambda a, \quad (a, \omega) = 0",
    "vakonomic": (r"\frac{d}{dt}(I \omega + \lambda a) = \operatorname{ad}^*_{\omega} (I \omega + \lambda a), "
                  r"\quad (a, \omega) = 0"),
    "servo1_k": (r"I \dot{\omega} = \operatorname{ad}^*_{\omega} (I \omega) + \sum_i \lambda_i b_i, "
                 r"\quad (a_i, \omega) = 0"),
    "servo2_k": (r"\frac{d}{dt}(I \omega + \sum_i \lambda_i b_i) = \operatorname{ad}^*_{\omega} "
                 r"(I \omega + \sum_i \lambda_i b_i), \quad (a_i, \omega) = 0"),
}


#: the same in one line of unicode
MODEL_TEXT = {
    "free": "I ω̇ = ad*_ω (I ω)",
    "free_K": "ṁ = ad*_ω m, ω = K m + c",
    "servo1": "I ω̇ = ad*_ω (I ω) + λ b, (a, ω) = 0",
    "servo2": "(I ω + λ b)˙ = ad*_ω (I ω + λ b), (a, ω) = 0",
    "nonholonomic": "I ω̇ = ad*_ω (I ω) + λ a, (a, ω) = 0",
    "vakonomic": "(I ω + λ a)˙ = ad*_ω (I ω + λ a), (a, ω) = 0",
    "servo1_k": "I ω̇ = ad*_ω (I ω) + Σ λ_i b_i, (a_i, ω) = 0",
    "servo2_k": "(I ω + Σ λ_i b_i)˙ = ad*_ω (I ω + Σ λ_i b_i), (a_i, ω) = 0",
}


def free_equations(system) -> Equations:
    """The free Euler-Poincare equations (I w)' = ad*_w (I w), or m' = ad*_w m, w = K m + c for a system
    given by K. Float data that are exactly short decimals or small fractions become rationals first
    (:func:`exact_number`), so the printed coefficients are exact."""
    n, alg = system.n, system.algebra
    if system.I_sym is None:
        t = _time_symbol()
        m = sp.Matrix([dynamicsymbols(nm) for nm in momentum_names(alg)])
        vel = exact(system.Iinv_sym) * m + exact(system.c_sym)
        rhs = coad_sym(alg, vel, m)
        eqs = [sp.Eq(sp.diff(m[j], t), sp.expand(rhs[j])) for j in range(n)]
        return Equations(eqs, t, tuple(m), None, None, f"{system.name}: m' = ad*_w m, w = K m + c",
                         MODEL_LATEX["free_K"], MODEL_TEXT["free_K"])
    t, om, _ = omega_functions(n, velocity_names(alg))
    w = sp.Matrix(om)
    mom = exact(system.I_sym) * (w - exact(system.c_sym))
    rhs = coad_sym(alg, w, mom)
    eqs = [sp.Eq(sp.expand(sp.diff(mom[j], t)), sp.expand(rhs[j])) for j in range(n)]
    return Equations(eqs, t, om, None, None, f"{system.name}: (I w)' = ad*_w (I w)", MODEL_LATEX["free"],
                     MODEL_TEXT["free"])


def first_kind_equations(system, model="servo1") -> Equations:
    """(I w)' = ad*_w (I w) + lambda b, (a, w) = 0 (``model`` "servo1" or "nonholonomic" chooses the printed
    vector form); several constraints: + sum_i lambda_i b_i, (a_i, w) = 0."""
    return _constrained(system, first=True, model=model)


def second_kind_equations(system, model="servo2") -> Equations:
    """(I w + lambda b)' = ad*_w (I w + lambda b), (a, w) = 0 (``model`` "servo2" or "vakonomic");
    several constraints: I w + sum_i lambda_i b_i."""
    return _constrained(system, first=False, model=model)


def _constrained(system, first, model):
    n, alg = system.n, system.algebra
    t, om, lam = omega_functions(n, velocity_names(alg))
    w = sp.Matrix(om)
    I = exact(system.I_sym)
    if system.k > 1:
        return _several_constraints(system, t, om, w, I, first)
    a, b = exact(system.a_sym), exact(system.b_sym)
    constraint = sp.Eq(sp.expand((a.T * w)[0, 0]), 0)
    mom = I * w
    if first:
        rhs = coad_sym(alg, w, mom) + lam * b
        eqs = [sp.Eq(sp.expand(sp.diff(mom[j], t)), sp.expand(rhs[j])) for j in range(n)]
        title = f"{system.name}: (I w)' = ad*_w (I w) + lambda b, (a, w) = 0"
    else:
        z = mom + lam * b
        rhs = coad_sym(alg, w, z)
        eqs = [sp.Eq(sp.expand(sp.diff(z[j], t)), sp.expand(rhs[j])) for j in range(n)]
        title = f"{system.name}: (I w + lambda b)' = ad*_w (I w + lambda b), (a, w) = 0"
    return Equations(eqs + [constraint], t, om, lam, constraint, title, MODEL_LATEX[model], MODEL_TEXT[model])


def _several_constraints(system, t, om, w, I, first):
    """k constraints A w = 0 with controls B: the first kind (I w)' = ad*_w (I w) + B^T lambda, the second
    kind (I w + B^T lambda)' = ad*_w (I w + B^T lambda), lambda = (lambda_1(t), ..., lambda_k(t))."""
    n, k, alg = system.n, system.k, system.algebra
    lams = tuple(dynamicsymbols(f"lambda_{i + 1}") for i in range(k))
    L = sp.Matrix(lams)
    A, B = exact(system.A_sym), exact(system.B_sym)
    constraints = [sp.Eq(sp.expand((A[:, i].T * w)[0, 0]), 0) for i in range(k)]
    mom = I * w
    if first:
        lhs, rhs, model = mom, coad_sym(alg, w, mom) + B * L, "servo1_k"
        title = f"{system.name}: (I w)' = ad*_w (I w) + sum_i lambda_i b_i, (a_i, w) = 0"
    else:
        lhs = mom + B * L
        rhs, model = coad_sym(alg, w, lhs), "servo2_k"
        title = f"{system.name}: (I w + sum_i lambda_i b_i)' = ad*_w (I w + sum_i lambda_i b_i), (a_i, w) = 0"
    eqs = [sp.Eq(sp.expand(sp.diff(lhs[j], t)), sp.expand(rhs[j])) for j in range(n)]
    return Equations(eqs + constraints, t, om, lams, constraints, title, MODEL_LATEX[model], MODEL_TEXT[model])
