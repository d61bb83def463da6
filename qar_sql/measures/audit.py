"""The audit: source → profile → pushed-down scan → tail fit → :class:`AuditResult`."""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from qar_sql.engines.dialects.base import refuse_unsafe_name
from qar_sql.engines.render import render
from qar_sql.engines.session import Session
from qar_sql.engines.source import Database, Relation, SourceLike, select_columns, session_of
from qar_sql.errors import ColumnError, DatabaseError, DataError, NoTailError, ParameterError
from qar_sql.measures import birthday
from qar_sql.parameters.tail import DEFAULTS, AuditParams, TailParams, check_row_subsamples, check_theta
from qar_sql.pushdown import prune as pruning
from qar_sql.pushdown.pruned_scan import pruned_scan
from qar_sql.pushdown.scan import Progress, check_p, combinations, profile_row, scan
from qar_sql.results import AuditResult, RowsRisk, ScanResult, UniquenessResult, UniqueRisk, pick
from qar_sql.stats import evt
from qar_sql.stats import interval as tail_interval
from qar_sql.stats.sensitivity import ColumnOut, leave_one_column_out

# INFO: one line per stage of an audit (qar -v); the SQL itself is DEBUG, in engines/source.py.
log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class Options(TailParams):
    """What every audit-based computation (audit, records, influence, elimination, what-if) passes
    down unchanged to :func:`audit_relation`: one signature instead of the same keywords in each."""

    jobs: int = DEFAULTS["jobs"]
    progress: Progress | None = None

    @classmethod
    def of(cls, params: Any, progress: Progress | None = None) -> Options:
        """The options of a command's parameters (their tail settings and ``jobs``)."""
        return cls(**pick(params, _TAIL_NAMES), jobs=params.jobs, progress=progress)


_TAIL_NAMES = tuple(f.name for f in fields(TailParams))


@dataclass(frozen=True)
class Profile:
    """What the profile statement says about the QI columns."""

    rows: int  # L
    notes: tuple[str, ...]  # all-NULL and constant columns
    distinct: tuple[int, ...]  # distinct non-NULL values per column
    has_null: tuple[bool, ...]  # whether each column holds a NULL

    @property
    def values(self) -> tuple[int, ...]:
        """Values per column with NULL counted as one (the column's share of a product domain)."""
        return tuple(d + n for d, n in zip(self.distinct, self.has_null))


def profile_columns(db: Database, relation: Relation, columns: Sequence[str]) -> Profile:
    """(L, notes on all-NULL or constant columns, distinct non-NULL values and NULL flag per
    column); refuses empty and one-row tables."""
    try:
        row = profile_row(db, relation.sql, columns)
    except DatabaseError as exc:
        raise _no_equality(db, relation, columns, exc) from exc
    rows = int(row[0])
    if rows == 0:
        raise DataError(f"table {relation.display!r} is empty; audit a table that has rows")
    if rows == 1:
        raise DataError(f"table {relation.display!r} has one row; the QaR risk needs at least 2 records")
    nonnulls, distincts = [int(v) for v in row[1::2]], [int(v) for v in row[2::2]]
    notes = [
        f"column {col!r} is {'entirely NULL' if nonnull == 0 else 'constant'}, so it separates no records; "
        f"leave it out with --exclude {col!r} unless that is intended"
        for col, nonnull, distinct in zip(columns, nonnulls, distincts)
        if nonnull == 0 or distinct + (nonnull < rows) == 1
    ]
    return Profile(rows, tuple(notes), tuple(distincts), tuple(n < rows for n in nonnulls))


_NO_EQUALITY = re.compile(r"equality operator for type ([\w. \[\]\"]+)")


