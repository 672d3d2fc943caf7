"""catalog: named systems with metadata and a relation graph, plots, the ``liedyn`` command line and
the HTML report.

    import catalog
    catalog.names()                       # sorted names of the entries buildable now
    e = catalog.get("euler_top", I1=3.0)  # parameters override documented defaults
    catalog.graph()                       # networkx.DiGraph of relations between entries
    catalog.from_file("my_system.toml")   # a user's own Lie-group system
    catalog.bibliography.cite(catalog.get("suslov").references)   # the works an entry rests on
"""

from typing import TYPE_CHECKING

from liegroups._lazy import exports

if TYPE_CHECKING:
    from . import bibliography
    from .graph import RELATIONS, graph
    from .errors import CatalogError, NoExactSolution, TomlEntryError
    from .registry import Entry, defaults, get, names
    from .verify.run import checks, simulate
    from .entries.toml_loader import from_file
    from .sweeps import sweep

exports(__name__, __file__)

__all__ = ["names", "get", "graph", "from_file", "defaults", "Entry", "CatalogError", "TomlEntryError",
           "RELATIONS", "simulate", "checks", "bibliography", "sweep"]
