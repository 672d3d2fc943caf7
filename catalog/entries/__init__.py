"""catalog.entries: the named systems, one file per family, and a user's own systems from TOML.

* ``rigid``: the Euler top and the heavy top; ``constrained_bodies``: rigid bodies with a left-invariant
  constraint (Suslov, Beghin, flywheel, vakonomic); ``sleighs``: sleighs on SE(2); ``coordinates`` and
  ``talamucci``: systems in coordinates;
* ``build``: the Lie-group system of a model name; ``toml_loader``: :func:`from_file`.

A new entry is a builder decorated with :func:`catalog.registry.register` in the file of its family
(add the file to ``catalog.registry.ENTRY_MODULES`` if it is a new family).
"""
