"""The cases of the fuzz suite (``tests/test_fuzz.py``, hypothesis) and of the long run (``make fuzz``,
``benchmarks/fuzz.py``): one call of the public API or the CLI from a few numbers, classified as

* "ok": status 0 (or a plain value) with every number finite;
* "failed": status -1 with a message (the promise: said, not silent);
* "refused": an exception of the project's hierarchy (LieGroupsError, IntegratorError, ServoError,
  CatalogError: each a ValueError);
* "leak": status 0 with a NaN or inf in y, an invariant or a constraint, or a non-finite plain value, or a
  constrained run with status 0 whose (a, w), computed here from the state and the inertia, is not small
  (:class:`PromiseBroken`);
* "foreign": any other exception (the promise broken);

and the wall time of the call (a "hang" is a call longer than the bound of the caller).
"""

from __future__ import annotations

import contextlib
import io
import time

import numpy as np

from catalog import CatalogError
from catalog.cli.main import main as cli_main
from integrators import IntegratorError, ODEProblem, integrate
from liegroups import LieGroupsError, named
from servo import EulerPoincare, Nonholonomic, ServoError, ServoFirstKind, ServoSecondKind, Vakonomic

PROJECT_ERRORS = (LieGroupsError, IntegratorError, ServoError, CatalogError)
ALGEBRAS = ("so3", "se2", "se3", "sl2", "heisenberg", "so21")
METHODS = ("rk4", "midpoint", "lie_euler", "rkmk2", "rkmk4", "cf4", "cg3", "scipy:RK45", "scipy:DOP853",
           "scipy:Radau", "rk853", "rkmk853", "rk45_projected", "rk853_projected")
MODELS = ("free", "servo1", "servo2", "nonholonomic", "vakonomic")
SPECIAL = (0.0, 1e-300, 1e300, np.nan, np.inf, -np.inf, 1e154, -1e-9)
CLI_ENTRIES = ("euler_top", "servo_sleigh", "beghin_body", "heavy_top", "chaplygin_sleigh")


def _algebra(name):
    return getattr(named, name)()


class PromiseBroken(AssertionError):
    """A status-0 answer that an independent check finds wrong (counted as a leak, not as foreign)."""


#: a constrained run with status 0 keeps |(a, w)| <= 1e-6 relative in the guard's scale (|I^-1 a|_1 |m|_inf);
#: this audit measures |(a, w)| / (|a| |w|) instead, which differs from it by at most n cond(I)
AUDIT_RTOL = 1e-6


def audit_constraint(res, inertia, a):
    """PromiseBroken when a status-0 result of a constrained system leaves (a, w) = 0, with w = I^-1 m
    recomputed from the saved states (m = the first n components; the second kind appends lambda)."""
    if res.status != 0 or len(res.t) == 0:
        return res
    n = len(inertia)
    w = np.asarray(res.y, dtype=float)[..., :n] / inertia
    scale = np.linalg.norm(a) * np.max(np.linalg.norm(w, axis=-1))
    rel = float(np.max(np.abs(w @ a))) / max(scale, 1e-300)
    tol = AUDIT_RTOL * n * np.max(inertia) / np.min(inertia)
    if rel > tol:
        raise PromiseBroken(f"status 0 but |(a, w)| / (|a| |w|) = {rel:.3g} > {tol:.3g} along the run")
    return res


def audit_dexpinv(g, x):
    """dexp^-1_x x, which is x itself (ad_x x = 0, psi(0) = 1) at every |x|: PromiseBroken when a finite
    answer is not (the solve against phi(ad x) once returned 1e-22 for 86 at |x| = 50 on sl(2))."""
    out = g.dexpinv(x, x)
    scale = max(float(np.max(np.abs(x))), 1e-300)
    if np.all(np.isfinite(out)) and np.max(np.abs(out - x)) > 1e-6 * scale:
        raise PromiseBroken(f"dexp^-1_x x differs from x by {np.max(np.abs(out - x)) / scale:.3g} relative "
                            f"(|x| = {scale:.3g})")
    return out


def _finite_result(res):
    parts = [res.y] + list(res.invariants.values()) + list(res.constraints.values())
    return all(np.all(np.isfinite(np.asarray(p, dtype=float))) for p in parts)


