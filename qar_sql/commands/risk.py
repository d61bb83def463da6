"""``qar risk``: the classic disclosure-risk measures (sdcMicro, ARX) of every quasi-identifier."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import click

from qar_sql import cli_options
from qar_sql.command import SOURCE_ORDER, Command, Extras, api_function, lazy
from qar_sql.commands import checks
from qar_sql.parameters.measures import RiskParams
from qar_sql.parameters.needs import Needs

if TYPE_CHECKING:  # numpy-backed: loaded when the measures run, not when `qar --help` loads
    from qar_sql.engines.session import Session
    from qar_sql.measures.classic import RiskResult
    from qar_sql.pushdown.scan import Progress

NAME = "risk"
Params = RiskParams

#: The variable -p read before it followed the QAR_<long flag> rule (QAR_QI_SIZE); still read.
OLD_P_ENV = "QAR_RISK_P"


def run(session: Session, params: RiskParams, progress: Progress | None = None) -> RiskResult:
    """The classic measures of the session's relation for every p-subset of the key columns."""
    from qar_sql.measures.classic import risk_relation

    return risk_relation(session, params, progress)


def prepare(params: RiskParams) -> RiskParams:
    """``--per-record``: a .csv or .parquet file (with Parquet's writer installed)."""
    if params.per_record is not None:
        from qar_sql.measures.classic import output_kind

        output_kind(str(params.per_record))
    return params


def files(params: RiskParams, where: Mapping[str, Any], out: Mapping[str, Any]) -> tuple[list, list]:
    """``--per-record`` is not the source file."""
    return [("--per-record", params.per_record)], [("the source file itself", where.get("source"))]


def _old_p_variable(values: dict[str, Any], where: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    """-p from $QAR_RISK_P, with a deprecation note, when neither the command line nor
    $QAR_QI_SIZE gives it."""
    old = os.environ.get(OLD_P_ENV)
    if values["p"] is not None or not old:
        return values
    click.echo(f"Warning: {OLD_P_ENV} is deprecated; set QAR_QI_SIZE instead.", err=True)
    try:
        return {**values, "p": int(old)}
    except ValueError:
        ctx = click.get_current_context()
        param = next(p for p in ctx.command.params if p.name == "p")
        raise click.BadParameter(f"${OLD_P_ENV} = {old!r} is not a whole number", ctx, param) from None


def _report(result: RiskResult, params: RiskParams, extras: Extras) -> str:
    """``--format html``: the report of the measures just taken, with the options as given."""
    from qar_sql.commands.page import given, html

    shown = given(extras.where, params, "source table columns exclude delimiter null_tokens p weight")
    shown |= {"sensitive": params.sensitive or None}
    shown |= given(extras.where, params, "missing population sampling_fraction risk_threshold")
    return html(shown | {"l": params.l_threshold, "t": params.t_threshold}, sql=extras.sql, classic=result)


ORDER = (
    *SOURCE_ORDER, "p", "weight", "sensitive", "ordered", "missing",
    "sampling_fraction", "population", "risk_threshold", "l_threshold", "t_threshold", "per_record", "key",
    "suda_max_size", "all_text", "fmt", "top", "jobs", "quiet",
)  # fmt: skip


COMMAND: Command[RiskParams, RiskResult] = Command(
    name=NAME,
    Params=RiskParams,
    run=run,
    help="""The measures sdcMicro and ARX users report, for every set of p key columns of SOURCE.

    k-anonymity counts, sdcMicro's individual risk and expected re-identifications (with
    --weight), ARX's prosecutor, journalist and marketer risk and population uniqueness models
    (with --population or --sampling-fraction), l-diversity and t-closeness (with --sensitive),
    and per record SUDA and DIS-SUDA (--per-record). See docs/risk-measures.md.
    """,
    doc="""The classic disclosure-risk measures (sdcMicro, ARX) of every p-subset of the key
    columns, computed in the database. See :mod:`qar_sql.measures.classic` and docs/risk-measures.md.
    """,
    source=("source", "table", "delimiter", "null_tokens", "all_text"),
    outputs={
        "fmt": cli_options.fmt_html,
        "top": cli_options.top(10, "QIs listed in text and Markdown, most expected re-identifications first."),
        "quiet": cli_options.quiet,
    },
    emits=("top",),
    # (without -p the key columns are one QI: there is no list to cap)
    only={"top": Needs(needs=("p",), why="it caps the list of QIs, and without -p all key columns are one")},
    order=ORDER,
    progress="measuring",
    prepare=prepare,
    check=lazy(checks, "risk"),
    files=files,
    parse=_old_p_variable,
    html=_report,
)

risk = api_function(COMMAND)
