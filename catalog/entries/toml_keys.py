"""Every number of a TOML system file addressed by a key, and overrides of those numbers.

A key names a value of the file by its table path and its list indices:

* ``b[0]``, ``a[2]``: components of the covectors; ``inertia[1][1]`` an entry of the inertia matrix (for
  an inertia given as its diagonal, ``inertia[1][1]`` is ``inertia[1]``, and an off-diagonal entry is refused);
* ``w[0]``, ``m[2]``, ``lambda``: the ``[initial]`` table (also written ``initial.w[0]``, ``initial.lambda``);
* ``t_end``, ``steps``, ``method``: the ``[simulation]`` table (also ``simulation.t_end``);
* ``algebra.a``: a number of an algebra table (``algebra = { name = "bianchi_VI", a = 2.0 }``);
* a whole list by its name: ``b = [0.3, 1, 0.2]`` (or ``"0.3,1,0.2"`` from the command line).

:func:`numbers` lists the numbers of a file under these keys (the parameters of its entry, what a sweep
can vary); :func:`apply` returns the file's data with overrides set. Every error is a
:class:`catalog.errors.TomlEntryError` naming the file and the key.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import numpy as np

from ..errors import TomlEntryError

__all__ = ["numbers", "apply", "split", "TABLES", "TOP_KEYS"]

#: the keys of the tables of the format (their names may be written without the table: ``t_end``)
TABLES = {"initial": ("w", "m", "lambda"), "simulation": ("t_end", "steps", "method")}
#: the top-level keys of the format
TOP_KEYS = ("name", "description", "algebra", "inertia", "model", "a", "b", "initial", "simulation",
            "references", "tags")
_SHORT = {k: table for table, keys in TABLES.items() for k in keys}
_SEGMENT = re.compile(r"([A-Za-z_]\w*)((?:\[\d+\])*)")


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def split(path: Any, key: str) -> list[str | int]:
    """``"initial.w[0]"`` -> ["initial", "w", 0]; ``"t_end"`` -> ["simulation", "t_end"]."""
    parts: list[str | int] = []
    for seg in str(key).strip().split("."):
        m = _SEGMENT.fullmatch(seg)
        if not m:
            raise TomlEntryError(f"{path}: key {key!r}: not a key of the file; write name, name[i], name[i][j] "
                                 f"or table.name (e.g. b[0], inertia[1][1], w[2], t_end, algebra.a)")
        parts.append(m.group(1))
        parts += [int(i) for i in re.findall(r"\d+", m.group(2))]
    if parts and parts[0] in _SHORT:
        parts.insert(0, _SHORT[parts[0]])
    return parts


def _name(parts: list[str | int]) -> str:
    """The canonical key of a path: tables initial and simulation dropped, indices in brackets."""
    if len(parts) > 1 and parts[0] in TABLES:
        parts = parts[1:]
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
    return out


def numbers(data: dict[str, Any]) -> dict[str, float | int]:
    """{key: number} for every number of the file, in the file's order (see the module docstring)."""
    out: dict[str, float | int] = {}

    def walk(v, parts):
        if _is_number(v):
            out[_name(parts)] = v
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(x, parts + [k])
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(x, parts + [i])

    walk(data, [])
    return out


def _coerce(path, key, value, old):
    """An override's value in the type of the value it replaces (strings come from the command line)."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (np.integer, np.floating)):
        value = value.item()
    if not isinstance(value, str):
        return value
    s = value.strip()
    if isinstance(old, str) or old is None and not re.fullmatch(r"[-+0-9.eE\[\],; ]+", s):
        return s
    if isinstance(old, list) or s.startswith("[") or "," in s or ";" in s:
        try:
            return json.loads(s) if s.startswith("[") else [float(x) for x in s.replace(";", ",").split(",") if x.strip()]
        except ValueError:
            raise TomlEntryError(f"{path}: key {key!r}: expected a list of numbers, got {value!r}") from None
    try:
        f = float(s)
    except ValueError:
        raise TomlEntryError(f"{path}: key {key!r}: expected a number, got {value!r}") from None
    return int(f) if isinstance(old, int) and not isinstance(old, bool) and f.is_integer() else f


def _set(path, data, key, value):
    parts = split(path, key)
    if parts[0] not in TOP_KEYS:
        known = ", ".join(numbers(data)) or "none"
        raise TomlEntryError(f"{path}: key {key!r}: not a key of the file; its numbers are: {known}")
    inertia = data.get("inertia")
    if parts[0] == "inertia" and len(parts) == 3 and isinstance(inertia, list) and inertia \
            and _is_number(inertia[0]):  # an inertia given as its diagonal: inertia[i][i] is inertia[i]
        if parts[1] != parts[2]:
            raise TomlEntryError(f"{path}: key {key!r}: the file gives the inertia as its diagonal; write it "
                                 f"as an n x n matrix to vary an off-diagonal entry")
        parts = parts[:2]
    node = data
    for depth, p in enumerate(parts[:-1]):
        where = _name(parts[:depth + 1])
        if isinstance(p, int):
            if not isinstance(node, list) or p >= len(node):
                size = len(node) if isinstance(node, list) else 0
                raise TomlEntryError(f"{path}: key {key!r}: index {p} is out of range ({_name(parts[:depth])} "
                                     f"has {size} entries)")
            node = node[p]
        elif not isinstance(node, dict):
            raise TomlEntryError(f"{path}: key {key!r}: {_name(parts[:depth])} is not a table")
        elif p in node:
            node = node[p]
        elif depth == 0 and p in TABLES:
            node = node.setdefault(p, {})
        else:
            raise TomlEntryError(f"{path}: key {key!r}: the file has no {where}")
    last = parts[-1]
    if isinstance(last, int):
        if not isinstance(node, list) or last >= len(node):
            size = len(node) if isinstance(node, list) else 0
            raise TomlEntryError(f"{path}: key {key!r}: index {last} is out of range "
                                 f"({_name(parts[:-1])} has {size} entries)")
        old = node[last]
    else:
        if not isinstance(node, dict):
            raise TomlEntryError(f"{path}: key {key!r}: {_name(parts[:-1])} is not a table")
        allowed = TOP_KEYS if len(parts) == 1 else TABLES.get(parts[0], ()) if len(parts) == 2 else ()
        if last not in node and last not in allowed:
            raise TomlEntryError(f"{path}: key {key!r}: the file has no {_name(parts)}")
        old = node.get(last)
    new = _coerce(path, key, value, old)
    if isinstance(old, list) and not isinstance(new, list) or _is_number(old) and not _is_number(new):
        raise TomlEntryError(f"{path}: key {key!r}: expected {'a list' if isinstance(old, list) else 'a number'} "
                             f"like the file's {old!r}, got {value!r}")
    node[last] = new


def apply(path: Any, data: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``data`` with each ``key: value`` of ``overrides`` set (see the module docstring)."""
    out = copy.deepcopy(data)
    for key, value in overrides.items():
        _set(path, out, key, value)
    return out
