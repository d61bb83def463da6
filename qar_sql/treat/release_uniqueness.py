"""The uniqueness probability of every QI of a release: the source and, with a what-if
treatments file, each treated release (the paper's Figure 4: κ and π before and after a
recoding such as age in bands of 2 or 5).

On one relation: profile → the audit's scan → the birthday measures
(:mod:`qar_sql.measures.birthday`). The counts come from the same pushed-down scan as the audit
(per QI: class size → number of classes); the only other statements are the profile the audit
runs anyway (which also gives each column's number of values for ``--domain product``), the
one-column value frequencies for ``--from-marginals``, and one small GROUP BY per QI whose most
exposed records are listed.

The treated releases are the what-if's: each scenario is a SELECT over the source
(:func:`qar_sql.treat.treatments.treated_sql`), measured through
:func:`qar_sql.treat.whatif.release` like any table. Nothing is copied or written.

The command is :mod:`qar_sql.commands.uniqueness` (``qar uniqueness``, :func:`qar_sql.uniqueness`);
:func:`uniqueness_session` is its run.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import replace

from qar_sql.engines.render import render
from qar_sql.engines.session import Session
from qar_sql.engines.source import Database, Relation, column_names, listed_once, select_columns
from qar_sql.errors import DataError, UsageError
from qar_sql.measures import birthday
from qar_sql.measures.audit import profile_columns, provenance
from qar_sql.parameters.measures import UniquenessParams
from qar_sql.pushdown.scan import Progress, check_p, scan, value_frequencies
from qar_sql.results import ExposedValue, QIUniqueness, UniquenessResult, UniquenessScenario, pick
from qar_sql.rules import check_group_size, parse_domain
from qar_sql.treat.treatments import Binder, Plan, load, treated_sql
from qar_sql.treat.whatif import release, scenario_name, scenarios_of


def with_plan(params: UniquenessParams) -> UniquenessParams:
    """``params`` with its treatments file read (a bad file fails here, before any connection)."""
    if params.treatments is None or isinstance(params.treatments, Plan):
        return params
    return replace(params, treatments=load(params.treatments))


def uniqueness_session(
    session: Session, params: UniquenessParams, progress: Progress | None = None
) -> UniquenessResult:
    """The measures of the session's relation and of each treated release of ``params.treatments``."""
    started = time.perf_counter()
    params = with_plan(params)
    plan: Plan | None = params.treatments
    db, relation = session.db, session.relation
    # The plan bound before the measures: a column the releases cannot carry fails before any work.
    binder = None if plan is None else Binder(db, relation.sql, relation.columns, plan, display=relation.display)
    result = measure(db, relation, params, progress=progress, started=started, source=session.label)
    scenarios = []
    if plan is not None and binder is not None:
        # A treated release: the same QIs and measures, without the extras of the source's report.
        after_params = replace(
            params, treatments=None, from_marginals=False, monte_carlo=0, seed=None, exposed=0, exposed_qis=1
        )
        order = {q.index: i for i, q in enumerate(result.qis)}
        for names in scenarios_of(plan):
            sql = treated_sql(binder, relation.sql, names, modified=False)
            with release(db, sql, relation) as (runner, treated):
                try:
                    after = measure(runner, treated, after_params)
                except DataError as exc:
                    raise DataError(f"treatment {scenario_name(names)!r}: {exc}") from exc
            qis = tuple(sorted(after.qis, key=lambda q: order[q.index]))
            scenarios.append(UniquenessScenario(scenario_name(names), tuple(names), after.rows, qis))
    return replace(result, scenarios=tuple(scenarios), seconds=time.perf_counter() - started)


# -- one relation ------------------------------------------------------------------------------


def qi_columns(
    relation: Relation, columns: Sequence[str] | None, exclude: Sequence[str] | None, qid: Sequence[str] | None, p: int
) -> tuple[tuple[str, ...], int]:
    """(columns, p): with ``qid`` the one QI made of exactly those columns."""
    qid = column_names(qid, "--qid")
    if qid:
        if columns:
            raise UsageError("give either --qid (one quasi-identifier) or --columns (every p-subset), not both")
        listed_once(qid, "--qid")
        cols = tuple(select_columns(relation.columns, qid, None))
        return cols, len(cols)
    return tuple(select_columns(relation.columns, columns, exclude)), p


