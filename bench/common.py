"""What the benchmark scripts share: the timer, the PASS/MISS verdict, the argument parser and
the options of the generated table, the header lines and the DuckDB file of that table. Each script puts bench/ on sys.path (it is run as ``python bench/x.py``) and
imports this as ``common``."""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import datagen

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


def parser(doc: str, *, repeat: int = 3, repeat_help: str | None = None, **table) -> argparse.ArgumentParser:
    """A benchmark's argument parser: the first paragraph of its docstring as the description,
    the generated table's options when ``table`` gives them (:func:`table_options`), and
    --repeat, the runs whose median is reported."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    if table:
        table_options(ap, **table)
    ap.add_argument("--repeat", type=int, default=repeat, help=repeat_help)
    return ap


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def table_options(ap: argparse.ArgumentParser, *, rows: int, cols: int = 18) -> None:
    """--rows, --cols and --seed of the generated table (bench/datagen.py)."""
    ap.add_argument("--rows", type=int, default=rows)
    ap.add_argument("--cols", type=int, default=cols)
    ap.add_argument("--seed", type=int, default=20240601)


def file_options(ap: argparse.ArgumentParser, out: Path) -> None:
    """--out and --keep of the DuckDB file the generated table is written to."""
    ap.add_argument("--out", default=str(out), help="folder for the DuckDB file")
    ap.add_argument("--keep", action="store_true", help="keep the DuckDB file")


def print_versions(*extra: str) -> None:
    """The header: which qar_sql is measured, and on what (versions, CPUs, load)."""
    import duckdb
    import numpy as np

    import qar_sql

    print(f"qar_sql {qar_sql.__version__} from {Path(qar_sql.__file__).parent}")
    libs = ", ".join(
        [f"python {platform.python_version()}", f"duckdb {duckdb.__version__}", f"numpy {np.__version__}", *extra]
    )
    print(f"{libs}; {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f}")


def duckdb_table(out: str, stem: str, table: str, rows: int, cols: int, seed: int) -> tuple[str, dict]:
    """(path, data): ``datagen.skewed_table(rows, cols, seed)`` written as ``table`` to a new
    DuckDB file ``<out>/<stem>_<pid>.duckdb``."""
    data = datagen.skewed_table(rows, cols, seed)
    Path(out).mkdir(parents=True, exist_ok=True)
    path = str(Path(out) / f"{stem}_{os.getpid()}.duckdb")
    datagen.write_duckdb(path, table, data)
    return path, data


def remove_duckdb(path: str) -> None:
    """Delete a DuckDB file and its write-ahead log."""
    for suffix in ("", ".wal"):
        Path(path + suffix).unlink(missing_ok=True)
