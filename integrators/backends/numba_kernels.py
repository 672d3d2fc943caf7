"""The optional compiled path: numba (extra ``liedyn[fast]``) jits the code of :mod:`integrators.codegen.writer`.

Nothing here imports numba unless the "numba" backend is used; without numba, :func:`require` raises
MethodError naming the backends that apply. The generated source is written to a file in the cache
directory (``$LIEDYN_CACHE_DIR``, default ``~/.cache/liedyn``; named by the hash of the source) and
jitted with numba's on-disk cache, so each problem structure and method compiles once per machine
(compiling the DOP853-sized code takes 15-190 s on 2 cores; under backend="auto" nothing waits for it,
:mod:`integrators.backends.auto_compile`); when the directory is not writable the source is compiled
in memory for the process only.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import threading
from pathlib import Path

from ..reference import genhelpers
from ..core.errors import MethodError

_JITTED = {}
_MODULES = {}


_AVAILABLE = []


def available():
    """True when numba can be imported (looked up once per process: find_spec walks sys.path)."""
    if not _AVAILABLE:
        _AVAILABLE.append(importlib.util.find_spec("numba") is not None)
    return _AVAILABLE[0]


#: GOMP_SPINCOUNT, set when liedyn first asks for numba unless the environment sets it or OMP_WAIT_POLICY (libgomp
#: reads it when numba's OpenMP pool loads, at the first parallel call; once loaded, it keeps what it read): with
#: libgomp's default (300,000 spins) the pool's worker keeps a core busy for milliseconds after every parallel
#: ensemble call, while the caller's Python (the starting steps, the checks) runs: 10^4 free Euler-Poincare states
#: on so(4) (benchmarks/drawn_systems.py's ensemble, rk853_projected): 14.5 ms of CPU for 6.7 ms of wall, against
#: 9.5 ms of CPU for 7.4 ms of wall with 1000 spins.
GOMP_SPINCOUNT = "1000"


def require(what="the numba backend"):
    """Import numba or raise MethodError naming what applies instead (the first import sets
    GOMP_SPINCOUNT, see :data:`GOMP_SPINCOUNT`)."""
    if not available():
        raise MethodError(f"{what} needs numba, which is not installed (pip install 'liedyn[fast]'); "
                          f"backends that apply: 'numpy' (or 'auto', which picks numpy without numba)")
    if "OMP_WAIT_POLICY" not in os.environ:     # read when libgomp loads (numba's first parallel call)
        os.environ.setdefault("GOMP_SPINCOUNT", GOMP_SPINCOUNT)
    import numba

    return numba


def no_refcount_option():
    """The njit option text that compiles a function without numba's reference counting (``_nrt=False``, one
    of numba's DefaultOptions; "" when this numba has no such option, then the functions count
    references as usual: the same results, slower calls). Such a function allocates no array; its array
    arguments are the caller's. :mod:`integrators.backends.generic_kernel` compiles the loop and the
    functions it calls so: a call of a compiled function with reference counting increments and decrements
    the count of each array argument, an atomic operation each."""
    require()
    from numba.core import options

    return "_nrt=False, " if hasattr(options.DefaultOptions, "_nrt") else ""


#: numba's options of every generated function (serial unless a text asks for ``parallel=True``): error_model
#: "numpy" (a division by zero gives inf or nan, as in numpy, instead of raising). A generated module's text
#: defines them as ``JIT`` (:func:`prelude`) and jits its functions with ``**JIT``, so a change here changes every
#: module's text, its file and its numba cache entry.
JIT_OPTIONS = {"error_model": "numpy"}

#: the options of the adaptive lanes' attempt (``LANE_JIT``, :func:`integrators.codegen.ensemble_source.lanes_source`):
#: also fastmath {"contract"}, LLVM may fuse a product and a sum into one fused multiply-add (one rounding instead of
#: two: a lane's result moves from its single run's by round-off; no other fast-math freedom, the attempt tests for nan
#: and infinity). Only there: the one-trajectory loops keep numpy's arithmetic operation for operation, so a run that
#: changes backend (a long run under "auto" continuing compiled) goes on with the same numbers. The attempt of 10^4
#: ServoSecondKind bodies on se(3) in a random basis (rk853_projected, 2 cores): 29.3 ms of wall a call without
#: contraction, 22.3 ms with it (interleaved, median of 11).
LANE_OPTIONS = {**JIT_OPTIONS, "fastmath": {"contract"}}


def _options_text(options=JIT_OPTIONS):
    return ", ".join(f"{k}={v!r}" for k, v in sorted(options.items()))


def prelude(on_disk):
    """The lines between :func:`header` and a generated module's text: numba imported, ``CACHE`` (numba's disk
    cache when the module is a file of the cache directory), ``JIT`` and ``LANE_JIT``, the options of its functions
    (:data:`JIT_OPTIONS`, :data:`LANE_OPTIONS`)."""
    return (f"import numba\nCACHE = {bool(on_disk)}\nJIT = dict(cache=CACHE, {_options_text()})\n"
            f"LANE_JIT = dict(cache=CACHE, {_options_text(LANE_OPTIONS)})\n\n")


def jit(fn, cache=False):
    """numba.njit(fn) with :data:`JIT_OPTIONS` (serial: the machine's cores belong to the caller's processes)."""
    numba = require()
    return numba.njit(fn, cache=cache, **JIT_OPTIONS)


def jitted_helpers(batch=False):
    """The scalar helpers of :mod:`integrators.reference.genhelpers`, jitted (grow for (cap, n) or, with
    ``batch``, (cap, B, n) outputs)."""
    if not _JITTED:
        for name in ("co2", "co3", "cq2", "cq3", "tplan", "rinv", "fin", "mx", "bmax", "hstart", "rmsq", "sfac", "tbound", "sin",
                     "aexp", "aexpc", "bern", "bernc"):
            _JITTED[name] = jit(genhelpers.SCALAR[name], cache=True)
        _JITTED["grow2"] = jit(genhelpers._grow2, cache=True)
        _JITTED["grow3"] = jit(genhelpers._grow3, cache=True)
    out = {k: v for k, v in _JITTED.items() if not k.startswith("grow")}
    out["grow"] = _JITTED["grow3" if batch else "grow2"]
    return out


_HEADER = """# generated by integrators.codegen.writer; jitted by integrators.backends.numba_kernels (safe to delete)
import math
import numpy as np
from integrators.backends.numba_kernels import jitted_helpers
globals().update(jitted_helpers(batch={batch}))
sqrt = math.sqrt

