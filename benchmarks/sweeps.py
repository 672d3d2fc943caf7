"""Sweeps on dask.distributed: parallel efficiency, overhead per task, cost of the machinery per point.

1. ``invariant_lines`` of the Euler top (p = 3 reduced system x' = x x I^-1 x) over a grid I1 x I2 of
   --points points: serially in this process (``serial=True``, what a user runs without dask) and on a
   LocalCluster of --workers single-threaded worker processes (started once, before the timings; its
   start-up is reported apart). Parallel efficiency = T_serial / (workers T_parallel); the two tables must
   be identical (bitwise). Runs are interleaved (parallel, serial, parallel, ...) and the median is kept.
2. The ``empty`` measure (nothing measured, no entry built): the sweep machinery alone (points, chunks,
   tasks, transfer, the tidy table) per point with the default chunking, and per task with chunk = 1.

The machine is shared: the 1-minute load average (os.getloadavg) is recorded beside every timing.

Run:  python benchmarks/sweeps.py [--points 10000] [--repeat 1] [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import markdown_table, update_section  # noqa: E402

import catalog  # noqa: E402
from catalog.sweeps import grid, sweep  # noqa: E402
from catalog.sweeps.engine import _local_cluster  # noqa: E402


def load():
    return os.getloadavg()[0]


def same(a, b):
    return list(a.columns) == list(b.columns) and all(
        np.array_equal(a.columns[k], b.columns[k], equal_nan=a.columns[k].dtype.kind == "f") for k in a.columns)


def timed(fn, client=None):
    """(wall s, mean load, result, CPU s of this process + of the workers of ``client``)."""
    l0 = load()
    c0 = time.process_time() + (sum(client.run(time.process_time).values()) if client else 0.0)
    t0 = time.perf_counter()
    r = fn()
    wall = time.perf_counter() - t0
    cpu = time.process_time() + (sum(client.run(time.process_time).values()) if client else 0.0) - c0
    return wall, (l0 + load()) / 2, r, cpu


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--empty-points", type=int, default=100_000)
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args(argv)
    side = int(round(np.sqrt(a.points)))
    g = grid(I1=f"2.2:4:{side}", I2=f"0.8:2:{a.points // side}")
    n = g.size
    print(f"uptime load {load():.2f}; {os.cpu_count()} cores; {n} points", flush=True)

    t0 = time.perf_counter()
    client, cluster = _local_cluster(a.workers)
    t_start = time.perf_counter() - t0
    try:
        warm = grid(I1="2.2:4:4", I2="0.8:2:5")
        sweep("euler_top", warm, "invariant_lines", client=client)  # imports and first calls on the workers
        sweep("euler_top", warm, "invariant_lines", serial=True)
        par, ser, loads_p, loads_s, cpu_p, cpu_s = [], [], [], [], [], []
        identical = True
        for _ in range(a.repeat):
            t, l, rp, c = timed(lambda: sweep("euler_top", g, "invariant_lines", client=client), client)
            par.append(t)
            loads_p.append(l)
            cpu_p.append(c)
            print(f"parallel {t:.1f} s, CPU {c:.1f} s (load {l:.2f}, {rp.info['tasks']} tasks of {rp.info['chunk']})",
                  flush=True)
            t, l, rs, c = timed(lambda: sweep("euler_top", g, "invariant_lines", serial=True))
            ser.append(t)
            loads_s.append(l)
            cpu_s.append(c)
            print(f"serial {t:.1f} s, CPU {c:.1f} s (load {l:.2f})", flush=True)
            identical &= same(rp, rs)
        tp, ts = statistics.median(par), statistics.median(ser)
        cp, cs = statistics.median(cpu_p), statistics.median(cpu_s)
        eff = ts / (a.workers * tp)
        eff_cpu = cs / cp
        print(f"efficiency {eff:.3f} (CPU {eff_cpu:.3f}), identical {identical}", flush=True)

        ne = a.empty_points
        ge = grid(I1=f"1:2:{ne // 100}", I2="1:2:100")
        emp = []
        for _ in range(3):
            t, l, re_, _ = timed(lambda: sweep("euler_top", ge, "empty", client=client))
            emp.append((t, l))
        te, le = sorted(emp)[1]
        print(f"empty {ne}: {te:.2f} s, {1e3 * te / ne:.4f} ms per point ({re_.info['tasks']} tasks)", flush=True)
        ge4 = grid(I1="1:2:100", I2="1:2:100")
        emp4 = sorted(timed(lambda: sweep("euler_top", ge4, "empty", client=client))[:2] for _ in range(3))[1]
        nt = 2000
        g1 = grid(I1=f"1:2:{nt}")
        one = sorted(timed(lambda: sweep("euler_top", g1, "empty", client=client, chunk=1))[:2] for _ in range(3))[1]
        print(f"chunk=1: {one[0]:.2f} s for {nt} tasks = {1e3 * one[0] / nt:.2f} ms per task", flush=True)
        ts_e = timed(lambda: sweep("euler_top", ge4, "empty", serial=True))[0]
    finally:
        client.close()
        cluster.close()

    per_point = 1e3 * ts / n
    rows = [
        [f"invariant_lines, {n} points, serial (this process)", f"{ts:.1f} s (CPU {cs:.1f} s)",
         f"{per_point:.1f} ms/point ({1e3 * cs / n:.1f} ms CPU)", f"{statistics.median(loads_s):.1f}"],
        [f"invariant_lines, {n} points, {a.workers} worker processes", f"{tp:.1f} s (CPU {cp:.1f} s, all processes)",
         f"wall efficiency T_s / ({a.workers} T_p) = {eff:.2f}; CPU efficiency CPU_s / CPU_p = {eff_cpu:.2f}; "
         f"tables identical: {'yes' if identical else 'NO'}", f"{statistics.median(loads_p):.1f}"],
        [f"empty measure, {ne} points, default chunks, {a.workers} workers", f"{te:.2f} s",
         f"{1e3 * te / ne:.4f} ms/point", f"{le:.1f}"],
        [f"empty measure, 10000 points, default chunks, {a.workers} workers", f"{emp4[0]:.2f} s",
         f"{1e3 * emp4[0] / 10000:.4f} ms/point", f"{emp4[1]:.1f}"],
        [f"empty measure, {nt} tasks of 1 point (chunk = 1)", f"{one[0]:.2f} s",
         f"{1e3 * one[0] / nt:.2f} ms per task (wall, {a.workers} workers)", f"{one[1]:.1f}"],
        ["empty measure, 10000 points, serial", f"{ts_e:.2f} s", f"{1e3 * ts_e / 10000:.4f} ms/point", "-"],
        [f"LocalCluster start ({a.workers} processes), once per sweep without client", f"{t_start:.1f} s", "-", "-"],
    ]
    md = (f"Euler top (p = 3 reduced system) over I1 x I2, measure `invariant_lines`; {os.cpu_count()} cores shared "
          f"with other users, so the 1-minute load average is given beside each timing (median of {a.repeat} "
          f"interleaved runs for the {n}-point sweeps, median of 3 for the empty ones). CPU times: this process "
          f"(client, scheduler, serial run) plus the workers (time.process_time through client.run). The wall "
          f"efficiency needs {a.workers} idle cores: with autogroup scheduling (Linux sessions share the CPU "
          f"equally) and a load above the core count, a session's {a.workers} workers get no more CPU than one "
          f"process, so under load the CPU efficiency is the figure that measures the engine.\n\n"
          + markdown_table(["run", "wall time", "per point / result", "load"], rows)
          + f"\n\nTargets: efficiency >= 0.80 on {a.workers} workers: wall {'met' if eff >= 0.8 else 'NOT met'} "
            f"({eff:.2f} at load {statistics.median(loads_p):.1f}), CPU {'met' if eff_cpu >= 0.8 else 'NOT met'} "
            f"({eff_cpu:.2f}); machinery <= 1 ms per point with chunking: "
            f"{'met' if te / ne <= 1e-3 else 'NOT met'} ({1e3 * te / ne:.3f} ms).")
    print(md)
    if not a.no_write:
        update_section("sweeps", "## Sweeps on dask.distributed (catalog.sweeps)\n\n" + md,
                       f"python benchmarks/sweeps.py --points {a.points} --repeat {a.repeat} --workers {a.workers}")


if __name__ == "__main__":
    main()
