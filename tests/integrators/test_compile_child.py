"""The background compile of a specialised loop in a detached child process (issue 24: a short script run again and
again gets its specialised loop; integrators.backends.compile_child, auto_compile.submit / background.poll).

The loops compiled here are the smallest: rk45 on so(3) (a few seconds of compile each, in a temporary
LIEDYN_CACHE_DIR), each on a structure of its own (a seeded inertia) so no other test's process has it. Expected
values: the numpy backend's run of the same generated loop, to round-off; "loaded, not compiled" is numba's own
count of the loop's disk-cache hits and misses. The timeouts only bound a broken run: nothing checks wall time.
"""

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from integrators import METHODS, integrate
from integrators.backends import auto_compile, compile_child, fastpath, numba_kernels
from integrators.backends import background as bg
from liegroups import named

from ._problems import quadratic_problem, start

pytestmark = pytest.mark.skipif(not numba_kernels.available() or compile_child.fcntl is None,
                                reason="numba not installed, or no flock")

ROOT = Path(__file__).resolve().parents[2]
#: generous bounds on a compile of a few seconds on a loaded machine (a broken run fails at them, nothing else)
TIMEOUT = 300
KW = dict(method="rk45", rtol=1e-9, atol=1e-11)


def _problem(seed):
    return quadratic_problem(named.so3(), seed), start(3, seed)


def _plan(seed):
    P, y0 = _problem(seed)
    M = METHODS["rk45"]
    return fastpath.plan(P, M.tableau, M.lie, M.terms, y0)


