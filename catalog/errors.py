"""The exceptions of ``catalog``: ``CatalogError`` (a ``ValueError``) is the base of all of them.

* ``CatalogError``: an unknown entry or parameter, a bad parameter value, a bad range;
* ``TomlEntryError``: a TOML system file that cannot be read (the message names the file and the key);
* ``NoExactSolution``: a closed form that does not apply to these data (e.g. the separatrix of the
  rigid body);
* ``UnknownWorkError``: a key that is not in :mod:`catalog.bibliography` (the message names close matches).
"""


class CatalogError(ValueError):
    """Unknown entry or parameter, or a parameter value an entry cannot take."""


class TomlEntryError(CatalogError):
    """A TOML system file that cannot be read; the message names the file and the key."""


class NoExactSolution(CatalogError):
    """The closed form does not apply to these data (e.g. the separatrix of the rigid body)."""


class UnknownWorkError(CatalogError):
    """A bibliography key that is not in the bibliography; the message names the close matches."""
