"""What the benchmark scripts share: the timer, the PASS/MISS verdict and the options of the
generated table. Each script puts bench/ on sys.path (it is run as ``python bench/x.py``) and
imports this as ``common``."""

from __future__ import annotations

import argparse
import statistics
import sys
import time

CPU: dict[str, float] = {}  # label -> median process CPU seconds (all threads)


def timed(fn, repeat: int, label: str = ""):
    """(median wall seconds, all wall seconds, last result) of ``repeat`` calls. The median
    process CPU time is kept in ``CPU[label]``: on a busy machine wall time varies with the
    load, CPU time much less."""
    times, cpu, out = [], [], None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        if label:  # progress on stderr, so a long run shows it is alive
            print(f"  {label}: run {len(times)}/{repeat} {times[-1]:.2f} s", file=sys.stderr, flush=True)
    CPU[label] = statistics.median(cpu)
    return statistics.median(times), times, out


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def table_options(ap: argparse.ArgumentParser, *, rows: int, cols: int = 18) -> None:
    """--rows, --cols and --seed of the generated table (bench/datagen.py)."""
    ap.add_argument("--rows", type=int, default=rows)
    ap.add_argument("--cols", type=int, default=cols)
    ap.add_argument("--seed", type=int, default=20240601)
