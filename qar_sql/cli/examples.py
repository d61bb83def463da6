"""Examples shown at the end of ``qar <command> --help`` (click's epilog), one list per command.

Kept in one table rather than in each command's decorator so that every command has them and
tests/cli/test_help.py can parse each line against the command it names (an example that
stopped parsing would fail there, not mislead a user). Most read the demo database
(``qar demo`` writes ``qar_demo.duckdb``).
"""

from __future__ import annotations

import click

DEMO = "qar_demo.duckdb -t population -x person_id"

EXAMPLES: dict[str, list[str]] = {
    "audit": [
        f"qar audit {DEMO}",
        f"qar audit {DEMO} -p 2 --fail-above 0.5 --format json",
        "qar audit people.csv --columns age,sex,zip --group-size 30",
        "qar audit postgresql+psycopg://reader@db/prod --table public.people --exclude id --store",
    ],
    "sql": [
        "qar sql qar_demo.duckdb -t population -c age,sex,postcode",
        "qar sql -d postgresql -t people -c age,sex,zip -p 2",
    ],
    "demo": ["qar demo", "qar demo --rows 10000 --seed 7 --path small.duckdb --format json"],
    "records": [
        f"qar records {DEMO} --key person_id --top 5",
        f"qar records {DEMO} --key person_id --by influence --refine 50",
        f"qar records {DEMO} --key person_id --by suda --max-size 3 --output suda.parquet",
    ],
    "eliminate": [
        f"qar eliminate {DEMO} --key person_id --step 2000 --max 20%",
        f"qar eliminate {DEMO} --key person_id --by dt,influence,random --plot elimination.png",
    ],
    "risk": [
        "qar risk qar_demo.duckdb -t population -c age,sex,postcode,occupation",
        "qar risk people.csv -c sex,age,zip --sensitive diagnosis --sampling-fraction 0.01 --format json",
    ],
    "discover": [
        f"qar discover {DEMO} --max-size 2 --top 5",
        "qar discover people.csv -c birth_year,sex,town --max-size 3 --drop-null",
    ],
    "anonymize": [
        "qar anonymize adult.csv --delimiter ';' --hierarchies hierarchies --k 5 --suppression-limit 0.04",
        "qar anonymize adult.csv --delimiter ';' --hierarchies hierarchies --k 5 --risk-below 0.05 -p 3 -o chosen.toml",
        "qar anonymize people.csv --hierarchy age=levels.toml --hierarchy town=towns.csv --no-singletons --format sql",
    ],
    "whatif": [
        f"qar whatif {DEMO} -T examples/treatments.toml",
        "qar whatif qar_demo.duckdb -t population -T examples/treatments.toml --emit-sql --apply age_5y",
    ],
    "report": [
        f"qar report {DEMO} --key person_id -o report.html",
        f"qar report {DEMO} --no-records --treatments examples/treatments.toml -o report.html",
    ],
    "compare": [
        "qar compare original.csv release.csv --link person_id --target diagnosis",
        # -x person_id: a key is one value per row, which leaves the QaR risks without a tail.
        # hidden_rate is 0.26 on the 100,000-row demo (0.55 on 20,000): the gate passes.
        f"qar compare {DEMO} --treatments examples/treatments.toml --fail-below hidden_rate=0.2",
    ],
    "uniqueness": [
        f"qar uniqueness {DEMO} --group-size 30 -p 2",
        "qar uniqueness adult.csv --delimiter ';' --qid age,sex,race --group-size 50 --format json",
    ],
    "migrate": ["qar migrate", "qar migrate --store postgresql+psycopg://qar@db/qar --status"],
    "scan": [
        "qar scan qar.toml --junit junit.xml --markdown summary.md",
        'qar scan --dbt-manifest target/manifest.json --url "$QAR_DATABASE_URL" --fail-above 0.5',
    ],
    "history": ["qar history", "qar history --table population --format json --plot trend.svg"],
    "config": ["qar config", "QAR_P=2 qar config --format json"],
}


def add_examples(group: click.Group) -> None:
    """Set every command's epilog from :data:`EXAMPLES` (tests/cli/test_help.py checks that no
    command is left without)."""
    for name, command in group.commands.items():
        if name in EXAMPLES:  # (\b keeps click from re-wrapping the lines)
            command.epilog = "\b\nExamples:\n" + "\n".join(f"  {line}" for line in EXAMPLES[name])
