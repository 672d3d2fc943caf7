"""How the equations of the Lie-group systems print (servo.lie.symbolic).

The expected strings are written out by hand from the models, not copied from the printer:

* Beghin body (so(3), first kind): I w' = I w x w + lambda n, w3 = 0, with the catalog's defaults
  I = [[3, 1/5, 2/5], [1/5, 2, 3/10], [2/5, 3/10, 1]], l = e3, n = (0, 3/5, 4/5). With
  I w = (3 w1 + w2/5 + 2 w3/5, w1/5 + 2 w2 + 3 w3/10, 2 w1/5 + 3 w2/10 + w3):
  (I w x w)_1 = (I w)_2 w3 - (I w)_3 w2 = -2/5 w1 w2 + 1/5 w1 w3 - 3/10 w2^2 + w2 w3 + 3/10 w3^2, and so on.
* servo-sleigh (se(2), first kind, M = I = 1): the body-frame equations of a rigid body in the plane,
  M (u' - v w) = lambda a_u, M (v' + u w) = lambda b_v, I w' = lambda c_w, with v = 0 and
  (a_u, b_v, c_w) = (1/2, 1, -1/2).
* flywheel body (so(3), second kind): z' = z x w with z = I w + lambda b, b = (0, 1/2, 1), w3 = 0.

Terms are ordered as documented: derivatives on the left in the order of the unknowns, the rest on the
right by total degree, then lexicographically with w1 > w2 > w3 > lambda.
"""

import math

import numpy as np
import pytest
import sympy as sp

from liegroups import named
from servo import ServoFirstKind, ServoSecondKind
from servo.lie.symbolic import exact_number, velocity_names, momentum_names

I_BODY = np.array([[3.0, 0.2, 0.4], [0.2, 2.0, 0.3], [0.4, 0.3, 1.0]])

BEGHIN = r"""\begin{align}
3 \dot{\omega}_{1} + \frac{1}{5} \dot{\omega}_{2} + \frac{2}{5} \dot{\omega}_{3} &= - \frac{2}{5} \omega_{1} \omega_{2} + \frac{1}{5} \omega_{1} \omega_{3} - \frac{3}{10} \omega_{2}^{2} + \omega_{2} \omega_{3} + \frac{3}{10} \omega_{3}^{2} \\
\frac{1}{5} \dot{\omega}_{1} + 2 \dot{\omega}_{2} + \frac{3}{10} \dot{\omega}_{3} &= \frac{2}{5} \omega_{1}^{2} + \frac{3}{10} \omega_{1} \omega_{2} - 2 \omega_{1} \omega_{3} - \frac{1}{5} \omega_{2} \omega_{3} - \frac{2}{5} \omega_{3}^{2} + \frac{3}{5} \lambda \\
\frac{2}{5} \dot{\omega}_{1} + \frac{3}{10} \dot{\omega}_{2} + \dot{\omega}_{3} &= - \frac{1}{5} \omega_{1}^{2} + \omega_{1} \omega_{2} - \frac{3}{10} \omega_{1} \omega_{3} + \frac{1}{5} \omega_{2}^{2} + \frac{2}{5} \omega_{2} \omega_{3} + \frac{4}{5} \lambda \\
\omega_{3} &= 0
\end{align}"""

BEGHIN_TEXT = """3 ω̇₁ + (1/5) ω̇₂ + (2/5) ω̇₃ = - (2/5) ω₁ ω₂ + (1/5) ω₁ ω₃ - (3/10) ω₂² + ω₂ ω₃ + (3/10) ω₃²
(1/5) ω̇₁ + 2 ω̇₂ + (3/10) ω̇₃ = (2/5) ω₁² + (3/10) ω₁ ω₂ - 2 ω₁ ω₃ - (1/5) ω₂ ω₃ - (2/5) ω₃² + (3/5) λ
(2/5) ω̇₁ + (3/10) ω̇₂ + ω̇₃ = - (1/5) ω₁² + ω₁ ω₂ - (3/10) ω₁ ω₃ + (1/5) ω₂² + (2/5) ω₂ ω₃ + (4/5) λ
ω₃ = 0"""

