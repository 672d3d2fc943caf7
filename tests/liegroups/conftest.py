"""Run the liegroups tests with single-threaded OpenBLAS, restoring the previous thread counts after.

These tests make thousands of LAPACK/BLAS calls on tiny matrices (3x3 to 12x12). On a shared 2-core
machine OpenBLAS worker threads spin between such calls and multiply the CPU time by 3-5 (measured:
40 s of CPU with threads, 12 s without, same tests). Setting OPENBLAS_NUM_THREADS=1 before numpy is
imported does the same for the whole suite; this fixture only scopes it to this package. It uses
OpenBLAS's own set/get_num_threads through ctypes (what threadpoolctl does) and is a no-op if the
libraries are not found.
"""

import ctypes

import pytest

_PAIRS = (("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
          ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
          ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
          ("openblas_get_num_threads", "openblas_set_num_threads"))


def _openblas_controls():
    try:
        with open("/proc/self/maps") as fh:
            paths = {ln.split()[-1] for ln in fh if "openblas" in ln.lower() and len(ln.split()) >= 6}
    except OSError:
        return []
    controls = []
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for get, set_ in _PAIRS:
            if hasattr(lib, get) and hasattr(lib, set_):
                controls.append((getattr(lib, get), getattr(lib, set_)))
                break
    return controls


@pytest.fixture(autouse=True, scope="package")
def _single_threaded_blas():
    controls = _openblas_controls()
    saved = [get() for get, _ in controls]
    for _, set_ in controls:
        set_(1)
    yield
    for (_, set_), n in zip(controls, saved):
        set_(n)
