"""Getting a trajectory out: a dict of arrays, a CSV file, a pandas DataFrame, an xarray Dataset.

Column names are what a program can read: :func:`column_name` keeps the leading word of a descriptive
name ("energy (m; I^-1 m)/2" -> "energy", "casimir:m1**2 + m2**2" -> "casimir") or, when the name does not
start with one, its letters and digits joined by "_" ("|m|^2 (Casimir)" -> "m_2_Casimir"); repeated names
get "_2", "_3". :func:`columns` maps each column to the full name it came from.

Layout: ``t`` (K,), then the state components (named by ``res.labels`` or y1..yn), then the invariants,
constraints and outputs recorded on the result, each (K,) for one trajectory. A batched result
(y of shape (K, ..., n)) exports to a dict of arrays with the batch axes kept; CSV and pandas need one
trajectory and say so. pandas and xarray are imported only when asked for.
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Collection
from typing import Any

import numpy as np

from .errors import IntegrationInputError

__all__ = ["column_name", "columns", "to_dict", "to_csv", "to_pandas", "to_xarray"]


def column_name(name: str, taken: Collection[str] = ()) -> str:
    """A machine-readable column name for ``name`` (unique among ``taken``)."""
    name = str(name)
    m = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)(?=$|[\s:(\[])", name)
    base = m.group(1) if m else (re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_") or "value")
    if base[0].isdigit():
        base = "c_" + base
    out, k = base, 2
    while out in taken:
        out, k = f"{base}_{k}", k + 1
    return out


def _series(res):
    """[(full name, array (K, ...))] in the export order."""
    y = np.asarray(res.y)
    n = y.shape[-1] if y.ndim >= 2 else 1
    labels = tuple(getattr(res, "labels", ()) or ())
    if y.ndim >= 2 and len(labels) != n:
        labels = tuple(f"y{i + 1}" for i in range(n))
    out = [("t", np.asarray(res.t, float))]
    if y.ndim >= 2:
        out += [(lab, y[..., i]) for i, lab in enumerate(labels)]
    for table in ("invariants", "constraints", "outputs"):
        for k, v in (getattr(res, table, None) or {}).items():
            v = np.asarray(v)
            if y.ndim >= 2 and v.ndim == y.ndim and v.shape[:-1] == y.shape[:-1]:   # a vector per time
                out += [(f"{k}[{i}]", v[..., i]) for i in range(v.shape[-1])]
            else:
                out.append((k, v))
    return out


def columns(res: Any) -> dict[str, str]:
    """{column name: the full name it stands for}, in the export order."""
    out = {}
    for full, _ in _series(res):
        out[column_name(full, out)] = full
    return out


def to_dict(res: Any) -> dict[str, np.ndarray]:
    """{column name: array}: t (K,), then every state component, invariant, constraint and output (K, ...)."""
    out = {}
    for full, v in _series(res):
        out[column_name(full, out)] = np.asarray(v)
    return out


def _single(res, what):
    d = to_dict(res)
    K = len(d["t"])
    bad = {k: v.shape for k, v in d.items() if v.shape != (K,)}
    if bad:
        k, shape = next(iter(bad.items()))
        raise IntegrationInputError(f"{what} needs one trajectory (every column of shape ({K},)), but column "
                                    f"{k!r} has shape {shape}; use to_dict() for a batch")
    return d


def to_csv(res: Any, path: str | os.PathLike) -> str | os.PathLike:
    """Write one trajectory as CSV: a header of column names, then one row per saved time. Returns the path."""
    d = _single(res, "to_csv")
    names = list(d)
    rows = np.column_stack([d[k] for k in names])
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(names)
        for r in rows:
            w.writerow([repr(float(x)) for x in r])
    return path


def to_pandas(res: Any) -> Any:
    """A pandas DataFrame of one trajectory indexed by t (pandas is imported here, only when asked for)."""
    import pandas as pd

    d = _single(res, "to_pandas")
    t = d.pop("t")
    return pd.DataFrame(d, index=pd.Index(t, name="t"))


def to_xarray(res: Any) -> Any:
    """An xarray Dataset with coordinate t; batch axes become dimensions batch_0, batch_1, ..."""
    import xarray as xr

    d = to_dict(res)
    t = d.pop("t")
    data = {k: (("t",) + tuple(f"batch_{i}" for i in range(v.ndim - 1)), v) for k, v in d.items()}
    return xr.Dataset(data, coords={"t": t})
