"""A user's own Lie-group system from a TOML file: :func:`from_file`.

Format (every key but ``algebra``, ``inertia`` and ``initial`` is optional)::

    name = "my_body"                 # default: the file name without .toml
    description = "..."
    algebra = "so3"                  # a named algebra (liegroups.named.get), or a table:
    # algebra = { name = "bianchi_VI", a = 2.0 }
    # algebra = { structure_constants = [[[...]]] }          # C[i][j][k], [e_i, e_j] = sum_k C[i,j,k] e_k
    inertia = [2.0, 1.0, 0.5]        # n numbers (diagonal) or an n x n matrix
    model = "servo1"                 # free | nonholonomic | servo1 | servo2 | vakonomic
    a = [0.0, 0.0, 1.0]              # constraint covector (a, w) = 0 (all but free)
    b = [0.0, 1.0, 1.0]              # control covector (servo1, servo2)
    references = ["..."]

    [initial]                        # velocity w (projected? no: it must satisfy (a, w) = 0) or momentum m
    w = [1.0, 0.5, 0.0]
    lambda = 0.0                     # servo2 / vakonomic only

    [simulation]
    t_end = 10.0
    steps = 1000
    method = "rkmk4"

Errors raise :class:`TomlEntryError` (a ``ValueError``) naming the file and the bad key.

Every number of the file is a parameter of its entry under a key (:mod:`catalog.entries.toml_keys`:
``b[0]``, ``inertia[1][1]``, ``w[2]``, ``lambda``, ``t_end``, ``algebra.a``): ``from_file(path, **overrides)``
sets them (``from_file("my.toml", **{"b[0]": 0.5}, t_end=20)``), ``entry.parameters`` lists them, and
``liedyn sweep my.toml -p "b[0]=0:1:11"`` sweeps any of them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

from . import toml_keys
from .build import MODELS, lie_system
from ..verify.motion import group_kind, plane_path
from ..verify.claims import constraint_residuals, model_integrals
from ..errors import TomlEntryError
from ..registry import Entry, names, register

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

KNOWN_KEYS = {"name", "description", "algebra", "inertia", "model", "a", "b", "initial", "simulation",
              "references", "tags"}


def _err(path, key, msg):
    return TomlEntryError(f"{path}: key {key!r}: {msg}")


def _numbers(path, key, value):
    """Refuse booleans and strings anywhere in a (nested) list of numbers (numpy would cast them)."""
    if isinstance(value, (list, tuple)):
        for v in value:
            _numbers(path, key, v)
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _err(path, key, f"expected numbers, got the entry {value!r} ({type(value).__name__})")


def _vector(path, key, value, n):
    _numbers(path, key, value)
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise _err(path, key, f"expected {n} numbers, got {value!r}") from None
    if arr.shape != (n,):
        raise _err(path, key, f"expected {n} numbers (the algebra has dimension {n}), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise _err(path, key, "entries must be finite")
    return arr


def _scalar(path, key, value):
    """A finite real number (not a bool, not a string)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _err(path, key, f"expected a number, got {value!r}")
    if not np.isfinite(value):
        raise _err(path, key, f"must be finite, got {value!r}")
    return float(value)


def _covectors(path, key, value, n):
    """One covector (n numbers) or a list of k covectors (k lists of n numbers), each non-zero: (k, n)."""
    if isinstance(value, list) and value and all(isinstance(v, list) for v in value):
        rows = [_vector(path, f"{key}[{i}]", v, n) for i, v in enumerate(value)]
        for i, r in enumerate(rows):
            if not np.any(r):
                raise _err(path, f"{key}[{i}]", "a covector must be non-zero")
        return np.array(rows)
    v = _vector(path, key, value, n)
    if not np.any(v):
        raise _err(path, key, "the covector must be non-zero")
    return v


def _algebra(path, spec):
    from liegroups import LieAlgebra, named

    try:
        if isinstance(spec, str):
            return named.get(spec)
        if isinstance(spec, dict):
            if "structure_constants" in spec:
                extra = sorted(set(spec) - {"structure_constants", "name"})
                if extra:
                    raise _err(path, f"algebra.{extra[0]}", "unknown key; with structure_constants the known "
                                                            "keys are: structure_constants, name")
                _numbers(path, "algebra.structure_constants", spec["structure_constants"])
                return LieAlgebra(np.asarray(spec["structure_constants"], dtype=float),
                                  name=str(spec.get("name", "user algebra")))
            if "name" in spec:
                params = {k: v for k, v in spec.items() if k != "name"}
                return named.get(spec["name"], **params)
        raise _err(path, "algebra", "expected a name (e.g. \"so3\") or a table with 'name' or "
                   "'structure_constants'")
    except TomlEntryError:
        raise
    except (ValueError, TypeError) as exc:
        raise _err(path, "algebra", str(exc)) from None


