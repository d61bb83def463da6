"""``qar anonymize``: options and ``emit(run(…))`` (:mod:`qar_sql.cli.emit`); ``-o`` writes the
treatments file, ``--plot`` the frontier."""

from __future__ import annotations

from pathlib import Path

import click

from qar_sql import params
from qar_sql.cli.emit import build, emit, session
from qar_sql.cli.guard import guard_outputs
from qar_sql.engines.render import recording
from qar_sql.output.files import check_plot, written
from qar_sql.output.render import format_option
from qar_sql.parameters.treat import THETAS, AnonymizeParams
from qar_sql.search_options import hierarchy_files, search_options


@click.command("anonymize")
@params.source_options
@search_options()
@params.risk_options
@params.option("--theta", of=AnonymizeParams, type=click.Choice(THETAS), help="θ of --risk-below, as qar audit's.")
@params.file_option(
    "--output", "-o", "output", help="Write the chosen node as a treatments file (FILE.toml) for qar whatif."
)
@params.file_option("--plot", help="Draw the frontier of loss against T̂ to FILE.png or FILE.svg.")
@format_option(
    html=True,
    own=("text", "json", "markdown", "sql"),
    help="Output format; sql is the release as one SELECT; html the report's anonymization section alone.",
)
@params.jobs
@params.batch_size
@params.quiet
def anonymize_cmd(where, hierarchy, risk, output, plot, fmt, quiet, **options):
    """Search the cheapest generalization of SOURCE that meets the privacy models: one level of
    each QI column's hierarchy (full-domain) plus suppression of at most --suppression-limit of
    the records, minimising ARX's --metric. --risk-below adds the QaR target: T̂(p, α) of the
    release at most the value (docs/anonymize.md).
    """
    from qar_sql.commands import anonymize as command

    if plot is not None:
        check_plot(plot)
    outputs = [(o, f) for o, f in (("--output", output), ("--plot", plot)) if f is not None]
    if outputs:
        # the hierarchy files are inputs too: -o levels.toml must not replace --hierarchy levels.toml
        reads = [
            ("the source", where["source"]),
            *((f"the hierarchy of {c or 'its columns'}", f) for c, f in hierarchy),
            *hierarchy_files(options.get("hierarchies")),
        ]
        guard_outputs(outputs, reads)
    ctx = click.get_current_context()
    given = ctx.get_parameter_source("p") in (
        click.core.ParameterSource.COMMANDLINE,
        click.core.ParameterSource.ENVIRONMENT,
    )
    settings = build(AnonymizeParams, {**where, **risk, **options}, hierarchy=hierarchy, risk=given)
    # recording(): the SQL the HTML report shows
    with params.Progress("nodes", quiet) as bar, recording() as sql, session(where) as s:
        result = command.run(s, settings, bar)
    if output is not None:
        with written(output, "--output"):
            Path(output).write_text(command.treatments_text(result), encoding="utf-8")
    if plot is not None:
        with written(plot, "--plot"):
            result.plot(title=True).figure.savefig(plot)

    def report() -> str:
        from qar_sql.commands.report import html as report_html

        shown = {**where, **risk, **options, "hierarchy": [f"{c}={f}" if c else f for c, f in hierarchy]}
        return report_html({k: v for k, v in shown.items() if v not in (None, (), [])}, sql=sql, anonymize=result)

    emit(result, fmt, html=report)
