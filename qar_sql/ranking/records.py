"""Record-level risk, pushed down: which records carry the risk (``qar records``).

The database returns the distinct uniqueness patterns (sets of QIs on which a record is unique)
with their record counts, and the pattern of every record unique on at least one QI — per-record
tallies, never the table. Exact DT is then computed once per pattern (:mod:`.contributions`).

Record identity: ``key`` columns (unique, non-NULL) order the records; files default to their
row order. ``r`` is a record's position in that order, and every ranking breaks ties by it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from qar_sql.engines.database import Database, Relation
from qar_sql.engines.render import render
from qar_sql.engines.session import coded, temp_name
from qar_sql.errors import DataError, ParameterError
from qar_sql.measures.audit import Options, audit_relation
from qar_sql.pushdown.record_keys import ROW_KEY, fetch_keys, key_warnings, patterns_from_words, record_order
from qar_sql.pushdown.scan import QIBatch, Ticker, assemble, code_type, combinations, default_batch_size
from qar_sql.results import AuditResult, Tabular, format_risk, json_key, json_number, shown_records
from qar_sql.stats import contributions as C
from qar_sql.user_text import html_text

if TYPE_CHECKING:
    from qar_sql.parameters.ranking import RecordsParams


@dataclass(frozen=True, repr=False)
class Contributions(Tabular):
    """Per-record scores in key order (index r = record position in key order)."""

    table_at = ("records",)

    audit: AuditResult
    key: tuple[str, ...]
    dt: np.ndarray
    u_plus: np.ndarray
    u_star: np.ndarray
    n_unique: np.ndarray
    pattern_of: np.ndarray  # pattern id of each record (0 = unique on no QI)
    patterns: C.PatternSet
    keys: dict[int, tuple] = field(default_factory=dict)  # r → key values (fetched records)
    warnings: tuple[str, ...] = ()

    @property
    def rows(self) -> int:
        return self.audit.rows

    def to_dict(self, params: RecordsParams | None = None) -> dict[str, Any]:
        """The JSON of ``qar records`` by a score: ``params``' ``by``, and its ``top`` records
        (every one with ``all_records``); None: by DT, the top 100."""
        by = "dt" if params is None else params.by
        top, every = shown_records(params)
        order = self.order(by)
        return {
            "risk": self.audit.risk,
            "rows": self.rows,
            "p": self.audit.p,
            "key": list(self.key),
            "by": by,
            "summary": self.summary(),
            "warnings": list(self.audit.warnings) + list(self.warnings),
            "records": [
                {
                    "key": json_key(self.key_of(r)),
                    "r": int(r),
                    "dt": json_number(float(self.dt[r])),
                    "u_plus": json_number(float(self.u_plus[r])),
                    "u_star": json_number(float(self.u_star[r])),
                    "n_unique": int(self.n_unique[r]),
                    "unique_on": [list(q) for q in self.unique_on(r)],
                }
                for r in (order if every else order[:top])
            ],
        }

    def summary_line(self) -> str:
        unique = int(np.count_nonzero(self.n_unique))
        return f"{self.audit.source}: {self.rows:,} records, {unique:,} unique on some QI; T = {format_risk(self.audit.risk)}"

    def _repr_html_(self) -> str:
        # The first rows only: building every record's row for a preview would cost O(L).
        return f"<div><p><b>Record contributions</b> {html_text(self.summary_line())}</p>{self._html_table()}</div>"

    def scores(self, by: str) -> np.ndarray:
        if by not in C.SCORES:
            raise ParameterError(f"--by {by!r} is not a record score; use one of {', '.join(C.SCORES)}")
        return getattr(self, by)

    def order(self, by: str = "dt") -> np.ndarray:
        """Record positions, riskiest first; ties by key order."""
        return C.rank(self.scores(by).astype(float))

    def unique_on(self, r: int) -> list[tuple[str, ...]]:
        qis = self.audit.qis
        return [qis[j].columns for j in self.patterns.qis[self.pattern_of[r]]]

    def key_of(self, r: int) -> tuple | None:
        return key_of(self.keys, self.key, r)

    def summary(self) -> dict:
        """Share of records unique on no QI; correlations between the scores."""
        return {
            "share_unique_on_no_qi": float(self.patterns.counts[0] / self.rows),
            "distinct_patterns": len(self.patterns),
            "correlations": {
                "dt_u_plus": C.correlations(self.dt, self.u_plus),
                "dt_u_star": C.correlations(self.dt, self.u_star),
                "u_plus_u_star": C.correlations(self.u_plus, self.u_star),
            },
        }


def key_of(keys: dict[int, tuple], key: tuple[str, ...], r: int) -> tuple | None:
    """Record r's key values: those fetched, its row number (1-based) when the key is the row."""
    return keys.get(int(r), (int(r) + 1,) if key == (ROW_KEY,) else None)


def key_columns(key: Sequence[str], keys: Sequence[tuple | None]) -> dict[str, list]:
    """Each key column's values of records whose key values are ``keys`` (None: not fetched)."""
    return {name: [k[i] if k is not None else None for k in keys] for i, name in enumerate(key)}