def _no_equality(db: Database, relation: Relation, columns: Sequence[str], exc: DatabaseError) -> Exception:
    """A column whose type has no equality (PostgreSQL json, point, …) cannot be grouped:
    name it, instead of passing on the engine's message, which names only the type."""
    m = _NO_EQUALITY.search(str(exc))
    if not m:
        return exc
    bad_type = m.group(1).strip()
    try:
        db.recover()
        row = db.column_types(relation.sql, columns)
    except DatabaseError:
        return exc
    bad = [c for c, t in zip(columns, row) if t == bad_type]
    if not bad:
        return exc
    return ColumnError(
        f"column {bad[0]!r} has type {bad_type}, which has no equality, so records cannot be "
        f"grouped by it; leave it out with --exclude {bad[0]!r} or audit a view that casts it "
        "(e.g. to text)"
    )


def check_groupable(db: Database, relation: Relation, columns: Sequence[str]) -> None:
    """Refuse a column whose type has no equality before a row is read (``qar risk``, ``qar
    discover``; an audit's first query names it already): PostgreSQL refuses to group by it when
    it plans the statement, which ``limit 0`` then runs without reading a row."""
    if not columns:
        return
    items = ", ".join(f"t.{db.dialect.quote(c)}" for c in columns)
    try:
        db.query(f"select 1 from {relation.sql} as t group by {items} limit 0")
    except DatabaseError as exc:
        error = _no_equality(db, relation, columns, exc)
        if error is not exc:
            raise error from exc
        db.recover()  # (any other failure is the command's own statements' to report)


def fit(
    scan_result: ScanResult, *, alpha: float, pi_u: float, pwm: str, theta: str = "distinct"
) -> tuple[evt.TailFit | None, list[str]]:
    """Fit the tail of the ``theta`` measure; no tail is a warning and no number, never a made-up one."""
    try:
        tail = evt.qar_risk(fit_theta(scan_result, theta), scan_result.rows, alpha=alpha, pi_u=pi_u, pwm=pwm)
    except NoTailError as exc:
        return None, [str(exc) if theta == "distinct" else f"the unique measure (S/L): {exc}"]
    few = tail_interval.exceedance_note(tail.n_exceedances)  # fewer than 3: flagged in every format
    return tail, ([few] if few else []) + list(tail.warnings)  # (the fit's own notes stay last)


def fit_theta(scan_result: ScanResult, theta: str = "distinct") -> np.ndarray:
    """θ as the tail fit reads it: a pruned QI stands at its upper bound, which is below every
    value the estimator reads (pushdown/prune.py), so T̂, u, ξ̂, β̂ and the exceedances are those
    of the exact θ, bit for bit.

    ``theta="unique"``: S/L, the share of records unique on the QI, where a QI that singles out
    no one stands at 0.5/L (half a record: the clip of evt.clip_theta, which keeps logit θ
    finite, so the fit is that of S/L itself); a pruned QI stands at its bound on H, which
    bounds S (pushdown/pruned_scan.py, ``frontier_of``)."""
    exact = (lambda q: q.singletons) if theta == "unique" else (lambda q: q.distinct)
    counts = [exact(q) if q.bounds is None else q.bounds.distinct_high for q in scan_result.qis]
    return _theta_of(np.array(counts, dtype=float), scan_result.rows, theta)


#: The keywords of :func:`audit` that say where the data is and how it is read (the session's).
SESSION_KEYS = ("table", "delimiter", "threads", "all_text", "null_tokens")


def audit_session(
    session: Session, params: AuditParams, progress: Progress | None = None, *, started: float | None = None
) -> AuditResult:
    """The audit of an open session with the command's parameters (``qar audit``,
    :func:`qar_sql.commands.audit.run`)."""
    opts = Options.of(params, progress)
    return audit_relation(
        session.db, session.relation, opts, k=params.k, batch_size=params.batch_size, started=started,
        source=session.label, group_size=params.group_size, interval_level=params.interval_level,
        bootstrap=params.bootstrap, prune=params.prune_mode, theta=params.theta, loco=True,
        sensitivity=params.sensitivity, row_subsamples=params.row_subsamples,
    )  # fmt: skip


