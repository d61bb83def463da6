"""``qar risk``: the measures sdcMicro and ARX users report, for every quasi-identifier, from
counts pushed down to the database.

For each QI (every p-subset of the key columns; by default p = all of them, the one key set
sdcMicro and ARX look at) the database groups the coded records into *cells* (distinct value
combinations) and returns, per cell, its records n, the records it matches fk and their summed
sampling weights Fk, and — for each ``--sensitive`` column — the matched records per sensitive
value: one pushed-down count of (QI class × sensitive value). With ``missing = "value"`` a cell
matches itself (NULL is a value of its own, as SQL's GROUP BY); with ``missing = "wildcard"``
(sdcMicro's convention) a NULL matches any value, so a cell matches every cell agreeing with it
where both are non-NULL: classes overlap and Σ fk exceeds the row count. The formulas are in
:mod:`qar_sql.stats` (:mod:`~qar_sql.stats.individual_risk`, :mod:`~qar_sql.stats.population`,
:mod:`~qar_sql.stats.diversity`, :mod:`~qar_sql.stats.suda`); this module runs the statements
and feeds them.

The per-record file (``per_record``) holds, for the whole key set and every record in source
order (file order, or ``--key`` order for a table): fk, Fk, risk, l_distinct, l_entropy, suda,
dis_suda. SUDA needs each record's uniqueness on every column set up to ``suda_max_size``
(:func:`suda_patterns`), as ``qar records --by suda`` does.
"""

from __future__ import annotations

import difflib
import itertools
import math
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from qar_sql.engines.render import render
from qar_sql.engines.session import Session
from qar_sql.engines.source import Database, Relation, SourceLike, column_names, open_source, select_columns
from qar_sql.errors import ColumnError, ParameterError, UsageError
from qar_sql.extras import require
from qar_sql.measures.audit import check_groupable, provenance
from qar_sql.parameters.measures import RiskParams
from qar_sql.pushdown import scan
from qar_sql.pushdown.cells import (
    CellQI,
    Encoded,
    Sensitive,
    cell_statements,
    check_weight,
    encode,
    fetch_cells,
    null_pairs,
    null_patterns,
    qi_batches,
    record_cells,
    restrict_pattern,
    rows_and_population,
    sensitive_totals,
)
from qar_sql.pushdown.record_keys import (
    ROW_KEY,
    check_key_names,
    fetch_keys,
    key_warnings,
    patterns_from_words,
    record_order,
)
from qar_sql.pushdown.scan import Progress, Ticker, combinations
from qar_sql.results import Tabular, pick, shown_records
from qar_sql.rules import DEFAULT_JOBS
from qar_sql.stats import diversity, individual_risk
from qar_sql.stats import population as popmodels
from qar_sql.stats import suda as sudastats
from qar_sql.stats.individual_risk import AttackerRisk
from qar_sql.stats.population import PopulationUniqueness
from qar_sql.user_files import check_writable
from qar_sql.user_text import csv_cell
from qar_sql.version import __version__

K_LEVELS = (2, 3, 5)
"""The k of the ``violations`` counts: records in classes smaller than k."""

SUDA_MAX_SETS = 5000
"""Column sets SUDA scans at most by default: all sizes while Σ C(M, k) stays below this."""

PER_RECORD_COLUMNS = ("fk", "Fk", "risk", "l_distinct", "l_entropy", "suda", "dis_suda", "l_recursive", "t_closeness")
"""The per-record file's columns after the record key: the issue's seven, then recursive
(2, l)-diversity and the t-closeness distance of the record's class."""

_ORDERED_TYPE = re.compile(r"int|dec|num|double|real|float|date|time|money|serial", re.IGNORECASE)

#: The most key columns ``--missing wildcard`` takes: its NULL patterns are bit masks in a BIGINT.
WILDCARD_MAX_COLUMNS = 62


@dataclass(frozen=True)
class LDiversity:
    """l-diversity of one QI: the smallest value over its classes (over the sensitive columns
    too), and the records in classes whose distinct l is below the threshold."""

    distinct: float | None
    entropy: float | None
    recursive_c2: float | None
    records_below: int
    threshold: int
    by_column: dict = field(default_factory=dict)  # {sensitive column: {distinct, entropy, recursive_c2}}
    # Classes left out because a sensitive column has no value in them (as sdcMicro leaves them
    # out): they would have l = 0 and pull the table's figure to 0.
    classes_all_missing: int = 0