def fused_scan(
    db: Database,
    relation: Relation,
    columns,
    p,
    order_by,
    *,
    batch_size=None,
    jobs=1,
    progress=None,
    cardinalities=None,
):
    """One pass over every QI giving both the audit's class-size histograms and each record's
    uniqueness flags: (ScanResult, PatternSet). Each QI is grouped once; its classes are split
    into the histogram and the singletons' records inside the database."""
    d = db.dialect
    combos = combinations(len(columns), p)
    qis = [QIBatch(j, tuple(f"c{i}" for i in c)) for j, c in enumerate(combos)]
    size = batch_size or (32 if d.temp_tables else default_batch_size(d, len(qis), jobs))
    batches = [qis[k : k + size] for k in range(0, len(qis), size)]
    hist: dict[int, list] = defaultdict(list)
    tick = Ticker(progress, len(batches) + 1)
    types = [code_type(k) for k in cardinalities] if cardinalities else None
    with coded(db, relation, columns, order_by=order_by, code_types=types, what="rec") as codes:
        if codes.materialized:
            # DuckDB: codes once in a temp table; per batch the classes in a temp table, split into
            # histogram rows (returned) and singleton flags (kept in a temp table, summed at the end).
            r, w, bits = _split_in_temp_tables(db, codes.encoded, batches, hist, tick)
        else:
            statements = [
                render(
                    "groups_split.sql",
                    d,
                    encode_sql=codes.encode_sql,
                    encoded=codes.encoded,
                    groups_sql=render("groups.sql", d, qis=batch, encoded=codes.encoded),
                )
                for batch in batches
            ]
            tick()
            out_r, out_w, out_b = [], [], []
            for rows in db.query_many(statements, jobs=jobs, on_done=tick):
                for kind, a, b, c in rows:
                    if kind == 0:
                        hist[int(a)].append((int(b), int(c)))
                    else:
                        out_r.append(int(a))
                        out_w.append(int(b))
                        out_b.append(int(c))
            r, w, bits = (np.array(x, dtype=np.int64) for x in (out_r, out_w, out_b))
    scan_result = assemble(list(columns), p, combos, hist)
    return scan_result, patterns_from_words(scan_result.rows, r, w, bits)


def _split_in_temp_tables(db: Database, codes: str, batches, hist: dict[int, list], tick):
    """The temp-table path of :func:`fused_scan`: per batch the classes in a temp table, their
    sizes into ``hist``, the singletons' records kept; (r, w, bits) summed at the end."""
    d = db.dialect
    names = [temp_name("rec_groups"), temp_name("rec_flags")]
    groups, flags = (d.quote(n) for n in names)
    try:
        tick()
        for k, batch in enumerate(batches):
            db.query(f"create or replace temp table {groups} as\n" + render("groups.sql", d, qis=batch, encoded=codes))
            for qi, sz, n in db.query(f"select qi, size, count(*) from {groups} group by qi, size"):
                hist[int(qi)].append((int(sz), int(n)))
            verb = f"create temp table {flags} as" if k == 0 else f"insert into {flags}"
            db.query(f"{verb} select r, w, bit from {groups} where size = 1")
            tick()
        words = db.arrays(
            f"select r, w, cast(sum(bit) as {d.bigint}) as bits from {flags} group by r, w",
            {"r": np.int64, "w": np.int64, "bits": np.int64},
        )
        return words["r"], words["w"], words["bits"]
    finally:
        db.drop_temp_tables(names)


def compute(
    db: Database, relation: Relation, opts: Options, *, key=None, source=None, started=None
) -> tuple[Contributions, list[str]]:
    """Audit + patterns + DT on an open connection. Returns (contributions, order_by SQL)."""
    order_by, key_names = record_order(db, relation, key, relation.columns)
    captured = {}

    def scanner(cols, batch_size, jobs, progress, cardinalities):
        scan_result, captured["patterns"] = fused_scan(
            db, relation, cols, opts.p, order_by, batch_size=batch_size, jobs=jobs, progress=progress,
            cardinalities=cardinalities,
        )  # fmt: skip
        return scan_result

    result = audit_relation(db, relation, opts, started=started, source=source, scanner=scanner, bootstrap=0)
    warnings = key_warnings(key, result.columns) + relation.token_notes(result.columns)
    if result.fit is None:
        raise DataError(
            "the table's risk is undefined (no tail), so record contributions are too: "
            + (result.warnings[-1].rstrip(".") if result.warnings else "")
            + ("; also, " + warnings[0] if warnings else "")
        )
    assert result.risk is not None  # no tail raised above
    patterns = captured["patterns"]
    distinct = np.array([q.distinct for q in result.qis], dtype=np.int64)
    dt_p = C.dt_per_pattern(
        distinct, result.rows, patterns, result.risk, alpha=opts.alpha, pi_u=opts.pi_u, pwm=opts.pwm
    )
    sc = C.pattern_scores(result.theta, patterns)
    undefined = int(patterns.counts[np.isnan(dt_p)].sum())
    if undefined:
        warnings.append(
            f"removing any of {undefined} record(s) leaves no tail, so their DT is undefined "
            "(null in JSON, ranked last)"
        )
    of = patterns.of_record
    contrib = Contributions(
        audit=result, key=key_names, dt=dt_p[of], u_plus=sc["u_plus"][of], u_star=sc["u_star"][of],
        n_unique=sc["n_unique"][of], pattern_of=of, patterns=patterns, warnings=tuple(warnings),
    )  # fmt: skip
    return contrib, order_by


def contributions_of(
    db: Database,
    relation: Relation,
    opts: Options,
    *,
    key: Sequence[str] | None = None,
    top: int | None = 100,
    by: str = "dt",
    all_keys: bool = False,
    source: str | None = None,
    started: float | None = None,
) -> Contributions:
    """Exact DT, U+, U*, n_unique for every record (:func:`compute`), with the key values of
    the ``top`` records by ``by`` (of every record with ``all_keys``)."""
    contrib, _ = compute(db, relation, opts, key=key, source=source, started=started)
    if contrib.key != (ROW_KEY,):
        wanted = None if all_keys else contrib.order(by)[: top or 0]
        contrib.keys.update(fetch_keys(db, relation, contrib.key, None if wanted is None else wanted.tolist()))
    return contrib
