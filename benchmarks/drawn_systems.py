"""Systems the benchmark does not choose by hand: a seeded draw of algebras of dimension 3 to 10.

    .venv/bin/python benchmarks/drawn_systems.py [--quick] [--seed N] [--numba-budget S] [--no-cold]
    .venv/bin/python benchmarks/drawn_systems.py --only-ensembles [--ensembles K] [--ensemble-reps R]
                                                 [--single-only] [--only LABEL ...]

Writes the section "drawn_systems" of benchmarks/RESULTS.md (issue 24).

The draw (seed 24 unless ``--seed``): so(5), sp(4), sl(3) (from their matrices,
``LieAlgebra.from_matrices``), so(4), se(3), two Bianchi types drawn from II..IX (VI_a, VII_a with a drawn
parameter), each once in its own basis and once in a random basis (``change_basis`` with P = Q diag(s),
Q a random rotation, s in [0.5, 2]); and two random solvable algebras, each in a random basis: n(k) + a
drawn number of random diagonal matrices (strictly upper triangular k x k matrices plus diagonal ones,
closed under the commutator) or R x_D R^(n-1) with a random D (an abelian ideal and one derivation).
On each algebra three systems with a random SPD inertia I = B B^T / n + 1, random covectors a, b and a
random initial state of norm r0: free Euler-Poincare, servo-constraint of the first kind, of the second
kind (lambda0 = 0.1). r0 = 1, halved until the tight reference stays within 10 r0 on t in [0, 10] (a
servo system does not keep its energy).

**One trajectory** through ``s.simulate(x0, 10.0, rtol=tol, atol=tol / 100, backend=...)``: its default
method (servo.lie.method_choice) and its default grid (1000 steps, states from the continuous extension),
against ``scipy.integrate.solve_ivp(method="DOP853", t_eval=the same 1001 times)`` with a hand-written
numpy rhs (w = W z + c, ad*_w z = ((w @ C.reshape(n, n n)).reshape(n, n)) @ z from the structure
constants, for the first kind minus the multiplier force; checked against ``problem.rhs``). Matched
accuracy: each tool's tolerance is the loosest of rtol 1e-4 .. 1e-13 (half decades, atol = rtol / 100)
whose final error against a tight reference (DOP853, rtol 1e-13, atol 1e-15) is <= 1e-8; then the tools
are timed in interleaved rounds, median of 5 (3 with --quick), in CPU time of the calling thread (time.thread_time: a compile in liedyn's background thread is not counted). Also the fully default call
``s.simulate(x0, 10.0)`` (rtol 1e-12). numba figures exclude compilation; the first numba call of each
system (which compiles the generated code for its structure unless numba's disk cache has it) is listed,
and numba is measured on the systems in draw order until ``--numba-budget`` seconds of first calls are
spent (the rest say so; the budget is checked before a call, and one call can take minutes), or with
``--numba-wait S`` on every system, each waiting at most S seconds for its loop (the structures already in the
cache load in a fraction of a second; the others are marked "(compiling)" and compile in liedyn's background
children meanwhile).

**Cold start**, in a fresh process with an empty code cache (``LIEDYN_CACHE_DIR`` a new directory): import,
building the algebra (with its Casimirs) and the system, the first default ``simulate`` (backend "auto"),
the first ``backend="numba"`` call; on the first systems of the draw (``--no-cold`` skips it).

**Ensembles of 10^4** (10^3 with --quick) random initial states around x0 on the first systems of the
draw: ``s.simulate(X0, 10.0, steps=None, ensemble="independent", backend="numba")`` and the numpy
ensemble with shared steps, against diffrax (JAX, float64, ``jax.jit(jax.vmap(...))`` on the CPU, Dopri8
and Tsit5 with a PID controller, the same rhs written in jax.numpy), each at the loosest tolerance whose
largest final error over 64 of the trajectories is <= 1e-8. diffrax is an optional comparator: without
jax the ensemble rows list liedyn alone. Compile times excluded (one warm-up call); wall and CPU time (the
process's, all threads: the work at equal cores) medians of ``--ensemble-reps`` (>= 3) interleaved rounds;
the attempted steps a trajectory; the threads each tool ran on (numba's pool; XLA's own); for the compiled
liedyn run the CPU time inside its kernel and the kernel's arithmetic rate (the flops of one attempt of
the lanes, counted in the generated text, times the attempts). Two compiled liedyn rows: the structure's
specialised ensemble kernel ("liedyn numba independent"; ``--specialised-ensembles compile`` compiles it in the
first call where numba's disk cache does not have it, minutes on a random basis, "cached" measures it only where it
is in the cache, "skip" never) and the generic ensemble kernel ("liedyn generic independent", the structure as data,
compiled once per machine: measured on every system). ``--only-ensembles`` runs this part alone and writes the
section "drawn_ensembles".

``--single-only`` measures the one-trajectory table alone (no cold start, no ensembles) and keeps the cold-start
and ensemble tables of the section as they are, marked as from the earlier run; ``--only`` restricts the draw
to the algebras whose labels are given (with --single-only: the rows of the other algebras are kept too, marked
as from the earlier run).

OPENBLAS_NUM_THREADS=1 (a threaded BLAS slows scipy's stage sums on a shared machine). The load average
is printed beside the figures: the machine is shared, so compare ratios within one run.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

# the parts, one a job: the draw of algebras, the systems and the yardstick (rhs, reference, matched accuracy,
# timing), the one-trajectory table, the cold starts, the ensembles; this file reads the command line and writes
# the report
from benchmarks._drawn_algebras import draw  # noqa: E402
from benchmarks._drawn_cold import cold  # noqa: E402
from benchmarks._drawn_ensembles import ensemble_section  # noqa: E402
from benchmarks._drawn_single import profile_one, single  # noqa: E402

#: the columns of the one-trajectory table (_earlier_section reads its rows back: 17 cells)
SINGLE_COLUMNS = ["algebra", "dim", "system", "method", "r0", "DOP853 rtol", "DOP853 [ms]", "numpy rtol", "numpy [ms]",
                  "numpy / DOP853", "numba rtol", "numba [ms]", "numba / DOP853", "default [ms]", "default error",
                  "first numba [s]", "algebra [s]", "generic rtol", "generic [ms]", "generic / DOP853"]


def _earlier_section():
    """The section drawn_systems of RESULTS.md as it is: its one-trajectory rows (lists of cells), the text
    from the cold-start table on (without its stamp), its stamp and the stamp of the run that text is from (an
    earlier --single-only run carried it over and named it: that run's, not the carrying run's); None when
    there is none."""
    from benchmarks._results import RESULTS
    text = RESULTS.read_text() if RESULTS.exists() else ""
    start, end = "<!-- begin drawn_systems -->", "<!-- end drawn_systems -->"
    if start not in text or end not in text:
        return None
    body = text.split(start, 1)[1].split(end, 1)[0]
    lines = body.strip().splitlines()
    stamp = next((ln.strip("_ ") for ln in lines if ln.startswith("_Measured")), "earlier run")
    rows, rest, in_rest = [], [], False
    carried = "The cold-start and ensemble tables below are from the earlier run ("
    rest_stamp = next((ln[len(carried):].rsplit("), not rerun", 1)[0] for ln in lines if ln.startswith(carried)),
                      stamp)
    for ln in lines:
        if ln.startswith("_Measured"):
            continue
        if ln.startswith("**Cold start**") or ln.startswith("**Ensembles**"):
            in_rest = True
        if in_rest:
            if ln.startswith("The cold-start and ensemble tables below are from"):
                continue
            rest.append(ln)
        elif ln.startswith("| ") and not ln.startswith("| algebra") and ln.count("|") in (18, 21):
            cells = [c.strip() for c in ln.strip("|").split("|")]
            rows.append(cells + ["-"] * (len(SINGLE_COLUMNS) - len(cells)))   # an earlier run without generic
    return {"rows": rows, "rest": "\n".join(rest).strip(), "stamp": stamp, "rest_stamp": rest_stamp}


def _publish(md, args, key, heading):
    """:func:`benchmarks._results.publish` of this script's section ``key`` (unless --no-write)."""
    from benchmarks._results import publish
    publish(md, key, heading, not args.no_write, "benchmarks/drawn_systems.py")