@dataclass(frozen=True)
class QIRisk:
    """The classic measures of one quasi-identifier."""

    index: int
    columns: tuple[str, ...]
    classes: int  # cells: distinct value combinations (NULL one value)
    sample_uniques: int  # records matching no other record (fk = 1)
    violations: dict  # {"2": records with fk < 2, "3": …, "5": …}
    fk_sum: int  # Σ fk over the classes: the row count, more when classes overlap (wildcard)
    expected_reidentifications: float
    global_risk: float | None
    prosecutor: AttackerRisk
    journalist: AttackerRisk
    marketer: float | None
    population_uniqueness: PopulationUniqueness | None
    l_diversity: LDiversity | None
    t_closeness: float | None  # largest EMD over classes (over sensitive columns)
    t_closeness_records_above: int | None  # records in classes above the t threshold
    t_closeness_by_column: dict = field(default_factory=dict)
    individual_risk: AttackerRisk | None = None  # sdcMicro's record risk: highest, mean, share above threshold
    fk_histogram: dict = field(default_factory=dict)  # {"k": records with fk = k}, k ascending


# The fields of a QIRisk that are those of stats.individual_risk.ReidentificationRisks as they stand.
_REIDENTIFICATION_FIELDS = ("expected_reidentifications", "global_risk", "prosecutor", "journalist", "marketer")


@dataclass(frozen=True, repr=False)
class RiskResult(Tabular):
    """Everything ``qar risk`` reports. ``to_dict`` gives the JSON contract."""

    source: str
    table: str | None
    engine: str
    rows: int
    missing: str
    columns: tuple[str, ...]
    p: int
    weight: str | None
    sensitive: tuple[str, ...]
    ordered: tuple[str, ...]  # sensitive columns measured with the ordered distance
    population: int | None
    sampling_fraction: float | None
    risk_threshold: float
    l_threshold: int
    t_threshold: float
    qis: tuple[QIRisk, ...]
    per_record: str | None
    warnings: tuple[str, ...]
    seconds: float
    column_notes: tuple[str, ...] = ()  # CSV columns read as numbers or dates (see --all-text)
    inferred_columns: dict = field(default_factory=dict)  # {column: type DuckDB inferred} of those columns

    def to_dict(self) -> dict:
        """The documented JSON object of ``qar risk`` (docs/risk-measures.md, "JSON")."""
        return {"qar_sql_version": __version__, **_clean(asdict(self))}

    def summary_line(self) -> str:
        top = self.riskiest(1)
        worst = f"; most re-identifications: {', '.join(top[0].columns)}" if top else ""
        return f"{self.source}: {self.rows:,} rows, {len(self.qis):,} QIs of {self.p} of {len(self.columns)} columns{worst}"

    def riskiest(self, n: int = 10) -> list[QIRisk]:
        """QIs by expected re-identifications, largest first (ties: QI order)."""
        return [self.qis[i] for i in self.table_order()[:n]]

    def table_order(self) -> list[int]:
        """The QIs' positions as :meth:`riskiest` lists them."""
        return sorted(range(len(self.qis)), key=lambda i: (-self.qis[i].expected_reidentifications, self.qis[i].index))


def _clean(x):
    """NaN and ±inf have no JSON form: null."""
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(x) else None
    if isinstance(x, np.integer):
        return int(x)
    return x


# --- validation ---------------------------------------------------------------------------------


def _roles(weight: str | None, sensitive: Sequence[str]) -> list[tuple[str, str]]:
    return [(s, "--sensitive") for s in sensitive] + ([(weight, "--weight")] if weight else [])


def check_exist(columns: Sequence[str], weight: str | None, sensitive: Sequence[str]) -> None:
    """Sensitive and weight columns are among ``columns`` (checked before they are left out of
    the default key set, so the message names the option the user typed)."""
    for name, option in _roles(weight, sensitive):
        if name not in columns:
            close = difflib.get_close_matches(name, columns, n=1, cutoff=0.5)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ColumnError(f"{option} column {name!r} not found{hint}")


