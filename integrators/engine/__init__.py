"""engine: ``integrate`` and its loops - the fixed-step loop, the adaptive controller, events, independent
ensembles, the guards that end a run with a status, the scipy adapter and group reconstruction."""
