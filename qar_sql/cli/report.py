"""``qar report``: one self-contained HTML report of a table (docs/report.md)."""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Sequence

import click

from qar_sql import params
from qar_sql.cli.guard import guard_outputs
from qar_sql.cli.ranking import hash_secret_file_option, key_option
from qar_sql.errors import UsageError
from qar_sql.extras import require
from qar_sql.output.files import check_writable
from qar_sql.output.render import FORMATS
from qar_sql.parameters.release import RELEASE_KINDS, ReportParams
from qar_sql.precedence import from_click


@click.command("report")
@params.source_options
@params.risk_options
@params.k
@key_option
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
    callback=params._split,
    help="With --classic: sensitive column(s) for l-diversity and t-closeness, comma-separated.",
)
@params.population
@params.sampling_fraction
@click.option("--no-records", is_flag=True, help="Leave out the records and elimination sections (a second pass).")
@hash_secret_file_option("that hashes record keys (else $QAR_HASH_SECRET; without one, positions are shown)")
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
    "fmt",
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
@params.interval_level
@params.bootstrap
@params.jobs
@params.quiet
def report_cmd(
    where,
    risk,
    k,
    key,
    top,
    fail_above,
    treatments,
    group_size,
    compare,
    treated_table,
    link,
    aligned,
    no_classic,
    classic_flag,
    weight,
    sensitive,
    population,
    sampling_fraction,
    no_records,
    hash_secret_file,
    store,
    from_store,
    run_id,
    title,
    owner,
    purpose,
    release_kind,
    fmt,
    output,
    interval_level,
    bootstrap,
    jobs,
    quiet,
):
    """Write one self-contained HTML report of SOURCE: risk, tail fit, k-anonymity, records, what-if, history."""
    from qar_sql.cli.emit import build, session
    from qar_sql.commands.report import masked_command, prepared, run, stored
    from qar_sql.compliance.store import HASH_SECRET_ENV, hash_secret
    from qar_sql.output.html import render_report, write_report

    fmt = report_format(fmt, output)
    if no_classic and classic_flag:
        raise UsageError("--classic and --no-classic contradict each other; give one of them")
    options = {
        "k": k, "key": key, "top": top, "treatments": treatments, "group_size": group_size, "compare": compare,
        "treated_table": treated_table, "link": link, "aligned": aligned, "classic": not no_classic,
        "weight": weight, "sensitive": sensitive or (), "population": population,
        "sampling_fraction": sampling_fraction, "records": False if no_records else None, "store": store,
        "from_store": from_store, "run_id": run_id, "title": title, "owner": owner, "purpose": purpose,
        "release_kind": release_kind, "interval_level": interval_level, "bootstrap": bootstrap, "jobs": jobs,
    }  # fmt: skip
    chosen = from_click(click.get_current_context(), "fail_above", fail_above)  # (a verdict only when set)
    given = {"threshold": fail_above, "threshold_source": chosen.described if chosen else None}
    settings = build(ReportParams, {**where, **risk, **options, **given})
    if compare is not None:  # before any work: the comparison needs the [compare] extra
        require("compare", "qar report --compare")
    _guard(where["source"], output, treatments, compare, store, from_store, hash_secret_file)
    settings = prepared(settings)  # the treatments file, before any connection
    secret = hash_secret(hash_secret_file) if (hash_secret_file or os.environ.get(HASH_SECRET_ENV)) else None
    command = masked_command(["qar", *sys.argv[1:]], [secret] if secret else [])
    settings = dataclasses.replace(settings, hash_secret=secret, command=command)
    if from_store is not None:
        result = stored(settings)
    else:
        with params.Progress("scanning", quiet) as bar, session(where) as s:
            result = run(s, settings, bar)
    if output == "-":
        click.echo(render_report(result, fmt), nl=False)
    else:
        write_report(result, output, fmt)
    assert result.audit is not None  # a report of SOURCE or of a stored run always has its audit
    risk_text = "undefined (no tail)" if result.audit.risk is None else f"{result.audit.risk:.6g}"
    click.echo(f"Wrote {'the report to stdout' if output == '-' else output} (T̂ = {risk_text}).", err=True)


#: The format each suffix of -o names.
SUFFIX_FORMATS = {".html": "html", ".htm": "html", ".md": "md", ".markdown": "md", ".csv": "csv"}
#: Suffixes of formats the report is not: -o report.pdf wrote an HTML page into report.pdf.
OTHER_SUFFIXES = frozenset(
    (".pdf", ".json", ".txt", ".xml", ".png", ".svg", ".parquet", ".duckdb", ".toml", ".yml", ".yaml")
)


def report_format(fmt: str | None, output: str) -> str:
    """The format of the report: ``fmt`` when given, else the one -o's suffix names, else html. A
    given format that -o's suffix contradicts is refused (-f md -o x.html wrote Markdown into
    an .html file)."""
    suffix = os.path.splitext(output)[1].lower() if output != "-" else ""
    named = SUFFIX_FORMATS.get(suffix)
    if suffix in OTHER_SUFFIXES:  # html would be written under a name that promises another format
        stem = os.path.splitext(output)[0]
        raise UsageError(
            f"-o {output!r} ends in {suffix}, a format qar report does not write; name the file {stem}.html "
            f"(or .md, .csv){' and print the HTML to PDF from a browser' if suffix == '.pdf' else ''}"
        )
    if fmt is None:
        return named or "html"
    if named is not None and named != fmt:
        stem = os.path.splitext(output)[0]
        ext = next(s for s, f in SUFFIX_FORMATS.items() if f == fmt) if fmt in SUFFIX_FORMATS.values() else ""
        fix = f"name the file {stem}{ext} or " if ext else ""
        raise UsageError(f"-o {output!r} ends in {suffix} but --format is {fmt}; {fix}give --format {named}")
    return fmt


def _guard(source, output, treatments, compare, store, from_store, hash_secret_file) -> None:
    """-o: a writable file that is none of the files the report reads, checked before any work."""
    from qar_sql.compliance.store import resolve_store

    if output == "-":
        return
    check_writable(output, "--output")
    reads = [("the treated release", compare), ("the treatments file", treatments)]
    reads += [("the hash secret file", hash_secret_file)]
    if from_store is None:
        reads.append(("the source file itself", source))
    for given in (store, from_store):
        if given is not None:
            reads.append(("the results store", resolve_store(given or None)))
    guard_outputs([("--output", output)], reads)


def report_html(parameters: dict, sql: Sequence[str] = (), **results) -> str:
    """``--format html`` of a command other than audit and records: the report of its result
    alone (``whatif=``, ``compare=``, ``uniqueness=``, ``classic=``); ``sql``: the statements it
    rendered while it ran (``with recording() as sql:`` around the run)."""
    from qar_sql.commands.report import masked_command, result_inputs

    inputs = result_inputs(parameters, command=masked_command(["qar", *sys.argv[1:]]), sql=sql, **results)
    return inputs.to_html()
