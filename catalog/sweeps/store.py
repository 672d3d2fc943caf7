"""A resumable sweep: finished chunks written to a directory as they arrive, read back on a rerun.

``catalog.sweep(..., store=PATH)`` keeps in PATH

* ``manifest.json``: the fingerprint of the sweep (target, grid values, measure and its options, fixed
  parameters, errors mode), written once;
* ``chunk-<first>-<last>.pkl``: one file per finished chunk, (point indices, columns), written to a
  temporary name and renamed (``os.replace`` is atomic), so an interrupted sweep leaves only whole chunks.

A rerun with the same arguments loads the stored chunks and evaluates only the points they lack; the
table is reassembled by point index, so it is the table of an uninterrupted run (every point is evaluated
on its own by the same code). A rerun with different arguments refuses the directory
(:class:`~catalog.sweeps.grid.SweepError` naming what differs) rather than mixing two sweeps.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from pathlib import Path
from typing import Any

import numpy as np

from .grid import SweepError

MANIFEST = "manifest.json"


def _digest(values: dict[str, Any]) -> str:
    h = hashlib.sha256()
    for k in sorted(values):
        h.update(k.encode())
        h.update(np.ascontiguousarray(np.asarray(values[k], dtype=float)).tobytes())
    return h.hexdigest()


def fingerprint(target: Any, grid: Any, measure: Any, fixed: dict[str, Any] | None, errors: str) -> dict[str, str]:
    """What makes two sweeps the same: strings, compared field by field on a rerun."""
    fn = getattr(measure, "fn", None)
    inner = getattr(fn, "f", fn)
    return {"target": str(getattr(target, "label", target)), "grid": _digest(grid.values),
            "points": str(grid.size), "measure": str(measure.name),
            "options": repr(sorted((measure.options or {}).items())),
            "callable": f"{getattr(inner, '__module__', '')}.{getattr(inner, '__qualname__', repr(inner))}"
                        if not hasattr(inner, "__dataclass_fields__") else repr(inner),
            "fixed": repr(sorted((fixed or {}).items())), "errors": errors}


class ChunkStore:
    """The directory of a resumable sweep (see the module docstring)."""

    def __init__(self, path: str | os.PathLike[str], fp: dict[str, str]) -> None:
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        man = self.path / MANIFEST
        if man.exists():
            old = json.loads(man.read_text())
            diff = [k for k in sorted(set(old) | set(fp)) if old.get(k) != fp.get(k)]
            if diff:
                raise SweepError(f"the store {str(self.path)!r} holds a different sweep ({', '.join(diff)} differ); "
                                 f"use another directory or remove it")
        else:
            tmp = man.with_suffix(".tmp")
            tmp.write_text(json.dumps(fp, indent=1))
            os.replace(tmp, man)

    def load(self, size: int) -> list[tuple[np.ndarray, dict[str, Any]]]:
        """The stored chunks (each point at most once: a chunk overlapping an earlier one is skipped)."""
        out, seen = [], np.zeros(size, dtype=bool)
        for f in sorted(self.path.glob("chunk-*.pkl")):
            try:
                with open(f, "rb") as fh:
                    idx, cols = pickle.load(fh)
            except (OSError, EOFError, pickle.UnpicklingError):  # a torn file: evaluate its points again
                continue
            idx = np.asarray(idx, dtype=np.int64)
            if idx.size == 0 or idx.max() >= size or idx.min() < 0 or seen[idx].any():
                continue
            seen[idx] = True
            out.append((idx, cols))
        return out

    def write(self, idx: np.ndarray, cols: dict[str, Any]) -> None:
        idx = np.asarray(idx, dtype=np.int64)
        name = self.path / f"chunk-{int(idx[0]):09d}-{int(idx[-1]):09d}.pkl"
        tmp = name.with_suffix(f".tmp{os.getpid()}")
        with open(tmp, "wb") as fh:
            pickle.dump((idx, cols), fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, name)


def done_mask(stored: list[tuple[np.ndarray, Any]], size: int) -> np.ndarray:
    """Boolean mask of the points already in ``stored``."""
    mask = np.zeros(size, dtype=bool)
    for idx, _ in stored:
        mask[np.asarray(idx)] = True
    return mask