def check_roles(qi: Sequence[str], weight: str | None, sensitive: Sequence[str], *, excluded: bool = False) -> None:
    """Sensitive and weight columns (that exist: :func:`check_exist`) are not key columns, nor
    each other, nor listed twice. ``excluded``: the key columns are every column but
    ``--exclude`` (qar report's audit), so that is the fix."""
    for name, option in _roles(weight, sensitive):
        if name in qi:
            how = f"add --exclude {name}" if excluded else "leave it out of --columns"
            raise ColumnError(
                f"{option} column {name!r} is also a quasi-identifier column; a column cannot be both — {how}"
            )
    if weight and weight in sensitive:
        raise ColumnError(f"column {weight!r} is both the weight and a sensitive column; name it once")
    dups = sorted({s for s in sensitive if list(sensitive).count(s) > 1})
    if dups:
        raise ColumnError(f"sensitive column {dups[0]!r} is listed twice in --sensitive; list it once")


# --- per-QI measures ----------------------------------------------------------------------------


@dataclass
class _Cells:
    """One QI's cells, indexed by cell number."""

    n: np.ndarray  # own records
    fk: np.ndarray  # matched records
    Fk: np.ndarray  # matched weight
    #: The per-record file's l_* (min over sensitive columns) and t_closeness (max over them;
    #: NaN: only NULL sensitive values) of each class; empty without sensitive columns.
    diversity: dict[str, np.ndarray] = field(default_factory=dict)


def _counts(data: dict[str, np.ndarray], mine: np.ndarray) -> tuple[np.ndarray, ...]:
    """(n, fk, Fk) by cell number from the rows ``mine`` of a ``risk_cells.sql`` result."""
    k0 = mine & (data["kind"] == 0)
    order = np.argsort(data["cell"][k0], kind="stable")
    return tuple(data[c][k0][order].astype(t) for c, t in (("x", np.int64), ("y", np.int64), ("z", np.float64)))


def _measure(
    spec: CellQI,
    columns: Sequence[str],
    data: dict[str, np.ndarray],
    opts: RiskParams,
    *,
    sensitive: Sequence[Sensitive],
    totals: dict[int, np.ndarray],
    population: int | None,
) -> tuple[QIRisk, _Cells]:
    """One QI's measures from its rows of the batch's ``data``; ``population``: N, or None."""
    mine = data["qi"] == spec.index
    n, fk, Fk = _counts(data, mine)
    cells = _Cells(n, fk, Fk)
    rr = individual_risk.reidentification_risks(fk, Fk if opts.weight else None, n, threshold=opts.risk_threshold)
    pu = None
    if population is not None and n.size:
        sizes = np.unique(fk)
        counts = np.array([n[fk == s].sum() / s for s in sizes])
        pu = popmodels.population_uniqueness(sizes, counts, population)
    risk = QIRisk(
        index=spec.index,
        columns=tuple(columns[i] for i in spec.cols),
        classes=int(n.size),
        sample_uniques=int(n[fk == 1].sum()),
        violations=individual_risk.violations(fk, n, K_LEVELS),
        fk_sum=int(fk.sum()),
        **pick(rr, _REIDENTIFICATION_FIELDS),
        population_uniqueness=pu,
        **_sensitive_fields(data, mine, cells, opts, sensitive, totals),
        individual_risk=rr.individual,
        fk_histogram={str(int(k)): int(n[fk == k].sum()) for k in np.unique(fk)},
    )
    return risk, cells


#: A class's l-diversity measures: their names in the JSON and in the per-record file.
_L_MEASURES = {"distinct": "l_distinct", "entropy": "l_entropy", "recursive_c2": "l_recursive"}