def audit(source: SourceLike = None, *, progress: Progress | None = None, **keywords: Any) -> AuditResult:
    """:func:`qar_sql.audit` by its keywords (``compliance``'s scans and store call it so):
    :data:`SESSION_KEYS` open the session, the rest are :class:`~qar_sql.parameters.tail.AuditParams`
    (an unknown keyword is a TypeError, as against a spelled-out signature)."""
    started = time.perf_counter()
    where = {key: keywords.pop(key) for key in SESSION_KEYS if key in keywords}
    params = AuditParams(**keywords)
    with session_of(source, **where) as session:
        return audit_session(session, params, progress, started=started)


def audited_columns(
    columns: Sequence[str], opts: TailParams, *, enough_qis: bool = True
) -> tuple[tuple[str, ...], int]:
    """The QI columns an audit of a relation of ``columns`` takes and its number of QIs, its
    settings checked (p, α, π_u, the columns named and quotable, and with ``enough_qis`` enough
    QIs for π_u): all that needs only the table's columns, so a command checks it before its
    first query reads a row (:attr:`qar_sql.command.Command.check`). ``qar whatif`` passes
    ``enough_qis=False``: its other measures stand without T̂, which each scenario's note then
    says is undefined."""
    TailParams.validate(opts)  # (the tail's own: a command's parameters add checks of their own)
    cols = select_columns(columns, opts.columns, opts.exclude)
    if not cols:
        raise ParameterError("no quasi-identifier columns are left; name them with --columns")
    check_p(len(cols), opts.p)
    for name in cols:  # (what quoting them in the first query would refuse)
        refuse_unsafe_name(name)
    n_qi = math.comb(len(cols), opts.p)
    if enough_qis:
        evt.check_n_qi(n_qi, opts.pi_u)
    return cols, n_qi


