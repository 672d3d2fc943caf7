"""catalog: named systems with metadata and a relation graph, plots, the ``liedyn`` command line and
the HTML report."""
