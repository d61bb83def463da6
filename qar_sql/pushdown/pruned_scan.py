"""The pruned scan: the (p − 1)-level class sizes first, then GROUP BY only the QIs of
size p that can reach the tail, highest upper bound first (:mod:`.prune` says which and why).

DuckDB codes the QI columns once, in a session temp table that both levels and every round
read; PostgreSQL codes them in each statement's materialized CTE, as the plain scan does; the
other engines group the columns themselves.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from qar_sql.engines.session import temp_name
from qar_sql.engines.source import Database
from qar_sql.errors import DataError
from qar_sql.pushdown import prune, scan
from qar_sql.results import QIBounds, QIStats, ScanResult

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PrunedScan:
    """A :class:`ScanResult` whose pruned QIs carry bounds, and how it was reached."""

    result: ScanResult
    n_pruned: int
    n_subsets: int  # (p − 1)-level QIs grouped for the bounds
    rounds: int
    seconds: dict[str, float]  # where the time went: codes, subsets, bounds, rounds (bench/bench_frontier.py)
    #: H and S of every QI of size p − 1 (exact: each was grouped for the bounds); None at p = 1
    below: prune.Level | None = None


class _Relay:
    """Progress in QIs: the (p − 1)-level QIs, then the p-level QIs grouped or pruned; a round's
    statements move it within the round's share."""

    def __init__(self, progress: scan.Progress | None, total: int):
        self.progress, self.total, self.base = progress, total, 0

    def within(self, share: int):
        def tick(done: int, total: int) -> None:
            if self.progress and total:
                self.progress(self.base + share * done // total, self.total)

        return tick

    def reach(self, done: int) -> None:
        self.base = done
        if self.progress:
            self.progress(self.base, self.total)


def pruned_scan(
    db: Database,
    relation_sql: str,
    columns: Sequence[str],
    p: int,
    *,
    rows: int,
    width: int,
    cardinalities: Sequence[int] | None = None,
    batch_size: int | None = None,
    jobs: int = 1,
    progress: scan.Progress | None = None,
    measures: Sequence[str] = ("distinct",),
) -> PrunedScan:
    """Exact H, S and class sizes of every QI that can reach the top ``width`` θ (evt.tail_width),
    bounds for the others.

    ``measures``: the θ whose top ``width`` must be exact, ``distinct`` (H/L) and/or ``unique``
    (S/L). A QI is pruned only when it is below the top of every one of them: the unique
    measure is bounded by S ≥ max_B S(B) below and S ≤ H ≤ the bound on H above
    (:func:`frontier_of`), since a QI's top on H says nothing of its rank on S.

    V_c, the values of each column, come from a GROUP BY of each column alone (the level below
    at p = 2), never from the profile's COUNT(DISTINCT): an engine's DISTINCT may compare
    values otherwise than its GROUP BY (MariaDB's collations), and a V_c too small would make
    an upper bound false. At p = 1 no V_c is needed: the bound is L."""
    n = len(columns)
    combos = prune.qi_array(n, p)
    n_qi, n_lower = len(combos), (len(scan.combinations(n, p - 1)) if p > 1 else 1)
    n_singles = n if p >= 3 else 0  # the one-column scan for V_c
    offset = (n_lower if p > 1 else 0) + n_singles
    relay = _Relay(progress, offset + n_qi)
    d = db.dialect
    codes = None
    clock = time.perf_counter()
    seconds = dict.fromkeys(("codes", "subsets", "bounds", "rounds"), 0.0)

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[name] += now - clock
        clock = now

    try:
        if d.temp_tables:  # one codes table for both levels and every round
            codes = temp_name("prune")
            types = [scan.code_type(k) for k in cardinalities] if cardinalities else None
            for sql in scan.materialize_statements(d, relation_sql, columns, codes, types):
                db.query(sql)
        lap("codes")
        opts = scan.StatementOptions(batch_size=batch_size, jobs=jobs, codes_table=codes)
        values: Sequence[int] = [rows] * n
        if n_singles:
            singles = scan.histograms(db, relation_sql, columns, 1, progress=relay.within(n_singles), rows=rows, **opts)
            _check_rows(singles, rows)
            values = [sum(c for _, c in singles[i]) for i in range(n)]
            relay.reach(n_singles)
        if p > 1:
            hist = scan.histograms(db, relation_sql, columns, p - 1, progress=relay.within(n_lower), rows=rows, **opts)
            _check_rows(hist, rows)
            if p == 2:
                values = [sum(c for _, c in hist[i]) for i in range(n)]
            below = prune.level(hist, n_lower, values)
            del hist
            relay.reach(offset)
        else:
            below = prune.empty_level(rows, values)
        lap("subsets")
        b = prune.bounds(below, combos, n, values)
        frontiers = {m: frontier_of(b, m, width) for m in measures}
        frontier = frontiers[measures[0]]
        log.info(
            "pruning: %d QIs of size %d bounded by %d of size %d; %d can reach the tail at first",
            n_qi,
            p,
            n_lower,
            p - 1,
            len(set().union(*(f.candidates().tolist() for f in frontiers.values()))),
        )
        lap("bounds")
        grouped: dict[int, list[tuple[int, int]]] = {}
        while not all(f.done for f in frontiers.values()):
            # each measure's next round (one measure: exactly its own); a frontier already done
            # still doubles its round, unused
            chosen = sorted(set().union(*(f.next_round() for f in frontiers.values())))
            residuals = prune.residual_plan(chosen, combos, below, n, rows) if scan.residuals_apply(d, codes) else None
            lap("bounds")
            in_round = scan.StatementOptions(
                batch_size=batch_size, jobs=jobs, codes_table=codes, only=chosen, residuals=residuals
            )
            got = scan.histograms(
                db, relation_sql, columns, p, progress=relay.within(len(chosen)), rows=rows, **in_round
            )
            lap("rounds")
            _check_rows(got, rows)
            try:
                for m, f in frontiers.items():
                    f.record({j: _count(got[j], m) for j in chosen})
            except ValueError as exc:
                raise DataError(f"the table changed during the audit ({exc}); run it again") from exc
            grouped.update((j, got[j]) for j in chosen)
            below_all = np.logical_and.reduce([f.high < f.floor for f in frontiers.values()])
            n_pruned_now = int(np.count_nonzero(~frontier.grouped & below_all))
            settled = len(grouped) + n_pruned_now  # QIs grouped or pruned so far
            note = getattr(progress, "note", None)  # the CLI's bar shows it beside the count
            if note:
                note(f"QIs of size {p}: {len(grouped):,} grouped, {n_pruned_now:,} pruned, {n_qi - settled:,} left")
            relay.reach(offset + settled)
            log.info(
                "pruning round %d: %d QIs grouped (%d from %d residuals; %d in all), %d pruned, %d left",
                frontier.rounds,
                len(chosen),
                len(residuals or ()),
                len({b for b, _ in (residuals or {}).values()}),
                len(grouped),
                n_pruned_now,
                n_qi - settled,
            )
        try:
            for f in frontiers.values():
                f.check()
        except ValueError as exc:  # never expected: the frontier stops only when this holds
            raise DataError(f"pruning could not prove its bounds ({exc}); run the audit with --prune off") from exc
    finally:
        if codes:
            db.drop_temp_tables([codes])
    relay.reach(offset + n_qi)
    return PrunedScan(
        _assemble(columns, p, combos, grouped, b, frontier.pruned, rows),
        n_pruned=int(frontier.pruned.sum()),
        n_subsets=(n_lower if p > 1 else 0) + n_singles,
        rounds=frontier.rounds,
        seconds=seconds,
        below=below if p > 1 else None,
    )


def frontier_of(b: prune.Bounds, measure: str, width: int) -> prune.Frontier:
    """The frontier of one measure: H between its bounds, or S between S ≥ max_B S(B) and
    S ≤ H ≤ the upper bound on H (a record unique on A is a class of its own on A)."""
    if measure == "unique":
        return prune.Frontier(b.singletons_low, b.distinct_high, width)
    return prune.Frontier(b.distinct_low, b.distinct_high, width)


def _count(hist, measure: str) -> int:
    """H (``distinct``) or S (``unique``) of one QI's class-size histogram."""
    if measure == "unique":
        return sum(c for s, c in hist if s == 1)
    return sum(c for _, c in hist)


def _check_rows(hist, rows: int) -> None:
    if any(sum(s * c for s, c in h) != rows for h in hist.values()):
        raise DataError("the table changed during the audit (the QIs disagree on the number of rows); run it again")


def _assemble(columns, p, combos, grouped, b: prune.Bounds, pruned: np.ndarray, rows: int) -> ScanResult:
    qis = []
    names = tuple(columns)
    for j, combo in enumerate(combos.tolist()):
        cols = tuple(names[i] for i in combo)
        if pruned[j]:
            bound = QIBounds(
                int(b.distinct_low[j]), int(b.distinct_high[j]), int(b.singletons_low[j]), int(b.min_class_high[j])
            )
            qis.append(QIStats(j, cols, 0, 0, 0, (), rows, bounds=bound))
        else:
            qis.append(scan.qi_stats(j, cols, grouped[j], rows))
    return ScanResult(rows=rows, columns=names, p=p, qis=tuple(qis))