def classify(call):
    """(kind, seconds, detail) of one call (see the module docstring)."""
    t0 = time.perf_counter()
    try:
        with np.errstate(all="ignore"):
            out = call()
    except PromiseBroken as exc:
        return "leak", time.perf_counter() - t0, str(exc)[:200]
    except PROJECT_ERRORS as exc:
        return "refused", time.perf_counter() - t0, str(exc)[:200]
    except Exception as exc:  # noqa: BLE001 - this is what the fuzz counts
        return "foreign", time.perf_counter() - t0, f"{type(exc).__name__}: {str(exc)[:200]}"
    dt = time.perf_counter() - t0
    if hasattr(out, "status"):
        if out.status < 0:
            return ("failed" if out.message else "leak"), dt, out.message[:200]
        return ("ok" if _finite_result(out) else "leak"), dt, out.message[:200]
    if isinstance(out, int):  # a CLI exit code: 0 / 1 / 2 are all answers
        return ("ok" if out in (0, 1, 2) else "foreign"), dt, f"exit {out}"
    arr = np.asarray(out, dtype=float)
    return ("ok" if np.all(np.isfinite(arr)) else "leak"), dt, ""


def _pick(values, u):
    return values[int(u * len(values)) % len(values)]


def simulation_case(u, x):
    """A servo / Euler-Poincare simulation from the unit numbers u (8) and reals x (12)."""
    g = _algebra(_pick(ALGEBRAS, u[0]))
    n = g.dim
    model = _pick(MODELS, u[1])
    method = _pick(METHODS, u[2])
    inertia = np.abs(x[:n]) + 0.05
    a = x[6:6 + n] if np.any(x[6:6 + n]) else np.eye(n)[0]
    b = np.roll(a, 1) + 0.3 * np.eye(n)[-1]
    w = x[3:3 + n] * 10.0 ** (6 * u[3] - 2)
    steps = 1 + int(200 * u[4])
    t_end = 10.0 ** (3 * u[5] - 2)

    def call():
        if model == "free":
            sysm = EulerPoincare(g, inertia)
            s0 = sysm.state_from(w=w)
        elif model in ("servo1", "nonholonomic"):
            sysm = ServoFirstKind(g, inertia, a=a, b=b) if model == "servo1" else Nonholonomic(g, inertia, a=a)
            s0 = sysm.state_from(w=w, project=True)
        else:
            sysm = ServoSecondKind(g, inertia, a=a, b=b) if model == "servo2" else Vakonomic(g, inertia, a=a)
            s0 = sysm.state_from(w=w, lam=x[-1], project=True)
        kw = {"max_wall_time": 1.0, "max_steps": 20000} if method.startswith("scipy") else {}
        res = sysm.simulate(s0, t_end, steps=steps, method=method, **kw)
        return res if model == "free" else audit_constraint(res, inertia, np.asarray(sysm.a, dtype=float))

    return call


def special_case(u, x):
    """Bad or extreme input to a public function (NaN, inf, huge, complex, wrong types)."""
    g = _algebra(_pick(ALGEBRAS, u[0]))
    n = g.dim
    v = np.array([_pick(SPECIAL, ui) if ui < 0.3 else xi for ui, xi in zip(u[1:1 + n], x[:n])] + [0.0] * 6)[:n]
    y = x[n:2 * n] * 10.0 ** (8 * u[6] - 2)
    which = int(u[7] * 10)
    calls = [
        lambda: g.bracket(v, y), lambda: g.coad(v, y), lambda: g.exp_ad(y), lambda: g.coadjoint_exp(y, v),
        lambda: g.dexp(y, v), lambda: g.dexpinv(y, v),
        lambda: integrate(ODEProblem(lambda t, s: s ** 2 * v[0], 1), [1.0], (0, 1 + 10 * u[5]),
                          method=_pick(METHODS, u[4]), steps=1 + int(50 * u[3]),
                          **({"max_wall_time": 5.0} if _pick(METHODS, u[4]).startswith("scipy") else {})),
        lambda: EulerPoincare(g, np.abs(y) + 0.1).simulate(v, 1.0, steps=_pick((1.5, np.inf, 10, True, 0), u[2])),
        lambda: EulerPoincare(g, np.abs(v)).simulate(y, 1.0, steps=20),
        lambda: audit_dexpinv(g, y),
    ]
    return calls[which]


def cli_case(u, x):
    """One ``liedyn simulate`` call (in process; output discarded) with a perturbed parameter or control."""
    name = _pick(CLI_ENTRIES, u[0])
    argv = ["simulate", name, "--steps", str(1 + int(300 * u[1])), "--t-end", f"{10.0 ** (3 * u[2] - 1):.6g}",
            "--method", _pick(METHODS[:7], u[3])]
    if u[4] < 0.5 and name == "servo_sleigh":
        argv += ["-p", f"u0={x[0] * 3:.6g}"]
    if u[5] < 0.2:
        argv += ["--json"]

    def call():
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return cli_main(argv)

    return call


KINDS = {"simulation": simulation_case, "special": special_case, "cli": cli_case}