SLEIGH = r"""\begin{align}
\dot{u} &= v \omega + \frac{1}{2} \lambda \\
\dot{v} &= - u \omega + \lambda \\
\dot{\omega} &= - \frac{1}{2} \lambda \\
v &= 0
\end{align}"""

FLYWHEEL = r"""\begin{align}
3 \dot{\omega}_{1} + \frac{1}{5} \dot{\omega}_{2} + \frac{2}{5} \dot{\omega}_{3} &= - \frac{2}{5} \omega_{1} \omega_{2} + \frac{1}{5} \omega_{1} \omega_{3} - \frac{3}{10} \omega_{2}^{2} + \omega_{2} \omega_{3} - \omega_{2} \lambda + \frac{3}{10} \omega_{3}^{2} + \frac{1}{2} \omega_{3} \lambda \\
\frac{1}{5} \dot{\omega}_{1} + 2 \dot{\omega}_{2} + \frac{3}{10} \dot{\omega}_{3} + \frac{1}{2} \dot{\lambda} &= \frac{2}{5} \omega_{1}^{2} + \frac{3}{10} \omega_{1} \omega_{2} - 2 \omega_{1} \omega_{3} + \omega_{1} \lambda - \frac{1}{5} \omega_{2} \omega_{3} - \frac{2}{5} \omega_{3}^{2} \\
\frac{2}{5} \dot{\omega}_{1} + \frac{3}{10} \dot{\omega}_{2} + \dot{\omega}_{3} + \dot{\lambda} &= - \frac{1}{5} \omega_{1}^{2} + \omega_{1} \omega_{2} - \frac{3}{10} \omega_{1} \omega_{3} - \frac{1}{2} \omega_{1} \lambda + \frac{1}{5} \omega_{2}^{2} + \frac{2}{5} \omega_{2} \omega_{3} \\
\omega_{3} &= 0
\end{align}"""


def beghin():
    return ServoFirstKind(named.so3(), I_BODY, a=[0.0, 0.0, 1.0], b=[0.0, 0.6, 0.8])


def sleigh():
    return ServoFirstKind(named.se2(), [1.0, 1.0, 1.0], a=[0.0, 1.0, 0.0], b=[0.5, 1.0, -0.5])


def flywheel():
    return ServoSecondKind(named.so3(), I_BODY, a=[0.0, 0.0, 1.0], b=[0.0, 0.5, 1.0])


@pytest.mark.parametrize("make, expected", [(beghin, BEGHIN), (sleigh, SLEIGH), (flywheel, FLYWHEEL)],
                         ids=["beghin_so3_first", "sleigh_se2_first", "flywheel_so3_second"])
def test_latex_as_written_by_hand(make, expected):
    assert make().equations().latex() == expected


def test_unicode_text_of_beghin_body():
    text = str(beghin().equations())
    assert text == BEGHIN_TEXT
    assert "Derivative" not in text and "omega" not in text and "0.333" not in text


def test_aligned_and_matrix_forms():
    eq = sleigh().equations()
    assert eq.latex(env="aligned") == SLEIGH.replace("{align}", "{aligned}")
    # matrix form: the mass matrix (identity for M = I = 1) times the derivatives, then the constraint
    mat = eq.latex(form="matrix")
    assert mat.splitlines()[1] == (
        r"\begin{pmatrix} 1 & 0 & 0 \\ 0 & 1 & 0 \\ 0 & 0 & 1 \end{pmatrix} "
        r"\begin{pmatrix} \dot{u} \\ \dot{v} \\ \dot{\omega} \end{pmatrix} &= \begin{pmatrix} "
        r"v \omega + \frac{1}{2} \lambda \\ - u \omega + \lambda \\ - \frac{1}{2} \lambda \end{pmatrix} \\")
    assert mat.splitlines()[2] == "v &= 0"
    with pytest.raises(ValueError, match="form must be"):
        eq.latex(form="table")
    with pytest.raises(ValueError, match="env must be"):
        eq.latex(env="equation")


