"""``liedyn sweep NAME -p KEY=RANGE ... --measure M --out DIR``: a parameter study (catalog.sweeps).

KEY is a documented parameter of the entry (``liedyn show NAME``), a component ``n[2]`` of a vector
parameter, or a component ``y0[i]`` / ``q0[i]`` / ``qd0[i]`` of the initial state; RANGE is
``lo:hi:num`` (``lo:hi:num:log``), ``v1,v2,...`` or one value; with ``--random N`` it is ``lo:hi``.
The points run on dask.distributed when it is installed (a LocalCluster of ``--workers`` processes, or
the cluster at ``--scheduler ADDRESS``), else serially. The table, its description and the figure go
to ``--out``.
"""

from __future__ import annotations

from .common import add_common, emit_json


def _axes(pairs):
    from ..sweeps import SweepError

    out = {}
    for p in pairs:
        if "=" not in p:
            raise SweepError(f"sweep parameter {p!r} must look like KEY=lo:hi:num (or KEY=v1,v2,... or KEY=value)")
        k, v = p.split("=", 1)
        k = k.strip()
        if k in out:
            raise SweepError(f"sweep parameter {k!r} is given twice")
        out[k] = v.strip()
    if not out:
        raise SweepError("give at least one -p KEY=lo:hi:num to sweep over")
    return out


def cmd_sweep(args):
    from ..sweeps import SweepError, grid, samples, sweep

    axes = _axes(args.param)
    if args.random is not None:
        g = samples(args.random, seed=0 if args.seed is None else args.seed, bounds=axes)
    else:
        if args.seed is not None:
            raise SweepError("--seed applies to --random samples")
        g = grid(axes)
    opts = {k: v for k, v in (("method", args.method), ("steps", args.steps), ("t_end", args.t_end)) if v is not None}
    res = sweep(args.name, g, args.measure, chunk=args.chunk, options=opts, workers=args.workers,
                scheduler=args.scheduler, serial=args.serial)
    paths = res.save(args.out, fmt=args.format, plot=not args.no_plot)
    from ..sweeps.output import metadata

    meta = metadata(res)
    meta["files"] = paths
    if args.json:
        emit_json(meta)
        return 0
    info = res.info
    print(f"{res.target}: {res.measure} over {g.describe()}")
    print(f"engine {info['engine']}: {info['workers']} workers, {info['tasks']} tasks of {info['chunk']} points, "
          f"{info['wall_time']:.2f} s")
    if res.failed:
        print(f"{res.failed} of {g.size} points failed (column 'error'), e.g. {meta['first_error']}")
    for k, p in paths.items():
        if p:
            print(f"{k}: {p}")
    return 0


def add_parsers(sub):
    from ..sweeps.measures import MEASURES

    p = sub.add_parser("sweep", help="parameter study of an entry (grid or random samples; dask.distributed)")
    p.add_argument("name", metavar="NAME", help="catalog entry name (see `liedyn list`) or a path to a .toml file")
    p.add_argument("-p", "--param", action="append", default=[], metavar="KEY=RANGE",
                   help="sweep axis: KEY=lo:hi:num, KEY=lo:hi:num:log, KEY=v1,v2,... or KEY=value (repeatable); "
                        "KEY is a parameter, n[i] a component of one, or y0[i], q0[i], qd0[i] of the initial "
                        "state; for a TOML file any number of it (b[0], inertia[1][1], w[0], t_end)")
    p.add_argument("--measure", required=True, metavar="M",
                   help=f"one of {', '.join(sorted(MEASURES))}")
    p.add_argument("--out", default="out/sweep", metavar="DIR", help="directory for sweep.csv, sweep.json, sweep.png")
    p.add_argument("--format", choices=("csv", "parquet"), default="csv")
    p.add_argument("--random", type=int, default=None, metavar="N", help="N random samples (-p KEY=lo:hi) instead of a grid")
    p.add_argument("--seed", type=int, default=None, help="seed of --random (default 0)")
    p.add_argument("--method", default=None, help="integrator of the simulating measures")
    p.add_argument("--steps", type=int, default=None, help="steps of the simulating measures")
    p.add_argument("--t-end", dest="t_end", type=float, default=None, help="final time of the simulating measures")
    p.add_argument("--chunk", type=int, default=None, help="points per dask task (default: about 4 tasks per worker)")
    p.add_argument("--workers", type=int, default=None, help="worker processes of the local cluster (default: cores)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS", help="use the dask cluster at ADDRESS (tcp://host:8786)")
    p.add_argument("--serial", action="store_true", help="run in this process, without dask")
    p.add_argument("--no-plot", action="store_true", help="do not draw sweep.png")
    add_common(p)
    p.set_defaults(func=cmd_sweep)
