"""The generic Markdown (qar_sql.output.markdown): every value of the ``to_dict()`` appears once,
in the block its shape calls for, and hostile text stays one literal cell."""

from __future__ import annotations

from qar_sql.output.markdown import cell, to_markdown

HOSTILE = "a|b `c` <script>x</script>\nnext\u202eline"


def _rows(md: str) -> list[list[str]]:
    """The table rows of ``md``, cells split on the unescaped bars (the separator rows left out)."""
    import re

    rows = []
    for line in md.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            rows.append([c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]])
    return rows


def test_shapes_become_tables_lists_and_sections():
    data = {
        "store": "s.duckdb",
        "rows": 30162,
        "risk": 0.9708797896,
        "empty": [],
        "missing": None,
        "ok": True,
        "applied": ["one", "two"],
        "warnings": ["a sentence", "another one"],
        "seconds": 0.53,
        "items": [{"name": "x", "n": 1}, {"name": "y", "extra": 2.5, "codes": [1, 2], "pairs": [[1, 2], [3]]}],
        "settings": {"jobs": 2, "fmt": "text"},
        "nested": {"inner": {"k": 1}, "level": 3},
    }
    md = to_markdown(data, "Title")
    assert md.startswith("## Title\n\n| field | value |\n|---|---|\n")
    rows = _rows(md)
    # a whole number as written (it may be a key), any other number as the reports show it
    assert ["rows", "30162"] in rows and ["risk", "0.9709"] in rows
    assert ["empty", "none"] in rows and ["missing", "—"] in rows and ["ok", "yes"] in rows
    # a list of values in one cell, a list of sentences as a list; a run's wall-clock left out
    assert ["applied", "one, two"] in rows and "### warnings\n\n- a sentence\n- another one" in md
    assert "seconds" not in md
    # a list of records: the union of their keys as the header, a missing key an empty dash
    assert "### items\n\n| name | n | extra | codes | pairs |" in md
    assert ["x", "1", "—", "—", "—"] in rows and ["y", "—", "2.5", "1, 2", "(1, 2), (3)"] in rows
    assert "### settings\n\n| field | value |" in md and ["jobs", "2"] in rows
    assert "### nested" in md and "#### inner" in md and ["level", "3"] in rows and ["k", "1"] in rows


def test_long_lists_are_cut_at_top_and_sibling_mappings_share_a_table():
    data = {
        "qis": [{"i": i} for i in range(5)],
        "wide": [{f"c{j}": j for j in range(20)}],
        "u_interval": {"low": 1, "high": 2},
        "xi_interval": {"low": 3, "high": 4},
    }
    md = to_markdown(data, top=2)
    rows = _rows(md)
    assert ["0"] in rows and ["1"] in rows and ["2"] not in rows
    assert "3 more in the JSON output (--format json)." in md
    assert "### wide (1)" in md and ["c19", "19"] in rows  # too wide for a row: a section
    assert "### u\\_interval, xi\\_interval\n\n| field | low | high |" in md
    assert ["u\\_interval", "1", "2"] in rows and ["xi\\_interval", "3", "4"] in rows
    assert ["4"] in _rows(to_markdown(data, top=0))  # 0: all


def test_hostile_text_is_one_literal_cell():
    md = to_markdown({HOSTILE: HOSTILE, "list": [{HOSTILE: HOSTILE}]}, HOSTILE)
    shown = cell(HOSTILE)
    assert "\n" not in shown and "<" not in shown and "\u202e" not in shown and "⟦U+202E⟧" in shown
    assert shown.count("\\|") == 1 and "\\`c\\`" in shown and "&lt;script&gt;" in shown
    assert md.splitlines()[0] == f"## {shown}"
    assert [shown, shown] in _rows(md) and [shown] in _rows(md)
    assert all(len(r) in (1, 2) for r in _rows(md))


def test_migrate_markdown_is_its_to_dict(tmp_path):
    """qar migrate has no Markdown of its own: render() writes its to_dict() under its summary line."""
    from qar_sql.commands import migrate
    from qar_sql.output.render import render
    from qar_sql.parameters.store import MigrateParams

    result = migrate.run(None, MigrateParams(store=str(tmp_path / "store.duckdb")))
    md = render(result, "markdown")
    assert md == to_markdown(result.to_dict(), result.summary_line())
    for m in result.migrations:
        assert [cell(m.version), cell(m.name), m.state, m.checksum, cell(m.applied_at.isoformat())] in _rows(md)


def test_records_by_influence_and_suda_markdown_is_their_to_dict(tmp_path):
    """qar records --by influence and --by suda: their Markdown is their JSON's, every top record
    a row of its table (key, scores as the JSON has them, shown), and influence's note in words."""
    import json

    from click.testing import CliRunner

    from qar_sql.cli.main import cli as main

    db = str(tmp_path / "demo.duckdb")
    runner = CliRunner()
    assert runner.invoke(main, ["demo", "--path", db, "--rows", "500", "-q"]).exit_code == 0
    cols = "age,sex,postcode,region,marital_status,number_of_children"
    base = ["records", db, "-t", "population", "-c", cols, "--key", "person_id", "--top", "4", "-q"]
    for by in ("influence", "suda"):
        md = runner.invoke(main, [*base, "--by", by, "-f", "markdown"])
        js = runner.invoke(main, [*base, "--by", by, "-f", "json"])
        assert md.exit_code == 0 and js.exit_code == 0, md.output
        data, rows = json.loads(js.output), _rows(md.output)
        assert len(data["records"]) == 4
        for record in data["records"]:
            score = record[by]
            key = record["key"] if not isinstance(record["key"], list) else ", ".join(map(str, record["key"]))
            assert any(r[0] == str(key) and cell(score) in r for r in rows)
    assert "**Notes**\n\n- ranked on " in runner.invoke(main, [*base, "--by", "influence", "-f", "markdown"]).output
