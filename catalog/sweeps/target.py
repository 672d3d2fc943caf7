"""What a sweep varies: a catalog entry by name, a user's factory, or a built :class:`catalog.Entry`,
and the entry of one point of the grid.

Keys of a sweep:

* ``name``: a documented parameter of the entry (``catalog.defaults(name)``), or an argument of the factory;
* ``name[i]``: component i of a vector parameter (e.g. ``n[2]`` of ``beghin_body``);
* ``y0[i]`` (Lie-group entries) or ``q0[i]``, ``qd0[i]`` (entries in coordinates): component i of the
  initial state, set after the entry is built;
* for a TOML system file (a path ending in .toml): any number of the file by its key, ``b[0]``,
  ``inertia[1][1]``, ``w[2]``, ``lambda``, ``t_end``, ``algebra.a`` (:mod:`catalog.entries.toml_keys`).

Only the name (or the factory) and the point's values travel to a worker; each point's entry is built
where it is measured.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from collections.abc import Iterable, Mapping
from typing import Any, Callable

import numpy as np

from pathlib import Path

from ..entries import toml_keys
from ..entries.toml_loader import from_file, read
from ..errors import TomlEntryError
from ..registry import Entry, defaults, get, names
from .grid import SweepError

INITIAL_KEYS = {"y0": "lie-group", "q0": "coordinates", "qd0": "coordinates"}
_KEY = re.compile(r"^([A-Za-z_]\w*)(?:\[(\d+)\])?$")


def split_key(key: str) -> tuple[str, int | None]:
    """``"n[2]"`` -> ("n", 2); ``"I1"`` -> ("I1", None)."""
    m = _KEY.match(str(key).strip())
    if not m:
        raise SweepError(f"sweep key {key!r} must be a parameter name or name[index] (e.g. I1, n[2], y0[0])")
    return m.group(1), None if m.group(2) is None else int(m.group(2))


@dataclass
class Target:
    """A registry entry (``name`` with fixed parameters ``base``) or a ``factory(**params) -> Entry``.

    ``accepted``: parameter -> default (None: a factory taking ``**kwargs``, any key is accepted)."""

    label: str
    name: str | None = None
    factory: Callable[..., Entry] | None = None
    base: dict[str, Any] = field(default_factory=dict)
    accepted: dict[str, Any] | None = None
    entry: Any = None  # a built Entry not in the registry: only its initial state can vary
    toml: str | None = None  # a TOML system file: any number of it can vary

    def check_keys(self, keys: Iterable[str]) -> None:
        """Raise :class:`SweepError` naming a key that is not a parameter (or component) of the target."""
        if self.toml is not None:
            self._check_toml_keys(keys)
            return
        for key in keys:
            base, idx = split_key(key)
            if base in INITIAL_KEYS:
                if idx is None:
                    raise SweepError(f"sweep key {key!r}: the initial state needs a component index, e.g. {base}[0]")
                continue
            if self.accepted is None:
                continue
            if base not in self.accepted:
                acc = ", ".join(f"{k}={v!r}" for k, v in self.accepted.items()) or "none"
                raise SweepError(f"{self.label} has no parameter {base!r}; accepted: {acc}; "
                                 f"initial state: y0[i] (Lie-group) or q0[i], qd0[i] (coordinates)")
            d = self.base.get(base, self.accepted[base])
            vector = isinstance(d, (tuple, list, np.ndarray))
            if vector and idx is None:
                raise SweepError(f"{self.label}: parameter {base!r} is a vector of {len(d)} numbers; sweep its "
                                 f"components {', '.join(f'{base}[{i}]' for i in range(len(d)))}")
            if not vector and idx is not None:
                raise SweepError(f"{self.label}: parameter {base!r} is a number, not a vector; write {base}, not {key}")
            if vector and idx >= len(d):
                raise SweepError(f"{self.label}: parameter {base!r} has {len(d)} components; index {idx} is out of range")
            if not vector and isinstance(d, (bool, str)):
                raise SweepError(f"{self.label}: parameter {base!r} is not numeric (default {d!r}); it cannot be swept")

    def _check_toml_keys(self, keys: Iterable[str]) -> None:
        data = read(self.toml)
        known = toml_keys.numbers(data)
        for key in keys:
            base, idx = split_key(key) if str(key).startswith("y0[") else (key, None)
            if base == "y0":
                if idx is None:
                    raise SweepError(f"sweep key {key!r}: the initial state needs a component index, e.g. y0[0]")
                continue
            try:
                toml_keys.apply(self.toml, data, {key: 1.0})
            except TomlEntryError as exc:
                if "not a key of the file" in str(exc) or "the file has no" in str(exc):
                    raise SweepError(f"{self.label} has no parameter {key!r}; the numbers of the file: "
                                     f"{', '.join(known)}; the initial state: y0[i]") from None
                raise SweepError(str(exc)) from None

    def build(self, point: Mapping[str, float]) -> Entry:
        """The entry at ``point`` ({key: value})."""
        if self.toml is not None:
            over = dict(self.base)
            initial = []
            for key, v in point.items():
                if str(key).startswith("y0["):
                    initial.append((*split_key(key), float(v)))
                else:
                    over[key] = float(v)
            entry = from_file(self.toml, **over)
            for base, idx, v in initial:
                _set_initial(entry, base, idx, v)
            return entry
        params = dict(self.base)
        initial = []
        for key, v in point.items():
            base, idx = split_key(key)
            if base in INITIAL_KEYS:
                initial.append((base, idx, float(v)))
            elif idx is None:
                params[base] = float(v)
            else:
                vec = list(params.get(base, (self.accepted or {}).get(base, ())))
                vec[idx] = float(v)
                params[base] = tuple(vec)
        if self.name is not None:
            entry = get(self.name, **params)
        elif self.factory is not None:
            entry = self.factory(**params)
            if not isinstance(entry, Entry):
                raise SweepError(f"{self.label} returned {type(entry).__name__}, not a catalog.Entry")
        else:
            import copy

            entry = copy.copy(self.entry)
        for base, idx, v in initial:
            _set_initial(entry, base, idx, v)
        return entry


def _set_initial(entry: Entry, base: str, idx: int, v: float) -> None:
    if entry.kind != INITIAL_KEYS[base]:
        use = "y0[i]" if entry.kind == "lie-group" else "q0[i] or qd0[i]"
        raise SweepError(f"{entry.name} is a {entry.kind} entry: its initial state is swept with {use}, not {base}[{idx}]")
    if base == "y0":
        y = np.array(entry.initial_state, dtype=float)
        if idx >= y.size:
            raise SweepError(f"{entry.name}: y0 has {y.size} components; index {idx} is out of range")
        y[idx] = v
        entry.initial_state = y
    else:
        s = dict(entry.initial_state)
        q = [float(x) for x in s[base]]
        if idx >= len(q):
            raise SweepError(f"{entry.name}: {base} has {len(q)} components; index {idx} is out of range")
        q[idx] = v
        s[base] = q
        entry.initial_state = s


def make_target(obj: str | Entry | Callable[..., Entry], **fixed: Any) -> Target:
    """A :class:`Target` from an entry name, an :class:`Entry`, or a factory; ``fixed`` parameters hold
    for every point."""
    if isinstance(obj, (str, Path)) and (str(obj).endswith(".toml") or Path(obj).is_file()):
        path = str(obj)
        t = Target(label=f"file {Path(path).name!r}", toml=path, accepted=dict(toml_keys.numbers(read(path))))
        if fixed:
            t.check_keys(list(fixed))
            t.base.update(fixed)
        return t
    if isinstance(obj, str):
        acc = defaults(obj)  # CatalogError for an unknown name
        t = Target(label=f"entry {obj!r}", name=obj, accepted=acc)
    elif isinstance(obj, Entry):
        if obj.extras.get("source") and str(obj.extras["source"]).endswith(".toml"):  # from_file: its numbers
            return make_target(obj.extras["source"], **{**obj.parameters, **fixed})
        if obj.name in names() and obj.parameters:
            t = Target(label=f"entry {obj.name!r}", name=obj.name, base=dict(obj.parameters),
                       accepted=defaults(obj.name))
        else:
            t = Target(label=f"entry {obj.name!r} (not in the registry: only its initial state can vary)",
                       entry=obj, accepted={})
    elif callable(obj):
        sig = inspect.signature(obj)
        ps = sig.parameters.values()
        if any(p.kind is p.VAR_KEYWORD for p in ps):
            acc = None
        else:
            acc = {p.name: (None if p.default is p.empty else p.default) for p in ps
                   if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        t = Target(label=f"factory {getattr(obj, '__name__', repr(obj))}", factory=obj, accepted=acc)
    else:
        raise SweepError(f"a sweep runs over an entry name, a catalog.Entry or a factory(**params) -> Entry, "
                         f"got {type(obj).__name__}")
    if fixed:
        t.check_keys(list(fixed))
        t.base.update(fixed)
    return t
