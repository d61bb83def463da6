"""Speed of the dbt package's ``qar.risk`` (one SQL statement, through dbt-duckdb) against
``qar audit`` of the same table, in one run.

Data: ``--rows`` (default 1,000,000) rows x 18 skewed categorical columns (bench/datagen.py,
seeded), written to a DuckDB file under bench/out/, which is also the dbt warehouse. A dbt
project made for the run (bench/out/dbt_bench_<pid>/) declares the table as a source and has
one model, ``{{ qar.risk(source('bench', 'people'), <18 columns>, p=3) }}``: 816 QIs. Timed,
alternating, ``--repeat`` runs each (default 3), medians compared:

* dbt run      — ``dbt run --select qar_risk`` in its own process: dbt's start, parse and
  compile, then the statement materialised as a table (run_results.json says how long the
  model itself took, printed as "model");
* statement    — the compiled SQL of that model run by DuckDB alone (read-only, in this
  process): what the warehouse spends;
* qar audit    — ``qar audit FILE -t people -p 3 -f json`` in its own process: open, profile,
  encode the columns as integer codes, the batched scan (cubes where they pay), the numpy fit.

Check: the model's T̂ equals the audit's to 1e-12 (relative). dbt comes from the Python named by
``QAR_TEST_DBT_PYTHON``, else build/dbt-venv (scripts/test.sh makes it), else this Python.

    python bench/bench_dbt.py [--rows N] [--repeat R] [--keep]
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))  # benchmark the checkout, not an installed copy
sys.path.insert(0, str(HERE))

from common import duckdb_table, file_options, parser, print_versions, remove_duckdb  # noqa: E402

TABLE = "people"


def dbt_python() -> str:
    venv = REPO / "build" / "dbt-venv" / "bin" / "python"
    return os.environ.get("QAR_TEST_DBT_PYTHON") or (str(venv) if venv.is_file() else sys.executable)


def make_project(folder: Path, warehouse: str, columns: list[str]) -> Path:
    project = folder / "project"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text(
        "name: qar_bench\nversion: '1.0.0'\nconfig-version: 2\nprofile: qar_bench\nmodel-paths: [models]\n"
    )
    (project / "profiles.yml").write_text(
        f"qar_bench:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n      path: {json.dumps(warehouse)}\n      threads: 1\n"
    )
    (project / "packages.yml").write_text(f"packages:\n  - local: {REPO / 'integrations' / 'dbt'}\n")
    (project / "models" / "sources.yml").write_text(
        f"version: 2\nsources:\n  - name: bench\n    schema: main\n    tables:\n      - name: {TABLE}\n"
    )
    (project / "models" / "qar_risk.sql").write_text(
        "{{ config(materialized='table') }}\n"
        f"{{{{ qar.risk(source('bench', '{TABLE}'), {columns!r}, p=3, alpha=0.01, pi_u=0.05) }}}}\n"
    )
    return project


def run(cmd: list[str], cwd: Path, env: dict) -> float:
    t0 = time.perf_counter()
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return seconds


def main(argv=None) -> int:
    ap = parser(__doc__, rows=1_000_000, repeat=3)
    file_options(ap, HERE / "out")
    args = ap.parse_args(argv)
    dbt = dbt_python()
    version = subprocess.run(
        [dbt, "-c", "import importlib.metadata as m; print(m.version('dbt-core'), m.version('dbt-duckdb'))"],
        capture_output=True,
        text=True,
    ).stdout.split()
    print_versions(f"dbt-core {version[0]}, dbt-duckdb {version[1]}" if len(version) == 2 else "dbt ?")
    print(f"uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")

    import duckdb

    import qar_sql

    path, data = duckdb_table(args.out, "dbt_bench", TABLE, args.rows, args.cols, args.seed)
    columns = list(data)
    folder = Path(args.out) / f"dbt_bench_{os.getpid()}"
    env = {**os.environ, "PYTHONPATH": str(REPO), "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
    try:
        project = make_project(folder, str(Path(path).resolve()), columns)
        dbt_cli = [dbt, "-c", "from dbt.cli.main import cli; cli()"]
        where = ["--project-dir", str(project), "--profiles-dir", str(project)]
        run([*dbt_cli, "deps", *where], project, env)
        qar_cli = [sys.executable, "-c", "from qar_sql.cli import main; main()"]
        audit_cmd = [*qar_cli, "audit", path, "-t", TABLE, "-p", "3", "-f", "json", "--quiet"]
        times: dict[str, list[float]] = {"dbt run": [], "model": [], "statement": [], "qar audit": []}
        sql = ""
        for r in range(args.repeat):
            times["dbt run"].append(run([*dbt_cli, "run", "--select", "qar_risk", *where], project, env))
            results = json.loads((project / "target" / "run_results.json").read_text())
            times["model"].append(results["results"][0]["execution_time"])
            sql = (project / "target" / "compiled" / "qar_bench" / "models" / "qar_risk.sql").read_text()
            with duckdb.connect(path, read_only=True) as con:
                t0 = time.perf_counter()
                con.execute(sql).fetchall()
                times["statement"].append(time.perf_counter() - t0)
            times["qar audit"].append(run(audit_cmd, REPO, env))
            print(
                f"  run {r + 1}/{args.repeat}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items()),
                file=sys.stderr,
                flush=True,
            )
        with duckdb.connect(path, read_only=True) as con:
            (row,) = con.execute("select * from main.qar_risk").fetchall()
        audit = qar_sql.audit(path, table=TABLE, p=3)
        same = abs(row[6] / audit.risk - 1) <= 1e-12
        med = {k: statistics.median(v) for k, v in times.items()}
        print(
            f"\n{args.rows:,} rows x {args.cols} columns, p = 3: {row[1]} QIs, one statement of {len(sql):,} characters"
        )
        print(f"T̂ dbt {row[6]!r}, qar audit {audit.risk!r}: {'equal' if same else 'DIFFERENT'} (1e-12)")
        for k, v in med.items():
            print(f"  {k:<10} median {v:8.2f} s   (runs: {', '.join(f'{x:.2f}' for x in times[k])})")
        print(f"  dbt run / qar audit   {med['dbt run'] / med['qar audit']:.2f}x")
        print(f"  statement / qar audit {med['statement'] / med['qar audit']:.2f}x")
        print(
            f"  dbt's own share: {med['dbt run'] - med['model']:.2f} s of the dbt run (start, parse, compile), "
            f"the model {med['model']:.2f} s"
        )
        print(f"uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
        return 0 if same else 1
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
            remove_duckdb(path)


if __name__ == "__main__":
    sys.exit(main())