def audit_relation(
    db: Database,
    relation: Relation,
    opts: Options,
    *,
    k=DEFAULTS["k"],
    batch_size=None,
    started=None,
    source=None,
    scanner=None,
    group_size=None,
    interval_level=DEFAULTS["interval_level"],
    bootstrap=DEFAULTS["bootstrap"],
    prune: str = "off",
    theta: str = "distinct",
    with_unique: bool = False,
    loco: bool = False,
    sensitivity: bool = False,
    row_subsamples: Sequence[float] = (),
) -> AuditResult:
    """The audit on an open connection (reused by later commands). ``scanner(columns,
    batch_size, jobs, progress, cardinalities) -> ScanResult`` replaces the plain scan (record-level commands
    gather their per-record tallies in the same pass). ``group_size``, ``prune``: see :class:`~qar_sql.parameters.tail.AuditParams`
    (here ``prune`` defaults to ``"off"``: the commands built on this need every QI's classes).

    ``theta``: the measure the fit (``risk``, the intervals) is of; ``with_unique``: the unique
    measure's T̂ too (``unique``); ``loco``: T̂ without each column (``leave_one_column_out``);
    ``sensitivity``: T̂ at p − 1 and p + 1 (``risk_by_p``, their scans); ``row_subsamples``: T̂
    on nested subsamples of the rows (``risk_by_rows``, a scan each). See docs/uncertainty.md."""
    started = started if started is not None else time.perf_counter()
    check_theta(theta)
    row_subsamples = check_row_subsamples(row_subsamples)
    measures = ("unique",) if theta == "unique" else ("distinct", "unique") if with_unique else ("distinct",)
    p, alpha, pi_u, pwm, jobs, progress = opts.p, opts.alpha, opts.pi_u, opts.pwm, opts.jobs, opts.progress
    cols, n_qi = audited_columns(relation.columns, opts)
    if row_subsamples:  # (the engine's check, before the first query reads a row)
        row_hash(db)
    prof = profile_columns(db, relation, cols)
    rows, notes, distincts = prof.rows, list(prof.notes), list(prof.distinct)
    prune = pruning.resolve(prune, p)  # (an unknown mode: the same sentence as audit's)
    if prune == "auto" and (scanner is not None or group_size is not None):
        raise ParameterError("this command needs every QI's classes; run it with --prune off")
    log.info(
        "%s on %s: %d rows, %d columns, %d QIs of size %d", db.engine_name, relation.display, rows, len(cols), n_qi, p
    )
    scan_started = time.perf_counter()
    n_pruned = n_subsets = 0
    below = None
    if prune == "auto":
        pruned = pruned_scan(
            db,
            relation.sql,
            cols,
            p,
            rows=rows,
            # with a band, the top the bootstrap reads (the exceedances and a margin below u)
            width=tail_interval.band_width(n_qi, pi_u) if bootstrap else evt.tail_width(n_qi, pi_u),
            cardinalities=distincts,
            batch_size=batch_size,
            jobs=jobs,
            progress=progress,
            measures=measures,
        )
        result, n_pruned, n_subsets = pruned.result, pruned.n_pruned, pruned.n_subsets
        below = pruned.below
        log.info(
            "pruned %d of %d QIs (grouped %d, and %d smaller ones for the bounds, in %d rounds)",
            n_pruned,
            n_qi,
            n_qi - n_pruned,
            n_subsets,
            pruned.rounds,
        )
    elif scanner is None:
        result = scan(
            db, relation.sql, cols, p, batch_size=batch_size, jobs=jobs, progress=progress, cardinalities=distincts,
            rows=rows,
        )  # fmt: skip
    else:
        result = scanner(cols, batch_size, jobs, progress, distincts)
    if result.rows != rows:
        raise DataError(f"the table changed during the audit ({rows} rows, then {result.rows}); run it again")
    tail, warnings = fit(result, alpha=alpha, pi_u=pi_u, pwm=pwm, theta=theta)
    unique = None
    if "unique" in measures:
        unique = tail if theta == "unique" else fit(result, alpha=alpha, pi_u=pi_u, pwm=pwm, theta="unique")[0]
    intervals = None
    if tail is not None and bootstrap:
        # from the θ in memory: no query. A pruned audit grouped the top the bootstrap reads
        # (band_width), its other QIs stand at bounds below it: the same intervals.
        intervals = tail_interval.bootstrap_intervals(
            fit_theta(result, theta), rows, tail, alpha=alpha, pi_u=pi_u, pwm=pwm, level=interval_level,
            resamples=bootstrap,
        )  # fmt: skip
    spread = Spread()
    if loco and tail is not None:
        spread.loco = leave_one_column_out(
            fit_theta(result, theta),
            np.array(combinations(len(cols), p), dtype=np.int64).reshape(-1, p),
            cols,
            rows,
            alpha=alpha,
            pi_u=pi_u,
            pwm=pwm,
            exact=np.array([not q.pruned for q in result.qis]),
        )
    if below is not None:  # the pruned audit grouped every QI of size p − 1: T̂ there is free
        spread.by_p[p - 1] = _risk_of(below.singletons if theta == "unique" else below.distinct, rows, opts, theta)
    if sensitivity:
        for q in (p - 1, p + 1):
            if q not in spread.by_p:
                spread.by_p[q] = _risk_at(db, relation, cols, q, rows, opts, theta, batch_size)
    for share in row_subsamples:
        spread.by_rows.append(_risk_of_rows(db, relation, cols, share, rows, opts, theta, batch_size))
    log.info(
        "scanned %d QIs in %.3f s; risk T(p=%d, alpha=%g) = %s", n_qi, time.perf_counter() - scan_started, p, alpha,
        "no tail" if tail is None else f"{tail.risk:.6g}",
    )  # fmt: skip
    keys = [c for c, d in zip(cols, distincts) if d == rows]  # every value distinct, none NULL
    if keys:
        # An identifier makes every QI it is part of a key (θ = 1): "try a larger pi_u" would
        # mislead when that is why there is no tail.
        named = ", ".join(repr(c) for c in keys)
        them = "them" if len(keys) > 1 else "it"
        exclude_hint = repr(",".join(keys))  # (quoted: a name with a space is one argument)
        why = (
            f"column{'s' if len(keys) > 1 else ''} {named} identif{'y' if len(keys) > 1 else 'ies'} every record "
            f"({rows:,} distinct values), so every QI containing {'one of them' if len(keys) > 1 else 'it'} is a key (θ = 1)"
        )
        if tail is None:
            warnings = [
                f"no tail to fit: {why} and no θ is left above u; leave {them} out with --exclude {exclude_hint}"
            ]
        else:
            notes.append(f"{why}; an identifier is no quasi-identifier: leave {them} out with --exclude {exclude_hint}")
    where = provenance(db, relation, source)
    block = None
    if group_size is not None:  # the birthday measures from the same histograms: no extra pass
        block = UniquenessResult(
            **where,
            rows=rows,
            columns=tuple(cols),
            p=p,
            group_size=group_size,
            target=0.5,
            domain_mode="observed",
            qis=birthday.measure(result.qis, rows, group_size=group_size),
            seconds=0.0,
        )
    return AuditResult(
        **where,
        engine_version=db.engine_version,
        rows=rows,
        columns=cols,
        **pick(opts, ("p", "alpha", "pi_u", "pwm")),
        qis=result.qis,
        fit=tail,
        warnings=tuple(notes + warnings),
        seconds=time.perf_counter() - started,
        k=k,
        column_notes=tuple(relation.inferred_notes(cols) + relation.token_notes(cols)),
        uniqueness=block,
        intervals=intervals,
        prune=prune,
        n_pruned=n_pruned,
        n_subsets=n_subsets,
        measure=theta,
        unique=None if "unique" not in measures else UniqueRisk(unique),
        leave_one_column_out=spread.loco,
        risk_by_p=tuple(sorted(spread.by_p.items())) if spread.by_p else None,
        risk_by_rows=(*spread.by_rows, RowsRisk(rows, 1.0, tail.risk if tail else None)) if spread.by_rows else None,
    )