@pytest.fixture
def background(monkeypatch, tmp_path):
    """Policy "background" with the caches in an empty directory; a child left running at the end is stopped."""
    monkeypatch.setenv("LIEDYN_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("LIEDYN_AUTO_COMPILE", "background")
    pids = []
    yield pids
    for pid in pids + bg.children():
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass


# a fresh process: one backend="numba" call (the generic kernel's own compile, 8 s, is not under test here and is
# kept out: its child would also outlive the process), then it exits at once
_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    from integrators import integrate
    from integrators.backends import background, generic_kernel, plan
    from tests.integrators._problems import quadratic_problem, start
    from liegroups import named
    generic_kernel.warm_elsewhere = lambda: None
    seed = int(sys.argv[1])
    r = integrate(quadratic_problem(named.so3(), seed), start(3, seed), (0.0, 2.0), backend="numba", method="rk45",
                  rtol=1e-9, atol=1e-11)
    stats = [fn.stats for pl in plan._PLANS.values() for (kind, mode), fn in pl._functions.items()
             if mode == "numba" and kind == "adaptive"]
    print(json.dumps({"backend": r.backend, "children": background.children(), "y": r.y.tolist(),
                      "hits": sum(sum(s.cache_hits.values()) for s in stats),
                      "misses": sum(sum(s.cache_misses.values()) for s in stats)}))
""")


def _fresh_process(seed, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), LIEDYN_CACHE_DIR=str(tmp_path), LIEDYN_AUTO_COMPILE="background",
               OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", _SCRIPT, str(seed)], capture_output=True, text=True, env=env,
                         cwd=ROOT, timeout=TIMEOUT)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _until(cond, what):
    t = time.monotonic()
    while not cond():
        assert time.monotonic() - t < TIMEOUT, f"no {what} after {TIMEOUT} s"
        time.sleep(0.1)


def test_a_short_process_leaves_a_child_that_compiles_the_loop_for_the_next_process(background, tmp_path):
    seed = 901
    first = _fresh_process(seed, tmp_path)
    background += first["children"]
    assert first["backend"] == "numpy" + auto_compile.NUMBA_NUMPY_NOTE    # nothing compiled yet, nothing waited on
    assert len(first["children"]) == 1                   # the specialised loop's compile, in a child process
    marker = auto_compile._spec_marker(_plan(seed), "adaptive")
    _until(marker.exists, "marker of the loop")          # written by the child after the process ended

    def gone(pid=first["children"][0]):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return Path(f"/proc/{pid}/stat").exists() and Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    _until(gone, "end of the child")
    fd = compile_child.try_lock(marker)                   # its lock went with it
    assert fd is not None
    os.close(fd)
    assert not list(tmp_path.glob("*.job")) and not list(tmp_path.glob("*.err"))   # nothing left behind
    second = _fresh_process(seed, tmp_path)
    assert second["backend"] == "numba" and second["children"] == []     # the specialised loop, at once
    assert second["hits"] >= 1 and second["misses"] == 0                 # loaded from the child's disk cache
    P, y0 = _problem(seed)
    ref = integrate(P, y0, (0.0, 2.0), backend="numpy", **KW)
    y = np.array(second["y"])
    assert y.shape == ref.y.shape and np.max(np.abs(y - ref.y)) <= 1e-12 * (1.0 + np.max(np.abs(ref.y)))
    assert np.array_equal(np.array(first["y"]), ref.y)                  # (the first process ran numpy's loop)


def test_the_process_loads_the_childs_loop_and_the_lock_keeps_a_second_child_out(background):
    pl = _plan(902)
    marker = auto_compile._spec_marker(pl, "adaptive")
    held = compile_child.try_lock(marker)           # as another process's child compiling this loop holds it
    assert held is not None
    try:
        auto_compile._queue(pl, ("adaptive",), 2.0, 1e-9, 1e-11, None)
        assert not bg.wait(1.0)           # waits for that child's marker: starts none of its own
        assert bg.children() == [] and not marker.exists() and not auto_compile.compiled(pl, "adaptive")
    finally:
        os.close(held)                              # that child ended without a marker: this process starts one
    bg.poll(force=True)                    # (the next decision)
    assert len(bg.children()) == 1
    background += bg.children()
    assert bg.wait(TIMEOUT)
    assert marker.exists() and auto_compile.compiled(pl, "adaptive")       # picked up at a decision
    stats = pl.function("adaptive", "numba").stats
    assert sum(stats.cache_hits.values()) >= 1 and not stats.cache_misses   # loaded here, compiled by the child
    assert not [k for k, _ in auto_compile.FAILED if k[1] == pl.st.key]
    P, y0 = _problem(902)
    a = integrate(P, y0, (0.0, 2.0), backend="numba", **KW)
    b = integrate(P, y0, (0.0, 2.0), backend="numpy", **KW)
    assert a.backend == "numba" and a.nsteps == b.nsteps
    assert np.max(np.abs(a.y - b.y)) <= 1e-12 * (1.0 + np.max(np.abs(b.y)))


def test_a_failing_child_is_reported_with_its_stderr_and_not_started_again(background):
    pl = _plan(903)
    keys = [("bogus", pl.st.key, i) for i in range(2)]
    for i, key in enumerate(keys):    # a loop kind the code generator has no function "run" for: KeyError
        auto_compile.submit(key, auto_compile._job(auto_compile._warm_single, pl, f"bogus{i}", "bogus", 1.0, 1e-9,
                                                   1e-11, None))
    assert len(bg.children()) == 1        # MAX_CHILDREN: the second waits for the first
    background += bg.children()
    assert bg.wait(TIMEOUT)
    failed = [msg for k, msg in auto_compile.FAILED if k in keys]
    assert len(failed) == 2 and all("child process" in m and "Traceback" in m and "KeyError: 'run'" in m
                                    for m in failed)
    auto_compile.submit(keys[0], auto_compile._job(auto_compile._warm_single, pl, "bogus0", "bogus", 1.0, 1e-9,
                                                   1e-11, None))
    assert bg.children() == [] and not bg._PENDING & set(keys)     # FAILED said why
    assert not list(Path(os.environ["LIEDYN_CACHE_DIR"]).glob("*.err"))


def test_a_job_runs_in_the_thread_without_a_child_process_and_not_at_all_under_off(background, monkeypatch):
    done = []
    job = compile_child.Job(lambda pl, x: done.append((pl, x)), ("plan", 1), None)     # no marker: no cache dir
    auto_compile.submit(("thread-job", 1), job)
    assert bg.wait(TIMEOUT) and done == [("plan", 1)] and bg.children() == []
    monkeypatch.setattr(compile_child, "available", lambda: False)
    job = compile_child.Job(lambda pl, x: done.append((pl, x)), ("plan", 2), Path("unused.ok"))
    auto_compile.submit(("thread-job", 2), job)
    assert bg.wait(TIMEOUT) and done[-1] == ("plan", 2) and bg.children() == []
    monkeypatch.setenv("LIEDYN_AUTO_COMPILE", "off")
    auto_compile.submit(("thread-job", 3), job)
    assert not bg._PENDING and len(done) == 2
