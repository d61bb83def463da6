"""``qar uniqueness`` on an open relation: profile → the audit's scan → the birthday measures.

The counts come from the same pushed-down scan as the audit (per QI: class size → number of
classes); the only other statements are the profile the audit runs anyway (which also gives
each column's number of values for ``--domain product``), the one-column value frequencies for
``--from-marginals``, and one small GROUP BY per QI whose most exposed records are listed.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from qar_sql.engines.render import render
from qar_sql.engines.source import Database, Relation, column_names, select_columns
from qar_sql.errors import DataError, ParameterError, UsageError, shown
from qar_sql.measures import birthday
from qar_sql.measures.audit import profile_columns, provenance
from qar_sql.pushdown.scan import Progress, scan, value_frequencies
from qar_sql.results import ExposedValue, QIUniqueness, UniquenessResult
from qar_sql.stats import koot as U


def check(
    group_size: int, target: float, domain: str | int, monte_carlo: int = 0, seed: int | None = None
) -> str | int:
    """Validate what can be checked before connecting; returns the parsed domain."""
    birthday.check_group_size(group_size)
    U.check_target(target)
    if isinstance(monte_carlo, bool) or not isinstance(monte_carlo, numbers.Integral) or monte_carlo < 0:
        raise ParameterError(f"--monte-carlo {shown(monte_carlo)} must be 0 (off) or a number of draws such as 10000")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0):
        # numpy's SeedSequence takes whole numbers 0 or more; anything else was "unexpected"
        raise ParameterError(f"--seed {shown(seed)} must be a whole number 0 or more, e.g. --seed 7")
    return U.parse_domain(domain)


def qi_columns(
    relation: Relation, columns: Sequence[str] | None, exclude: Sequence[str] | None, qid: Sequence[str] | None, p: int
) -> tuple[tuple[str, ...], int]:
    """(columns, p): with ``qid`` the one QI made of exactly those columns."""
    qid = column_names(qid, "--qid")
    if qid:
        if columns:
            raise UsageError("give either --qid (one quasi-identifier) or --columns (every p-subset), not both")
        if len(set(qid)) != len(qid):
            raise UsageError(f"--qid lists a column twice ({', '.join(qid)}); list each once")
        cols = tuple(select_columns(relation.columns, qid, None))
        return cols, len(cols)
    return tuple(select_columns(relation.columns, columns, exclude)), p


@dataclass(frozen=True)
class UniquenessOptions:
    """What :func:`qar_sql.uniqueness` passes down to :func:`uniqueness_relation` for the source
    and for each treated release: one bundle instead of the same keywords at every layer.
    Defaults as :func:`qar_sql.uniqueness`."""

    group_size: int
    columns: Sequence[str] | None = None
    exclude: Sequence[str] | None = None
    qid: Sequence[str] | None = None
    p: int = 3
    target: float = 0.5
    domain: str | int = "observed"
    from_marginals: bool = False
    monte_carlo: int = 0
    seed: int | None = None
    exposed: int = 5
    exposed_qis: int = 1
    batch_size: int | None = None
    jobs: int = 2
    progress: Progress | None = None

    def check(self) -> str | int:
        """:func:`check` on these options; returns the parsed domain."""
        return check(self.group_size, self.target, self.domain, self.monte_carlo, self.seed)


def uniqueness_relation(
    db: Database,
    relation: Relation,
    opts: UniquenessOptions,
    *,
    started: float | None = None,
    source: str | None = None,
) -> UniquenessResult:
    """The measures for every p-subset of ``opts.columns`` (or the one QI ``opts.qid``) of an
    open relation; ``opts.exposed`` most exposed value combinations for each of the
    ``opts.exposed_qis`` riskiest QIs."""
    started = started if started is not None else time.perf_counter()
    parsed = opts.check()
    group_size = opts.group_size
    cols, p = qi_columns(relation, opts.columns, opts.exclude, opts.qid, opts.p)
    if not cols:
        raise UsageError("no quasi-identifier columns are left; name them with --columns or --qid")
    prof = profile_columns(db, relation, cols)
    U.check_group_size(group_size, prof.rows)
    result = scan(
        db, relation.sql, cols, p, batch_size=opts.batch_size, jobs=opts.jobs, progress=opts.progress,
        cardinalities=prof.distinct, rows=prof.rows,
    )  # fmt: skip
    if result.rows != prof.rows:
        raise DataError(f"the table changed during the scan ({prof.rows} rows, then {result.rows}); run it again")
    marginals = None
    if opts.from_marginals:
        freqs = value_frequencies(db, relation.sql, cols)
        marginals = {c: sorted(f.items()) for c, f in zip(cols, freqs)}
    qis = birthday.measure(
        result.qis, prof.rows, group_size=group_size, target=opts.target, domain=parsed,
        column_values=dict(zip(cols, prof.values)), marginals=marginals, monte_carlo=opts.monte_carlo, seed=opts.seed,
    )  # fmt: skip
    if opts.exposed > 0 and opts.exposed_qis > 0:
        qis = tuple(
            _with_exposed(db, relation, q, prof.rows, group_size, opts.exposed) if i < opts.exposed_qis else q
            for i, q in enumerate(qis)
        )
    return UniquenessResult(
        **provenance(db, relation, source),
        rows=prof.rows,
        columns=cols,
        p=p,
        group_size=group_size,
        target=float(opts.target),
        domain_mode=birthday.domain_mode(parsed),
        qis=qis,
        seconds=time.perf_counter() - started,
        from_marginals=opts.from_marginals,
        monte_carlo_draws=opts.monte_carlo,
        seed=opts.seed,
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
        out.append(ExposedValue(tuple(_plain(v) for v in row[:-1]), n, share))
    return tuple(out)


def _with_exposed(db, relation, q: QIUniqueness, rows: int, group_size: int, limit: int) -> QIUniqueness:
    return replace(q, most_exposed=most_exposed(db, relation, q.columns, rows, group_size, limit))


def _plain(value):
    """A value as JSON can carry it: numbers, text, booleans and NULL as they are, the rest
    (dates, decimals, UUIDs, …) as text."""
    if value is None or isinstance(value, (bool, int, str)) or (isinstance(value, float) and math.isfinite(value)):
        return value
    return str(value)
