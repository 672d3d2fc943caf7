"""``liedyn show`` and the README's tour print the equations as written by hand in
tests/servo/lie/test_symbolic_print.py (Beghin body, flywheel body, servo-sleigh with the catalog's
defaults)."""

import re
from pathlib import Path

from catalog.cli.main import main

from ..servo.lie.test_symbolic_print import BEGHIN, BEGHIN_TEXT, FLYWHEEL, SLEIGH

ROOT = Path(__file__).resolve().parents[2]


def _show(capsys, *args):
    code = main(["show", *args])
    out = capsys.readouterr().out
    assert code == 0
    return out


def test_show_prints_the_equations_by_hand(capsys):
    out = _show(capsys, "beghin_body")
    block = out.split("equations (I ω̇ = ad*_ω (I ω) + λ b, (a, ω) = 0):\n", 1)[1].split("\n\n", 1)[0]
    assert block == "\n".join("  " + line for line in BEGHIN_TEXT.splitlines())
    assert "Derivative" not in out and "omega1(t)" not in out


def test_show_latex_for_three_systems(capsys):
    for name, expected in (("beghin_body", BEGHIN), ("flywheel_body", FLYWHEEL), ("servo_sleigh", SLEIGH)):
        out = _show(capsys, name, "--latex")
        assert expected in out, name


def test_show_says_talamucci_is_realizable_at_its_initial_state(capsys):
    out = _show(capsys, "talamucci_two_points")
    line = [ln for ln in out.splitlines() if ln.startswith("realizability")][0]
    assert "= 1.45 at the initial state (realizable there)" in line and "NOT" not in line


def test_readme_tour_shows_the_beghin_equations():
    readme = (ROOT / "README.md").read_text()
    text = re.search(r"```text\n(3 ω̇₁.*?)\n```", readme, re.S).group(1)
    latex = re.search(r"```latex\n(\\begin\{align\}.*?\\end\{align\})\n```", readme, re.S).group(1)
    assert text == BEGHIN_TEXT and latex == BEGHIN


def test_one_sided_friction_reads_as_a_force_times_a_step(capsys):
    # the force -N v acts only where v = x' sin(theta) - y' cos(theta) > 0 (Kozlov 2019, section 4), N = 100:
    # written with Heaviside's step H, derivatives as primes, never Piecewise or Derivative(...)
    out = _show(capsys, "sleigh_one_sided_friction")
    assert "  x'' = -(100*x'*sin(theta) - 100*y'*cos(theta))*H(x'*sin(theta) - y'*cos(theta))*sin(theta)" in out
    assert "Piecewise" not in out and "Derivative" not in out