def with_sensitivity(result: AuditResult) -> AuditResult:
    """``result`` (an audit of every QI) with the unique measure's T̂ and leave-one-column-out,
    from the counts in hand (the report shows both): no query."""
    if result.n_pruned:
        return result
    scanned = ScanResult(result.rows, tuple(result.columns), result.p, result.qis)
    alpha, pi_u, pwm = result.alpha, result.pi_u, result.pwm
    unique = (
        result.fit if result.measure == "unique" else fit(scanned, alpha=alpha, pi_u=pi_u, pwm=pwm, theta="unique")[0]
    )
    loco = None
    if result.fit is not None:
        combos = np.array(combinations(len(result.columns), result.p), dtype=np.int64).reshape(-1, result.p)
        theta = fit_theta(scanned, result.measure)
        loco = leave_one_column_out(theta, combos, result.columns, result.rows, alpha=alpha, pi_u=pi_u, pwm=pwm)
    return replace(result, unique=UniqueRisk(unique), leave_one_column_out=loco)


@dataclass
class Spread:
    """The sensitivity of T̂ an audit gathers (docs/uncertainty.md, "Sensitivity")."""

    loco: tuple[ColumnOut, ...] | None = None
    by_p: dict[int, float | None] = field(default_factory=dict)
    by_rows: list[RowsRisk] = field(default_factory=list)


def _theta_of(counts: np.ndarray, rows: int, theta: str) -> np.ndarray:
    """θ of H (``distinct``) or S (``unique``, a QI that singles out no one at 0.5/L: fit_theta)."""
    counts = np.asarray(counts, dtype=float)
    return (np.maximum(counts, 0.5) if theta == "unique" else counts) / rows