def checked_qis(params: UniquenessParams, relation: Relation) -> tuple[tuple[str, ...], int]:
    """(columns, p) of :func:`qi_columns`, some left and p no more than them: all that needs the
    table's columns only, checked before the first query reads a row
    (:attr:`qar_sql.command.Command.check`)."""
    cols, p = qi_columns(relation, params.columns, params.exclude, params.qid, params.p)
    if not cols:
        raise UsageError("no quasi-identifier columns are left; name them with --columns or --qid")
    check_p(len(cols), p)
    return cols, p


def measure(
    db: Database,
    relation: Relation,
    params: UniquenessParams,
    *,
    progress: Progress | None = None,
    started: float | None = None,
    source: str | None = None,
) -> UniquenessResult:
    """The measures for every p-subset of ``params.columns`` (or the one QI ``params.qid``) of an
    open relation (the source, or a treated release read through ``db``); ``params.exposed`` most
    exposed value combinations for each of the ``params.exposed_qis`` riskiest QIs."""
    started = started if started is not None else time.perf_counter()
    parsed = parse_domain(params.domain)  # (the parameters checked it when made)
    group_size = params.group_size
    cols, p = checked_qis(params, relation)
    prof = profile_columns(db, relation, cols)
    check_group_size(group_size, prof.rows)
    result = scan(
        db,
        relation.sql,
        cols,
        p,
        progress=progress,
        cardinalities=prof.distinct,
        rows=prof.rows,
        **pick(params, ("batch_size", "jobs")),
    )
    if result.rows != prof.rows:
        raise DataError(f"the table changed during the scan ({prof.rows} rows, then {result.rows}); run it again")
    marginals = None
    if params.from_marginals:
        freqs = value_frequencies(db, relation.sql, cols)
        marginals = {c: sorted(f.items()) for c, f in zip(cols, freqs)}
    qis = birthday.measure(
        result.qis,
        prof.rows,
        group_size=group_size,
        domain=parsed,
        column_values=dict(zip(cols, prof.values)),
        marginals=marginals,
        **pick(params, ("target", "monte_carlo", "seed")),
    )
    if params.exposed > 0 and params.exposed_qis > 0:
        qis = tuple(
            with_exposed(db, relation, q, prof.rows, group_size, params.exposed) if i < params.exposed_qis else q
            for i, q in enumerate(qis)
        )
    return UniquenessResult(
        **provenance(db, relation, source),
        rows=prof.rows,
        columns=cols,
        p=p,
        group_size=group_size,
        target=float(params.target),
        domain_mode=birthday.domain_mode(parsed),
        qis=qis,
        seconds=time.perf_counter() - started,
        from_marginals=params.from_marginals,
        monte_carlo_draws=params.monte_carlo,
        seed=params.seed,
        warnings=tuple(prof.notes) + tuple(relation.token_notes(cols)),
    )


def most_exposed(
    db: Database, relation: Relation, columns: Sequence[str], rows: int, group_size: int, limit: int
) -> tuple[ExposedValue, ...]:
    """The ``limit`` value combinations of a QI with the fewest records, and each one's exposure
    (1 − n/L)^(k−1). Ties in n are broken by the values in the engine's sort order."""
    sql = render("smallest_classes.sql", db.dialect, columns=list(columns), relation=relation.sql, limit=int(limit))
    out = []
    for row in db.query(sql):
        n = int(row[-1])
        # A class holding every row (a constant or all-NULL QI) leaves no one unique: 0.
        share = 0.0 if n >= rows else math.exp((group_size - 1) * math.log1p(-n / rows))
        out.append(ExposedValue(tuple(plain(v) for v in row[:-1]), n, share))
    return tuple(out)


def with_exposed(db, relation, q: QIUniqueness, rows: int, group_size: int, limit: int) -> QIUniqueness:
    """``q`` with its ``limit`` most exposed value combinations."""
    return replace(q, most_exposed=most_exposed(db, relation, q.columns, rows, group_size, limit))


def plain(value):
    """A value as JSON can carry it: numbers, text, booleans and NULL as they are, the rest
    (dates, decimals, UUIDs, …) as text."""
    if value is None or isinstance(value, (bool, int, str)) or (isinstance(value, float) and math.isfinite(value)):
        return value
    return str(value)
