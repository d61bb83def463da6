"""``qar report``: one self-contained HTML report of a table (docs/report.md): options, then
:mod:`qar_sql.commands.report`'s prepare, run, write and verdict."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence

import click

from qar_sql import params
from qar_sql.cli.guard import guard_outputs
from qar_sql.cli.search_options import hierarchy_files, search_options
from qar_sql.errors import UsageError
from qar_sql.output.render import FORMATS
from qar_sql.parameters.release import RELEASE_KINDS, ReportParams
from qar_sql.precedence import from_click


@click.command("report")
@params.source_options
@params.risk_options
@params.k
@params.key_option
@params.option(
    "--top",
    of=ReportParams,
    type=click.IntRange(1, 1000),
    help="How many of the riskiest records the report lists.",
)
@click.option(
    "--fail-above",
    "--threshold",
    "fail_above",
    type=click.FloatRange(0.0, 1.0),
    envvar="QAR_FAIL_ABOVE",
    help="The risk the first page's verdict compares T̂ with (also fail_above in qar.toml); without one the "
    "report gives no verdict. The report states the verdict and still exits 0: to fail a CI job, use qar "
    "audit --fail-above or qar scan.",
)
@click.option(
    "--treatments", "-T", type=click.Path(dir_okay=False), help="A treatments TOML file: adds the what-if section."
)
@click.option(
    "--group-size",
    "-g",
    type=click.IntRange(2, None),
    help="Group size k: adds the uniqueness section (the chance that k people are all unique).",
)
@click.option(
    "--compare",
    "compare",
    help="A treated release of SOURCE (a file, or a DuckDB file or URL with --treated-table): adds the original vs "
    "treated section.",
)
@click.option("--treated-table", help="With --compare: the treated table (default: --table).")
@click.option("--link", help="With --compare: the key column linking each original record to its treated record.")
@click.option("--aligned", is_flag=True, help="With --compare: link row i of SOURCE to row i of the treated release.")
@click.option(
    "--no-classic",
    is_flag=True,
    help="Leave out the classic risk measures of qar risk (sdcMicro's and ARX's, in the report by default).",
)
@click.option("--classic", "classic_flag", is_flag=True, hidden=True)  # the earlier opt-in: now the default
@click.option("--weight", help="With --classic: the sampling-weight column (journalist, marketer, individual risk).")
@click.option(
    "--sensitive",
    multiple=True,
    callback=params.split_names,
    help="With --classic: sensitive column(s) for l-diversity and t-closeness, comma-separated.",
)
@params.population
@params.sampling_fraction
@click.option("--no-records", is_flag=True, help="Leave out the records and elimination sections (a second pass).")
@params.hash_secret_file_option("that hashes record keys (else $QAR_HASH_SECRET; without one, positions are shown)")
@params.store
@click.option(
    "--from-store",
    "from_store",
    is_flag=False,
    flag_value="",
    help="Rebuild the report of a recorded run from this results store (alone: $QAR_STORE, else "
    "qar_results.duckdb), with --run; SOURCE is not read.",
)
@click.option("--run", "run_id", help="With --from-store: the run id (qar history --format json lists them).")
@click.option("--title", help="The report's title (first page and <title>).")
@click.option("--owner", help="Who owns the release (first page and sign-off).")
@click.option("--purpose", help="What the release is for (first page and sign-off).")
@params.option(
    "--release-kind",
    of=ReportParams,
    type=click.Choice(RELEASE_KINDS),
    help="external: leave out every per-record table, record key, record position and value combination.",
)
@click.option(
    "--format",
    "-f",
    "format",
    type=click.Choice(["html", "md", *(name for name, f in FORMATS.items() if f.from_table is not None)]),
    help="html: one self-contained page; md: the same report as Markdown; csv: the audit's QIs, one row each "
    "(as qar audit --format csv). Default: from -o's suffix (.md, .markdown, .csv), else html; a suffix "
    "that names another format is refused.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, allow_dash=True),
    required=True,
    help="The file to write; - for stdout.",
)
@click.option(
    "--anonymize",
    "anonymize",
    is_flag=True,
    help="Add the anonymization section: qar anonymize's search with the options below (--hierarchy, "
    "--hierarchies, --k, --risk-below, ...; --sensitive for --l/--t) on the report's columns, p, α and π_u.",
)
@search_options(own=False)
@params.interval_level
@params.bootstrap
@params.jobs
@params.quiet
def report_cmd(where, risk, no_classic, classic_flag, fail_above, quiet, anonymize, **options):
    """Write one self-contained HTML report of SOURCE: risk, tail fit, k-anonymity, records, what-if, history."""
    from qar_sql.cli.emit import build, session
    from qar_sql.commands import report

    if no_classic and classic_flag:
        raise UsageError("--classic and --no-classic contradict each other; give one of them")
    chosen = from_click(click.get_current_context(), "fail_above", fail_above)  # (a verdict only when set)
    given = {"threshold": fail_above, "threshold_source": chosen.described if chosen else None}
    search = {name: options.pop(name) for name in SEARCH_NAMES}
    sections = {"classic": not no_classic, "records": False if options.pop("no_records") else None}
    sections["anonymize"] = _anonymize_keywords(anonymize, search, options["k"], options["sensitive"])
    settings = build(ReportParams, {**where, **risk, **options, **sections, **given})
    writes, reads = report.files(settings, where["source"])
    reads += [(f"the hierarchy of {c or 'its columns'}", f) for c, f in search["hierarchy"]]
    guard_outputs(writes, reads + hierarchy_files(search["hierarchies"]))  # before any file is read
    settings = report.prepare(settings)
    with params.Progress("scanning", quiet) as bar:
        with session(where) if settings.from_store is None else contextlib.nullcontext() as s:
            result = report.run(s, settings, bar)
    report.write(result, settings)
    sys.exit(report.verdict(result, settings))


#: The names of the search's options, which --anonymize passes on (qar anonymize's own).
SEARCH_NAMES = tuple(str(p.name) for p in click.command()(search_options(own=False)(lambda **_: None)).params)


def _anonymize_keywords(asked: bool, search: dict, k: int, sensitive: Sequence[str] | None) -> dict | None:
    """The anonymization section's keywords (None: not asked): the search options, the report's
    --k as k-anonymity when given, its one --sensitive column for --l/--t. A search option
    without --anonymize is refused."""
    ctx = click.get_current_context()
    given = (click.core.ParameterSource.COMMANDLINE, click.core.ParameterSource.ENVIRONMENT)
    # (only the command line: an environment variable of qar anonymize's options is no request)
    stray = [name for name in search if ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE]
    if not asked:
        if stray:
            opt = next(p.opts[0] for p in ctx.command.params if p.name == stray[0])
            raise UsageError(f"{opt} goes with --anonymize; add --anonymize or leave {opt} out")
        return None
    out = {name: value for name, value in search.items() if value is not None}
    if ctx.get_parameter_source("k") in given:
        out["k"] = k
    if search["l"] is not None or search["t"] is not None:
        if len(sensitive or ()) != 1:
            raise UsageError("--l and --t of --anonymize take one --sensitive column; name exactly one")
        out["sensitive"] = sensitive[0]  # type: ignore[index]
    return out
