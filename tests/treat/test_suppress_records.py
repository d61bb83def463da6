"""``suppress_records``: the records of classes smaller than ``below`` on ``columns``, as the
treatments before it left them, are removed — checked against ``Counter`` on DuckDB and PostgreSQL."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from click.testing import CliRunner

from qar_sql.cli.main import cli
from qar_sql.treat.treatments import TreatmentError, parse

A, B = 'a "x"', "b; drop"
TOML = f"""
qid = {json.dumps([A, B])}
release = ["a_top", "drop_small"]
combinations = [["a_top", "drop_small"]]

[treatments.a_top]
column = {json.dumps(A)}
kind = "top"
above = 5

[treatments.drop_small]
kind = "suppress_records"
columns = {json.dumps([A, B])}
below = 3
"""


def test_small_classes_are_removed_after_the_treatments_before(engine, tmp_path):
    rng = random.Random(4)
    data = {A: [rng.randrange(0, 9) for _ in range(60)], B: [rng.choice("xyz") for _ in range(60)]}
    source, table = engine.load("t", data)
    path = tmp_path / "t.toml"
    path.write_text(TOML, encoding="utf-8")
    r = CliRunner().invoke(
        cli, ["whatif", source, "--table", table, "-T", str(path), "--no-risk", "--no-loss", "-f", "json", "-q"]
    )
    assert r.exit_code == 0, r.stderr
    got = {s["name"]: s for s in json.loads(r.stdout)["scenarios"]}
    for name, top in (("drop_small", False), ("a_top + drop_small", True)):
        rows = [(min(a, 5) if top else a, b) for a, b in zip(data[A], data[B])]
        classes = Counter(rows)
        kept = [x for x in rows if classes[x] >= 3]
        assert got[name]["rows"] == len(kept)
        assert got[name]["min_class_size"] == min(Counter(kept).values())
        assert got[name]["singletons"] == 0


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('kind = "suppress_records"\ncolumns = ["a"]\nbelow = 1', "below = 1 must be a whole number of at least 2"),
        ('kind = "suppress_records"\nbelow = 2', "column is missing"),
        ('kind = "suppress_records"\ncolumn = "a"\ncolumns = ["a"]\nbelow = 2', "column does not go with"),
    ],
)
def test_bad_tables_are_one_sentence(table, message):
    with pytest.raises(TreatmentError, match=message):
        parse(f"[treatments.x]\n{table}\n")
