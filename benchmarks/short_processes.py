"""Short-lived processes and the background compile of the specialised loop (issue 24), this tree against another
(``--old``, a worktree of main, where that compile ran in a thread of the process and died with it).

*Series*: fresh processes one after another, each ``benchmarks/forced_lie.py --case numba`` (ServoFirstKind on so(4)
through ``s.simulate``, one and two constraints, rkmk4 and rkmk853 with backend="numba": a first call and the median
CPU time of 5 more), all of a tree sharing one liedyn and numba cache directory, empty at the start (the generic
kernel put there first by one process, as a machine that has run liedyn before has it: the series is about the
specialised loops). Per process: seconds since the series began, what the rkmk853 calls ran (result.backend) and
their median ms. A series stops when two processes in a row ran the specialised loop on both rkmk853 cases, or
after ``--budget`` seconds.

*Beside*: in one process (its cache holding the generic kernel, not the specialised loop of the two-constraint
system), the wall and CPU time of REPS numpy calls (rkmk853, one constraint) alone, then the same right after a
backend="numba" call of the two-constraint system queued that system's specialised compile (old tree: in a thread
of this process; this tree: in a child process), and whether that compile was still running when the calls ended.

    python benchmarks/short_processes.py --old /path/to/main      # writes the section short_processes of RESULTS.md
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPS = 150


def _env(tree, cache):
    return dict(os.environ, PYTHONPATH=tree, PYTHONDONTWRITEBYTECODE="1", OPENBLAS_NUM_THREADS="1",
                LIEDYN_CACHE_DIR=cache, NUMBA_CACHE_DIR=os.path.join(cache, "numba"), LIEDYN_AUTO_COMPILE="background")


def _warm_generic(tree, cache):
    subprocess.run([sys.executable, "-c", "from integrators.backends import generic_kernel; generic_kernel.warm()"],
                   env=_env(tree, cache), cwd=tree, check=True)


def series(tree, budget):
    """[(seconds since the start, {rkmk853 key: [backend, median ms]})] of fresh processes of ``tree``."""
    from benchmarks.forced_lie import _run
    cache = tempfile.mkdtemp(prefix="liedyn_short_")
    try:
        _warm_generic(tree, cache)
        os.environ.update(LIEDYN_AUTO_COMPILE="background")     # (forced_lie._run passes os.environ on)
        t0, out, fast = time.monotonic(), [], 0
        while time.monotonic() - t0 < budget:
            got = _run(tree, "numba", cache)
            rows = {k: [v[3], 1e3 * v[1]] for k, v in got.items() if "rkmk853" in k}
            out.append((round(time.monotonic() - t0, 1), rows))
            print(tree, out[-1], flush=True)
            fast = fast + 1 if all(b == "numba" for b, _ in rows.values()) else 0
            if fast == 2:
                break
        return out
    finally:
        time.sleep(1)
        shutil.rmtree(cache, ignore_errors=True)


def beside_case():
    """In this process: (alone wall s, alone CPU s, beside wall s, beside CPU s, compile still running)."""
    from forced_lie import system        # (this file's directory; liedyn from the tree on PYTHONPATH)
    from integrators.backends import auto_compile
    s1, m1 = system(1)
    s2, m2 = system(2)

    def calls():
        w, c = time.perf_counter(), time.process_time()
        for _ in range(REPS):
            s1.simulate(m1, 10.0, method="rkmk853", backend="numpy")
        return time.perf_counter() - w, time.process_time() - c
    calls()
    alone = calls()
    r = s2.simulate(m2, 10.0, method="rkmk853", backend="numba")    # queues the specialised compile
    beside = calls()
    pids = getattr(auto_compile, "children", list)()
    print(json.dumps([*alone, *beside, auto_compile.busy() or bool(pids), r.backend, pids]))


def beside(tree):
    cache = tempfile.mkdtemp(prefix="liedyn_beside_")
    try:
        _warm_generic(tree, cache)
        out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--beside-case"], capture_output=True,
                             text=True, cwd=tree, check=True, env=_env(tree, cache))
        got = json.loads(out.stdout.strip().splitlines()[-1])
        for pid in got[-1]:     # the child compiling into the cache removed below: not needed any more
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        return got
    finally:
        time.sleep(1)
        shutil.rmtree(cache, ignore_errors=True)


def _ran(backend):
    return "generic kernel" if "generic" in backend else backend.split(" (")[0]


def render(ser, bes, rev, budget, loads):
    """The section's markdown: per tree, the runs of consecutive processes that ran the same loops (process
    numbers, seconds since the first, what the rkmk853 cases ran, their median ms range), and the beside table."""
    from benchmarks._results import markdown_table
    keys = sorted(next(iter(ser.values()))[0][1])
    rows = []
    for name, runs in ser.items():
        i = 0
        while i < len(runs):
            ran = [_ran(runs[i][1][k][0]) for k in keys]
            j = i
            while j + 1 < len(runs) and [_ran(runs[j + 1][1][k][0]) for k in keys] == ran:
                j += 1
            seg = runs[i:j + 1]
            gaps = [b[0] - a[0] for a, b in zip(runs[max(i - 1, 0):j], runs[max(i, 1):j + 1])]
            cells = []
            for n, k in enumerate(keys):
                ms = [r[k][1] for _, r in seg]
                cells.append(f"{ran[n]}: {min(ms):.2f}-{max(ms):.2f}")
            rows.append([name, f"{i + 1}-{j + 1}", f"{seg[0][0]:.0f}-{seg[-1][0]:.0f}",
                         f"{max(gaps):.0f}" if gaps else "-", *cells])
            i = j + 1
    md1 = markdown_table(["tree", "processes", "s since the series began", "longest s between two processes",
                          *[f"{k}: ran, median ms" for k in keys]], rows)
    brow = [[name, f"{b[0]:.2f}", f"{b[2]:.2f}", f"{b[2] / b[0]:.2f}", f"{b[1]:.2f}", f"{b[3]:.2f}",
             "yes" if b[4] else "no"] for name, b in bes.items()]
    md2 = markdown_table(["tree", "alone wall s", "beside the compile wall s", "ratio", "alone CPU s",
                          "beside CPU s", "compile still running at the end"], brow)
    return ("Short-lived processes (issue 24): fresh processes one after another, each `forced_lie.py --case numba` "
            "(ServoFirstKind on so(4) through `s.simulate`, backend=\"numba\", a first call then the median CPU of 5), "
            "one cache directory per tree, empty but for the generic kernel at the start; what the rkmk853 cases ran "
            f"and their median. Old tree {rev or '-'}: the specialised compile in a thread of the process; new: in a "
            "detached child process. A series stops after two processes in a row on the specialised loop, or "
            f"{budget:.0f} s. Load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores.\n\n" + md1 +
            f"\n\nA process's own calls beside the compile: {REPS} numpy calls (rkmk853, one constraint) alone, then "
            "right after a backend=\"numba\" call of the two-constraint system queued its specialised compile "
            "(one process per tree).\n\n" + md2)


def from_log(path):
    """(series, beside) from the printed lines of a run (to render its section again)."""
    import ast
    ser, bes = {}, {}
    for line in Path(path).read_text().splitlines():
        head, _, rest = line.partition(" ")
        if rest.startswith("beside "):
            bes[head] = json.loads(rest[len("beside "):].replace("'", '"').replace("True", "true")
                                   .replace("False", "false"))
        elif rest.startswith("("):
            ser.setdefault("new" if Path(head).resolve() == ROOT else "old", []).append(ast.literal_eval(rest))
    return {k: ser[k] for k in ("old", "new") if k in ser}, bes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", default=None, help="another tree (a worktree of main)")
    ap.add_argument("--budget", type=float, default=300.0, help="seconds per series")
    ap.add_argument("--beside-case", action="store_true")
    ap.add_argument("--from-log", default=None, help="render the section from a run's printed lines")
    ap.add_argument("--loads", default="", help="with --from-log: the run's load average range, 'lo,hi'")
    args = ap.parse_args()
    if args.beside_case:
        return beside_case()
    if args.from_log:
        sys.path.insert(0, str(ROOT))
        from benchmarks._results import update_section
        ser, bes = from_log(args.from_log)
        rev = "" if args.old is None else subprocess.run(["git", "-C", args.old, "rev-parse", "--short", "HEAD"],
                                                         capture_output=True, text=True).stdout.strip()
        md = render(ser, bes, rev, args.budget, [float(x) for x in args.loads.split(",")])
        print(md)
        return update_section("short_processes", md, "python benchmarks/short_processes.py"
                              + (" --old <worktree of main>" if args.old else ""))
    sys.path.insert(0, str(ROOT))
    from benchmarks._results import markdown_table, update_section
    trees = {"new": str(ROOT)} if args.old is None else {"old": args.old, "new": str(ROOT)}
    loads = [os.getloadavg()[0]]
    ser, bes = {}, {}
    for name, tree in trees.items():
        bes[name] = beside(tree)
        loads.append(os.getloadavg()[0])
        print(name, "beside", bes[name], flush=True)
    for name, tree in trees.items():
        ser[name] = series(tree, args.budget)
        loads.append(os.getloadavg()[0])
    rev = "" if args.old is None else subprocess.run(["git", "-C", args.old, "rev-parse", "--short", "HEAD"],
                                                     capture_output=True, text=True).stdout.strip()
    md = render(ser, bes, rev, args.budget, loads)
    print(md)
    update_section("short_processes", md, "python benchmarks/short_processes.py"
                   + (" --old <worktree of main>" if args.old else ""))


if __name__ == "__main__":
    main()