def _sensitive_fields(
    data: dict[str, np.ndarray],
    mine: np.ndarray,
    cells: _Cells,
    opts: RiskParams,
    sensitive: Sequence[Sensitive],
    totals: dict[int, np.ndarray],
) -> dict[str, Any]:
    """A QIRisk's l-diversity and t-closeness fields (none without sensitive columns); each
    class's values go into ``cells`` for the per-record file."""
    if not sensitive:
        return {
            "l_diversity": None,
            "t_closeness": None,
            "t_closeness_records_above": None,
            "t_closeness_by_column": {},
        }
    n, n_cells = cells.n, cells.n.size
    k1 = mine & (data["kind"] == 1)
    # Per class as sdcMicro writes them (0 for a class without values), and the minimums of the
    # summaries, which leave such classes out.
    per_class = {k: np.full(n_cells, np.inf) for k in _L_MEASURES}
    lows = {k: np.full(n_cells, np.inf) for k in _L_MEASURES}
    tmax = np.full(n_cells, -np.inf)
    by, t_by = {}, {}
    empty_any = np.zeros(n_cells, dtype=bool)
    for s in sensitive:
        sel = k1 & (data["x"] == s.index)
        cls, val, cnt = data["cell"][sel].astype(np.int64), data["y"][sel].astype(np.int64), data["z"][sel]
        ls = {
            "distinct": diversity.distinct_l(cls, val, cnt, n_cells),
            "entropy": diversity.entropy_l(cls, val, cnt, n_cells),
            "recursive_c2": diversity.recursive_l(cls, val, cnt, 2.0, n_cells),
        }
        # A class with no value of the column has no l (sdcMicro leaves it out): NaN, which
        # the minimums skip, rather than 0.
        empty = diversity.all_missing(cls, val, cnt, n_cells)
        empty_any |= empty
        for k, a in ls.items():
            per_class[k] = np.minimum(per_class[k], a)
            ls[k] = np.where(empty, np.nan, a)
            lows[k] = np.fmin(lows[k], ls[k])
        by[s.name] = {**{k: _extreme(a, np.min) for k, a in ls.items()}, "classes_all_missing": int(empty.sum())}
        emd = diversity.t_closeness_ordered if s.ordered else diversity.t_closeness_equal
        t_ = emd(cls, val, cnt, n_cells, overall=totals[s.index])
        t_by[s.name] = _extreme(t_, np.max)
        tmax = np.fmax(tmax, np.where(np.isnan(t_), -np.inf, t_))
    t_cell = np.where(np.isinf(tmax), np.nan, tmax)
    cells.diversity = {**{_L_MEASURES[k]: a for k, a in per_class.items()}, "t_closeness": t_cell}
    low = {k: _extreme(a, np.min) for k, a in lows.items()}
    return {
        "l_diversity": LDiversity(
            low["distinct"],
            low["entropy"],
            low["recursive_c2"],
            int(n[lows["distinct"] < opts.l_threshold].sum()),
            opts.l_threshold,
            by,
            int(empty_any.sum()),
        ),
        "t_closeness": _extreme(t_cell, np.max),
        "t_closeness_records_above": int(n[tmax > opts.t_threshold].sum()),
        "t_closeness_by_column": t_by,
    }


def _extreme(a: np.ndarray, of) -> float | None:
    """``of`` (np.min, np.max) over the finite values of ``a``; None when there are none."""
    a = a[np.isfinite(a)]
    return float(of(a)) if a.size else None


# --- the command --------------------------------------------------------------------------------


