"""The generic ensemble kernel: ensemble="independent" on the generic compiled loop, compiled once per machine.

The text of :mod:`integrators.codegen.generic_ensemble_source` (the generic loop of
:mod:`integrators.codegen.generic_source` and a ``numba.prange`` over groups of trajectories) jitted with numba's
disk cache, in its own module (``liedyn_generic_ens_*`` in the cache directory of
:mod:`integrators.backends.numba_kernels`): the one-trajectory kernel (:mod:`integrators.backends.generic_kernel`)
keeps its text and cache, and a process that never runs an ensemble never loads this one. The structure constants,
tableau and projection are the arrays of :func:`integrators.backends.generic_kernel.data`, so no algebra compiles
anything: the specialised ensemble kernel of a new algebra (:func:`integrators.backends.batch_kernels.adaptive_independent`)
takes minutes on a random basis, and "auto" / cold backend="numba" ensembles run this one meanwhile
(:func:`integrators.backends.auto_compile.choose_independent`).

:func:`run` has the arguments and returns of :func:`integrators.backends.batch_kernels.adaptive_independent`; every
row equals the one-trajectory generic kernel's run from that y0 to round-off (the ambient pairs without an output
grid in lanes, :func:`lane_count`; the others one trajectory after another in each group). :func:`warm` compiles
(or loads) it and writes the disk-cache marker (:func:`on_disk`); :func:`warm_elsewhere` compiles it in a child
process at nice 10 (a compile in a thread of the caller starves its Python loop): 39-54 s of compile on 2 cores at
load 2-4 (its loops and the generic loop's functions again, in this module), 0.24-0.3 s to load.

Measured (benchmarks/drawn_systems.py's ensemble part, draw 24, 10^4 states, final error <= 1e-8 over 64, t in
[0, 10], 2 cores at load 3.2-3.8 shared with other jobs; CPU time of the whole ``simulate`` call, median of 3,
against the best of diffrax's Dopri8 / Tsit5, JAX jit + vmap): the generic ensemble kernel 0.128x (Bianchi VI_-2.5,
servo1, rk853; the specialised kernel 0.055x), 0.131x (sl(3), servo1; specialised 0.146x in the same run), 0.256x
(so(4), free, rk853_projected; specialised 0.156x), 0.181x (sp(4), free), 0.423x (R x_D R^5 in a random basis,
servo1), 6.8x (R x_D R^8 in a random basis, free, rkmk853: an RKMK pair runs one trajectory after another, the
9 x 9 exponential and dexp^-1 as series; the specialised kernel 4.8x in an earlier run). The kernel's own CPU time
is 57-98 % of these calls (the rest is the call's Python: starting steps, the end-of-run check); in lanes it is
1.4-3.7x the specialised lanes' (dense W, P and the sparse C as data, where the specialised text folds the
constants: ~5400 flops an attempt on sl(3) servo1).
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np

from ..codegen import generic_ensemble_source
from ..geometry.recognition import Structure
from ..tableaux.dormand_prince import DP5
from . import generic_kernel, numba_kernels

_KERNEL = []

#: groups of trajectories per thread: a thread that finishes its group takes the next (numba's chunk size one
#: group), so uneven trajectories balance over the threads; each group allocates its work arrays once
GROUPS_PER_THREAD = 8


def _text():
    """The module text with its jit lines: the allocating functions with numba's reference counting (the entry
    also ``parallel=True``), every other one without."""
    free = numba_kernels.no_refcount_option()
    jits = []
    for name in generic_ensemble_source.generic_source.FUNCTIONS + generic_ensemble_source.FUNCTIONS:
        opts = "" if name in generic_ensemble_source.ALLOCATING else free
        if name == generic_ensemble_source.ENTRY:
            opts += "parallel=True, "
        jits.append(f"{name} = numba.njit({opts}nogil=True, **JIT)({name})\n")
    return generic_ensemble_source.text() + "\n" + "".join(jits)


def kernel():
    """The parallel entry (:data:`integrators.codegen.generic_ensemble_source.ENTRY`), jitted once per process
    (MethodError without numba)."""
    if not _KERNEL:
        ns = numba_kernels.load_module(_text(), "liedyn_generic_ens", "the generic ensemble kernel")
        _KERNEL.append(ns[generic_ensemble_source.ENTRY])
    return _KERNEL[0]


def compiled():
    """True when the kernel is compiled or loaded in this process (a call then needs no compiler)."""
    return bool(_KERNEL) and bool(_KERNEL[0].signatures)


def _marker():
    """The file that says the kernel was compiled into numba's disk cache (per text, numba and Python version and
    helpers), or None when the cache directory is not writable."""
    return numba_kernels.kernel_marker(_text(), "liedyn_generic_ens", "the generic ensemble kernel")


def on_disk():
    """True when numba's disk cache holds the kernel (its marker, written after the first compile): loading it
    takes about a second, no compile."""
    m = _marker()
    return m is not None and m.exists()


#: the lanes' arrays of one group (the stages K (s + 1, n, L) and a dozen more (n, L)) are kept within about this
#: many floats (512 kB: in the core's L2 cache)
LANE_FLOATS = 65536
#: groups per thread of the lanes (each group's lanes run idle while its last trajectories finish: few groups)
LANE_GROUPS_PER_THREAD = 2


def lane_count(n, s):
    """Lanes of a group (:mod:`integrators.codegen.generic_ensemble_source`, the ambient pairs) for a state of n
    components and s stages: a power of two in [8, 128], K (s + 1, n, L) and the lanes' other arrays within about
    LANE_FLOATS floats. More lanes amortize the loops' set-up over more trajectories: measured on 10^4 servo1 states
    on sl(3) (rk853, n = 8, 2 groups), 102 / 95 / 81 / 69 ms of CPU with 16 / 32 / 64 / 128 lanes, 115 with 512;
    free states on so(4) (rk853_projected, n = 6) 28.5 / 22.4 / 18.5 / 17.9 ms with 16 / 32 / 64 / 128."""
    L = 8
    while L < 128 and 2 * L * n * (s + 12) <= LANE_FLOATS:
        L *= 2
    return L


def run(pl, Z, H0, t0, t1, rtol, atol, max_step, max_steps=10**6, t_eval=None):
    """Each row of Z (B, n) from t0 to t1 by the adaptive pair of plan ``pl`` on the generic kernel, with its own
    first step H0[b] (<= 0: Hairer's starting step), at most ``max_steps`` accepted steps each; returns what
    :func:`integrators.backends.batch_kernels.adaptive_independent` returns: (Y (B, n), status (B,), t_end (B,),
    nsteps (B,), nrejected (B,), YE, PK (B, 3)): with ``t_eval`` (sorted in the direction of integration) YE
    (G, B, n), the grid times at t0 holding y0 and a trajectory that stopped early its last finite state at the later
    times (else None); PK[b] the peak (zmax, tmax, hmax) of trajectory b's accepted steps.
    ValueError for a grid with a tableau without a continuous extension."""
    if t_eval is not None and pl.tab.P is None:
        raise ValueError(f"tableau {pl.tab.name!r} has no continuous extension: no output grid")
    numba = numba_kernels.require("the generic ensemble kernel")
    kern = kernel()
    arrays = generic_kernel.data(pl.st, pl.tab, pl.lie, pl.terms, pl.proj)
    n = pl.st.n
    Z = np.array(Z, dtype=float, order="C", ndmin=2)
    B = Z.shape[0]
    out = np.empty_like(Z)
    st, te = np.empty(B, np.int64), np.empty(B)
    ns, nr = np.empty(B, np.int64), np.empty(B, np.int64)
    PK = np.zeros((B, 3))
    H0 = np.array(np.broadcast_to(np.asarray(H0, dtype=float), (B,)), order="C")
    CZ = np.array(pl.targets(Z), dtype=float, order="C").reshape(B, -1)
    if t_eval is None:
        tev, YE = np.zeros(0), np.empty((B, 0, n))
        GI = np.zeros(B, np.int64)
    else:                   # the grid times at t0 take y0; each trajectory fills its rows from the next one
        tev = np.array(t_eval, dtype=float, order="C")
        k = int(np.sum(tev == t0))
        YE = np.empty((B, len(tev), n))
        YE[:, :k] = Z[:, None, :]
        GI = np.full(B, k, np.int64)
    lanes = 0 if pl.lie or t_eval is not None else lane_count(n, len(pl.tab.b))
    groups = max(1, min(B, (LANE_GROUPS_PER_THREAD if lanes else GROUPS_PER_THREAD) * numba.get_num_threads()))
    if lanes:   # (no more lanes than a group has trajectories)
        lanes = min(lanes, -(-B // groups))
    old = numba.set_parallel_chunksize(1)
    try:
        with np.errstate(all="ignore"):
            kern(float(t0), float(t1), H0, float(rtol), float(atol), float(max_step), int(max_steps), Z, out, st, te,
                 ns, nr, CZ, tev, YE, GI, PK, groups, lanes, *arrays)
    finally:
        numba.set_parallel_chunksize(old)
    if t_eval is None:
        return out, st, te, ns, nr, None, PK
    for b in np.flatnonzero(st != 0):   # stopped early: its last finite state at the later grid times
        YE[b, GI[b]:] = out[b]
    return out, st, te, ns, nr, np.ascontiguousarray(YE.transpose(1, 0, 2)), PK


def warm():
    """Compile (or load from numba's disk cache) the kernel with its one signature by an ensemble of one
    trajectory over an empty interval on the Heisenberg algebra, and write the disk-cache marker
    (:func:`on_disk`); returns the kernel."""
    kern = kernel()
    n = 3
    C = np.zeros((n, n, n))
    C[0, 1, 2], C[1, 0, 2] = 1.0, -1.0
    arrays = generic_kernel._build(Structure(C, np.eye(n), np.zeros(n)), DP5, False, 1, None)
    Z = np.zeros((1, n))
    kern(0.0, 0.0, np.ones(1), 1e-6, 1e-6, math.inf, 1, Z, np.empty_like(Z), np.empty(1, np.int64), np.empty(1),
         np.empty(1, np.int64), np.empty(1, np.int64), np.zeros((1, 0)), np.zeros(0), np.empty((1, 0, n)),
         np.zeros(1, np.int64), np.zeros((1, 3)), 1, 8, *arrays)
    numba_kernels.write_marker(_marker())
    return kern


def warm_elsewhere():
    """Compile the kernel into numba's disk cache in a child process at nice 10 and return when it is done
    (:func:`warm` there; as :func:`integrators.backends.generic_kernel.warm_elsewhere`); this process then loads it
    from disk. Without a writable cache directory: :func:`warm` here."""
    if numba_kernels.cache_dir() is None:
        warm()
        return
    root = str(Path(__file__).resolve().parents[2])
    code = ("import os, sys\ntry:\n    os.nice(10)\nexcept (AttributeError, OSError):\n    pass\n"
            f"sys.path.insert(0, {root!r})\nfrom integrators.backends import generic_ensemble\n"
            "generic_ensemble.warm()\n")
    subprocess.run([sys.executable, "-c", code], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE, start_new_session=True, check=True)
