"""Start-up time (issue 28): ``import qar_sql`` and ``qar --help``, cold and warm, medians.

Each run is a fresh ``python`` process (this interpreter, ``-c``), importing this checkout
(PYTHONPATH). *Warm*: the bytecode cache exists (every run after the first, as after ``pip
install``, which compiles it). *Cold*: an empty bytecode cache each run (PYTHONPYCACHEPREFIX set
to a new empty folder, so every module of qar_sql, click, jinja2, … is compiled from source) —
the worst case, slower than a first run after installing. The OS file cache is not dropped (that
needs root and slows everyone on a shared machine). Prints the medians, the target (0.3 s) and,
with ``--importtime``, the ten slowest imports of ``qar --help`` (python -X importtime).

    python bench/bench_startup.py --repeat 15
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = 0.3
CASES = {
    "import qar_sql": "import qar_sql",
    "qar --help": "import sys; sys.argv = ['qar', '--help']; from qar_sql.cli import main; main()",
    "python (nothing)": "pass",
}


def once(code: str, cold: bool) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory() as cache:
        if cold:
            env["PYTHONPYCACHEPREFIX"] = cache
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.DEVNULL, check=True)
        return time.perf_counter() - started


def importtime(code: str, top: int = 10) -> list[tuple[int, str]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    err = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], env=env, capture_output=True, text=True
    ).stderr
    rows = []
    for line in err.splitlines():
        m = re.match(r"import time:\s+\d+ \|\s+(\d+) \|\s*(\S+)", line)
        if m:  # (cumulative µs, module)
            rows.append((int(m.group(1)), m.group(2)))
    return sorted(rows, reverse=True)[:top]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=11)
    ap.add_argument("--importtime", action="store_true")
    args = ap.parse_args()
    print(f"python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f}, {args.repeat} runs each")
    for name, code in CASES.items():
        once(code, cold=False)  # write the bytecode cache once
        for cold in (False, True):
            times = [once(code, cold) for _ in range(args.repeat)]
            med = statistics.median(times)
            verdict = "" if name.startswith("python") else ("PASS" if med < TARGET else "MISS")
            print(
                f"{name:18} {'cold' if cold else 'warm'}  median {med:.3f} s  "
                f"(min {min(times):.3f}, max {max(times):.3f})  {verdict}",
                flush=True,
            )
    if args.importtime:
        print("\nslowest imports of qar --help (cumulative µs, python -X importtime):")
        for us, mod in importtime(CASES["qar --help"]):
            print(f"  {us:>8,}  {mod}")


if __name__ == "__main__":
    main()