def risk_relation(session: Session, opts: RiskParams, progress: Progress | None = None) -> RiskResult:
    """The classic measures of the session's relation (``qar risk``, :func:`qar_sql.risk`)."""
    started = time.perf_counter()
    db, relation, source = session.db, session.relation, session.label
    columns, p, weight, missing = opts.columns, opts.p, opts.weight, opts.missing
    per_record, key = opts.per_record, opts.key
    sensitive = column_names(opts.sensitive, "--sensitive") or ()
    ordered = column_names(opts.ordered, "--ordered") or ()
    check_exist(relation.columns, weight, sensitive)
    if key:  # checked without --per-record too, so a misspelt key is not silently accepted
        check_key_names(relation, key)
    for name in ordered:
        if name not in sensitive:
            raise ParameterError(
                f"--ordered column {name!r} is not a --sensitive column; name it in --sensitive too "
                "(--ordered only says which sensitive columns have ordered values)"
            )
    excluded = list(opts.exclude or ()) + ([] if columns else [c for c in (weight, *sensitive) if c])
    qi = select_columns(relation.columns, columns, excluded)
    if not qi:
        raise ParameterError("no quasi-identifier columns are left; name them with --columns")
    check_roles(qi, weight, sensitive)
    n_cols = len(qi)
    if missing == "wildcard" and n_cols > WILDCARD_MAX_COLUMNS:
        # Each record's NULL pattern is a bit mask over the key columns, summed in SQL as a BIGINT.
        raise ParameterError(
            f"--missing wildcard reads at most {WILDCARD_MAX_COLUMNS} key columns (its NULL pattern is a "
            f"64-bit mask) and {n_cols} are given; name fewer with --columns, or use --missing value"
        )
    p = n_cols if p is None else p
    combos = combinations(n_cols, p)
    large = scan.announce(n_cols, p, len(combos))
    check_groupable(db, relation, [*qi, *sensitive])
    types = db.column_types(relation.sql, [*sensitive, *([weight] if weight else [])])
    if weight:
        check_weight(db, relation, weight, types[-1])
    rows, n_pop = rows_and_population(db, relation, opts.population, opts.sampling_fraction)
    warnings: list[str] = key_warnings(key, qi)
    order_by = None
    if per_record is not None:
        order_by, _ = record_order(db, relation, key, qi)
    sens = [
        Sensitive(i, s, f"c{n_cols + i}", s in ordered or bool(_ORDERED_TYPE.search(t)))
        for i, (s, t) in enumerate(zip(sensitive, types))
    ]
    enc = encode(db, relation, [*qi, *sensitive], weight, order_by)
    try:
        full_patterns = null_patterns(db, enc, n_cols) if missing == "wildcard" else []
        specs = [_cell_qi(j, c, full_patterns) for j, c in enumerate(combos)]
        totals = sensitive_totals(db, enc, sens)
        key_set = tuple(range(n_cols))
        want_cells = per_record is not None
        extra = (
            []
            if any(s.cols == key_set for s in specs) or not want_cells
            else [_cell_qi(len(specs), key_set, full_patterns)]
        )
        batches = qi_batches(db, specs + extra, opts.jobs)
        tick = Ticker(progress, len(batches) * (2 if large else 1) + (2 if want_cells else 0))
        # A large scan ticks as each statement is rendered (scan.LARGE_QIS: that took minutes).
        statements = cell_statements(db, batches, enc, sens, bool(weight), rendered=tick if large else None)

        results: list[QIRisk] = []
        key_cells = None
        for batch, sql in zip(batches, statements):
            data = fetch_cells(db, sql)
            for spec in batch:
                qrisk, cells = _measure(spec, qi, data, opts, sensitive=sens, totals=totals, population=n_pop)
                if spec.cols == key_set:
                    key_cells = (spec, cells)
                if spec.index < len(specs):
                    results.append(qrisk)
            tick()
        if want_cells and key_cells is not None:
            path = _write_per_record(
                db, relation, enc, key_cells, qi, opts, full_patterns=full_patterns, rows=rows,
                dis_fraction=_dis_fraction(rows, n_pop), warnings=warnings, tick=tick,
            )  # fmt: skip
        else:
            path = None
    finally:
        if enc.temp:
            db.drop_temp_tables([enc.temp])
    left_out = max((q.l_diversity.classes_all_missing for q in results if q.l_diversity), default=0)
    if left_out:
        warnings.append(
            f"l-diversity leaves out the classes in which a sensitive column has no value (up to {left_out:,} "
            "per QI; l_diversity.classes_all_missing), as sdcMicro does: their l would be 0"
        )
    if missing == "wildcard" and any(q.fk_sum > rows for q in results):
        warnings.append(
            "with --missing wildcard a record with a NULL matches records of several classes, so the "
            "classes overlap and the sum of fk exceeds the number of rows"
        )
    return RiskResult(
        **provenance(db, relation, source),
        rows=rows,
        missing=missing,
        columns=tuple(qi),
        p=p,
        weight=weight,
        sensitive=sensitive,
        ordered=tuple(x.name for x in sens if x.ordered),
        population=n_pop,
        sampling_fraction=(rows / n_pop) if n_pop else None,
        **pick(opts, ("risk_threshold", "l_threshold", "t_threshold")),
        qis=tuple(results),
        per_record=path,
        warnings=tuple(warnings),
        seconds=time.perf_counter() - started,
        column_notes=tuple(relation.inferred_notes([*qi, *sensitive]) + relation.token_notes([*qi, *sensitive])),
        inferred_columns={c: t for c, t in relation.inferred if c in {*qi, *sensitive}},
    )


def _cell_qi(index: int, cols: tuple[int, ...], full_patterns: Sequence[int]) -> CellQI:
    """The QI of the key columns ``cols`` (coded ``c<i>``) as ``risk_cells.sql`` groups it."""
    return CellQI(index, cols, tuple(f"c{i}" for i in cols), null_pairs(cols, full_patterns))


def _dis_fraction(rows: int, population: int | None) -> float:
    """DIS-SUDA's sampling fraction: n/N when a population is given, else sdcMicro's 0.01."""
    return rows / population if population else 0.01


# --- SUDA ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SudaResult:
    """SUDA of every record (in source order) on the key columns."""

    columns: tuple[str, ...]
    max_size: int
    missing: str
    dis_fraction: float
    msu_counts: np.ndarray  # records × max_size: MSUs of each size
    score: np.ndarray
    dis_score: np.ndarray
    uniques: int  # records unique on all the key columns (DIS-SUDA's U)
    pair_records: int  # records in classes of two on all the key columns (P)


