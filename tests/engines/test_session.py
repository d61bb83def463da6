"""engines/session.py: the one owner of temp table names (issue 25)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from qar_sql.engines.session import temp_name
from qar_sql.treat.whatif import release

PACKAGE = Path(__file__).resolve().parents[2] / "qar_sql"


def test_temp_names_count_each_kind_in_this_process():
    """qar_<what>_<pid>_<n>: n counts the names of that kind, so no two names of a process are
    equal, whichever module asks first."""
    first, second, other = temp_name("testkind"), temp_name("testkind"), temp_name("otherkind")
    pid = os.getpid()
    n = int(first.rsplit("_", 1)[1])
    assert second == f"qar_testkind_{pid}_{n + 1}"
    assert re.fullmatch(rf"qar_otherkind_{pid}_\d+", other)
    assert len({temp_name("codes") for _ in range(50)}) == 50


def test_no_module_builds_temp_names_by_hand():
    """Every temp name comes from temp_name: no module keeps a counter of its own beside it or
    builds a name from the process id (before: whatif, the scan, the pruned scan, risk's cells)."""
    hand = re.compile(r"itertools\.count\(|os\.getpid\(\)\}|uuid4\(\)\.hex")
    found = [
        f"{path.relative_to(PACKAGE)}:{i}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "session.py"
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if hand.search(line)
    ]
    assert found == []


def test_a_treated_release_is_named_by_temp_name():
    """The what-if's release table is the next "release" name, dropped afterwards."""
    from qar_sql.engines.source import connect

    with connect(_frame()) as s:
        n = int(temp_name("release").rsplit("_", 1)[1])
        with release(s.db, f"select * from {s.relation.sql}", s.relation) as (runner, rel):
            assert rel.sql == s.dialect.quote(f"qar_release_{os.getpid()}_{n + 1}")
            assert runner.query(f"select count(*) from {rel.sql}") == [(3,)]
        assert not s.db.query("select * from duckdb_tables() where table_name like 'qar_release_%'")


def _frame():
    import pandas as pd

    return pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]})
