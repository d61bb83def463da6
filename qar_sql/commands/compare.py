"""``qar compare``: the privacy metrics of a treated table against its original.

The work, in reads of the engines (never a write):

1. two passes over the original's compared columns, streamed as Arrow batches, fit every
   projection at once (all columns; the attacker's columns; all but the target) with saiph's
   exact streaming fit (:mod:`qar_sql.comparison.projection`);
2. one more pass over the original and one over the treated table turn each batch into
   coordinates (rows × components floats: the largest thing held in memory) and keep the link
   key and the target;
3. the metrics run on the coordinates (:mod:`qar_sql.comparison.metrics`, kd-trees);
4. the QaR audit runs on both tables, in the database, over the same columns and p.

With ``treatments`` the treated table is the what-if release of the original (the file's
``release``, else every treatment in file order), read side by side with the original values in
one SELECT, so each record is linked to the row made from it.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from qar_sql.comparison import metrics
from qar_sql.comparison.projection import ProjectionFit, factorize, fit_projections
from qar_sql.comparison.read import arrow_batches, numeric_array, select_sql, value_array
from qar_sql.engines.session import Session
from qar_sql.engines.source import (
    DUCKDB_SUFFIXES,
    Database,
    Relation,
    SourceLike,
    column_names,
    is_url,
    open_source,
    select_columns,
    session_of,
)
from qar_sql.errors import ColumnError, DataError, ParameterError, UsageError
from qar_sql.parameters.compare import BATCH_ROWS, CompareParams
from qar_sql.results import (
    THRESHOLD_METRICS,
    CompareResult,
    Distributions,
    Inference,
    ThetaChange,
)
from qar_sql.secrets import mask_source

Progress = Callable[[int, int], None]

#: Points per table drawn in the components figure.
FIGURE_POINTS = 20_000


class _Side:
    """One table to read: its connection, the SELECT of the needed columns, and how its output
    columns map back to the compared names."""

    def __init__(self, db: Database, sql: str, names: dict[str, str], display: str):
        self.db = db
        self.sql = sql
        # output column → compared name ("key:" for the link key; "o:NAME" for an original value
        # read beside its treated value)
        self.names = names
        self.display = display

    def batches(self, numeric: set[str], batch_rows: int) -> Iterator[dict[str, np.ndarray]]:
        outputs = list(self.names)
        for batch in arrow_batches(self.db, self.sql, outputs, batch_rows):
            out: dict[str, np.ndarray] = {}
            for out_name, column in zip(outputs, batch.columns):
                name = self.names[out_name]
                compared = name.removeprefix("o:")
                out[name] = numeric_array(column, compared) if compared in numeric else value_array(column)
            yield out


def compare(
    original: SourceLike,
    treated: SourceLike = None,
    *,
    table: str | None = None,
    treated_table: str | None = None,
    treatments: str | Path | None = None,
    link: str | None = None,
    aligned: bool = False,
    columns: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    categorical: Sequence[str] | None = None,
    components: int | str = 5,
    attacker_columns: Sequence[str] | None = None,
    target: str | None = None,
    p: int = 3,
    alpha: float = 0.01,
    pi_u: float = 0.05,
    pwm: str = "plotting",
    risk: bool = True,
    cloaking: bool = True,
    anonymeter: bool = False,
    anonymeter_attacks: int = 500,
    delimiter: str | None = None,
    null_tokens: Sequence[str] = (),
    impute: str = "none",
    batch_rows: int = BATCH_ROWS,
    threads: int | None = None,
    jobs: int = 2,
    progress: Progress | None = None,
    figures: bool = False,
) -> CompareResult:
    """Compare ``treated`` (a file, or a table of a DuckDB file or database URL) with
    ``original``; see docs/compare.md for every metric.

    ``link`` names a key column present and unique in both tables; ``aligned`` links row i to
    row i (files and DuckDB tables, which keep their row order); ``treatments`` (a what-if TOML
    file) builds the treated table from the original instead, linked by row. Without a link
    only DTC, CDR, inference and the QaR risks are computed. ``components`` is a positive
    integer or ``"all"``; ``figures`` keeps the per-record distributions for
    :func:`qar_sql.output.render_compare.plot_compare`. ``null_tokens`` are CSV cells read as NULL
    (``NA``); ``impute`` says how a missing numeric value enters the projection: ``"none"``
    (standardised on the non-missing values, NULL at the centre) or ``"mean"`` (the mean
    imputed, then standardised: the Avatar paper's pipeline).
    """
    started = time.perf_counter()
    params = CompareParams(
        treated=treated, treated_table=treated_table, treatments=treatments, link=link, aligned=aligned,
        columns=columns, exclude=exclude, categorical=categorical, components=components,
        attacker_columns=attacker_columns, target=target, p=p, alpha=alpha, pi_u=pi_u, pwm=pwm, risk=risk,
        cloaking=cloaking, anonymeter=anonymeter, anonymeter_attacks=anonymeter_attacks, delimiter=delimiter,
        null_tokens=null_tokens, impute=impute, batch_rows=batch_rows, threads=threads, jobs=jobs, figures=figures,
    )  # fmt: skip
    params = prepared(params, original, table)
    tokens = original_null_tokens(original, params)
    with session_of(original, table=table, delimiter=delimiter, threads=threads, null_tokens=tokens) as session:
        return run(session, params, progress, started=started)


def prepared(params: CompareParams, original: SourceLike, table: str | None) -> CompareParams:
    """``params`` ready to run, before any connection: the optional package anonymeter present
    when asked for, the treatments file read (a bad file fails here), and the treated side
    placed — TREATED, else the original's own source (its --treated-table), taking the
    original's --table where TREATED is a database too."""
    if params.anonymeter:
        from qar_sql.comparison.anonymeter import require_anonymeter

        require_anonymeter()  # a missing optional package fails before any read
    if params.treatments is not None:
        from qar_sql.treat.treatments import Plan, load

        if not isinstance(params.treatments, Plan):
            params = replace(params, treatments=load(params.treatments))
        return params
    treated = params.treated if params.treated is not None else original
    tt = params.treated_table or (table if params.treated is not None and _takes_table(params.treated) else None)
    return replace(params, treated=treated, treated_table=tt)


def original_null_tokens(original: SourceLike, params: CompareParams) -> tuple[str, ...]:
    """The --null-token values the original is read with: they apply to the CSV files among
    the two sides (a database table has NULLs of its own); refused when neither side is one."""
    treated = params.treated if params.treatments is None else None
    return _null_tokens_for(original, treated, tuple(params.null_tokens))[0]


def run(
    session: Session, params: CompareParams, progress: Progress | None = None, *, started: float | None = None
) -> CompareResult:
    """The comparison of the treated release that ``params`` places (:func:`prepared`) with
    the session's relation, the original."""
    started = started if started is not None else time.perf_counter()
    params = prepared(params, None, None) if params.treatments is not None else params
    treated, treated_table, treatments, link, aligned = (
        params.treated, params.treated_table, params.treatments, params.link, params.aligned
    )  # fmt: skip
    columns, exclude, categorical, components = params.columns, params.exclude, params.categorical, params.components
    attacker_columns, target, p, alpha, pi_u, pwm = (
        params.attacker_columns, params.target, params.p, params.alpha, params.pi_u, params.pwm
    )  # fmt: skip
    risk, cloaking, anonymeter, anonymeter_attacks = (
        params.risk, params.cloaking, params.anonymeter, params.anonymeter_attacks
    )  # fmt: skip
    delimiter, null_tokens, impute, batch_rows = params.delimiter, params.null_tokens, params.impute, params.batch_rows
    threads, jobs, figures = params.threads, params.jobs, params.figures
    plan = treatments
    notes: list[str] = []
    steps = 5 + (2 if risk else 0) + (1 if anonymeter else 0)
    done = 0

    def tick() -> None:
        nonlocal done
        done += 1
        if progress:
            progress(done, steps)

    with ExitStack() as stack:
        db_o, rel_o = session.db, session.relation
        original_display = f"{session.label} {rel_o.display}" if rel_o.kind == "table" else rel_o.display
        if treatments is None:
            tokens_t = null_tokens if _csv_file(treated) else ()
            db_t, rel_t = open_source(
                treated, table=treated_table, delimiter=delimiter, threads=threads, null_tokens=tokens_t
            )
            stack.callback(db_t.close)
            treated_display = _display(treated, rel_t)
        else:
            db_t, rel_t = db_o, rel_o
            treated_display = f"{original_display} with {plan.path}"

        cols = _compared_columns(rel_o, rel_t, columns, exclude, link, treatments is not None)
        for rel, side in ((rel_o, "original"), (rel_t, "treated table")):
            for note in rel.token_notes(cols):
                if note not in notes:
                    notes.append(f"{note} (the {side})" if rel_o is not rel_t else note)
        numeric, cat = _kinds(db_o, rel_o, db_t, rel_t, cols, categorical, treatments is not None)
        attackers = _subset(attacker_columns, cols, "--attacker-columns")
        if target is not None and target not in cols:
            raise ColumnError(
                f"--target {target!r} is not among the compared columns ({', '.join(cols)}); "
                "name one of them, or add it to --columns"
            )
        if target is not None and len(cols) < 2:
            raise ColumnError(f"--target {target!r} leaves no other column to infer it from; compare more columns")
        if link is not None:
            for db, rel, side in ((db_o, rel_o, "original"), (db_t, rel_t, "treated table")):
                _check_key(db, rel, link, side)
        order_o = order_t = None
        if aligned:
            order_o = _row_order(db_o, rel_o, "original")
            order_t = _row_order(db_t, rel_t, "treated table")

        # The reads: the original's compared columns (fit), then each side with its link key.
        fit_side = _Side(db_o, select_sql(db_o, rel_o.sql, cols), {c: c for c in cols}, original_display)
        keyed = [*cols, link] if link else list(cols)
        key_names = {c: c for c in cols}
        if link:
            key_names[link] = "key:"
        if treatments is not None:
            pair = _treatment_side(db_o, rel_o, plan, cols, treated_display)
        else:
            side_o = _Side(db_o, select_sql(db_o, rel_o.sql, keyed, order_by=order_o), key_names, original_display)
            side_t = _Side(db_t, select_sql(db_t, rel_t.sql, keyed, order_by=order_t), dict(key_names), treated_display)

        fits = [ProjectionFit(numeric, cat, components, what="the compared columns", impute=impute)]
        if attackers:
            fits.append(_sub_fit(attackers, numeric, cat, components, "the attacker's columns", impute))
        if target:
            others = [c for c in cols if c != target]
            fits.append(_sub_fit(others, numeric, cat, components, f"the columns other than {target!r}", impute))
        numeric_set = set(numeric)
        first_pass = [True]

        def fit_batches() -> Iterator[dict[str, np.ndarray]]:
            yield from fit_side.batches(numeric_set, batch_rows)
            if first_pass[0]:
                first_pass[0] = False
                tick()

        projections = fit_projections(fit_batches, fits)
        tick()
        main = projections[0]
        att = projections[1] if attackers else None
        inf = projections[-1] if target else None

        if treatments is not None:
            o, t = _coordinates(pair.batches(numeric_set, batch_rows), main, att, inf, target, False, both=True)
            tick()
        else:
            o, _ = _coordinates(side_o.batches(numeric_set, batch_rows), main, att, inf, target, bool(link))
            tick()
            t, _ = _coordinates(side_t.batches(numeric_set, batch_rows), main, att, inf, target, bool(link))
        tick()
        n_o, n_t = len(o["main"]), len(t["main"])
        if n_t == 0:
            raise DataError(f"the treated table {treated_display!r} has no rows; compare a release that has records")

        own = None
        if link:
            own = _own_by_key(o["key"], t["key"], link)
        elif aligned or treatments is not None:
            if n_o != n_t:
                raise DataError(
                    f"--aligned needs tables with as many rows, but the original has {n_o} and the treated "
                    f"table {n_t}; link them on a key with --link"
                )
            own = np.arange(n_o)
        else:
            notes.append(
                "no link between original and treated records (--link KEY or --aligned): the hidden rate, "
                "local cloaking and correlation protection rate need to know which treated record was "
                "made from which original, so only DTC, CDR, inference and the QaR risks are reported"
            )

        closest = metrics.closest_originals(o["main"], t["main"])
        hidden = cloak = cloak_ties = cpr = None
        linkage = None
        if own is not None:
            # Exact up to the median (metrics.cloaking_counts); the counts above it may be lower
            # bounds, which the figure's clipping at the 95th percentile states truthfully.
            linkage = metrics.link(o["main"], t["main"], own, cloaking=cloaking)
            hidden = linkage.hidden_rate
            cloak = linkage.median_local_cloaking
            cloak_ties = linkage.median_local_cloaking_ties
            if att is not None:
                cpr = metrics.link(o["att"], t["att"], own, cloaking=False).hidden_rate
        elif attackers:
            notes.append("--attacker-columns: the correlation protection rate needs a link (--link or --aligned)")
        inference = None
        if inf is not None and target is not None:
            inference = _inference(o, t, target, target in numeric_set, inf.components)
        tick()

        risks: dict[str, Any] = {"risk_original": None, "risk_treated": None, "qis": ()}
        if risk:
            res_o, note_o = _audit(db_o, rel_o, cols, p, alpha, pi_u, pwm, jobs)
            tick()
            if treatments is not None:
                res_t, note_t = _audit_release(db_o, rel_o, plan, cols, p, alpha, pi_u, pwm, jobs)
            else:
                res_t, note_t = _audit(db_t, rel_t, cols, p, alpha, pi_u, pwm, jobs)
            tick()
            risks = _risks(res_o, note_o, res_t, note_t, notes)

        anon = None
        if anonymeter:
            from qar_sql.comparison.anonymeter import run_anonymeter

            if treatments is not None:
                # The release statement holds both sides: read it once per side.
                ori_batches = (
                    {k[2:]: v for k, v in b.items() if k.startswith("o:")}
                    for b in pair.batches(numeric_set, batch_rows)
                )
                syn_batches = (
                    {k: v for k, v in b.items() if not k.startswith("o:")}
                    for b in pair.batches(numeric_set, batch_rows)
                )
            else:
                ori_batches = fit_side.batches(numeric_set, batch_rows)  # type: ignore[assignment]
                syn_batches = side_t.batches(numeric_set, batch_rows)  # type: ignore[assignment]
            anon = run_anonymeter(
                ori_batches, syn_batches, numeric_set, cols, attackers, target, n_attacks=anonymeter_attacks
            )
            tick()

        distributions = None
        if figures:
            distributions = Distributions(
                dcr=closest.dcr,
                nndr=closest.nndr,
                local_cloaking=linkage.local_cloaking if linkage is not None else None,
                original_xy=_sample_xy(o["main"]),
                treated_xy=_sample_xy(t["main"]),
            )

        return CompareResult(
            original=original_display,
            treated=treated_display,
            engine_original=db_o.engine_name,
            engine_treated=db_t.engine_name,
            rows_original=n_o,
            rows_treated=n_t,
            columns=tuple(cols),
            categorical=tuple(cat),
            method=main.method,
            components=main.components,
            explained_variance=float(main.explained_variance_ratio.sum()),
            link=f"key:{link}"
            if link
            else ("aligned" if aligned else ("treatments" if treatments is not None else None)),
            dtc=closest.dtc,
            cdr=closest.cdr,
            hidden_rate=hidden,
            local_cloaking=cloak,
            correlation_protection_rate=cpr,
            attacker_columns=tuple(attackers),
            attacker_components=att.components if att is not None else None,
            inference=inference,
            p=p,
            **risks,
            anonymeter=anon,
            notes=tuple(notes),
            local_cloaking_ties=cloak_ties,
            impute=impute,
            null_tokens=tuple(null_tokens),
            missing_numeric=fits[0].missing_numeric(),
            seconds=time.perf_counter() - started,
            distributions=distributions,
        )


# -- options and columns ---------------------------------------------------------------------


def _takes_table(source: Any) -> bool:
    """Whether the original's ``table`` also names the treated table in ``source``: a
    database, not a file or a DataFrame (which holds one table)."""
    if isinstance(source, Path):
        source = str(source)
    return isinstance(source, str) and (is_url(source) or source.lower().endswith(DUCKDB_SUFFIXES))


def _display(source: str | None, relation: Relation) -> str:
    if source is None:
        source = os.environ.get("QAR_DATABASE_URL", "")
    if relation.kind == "table":
        return f"{mask_source(source)} {relation.display}"
    return relation.display


def _compared_columns(rel_o, rel_t, columns, exclude, link, from_treatments) -> tuple[str, ...]:
    if link is not None and link not in rel_o.columns:
        raise ColumnError(
            f"link column {link!r} is not in the original ({_listing(rel_o.columns)}); name its key column"
        )
    if link is not None and link not in rel_t.columns:
        raise ColumnError(
            f"link column {link!r} is not in the treated table ({_listing(rel_t.columns)}); name a key both tables have"
        )
    if columns and link in columns:
        raise ColumnError(f"the link column {link!r} cannot also be compared; leave it out of --columns")
    skip = list(exclude or ()) + ([link] if link and not columns else [])
    cols = select_columns(rel_o.columns, columns, skip)
    if not cols:
        raise ParameterError("no columns are left to compare; name them with --columns")
    if from_treatments:
        return cols
    treated = set(rel_t.columns)
    for c in cols:
        if c not in treated:
            raise ColumnError(
                f"the original has column {c!r}, which the treated table lacks; compare the common columns "
                f"with --columns, or leave it out with --exclude {c!r}"
            )
    if not columns:
        dropped = set(exclude or ()) | ({link} if link else set())
        for c in rel_t.columns:
            if c not in cols and c not in dropped:
                raise ColumnError(
                    f"the treated table has column {c!r}, which the original lacks; compare the common columns "
                    f"with --columns, or leave it out with --exclude {c!r}"
                )
    return cols


def _listing(columns: Sequence[str]) -> str:
    return ", ".join(columns[:12]) + (" ..." if len(columns) > 12 else "")


def _subset(names: Sequence[str] | str | None, cols: Sequence[str], option: str) -> tuple[str, ...]:
    names = column_names(names, option) or ()
    for n in names:
        if n not in cols:
            raise ColumnError(f"{option} names {n!r}, which is not among the compared columns ({_listing(cols)})")
    if len(set(names)) != len(names):
        raise ColumnError(f"{option} lists a column twice; list each once")
    return names


def _kinds(db_o, rel_o, db_t, rel_t, cols, categorical, from_treatments) -> tuple[list[str], list[str]]:
    """(numeric, categorical) compared columns: the original's numeric types are continuous,
    every other type categorical; ``categorical`` forces columns to be categorical."""
    from qar_sql.treat.treatments import column_kinds

    forced = _subset(categorical, cols, "--categorical")
    kinds = column_kinds(db_o, rel_o.sql, cols)
    numeric = [c for c in cols if kinds[c] in ("integer", "float") and c not in forced]
    if not from_treatments:
        treated_kinds = column_kinds(db_t, rel_t.sql, cols)
        for c in numeric:
            if treated_kinds[c] not in ("integer", "float"):
                raise ColumnError(
                    f"column {c!r} is numeric in the original but {treated_kinds[c]} in the treated table; "
                    f"compare its values as categories with --categorical {c!r}"
                )
    return numeric, [c for c in cols if c not in numeric]


def _check_key(db: Database, rel: Relation, key: str, side: str) -> None:
    q = db.dialect.quote
    rows, present, distinct = db.query(
        f"select count(*), count(t.{q(key)}), count(distinct t.{q(key)}) from {rel.sql} as t"
    )[0]
    if int(present) < int(rows):
        raise ColumnError(
            f"link column {key!r} has {int(rows) - int(present)} NULL value(s) in the {side}; "
            "link on a key every record has"
        )
    if int(distinct) < int(rows):
        raise ColumnError(
            f"link column {key!r} is not unique in the {side} ({int(rows)} rows, {int(distinct)} distinct "
            "values); link on a unique key"
        )


def _row_order(db: Database, rel: Relation, side: str) -> str:
    """The SQL ordering rows as stored: a file's row order, a DuckDB table's rowid."""
    order = rel.row_order or db.stored_row_order(rel.sql)
    if order:
        return f"t.{order}"
    what = "a DataFrame, scanned in no set order" if rel.kind == "frame" else "a database table or a view"
    raise UsageError(
        f"--aligned needs rows in a stored order, which the {side} {rel.display!r} does not have "
        f"({what}); link the tables on a key with --link"
    )


# -- the treated release of a treatments file ------------------------------------------------


def _copy_names(columns: Sequence[str], taken: Sequence[str]) -> list[str]:
    prefix = "qarcompare_o"
    while any(c.startswith(prefix) for c in taken):
        prefix = "_" + prefix
    return [f"{prefix}{i}" for i in range(len(columns))]


def _release_sql(db: Database, rel: Relation, plan: Any, carried: Sequence[tuple[str, str]] = ()) -> tuple[Any, str]:
    """(runner, SQL) of the plan's release over ``rel``; ``carried`` are extra columns of the
    base relation (``base`` CTE) that every step keeps unchanged."""
    from qar_sql.treat.treatments import Binder, treated_sql
    from qar_sql.treat.whatif import WithRelation

    names = plan.release or tuple(t.name for t in plan.treatments)
    if not carried:
        binder = Binder(db, rel.sql, rel.columns, plan, display=rel.display)
        return db, treated_sql(binder, rel.sql, names, modified=False)
    q = db.dialect.quote
    copies = ", ".join(f"t.{q(c)} as {q(a)}" for c, a in carried)
    base = f"select t.*, {copies} from {rel.sql} as t"
    runner: Database
    if db.dialect.outer_cte_scope:
        runner, base_name = WithRelation(db, "qarcompare_base", base), q("qarcompare_base")
    else:  # the release's own WITH would not see a CTE put in front: the base is a derived table
        runner, base_name = db, f"(\n{base}\n)"
    binder = Binder(runner, base_name, (*rel.columns, *[a for _, a in carried]), plan, display=rel.display)
    return runner, treated_sql(binder, base_name, names, modified=False)


def _treatment_side(db, rel, plan, cols, display) -> _Side:
    """One SELECT returning each record's treated values beside its original values (renamed
    copies that the treatments carry through untouched): the link is the row itself, so both
    are read in the same statement, never in two whose row orders could differ."""
    copies = _copy_names(cols, rel.columns)
    runner, release = _release_sql(db, rel, plan, carried=list(zip(cols, copies)))
    q = db.dialect.quote
    items = ",\n  ".join([f"r.{q(c)}" for c in cols] + [f"r.{q(a)}" for a in copies])
    sql = f"select\n  {items}\nfrom (\n{release}\n) as r"
    sql = runner.wrap(sql) if runner is not db else sql
    return _Side(db, sql, {c: c for c in cols} | {a: f"o:{c}" for c, a in zip(cols, copies)}, display)


def _audit_release(db, rel, plan, cols, p, alpha, pi_u, pwm, jobs):
    """The QaR audit of the plan's release, read as ``qar whatif`` reads it (a DuckDB temp
    table, a CTE elsewhere)."""
    from qar_sql.treat.whatif import release

    with release(db, _release_sql(db, rel, plan)[1], rel) as (runner, treated):
        return _audit(runner, treated, cols, p, alpha, pi_u, pwm, jobs)


def _audit(db, rel, cols, p, alpha, pi_u, pwm, jobs):
    """(AuditResult, None) or (None, why not): a comparison still reports its metrics when the
    QaR risk cannot be estimated (too few columns for p, no tail, ...)."""
    from qar_sql.measures.audit import Options, audit_relation

    try:
        result = audit_relation(db, rel, Options(columns=cols, p=p, alpha=alpha, pi_u=pi_u, pwm=pwm, jobs=jobs))
    except (DataError, ParameterError) as exc:
        return None, str(exc)
    if result.fit is None:
        return result, "; ".join(result.warnings) or "no tail to fit"
    return result, None


def _risks(res_o, note_o, res_t, note_t, notes: list[str]) -> dict[str, Any]:
    """The result's QaR fields from the two audits; why an audit has no risk goes to ``notes``."""
    for which, note in (("original", note_o), ("treated table", note_t)):
        if note:
            notes.append(f"QaR risk of the {which} not computed: {note}")
    both = res_o is not None and res_t is not None
    return {
        "risk_original": res_o.risk if res_o is not None else None,
        "risk_treated": res_t.risk if res_t is not None else None,
        "qis": _theta_changes(res_o, res_t) if both else (),
    }


def _theta_changes(before, after) -> tuple[ThetaChange, ...]:
    theta_after = {q.columns: q.theta for q in after.qis}
    return tuple(
        ThetaChange(q.columns, float(q.theta), float(theta_after[q.columns]))
        for q in before.qis
        if q.columns in theta_after
    )


# -- coordinates and metrics -----------------------------------------------------------------


def _sub_fit(names, numeric, categorical, components, what: str, impute: str = "none") -> ProjectionFit:
    """The projection of a subset of the compared columns (capped at the axes they allow)."""
    return ProjectionFit(
        [c for c in names if c in numeric],
        [c for c in names if c in categorical],
        components,
        cap=True,
        what=what,
        impute=impute,
    )


def _null_tokens_for(original, treated, tokens: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The --null-token values for each side: they apply to the CSV files among them (a
    database table has NULLs of its own); refused when neither side is a CSV file."""
    if not tokens:
        return (), ()
    sides = [_csv_file(original), treated is not None and _csv_file(treated)]
    if not any(sides):
        raise UsageError(
            "--null-token applies to CSV files, whose missing values are written as text; neither table is one "
            "(map the token to NULL in a view: nullif(column, 'NA'))"
        )
    return (tokens if sides[0] else ()), (tokens if sides[1] else ())


def _csv_file(source) -> bool:
    return isinstance(source, str | os.PathLike) and not is_url(str(source)) and _is_csv(str(source))


def _is_csv(path: str) -> bool:
    from qar_sql.engines.source import _file_kind

    return _file_kind(path) == "csv"


def _coordinates(
    batches, main, att, inf, target, keyed, *, both=False
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Coordinates in each projection, target and key of every row of ``batches``. With
    ``both`` a batch holds treated values and the original's ("o:NAME"): (original, treated)."""
    sides = [_Collect(main, att, inf, target, keyed)]
    if both:
        sides.append(_Collect(main, att, inf, target, False))
    for batch in batches:
        if both:
            sides[0].add({k[2:]: v for k, v in batch.items() if k.startswith("o:")})
            sides[1].add({k: v for k, v in batch.items() if not k.startswith("o:")})
        else:
            sides[0].add(batch)
    out = [c.arrays() for c in sides]
    return (out[0], out[1]) if both else (out[0], {})


class _Collect:
    def __init__(self, main, att, inf, target, keyed):
        self.main, self.att, self.inf, self.target, self.keyed = main, att, inf, target, keyed
        self.parts: dict[str, list[np.ndarray]] = {"main": [], "att": [], "inf": [], "target": [], "key": []}

    def add(self, batch: dict[str, np.ndarray]) -> None:
        self.parts["main"].append(self.main.transform(batch))
        if self.att is not None:
            self.parts["att"].append(self.att.transform(batch))
        if self.inf is not None:
            self.parts["inf"].append(self.inf.transform(batch))
            self.parts["target"].append(batch[self.target])
        if self.keyed:
            self.parts["key"].append(batch["key:"])

    def arrays(self) -> dict[str, np.ndarray]:
        out = {name: np.concatenate(arrays) for name, arrays in self.parts.items() if arrays}
        out.setdefault("main", np.empty((0, self.main.components)))
        return out


def _own_by_key(key_o: np.ndarray, key_t: np.ndarray, link: str) -> np.ndarray:
    """Row of the treated record sharing each original's key (the keys are unique on both
    sides, checked in SQL; here they must also be the same set)."""
    import pandas as pd

    index = pd.Index(_comparable(key_t))
    own = index.get_indexer(_comparable(key_o))
    missing = np.flatnonzero(own < 0)
    if len(missing):
        raise DataError(
            f"link column {link!r}: the original's key {key_o[missing[0]]!r} is not in the treated table "
            f"({len(missing)} original key(s) have no treated record); link tables holding the same records"
        )
    if len(key_t) != len(key_o):
        raise DataError(
            f"link column {link!r}: the treated table has {len(key_t)} records but the original {len(key_o)}; "
            "link tables holding the same records"
        )
    return own.astype(np.int64)


def _comparable(keys: np.ndarray) -> np.ndarray:
    """Keys as canonical values, so that 7 (integer) and 7.0 (float) are one key."""
    codes, tokens = factorize(keys)
    return tokens[codes]


def _inference(o, t, target, numeric_target, components) -> Inference:
    if numeric_target:
        err = metrics.infer_numeric(o["inf"], t["inf"], o["target"], t["target"])
        value = float(np.nanmean(err)) if np.isfinite(err).any() else None
        return Inference(target, "mae", value, components)
    both = np.concatenate([np.asarray(o["target"], dtype=object), np.asarray(t["target"], dtype=object)])
    codes, _ = factorize(both)
    n = len(o["target"])
    share = metrics.infer_categorical(o["inf"], t["inf"], codes[:n], codes[n:])
    return Inference(target, "accuracy", float(share.mean()) if len(share) else None, components)


def _sample_xy(coords: np.ndarray) -> np.ndarray:
    xy = coords[:, :2] if coords.shape[1] >= 2 else np.column_stack([coords[:, 0], np.zeros(len(coords))])
    if len(xy) > FIGURE_POINTS:
        xy = xy[np.random.default_rng(0).choice(len(xy), FIGURE_POINTS, replace=False)]
    return np.array(xy)


def parse_thresholds(items: Sequence[str] | None) -> dict[str, float]:
    """``["hidden_rate=0.9", "cdr=0.5,dtc=0.1"]`` → {name: value}."""
    out: dict[str, float] = {}
    for item in items or ():
        for part in item.split(","):
            part = part.strip()
            if not part:
                continue
            name, sep, value = part.partition("=")
            name = name.strip()
            if not sep or name not in THRESHOLD_METRICS:
                raise ParameterError(
                    f"--fail-below {part!r} must be METRIC=VALUE with METRIC one of {', '.join(THRESHOLD_METRICS)}, "
                    "e.g. hidden_rate=0.9"
                )
            try:
                out[name] = float(value)
            except ValueError:
                raise ParameterError(f"--fail-below {part!r}: {value!r} is not a number") from None
            if not math.isfinite(out[name]):
                raise ParameterError(f"--fail-below {part!r}: give a finite number")
    return out


#: What each metric needs besides the two tables (for the --fail-below messages).
_NEEDS = {
    "hidden_rate": "a link: --link KEY, --aligned or --treatments",
    "local_cloaking": "a link: --link KEY, --aligned or --treatments",
    "local_cloaking_ties": "a link: --link KEY, --aligned or --treatments",
    "correlation_protection_rate": "--attacker-columns and a link (--link KEY, --aligned or --treatments)",
    "mae": "a numeric --target",
}


def check_thresholds(
    thresholds: dict[str, float], *, linked: bool, attacker_columns: Sequence[str] | None, target: str | None
) -> None:
    """Reject, before any work, a threshold on a metric the options cannot produce."""
    for name, limit in thresholds.items():
        missing = (
            (name in ("hidden_rate", "local_cloaking", "local_cloaking_ties") and not linked)
            or (name == "correlation_protection_rate" and not (linked and attacker_columns))
            or (name == "mae" and target is None)
        )
        if missing:
            raise UsageError(f"--fail-below {name}={limit:g} cannot be checked: {name} needs {_NEEDS[name]}")


def below_thresholds(result: CompareResult, thresholds: dict[str, float]) -> list[str]:
    """One sentence per breached threshold; a threshold on a metric that was not computed is a
    usage error (it cannot pass or fail: a categorical --target has an accuracy, not an mae)."""
    breaches = []
    for name, limit in thresholds.items():
        value = result.metric(name)
        if value is None:
            raise UsageError(
                f"--fail-below {name}={limit:g}: {name} was not computed (it needs {_NEEDS.get(name, 'a link')})"
            )
        if value < limit:
            breaches.append(f"{name} {value:.6g} is below the threshold {limit:g}")
    return breaches