def read(path: str | os.PathLike[str]) -> dict:
    """The data of a TOML system file (TomlEntryError when it is missing or not TOML)."""
    path = Path(path)
    if not path.is_file():
        raise TomlEntryError(f"{path}: no such file")
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise TomlEntryError(f"{path}: not valid TOML: {exc}") from None


def from_file(path: str | os.PathLike[str], **overrides: float) -> Entry:
    """Read a TOML system file and return an :class:`catalog.registry.Entry` (kind "lie-group").

    ``overrides`` set numbers (or lists, or the method) of the file by key: ``b=[0.3, 1, 0.2]``,
    ``**{"b[0]": 0.5, "inertia[1][1]": 2.0}``, ``t_end=20`` (see :mod:`catalog.entries.toml_keys`); the
    entry's ``parameters`` are the file's numbers after the overrides."""
    path = Path(path)
    data = toml_keys.apply(path, read(path), overrides)
    return _build(path, data)


def _check_method(path, method, system):
    from integrators.methods import applicable_methods, applies, get_method

    problem = system.problem()
    try:
        m = get_method(method, problem)
    except ValueError as exc:
        raise _err(path, "simulation.method", " ".join(str(exc).split())) from None
    if not applies(m, problem):
        raise _err(path, "simulation.method", f"method {method!r} does not apply to this system; methods that "
                                              f"apply: {', '.join(applicable_methods(problem))}")


