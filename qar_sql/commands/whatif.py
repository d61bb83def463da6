"""``qar whatif``: what would a treatment buy? Pastore et al.'s Table 1 for each treatment and
combination of a treatments file; the algorithm is :mod:`qar_sql.treat.whatif`.

``--emit-sql`` prints the view of the treated release instead (:func:`_emit_sql`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import click

from qar_sql import cli_options
from qar_sql.command import SOURCE, Command, Extras, api_function, lazy
from qar_sql.commands import checks
from qar_sql.engines.dialects import DIALECTS
from qar_sql.errors import UsageError
from qar_sql.parameters.needs import Needs
from qar_sql.parameters.treat import WhatIfParams

if TYPE_CHECKING:  # numpy-backed: loaded when whatif runs, not when `qar --help` loads
    from qar_sql.engines.session import Session
    from qar_sql.pushdown.scan import Progress
    from qar_sql.treat.whatif import WhatIfResult

NAME = "whatif"
Params = WhatIfParams
DOC = """Table 1 of Pastore et al. for every treatment in ``treatments`` (a TOML path, TOML text,
    a dict or a :class:`~qar_sql.treat.treatments.Plan`) and every combination (the file's
    ``combinations`` plus ``combine``), with T̂(p, α) before and after over the audit columns.
"""

#: The options of ``--emit-sql`` (the view's), and those it does not use (the measures'): the view
#: is the treated release, printed instead of measured.
VIEW_OPTIONS = ("apply_", "dialect", "view")
MEASURES = "columns exclude combine only risk loss p alpha pi_u pwm fmt jobs batch_size".split()
ONLY = {name: Needs(needs=("emit_sql",), why="it shapes the view --emit-sql prints") for name in VIEW_OPTIONS} | {
    name: Needs(unused_with=("emit_sql",), why="--emit-sql prints the view and measures nothing") for name in MEASURES
}


def prepare(params: WhatIfParams) -> WhatIfParams:
    """``params`` with its treatments file read (a bad file fails here, before any connection);
    a --key only where a treatment draws (what the key is for)."""
    from qar_sql.treat.treatments import PERTURBATIVE, load

    plan = load(params.treatments)
    if params.key is not None and not any(t.perturbative for t in plan.treatments):
        raise UsageError(
            f"--key identifies rows for the draws of a perturbative treatment ({', '.join(PERTURBATIVE)}), and "
            "the treatments file has none, so --key would be ignored; leave it out"
        )
    return replace(params, treatments=plan)


def run(session: Session, params: WhatIfParams, progress: Progress | None = None) -> WhatIfResult:
    """Every scenario of ``params.treatments`` on the session's relation."""
    from qar_sql.treat.whatif import whatif_relation

    return whatif_relation(session, params, progress)


def _emit_sql(where: dict[str, Any], params: WhatIfParams, out: dict[str, Any]) -> str | None:
    """``--emit-sql``: CREATE VIEW of the treated release, printed instead of measuring it; the
    view's options go with it only."""
    if not out["emit_sql"]:
        return None
    from qar_sql.treat.whatif import emit_sql

    plan = {"treatments": params.treatments, "qid": params.qid, "drop_null": params.drop_null, "key": params.key}
    view = {"apply": out["apply_"], "view": out["view"], "dialect": out["dialect"]}
    return emit_sql(**where, **plan, **view)


def _report(result: WhatIfResult, params: WhatIfParams, extras: Extras) -> str:
    """``--format html``: the report of the scenarios just measured, with the SQL they ran."""
    from qar_sql.commands.page import given, html

    shown = given(extras.where, params, "source table columns exclude delimiter null_tokens p alpha pi_u pwm")
    shown |= {"treatments": params.treatments.path, "qid": params.qid}
    shown |= {"combine": tuple(",".join(c) for c in params.combine or ())}
    return html(shown | given({}, params, "only drop_null key"), sql=extras.sql, whatif=result)


COMMAND: Command[WhatIfParams, WhatIfResult] = Command(
    name=NAME,
    Params=WhatIfParams,
    run=run,
    help="""Try the treatments in a TOML file on SOURCE without changing it: for each treatment
    and combination, singletons (#S), %S, modified rows (MR), distinct values (DV) on the
    QID, and the risk T̂(p, α) before and after over the audit columns (--columns/--exclude).
    """,
    doc=DOC,
    source=tuple(n for n in SOURCE if n != "all_text"),
    outputs={
        "fmt": cli_options.fmt_html,
        "emit_sql": click.option(
            "--emit-sql", is_flag=True, help="Print CREATE VIEW for the treated release instead of measuring it."
        ),
        "apply_": click.option(
            "--apply",
            "apply_",
            multiple=True,
            callback=cli_options.split_names,
            help="With --emit-sql: treatments of the release, in order (default: the file's release, else all).",
        ),
        "dialect": click.option(
            "--dialect",
            "-d",
            type=click.Choice(sorted(DIALECTS)),
            help="With --emit-sql: SQL dialect of the view (default: the source's).",
        ),
        "view": click.option("--view", help="With --emit-sql: name of the view (default: TABLE_treated)."),
        "quiet": cli_options.quiet,
    },
    progress="scenarios",
    order=tuple(
        "table columns exclude delimiter null_tokens treatments qid combine only drop_null risk key loss "
        "p alpha pi_u pwm fmt emit_sql apply_ dialect view jobs batch_size quiet".split()
    ),
    prepare=prepare,
    check=lazy(checks, "whatif"),
    only=ONLY,
    preview=_emit_sql,
    html=_report,
)

whatif = api_function(COMMAND)
