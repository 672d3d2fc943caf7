"""The background compile of a specialised loop in a detached child process (:mod:`integrators.backends.background`,
for :mod:`integrators.backends.auto_compile`).

A compile in a thread of the caller's process dies with the process (a short script run again and again never
got its specialised loop: 20-25 ms a call instead of 0.6-0.8 ms, RESULTS "forced_lie") and holds the interpreter
lock in long stretches (a numpy run of 6-9 s took 53 s beside the generic kernel's compile). Here the compile
runs in a child process started in its own session at nice 10 (stdin and stdout /dev/null, stderr a file in the
cache directory), which survives the caller and fills numba's disk cache; the caller loads the loop from there
when the child is done (:func:`integrators.backends.background.poll`).

What the child compiles: a :class:`Job` names a module-level warm function (``auto_compile._warm_single``,
``_warm_grid``, ``_warm_batch``, ``_warm_fixed``, ``batch_kernels.warm_fixed``, ``warm_independent``) and its
arguments, and carries the plan as its data (structure, tableau, form, dexp^-1 terms, projection: a few kB of
pickle, no problem is rebuilt; a time-dependent problem's plan, the text of its coefficients). The child rebuilds
the plan and calls the same warm function, so it writes the same generated module file in the cache directory
(:func:`integrators.backends.numba_kernels.load_source`, named by the hash of the text) and compiles the same
functions with the argument types of the engine's calls: numba's cache index is keyed by that file and the
function, so the caller's later warm call of the same job is a load from the disk cache (a fraction of a
second plus the code generation of the text). The child then writes the loop's marker (``job.marker``,
:func:`integrators.backends.auto_compile.specialised_on_disk`).

No two children compile the same loop at once, across processes too: the child holds ``flock`` on
``<marker>.lock`` (taken by the caller before the start and handed down; the kernel drops it when the child
exits, however it ends, so no lock goes stale). A caller that finds the lock held waits for that child's
marker instead of starting its own.

The files of a job, beside its marker in the cache directory (``$LIEDYN_CACHE_DIR``, default ``~/.cache/liedyn``):
``<marker stem>.<pid>.job`` (the pickle, removed by the child once read) and ``<marker stem>.<pid>.err`` (the
child's stderr, read and removed by the caller when the child is done; left there when the caller exited first
and the child failed).
"""

from __future__ import annotations

import importlib
import os
import pickle
import subprocess
import sys
import traceback
from pathlib import Path

from . import numba_kernels

try:
    import fcntl
except ImportError:      # (Windows: the compiles stay in the caller's background thread)
    fcntl = None

#: the root of the liedyn tree the child imports (the caller's)
_ROOT = str(Path(__file__).resolve().parents[2])

_CODE = ("import sys\nsys.path.insert(0, {root!r})\nfrom integrators.backends import compile_child\n"
         "sys.exit(compile_child.main(sys.argv[1:]))\n")


def available():
    """True when a background compile can run in a child process: a writable cache directory (where the child
    leaves numba's disk cache and the marker) and ``flock`` (POSIX)."""
    return fcntl is not None and numba_kernels.cache_dir() is not None


class Job:
    """A background compile: ``fn(*args)`` (a function or method defined at a module's top level: the child imports
    it by its qualified name), whose result is in numba's disk cache once ``marker`` exists. Called in this process
    (the thread path, or the load after the child is done) it runs ``fn(*args)`` here."""

    def __init__(self, fn, args, marker):
        self.fn, self.args, self.marker = fn, tuple(args), marker

    def __call__(self):
        return self.fn(*self.args)

    def payload(self):
        """What the child needs, pickled: the function's module and qualified name and the arguments (a plan
        pickled as its data: :class:`integrators.backends.plan.Plan`, a time-dependent problem's
        :class:`integrators.backends.timed_adaptive.AdaptivePlan`, a
        :class:`integrators.backends.tangent_runner.TangentPlan`)."""
        return pickle.dumps((self.fn.__module__, self.fn.__qualname__, self.args, str(self.marker)))


def resolve(modname, qualname):
    """The function ``qualname`` (dotted for a method: ``AdaptivePlan.warm``) of module ``modname``."""
    fn = importlib.import_module(modname)
    for part in qualname.split("."):
        fn = getattr(fn, part)
    return fn


def try_lock(marker):
    """An open descriptor of ``<marker>.lock`` holding its exclusive ``flock``, or None when another process holds
    it (a child compiling this loop)."""
    fd = os.open(str(marker) + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


class Child:
    """A started child: ``popen``, its stderr file ``err``."""

    def __init__(self, popen, err):
        self.popen, self.err = popen, err

    def done(self):
        """None while running, else (ok, the error text when it failed: its stderr or how it ended)."""
        rc = self.popen.poll()
        if rc is None:
            return None
        try:
            text = self.err.read_text(errors="replace").strip()
            self.err.unlink()
        except FileNotFoundError:   # (removed by the child: it succeeded without a word)
            text = ""
        except OSError as exc:
            text = f"(its stderr {self.err} could not be read: {exc})"
        if rc == 0:
            return True, text
        how = f"killed by signal {-rc}" if rc < 0 else f"exit status {rc}"
        return False, f"the compile's child process (pid {self.popen.pid}) failed, {how}:\n{text[-4000:]}"


def start(job, fd):
    """Start the child of ``job`` holding the lock ``fd`` (from :func:`try_lock`; closed here: the child keeps it);
    returns a :class:`Child`. OSError when it cannot be started."""
    stem = job.marker.with_suffix("")
    pid = os.getpid()
    payload = Path(f"{stem}.{pid}.job")
    err = Path(f"{stem}.{pid}.err")
    try:
        payload.write_bytes(job.payload())
        env = dict(os.environ, LIEDYN_AUTO_COMPILE="off")   # (the child queues nothing itself)
        with open(err, "wb") as ferr:
            popen = subprocess.Popen([sys.executable, "-c", _CODE.format(root=_ROOT), str(payload), str(err)],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=ferr,
                                     start_new_session=True, close_fds=True, pass_fds=(fd,), env=env)
    except BaseException:
        payload.unlink(missing_ok=True)
        err.unlink(missing_ok=True)
        raise
    finally:
        os.close(fd)
    return Child(popen, err)


def main(argv):
    """The child: ``argv`` = [the payload's path, its stderr file]; compiles the job, writes its marker; 0 (its
    stderr file removed when empty: the caller may have exited), or 1 with the traceback on stderr."""
    try:
        os.nice(10)
    except (AttributeError, OSError):
        pass
    try:
        path = Path(argv[0])
        modname, qualname, args, marker = pickle.loads(path.read_bytes())
        path.unlink()
        resolve(modname, qualname)(*args)
        marker = Path(marker)          # (an OSError here is a failure too: the next process would not find it)
        tmp = marker.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text("")
        os.replace(tmp, marker)
    except Exception:  # noqa: BLE001 - the traceback is the caller's report (background.FAILED)
        traceback.print_exc()
        return 1
    try:
        err = Path(argv[1])
        if err.stat().st_size == 0:
            err.unlink()
    except OSError:
        pass
    return 0
