"""qar report's parameters (issue 25): ReportParams is the one home of the report's section and
release-context defaults and of the rules between its options; the command line reads them."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from qar_sql.cli.main import cli
from qar_sql.errors import UsageError
from qar_sql.parameters.release import ReportParams


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"from_store": "s.duckdb"}, "--from-store and --run go together"),
        ({"run_id": "7"}, "--from-store and --run go together"),
        ({"release_kind": "public"}, "--release-kind 'public' is not a release kind"),
    ],
)
def test_each_rule_is_one_sentence_before_any_work(kwargs, message):
    with pytest.raises(UsageError, match=message):
        ReportParams(**kwargs)


def test_the_defaults_are_the_dataclass_s():
    p = ReportParams()
    assert (p.top, p.classic, p.records, p.release_kind) == (10, True, None, "internal")
    assert p.context == {"title": None, "owner": None, "purpose": None, "release_kind": "internal"}
    options = {o.name: o for o in next(c for n, c in cli.commands.items() if n == "report").params}
    assert options["top"].default == p.top and options["release_kind"].default == p.release_kind


def test_the_command_line_says_the_same_sentence(tmp_path):
    out = tmp_path / "r.html"
    result = CliRunner().invoke(cli, ["report", "x.csv", "--link", "id", "-o", str(out)])
    assert result.exit_code == 2
    assert "--link has no effect without --compare (an option of the original vs treated section); add --compare" in (
        result.output
    )
    assert not out.exists()
    # a QAR_LINK set for qar compare is no mistake in qar report: only a typed --link is refused
    # (it was "--link goes with --compare TREATED", exit 2, for every report)
    result = CliRunner().invoke(cli, ["report", "x.csv", "-o", str(out)], env={"QAR_LINK": "id"})
    assert "--link" not in result.output and "does not exist" in result.output, result.output


def test_the_api_checks_the_same_rules_before_opening_the_source(tmp_path):
    """qar_sql.report builds ReportParams first: a bad combination is refused before the (here
    missing) source is opened."""
    import qar_sql

    missing = str(tmp_path / "no such file.csv")
    with pytest.raises(UsageError, match="^link has no effect without compare .*; add compare or leave link out"):
        qar_sql.report(missing, link="id")  # (the API's keywords, not the command line's flags)
    with pytest.raises(UsageError, match="top=0 is not a whole number from 1 to 1000"):
        qar_sql.report(missing, top=0)
