"""``qar compare``: the privacy metrics of a treated table against its original.

The work, in reads of the engines (never a write):

1. two passes over the original's compared columns, streamed as Arrow batches, fit every
   projection at once (all columns; the attacker's columns; all but the target) with saiph's
   exact streaming fit (:mod:`qar_sql.comparison.projection`);
2. one more pass over the original and one over the treated table turn each batch into
   coordinates (rows × components floats: the largest thing held in memory) and keep the link
   key and the target (:mod:`qar_sql.comparison.coordinates`);
3. the metrics run on the coordinates (:mod:`qar_sql.comparison.metrics`, kd-trees);
4. the QaR audit runs on both tables, in the database, over the same columns and p
   (:mod:`qar_sql.comparison.audits`).

With ``treatments`` the treated table is the what-if release of the original (the file's
``release``, else every treatment in file order), read side by side with the original values in
one SELECT, so each record is linked to the row made from it (:mod:`qar_sql.comparison.tables`).

The shape every command has (``qar_sql/commands/__init__.py``): its parameters
(:class:`~qar_sql.parameters.release.CompareParams`), ``run(session, params, progress) → result``
with the original as the session, and the Python API's function, which opens the session and
calls ``run``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from qar_sql.comparison import audits, coordinates, metrics, tables
from qar_sql.comparison.anonymeter import require_anonymeter, run_anonymeter
from qar_sql.comparison.projection import API_KEYWORD, CLI_OPTION, ProjectionFit, fit_projections
from qar_sql.comparison.read import select_sql
from qar_sql.engines.session import Session
from qar_sql.engines.source import (
    SourceLike,
    open_source,
    session_of,
)
from qar_sql.errors import ColumnError, DataError
from qar_sql.extras import require
from qar_sql.parameters.release import BATCH_ROWS, CompareParams
from qar_sql.progress import with_progress
from qar_sql.pushdown.scan import Progress
from qar_sql.results import (
    CompareResult,
    Distributions,
)
from qar_sql.rules import DEFAULT_JOBS
from qar_sql.treat.treatments import Plan, load

NAME = "compare"
Params = CompareParams


@with_progress("compare")
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
    components: int | str | None = None,
    attacker_columns: Sequence[str] | None = None,
    target: str | None = None,
    p: int = CompareParams.p,
    alpha: float = CompareParams.alpha,
    pi_u: float = CompareParams.pi_u,
    pwm: str = CompareParams.pwm,
    risk: bool = True,
    cloaking: bool = True,
    anonymeter: bool = False,
    anonymeter_attacks: int = 500,
    delimiter: str | None = None,
    null_tokens: Sequence[str] = (),
    impute: str = "none",
    batch_rows: int = BATCH_ROWS,
    threads: int | None = None,
    jobs: int = DEFAULT_JOBS,
    progress: Progress | None = None,
    figures: bool = False,
) -> CompareResult:
    """Compare ``treated`` (a file, or a table of a DuckDB file or database URL) with
    ``original``; see docs/compare.md for every metric.

    ``link`` names a key column present and unique in both tables; ``aligned`` links row i to
    row i (files and DuckDB tables, which keep their row order); ``treatments`` (a what-if TOML
    file) builds the treated table from the original instead, linked by row. Without a link
    only DTC, CDR, inference and the QaR risks are computed. ``components`` is a positive
    integer or ``"all"``; by default 5, or fewer when the columns allow fewer; ``figures`` keeps the per-record distributions for
    :func:`qar_sql.output.render_compare.plot_compare`. ``null_tokens`` are CSV cells read as NULL
    (``NA``); ``impute`` says how a missing numeric value enters the projection: ``"none"``
    (standardised on the non-missing values, NULL at the centre) or ``"mean"`` (the mean
    imputed, then standardised: the Avatar paper's pipeline).
    """
    require("compare", "qar_sql.compare()")  # one sentence naming the extra, before any work
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
        return run(session, params, progress, started=started, spelled=API_KEYWORD)


def prepared(params: CompareParams, original: SourceLike, table: str | None) -> CompareParams:
    """``params`` ready to run, before any connection: the optional package anonymeter present
    when asked for, the treatments file read (a bad file fails here), and the treated side
    placed — TREATED, else the original's own source (its --treated-table), taking the
    original's --table where TREATED is a database too."""
    if params.anonymeter:
        require_anonymeter()  # a missing optional package fails before any read
    if params.treatments is not None:
        if not isinstance(params.treatments, Plan):
            params = replace(params, treatments=load(params.treatments))
        return params
    treated = params.treated if params.treated is not None else original
    tt = params.treated_table or (table if params.treated is not None and tables.takes_table(params.treated) else None)
    return replace(params, treated=treated, treated_table=tt)


def original_null_tokens(original: SourceLike, params: CompareParams) -> tuple[str, ...]:
    """The --null-token values the original is read with: they apply to the CSV files among
    the two sides (a database table has NULLs of its own); refused when neither side is one."""
    treated = params.treated if params.treatments is None else None
    return tables.null_tokens_for(original, treated, tuple(params.null_tokens))[0]


def run(
    session: Session,
    params: CompareParams,
    progress: Progress | None = None,
    *,
    started: float | None = None,
    spelled: str = CLI_OPTION,
) -> CompareResult:
    """The comparison of the treated release that ``params`` places (:func:`prepared`) with
    the session's relation, the original. ``spelled`` names the components option in messages
    (``--components 8`` on the command line, ``components=8`` to a Python caller)."""
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
            tokens_t = null_tokens if tables.csv_file(treated) else ()
            db_t, rel_t = open_source(
                treated, table=treated_table, delimiter=delimiter, threads=threads, null_tokens=tokens_t
            )
            stack.callback(db_t.close)
            treated_display = tables.display(treated, rel_t)
        else:
            db_t, rel_t = db_o, rel_o
            treated_display = f"{original_display} with {plan.path}"

        cols = tables.compared_columns(rel_o, rel_t, columns, exclude, link, treatments is not None)
        for rel, side in ((rel_o, "original"), (rel_t, "treated table")):
            for note in rel.token_notes(cols):
                if note not in notes:
                    notes.append(f"{note} (the {side})" if rel_o is not rel_t else note)
        numeric, cat = tables.kinds(db_o, rel_o, db_t, rel_t, cols, categorical, treatments is not None)
        attackers = tables.subset(attacker_columns, cols, "--attacker-columns")
        if target is not None and target not in cols:
            raise ColumnError(
                f"--target {target!r} is not among the compared columns ({', '.join(cols)}); "
                "name one of them, or add it to --columns"
            )
        if target is not None and len(cols) < 2:
            raise ColumnError(f"--target {target!r} leaves no other column to infer it from; compare more columns")
        if link is not None:
            for db, rel, side in ((db_o, rel_o, "original"), (db_t, rel_t, "treated table")):
                tables.check_key(db, rel, link, side)
        order_o = order_t = None
        if aligned:
            order_o = tables.row_order(db_o, rel_o, "original")
            order_t = tables.row_order(db_t, rel_t, "treated table")

        # The reads: the original's compared columns (fit), then each side with its link key.
        fit_side = tables.Side(db_o, select_sql(db_o, rel_o.sql, cols), {c: c for c in cols}, original_display)
        keyed = [*cols, link] if link else list(cols)
        key_names = {c: c for c in cols}
        if link:
            key_names[link] = "key:"
        if treatments is not None:
            pair = tables.treatment_side(db_o, rel_o, plan, cols, treated_display)
        else:
            side_o = tables.Side(
                db_o, select_sql(db_o, rel_o.sql, keyed, order_by=order_o), key_names, original_display
            )
            side_t = tables.Side(
                db_t, select_sql(db_t, rel_t.sql, keyed, order_by=order_t), dict(key_names), treated_display
            )

        fits = [ProjectionFit(numeric, cat, components, what="the compared columns", impute=impute, spelled=spelled)]
        if attackers:
            fits.append(coordinates.sub_fit(attackers, numeric, cat, components, "the attacker's columns", impute))
        if target:
            others = [c for c in cols if c != target]
            fits.append(
                coordinates.sub_fit(others, numeric, cat, components, f"the columns other than {target!r}", impute)
            )
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
            o, t = coordinates.coordinates(
                pair.batches(numeric_set, batch_rows), main, att, inf, target, False, both=True
            )
            tick()
        else:
            o, _ = coordinates.coordinates(side_o.batches(numeric_set, batch_rows), main, att, inf, target, bool(link))
            tick()
            t, _ = coordinates.coordinates(side_t.batches(numeric_set, batch_rows), main, att, inf, target, bool(link))
        tick()
        n_o, n_t = len(o["main"]), len(t["main"])
        if n_t == 0:
            raise DataError(f"the treated table {treated_display!r} has no rows; compare a release that has records")

        own = None
        if link:
            own = coordinates.own_by_key(o["key"], t["key"], link)
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
            inference = coordinates.inference(o, t, target, target in numeric_set, inf.components)
        tick()

        risks: dict[str, Any] = {"risk_original": None, "risk_treated": None, "qis": ()}
        if risk:
            res_o, note_o = audits.audit_side(db_o, rel_o, cols, p, alpha, pi_u, pwm, jobs)
            tick()
            if treatments is not None:
                res_t, note_t = audits.audit_release(db_o, rel_o, plan, cols, p, alpha, pi_u, pwm, jobs)
            else:
                res_t, note_t = audits.audit_side(db_t, rel_t, cols, p, alpha, pi_u, pwm, jobs)
            tick()
            risks = audits.risks(res_o, note_o, res_t, note_t, notes)

        anon = None
        if anonymeter:
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
                original_xy=coordinates.sample_xy(o["main"]),
                treated_xy=coordinates.sample_xy(t["main"]),
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
