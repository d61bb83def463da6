"""The search's statements on every dialect: each parses with sqlglot in that dialect (the
executable engines run them in the other tests), hostile names quoted the dialect's way."""

from __future__ import annotations

import pytest
import sqlglot

from qar_sql.anonymization.evaluate import Evaluator, _coding, frequency_sql
from qar_sql.anonymization.hierarchy import CsvHierarchy, IntervalHierarchy
from qar_sql.anonymization.metrics import Domain
from qar_sql.anonymization.models import KAnonymity, RecursiveCLDiversity, TCloseness
from qar_sql.engines.dialects import DIALECTS

HOSTILE = 'we"ird`; col'


class _Session:
    def __init__(self, dialect):
        self.dialect = dialect


@pytest.mark.parametrize("name", sorted(DIALECTS))
def test_statements_parse(name):
    d = DIALECTS[name]
    if not d.sqlglot:
        pytest.skip(f"{name} has no sqlglot dialect to parse with")
    city = CsvHierarchy(HOSTILE, (("a", "ab", "*"), ("b", "ab", "*"), ("c'", "c", "*")), "c.csv")
    age = IntervalHierarchy("age", (5, 10))
    sens = CsvHierarchy("s", (("x", "*"), ("y", "*")), "s.csv")
    c1, d1 = _coding(city, {"a": 3, "b": 2, "c'": 1})
    c2, d2 = _coding(age, {"30": 2, "41": 4})
    cs, _ = _coding(sens, {"x": 4, "y": 2})
    models = [
        KAnonymity(k=2),
        RecursiveCLDiversity(sensitive="s", c=2.0, l=2),
        TCloseness(sensitive="s", t=0.3, kind="hierarchical", hierarchy=sens),
    ]
    freq = frequency_sql(d, d.quote("t a b"), [HOSTILE, "age"], [c1, c2], "s", cs)
    ev = Evaluator(_Session(d), [HOSTILE, "age"], [c1, c2], Domain(6, (d1, d2)), models, cs, None, freq)
    for sql in (freq, ev.sql([(0, 0), (1, 2), (2, 1)], values=True)):
        sqlglot.parse_one(sql, read=d.sqlglot)
    assert d.quote(HOSTILE) in freq
