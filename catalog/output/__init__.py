"""catalog.output: what a person reads: text about an entry (``describe``), figures (``plots``,
matplotlib) and the static HTML report (``report``)."""