@dataclass(frozen=True, repr=False)
class SudaRecords(Tabular):
    """What :func:`suda` returns (``qar records --by suda``): SUDA and DIS-SUDA of every record
    (``suda``, in source order), the ``key`` names and the key values fetched (the 1,000 highest
    scores, or every record with ``all_keys``)."""

    table_at = ("records",)

    suda: SudaResult
    key: tuple[str, ...]
    keys: dict[int, tuple] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        return int(self.suda.score.size)

    def order(self) -> np.ndarray:
        """Record positions by SUDA score, highest first; ties by key order."""
        return suda_order(self.suda)

    def to_dict(self, params: Any = None) -> dict[str, Any]:
        """The JSON of ``qar records --by suda``: the ``params.top`` records by SUDA (every one
        with ``params.all_records``; None: the top 100)."""
        s, keys = self.suda, self.keys
        top, every = shown_records(params)
        order = self.order()
        return {
            "qar_sql_version": __version__,
            "columns": list(s.columns),
            **pick(s, ("max_size", "missing", "dis_fraction", "uniques", "pair_records")),
            "records_with_msu": int((s.score > 0).sum()),
            "records": [
                {
                    "key": list(keys[r]),
                    "suda": float(s.score[r]),
                    "dis_suda": float(s.dis_score[r]),
                    "msus_by_size": [int(x) for x in s.msu_counts[r]],
                }
                for r in (order if every else order[:top])
            ],
            "key": list(self.key),
        }

    def summary_line(self) -> str:
        risky = int(np.count_nonzero(self.suda.score))
        return (
            f"{self.rows:,} records, {risky:,} with a minimal sample unique of up to {self.suda.max_size} of "
            f"{len(self.suda.columns)} key columns; {self.suda.uniques:,} unique on all"
        )


def suda_size(requested: int | None, n_columns: int, option: str) -> int:
    """The largest column set SUDA scans: ``requested`` (given as ``option``), checked; by default
    the largest k with Σ_{i≤k} C(M, i) ≤ :data:`SUDA_MAX_SETS` (all M when they fit)."""
    sets = itertools.accumulate(math.comb(n_columns, i) for i in range(1, n_columns + 1))
    size = max(1, sum(total <= SUDA_MAX_SETS for total in sets)) if requested is None else requested
    if not 1 <= size <= n_columns:
        raise ParameterError(f"{option} {size} must be between 1 and the number of key columns ({n_columns})")
    return size


