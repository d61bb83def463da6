"""``qar records`` and ``qar eliminate``: thin click layers over :mod:`.records` and :mod:`.eliminate`."""

from __future__ import annotations

import csv
import json
import math
from functools import partial

import click

from qar_sql import params
from qar_sql.errors import ParameterError, UsageError
from qar_sql.output.render import render, whole_table

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


def _f(x):
    x = float(x)
    return x if math.isfinite(x) else None


def record_row(c, r: int) -> dict:
    key = c.key_of(r)
    return {
        "key": list(key) if key is not None and len(key) > 1 else (key[0] if key else None),
        "r": int(r),
        "dt": _f(c.dt[r]),
        "u_plus": _f(c.u_plus[r]),
        "u_star": _f(c.u_star[r]),
        "n_unique": int(c.n_unique[r]),
    }


def _write_parquet(path: str, names, keys, **scores) -> None:
    """Key columns and score arrays to Parquet, written by an in-memory DuckDB."""
    import duckdb
    import numpy as np

    data = {n: np.array([k[i] for k in keys], dtype=object) for i, n in enumerate(names)}
    data.update(scores)
    con = duckdb.connect()
    try:
        con.register("scores", data)
        con.execute("copy (select * from scores) to " + "'" + path.replace("'", "''") + "' (format parquet)")
    finally:
        con.close()


