"""What a sweep hands back: the tidy table (one row per point), its files, its figure, the exponent of a
rate, and the figure and table of a report section.

Columns of the table: ``index`` (the point), the grid keys, the measure's columns in the order they first
appear, ``error`` ("" where the point was measured). A column is boolean or integer when every point has
a value of that type, a string column (a numpy object array) has "" where a point has none, and any other column is float with
NaN where a point has no value: a failed point (its ``error`` says why) or, for ``invariant_lines``, a
line slot ``c_k`` beyond that point's number of real lines.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .grid import Grid, SweepError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: the columns a figure shows by default, per measure and number of varying keys
DEFAULT_COLUMNS = {
    "realizability": ["realizability"],
    "invariant_lines": ["real_lines", "attracting"],
    "integrals_drift": ["max_drift"],
    "exact_error": ["exact_error"],
    "friction_rate": ["limit_error", "N_times_error"],
}
_MISSING = object()


class SweepOutcome(Protocol):
    """What the functions below read of a sweep's result. ``engine.SweepResult`` implements it; it is a
    protocol rather than that class because ``engine`` imports this file (no import cycle)."""

    columns: dict[str, NDArray[Any]]
    grid: Grid
    measure: str
    target: str
    info: dict[str, Any]

    @property
    def failed(self) -> int:
        """Number of points whose evaluation raised."""

    def column(self, name: str) -> NDArray[Any]:
        """Column ``name`` (SweepError if there is none)."""


def _strings(values: Sequence[str]) -> NDArray[np.object_]:
    """A string column as an object array: 8 bytes a point plus the distinct strings (a fixed-width numpy
    string array would give every point the width of the longest error message)."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _column(values: Sequence[Any]) -> NDArray[Any]:
    present = [v for v in values if v is not _MISSING]
    if present and all(isinstance(v, str) for v in present):
        return _strings(["" if v is _MISSING else v for v in values])
    if present and len(present) == len(values):
        if all(isinstance(v, bool) for v in present):
            return np.array(values, dtype=bool)
        if all(isinstance(v, int) and not isinstance(v, bool) for v in present):
            return np.array(values, dtype=np.int64)
    bad = [v for v in present if isinstance(v, str)]
    if bad:
        raise SweepError(f"a column mixes strings and numbers (e.g. {bad[0]!r})")
    return np.array([np.nan if v is _MISSING else float(v) for v in values], dtype=float)


