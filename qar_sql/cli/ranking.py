"""``qar records`` and ``qar eliminate``: options, then ``emit(run(…))`` — the work is
:mod:`qar_sql.commands.records` and :mod:`qar_sql.commands.eliminate`, the rendering
:mod:`qar_sql.output.render_records`."""

from __future__ import annotations

from functools import partial

import click

from qar_sql import params
from qar_sql.cli.emit import build, emit, session
from qar_sql.cli.guard import guard_outputs
from qar_sql.errors import UsageError
from qar_sql.output.files import check_plot, check_writable
from qar_sql.output.render import whole_table
from qar_sql.parameters.ranking import BY, EliminateParams, RecordsParams, parse_by, parse_orders
from qar_sql.params import default_of

key_option = params.names_option(
    "--key", "-k", "key", help="Record key column(s), unique and non-NULL (files default to the row number)."
)


def hash_secret_file_option(purpose: str):
    """``--hash-secret-file`` (qar records, qar report): the file holding the HMAC secret of keys."""
    return click.option(
        "--hash-secret-file",
        type=click.Path(dir_okay=False),
        envvar="QAR_HASH_SECRET_FILE",
        help=f"File holding the secret {purpose}.",
    )


def guard_files(writes, where: dict, store: str | None = None, hash_secret_file: str | None = None) -> None:
    """No output over a file the command reads (the source, the store, the secret, the config)."""
    reads = [("the source file itself", where.get("source")), ("the hash secret file", hash_secret_file)]
    if store is not None:
        from qar_sql.compliance.store import resolve_store

        reads.append(("the results store", resolve_store(store or None)))
    guard_outputs(writes, reads)


def _report_html(c, where: dict, top: int, secret: str | None, jobs: int, store: str | None) -> str:
    import os

    from qar_sql.commands.report import audit_html, records_summary
    from qar_sql.compliance.store import HASH_SECRET_ENV
    from qar_sql.compliance.store import hash_secret as read_secret

    if secret is None and os.environ.get(HASH_SECRET_ENV):
        secret = read_secret()
    summary = records_summary(c, top, secret, c.keys)
    return audit_html(c.audit, where, [secret] if secret else [], jobs=jobs, records=summary, store=store)