def _build(path, data):
    unknown = sorted(set(data) - KNOWN_KEYS)
    if unknown:
        raise _err(path, unknown[0], f"unknown key; known keys: {', '.join(sorted(KNOWN_KEYS))}")
    for req in ("algebra", "inertia", "initial"):
        if req not in data:
            raise _err(path, req, "missing (required)")
    g = _algebra(path, data["algebra"])
    n = g.dim
    _numbers(path, "inertia", data["inertia"])
    try:
        I = np.asarray(data["inertia"], dtype=float)
    except (TypeError, ValueError):
        raise _err(path, "inertia", f"expected numbers, got {data['inertia']!r}") from None
    if not np.all(np.isfinite(I)):
        raise _err(path, "inertia", f"entries must be finite, got {data['inertia']!r}")
    if I.shape == (n,):
        I = np.diag(I)
    if I.shape != (n, n):
        raise _err(path, "inertia", f"expected {n} numbers or an {n}x{n} matrix, got shape {I.shape}")
    asym = float(np.max(np.abs(I - I.T)))
    if asym > 1e-12 * max(1.0, float(np.max(np.abs(I)))):
        raise _err(path, "inertia", f"not symmetric (max |I - I^T| = {asym:.3g})")
    ev = np.linalg.eigvalsh(I)
    if ev[0] <= 0:
        raise _err(path, "inertia", f"not positive definite (smallest eigenvalue {ev[0]:.3g})")
    model = data.get("model", "free")
    if model not in MODELS:
        raise _err(path, "model", f"unknown model {model!r}; known: {', '.join(MODELS)}")
    a = b = None
    if model != "free":
        if "a" not in data:
            raise _err(path, "a", f"model {model!r} needs the constraint covector a")
        a = _covectors(path, "a", data["a"], n)
    if model in ("servo1", "servo2"):
        if "b" not in data:
            raise _err(path, "b", f"model {model!r} needs the control covector b")
        b = _covectors(path, "b", data["b"], n)
        if np.shape(b) != np.shape(a):
            raise _err(path, "b", f"give as many control covectors as constraint covectors: a has shape "
                                  f"{np.shape(a)}, b has shape {np.shape(b)}")
    elif model in ("nonholonomic", "vakonomic"):
        if "b" in data:
            raise _err(path, "b", f"model {model!r} uses b = a; remove b or use servo1/servo2")
        b = a
    init = data["initial"]
    if not isinstance(init, dict):
        raise _err(path, "initial", "expected a table with w or m (and lambda)")
    bad = sorted(set(init) - {"w", "m", "lambda"})
    if bad:
        raise _err(path, f"initial.{bad[0]}", "unknown key; known: w, m, lambda")
    if ("w" in init) == ("m" in init):
        raise _err(path, "initial", "give exactly one of w (velocity) or m (momentum)")
    m0 = I @ _vector(path, "initial.w", init["w"], n) if "w" in init else _vector(path, "initial.m", init["m"], n)
    second = model in ("servo2", "vakonomic")
    if "lambda" in init and not second:
        raise _err(path, "initial.lambda", f"model {model!r} has no lambda in its state")
    k = 0 if a is None else np.atleast_2d(a).shape[0]
    if a is not None:
        res = np.atleast_1d(np.linalg.solve(I, np.atleast_2d(a).T).T @ m0)
        i = int(np.argmax(np.abs(res)))
        if abs(res[i]) > 1e-10 * max(1.0, float(np.linalg.norm(m0)) * float(np.linalg.norm(np.atleast_2d(a)[i]))):
            which = "(a, w)" if np.ndim(a) == 1 else f"(a_{i + 1}, w)"
            raise _err(path, "initial", f"the initial state is off the constraint: {which} = {res[i]:.3g}")
    lam0 = None
    if second:
        lam = init.get("lambda", 0.0)
        if np.ndim(a) == 1:
            lam0 = np.array([_scalar(path, "initial.lambda", lam)])
        else:
            lam0 = _vector(path, "initial.lambda", lam if isinstance(lam, list) else [lam] * k, k)
    y0 = np.concatenate([m0, lam0]) if second else m0
    sim = data.get("simulation", {})
    if not isinstance(sim, dict):
        raise _err(path, "simulation", "expected a table with t_end, steps, method")
    bad = sorted(set(sim) - {"t_end", "steps", "method"})
    if bad:
        raise _err(path, f"simulation.{bad[0]}", "unknown key; known: t_end, steps, method")
    t_end = _scalar(path, "simulation.t_end", sim.get("t_end", 10.0))
    if not t_end > 0:
        raise _err(path, "simulation.t_end", f"must be positive, got {t_end!r}")
    steps = sim.get("steps", 1000)
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise _err(path, "simulation.steps", f"expected a positive integer, got {steps!r}")
    method = sim.get("method")
    if method is not None and not isinstance(method, str):
        raise _err(path, "simulation.method", f"expected a method name, got {method!r}")
    refs = data.get("references", [])
    if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
        raise _err(path, "references", f"expected a list of strings, got {refs!r}")
    tags = data.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(r, str) for r in tags):
        raise _err(path, "tags", f"expected a list of strings, got {tags!r}")
    try:
        system = lie_system(model, g, I, a, b)
    except (ValueError, ArithmeticError) as exc:
        raise TomlEntryError(f"{path}: {type(exc).__name__}: {exc}") from None
    if method is not None:
        _check_method(path, method, system)
    extras = {"algebra": g, "inertia": I, "a": a, "b": b, "source": str(path)}
    if a is not None:
        extras["constraints"] = constraint_residuals(I, a, n)
    lam_labels = ("lambda",) if k == 1 and np.ndim(a) == 1 else tuple(f"lambda{i + 1}" for i in range(k))
    labels = tuple(f"m{i + 1}" for i in range(n)) + (lam_labels if second else ())
    return Entry(
        name=str(data.get("name", path.stem)), system=system, initial_state=y0,
        t_end=t_end, parameters=toml_keys.numbers(data),
        description=str(data.get("description", f"User system from {path.name}: {model} on {g.name}.")),
        references=list(refs), first_integrals=model_integrals(g, I, model, a, b),
        kind="lie-group", model=model, steps=steps, method=method,
        labels=labels, tags=tuple(tags) + ("user",), extras=extras,
        path=plane_path if group_kind(system) == "se2" else None,
    )


def register_file(path: str | os.PathLike[str]) -> str:
    """Register the system of a TOML file in the catalog's registry under its ``name`` (family "user",
    its numbers as the documented defaults), so that ``catalog.get(name, **{"b[0]": 0.5})`` and the
    report (``liedyn report my.toml``) treat it as a named entry; returns the name. A name that is
    already a different entry raises TomlEntryError."""
    path = Path(path)
    entry = from_file(path)
    if entry.name in names():
        from ..registry import specs

        if specs()[entry.name].family != "user":
            raise TomlEntryError(f"{path}: key 'name': {entry.name!r} is a catalog entry; give your system another name")

    def builder(**params):
        return from_file(path, **params)

    builder.__doc__ = entry.description
    register(entry.name, defaults=entry.parameters, family="user", title=f"{entry.name} ({path.name})")(builder)
    return entry.name
