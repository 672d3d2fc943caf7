"""The queue of background compiles for backend="auto" and cold backend="numba" calls
(:mod:`integrators.backends.auto_compile` decides what to compile; this module runs it) and the policy
``LIEDYN_AUTO_COMPILE`` (:func:`policy`). The decisions' module imports what it calls (submit, poll, busy,
policy, FAILED).

Where the background compiles run (:func:`submit`): a specialised loop (a :class:`compile_child.Job
<integrators.backends.compile_child.Job>`) in a detached child process (:mod:`integrators.backends.compile_child`:
its own session, nice 10, stdin and stdout /dev/null; at most MAX_CHILDREN of this process at a time, and one per
loop across processes: a ``flock`` beside the loop's marker), which outlives the caller and leaves the loop in
numba's disk cache with its marker, where the next process finds it
(:func:`integrators.backends.auto_compile.specialised_on_disk`); this process loads it at a decision after the
child ended (:func:`poll`, a fraction of a second), a failed child is reported in :data:`FAILED` with its stderr.
The generic kernel compiles in a child process too (:func:`integrators.backends.generic_kernel.warm_elsewhere`,
waited on by a daemon thread). The kernels that are no plan's loop (the tangent flow, the compiled section, a
time-dependent problem's loops: :func:`integrators.backends.auto_compile.choose_kernel` and
:func:`integrators.backends.auto_compile.numba_or_cold`) compile in child processes as their jobs too. The thread
(nice 10) runs every compile when there is no writable cache directory (or no ``flock``): those die with the
process. Nothing here makes a call wait on a compiler: the caller's
thread loads from the disk cache only when no compile runs in this process (:func:`busy`).
The caches live in ``$LIEDYN_CACHE_DIR`` (default ``~/.cache/liedyn``): the generated modules, numba's cache beside
them (their ``__pycache__``, or ``$NUMBA_CACHE_DIR``), the markers ``liedyn_spec_*.ok`` and the locks
``liedyn_spec_*.ok.lock``.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time

from ..core.errors import MethodError
from . import compile_child

#: the values of LIEDYN_AUTO_COMPILE
POLICIES = ("background", "wait", "off")

#: at most this many background jobs waiting (a sweep over many structures does not queue hours of compiling)
MAX_PENDING = 4
#: at most this many child processes of this process compile specialised loops at once (the generic kernel's
#: child, :func:`integrators.backends.generic_kernel.warm_elsewhere`, may run beside them)
MAX_CHILDREN = 1
#: the children's state is looked at (:func:`poll`) at most this often by the decisions (seconds)
POLL_EVERY = 0.05

_LOCK = threading.Lock()
_JOBS = queue.Queue()
#: keys of the background jobs not finished: queued or running in the thread or a child, or a child's loop
#: not loaded here yet
_PENDING = set()
#: keys of the jobs of the background thread (compiles in this process: :func:`busy`)
_INPROC = set()
_THREAD = []
#: key -> compile_child.Job waiting for a child (MAX_CHILDREN running, or another process's child holds its lock)
_WAITING = {}
#: key -> (compile_child.Job, compile_child.Child) of the running children
_CHILDREN = {}
#: key -> compile_child.Job whose loop is in numba's disk cache (its child done, or its marker found), to load here
_READY = {}
#: keys whose child failed in this process: not started again (FAILED says why)
_GAVE_UP = set()
_LAST_POLL = [0.0]
#: (job key, error text) of background jobs that failed (the run that asked for them already ran); a child
#: process's failure with its stderr
FAILED = []


def policy():
    """The value of LIEDYN_AUTO_COMPILE ("background" when unset); MethodError naming the valid ones."""
    p = os.environ.get("LIEDYN_AUTO_COMPILE", "") or "background"
    if p not in POLICIES:
        raise MethodError(f"LIEDYN_AUTO_COMPILE={p!r} is not a policy; policies: {', '.join(POLICIES)}")
    return p


def busy():
    """True while a job of the background thread (a compile in this process, which holds numba's compiler lock)
    is queued or running; the children's compiles do not count (a load from the disk cache here waits on
    nothing). Picks up finished children first (:func:`poll`)."""
    poll()
    return bool(_INPROC)


def _worker():
    try:   # the compiles yield the CPU to the caller's work (Linux: the priority of this thread alone)
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
    except (AttributeError, OSError):
        pass
    while True:
        key, job = _JOBS.get()
        _run(key, job)


def _run(key, job, what=""):
    """Run a background job here (a compile in the thread, or the load of a child's loop); its error goes to
    FAILED (the caller's run did not depend on it), and the key leaves the pending ones."""
    try:
        job()
    except Exception as exc:  # noqa: BLE001 - reported in FAILED
        FAILED.append((key, f"{what}{type(exc).__name__}: {exc}"))
    finally:
        with _LOCK:
            _PENDING.discard(key)
            _INPROC.discard(key)


def submit(key, job):
    """Queue ``job`` unless a job of the same key is pending (or MAX_PENDING are, or the policy is "off"): a
    :class:`integrators.backends.compile_child.Job` (a specialised loop) in a detached child process when
    :func:`integrators.backends.compile_child.available` (started now, or at a later decision when MAX_CHILDREN
    run; not again after its child failed here), any other callable (and a Job without a writable cache
    directory) in the background thread. Returns True when it was queued now."""
    if policy() == "off":
        return False
    child = isinstance(job, compile_child.Job) and job.marker is not None and compile_child.available()
    with _LOCK:
        if key in _PENDING or len(_PENDING) >= MAX_PENDING or (child and key in _GAVE_UP):
            return False
        _PENDING.add(key)
        if child:
            _WAITING[key] = job
        else:
            _INPROC.add(key)
            if not _THREAD:
                th = threading.Thread(target=_worker, name="liedyn-background-compile", daemon=True)
                th.start()
                _THREAD.append(th)
    if child:
        poll(force=True)
    else:
        _JOBS.put((key, job))
    return True


def poll(force=False):
    """The children's bookkeeping, at the decisions (at most every POLL_EVERY s unless ``force``): a finished
    child's loop is loaded here from numba's disk cache (``job()``: a fraction of a second and the code
    generation of its text) unless the background thread compiles (:func:`busy`; then at a later poll), a
    failed one is reported in FAILED with its stderr; waiting jobs are started while fewer than MAX_CHILDREN
    run, a job whose marker is already there (another process's child, an earlier run) only loaded, one whose
    lock another process holds left waiting for that child's marker. Never waits on a compiler."""
    if not (_WAITING or _CHILDREN or _READY):
        return
    now = time.monotonic()
    if not force and now - _LAST_POLL[0] < POLL_EVERY:
        return
    _LAST_POLL[0] = now
    with _LOCK:
        for key, (job, child) in list(_CHILDREN.items()):
            state = child.done()
            if state is None:
                continue
            del _CHILDREN[key]
            ok, text = state
            if ok:
                _READY[key] = job
                if text:   # (warnings of a compile that succeeded: shown as the thread's would have been)
                    print(f"liedyn background compile {key[0]!r}: {text}", file=sys.stderr)
            else:
                FAILED.append((key, text))
                _GAVE_UP.add(key)
                _PENDING.discard(key)
        for key, job in list(_WAITING.items()):
            if job.marker.exists():
                del _WAITING[key]
                _READY[key] = job
                continue
            if len(_CHILDREN) >= MAX_CHILDREN:
                continue
            fd = compile_child.try_lock(job.marker)
            if fd is None:            # another process's child compiles this loop: its marker is awaited
                continue
            del _WAITING[key]
            if job.marker.exists():   # (its child finished since)
                os.close(fd)
                _READY[key] = job
                continue
            try:
                _CHILDREN[key] = (job, compile_child.start(job, fd))
            except OSError as exc:
                FAILED.append((key, f"the compile's child process could not be started: {exc}"))
                _GAVE_UP.add(key)
                _PENDING.discard(key)
        ready = [] if _INPROC else list(_READY.items())
        for key, _ in ready:
            del _READY[key]
    for key, job in ready:    # outside the lock: a load from numba's disk cache
        _run(key, job, "loading the loop compiled by a child process: ")


def children():
    """The process ids of the running children (compiles of specialised loops started by this process)."""
    with _LOCK:
        return [child.popen.pid for _, child in _CHILDREN.values()]


def wait(timeout=None):
    """Block until no background job is pending, the children's loops loaded here (for scripts and tests that
    want the compiled loops); True when none is left, False after ``timeout`` seconds."""
    waited = 0.0
    while True:
        poll(force=True)
        if not _PENDING:
            return True
        if timeout is not None and waited >= timeout:
            return False
        time.sleep(0.05)
        waited += 0.05
