"""catalog.sweeps: parameter studies over catalog entries, on one machine or a dask.distributed cluster.

    import catalog
    res = catalog.sweep("flywheel_body", {"b2": "-1:1:21", "b3": "0.2:2:21"}, "invariant_lines")
    res.table                  # one row per point (pandas DataFrame if pandas is installed)
    res.save("out/flywheel")   # sweep.csv, sweep.json, sweep.png (heat map for two keys, curves for one)

* ``grid``: the points (:func:`grid`, :func:`samples`); ``target``: the entry of one point;
* ``measures``: the registry of measures (:func:`register_measure`, :func:`get_measure`);
* ``engine``: :func:`sweep` (dask.distributed when installed, else serial) and :class:`SweepResult`;
* ``store``: the resumable sweep (``store=PATH``); ``phase_measures``: :class:`LargestExponent`,
  :class:`AccelerationExponent`;
* ``output``: the tidy table, its files and figure, :func:`fit_rate`, :func:`report_section`.
"""

from typing import TYPE_CHECKING

from liegroups._lazy import exports

if TYPE_CHECKING:
    from .grid import Grid, SweepError, grid, samples
    from .measures import MEASURES, Measure, get_measure, register_measure
    from .output import fit_rate, report_section, summary_rows, write_table
    from .engine import SweepResult, SweepWarning, default_chunk, sweep
    from .phase_measures import AccelerationExponent, LargestExponent

exports(__name__, __file__)

__all__ = ["sweep", "grid", "samples", "Grid", "SweepResult", "SweepError", "SweepWarning", "Measure", "MEASURES",
           "get_measure", "register_measure", "fit_rate", "report_section", "summary_rows", "write_table",
           "default_chunk", "LargestExponent", "AccelerationExponent"]
