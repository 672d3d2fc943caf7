"""One ``integrate`` call passes through each module of integrators/ at most once: control never comes
back up into a module that is already on the call stack below a frame of another module (A -> B -> A:
a lower room calling back into a higher one, as dense output once called the engine's stages and the
starting step a closure of the engine). Measured with ``sys.setprofile`` over every kind of run: each
runner (adaptive pair, fixed step, scipy), each backend, events, output grids, ensembles shared and
independent, and the generic path (fast=False). Calls into the user's problem (rhs, events) are
outside integrators/ and do not count."""

import os
import sys
import textwrap

import numpy as np
import pytest

import integrators
from integrators import integrate
from integrators.analysis.rigid_body import free_rigid_body
from integrators.backends import numba_kernels

ROOT = os.path.dirname(integrators.__file__)


def reentries(call, root=ROOT):
    """Run ``call()`` and return the list of (module, caller module) where a module under ``root`` was
    entered while one of its frames was on the stack below a frame of another module under root."""
    stack, found = [], []

    def prof(frame, event, arg):
        if event == "call":
            fn = frame.f_code.co_filename
            mod = os.path.relpath(fn, root) if fn.startswith(root + os.sep) else None
            top = stack[-1] if stack else None
            if mod is not None and top is not None and top != mod and mod in stack:
                found.append((mod, top))
            stack.append(mod if mod is not None else top)
        elif event == "return" and stack:
            stack.pop()

    sys.setprofile(prof)
    try:
        call()
    finally:
        sys.setprofile(None)
    return found


def test_the_detector_sees_a_callback_up_the_stack(tmp_path, monkeypatch):
    # two modules: a.go hands b a function of a, which b calls: a -> b -> a
    pkg = tmp_path / "pk"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text(textwrap.dedent("""
        from . import b
        def helper(x):
            return x + 1
        def go(x):
            return b.apply(helper, x)
        def straight(x):
            return b.twice(x)
    """))
    (pkg / "b.py").write_text(textwrap.dedent("""
        def apply(f, x):
            return f(x)
        def twice(x):
            return 2 * x
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    from pk import a
    assert reentries(lambda: a.go(1), str(pkg)) == [("a.py", "b.py")]
    assert reentries(lambda: a.straight(1), str(pkg)) == []


P = free_rigid_body([1.0, 2.0, 3.0])
Z0 = np.array([0.3, 1.0, 0.4])
ZS = np.random.default_rng(0).normal(size=(6, 3))
BACKENDS = ["numpy", "auto"] + (["numba"] if numba_kernels.available() else [])


def _event(t, y):
    return t - 1.0


_event.terminal = True

CASES = {
    "pair": dict(method="rkmk853"),
    "ambient pair": dict(method="rk45"),
    "projected pair, grid": dict(method="rk853_projected", steps=40),
    "pair, event": dict(method="rk853_projected", events=[_event]),
    "pair, generic path, grid": dict(method="rkmk45", fast=False, steps=20),
    "pair, generic path, event": dict(method="rk45", fast=False, events=[_event]),
    "fixed step": dict(method="rkmk4", steps=50),
    "fixed step, event": dict(method="rk4", steps=50, events=[_event]),
    "commutator-free": dict(method="cf4", steps=20),
    "forced, linear invariants projected, event": dict(method="rkmk4", steps=50, events=[_event], problem="servo"),
    "scipy": dict(method="DOP853"),
    "shared ensemble, grid": dict(method="rk45", y0=ZS, steps=10),
    "independent ensemble": dict(method="rk853_projected", y0=ZS, ensemble="independent"),
    "independent ensemble, grid": dict(method="rk45", y0=ZS, ensemble="independent", steps=10),
}
#: the runs that have no compiled path (backend="numba" refuses them with a MethodError saying why, tested in
#: test_codegen and test_batch): measured with the numpy and auto backends only
NOT_COMPILED = {"pair, generic path, grid", "pair, generic path, event", "fixed step, event",
                "forced, linear invariants projected, event",
                "scipy", "independent ensemble, grid"}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", list(CASES))
def test_each_module_at_most_once_per_call(case, backend):
    kw = dict(CASES[case])
    y0 = kw.pop("y0", Z0)
    problem = P
    if kw.pop("problem", None) == "servo":   # a servo constraint of the first kind: (a, z) kept by projection
        from liegroups import named
        from servo import ServoFirstKind
        s = ServoFirstKind(named.so3(), [2.0, 1.0, 0.5], a=[0.0, 0.0, 1.0], b=[0.0, 1.0, 1.0])
        problem, y0 = s.problem(), s.state_from(w=[1.0, 0.5, 0.0])
        assert problem.linear_invariants is not None
    if backend == "numba" and case in NOT_COMPILED:
        pytest.skip("no compiled path")
    if kw.get("fast") is False and backend == "auto":
        pytest.skip("fast=False is the numpy reference")

    def call():
        return integrate(problem, y0, (0.0, 3.0), backend=backend, **kw)

    res = call()   # compile and cache first: the measured call is the user's second
    assert res.status == (1 if "events" in kw else 0), res.message
    assert reentries(call) == []