def write_scores(c, path: str) -> None:
    """Every record's scores, in key order, to CSV or Parquet (Parquet written by DuckDB)."""
    names = list(c.key)
    keys = [c.key_of(r) for r in range(c.rows)]
    if path.lower().endswith(".csv"):
        with open(path, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(names + ["dt", "u_plus", "u_star", "n_unique"])
            for r in range(c.rows):
                w.writerow(
                    list(keys[r])
                    + [repr(float(c.dt[r])), repr(float(c.u_plus[r])), repr(float(c.u_star[r])), int(c.n_unique[r])]
                )
        return
    if path.lower().endswith(".parquet"):
        _write_parquet(path, names, keys, dt=c.dt, u_plus=c.u_plus, u_star=c.u_star, n_unique=c.n_unique)
        return
    raise ParameterError(f"--output {path!r} must end in .csv or .parquet")


def guard_files(writes, where: dict, store: str | None = None, hash_secret_file: str | None = None) -> None:
    """No output over a file the command reads (the source, the store, the secret, the config)."""
    from qar_sql.cli.guard import guard_outputs

    reads = [("the source file itself", where.get("source")), ("the hash secret file", hash_secret_file)]
    if store is not None:
        from qar_sql.compliance.store import resolve_store

        reads.append(("the results store", resolve_store(store or None)))
    guard_outputs(writes, reads)


def _report_html(c, where: dict, top: int, secret: str | None, jobs: int, store: str | None) -> str:
    import os
    import sys

    from qar_sql.compliance.store import HASH_SECRET_ENV
    from qar_sql.compliance.store import hash_secret as read_secret
    from qar_sql.reporting.collect import audit_inputs, masked_command, records_summary

    if secret is None and os.environ.get(HASH_SECRET_ENV):
        secret = read_secret()
    summary = records_summary(c, top, secret, c.keys)
    command = masked_command(["qar", *sys.argv[1:]], [secret] if secret else [])
    inputs = audit_inputs(c.audit, where, command=command, jobs=jobs, records=summary, store=store)
    return inputs.to_html()


@click.command("records")
@params.source_options
@params.risk_options
@key_option
@params.top(100, "How many of the riskiest records to show.")
@click.option(
    "--by",
    type=click.Choice(["dt", "u_plus", "u_star", "n_unique", "influence", "suda"]),
    default="dt",
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
    default=0,
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
    from qar_sql.compliance.store import hash_secret
    from qar_sql.output.files import check_writable
    from qar_sql.ranking.records import contributions

    if output and not output.lower().endswith((".csv", ".parquet")):
        raise ParameterError(f"--output {output!r} must end in .csv or .parquet")
    if output:  # before the work, not after it
        check_writable(output, "--output")
    guard_files([("--output", output)], where, store, hash_secret_file)
    if hash_keys and store is None:
        raise UsageError("--hash-keys goes with --store (it says how the top records are stored)")
    if hash_secret_file and not hash_keys:
        raise UsageError("--hash-secret-file goes with --hash-keys")
    secret = hash_secret(hash_secret_file) if hash_keys else None  # refused before any work
    # --max-size, --missing, --sampling-fraction, --population and --all-text: suda()'s keywords.
    s = suda_options
    suda_set = s["max_size"] is not None or s["missing"] != "value"
    if by != "suda" and (suda_set or s["sampling_fraction"] or s["population"] or s["all_text"]):
        raise UsageError("--max-size, --missing, --sampling-fraction, --population and --all-text go with --by suda")
    if by in ("suda", "influence") and fmt == "html":
        raise UsageError(f"--format html shows exact contributions; use --by dt (the default) with it, not --by {by}")
    if by == "suda":
        if store is not None or compare_dt or refine:
            raise UsageError("--by suda ranks by SUDA score: --store, --compare-dt and --refine do not apply")
        return suda_records(where, key, top, suda_options, all_records, output, fmt, jobs, quiet)
    if refine and by != "influence":
        raise UsageError(f"--refine goes with --by influence (--by {by} ranks every record exactly already)")
    if by == "influence":
        if store is not None:
            raise UsageError("--store records exact contributions; use --by dt with --store")
        return influence_records(where, risk, key, top, compare_dt, all_records, output, fmt, jobs, quiet, refine)
    if compare_dt:
        raise UsageError("--compare-dt goes with --by influence")
    with params.Progress("scanning", quiet) as bar:

        def run():
            all_keys = bool(output or all_records or whole_table(fmt))
            return contributions(**where, **risk, key=key, top=top, by=by, all_keys=all_keys, jobs=jobs, progress=bar)

        if store is None:
            c = run()
        else:  # the run, its QI results and the top records by DT go to the results store
            from qar_sql.compliance.store import recorded_audit

            box = {}

            def runner():
                box["c"] = c_ = run()
                order = c_.order(by)[:top]
                return c_.audit, [(", ".join(map(str, c_.key_of(r))), float(c_.scores(by)[r])) for r in order]

            def sections(_):  # the records section of the report, rebuilt by qar report --from-store
                from qar_sql.reporting.collect import records_summary
                from qar_sql.results import to_plain

                return {"records": to_plain(records_summary(box["c"], top, secret, box["c"].keys))}

            recorded_audit(
                store,
                **where,
                **risk,
                runner=runner,
                sections=sections,
                hash_keys=hash_keys,
                hash_secret_value=secret,
                store_in_source=store_in_source,
            )
            c = box["c"]
    if output:
        from qar_sql.output.files import written

        with written(output, "--output"):
            write_scores(c, output)
    # html: the report's audit and records sections (docs/report.md)
    report = partial(_report_html, c, where, top, secret, jobs, store)
    click.echo(render(c, fmt, partial(_records_own, c, by, top, all_records), html=report), nl=False)


def _records_own(c, by: str, top: int, all_records: bool, fmt: str) -> str:
    """``qar records`` (by DT, U+, U* or n_unique) in text, Markdown or JSON."""
    order = c.order(by)
    shown = order if (all_records and fmt == "json") else order[:top]
    summary = c.summary()
    if fmt == "json":
        obj = {
            "risk": c.audit.risk,
            "rows": c.rows,
            "p": c.audit.p,
            "key": list(c.key),
            "by": by,
            "summary": summary,
            "warnings": list(c.audit.warnings) + list(c.warnings),
            "records": [dict(record_row(c, r), unique_on=[list(q) for q in c.unique_on(r)]) for r in shown],
        }
        return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    md = fmt == "markdown"
    cor = summary["correlations"]

    def fc(d):
        return "—" if d["pearson"] is None else f"Pearson {d['pearson']:.4f}, Kendall {d['kendall']:.4f}"

    lines = [
        f"{'## ' if md else ''}Records by {by} — T̂ = {c.audit.risk:.10g}, {c.rows:,} records, key {', '.join(c.key)}",
        "",
        f"- records unique on no QI: {100 * summary['share_unique_on_no_qi']:.2f}% ({summary['distinct_patterns']:,} distinct uniqueness patterns)",
        f"- DT–U+: {fc(cor['dt_u_plus'])}",
        f"- DT–U*: {fc(cor['dt_u_star'])}",
        f"- U+–U*: {fc(cor['u_plus_u_star'])}",
        "",
    ]
    header = ["key", "DT", "U+", "U*", "n_unique", "unique on (first 3 QIs)"]
    if md:
        lines += ["| " + " | ".join(header) + " |", "|---|---:|---:|---:|---:|---|"]
    else:
        lines.append(f"  {'key':<16} {'DT':>13} {'U+':>9} {'U*':>9} {'n_unique':>8}  unique on")
    for r in shown:
        row = record_row(c, r)
        qis = c.unique_on(r)
        on = "; ".join("(" + ", ".join(q) + ")" for q in qis[:3]) + (f" … +{len(qis) - 3}" if len(qis) > 3 else "")
        key = ", ".join(str(k) for k in (c.key_of(r) or ()))
        dt = "undefined" if row["dt"] is None else f"{row['dt']:.6e}"
        if md:
            lines.append(
                f"| {key} | {dt} | {row['u_plus']:.4f} | {row['u_star']:.4f} | {row['n_unique']} | {on.replace('|', '/')} |"
            )
        else:
            lines.append(f"  {key:<16} {dt:>13} {row['u_plus']:>9.4f} {row['u_star']:>9.4f} {row['n_unique']:>8}  {on}")
    warnings = list(c.audit.warnings) + list(c.warnings)
    if warnings:
        lines += ["", "Warnings:"] + [f"  - {w}" for w in warnings]
    return "\n".join(lines) + "\n"


@click.command("eliminate")
@params.source_options
@params.risk_options
@key_option
@click.option(
    "--by",
    "by",
    default="dt,u_plus,u_star,random",
    help="Rankings, comma-separated: dt, u_plus, u_star, n_unique, entropy, pls, random, greedy.",
)
@click.option("--step", type=int, default=100, help="Records removed per point.")
@click.option(
    "--max",
    "max_removed",
    default="20%",
    help="Records removed at most: a count or a share of the table such as 20%.",
)
@params.int_option("--greedy-steps", minimum=1, help="Greedy steps (default: up to --max).")
@click.option("--seed", type=int, default=0, help="Seed of the random ranking and of the PLS split.")
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
    # ``options`` go to eliminate() as they are: key, step, max_removed, greedy_steps, seed, jobs.
    from qar_sql.ranking.eliminate import eliminate, plot

    order_map = {}
    for item in orders:
        if "=" not in item:
            raise UsageError(f"--order {item!r} must look like COLUMN=v1,v2,v3")
        col, values = item.split("=", 1)
        order_map[col] = [v for v in values.split(",")]
    names = [b.strip() for b in by.split(",") if b.strip()]
    if not names:
        raise UsageError(
            f"--by {by!r} names no ranking; use one or more of dt, u_plus, u_star, n_unique, entropy, pls, "
            "random, greedy, e.g. --by dt,random"
        )
    if plot_path:  # before the work, not after it
        from qar_sql.output.files import check_plot

        check_plot(plot_path)
        guard_files([("--plot", plot_path)], where)
    with params.Progress("scanning", quiet) as bar:
        res = eliminate(**where, **risk, **options, by=names, orders=order_map or None, progress=bar)
    if plot_path:
        from qar_sql.output.files import written

        with written(plot_path, "--plot"):
            plot(res, plot_path)
    click.echo(render(res, fmt, partial(_eliminate_own, res, plot_path)), nl=False)


def _eliminate_own(res, plot_path: str | None, fmt: str) -> str:
    """``qar eliminate`` in text, Markdown or JSON."""
    if fmt == "json":
        return json.dumps(res.to_dict(), indent=2, allow_nan=False) + "\n"
    md = fmt == "markdown"
    names = list(res.curves)
    lines = [
        f"{'## ' if md else ''}Backward elimination: T̂₀ = {res.risk:.10g}, {res.rows:,} records, step {res.step}",
        "",
    ]
    if md:
        lines += ["| removed | " + " | ".join(names) + " |", "|---:|" + "---:|" * len(names)]
    else:
        lines.append("  reduction 1 − T̂ₖ/T̂₀ (%)")
        lines.append(f"  {'removed':>8} " + " ".join(f"{n:>10}" for n in names))
    n_points = max((len(v) for v in res.curves.values()), default=0)
    for i in range(n_points):
        k = next(v[i].removed for v in res.curves.values() if len(v) > i)
        cells = []
        for n in names:
            pts = res.curves[n]
            red = pts[i].reduction if i < len(pts) else None
            cells.append("no tail" if red is None else f"{100 * red:.2f}")
        lines.append(
            ("| " + str(k) + " | " + " | ".join(cells) + " |")
            if md
            else f"  {k:>8} " + " ".join(f"{c:>10}" for c in cells)
        )
    for name, auc in res.auc.items():
        lines.append(f"\n{name} AUC (25% held out): {auc:.4f}")
    if plot_path:
        lines.append(f"\nPlot written to {plot_path}")
    return "\n".join(lines) + "\n"


def suda_records(where, key, top, suda_options, all_records, output, fmt, jobs, quiet):
    """``qar records --by suda``: every record's SUDA and DIS-SUDA score (sdcMicro's suda2)."""
    import numpy as np

    from qar_sql.measures.classic import suda, suda_order, write_table
    from qar_sql.output.risk import suda_dict, suda_text

    with params.Progress("scanning", quiet):
        found = suda(
            **where, **suda_options, key=key, all_keys=bool(output or all_records or whole_table(fmt)), jobs=jobs
        )
    result, key_names, keys = found.suda, found.key, found.keys
    order = suda_order(result)
    if output:
        data = {name: np.array([keys[r][i] for r in range(result.score.size)]) for i, name in enumerate(key_names)}
        data.update(suda=result.score, dis_suda=result.dis_score)
        for k in range(result.max_size):
            data[f"msu_{k + 1}"] = result.msu_counts[:, k]
        write_table(data, output, "parquet" if output.lower().endswith(".parquet") else "csv")

    def own(fmt: str) -> str:
        if fmt == "json":
            obj = suda_dict(result, keys, order, None if all_records else top)
            obj["key"] = list(key_names)
            return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        return suda_text(result, keys, key_names, order, top)

    click.echo(render(found, fmt, own), nl=False)


def influence_records(where, risk, key, top, compare_dt, all_records, output, fmt, jobs, quiet, refine=0):
    """``qar records --by influence``: the top records by I(i), ranked in the database."""
    import numpy as np

    from qar_sql.ranking.influence import influence
    from qar_sql.ranking.records import contributions
    from qar_sql.stats.contributions import correlations

    with params.Progress("scanning", quiet) as bar:
        want_all = bool(output or all_records or compare_dt)  # (--format csv: the top, as the JSON)
        inf = influence(**where, **risk, key=key, top=top, all_scores=want_all, jobs=jobs, progress=bar, refine=refine)
        cor = None
        if compare_dt:
            c = contributions(**where, **risk, key=key, top=0, jobs=jobs)
            cor = correlations(inf.scores, c.dt)
    if output:
        from qar_sql.output.files import written

        with written(output, "--output"):
            _write_influence(inf, output, where)
    show_key = lambda k: list(k) if k and len(k) > 1 else (k[0] if k else None)  # noqa: E731
    rows = [
        {"key": show_key(inf.key_of(r)), "r": r, "influence": s}
        for r, s in (
            inf.top
            if not (all_records and inf.scores is not None)
            else [(int(r), float(inf.scores[r])) for r in np.argsort(-inf.scores, kind="stable")]
        )
    ]
    refined = [
        {"key": show_key(inf.key_of(r)), "r": r, "dt": None if np.isnan(dt) else dt, "influence": s}
        for r, dt, s in inf.refined
    ]
    click.echo(render(inf, fmt, partial(_influence_own, inf, top, refine, cor, rows, refined)), nl=False)


def _influence_own(inf, top: int, refine: int, cor, rows: list, refined: list, fmt: str) -> str:
    """``qar records --by influence`` in text, Markdown or JSON."""
    if fmt == "json":
        obj = {
            "risk": inf.audit.risk,
            "rows": inf.audit.rows,
            "p": inf.audit.p,
            "key": list(inf.key),
            "by": "influence",
            "weighted_qis": inf.n_weighted,
            "baseline": inf.baseline,
            "correlation_with_dt": cor,
            "warnings": list(inf.audit.warnings) + list(inf.warnings),
            "records": rows,
        }
        if refine:
            obj["refined"] = refined
        return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    lines = [
        f"Records by influence — T̂ = {inf.audit.risk:.10g}, {inf.audit.rows:,} records; "
        f"ranked on {inf.n_weighted} of {inf.audit.n_qi} QIs (those with ∂T̂/∂θ ≠ 0)",
    ]
    if cor:
        lines.append(f"- influence vs exact DT: Pearson {cor['pearson']:.8f}, Kendall {cor['kendall']:.8f}")
    if refine:
        lines += [
            "",
            f"Exact DT of the top {len(refined)} by influence, ranked by DT:",
            f"  {'key':<16} {'DT':>13} {'influence':>13}",
        ]
        for row in refined[:top]:
            key = row["key"] if not isinstance(row["key"], list) else ", ".join(map(str, row["key"]))
            dt = "undefined" if row["dt"] is None else f"{row['dt']:.6e}"
            lines.append(f"  {str(key):<16} {dt:>13} {row['influence']:>13.6e}")
        return "\n".join(lines) + "\n"
    lines += ["", f"  {'key':<16} {'influence':>13}"]
    for row in rows[:top]:
        key = row["key"] if not isinstance(row["key"], list) else ", ".join(map(str, row["key"]))
        lines.append(f"  {str(key):<16} {row['influence']:>13.6e}")
    return "\n".join(lines) + "\n"


def _write_influence(inf, path, where):
    names = list(inf.key)
    if inf.key == ("row",):
        keys = [(r + 1,) for r in range(inf.audit.rows)]
    else:
        from qar_sql.engines.source import open_source
        from qar_sql.pushdown.record_keys import fetch_keys

        db, relation = open_source(
            where["source"], table=where["table"], delimiter=where["delimiter"], null_tokens=where["null_tokens"]
        )
        with db:
            got = fetch_keys(db, relation, inf.key, None)
        keys = [got[r] for r in range(inf.audit.rows)]
    if path.lower().endswith(".csv"):
        with open(path, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(names + ["influence"])
            for r in range(inf.audit.rows):
                w.writerow(list(keys[r]) + [repr(float(inf.scores[r]))])
    else:
        _write_parquet(path, names, keys, influence=inf.scores)