def chunk_columns(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One chunk's rows as columns (what a task sends back: arrays pickle small): the names in the order
    they first appear, the row where each first appears, the columns, and the error messages."""
    names, first = [], {}
    for j, r in enumerate(rows):
        for k in r:
            if k != "error" and k not in first:
                first[k] = j
                names.append(k)
    return {"names": names, "first": first, "columns": {k: _column([r.get(k, _MISSING) for r in rows]) for k in names},
            "error": _strings([r.get("error", "") for r in rows])}


def _merge(pieces: Sequence[NDArray[Any] | None], n: int, idx_list: Sequence[NDArray[np.int64]],
           name: str) -> NDArray[Any]:
    """One column over all points from the chunks' pieces (None where a chunk has no value)."""
    kinds = {p.dtype.kind for p in pieces if p is not None}
    if "O" in kinds:
        if kinds != {"O"}:
            raise SweepError(f"column {name!r} mixes strings and numbers")
        out = np.full(n, "", dtype=object)
    elif all(p is not None for p in pieces) and kinds in ({"b"}, {"i"}):
        out = np.zeros(n, dtype=bool if kinds == {"b"} else np.int64)
    else:
        out = np.full(n, np.nan)
    for idx, p in zip(idx_list, pieces):
        if p is not None:
            out[idx] = p
    return out


def tidy_table(g: Grid, parts: Sequence[tuple[ArrayLike, dict[str, Any]]]) -> dict[str, NDArray[Any]]:
    """dict name -> array: index, the grid keys, the measure columns, error (see the module docstring).

    ``parts``: (point indices, :func:`chunk_columns`) of every chunk, in any order. A column's place is
    where it first appears in point order, so the table does not depend on how the points were chunked."""
    cols = {"index": np.arange(g.size)}
    for k in g.keys:
        cols[k] = np.array(g.values[k], dtype=float)
    idx_list = [np.asarray(i, dtype=np.int64) for i, _ in parts]
    order = {}
    for idx, ch in zip(idx_list, (c for _, c in parts)):
        for rank, k in enumerate(ch["names"]):
            key = (int(idx[ch["first"][k]]), rank)
            order[k] = min(order.get(k, key), key)
    for k in sorted(order, key=order.get):
        out = f"{k} (measured)" if k in cols else k
        cols[out] = _merge([ch["columns"].get(k) for _, ch in parts], g.size, idx_list, k)
    cols["error"] = _merge([ch["error"] for _, ch in parts], g.size, idx_list, "error")
    return cols


def measure_columns(result: SweepOutcome) -> list[str]:
    """The measure's columns (not index, grid keys or error)."""
    skip = {"index", "error", *result.grid.keys}
    return [k for k in result.columns if k not in skip]


def _numeric(result: SweepOutcome, name: str) -> NDArray[np.float64]:
    a = result.column(name)
    if a.dtype.kind in "OUS":
        raise SweepError(f"column {name!r} holds strings; a figure needs a numeric column")
    return a.astype(float)


def default_columns(result: SweepOutcome) -> list[str]:
    cols = [c for c in DEFAULT_COLUMNS.get(result.measure, []) if c in result.columns]
    if not cols:
        cols = [c for c in measure_columns(result) if result.columns[c].dtype.kind not in "OUS"][:1]
    if not cols:
        raise SweepError(f"measure {result.measure!r} gave no numeric column to draw")
    return cols


def _norm(z):
    from matplotlib.colors import BoundaryNorm, LogNorm

    f = z[np.isfinite(z)]
    if f.size == 0:
        return None, None, None
    if np.all(f == np.round(f)) and f.max() - f.min() <= 12:  # counts and booleans: one colour per value
        lo, hi = int(f.min()), int(f.max())
        import matplotlib as mpl

        n = hi - lo + 1
        return BoundaryNorm(np.arange(lo - 0.5, hi + 1.5), n), mpl.colormaps["viridis"].resampled(n), np.arange(lo, hi + 1)
    if f.min() > 0 and f.max() / f.min() > 100:
        return LogNorm(f.min(), f.max()), None, None
    return None, None, None


def _lines_1d(ax, result, x):
    """c of each real line against the swept key, coloured by the stability of its ray."""
    colours = {"attracting": "tab:blue", "repelling": "tab:red", "saddle": "tab:green", "degenerate": "tab:gray"}
    k = 1
    done = set()
    while f"c_{k}" in result.columns:
        c, s = result.columns[f"c_{k}"], result.columns[f"stability_{k}"]
        for st, col in colours.items():
            sel = s == st
            if np.any(sel):
                ax.scatter(x[sel], c[sel], s=10, color=col, label=None if st in done else st)
                done.add(st)
        k += 1
    ax.set_ylabel("c of the real invariant lines")
    if done:
        ax.legend(fontsize=8)


def figure(result: SweepOutcome, columns: Sequence[str] | None = None) -> Figure:
    """Curves (one varying key) or heat maps, one panel per column (two varying keys); a matplotlib Figure.

    For ``invariant_lines`` over one key the curves are c of each real line, coloured by stability; for
    ``realizability`` over two keys the zero contour (the unrealizable set) is drawn on the map."""
    from matplotlib.figure import Figure

    g = result.grid
    var = g.varying
    if len(var) not in (1, 2):
        raise SweepError(f"a figure needs one or two varying keys; this sweep varies {len(var)} ({', '.join(var)})")
    one_d_lines = len(var) == 1 and result.measure == "invariant_lines" and columns is None
    cols = ["c"] if one_d_lines else list(columns or default_columns(result))
    fig = Figure(figsize=(5.2 * len(cols), 4.2), layout="constrained")
    axes = [fig.add_subplot(1, len(cols), i + 1) for i in range(len(cols))]
    x = result.columns[var[0]]
    for ax, name in zip(axes, cols):
        ax.set_xlabel(var[0])
        if one_d_lines:
            _lines_1d(ax, result, x)
        elif len(var) == 1:
            z = _numeric(result, name)
            o = np.argsort(x, kind="stable")
            if g.kind == "grid":
                ax.plot(x[o], z[o], ".-")
            else:
                ax.plot(x[o], z[o], ".")
            ax.set_ylabel(name)
            f = z[np.isfinite(z)]
            if f.size and f.min() > 0 and f.max() / f.min() > 100:
                ax.set_yscale("log")
        else:
            z = _numeric(result, name)
            y = result.columns[var[1]]
            ax.set_ylabel(var[1])
            norm, cmap, ticks = _norm(z)
            if g.kind == "grid":
                sq = [i for i, n in enumerate(g.shape) if n > 1]
                Z = z.reshape(g.shape).squeeze() if len(sq) == 2 else None
                xv, yv = g.axes[var[0]], g.axes[var[1]]
                if Z is None:
                    raise SweepError("a heat map needs the two varying keys to be axes of the grid")
                if result.measure == "realizability" and name == "realizability":  # sign matters: centred at 0
                    from matplotlib.colors import CenteredNorm

                    norm, cmap = CenteredNorm(0.0), "RdBu_r"
                im = ax.pcolormesh(xv, yv, Z.T, shading="nearest", norm=norm, cmap=cmap)
                if result.measure == "realizability" and name == "realizability" and np.nanmin(Z) < 0 < np.nanmax(Z):
                    ax.contour(xv, yv, Z.T, levels=[0.0], colors="k", linewidths=1.2)
            else:
                im = ax.scatter(x, y, c=z, s=12, norm=norm, cmap=cmap)
            fig.colorbar(im, ax=ax, label=name, ticks=ticks)
        ax.set_title(f"{result.target}: {name if not one_d_lines else 'real invariant lines'}", fontsize=9)
    return fig


def write_table(columns: Mapping[str, NDArray[Any]], path: str | PathLike[str], fmt: str | None = None) -> Path:
    """Write the table to ``path`` as CSV (pandas if installed, else the csv module) or Parquet (pandas
    and pyarrow); ``fmt`` defaults to the file's suffix."""
    path = Path(path)
    fmt = (fmt or path.suffix.lstrip(".") or "csv").lower()
    if fmt not in ("csv", "parquet"):
        raise SweepError(f"table format must be csv or parquet, got {fmt!r}")
    try:
        import pandas as pd
    except ImportError:
        pd = None
    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            pd = None
        if pd is None:
            raise SweepError("writing Parquet needs pandas and pyarrow (pip install 'liedyn[parquet]'); "
                             "write CSV instead")
        pd.DataFrame(columns).to_parquet(path, index=False)
        return path
    if pd is not None:
        pd.DataFrame(columns).to_csv(path, index=False)
        return path
    names = list(columns)
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(names)
        for i in range(len(columns["index"])):
            w.writerow([repr(float(columns[k][i])) if columns[k].dtype.kind == "f" else columns[k][i] for k in names])
    return path


def metadata(result: SweepOutcome) -> dict[str, Any]:
    """The sweep's description for ``sweep.json`` and ``--json``."""
    g = result.grid
    return {"target": result.target, "measure": result.measure, "points": g.size, "grid": g.describe(),
            "kind": g.kind, "seed": g.seed, "axes": {k: v.tolist() for k, v in g.axes.items()} if g.kind == "grid"
            else {k: [float(v.min()), float(v.max())] for k, v in g.values.items()},
            "columns": list(result.columns), "failed": result.failed,
            "first_error": next((e for e in result.columns["error"] if e), ""),
            "info": {k: (float(v) if isinstance(v, (float, np.floating)) else v) for k, v in result.info.items()}}


def save(result: SweepOutcome, out: str | PathLike[str], fmt: str = "csv", plot: bool = True) -> dict[str, str | None]:
    """Write ``sweep.<fmt>``, ``sweep.json`` and (for one or two varying keys) ``sweep.png`` into ``out``;
    returns {"table": path, "metadata": path, "figure": path or None}."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"table": str(write_table(result.columns, out / f"sweep.{fmt}", fmt))}
    meta = out / "sweep.json"
    meta.write_text(json.dumps(metadata(result), indent=2))
    paths["metadata"] = str(meta)
    paths["figure"] = None
    if plot and len(result.grid.varying) in (1, 2) and not _all_failed(result):
        fig = figure(result)
        fig.savefig(out / "sweep.png", dpi=110)
        paths["figure"] = str(out / "sweep.png")
    return paths


def _all_failed(result: SweepOutcome) -> bool:
    return result.failed == result.grid.size


def fit_rate(result: SweepOutcome, x: str = "N", y: str = "limit_error") -> tuple[float, float]:
    """(p, C) of the least-squares fit log y = p log x + log C over the points with finite y > 0 (for
    ``friction_rate`` over N: p = -1 is the O(1/N) of Kozlov's Theorem 1)."""
    xs, ys = _numeric(result, x), _numeric(result, y)
    ok = np.isfinite(ys) & (ys > 0) & (xs > 0)
    if np.count_nonzero(ok) < 2 or np.unique(xs[ok]).size < 2:
        raise SweepError(f"fit_rate needs at least two points with different {x} > 0 and finite {y} > 0")
    p, logC = np.polyfit(np.log(xs[ok]), np.log(ys[ok]), 1)
    return float(p), float(np.exp(logC))


def summary_rows(result: SweepOutcome) -> list[dict[str, Any]]:
    """One row per measure column: min, max, mean over the measured points (numbers and booleans), or the
    counts of each value (strings)."""
    rows = []
    ok = result.columns["error"] == ""
    for name in measure_columns(result):
        a = result.columns[name][ok]
        if a.dtype.kind in "OUS":
            vals, counts = np.unique(a[a != ""], return_counts=True)
            rows.append({"column": name, "values": ", ".join(f"{v}: {c}" for v, c in zip(vals, counts))})
        else:
            f = a.astype(float)
            f = f[np.isfinite(f)]
            rows.append({"column": name, "min": float(f.min()) if f.size else None,
                         "max": float(f.max()) if f.size else None, "mean": float(f.mean()) if f.size else None,
                         "points": int(f.size)})
    return rows


def report_section(result: SweepOutcome) -> dict[str, Any]:
    """A report section: {"title", "text", "figure" (Figure or None), "table": summary_rows}."""
    g = result.grid
    info = result.info
    text = (f"{result.measure} over {g.describe()} of {result.target}; {result.failed} failed points; "
            f"engine {info.get('engine')} with {info.get('workers')} workers, {info.get('tasks')} tasks of "
            f"{info.get('chunk')} points, {info.get('wall_time', float('nan')):.2f} s.")
    fig = figure(result) if len(g.varying) in (1, 2) and not _all_failed(result) else None
    return {"title": f"Sweep: {result.measure} of {result.target}", "text": text, "figure": fig,
            "table": summary_rows(result)}


#: the most lines ``print(sweep_result)`` writes
MAX_LINES = 30


def sweep_text(result: SweepOutcome) -> str:
    """Plain text for ``print(result)`` and the REPL (at most :data:`MAX_LINES` lines): what was swept
    over what, the engine, the failures, and per measure column its range over the measured points
    (:func:`summary_rows`), never the whole table."""
    g = result.grid
    info = result.info
    lines = [f"SweepResult: {result.measure} of {result.target} over {g.describe()}"]
    if info:
        lines.append(f"  engine {info.get('engine')}: {info.get('workers')} workers, {info.get('tasks')} tasks of "
                     f"{info.get('chunk')} points, {info.get('wall_time', float('nan')):.3g} s")
    if result.failed:
        first = next((e for e in result.columns["error"] if e), "")
        lines.append(f"  {result.failed} of {g.size} points failed (column 'error'), e.g. {first[:80]}")
    rows = summary_rows(result)
    body = []
    for r in rows:
        if "values" in r:
            body.append(f"  {r['column'][:40]}: {r['values'][:66] or '(none)'}")
        elif r["points"]:
            body.append(f"  {r['column'][:40]}: min {r['min']:.6g}, max {r['max']:.6g}, mean {r['mean']:.6g} "
                        f"({r['points']} points)")
        else:
            body.append(f"  {r['column'][:40]}: no value")
    nl = len(info.get("lines", []))
    room = MAX_LINES - len(lines) - 2 - (min(nl, 4) + (nl > 4))
    if body:
        lines.append("columns (over the measured points):")
        if len(body) > room:
            body = body[:room - 1] + [f"  ... {len(body) - room + 1} more columns (result.columns)"]
        lines += body
    for ln in info.get("lines", [])[:4]:
        d = ", ".join(f"{x:.4g}" for x in ln["direction"])
        lines.append(f"  line {ln['line']} (c_{ln['line']}): direction ({d}) at point {ln['first_point']}")
    if len(info.get("lines", [])) > 4:
        lines.append(f"  ... {len(info['lines']) - 4} more lines (result.info['lines'])")
    lines.append(f"table: result.table ({g.size} rows x {len(result.columns)} columns), result.on_grid(name), "
                 f"result.save(dir)")
    return "\n".join(x if len(x) <= 112 else x[:109] + "..." for x in lines)