"""


_HELPERS_DIGEST = []


def header(batch=False):
    """The first lines of a generated module: imports, the jitted helpers and the digest of the helpers'
    source (:mod:`integrators.reference.genhelpers`). numba's disk cache of a generated module keys on the module's
    own text, and the compiled code holds the helpers it calls inlined: the digest changes the module
    (its name is the hash of its text) when a helper changes, so no stale helper stays cached."""
    if not _HELPERS_DIGEST:
        _HELPERS_DIGEST.append(hashlib.sha1(Path(genhelpers.__file__).read_bytes()).hexdigest()[:16])
    return _HEADER.format(batch=batch) + f"# helpers {_HELPERS_DIGEST[0]}\n"


def cache_dir():
    """The directory of the generated modules (created on demand), or None when not writable. The probe file is
    this process's and thread's own: with one shared name, another process's unlink between this one's write and
    unlink made the directory look unwritable for a moment (a module then compiled in memory while its text said
    CACHE = True, and numba refused to cache it: seen under pytest-xdist)."""
    d = Path(os.environ.get("LIEDYN_CACHE_DIR") or Path.home() / ".cache" / "liedyn")
    try:
        d.mkdir(parents=True, exist_ok=True)
        probe = d / f".write_test.{os.getpid()}.{threading.get_ident()}"
        probe.write_text("")
        probe.unlink(missing_ok=True)
    except OSError:
        return None
    return d


def kernel_marker(text, prefix, what):
    """The file in the cache directory that says the module ``text`` was compiled into numba's disk cache (per
    text, numba and Python version and the helpers of :mod:`integrators.reference.genhelpers`; named ``prefix`` and
    a hash), or None when the cache directory is not writable: the generic kernels' markers."""
    d = cache_dir()
    if d is None:
        return None
    numba = require(what)
    tag = f"{text}|{numba.__version__}|{sys.version_info[:2]}|{Path(genhelpers.__file__).read_bytes()!r}"
    return d / f"{prefix}_{hashlib.sha1(tag.encode()).hexdigest()[:20]}.ok"


def write_marker(marker):
    """Write a disk-cache marker (:func:`kernel_marker`, the specialised loops' markers) atomically; nothing when it
    is None or the directory is not writable."""
    if marker is None:
        return
    try:
        tmp = marker.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text("")
        os.replace(tmp, marker)
    except OSError:
        pass


def load_source(full, modname):
    """(namespace, on_disk): the module text ``full`` written to the cache directory as ``modname``.py
    and imported (numba's disk cache can then key on it), or executed in memory when the directory
    is not writable (on_disk False)."""
    d = cache_dir()
    if d is None:
        env = {}
        exec(compile(full, f"<{modname}>", "exec"), env)
        return env, False
    path = d / f"{modname}.py"
    if not path.exists():
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(full)
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(modname, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # numba's cache rebuilds the environment by module name
    spec.loader.exec_module(mod)
    return vars(mod), True


def load_module(text, prefix, what="the numba backend"):
    """The namespace of a generated module ``text`` that jits its own functions with ``numba`` and
    ``cache=CACHE`` (both defined before the text: numba's disk cache when the cache directory is writable,
    else compiled in memory for this process), once per text and process; ``prefix`` names its file."""
    require(what)
    on_disk = cache_dir() is not None
    full = header(False) + prelude(on_disk) + text
    digest = hashlib.sha1(full.encode()).hexdigest()[:20]
    ns = _NAMESPACES.get(digest)
    if ns is None:
        ns = _NAMESPACES[digest] = load_source(full, f"{prefix}_{digest}")[0]
    return ns


#: digest of a module's text -> its namespace (load_module)
_NAMESPACES = {}


def compile_cached(text, name, batch=False):
    """The function ``name`` of the generated ``text``, jitted (with numba's disk cache when the
    cache directory is writable)."""
    require()
    full = header(batch) + text
    digest = hashlib.sha1(full.encode()).hexdigest()[:20]
    if digest in _MODULES:
        return _MODULES[digest]
    ns, on_disk = load_source(full, f"liedyn_gen_{digest}")
    fn = jit(ns[name], cache=on_disk)
    _MODULES[digest] = fn
    return fn