def test_notebook_latex_is_the_aligned_block_in_display_math():
    eq = flywheel().equations()
    r = eq._repr_latex_()
    assert r.startswith("$$\\begin{gathered}") and r.endswith("\\end{gathered}$$")
    for row in FLYWHEEL.splitlines()[1:-1]:
        assert row in r
    # the heading (name and model in math) stands above the aligned block, not as its first row: a text row
    # in the aligned block filled its left column and pushed the equations right (a display scrolling sideways)
    block = r[r.index("\\begin{aligned}"):r.index("\\end{aligned}") + len("\\end{aligned}")]
    assert block == eq.latex(env="aligned") and "\\text" not in block
    head = r[len("$$\\begin{gathered}\n"):r.index("\\begin{aligned}")]
    assert head.startswith("\\text{ServoSecondKind on so(3):}") and eq.model_latex in head


def test_symbolic_parameters_are_kept_as_symbols():
    # Euler's equations with symbolic principal moments: I1 w1' = (I2 - I3) w2 w3 and cyclic
    I1, I2, I3 = sp.symbols("I1 I2 I3", positive=True)
    from servo import EulerPoincare

    rows = EulerPoincare(named.so3(), [I1, I2, I3]).equations().rows("latex")
    assert rows[0] == (r"I_{1} \dot{\omega}_{1}", r"\left(I_{2} - I_{3}\right) \omega_{2} \omega_{3}")
    assert rows[1] == (r"I_{2} \dot{\omega}_{2}", r"\left(I_{3} - I_{1}\right) \omega_{1} \omega_{3}")


def test_exact_numbers():
    assert exact_number(0.2) == sp.Rational(1, 5)
    assert exact_number(0.35) == sp.Rational(7, 20)
    assert exact_number(1 / 3.0) == sp.Rational(1, 3)       # the inverse of a moment of inertia 3
    assert exact_number(1 / 3.5) == sp.Rational(2, 7)
    assert exact_number(-2.0) == -2 and isinstance(exact_number(-2.0), sp.Integer)
    for x in (math.pi, 0.7892211148025102, 0.1 + 0.2):       # no short decimal, no small fraction
        assert isinstance(exact_number(x), sp.Float) and float(exact_number(x)) == x


def test_basis_names():
    assert velocity_names(named.so3()) == ["omega_1", "omega_2", "omega_3"]
    assert velocity_names(named.se2()) == ["u", "v", "omega"]
    assert velocity_names(named.se3()) == ["omega_1", "omega_2", "omega_3", "v_1", "v_2", "v_3"]
    assert velocity_names(named.sl2()) == ["omega_h", "omega_e", "omega_f"]
    assert velocity_names(named.so4())[0] == "omega_12"
    assert momentum_names(named.se3()) == ["M_1", "M_2", "M_3", "Gamma_1", "Gamma_2", "Gamma_3"]


def test_heavy_top_prints_gamma():
    # Lagrange top J = (1, 1, 1/2), mgl = 1, chi = e3: M' = M x Omega + Gamma x chi, Gamma' = Gamma x Omega,
    # Omega = (M1, M2, 2 M3): M1' = M2 M3 + Gamma2, Gamma1' = 2 M3 Gamma2 - M2 Gamma3
    from servo import EulerPoincare

    K = np.zeros((6, 6))
    K[:3, :3] = np.diag([1.0, 1.0, 2.0])
    eq = EulerPoincare(named.se3(), inverse_inertia=K, linear_term=[0, 0, 0, 0, 0, 1.0]).equations()
    rows = eq.rows("latex")
    assert rows[0] == (r"\dot{M}_{1}", r"M_{2} M_{3} + \Gamma_{2}")
    assert rows[3] == (r"\dot{\Gamma}_{1}", r"- M_{2} \Gamma_{3} + 2 M_{3} \Gamma_{2}")
    assert str(eq).splitlines()[3] == "Γ̇₁ = - M₂ Γ₃ + 2 M₃ Γ₂"


def test_one_variable_polynomial_prints_with_or_without_python_flint():
    """A polynomial in one variable over QQ is flint-backed when python-flint is installed (sympy's
    DUP_Flint), whose terms() failed on the order given as a string; highest degree first either way."""
    from servo.lie.printing import polynomial_text

    m = sp.Symbol("m1")
    assert polynomial_text(sp.Rational(1, 2) * m**2 - 2 * m + 3, [m], ["m1"], "unicode") == "(1/2) m1² - 2 m1 + 3"
    assert polynomial_text(2 * m, [m], ["m1"], "latex") == "2 m_{1}"
