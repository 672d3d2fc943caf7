"""``liedyn simulate NAME``: integrate, print the drift of every first integral, the constraint residual
and the verdicts; ``--out traj.csv`` writes the trajectory (``--out traj.json``: the trajectory and the
summary as JSON), ``--plot path.png`` a figure. With ``--json`` the trajectory is in the output
("trajectory": {"columns": name -> full name, "data": name -> values}), or, with ``--out``, the output says
where it went ("trajectory": {"columns": ..., "csv": path}).

A run that ends with status -1 (overflow, a step that does not resolve the solution, an invariant or a
constraint beyond its tolerance, a solver budget spent) prints ``status -1: <message>``, every verdict
says FAIL ... [not reached], ``--json`` carries "status" and "message", and the command exits with 1.
Floating-point warnings are not printed: what they would say is in the status and the message."""

from __future__ import annotations

import numpy as np
from integrators.core.export import column_name

from ..errors import CatalogError
from ..verify.run import drift, exact_error
from .common import Progress, add_common, add_entry_args, emit_json, is_json_path, resolve, write_json


#: the full names of the motion's columns (catalog.verify.motion)
MOTION_NAMES = {"x": "x (position of the body frame's origin)", "y": "y (position of the body frame's origin)",
                "z": "z (position of the body frame's origin)", "theta": "theta (heading on SE(2), unwrapped)",
                **{f"R{i}{j}": f"R{i}{j} (attitude R, body to space)" for i in (1, 2, 3) for j in (1, 2, 3)}}


def trajectory_columns(run):
    """{column name: (full name, array (K,))}: t, the state labels, the motion on the group (SE(2): x, y,
    theta; SO(3): R11..R33; SE(3): x, y, z, R11..R33; :mod:`catalog.verify.motion`), then the first
    integrals, with names a program can read (``integrators.core.export.column_name``: "energy (m, I^-1 m)/2" ->
    "energy")."""
    from ..verify.motion import motion

    K = len(run.t)
    series = [("t", run.t)]
    y = run.y.reshape(K, -1)
    labels = list(run.labels or [])
    if len(labels) != y.shape[1]:
        labels = [f"y{i + 1}" for i in range(y.shape[1])]
    series += [(lab, y[:, i]) for i, lab in enumerate(labels)]
    try:
        with np.errstate(all="ignore"):
            mo = motion(run) if y.ndim == 2 else None
    except ValueError:  # velocities that overflow after a failed run: no motion to write
        mo = None
    taken = set(labels)
    for k, v in (mo or {}).items():
        series.append((MOTION_NAMES[k] if k not in taken else f"{k} (motion)", v))
    series += [(k, np.asarray(v, float).reshape(K)) for k, v in run.invariants.items()]
    out = {}
    for full, v in series:
        out[column_name(full, out)] = (full, np.asarray(v, float))
    return out


def write_csv(path, run):
    """Columns: t, the state labels, then the first integrals (machine-readable names)."""
    cols = trajectory_columns(run)
    np.savetxt(path, np.column_stack([v for _, v in cols.values()]), delimiter=",", header=",".join(cols),
               comments="")


def simulate_data(entry, run, verdicts, csv_path=None):
    cols = trajectory_columns(run)
    trajectory = {"columns": {k: full for k, (full, _) in cols.items()}}
    if csv_path:
        trajectory["csv"] = str(csv_path)
    else:
        trajectory["data"] = {k: v for k, (_, v) in cols.items()}
    return {
        "name": entry.name, "status": int(run.status), "message": run.message,
        "method": run.method, "t_end": float(run.t[-1]), "steps": run.nsteps,
        "nfev": run.nfev, "wall_time": run.wall_time,
        "drift": {k: drift(run, k) for k in run.invariants},
        "constraint_residual": {k: float(np.max(np.abs(v))) for k, v in run.constraints.items()},
        "exact_error": exact_error(run), "final_state": run.y[-1],
        "labels": list(run.labels), "events": [list(map(str, e)) for e in run.events],
        "verdicts": [v.as_dict() for v in verdicts],
        "trajectory": trajectory,
    }


def cmd_simulate(args):
    from ..output import plots
    from ..verify.run import checks, simulate

    if args.out and not (is_json_path(args.out) or str(args.out).lower().endswith(".csv")):
        raise CatalogError(f"--out {args.out}: the suffix chooses the format, .csv or .json")
    entry = resolve(args.name, args.param)
    with Progress(f"simulating {entry.name}"), np.errstate(all="ignore"):
        run = simulate(entry, t_end=args.t_end, steps=args.steps, method=args.method)
        verdicts = checks(entry, run)
    code = 1 if run.status < 0 else 0
    csv_path = args.out if args.out and not is_json_path(args.out) else None
    d = simulate_data(entry, run, verdicts, csv_path)
    if args.out and is_json_path(args.out):
        write_json(args.out, dict(d, t=run.t, y=run.y, integrals=dict(run.invariants)))
    elif args.out:
        write_csv(args.out, run)
    plot_paths = []
    if args.plot:
        from pathlib import Path

        from ..output.motion_figure import motion_figure

        plot_paths.append(plots.save(plots.trajectory_figure(entry, run), args.plot))
        if run.outputs.get("path") is None:  # SO(3), SE(3): the attitude in a second figure beside it
            with np.errstate(all="ignore"):
                fig = motion_figure(entry, run)
            if fig is not None:
                p = Path(args.plot)
                second = p.with_name(f"{p.stem}-motion{p.suffix or '.png'}")
                fig.savefig(second, dpi=150)
                plot_paths.append(str(second))
    if args.json:
        emit_json(d)
        return code
    print(f"{entry.name}: method {run.method}, t_end {d['t_end']:g}, {run.nsteps} steps, "
          f"{run.nfev} evaluations, {run.wall_time:.3f} s")
    if run.status < 0:
        print(f"status -1: {run.message}")
    print("final state: " + ", ".join(f"{lab}={v:.10g}" for lab, v in zip(run.labels, run.y[-1])))
    for v in verdicts:
        print(v.line())
    if not verdicts:
        print("(no first integral, exact solution or constraint to check)")
    if args.out:
        print(f"trajectory: {args.out}")
    for path in plot_paths:
        print(f"figure: {path}")
    return code


def add_parsers(sub):
    p = sub.add_parser("simulate", help="integrate a system and report invariant drift and constraint residual")
    add_entry_args(p)
    p.add_argument("--t-end", type=float, default=None, help="final time (default: the entry's)")
    p.add_argument("--steps", type=int, default=None, help="number of steps (default: the entry's)")
    p.add_argument("--method", default=None, help="integrator name, e.g. rkmk4, cf4, rk4, scipy:DOP853")
    p.add_argument("--out", default=None, metavar="traj.csv|traj.json",
                   help="write the trajectory as CSV, or with the summary as JSON (by the suffix)")
    p.add_argument("--plot", default=None, metavar="path.png",
                   help="save a figure of the motion (on SO(3) / SE(3) also path-motion.png: the attitude)")
    add_common(p)
    p.set_defaults(func=cmd_simulate)
