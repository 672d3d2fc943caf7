"""The cache directory of the generated modules (integrators.backends.numba_kernels.cache_dir) under concurrent
callers: its writability probe must not make a writable directory look unwritable to one caller because another
removed a shared probe file (under pytest-xdist a module was then compiled in memory with CACHE = True in its text,
and numba refused to cache it). Expected: a writable directory is reported by every call."""

import threading

from integrators.backends import numba_kernels


def test_concurrent_probes_all_see_a_writable_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("LIEDYN_CACHE_DIR", str(tmp_path))
    seen = []

    def probe():
        seen.extend(numba_kernels.cache_dir() for _ in range(300))

    threads = [threading.Thread(target=probe) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 2400 and all(d == tmp_path for d in seen)
    assert not list(tmp_path.glob(".write_test*"))      # no probe left behind