def _risk_of(counts: np.ndarray, rows: int, opts: Options, theta: str) -> float | None:
    """T̂ of one θ-vector with the audit's α, π_u and PWM; None without a tail or with too few QIs."""
    try:
        return evt.qar_risk(_theta_of(counts, rows, theta), rows, alpha=opts.alpha, pi_u=opts.pi_u, pwm=opts.pwm).risk
    except DataError:  # (NoTailError is one): no number, never a made-up one
        return None


def _risk_at(
    db: Database, relation: Relation, cols: Sequence[str], q: int, rows: int, opts: Options, theta: str, batch_size
) -> float | None:
    """T̂ at QI size ``q`` over the same columns (a scan; pruned from p = 4 as the audit is);
    None where there is no such size, too few QIs for π_u or no tail."""
    if not 1 <= q <= len(cols):
        return None
    n_qi = len(combinations(len(cols), q))
    try:
        evt.check_n_qi(n_qi, opts.pi_u)
    except DataError:
        return None
    if pruning.resolve(None, q) == "auto":
        result = pruned_scan(
            db, relation.sql, cols, q, rows=rows, width=evt.tail_width(n_qi, opts.pi_u), batch_size=batch_size,
            jobs=opts.jobs, measures=(theta,),
        ).result  # fmt: skip
    else:
        result = scan(db, relation.sql, cols, q, batch_size=batch_size, jobs=opts.jobs, rows=rows)
    tail, _ = fit(result, alpha=opts.alpha, pi_u=opts.pi_u, pwm=opts.pwm, theta=theta)
    return tail.risk if tail else None


def row_hash(db: Database) -> str:
    """``db``'s row hash (:attr:`~qar_sql.engines.dialects.base.Dialect.row_hash`), or the
    refusal of an engine without one (``--row-subsamples``), which :func:`audit` makes before
    its first query."""
    if db.dialect.row_hash is None:
        raise ParameterError(
            f"--row-subsamples needs a hash function, which {db.engine_name} lacks; "
            "run it on DuckDB or PostgreSQL (e.g. the table exported to Parquet)"
        )
    return db.dialect.row_hash


def sample_relation(db: Database, relation: Relation, cols: Sequence[str], n: int) -> Relation:
    """The first ``n`` rows of ``relation`` in the order of a hash of each row
    (templates/default/row_sample.sql): nested subsamples without replacement."""
    d = db.dialect
    text = " || '|' || ".join(
        [f"coalesce('v' || cast(d.{d.quote(c)} as {d.text}), 'n')" for c in cols] + [f"cast(d.qar_copy as {d.text})"]
    )
    sql = render(
        "row_sample.sql", d, columns=list(cols), relation=relation.sql, n=n, row_hash=row_hash(db).format(x=text)
    )
    return Relation(sql.strip(), f"{relation.display} ({n:,} rows)", tuple(cols), "frame")


def _risk_of_rows(
    db: Database,
    relation: Relation,
    cols: Sequence[str],
    share: float,
    rows: int,
    opts: Options,
    theta: str,
    batch_size,
) -> RowsRisk:
    """T̂ on the first ``share`` of the rows in hash order (one profile and one scan)."""
    n = max(2, round(share * rows))
    sample = sample_relation(db, relation, cols, n)
    options = Options(**{**pick(opts, _TAIL_NAMES), "columns": cols, "exclude": None}, jobs=opts.jobs)
    try:
        result = audit_relation(
            db, sample, options, batch_size=batch_size, bootstrap=0, prune=pruning.resolve(None, opts.p), theta=theta
        )
    except DataError:
        return RowsRisk(n, share, None)
    return RowsRisk(result.rows, share, result.risk)


def provenance(db: Database, relation: Relation, source: str | None = None) -> dict[str, Any]:
    """The fields every result opens with: ``source`` as shown (the relation's own name unless
    the caller masked a URL), the table when the relation is one (not a file or frame), the
    engine."""
    return {
        "source": source if source is not None else relation.display,
        "table": relation.display if relation.kind == "table" else None,
        "engine": db.engine_name,
    }