@click.command("records")
@params.source_options
@params.risk_options
@key_option
@params.top(default_of(RecordsParams, "top"), "How many of the riskiest records to show.")
@params.option(
    "--by",
    of=RecordsParams,
    type=click.Choice(BY),
    help="Ranking score; ties by key order. 'influence' runs in the database without exact DT (any table size); "
    "'suda' ranks by SUDA score on all the key columns (sdcMicro's suda2).",
)
@click.option(
    "--max-size",
    type=int,
    help="With --by suda: minimal sample uniques of up to this many columns (default: all, capped at 5,000 column sets).",
)
@params.missing
@params.sampling_fraction
@params.population
@params.all_text
@click.option(
    "--compare-dt",
    is_flag=True,
    help="With --by influence: also compute exact DT and report its correlation with the influence score.",
)
@params.int_option(
    "--refine",
    minimum=0,
    of=RecordsParams,
    help="With --by influence: recompute exact DT for the N records with the largest influence score and rank those by it (settles ties near u).",
)
@click.option("--all", "all_records", is_flag=True, help="List every record in JSON, not only the top.")
@params.file_option("--output", "-o", help="Write every record's scores to FILE.csv or FILE.parquet.")
@params.store
@params.store_in_source
@click.option(
    "--hash-keys",
    is_flag=True,
    help="With --store: store the top records' keys as HMAC-SHA256, not in clear; needs a secret "
    "($QAR_HASH_SECRET or --hash-secret-file).",
)
@hash_secret_file_option("for --hash-keys (instead of $QAR_HASH_SECRET)")
@params.fmt_html
@params.jobs
@params.quiet
def records_cmd(
    where,
    risk,
    key,
    top,
    by,
    compare_dt,
    refine,
    store,
    store_in_source,
    hash_keys,
    hash_secret_file,
    all_records,
    output,
    fmt,
    jobs,
    quiet,
    **suda_options,
):
    """The records that carry the risk: exact DT, U+, U* and n_unique per record."""
    from qar_sql.commands.records import run, run_recorded
    from qar_sql.compliance.store import hash_secret

    # --max-size, --missing, --sampling-fraction, --population and --all-text: --by suda's.
    chosen = dict(key=key, top=top, by=by, compare_dt=compare_dt, refine=refine, all_records=all_records)
    # (a generic format such as csv writes the whole table: every record's key)
    options = {**where, **risk, **suda_options, **chosen, "output": output, "jobs": jobs}
    settings = build(RecordsParams, options, all_keys=whole_table(fmt))
    if output:  # before the work, not after it
        check_writable(output, "--output")
    guard_files([("--output", output)], where, store, hash_secret_file)
    if hash_keys and store is None:
        raise UsageError("--hash-keys goes with --store (it says how the top records are stored)")
    if hash_secret_file and not hash_keys:
        raise UsageError("--hash-secret-file goes with --hash-keys")
    secret = hash_secret(hash_secret_file) if hash_keys else None  # refused before any work
    if by in ("suda", "influence") and fmt == "html":
        raise UsageError(f"--format html shows exact contributions; use --by dt (the default) with it, not --by {by}")
    if store is not None and by == "suda":
        raise UsageError("--by suda ranks by SUDA score: --store, --compare-dt and --refine do not apply")
    if store is not None and by == "influence":
        raise UsageError("--store records exact contributions; use --by dt with --store")
    with params.Progress("scanning", quiet) as bar:
        if store is None:
            with session(where, all_text=settings.all_text) as s:
                result = run(s, settings, bar)
        else:  # the run, its QI results and the top records by DT go to the results store
            kept = dict(store=store, hash_keys=hash_keys, hash_secret=secret, store_in_source=store_in_source)
            result = run_recorded(where, settings, bar, **kept)
    # html: the report's audit and records sections (docs/report.md)
    report = partial(_report_html, result, where, top, secret, jobs, store) if by not in ("suda", "influence") else None
    emit(result, fmt, params=settings, html=report)


@click.command("eliminate")
@params.source_options
@params.risk_options
@key_option
@click.option(
    "--by",
    "by",
    default=",".join(default_of(EliminateParams, "by")),
    help="Rankings, comma-separated: dt, u_plus, u_star, n_unique, entropy, pls, random, greedy.",
)
@params.option("--step", of=EliminateParams, type=int, help="Records removed per point.")
@params.option(
    "--max",
    "max_removed",
    of=EliminateParams,
    help="Records removed at most: a count or a share of the table such as 20%.",
)
@params.int_option("--greedy-steps", minimum=1, help="Greedy steps (default: up to --max).")
@params.seed(default_of(EliminateParams, "seed"), "Seed of the random ranking and of the PLS split.")
@click.option(
    "--order",
    "orders",
    multiple=True,
    help="Value order of a nominal column for entropy: COLUMN=v1,v2,... (repeatable).",
)
@params.file_option("--plot", "plot_path", help="Draw the curves to FILE.png or FILE.svg.")
@params.fmt
@params.jobs
@params.quiet
def eliminate_cmd(where, risk, by, orders, plot_path, fmt, quiet, **options):
    """Backward elimination: the risk after removing the top records of each ranking."""
    # ``options`` are EliminateParams' by the same names: key, step, max_removed, greedy_steps, seed, jobs.
    from qar_sql.commands.eliminate import run

    order_map = parse_orders(orders)
    names = parse_by(by)
    if plot_path:  # before the work, not after it
        check_plot(plot_path)
        guard_files([("--plot", plot_path)], where)
    settings = build(EliminateParams, {**where, **risk, **options}, by=names, orders=order_map, plot=plot_path)
    with params.Progress("scanning", quiet) as bar, session(where) as s:
        res = run(s, settings, bar)
    emit(res, fmt, plot_path=plot_path)
