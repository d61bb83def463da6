"""Write the example HTML report the README links: examples/report/demo-report.html.

    python scripts/make_demo_report.py [OUTPUT]

Every section is in it: a seeded demo population (1,500 people, 8 quasi-identifier columns: 56
QIs of 3, a tail of 11 above u, and a file that stays small), a treatments file (what-if), a treated release of the same table linked by
person_id (original vs treated), groups of 5 (uniqueness), the classic measures, and a results
store with two earlier runs (history). The data live in a temporary folder and are never
committed; the report is the same command as

    qar report qar_demo.duckdb -t population \\
        -c age,sex,postcode,marital_status,education,income_band,employment_status,household_size \\
        -p 3 --pi-u 0.2 --key person_id --treatments treatments.toml --compare qar_demo.duckdb \\
        --treated-table population_treated --link person_id --group-size 5 --classic \\
        --store store.duckdb --fail-above 0.05 --title "Demo population, release review" \\
        --owner "Data team" --purpose "Example of a release review" -o demo-report.html
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import duckdb

import qar_sql
from qar_sql.compliance.store import recorded_audit
from qar_sql.demo import write_population

REPO = Path(__file__).resolve().parents[1]
COLUMNS = [
    *("age", "sex", "postcode", "marital_status", "education", "income_band", "employment_status"),
    "household_size",
]
RISK = {"p": 3, "pi_u": 0.2}
TREATMENTS = """
qid = ["age", "sex", "postcode"]
combinations = [["age_10y", "postcode_to_region"]]

[treatments.age_10y]
column = "age"
kind = "bands"
width = 10

[treatments.postcode_to_region]
column = "postcode"
kind = "hierarchy"
parent = "region"
"""
COMMAND = (
    "qar report qar_demo.duckdb -t population -c " + ",".join(COLUMNS) + " -p 3 --pi-u 0.2 --key person_id "
    "--treatments treatments.toml --compare qar_demo.duckdb --treated-table population_treated --link person_id "
    "--group-size 5 --classic --store store.duckdb --fail-above 0.05 --title 'Demo population, release review' "
    "--owner 'Data team' --purpose 'Example of a release review' -o demo-report.html"
)


def main(output: Path) -> None:
    here = Path.cwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)  # relative names in the report, not a temporary path
        try:
            con = duckdb.connect("qar_demo.duckdb")
            write_population(con, "population", n=1500, seed=20261123)
            kept = ", ".join("(age // 10) * 10 as age" if c == "age" else f'"{c}"' for c in COLUMNS)
            con.execute(f"create table population_treated as select person_id, {kept} from population")
            con.close()
            Path("treatments.toml").write_text(TREATMENTS, encoding="utf-8")
            for _ in range(2):
                recorded_audit("store.duckdb", "qar_demo.duckdb", table="population", columns=COLUMNS, **RISK)
            inputs = qar_sql.report(
                "qar_demo.duckdb",
                table="population",
                columns=COLUMNS,
                **RISK,
                key=["person_id"],
                treatments="treatments.toml",
                compare="qar_demo.duckdb",
                treated_table="population_treated",
                link="person_id",
                group_size=5,
                classic=True,
                store="store.duckdb",
                threshold=0.05,
                threshold_source="--fail-above (command line)",
                title="Demo population, release review",
                owner="Data team",
                purpose="Example of a release review",
                command=COMMAND,
            )
        finally:
            os.chdir(here)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(inputs.to_html(), encoding="utf-8")
    print(f"Wrote {output} ({output.stat().st_size // 1024} kB, T̂ = {inputs.audit.risk:.4g}).")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "examples" / "report" / "demo-report.html")