def suda_patterns(
    db: Database,
    enc: Encoded,
    n_columns: int,
    rows: int,
    max_size: int,
    missing: str,
    full_patterns: Sequence[int],
    *,
    jobs: int = 1,
):
    """(set masks, PatternSet): per record, the column sets (bit masks) of size ≤ ``max_size``
    on which it is unique with no NULL, from one pushed-down pass per batch of sets."""
    sets = [c for k in range(1, max_size + 1) for c in itertools.combinations(range(n_columns), k)]
    masks = [sum(1 << i for i in c) for c in sets]
    specs = []
    for j, c in enumerate(sets):
        patterns = []
        if missing == "wildcard":
            for pb in sorted({restrict_pattern(p, c) for p in full_patterns} - {0}):
                patterns.append({"pat": pb, "on": [f"c{col}" for i, col in enumerate(c) if not pb >> i & 1]})
        specs.append(
            {"index": j, "codes": [f"c{i}" for i in c], "word": j // 62, "bit": 1 << (j % 62), "patterns": patterns}
        )
    size = 64 if db.dialect.temp_tables else max(1, min(256, math.ceil(len(specs) / max(jobs, 1))))
    statements = [
        render("suda_flags.sql", db.dialect, qis=specs[i : i + size], encode_sql=enc.encode_sql, encoded=enc.name)
        for i in range(0, len(specs), size)
    ]
    found = np.array([row for out in db.query_many(statements, jobs=jobs) for row in out], dtype=np.int64)
    # (r, w) rows of different statements hold distinct bits: adding them is the bitwise or.
    return masks, patterns_from_words(rows, *found.reshape(-1, 3).T)


def _suda(db, enc, n_columns, rows, max_size, missing, full_patterns, key_fk, *, dis_fraction, columns, jobs=1):
    masks, patterns = suda_patterns(db, enc, n_columns, rows, max_size, missing, full_patterns, jobs=jobs)
    per_pattern = [[masks[j] for j in qis] for qis in patterns.qis]
    counts = sudastats.msu_counts(per_pattern, max_size)
    scores = sudastats.suda_scores(counts, n_columns)
    record_scores = scores[patterns.of_record]
    uniques, pairs = int((key_fk == 1).sum()), int((key_fk == 2).sum())
    values, inverse, mult = np.unique(record_scores, return_inverse=True, return_counts=True)
    dis_values = sudastats.dis_suda(
        values, mult, uniques=uniques, pair_records=pairs, n_columns=n_columns, dis_fraction=dis_fraction
    )
    return SudaResult(
        columns=tuple(columns), max_size=max_size, missing=missing, dis_fraction=dis_fraction,
        msu_counts=counts[patterns.of_record], score=record_scores, dis_score=dis_values[inverse.ravel()],
        uniques=uniques, pair_records=pairs,
    )  # fmt: skip


def suda_order(result: SudaResult) -> np.ndarray:
    """Record positions by SUDA score, highest first; ties by key (source) order."""
    return np.lexsort((np.arange(result.score.size), -result.score))


def suda(
    source: SourceLike = None,
    *,
    table: str | None = None,
    columns: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    key: Sequence[str] | None = None,
    max_size: int | None = None,
    missing: str = "value",
    sampling_fraction: float | None = None,
    population: int | None = None,
    delimiter: str | None = None,
    all_text: bool = False,
    all_keys: bool = False,
    jobs: int = DEFAULT_JOBS,
    null_tokens: Sequence[str] = (),
) -> SudaRecords:
    """SUDA and DIS-SUDA of every record on the key columns (``qar records --by suda``): the
    result in source order, the key names and {position: key values} of the 1,000 records
    with the highest scores, ties in key order — of every record with ``all_keys``."""
    RiskParams(missing=missing, sampling_fraction=sampling_fraction, population=population)  # checks them
    db, relation = open_source(source, table=table, delimiter=delimiter, all_text=all_text, null_tokens=null_tokens)
    with db:
        qi = select_columns(relation.columns, columns, exclude)
        if not qi:
            raise ParameterError("no key columns are left; name them with --columns")
        size = suda_size(max_size, len(qi), "--max-size")
        order_by, key_names = record_order(db, relation, key, qi)
        rows, n_pop = rows_and_population(db, relation, population, sampling_fraction)
        enc = encode(db, relation, qi, None, order_by)
        try:
            full = null_patterns(db, enc, len(qi)) if missing == "wildcard" else []
            spec = _cell_qi(0, tuple(range(len(qi))), full)
            data = fetch_cells(db, cell_statements(db, [[spec]], enc, [], False)[0])
            fk = _counts(data, data["qi"] == 0)[1][record_cells(db, enc, spec.codes, rows)]
            result = _suda(
                db, enc, len(qi), rows, size, missing, full, fk, dis_fraction=_dis_fraction(rows, n_pop), columns=qi,
                jobs=jobs,
            )  # fmt: skip
            wanted = np.arange(rows) if all_keys else suda_order(result)[: min(rows, 1000)]
            if key_names == (ROW_KEY,):
                keys = {int(r): (int(r) + 1,) for r in wanted}
            else:
                keys = fetch_keys(db, relation, key_names, None if all_keys else [int(r) for r in wanted])
        finally:
            if enc.temp:
                db.drop_temp_tables([enc.temp])
    return SudaRecords(result, key_names, keys)


def output_kind(path: str) -> str:
    """The per-record file's format, from its suffix; checked with the path before any work
    (the file is written after the measures): a folder that does not exist or cannot take the
    file, or Parquet without pyarrow, is refused at once."""
    lower = path.lower()
    if lower.endswith(".csv"):
        kind = "csv"
    elif lower.endswith((".parquet", ".pq")):
        require(
            "arrow", "writing Parquet", alternative=f", or write CSV: --per-record {path.rsplit('.', 1)[0] + '.csv'!r}"
        )
        kind = "parquet"
    else:
        raise UsageError(f"--per-record {path!r} must end in .csv or .parquet, which says the format to write")
    check_writable(path, "--per-record")
    return kind


def _write_per_record(
    db, relation, enc, key_cells, qi, opts: RiskParams, *, full_patterns, rows, dis_fraction, warnings, tick
) -> str:
    """Write ``opts.per_record``: every record's fk, risk, l-diversity, t-closeness and SUDA."""
    per_record, key, missing, suda_max_size = str(opts.per_record), opts.key, opts.missing, opts.suda_max_size
    output_kind(per_record)
    spec, cells = key_cells
    n_columns = len(qi)
    cell = record_cells(db, enc, spec.codes, rows)
    tick()
    fk, Fk = cells.fk[cell], cells.Fk[cell]
    risk_cell = individual_risk.individual_risk(cells.fk, cells.Fk if opts.weight else None)
    max_size = suda_size(suda_max_size, n_columns, "--suda-max-size")
    if suda_max_size is None and max_size < n_columns:
        warnings.append(
            f"SUDA looked for minimal sample uniques of up to {max_size} columns (of {n_columns}); "
            f"raise it with --suda-max-size {n_columns} (more column sets to scan)"
        )
    s = _suda(db, enc, n_columns, rows, max_size, missing, full_patterns, fk, dis_fraction=dis_fraction, columns=qi)
    tick()
    values = {"fk": fk, "Fk": Fk, "risk": risk_cell[cell], "suda": s.score, "dis_suda": s.dis_score}
    values |= {name: a[cell] for name, a in cells.diversity.items()}  # (none without --sensitive: NaN)
    nan = np.full(rows, np.nan)
    data = record_key_columns(db, relation, key, rows) | {name: values.get(name, nan) for name in PER_RECORD_COLUMNS}
    write_table(data, per_record)
    return per_record


def record_key_columns(db: Database, relation: Relation, key: Sequence[str] | None, rows: int) -> dict[str, np.ndarray]:
    """The leading columns of a per-record file: ``row`` (1-based position in the file) for files,
    the key columns for tables (in key order)."""
    if not key:
        return {ROW_KEY: np.arange(1, rows + 1)}
    keys = fetch_keys(db, relation, key, None)
    out = {}
    for i, k in enumerate(key):
        values = np.array([keys[r][i] for r in range(rows)])
        out[k] = values if values.dtype.kind in "iufb" else values.astype(str)
    return out


def write_table(data: Mapping[str, Any], path: str, option: str = "--per-record") -> None:
    """Write equal-length columns (arrays or lists) to a file: every per-record file (``qar risk --per-record``,
    ``qar records --output``). CSV by the stdlib: integers as integers, floats at full precision
    (their repr), NaN empty, a text cell a spreadsheet would run as a formula guarded
    (:func:`~qar_sql.user_text.csv_cell`). Parquet (``.parquet``, ``.pq``) by an in-memory
    DuckDB, or by pyarrow (the ``arrow`` extra) where two names differ only in case, as ``fk``
    and ``Fk``: DuckDB's identifiers ignore case, so it would rename one."""
    names = list(data)
    try:
        if not path.lower().endswith((".parquet", ".pq")):
            import csv

            with open(path, "w", newline="", encoding="utf-8") as fh:
                writer = csv.writer(fh)
                writer.writerow([csv_cell(n) for n in names])
                writer.writerows(zip(*(_csv_column(np.asarray(data[n])) for n in names)))
        elif len({n.lower() for n in names}) == len(names):
            import duckdb

            with duckdb.connect() as con:
                con.register("qar_scores", {n: np.asarray(data[n]) for n in names})
                con.execute(
                    f"copy (select * from qar_scores) to '{path.replace(chr(39), chr(39) * 2)}' (format parquet)"
                )
        else:
            require(
                "arrow",
                "writing Parquet",
                alternative=f", or write CSV: {option} {str(Path(path).with_suffix('.csv'))!r}",
            )
            import pyarrow as pa
            import pyarrow.parquet as pq

            arrays = [pa.array(np.asarray(data[n]), from_pandas=True) for n in names]
            pq.write_table(pa.Table.from_arrays(arrays, names=names), path)
    except OSError as exc:
        raise UsageError(f"cannot write {option} {path!r}: {exc.strerror or exc}; check the folder exists") from exc


def _csv_column(col: np.ndarray) -> list:
    """Cells as text: integers as integers, floats in full (repr) precision, NaN empty, text
    guarded against formulas."""
    if col.dtype.kind in "iub":
        return col.astype(np.int64).tolist()
    if col.dtype.kind == "f":
        return ["" if math.isnan(v) else repr(v) for v in col.tolist()]
    return [csv_cell(v) if isinstance(v, str) else v for v in col.tolist()]
