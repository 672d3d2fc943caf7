"""What depends only on a system is built once per system and reused.

A Lie-group system's integrators problem (:class:`integrators.CoadjointProblem`, with the names of the
algebra's Casimirs, the structure the code generator recognises on it and the plans it finds), the
method ``simulate`` picks for it, its first integrals and its reduced system depend on nothing but the
system's parameters. :class:`BuiltOnce` keeps each of them on the system the first time it is asked for
(:meth:`BuiltOnce._built`), so ``s.simulate(...)`` costs what ``integrate(P, ...)`` on a prebuilt
problem costs, and ``s.problem() is s.problem()``.

Nothing built from old parameters is ever served, because the parameters cannot change under the cache:

* assigning a parameter (``s.I = ...``, ``s.b = ...``, ``s.a = ...``, ``s.c = ...``; the names a class lists
  in ``_SETTABLE``) builds the system again from the new value through its ``_rebuild`` (the same checks
  as the constructor, e.g. :class:`servo.errors.InertiaError` for an inertia that is not positive
  definite; on an error the system is left as it was) and drops everything kept;
* assigning ``name`` drops everything kept (the problem carries the name);
* assigning an attribute derived from the parameters (``Iinv``, ``W``, ``R``, ``IinvA``, ...) raises
  AttributeError naming the parameters to assign instead;
* the numeric arrays of a built system are read-only, so ``s.I[0, 0] = 5`` raises ValueError instead of
  leaving the inverse inertia and every kept object stale.

The problem is shared: treat it as read-only (build a :class:`integrators.CoadjointProblem` of your own to
integrate something else).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

__all__ = ["BuiltOnce"]

_T = TypeVar("_T")


class BuiltOnce:
    """Mixin: a cache of what depends only on the parameters, dropped whenever a parameter is assigned.

    Subclasses set ``_SETTABLE`` (attribute name -> the key of ``_sym_params()`` it replaces, or a
    callable ``(params, value) -> None`` for a parameter that sets several keys) and implement
    ``_sym_params()`` and ``_rebuild(params)``.
    """

    #: attribute name -> key of ``_sym_params()`` (or a callable (params, value) -> None)
    _SETTABLE: dict[str, str | Callable[[dict[str, Any], Any], None]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is None:
            return

        @functools.wraps(init)
        def __init__(self, *args, **kw):
            d = self.__dict__
            d["_building"] = d.get("_building", 0) + 1
            try:
                init(self, *args, **kw)
            finally:
                d["_building"] -= 1
            if d["_building"] == 0:        # the outermost constructor has returned: the system is built
                del d["_building"]
                _freeze(d)
                d["_built_ready"] = True

        cls.__init__ = __init__

    def _built(self, key: str, build: Callable[[Any], _T]) -> _T:
        """The object kept under ``key``, built the first time by ``build(twin)``: ``twin`` is a private copy
        of the system as it is now (same class, same attributes), so what is built (a problem whose
        velocity is ``twin.velocity``) keeps the parameters it was built from after a parameter of this
        system is assigned."""
        cache = self.__dict__.setdefault("_cache", {})
        try:
            return cache[key]
        except KeyError:
            value = cache[key] = build(self._twin())
            return value

    def _twin(self):
        """A copy sharing this system's (read-only) attributes, with its own cache."""
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        twin.__dict__["_cache"] = {}
        return twin

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_cache"] = {}                 # kept objects hold callables: rebuilt after unpickling
        return state

    def _forget(self) -> None:
        """Drop everything kept (the next request builds it again)."""
        self.__dict__["_cache"] = {}

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        if not d.get("_built_ready"):                    # under construction
            object.__setattr__(self, name, value)
            return
        settable = type(self)._SETTABLE
        if name in settable:
            params = dict(self._sym_params())
            how = settable[name]
            if callable(how):
                how(params, value)
            else:
                params[how] = value
            new = self._rebuild(params)                  # raises (and leaves self as it was) on bad input
            d.clear()
            d.update(new.__dict__)
            d["_cache"] = {}
            return
        if name == "name":
            object.__setattr__(self, name, value)
            self._forget()
            return
        if not name.startswith("_") and name in d:
            names = ", ".join(sorted(k for k in settable if k in d)) or "none"
            raise AttributeError(
                f"{type(self).__name__}.{name} is derived from the system's parameters; assign a parameter "
                f"instead ({names}) or build a new system")
        object.__setattr__(self, name, value)


def _freeze(d):
    """Make the numeric arrays among a built system's attributes read-only."""
    for v in d.values():
        if isinstance(v, np.ndarray):
            v.flags.writeable = False
