"""``qar report``: one self-contained HTML report of a table (docs/report.md)."""

from __future__ import annotations

import os
import sys

import click

from qar_sql import params
from qar_sql.cli.records import key_option


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
@click.option("--treatments", type=click.Path(dir_okay=False), help="A treatments TOML file: adds the what-if section.")
@click.option(
    "--group-size",
    type=click.IntRange(1, None),
    help="Group size for the uniqueness section (needs the uniqueness measure).",
)
@click.option("--no-records", is_flag=True, help="Leave out the records and elimination sections (a second pass).")
@click.option(
    "--hash-secret-file",
    type=click.Path(dir_okay=False),
    envvar="QAR_HASH_SECRET_FILE",
    help="File holding the secret that hashes record keys (else $QAR_HASH_SECRET; without one, positions are shown).",
)
@params.store
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
    no_records,
    hash_secret_file,
    store,
    output,
    jobs,
    quiet,
):
    """Write one self-contained HTML report of SOURCE: risk, tail fit, k-anonymity, records, what-if, history."""
    from qar_sql.compliance.store import HASH_SECRET_ENV, hash_secret
    from qar_sql.reporting.collect import masked_command, report

    secret = hash_secret(hash_secret_file) if (hash_secret_file or os.environ.get(HASH_SECRET_ENV)) else None
    extra = {}
    if group_size is not None:
        extra["uniqueness"] = uniqueness_hook(where, risk, group_size)
    command = masked_command(["qar", *sys.argv[1:]], [secret] if secret else [])
    with params.Progress("scanning", quiet) as bar:
        result = report(
            **where,
            **risk,
            k=k,
            key=key,
            top=top,
            threshold=threshold,
            treatments=treatments,
            records=False if no_records else None,
            hash_secret=secret,
            store=store,
            extra=extra,
            command=command,
            jobs=jobs,
            progress=bar,
            output=output,
        )
    risk_text = "undefined (no tail)" if result.audit.risk is None else f"{result.audit.risk:.6g}"
    click.echo(f"Wrote {output} (T̂ = {risk_text}).", err=True)


def uniqueness_hook(where: dict, risk: dict, group_size: int):
    """The uniqueness measure (:func:`qar_sql.uniqueness`) for ``--group-size``; it lands in
    the report's ``uniqueness`` section."""
    from qar_sql.treat.uniqueness import uniqueness

    return uniqueness(**where, p=risk["p"], group_size=group_size)
