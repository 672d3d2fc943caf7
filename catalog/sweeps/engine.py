"""The sweep engine: points in chunks, each chunk one dask task, results reassembled by point index.

:func:`sweep` evaluates a measure at every point of a grid. With ``dask.distributed`` installed (the
optional extra ``liedyn[distributed]``) the chunks run as tasks on

* the cluster behind ``client`` (a ``distributed.Client``), or
* the scheduler at ``scheduler`` ("tcp://host:8786"), or
* a ``LocalCluster`` with one single-threaded worker process per core (``workers`` to choose the number),
  created for the sweep and closed after it.

Without dask, or with ``serial=True``, the same chunks run one after the other in this process (a
:class:`SweepWarning` says so when dask is missing). Every point is evaluated on its own with the same
code, and the result is reassembled by point index, so the table does not depend on the number of
workers or on the order in which chunks finish (bitwise for fixed-step methods). Results move to the
client as each task ends; when a worker dies mid-sweep, the scheduler runs its chunk again on another
worker, and each chunk's result is kept once.

A point whose evaluation raises a ``ValueError`` or ``ArithmeticError`` (an unrealizable constraint, a
solution that blows up, ...) gets its message in the ``error`` column and missing values elsewhere
(``errors="record"``, the default); ``errors="raise"`` stops the sweep instead. A :class:`SweepError`
(wrong key, a measure that does not apply) always stops it.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import sys
import time
import uuid
import warnings
from collections.abc import Callable, Iterator, Sequence
from os import PathLike
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ..registry import Entry
from .grid import Grid, SweepError, as_grid
from .line_tracking import track_lines
from .measures import Measure, Point, get_measure
from .output import chunk_columns, figure, save, sweep_text, tidy_table
from .store import ChunkStore, done_mask, fingerprint
from .target import Target, make_target

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from pandas import DataFrame

log = logging.getLogger("catalog.sweeps")


class SweepWarning(UserWarning):
    """The sweep runs serially because dask.distributed is not installed."""


@dataclass
class SweepResult:
    """The outcome of :func:`sweep`.

    ``columns``: dict name -> array (``index``, the grid keys, the measure's columns, ``error``), one row
    per point in point order; ``table``: the same as a pandas DataFrame when pandas is installed, else
    the dict itself; ``info``: engine ("dask" or "serial"), workers, chunk, tasks, wall time (s)."""

    columns: dict[str, NDArray[Any]]
    grid: Grid
    measure: str
    target: str
    info: dict[str, Any] = field(default_factory=dict)

    __repr__ = sweep_text  # print(result): a summary of at most 30 lines, not the arrays

    @property
    def table(self) -> DataFrame | dict[str, NDArray[Any]]:
        try:
            import pandas as pd
        except ImportError:
            return self.columns
        return pd.DataFrame(self.columns)

    @property
    def failed(self) -> int:
        """Number of points whose evaluation raised (see the ``error`` column)."""
        return int(np.count_nonzero(self.columns["error"] != ""))

    def column(self, name: str) -> NDArray[Any]:
        if name not in self.columns:
            raise SweepError(f"no column {name!r}; columns: {', '.join(self.columns)}")
        return self.columns[name]

    def on_grid(self, name: str) -> NDArray[Any]:
        """Column ``name`` reshaped to the grid: ``a[i_1, ..., i_d]`` at the axes' values (full grids only)."""
        if self.grid.kind != "grid":
            raise SweepError("random samples have no grid shape; use column() with the sampled keys")
        return self.column(name).reshape(self.grid.shape)

    def figure(self, columns: Sequence[str] | None = None) -> Figure:
        """A matplotlib figure: curves over one varying key, a heat map over two (see output.figure)."""
        return figure(self, columns)

    def save(self, out: str | PathLike[str], fmt: str = "csv", plot: bool = True) -> dict[str, str | None]:
        """Write the table (``sweep.csv`` or ``sweep.parquet``), ``sweep.json`` and ``sweep.png`` into ``out``."""
        return save(self, out, fmt, plot)


def _evaluate_chunk(target: Target, measure: Measure, indices: NDArray[np.int64], values: dict[str, NDArray[np.float64]],
                    errors: str) -> tuple[NDArray[np.int64], dict[str, Any]]:
    """The columns of the points ``indices`` (values: key -> array over the chunk): the task of one chunk."""
    rows = []
    for j in range(len(indices)):
        point = Point(target, {k: float(v[j]) for k, v in values.items()})
        try:
            row = measure(point)
            row["error"] = ""
        except SweepError:
            raise
        except (ValueError, ArithmeticError) as exc:
            if errors == "raise":
                raise
            row = {"error": f"{type(exc).__name__}: {' '.join(str(exc).split())}"}
        rows.append(row)
    return np.asarray(indices), chunk_columns(rows)


def default_chunk(n: int, threads: int) -> int:
    """Points per task: about 4 tasks per worker thread (load balance, cheap retries), at most 10^4."""
    return max(1, min(10_000, math.ceil(n / (4 * max(1, threads)))))


def _chunks(g: Grid, chunk: int, todo: NDArray[np.int64] | None = None
            ) -> Iterator[tuple[NDArray[np.int64], dict[str, NDArray[np.float64]]]]:
    todo = np.arange(g.size) if todo is None else todo
    for s in range(0, len(todo), chunk):
        idx = todo[s:s + chunk]
        yield idx, {k: v[idx] for k, v in g.values.items()}


def _validate(target: Target, g: Grid, m: Measure) -> None:
    """Build point 0 (or the defaults) here and ask the measure whether it applies, before any task runs."""
    entry = None
    for vals in (g.point(0), {}):
        try:
            entry = target.build(vals)
            break
        except SweepError:
            raise
        except Exception:  # this point fails; its error is recorded in the sweep
            continue
    if entry is not None:
        m.validate(entry)


def _run_serial(target, m, g, chunk, errors, todo=None, keep=None):
    out = []
    for idx, vals in _chunks(g, chunk, todo):
        out.append(_evaluate_chunk(target, m, idx, vals, errors))
        if keep is not None:
            keep(*out[-1])
    return out, {"engine": "serial", "workers": 1, "chunk": chunk, "tasks": len(out)}


def _local_cluster(workers):
    from distributed import Client, LocalCluster

    if workers:
        n = int(workers)
    else:
        n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    cluster = LocalCluster(n_workers=max(1, n), threads_per_worker=1, processes=True, dashboard_address=":0",
                           silence_logs=logging.ERROR)
    return Client(cluster), cluster


def _connect(scheduler):
    from distributed import Client

    try:
        return Client(scheduler, timeout="10s")
    except (OSError, TimeoutError) as exc:
        raise SweepError(f"cannot reach the dask scheduler at {scheduler!r}: {' '.join(str(exc).split())}") from None


def _run_dask(client, target, m, g, chunk, errors, progress, todo=None, keep=None):
    import distributed

    threads = sum(client.nthreads().values())
    chunk = int(chunk or default_chunk(g.size, threads))
    tag = uuid.uuid4().hex[:8]
    futures = [client.submit(_evaluate_chunk, target, m, idx, vals, errors, pure=False,
                             key=f"sweep-{m.name}-{tag}-{i}")
               for i, (idx, vals) in enumerate(_chunks(g, chunk, todo))]
    try:
        if progress:
            with contextlib.redirect_stdout(sys.stderr):  # the bar on stderr: stdout may carry --json
                distributed.progress(futures)
        out = []
        # each result moves to the client as soon as its task ends (a worker lost late then costs only its
        # running chunk, not every result it was holding); the exception of a failed task is raised here
        for fut, res in distributed.as_completed(futures, with_results=True):
            out.append(res)
            if keep is not None:
                keep(*res)
            fut.release()
    finally:
        client.cancel(futures)
    return out, {"engine": "dask", "workers": len(client.scheduler_info()["workers"]), "threads": threads,
                 "chunk": chunk, "tasks": len(futures), "scheduler": client.scheduler.address}


def sweep(entry_or_factory: str | Entry | Callable[..., Entry], grid: Grid | dict[str, Any],
          measure: str | Callable[..., Any], client: Any = None, chunk: int | None = None, *,
          options: dict[str, Any] | None = None, fixed: dict[str, Any] | None = None, errors: str = "record", workers: int | None = None,
          scheduler: str | None = None, serial: bool = False, progress: bool | None = None,
          store: str | PathLike[str] | None = None) -> SweepResult:
    """Evaluate ``measure`` at every point of ``grid`` for ``entry_or_factory``; a :class:`SweepResult`.

    Parameters
    ----------
    entry_or_factory : an entry name (``catalog.get(name, **point)`` builds each point), a
        :class:`catalog.Entry`, or a ``factory(**point) -> Entry``.
    grid : :func:`catalog.sweeps.grid`, :func:`catalog.sweeps.samples`, or a dict of axes
        (``{"I1": "1:3:41", "n[2]": [0, 0.5, 1], "y0[0]": "0:1:5"}``).
    measure : a name (``realizability``, ``invariant_lines``, ``integrals_drift``, ``exact_error``,
        ``friction_rate``, ``empty``) or a callable ``f(entry) -> number | dict``; ``options`` binds a named
        measure's options (e.g. ``{"method": "rk4", "steps": 200}``).
    client : a ``distributed.Client``; ``scheduler`` an address to connect to; neither: a LocalCluster
        with ``workers`` processes (default: one per core). ``serial=True`` runs in this process.
    chunk : points per task (default :func:`default_chunk`). ``fixed``: parameters held for every point.
    errors : "record" (failed points get their message in the ``error`` column) or "raise".
    progress : dask's progress bar on stderr (default: only when stderr is a terminal).
    store : a directory: finished chunks are written there as they end, and a rerun with the same
        arguments evaluates only the points not stored yet (the same table as an uninterrupted run;
        :mod:`catalog.sweeps.store`). ``info["resumed"]`` counts the points read back.
    """
    if errors not in ("record", "raise"):
        raise SweepError(f"errors must be 'record' or 'raise', got {errors!r}")
    if chunk is not None and (int(chunk) != chunk or chunk < 1):
        raise SweepError(f"chunk must be a positive integer, got {chunk!r}")
    if workers is not None and (int(workers) != workers or workers < 1):
        raise SweepError(f"workers must be a positive integer, got {workers!r}")
    target = make_target(entry_or_factory, **(fixed or {}))
    g = as_grid(grid)
    target.check_keys(g.keys)
    m = get_measure(measure, **(options or {}))
    _validate(target, g, m)
    if progress is None:
        progress = bool(getattr(sys.stderr, "isatty", lambda: False)())
    t0 = time.perf_counter()
    stored, todo, keep = [], None, None
    if store is not None:
        cs = ChunkStore(store, fingerprint(target, g, m, fixed, errors))
        stored = cs.load(g.size)
        todo, keep = np.nonzero(~done_mask(stored, g.size))[0], cs.write
        serial = serial or len(todo) == 0        # everything stored: no cluster to start
    if not serial and client is None:
        try:
            import distributed  # noqa: F401
        except ImportError:
            msg = (f"dask.distributed is not installed: the {g.size} points run serially in this process "
                   f"(pip install 'liedyn[distributed]' to run them on a cluster)")
            warnings.warn(msg, SweepWarning, stacklevel=2)
            log.warning(msg)
            serial = True
    if serial:
        # with a store, chunks small enough that an interruption loses little (about 16 per sweep)
        serial_chunk = default_chunk(g.size, 4) if store is not None else max(1, min(g.size, 10_000))
        out, info = _run_serial(target, m, g, int(chunk or serial_chunk), errors, todo, keep)
    else:
        own = []
        try:
            if client is None:
                if scheduler:
                    client = _connect(scheduler)
                    own = [client]
                else:
                    client, cluster = _local_cluster(workers)
                    own = [client, cluster]
            out, info = _run_dask(client, target, m, g, chunk, errors, progress, todo, keep)
        finally:
            for obj in own:
                obj.close()
    info["wall_time"] = time.perf_counter() - t0
    if store is not None:
        out = stored + list(out)
        info["resumed"] = int(sum(len(i) for i, _ in stored))
    seen = np.zeros(g.size, dtype=np.int64)
    for idx, _ in out:
        np.add.at(seen, idx, 1)
    if np.any(seen != 1):  # cannot happen unless a task returned a wrong chunk; never hand back a bad table
        bad = np.nonzero(seen != 1)[0]
        raise SweepError(f"sweep returned {len(bad)} points not exactly once (first: {bad[:5].tolist()})")
    columns = tidy_table(g, out)
    if m.name == "invariant_lines":  # c_k is line k at every point (its direction followed by continuity)
        columns, info["lines"] = track_lines(columns, g)
    return SweepResult(columns, g, m.name, target.label, info)
