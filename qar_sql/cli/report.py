"""``qar report``: one self-contained HTML report of a table (docs/report.md)."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

import click

from qar_sql import params
from qar_sql.cli.ranking import hash_secret_file_option, key_option
from qar_sql.errors import UsageError


@click.command("report")
@params.source_options
@params.risk_options
@params.k
@key_option
@click.option(
    "--top", type=click.IntRange(1, 1000), default=10, help="How many of the riskiest records the report lists."
)
@click.option(
    "--threshold",
    type=click.FloatRange(0.0, 1.0),
    default=0.05,
    envvar="QAR_THRESHOLD",
    help="The risk the verdict compares T̂ with.",
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
@click.option("--classic", is_flag=True, help="Add the classic risk measures of qar risk for the same QIs.")
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
@click.option("--output", "-o", type=click.Path(dir_okay=False), required=True, help="The HTML file to write.")
@params.jobs
@params.quiet
def report_cmd(
    where,
    risk,
    k,
    key,
    top,
    threshold,
    treatments,
    group_size,
    compare,
    treated_table,
    link,
    aligned,
    classic,
    weight,
    sensitive,
    population,
    sampling_fraction,
    no_records,
    hash_secret_file,
    store,
    from_store,
    run_id,
    output,
    jobs,
    quiet,
):
    """Write one self-contained HTML report of SOURCE: risk, tail fit, k-anonymity, records, what-if, history."""
    from qar_sql.commands.report import from_store as stored_report
    from qar_sql.commands.report import masked_command, report
    from qar_sql.compliance.store import HASH_SECRET_ENV, hash_secret
    from qar_sql.output.html import write_html

    if (from_store is None) != (run_id is None):
        raise UsageError("--from-store and --run go together: give both to rebuild a recorded run's report")
    pair = {"compare": compare, "treated_table": treated_table, "link": link, "aligned": aligned}
    for opt, name in (("--treated-table", "treated_table"), ("--link", "link"), ("--aligned", "aligned")):
        if pair[name] and compare is None:
            raise UsageError(f"{opt} goes with --compare TREATED; add --compare or leave {opt} out")
    measures = {"weight": weight, "sensitive": sensitive or (), "population": population}
    measures["sampling_fraction"] = sampling_fraction
    for name, value in measures.items():
        if value and not classic:
            opt = "--" + name.replace("_", "-")
            raise UsageError(f"{opt} goes with --classic; add --classic or leave {opt} out")
    if compare is not None:  # before any work: the comparison needs the [compare] extra
        from qar_sql.extras import require

        require("compare", "qar report --compare")
    _guard(where["source"], output, treatments, compare, store, from_store, hash_secret_file)
    secret = hash_secret(hash_secret_file) if (hash_secret_file or os.environ.get(HASH_SECRET_ENV)) else None
    command = masked_command(["qar", *sys.argv[1:]], [secret] if secret else [])
    if from_store is not None:
        result = stored_report(from_store or None, run_id, threshold=threshold, command=command)
        write_html(result, output)
    else:
        sections = {"treatments": treatments, "store": store, "group_size": group_size, **pair}
        sections |= {"records": False if no_records else None, "classic": measures if classic else None}
        with params.Progress("scanning", quiet) as bar:
            result = report(
                **where, **risk, **sections, k=k, key=key, top=top, threshold=threshold, hash_secret=secret,
                command=command, jobs=jobs, progress=bar, output=output,
            )  # fmt: skip
    assert result.audit is not None  # a report of SOURCE or of a stored run always has its audit
    risk_text = "undefined (no tail)" if result.audit.risk is None else f"{result.audit.risk:.6g}"
    click.echo(f"Wrote {output} (T̂ = {risk_text}).", err=True)


def _guard(source, output, treatments, compare, store, from_store, hash_secret_file) -> None:
    """-o: a writable file that is none of the files the report reads, checked before any work."""
    from qar_sql.cli.guard import guard_outputs
    from qar_sql.compliance.store import resolve_store
    from qar_sql.output.files import check_writable

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


def emit_html(parameters: dict, sql: Sequence[str] = (), **results) -> None:
    """:func:`report_html` on stdout."""
    click.echo(report_html(parameters, sql, **results), nl=False)
