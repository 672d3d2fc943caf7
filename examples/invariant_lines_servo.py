"""Invariant lines of the catalog's servo systems
==============================================

Invariant lines of the reduced servo systems of the catalog as their parameters vary.

Bifurcation diagrams of the number of real invariant lines x = s xi, v(xi) = c xi (Kozlov, slide
"Общие свойства приведенных систем") for

- beghin_body (rigid body, servo-constraint of the first kind, omega_3 = 0, force direction
  n = (0, sin phi, cos phi)): p = 2;
- flywheel_body (second kind, b = (0, b2, 1)): p = 3 (the extra coordinate is lambda);
- servo_sleigh (u' = alpha u w, w' = beta u w, varying c_w): p = 2.

Each panel shows the c of every real line against the parameter (crosses: lines of equilibria,
c = 0) and the number of real lines (step curve, right axis). Unrealizable parameter values
((I^-1 a, b) = 0) are skipped and reported.

Run: .venv/bin/python examples/invariant_lines_servo.py   (figure in examples/output/)
"""
from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # run from a checkout
from catalog import registry  # noqa: E402
from catalog.output.describe import quadratic_system  # noqa: E402


def sweep(name, values, make_params):
    rows = []
    for val in values:
        try:
            q = quadratic_system(registry.get(name, **make_params(val)))
        except ValueError as exc:                       # unrealizable constraint and the like
            rows.append((val, None, str(exc).split("\n")[0]))
            continue
        rows.append((val, q.invariant_lines(), None))
    return rows


def plot(ax, rows, label, title):
    ax2 = ax.twinx()
    xs, counts = [], []
    for val, L, err in rows:
        if L is None:
            continue
        xs.append(val)
        counts.append(L.real_count)
        for l in L.real:
            ax.plot(val, l.c, "x" if l.is_equilibrium_line else ".", color="C0" if l.is_equilibrium_line
                    else "C3", ms=4)
    ax2.step(xs, counts, where="mid", color="k", lw=1)
    ax2.set_ylabel("number of real lines")
    ax2.set_ylim(0, max(counts + [1]) + 1)
    ax.set_xlabel(label)
    ax.set_yscale("symlog", linthresh=1e-2)
    ax.set_ylabel("c on the real lines (|xi| = 1, c >= 0)")
    ax.set_title(title)


def report(name, rows):
    print(f"\n{name}:")
    last = None
    for val, L, err in rows:
        if L is None:
            print(f"  {val:+.3f}: skipped ({err[:70]})")
            continue
        key = (L.real_count, sum(l.is_equilibrium_line for l in L.real), L.certified)
        if key != last:
            print(f"  from {val:+.3f}: {key[0]} real line(s), {key[1]} of equilibria, "
                  f"total {L.total_multiplicity}, certified {key[2]}")
            last = key


def main():
    out = Path(__file__).with_name("output")
    out.mkdir(exist_ok=True)
    phis = np.linspace(0.0, np.pi, 25)
    beghin = sweep("beghin_body", phis, lambda f: {"n": (0.0, float(np.sin(f)), float(np.cos(f)))})
    b2s = np.linspace(-3.0, 3.0, 17)
    fly = sweep("flywheel_body", b2s, lambda b: {"b2": float(b)})
    cws = np.linspace(-1.5, 1.5, 17)
    sleigh = sweep("servo_sleigh", cws, lambda c: {"c_w": float(c)})
    for name, rows in (("beghin_body (phi)", beghin), ("flywheel_body (b2)", fly),
                       ("servo_sleigh (c_w)", sleigh)):
        report(name, rows)
    fig, axes = plt.subplots(1, 3, figsize=(10.5, 3.6))
    plot(axes[0], beghin, "phi: n = (0, sin phi, cos phi)", "Beghin body (first kind), p = 2")
    plot(axes[1], fly, "b2: b = (0, b2, 1)", "flywheel body (second kind), p = 3")
    plot(axes[2], sleigh, "c_w", "servo-sleigh, p = 2")
    fig.tight_layout()
    path = out / "invariant_lines_servo.png"
    fig.savefig(path, dpi=110)
    print(f"\nsaved {path}")


if __name__ == "__main__":
    main()