def _load_at_the_end(start):
    load1 = os.getloadavg()
    return (f"Load average at the end {load1[0]:.1f} / {load1[1]:.1f} / {load1[2]:.1f}. "
            f"Total benchmark time {time.perf_counter() - start:.0f} s.")


def main():
    from benchmarks._results import markdown_table
    from integrators.backends import numba_kernels

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="three algebras, smaller ensembles (a smoke run)")
    ap.add_argument("--seed", type=int, default=24)
    ap.add_argument("--numba-budget", type=float, default=None,
                    help="seconds of first numba calls (compilation) after which numba is not measured")
    ap.add_argument("--numba-wait", type=float, default=None,
                    help="seconds to wait for each system's own loop (its compile) instead of the total budget: a "
                         "loop not in the cache by then is '(compiling)' and the next system is measured")
    ap.add_argument("--no-cold", action="store_true", help="skip the cold-start processes")
    ap.add_argument("--cold-timeout", type=float, default=300.0)
    ap.add_argument("--ensembles", type=int, default=None, help="number of drawn systems with ensembles")
    ap.add_argument("--no-write", action="store_true", help="print, do not write RESULTS.md")
    ap.add_argument("--only-ensembles", action="store_true",
                    help="run the ensemble part alone; writes the section drawn_ensembles")
    ap.add_argument("--ensemble-reps", type=int, default=3, help="interleaved rounds of the ensembles (>= 3)")
    ap.add_argument("--specialised-ensembles", choices=("compile", "cached", "skip"), default="compile",
                    help="the specialised ensemble kernel's row: compiled in the first call where not cached "
                         "(minutes on a random basis), only where compiled or cached, or never; the generic "
                         "ensemble kernel's row is measured on every system")
    ap.add_argument("--one-core", action="store_true",
                    help="ensembles with one thread each side (numba.set_num_threads(1); XLA without its "
                         "Eigen pool, XLA_FLAGS --xla_cpu_multi_thread_eigen=false); writes drawn_ensembles_one_core")
    ap.add_argument("--single-only", action="store_true",
                    help="the one-trajectory table only; keep the section's cold-start and ensemble tables")
    ap.add_argument("--only", nargs="*", default=None, help="algebra labels of the draw to measure")
    ap.add_argument("--ensemble-systems", nargs="*", default=None, metavar="LABEL:KIND",
                    help="with --only-ensembles: rerun these systems of the full run's ensembles (label:kind, e.g. "
                         "'sp(4):free'), keeping the section's other rows")
    args = ap.parse_args()
    if args.numba_budget is None:
        args.numba_budget = 300.0 if args.quick else 900.0
    start = time.perf_counter()
    load0 = os.getloadavg()
    numba_ok = numba_kernels.available()
    drawn = draw(args.seed, args.quick)
    if args.ensemble_systems is not None and (args.only or not args.only_ensembles):
        raise SystemExit("--ensemble-systems goes with --only-ensembles and without --only (the systems' kinds are "
                         "their places in the whole draw)")
    if args.only:
        unknown = set(args.only) - {lab for lab, _ in drawn}
        if unknown:
            raise SystemExit(f"--only: not in the draw: {sorted(unknown)}")
        drawn = [d for d in drawn if d[0] in args.only]
    print("drawn:", ", ".join(lab for lab, _ in drawn), flush=True)
    if args.one_core:
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false"
                                   " intra_op_parallelism_threads=1").strip()
        if numba_ok:
            import numba
            numba.set_num_threads(1)
        args.only_ensembles = True
    if args.only_ensembles:
        md = [f"Load average at the start {load0[0]:.1f} / {load0[1]:.1f} / {load0[2]:.1f} (1 / 5 / 15 min) on "
              f"{os.cpu_count()} cores shared with other jobs; compare ratios within this run. Seed {args.seed}"
              f"{', --quick' if args.quick else ''}.", ""]
        md += ensemble_section(drawn, args, numba_ok)
        md.append(_load_at_the_end(start))
        key, title = (("drawn_ensembles_one_core", "one core each side") if args.one_core else
                      ("drawn_ensembles", "the cores each tool takes"))
        _publish(md, args, key, f"Ensembles of the drawn systems, {title} (issue 24)")
        return
    rows, notes, prof = single(drawn, args, numba_ok)
    md = [f"Load average at the start {load0[0]:.1f} / {load0[1]:.1f} / {load0[2]:.1f} (1 / 5 / 15 min) on "
          f"{os.cpu_count()} cores shared with other jobs; compare ratios within this run. "
          f"numba: {'installed' if numba_ok else 'not installed'}. Seed {args.seed}"
          f"{', --quick' if args.quick else ''}.", "",
          "**One trajectory through `s.simulate` (default method, default 1000-step grid) at final error <= 1e-8**, "
          "t in [0, 10], against solve_ivp DOP853 with the same t_eval and a hand-written numpy rhs "
          "(targets: numpy <= 1.0x, numba <= 0.3x DOP853); times are CPU time of the calling thread (a background compile not counted), median of "
          f"{3 if args.quick else 5} interleaved rounds. `default`: `s.simulate(x0, 10.0)` as it is "
          "(rtol 1e-12), its time and final error. `first numba`: the first numba call of the system in this "
          "process (compiles unless numba's disk cache has the structure). `algebra`: building it with its "
          "Casimirs. `numba`: the structure's own compiled loop (after its compile). `generic`: the same "
          "`backend=\"numba\"` call on the generic kernel (the structure as data, compiled once per machine), what "
          "that call runs until the structure's loop is compiled (minutes on a random basis); `(numpy)`: the generic "
          "kernel does not run the method there (the RKMK steps on an almost abelian algebra's orbits, "
          "integrators.geometry.orbit_space), the call runs numpy until that loop is compiled.", "",
          markdown_table(SINGLE_COLUMNS, rows), ""]
    old = _earlier_section() if args.single_only else None
    kept = []
    if old is not None and args.only:   # the rows of the algebras not measured now, from the earlier run
        kept = [r for r in old["rows"] if r[0] not in args.only]
        if kept:
            md += ["Rows of the earlier run (algebras not measured in this run; that run's tree and load):", "",
                   markdown_table(SINGLE_COLUMNS, kept), ""]
    md += ["- " + n for n in notes]
    if kept:
        md.append(f"- The figures below are over this run's {len(rows)} rows and the earlier run's {len(kept)}.")

    def ratio(r, col):
        try:
            return float(r[col].rstrip("x"))
        except ValueError:
            return None
    np_r = [x for x in (ratio(r, 9) for r in rows + kept) if x is not None]
    nb_r = [x for x in (ratio(r, 12) for r in rows + kept) if x is not None]
    gk_r = [x for x in (ratio(r, 19) for r in rows + kept) if x is not None]
    if np_r:
        md.append(f"- numpy / DOP853: median {np.median(np_r):.2f}x, worst {max(np_r):.2f}x; "
                  f"<= 1.0x on {sum(x <= 1.0 for x in np_r)} of {len(np_r)} systems.")
    if nb_r:
        md.append(f"- numba / DOP853: median {np.median(nb_r):.2f}x, worst {max(nb_r):.2f}x; "
                  f"<= 0.3x on {sum(x <= 0.3 for x in nb_r)} of {len(nb_r)} systems measured with numba.")
    if gk_r:
        md.append(f"- generic kernel / DOP853 (what backend='numba' runs before the structure's loop is compiled): "
                  f"median {np.median(gk_r):.2f}x, worst {max(gk_r):.2f}x; <= 0.3x on {sum(x <= 0.3 for x in gk_r)} "
                  f"of {len(gk_r)} systems.")
    if prof is not None:
        label, kind, r, total, keep = profile_one(prof)
        md += ["", f"Profile of one numpy call on the worst system ({kind} on {label}, {r:.2f}x DOP853; "
               f"{total * 1e3:.2f} ms a call under cProfile), top functions by own time:", "", "```",
               *keep, "```"]
    md.append("")
    if args.single_only:
        if old is not None and old["rest"]:
            md += [f"The cold-start and ensemble tables below are from the earlier run ({old['rest_stamp']}), not rerun "
                   "with --single-only:", "", old["rest"]]
        _publish(md, args, "drawn_systems", "Drawn systems (issue 24)")
        return
    if not args.no_cold:
        # cold start: the first system of three kinds of algebra (the quick run: one)
        picks = [(0, "free", 1.0)] if args.quick else [(0, "free", 1.0), (2, "servo1", 1.0), (5, "free", 1.0)]
        picks = [p for p in picks if p[0] < len(drawn)]
        cr = cold(drawn, args, picks)
        md += ["**Cold start** in a fresh process with an empty code cache (targets: no \"auto\" call waits more than "
               "2 s on a compiler; the first numba call <= 10 s)", "",
               markdown_table(["algebra", "system", "import [s]", "algebra + Casimirs [s]", "system [s]",
                               "first simulate, auto [s]", "auto ran", "first numba call [s]", "process [s]"], cr),
               ""]
    md += ensemble_section(drawn, args, numba_ok)
    md.append(_load_at_the_end(start))
    _publish(md, args, "drawn_systems", "Drawn systems (issue 24)")


if __name__ == "__main__":
    main()
