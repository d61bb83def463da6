"""``records --by influence --top k`` on DuckDB without grouping the heaviest QIs twice.

The weighted QIs (g_j ≠ 0) are the tail's exceedances and the order statistics around u: the
QIs with the most classes, which are also the most expensive to group. Grouping them again after
the audit, for the tally, cost a third of the audit on 10M rows. So the audit groups the QIs
*likely* to be weighted — the top of an independence estimate of each QI's number of classes
(:func:`qar_sql.pushdown.lattice.qi_cells`) — once, keeping each class's size and smallest record id: the
histogram goes to the audit, the singletons' records to the tally. A weighted QI the estimate
missed is grouped once more afterwards, so a poor estimate costs time, never a different score.

Record ids are DuckDB rowids, so the table is never sorted into key order: the final statement
breaks ties by the key columns themselves, and only the top k records' positions in key order
are looked up.
"""

from __future__ import annotations

import math
from contextlib import ExitStack

import numpy as np

from qar_sql.engines.database import Database, Relation
from qar_sql.engines.render import render
from qar_sql.engines.session import coded, temp_name
from qar_sql.errors import DatabaseError, DataError
from qar_sql.measures.audit import Options, audit_relation
from qar_sql.pushdown import lattice
from qar_sql.pushdown.record_keys import ROW_KEY
from qar_sql.pushdown.scan import (
    QIBatch,
    StatementOptions,
    assemble,
    code_type,
    combinations,
    histograms,
    value_frequencies,
)
from qar_sql.ranking.influence_sql import render_influence

#: Candidates: this many times the expected number of exceedances (π_u · C(N, p)), plus a few.
#: A candidate costs about a fifth more than grouping it in the plain scan (its classes are
#: written to a temp table); a weighted QI the estimate missed costs one more grouping.
CANDIDATE_MARGIN = 1.0
CANDIDATE_EXTRA = 4
#: Candidate QIs grouped per statement: one (on 10M rows, four at once took 12% longer).
CAPTURE_BATCH = 1


def has_rowid(db: Database, relation: Relation) -> bool:
    """DuckDB tables (and the temp table a file is read into) have rowids; views do not."""
    try:
        db.query(f"select rowid from {relation.sql} limit 0")
        return True
    except DatabaseError:
        return False


def candidates(estimated_classes: np.ndarray, pi_u: float) -> list[int]:
    n_qi = len(estimated_classes)
    k = min(n_qi, math.ceil(pi_u * n_qi * CANDIDATE_MARGIN) + CANDIDATE_EXTRA)
    return sorted(np.argsort(-estimated_classes, kind="stable")[:k].tolist())


def top_records(db: Database, relation: Relation, opts: Options, *, key_names, top, source, started, gradient):
    """(audit result, g, [(position in key order, tally)] best first — or None when fewer than
    ``top`` records have a positive tally (the caller then ranks every record) —, {position:
    key}, (weighted QIs captured in the audit, weighted QIs grouped again))."""
    d = db.dialect
    groups, pairs = temp_name("capture_groups"), temp_name("capture_pairs")
    held: dict[str, str] = {}
    captured: set[int] = set()
    p = opts.p
    stack = ExitStack()
    stack.callback(db.drop_temp_tables, (groups, pairs))  # also after an error

    def scanner(cols, batch_size, jobs_, progress_, cardinalities):
        # coded once the audit knows the columns' cardinalities; r is DuckDB's rowid
        types = [code_type(k) for k in cardinalities]
        coded_ = stack.enter_context(
            coded(db, relation, cols, row_id="t.rowid", code_types=types, what="capture", materialize=True)
        )
        assert coded_.name is not None  # has_rowid(): DuckDB, which has temp tables
        codes = held["codes"] = coded_.name
        combos = combinations(len(cols), p)
        code_columns = [f"c{i}" for i in range(len(cols))]
        freqs = value_frequencies(db, d.quote(codes), code_columns)
        rows = sum(n * c for n, c in freqs[0].items())
        cand = candidates(lattice.qi_cells(freqs, rows, combos), opts.pi_u)
        captured.update(cand)
        rest = [j for j in range(len(combos)) if j not in captured]
        chunks = [cand[i : i + CAPTURE_BATCH] for i in range(0, len(cand), CAPTURE_BATCH)]
        state = {"done": 0, "total": 0}

        def relay(done, total):
            state.update(done=done, total=total)
            if progress_:
                progress_(done, total)

        # the QIs not captured, counted over the codes table; the captured ones are grouped below
        rest_scan = StatementOptions(batch_size=batch_size, jobs=jobs_, codes_table=codes, only=rest)
        hist = histograms(db, relation.sql, cols, p, progress=relay, ticks_after=len(chunks), **rest_scan)
        db.query(f"create temp table {d.quote(pairs)} (qi integer, r bigint)")
        for k, chunk in enumerate(chunks):
            qis = [QIBatch(j, tuple(f"c{i}" for i in combos[j])) for j in chunk]
            db.query(render("influence_capture.sql", d, groups=groups, qis=qis, encoded=d.quote(codes)))
            for qi, size, n in db.query(f"select qi, size, count(*) from {d.quote(groups)} group by qi, size"):
                hist[int(qi)].append((int(size), int(n)))
            db.query(f"insert into {d.quote(pairs)} select qi, r from {d.quote(groups)} where size = 1")
            if progress_:
                progress_(state["done"] + k + 1, state["total"])
        db.drop_temp_tables((groups,))
        return assemble(cols, p, combos, hist)

    with stack:
        result = audit_relation(db, relation, opts, source=source, started=started, scanner=scanner, bootstrap=0)
        if result.fit is None:
            raise DataError("the table's risk is undefined (no tail), so influence scores are too")
        g = gradient(result)
        codes = held["codes"]
        combos = combinations(len(result.columns), p)
        weighted = [int(j) for j in np.flatnonzero(g)]
        missing = [j for j in weighted if j not in captured]
        tally = (len(weighted) - len(missing), len(missing))
        if missing:
            qis = [QIBatch(j, tuple(f"c{i}" for i in combos[j])) for j in missing]
            db.query(render("influence_pairs.sql", d, pairs=pairs, qis=qis, encoded=d.quote(codes)))
        by_key = key_names != (ROW_KEY,)
        sql = render_influence(
            d, relation.sql, result.columns, p, None, g, limit=top, codes_table=codes, pairs_table=d.quote(pairs),
            key_join=key_names if by_key else (),
        )  # fmt: skip
        rows = db.query(sql) if np.any(g) else []
        if len(rows) < min(top, result.rows):
            return result, g, None, {}, tally
        if not by_key:  # a file: rowid is the row's position
            return result, g, [(int(r[0]), float(r[1])) for r in rows], {}, tally
        ids = ", ".join(str(int(r[0])) for r in rows)
        order = ", ".join(f"t.{d.quote(k)}" for k in key_names)
        where = dict(
            db.query(
                f"select rid, pos from (select t.rowid as rid, row_number() over (order by {order}) - 1 as pos "
                f"from {relation.sql} as t) k where rid in ({ids})"
            )
        )
        ranked = [(int(where[r[0]]), float(r[1])) for r in rows]
        keys = {int(where[r[0]]): tuple(r[2:]) for r in rows}
        return result, g, ranked, keys, tally
