"""What would a treatment buy? Pastore et al.'s Table 1 for each treatment and combination:
singletons, %S, modified rows (MR), distinct values (DV) on a quasi-identifier, and the QaR
risk T̂ before and after (METHOD.md §6).

Every figure is a query over the source: the treated release is a SELECT (see
:mod:`qar_sql.treat.treatments`), counted with one GROUP BY per scenario, and audited with
:func:`qar_sql.measures.audit.audit_relation` through a DuckDB session temp table or, on read-only
server connections, a CTE put in front of each audit statement. Nothing is copied or written.

The command (its parameters, ``run`` and :func:`qar_sql.whatif`) is :mod:`qar_sql.commands.whatif`;
its rendering :mod:`qar_sql.output.render_whatif`. (The treated releases are tables of SELECTs,
not coded columns, so they keep their own temp tables rather than ``Session.coded``.)
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from qar_sql.engines.dialects import get_dialect, sql_comment
from qar_sql.engines.render import render
from qar_sql.engines.session import Session, temp_name
from qar_sql.engines.source import Database, Relation, file_relation_sql, listed_once, open_source, split_table
from qar_sql.errors import ColumnError, DatabaseError, DataError, UsageError
from qar_sql.measures.audit import Options, audit_relation, audited_columns
from qar_sql.parameters.treat import WhatIfParams
from qar_sql.pushdown.scan import Progress, Ticker
from qar_sql.results import SingletonShare, Tabular, format_risk, json_number, pick
from qar_sql.rules import check_null_tokens
from qar_sql.treat.infoloss import InfoLoss, LossColumn, information_loss, loss_dict
from qar_sql.treat.prng import Arith
from qar_sql.treat.treatments import Binder, Plan, load, treated_sql
from qar_sql.treat.treatments import check_names as check_plan_names

ORIGINAL = "original"


@dataclass(frozen=True)
class Scenario(SingletonShare):
    """One row of the table: the release after ``treatments`` (none: the original)."""

    name: str
    treatments: tuple[str, ...]
    rows: int
    singletons: int
    distinct: int
    min_class_size: int
    modified_rows: int
    risk: float | None  # T̂(p, α) of the release; None when not computed or no tail
    risk_note: str | None = None
    #: Singletons whose released QID values are all the original ones.
    true_singletons: int = 0
    #: PRAM's P(X = b | Y = b) per treatment and value (the design's probabilities).
    posterior_odds: tuple[tuple[str, str, tuple[tuple[str, float], ...]], ...] = ()
    information_loss: InfoLoss | None = None

    @property
    def true_singleton_share(self) -> float | None:
        return self.true_singletons / self.singletons if self.singletons else None

    @property
    def posterior_odds_max(self) -> float | None:
        values = [v for _, _, odds in self.posterior_odds for _, v in odds]
        return max(values) if values else None


@dataclass(frozen=True, repr=False)
class WhatIfResult(Tabular):
    table_at = ("scenarios",)
    source: str
    table: str | None
    engine: str
    qid: tuple[str, ...]
    drop_null: bool
    audit_columns: tuple[str, ...]
    p: int
    alpha: float
    scenarios: tuple[Scenario, ...]  # the original first
    seconds: float
    warnings: tuple[str, ...] = ()

    @property
    def original(self) -> Scenario:
        return self.scenarios[0]

    def summary_line(self) -> str:
        return (
            f"{self.source}{f' table {self.table}' if self.table else ''}: {len(self.scenarios) - 1} treated "
            f"scenario(s) over QID ({', '.join(self.qid)}); original T = {format_risk(self.original.risk)}"
        )

    @property
    def risk_before(self) -> float | None:
        return self.original.risk

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON object of ``qar whatif`` (docs/treatments.md)."""
        return {
            **pick(self, ("source", "table", "engine")),
            "rows": self.original.rows,
            "qid": list(self.qid),
            "drop_null": self.drop_null,
            "audit_columns": list(self.audit_columns),
            **pick(self, ("p", "alpha")),
            "risk_before": json_number(self.risk_before),
            "seconds": self.seconds,
            "warnings": list(self.warnings),
            "scenarios": [scenario_dict(s, self.risk_before) for s in self.scenarios],
        }

    def scenario(self, name: str) -> Scenario:
        for s in self.scenarios:
            if s.name == name:
                return s
        raise KeyError(name)


def scenario_name(names: Sequence[str]) -> str:
    return " + ".join(names) if names else ORIGINAL


def _resolve_qid(plan: Plan, qid: Sequence[str] | str | None) -> tuple[str, ...]:
    if isinstance(qid, str):
        qid = plan.qi(qid) or tuple(p.strip() for p in qid.split(",") if p.strip())
    elif qid and len(qid) == 1 and plan.qi(qid[0]):
        qid = plan.qi(qid[0])
    qid = tuple(qid or ()) or plan.qid
    if not qid:
        raise UsageError(
            'no quasi-identifier to count singletons on; set qid = ["a", "b", "c"] in the treatments '
            "file (qar whatif also takes --qid a,b,c)"
        )
    return tuple(qid)


def check_names(plan: Plan, columns: Sequence[str], display: str) -> None:
    """What of ``plan`` needs only the relation's column names, before any query: its QID and
    each treatment's column(s) and key (``qar report`` runs its audit before the what-if)."""
    _check_qid(_resolve_qid(plan, None), columns, display)
    check_plan_names(plan, columns, display)


def _check_qid(qid, columns, display):
    import difflib

    for c in qid:
        if c not in columns:
            close = difflib.get_close_matches(c, columns, n=1, cutoff=0.5)
            hint = f"; did you mean {close[0]!r}?" if close else "; check --qid or the file's qid"
            raise ColumnError(f"QID column {c!r} is not a column of {display}{hint}")
    listed_once(qid, "--qid")


def scenarios_of(plan: Plan, combine: Sequence[Sequence[str]] | None = None) -> list[tuple[str, ...]]:
    """Every treatment alone, then every combination (the file's, then ``combine``), in order."""
    out: list[tuple[str, ...]] = [(t.name,) for t in plan.treatments]
    for combo in list(plan.combinations) + [tuple(c) for c in combine or ()]:
        for n in combo:
            plan.get(n)
        if tuple(combo) not in out:
            out.append(tuple(combo))
    return out


class WithRelation(Database):
    """The audit's statements with the treated release put in front as a CTE named ``name``.

    Used where a temp view cannot be made (a read-only PostgreSQL transaction refuses CREATE,
    even of a temporary view, and a PostgreSQL 15 subquery in FROM needs an alias the audit's
    templates do not give). Every template statement starts with SELECT or WITH after its
    comment lines, so the CTE joins the statement's own WITH list or starts one."""

    def __init__(self, inner: Database, name: str, sql: str):
        self.inner = inner
        self.dialect = inner.dialect
        self.engine_name = inner.engine_name
        self.engine_version = inner.engine_version
        self.cte = f"{inner.dialect.quote(name)} as (\n{sql}\n)"

    def wrap(self, statement: str) -> str:
        lines = statement.split("\n")
        i = 0
        while i < len(lines) and (not lines[i].strip() or lines[i].lstrip().startswith("--")):
            i += 1
        head, body = "\n".join(lines[:i]), "\n".join(lines[i:]).lstrip()
        if re.match(r"with\s", body, re.I) and not re.match(r"with\s+recursive\s", body, re.I):
            return f"{head}\nwith {self.cte},\n{body[4:].lstrip()}"
        if re.match(r"select\s", body, re.I):
            return f"{head}\nwith {self.cte}\n{body}"
        raise DatabaseError(f"cannot run this statement over a treated release: {body[:60]!r}")

    def query(self, sql: str) -> list[tuple]:  # type: ignore[override]
        return self.inner.query(self.wrap(sql))

    def query_many(self, statements, *, jobs=1, on_done=None):
        return self.inner.query_many([self.wrap(s) for s in statements], jobs=jobs, on_done=on_done)

    def result_types(self, sql: str) -> list[str]:
        return self.inner.result_types(self.wrap(sql))  # type: ignore[attr-defined]


@contextmanager
def release(db: Database, treated: str, relation: Relation) -> Iterator[tuple[Database, Relation]]:
    """(connection, relation) through which a treated release, given as SQL, reads like a table:
    a DuckDB session temp view (dropped afterwards), else a CTE put in front of every statement
    (read-only server transactions refuse even temporary views)."""
    name = temp_name("release")
    runner: Database
    if db.dialect.temp_tables:
        # A session temp table (DuckDB keeps it in memory): the audit reads the release in several
        # statements, and a view would compute the treatments (draws, windows) again in each.
        db.query(f"create temp table {db.dialect.quote(name)} as\n{treated}")
        runner = db
    else:
        runner = WithRelation(db, name, treated)
    try:
        yield runner, Relation(db.dialect.quote(name), relation.display, relation.columns, "table")
    finally:
        if db.dialect.temp_tables:
            db.drop_temp_tables([name])


def _risk(db: Database, treated: str, relation: Relation, opts: Options, *, batch_size: int | None):
    """T̂ of a release given as SQL, or (None, reason)."""
    with release(db, treated, relation) as (runner, rel):
        try:
            result = audit_relation(runner, rel, opts, batch_size=batch_size, bootstrap=0)
        except DataError as exc:
            return None, str(exc)
    if result.fit is None:
        return None, "; ".join(result.warnings) or "no tail to fit"
    return result.risk, None


def _same(db: Database, column: str, original: str, before: str, after: str) -> str:
    """SQL: the released value of ``column`` is its original one (numbers compared as numbers)."""
    return db.dialect.same(*Arith(db.dialect).comparable(f"t.{db.dialect.quote(column)}", after, original, before))


def _loss(db: Database, binder: Binder, relation_sql: str, names, qids, not_null) -> InfoLoss:
    """Information loss of one scenario over the QID and every column it treats."""
    plan = binder.plan
    treated = [c for n in names for c in plan.get(n).columns]
    cols = list(dict.fromkeys(list(qids) + treated))
    kinds: dict[str, str] = {}
    paired = treated_sql(
        binder, relation_sql, names, not_null=not_null, modified=False, originals=cols, kinds_out=kinds
    )
    # PRAM and shuffling move category codes: no distance (IL1s) for those columns.
    coded = {c for n in names for c in plan.get(n).columns if plan.get(n).kind in ("pram", "shuffle")}
    spec = [
        LossColumn(c, binder.kinds[c], kinds[c], c in treated, f"qar__o_{i}", c, c in coded) for i, c in enumerate(cols)
    ]
    name = temp_name("paired")
    if db.dialect.temp_tables:
        # DuckDB: the paired release once in a session temp table (in memory), read by the
        # three statements of the report; the source is not written.
        db.query(f"create temp table {db.dialect.quote(name)} as\n{paired}")
        try:
            return information_loss(db.query, db.dialect, db.dialect.quote(name), spec)
        finally:
            db.drop_temp_tables([name])
    return information_loss(db.query, db.dialect, f"(\n{paired}\n)", spec)


def checked_inputs(params: WhatIfParams, relation: Relation) -> tuple[tuple[str, ...], Sequence[str], list]:
    """The QID among ``relation``'s columns, the audit's columns (its p, α and π_u checked) and
    the scenarios ``params.only`` names, each among the file's treatments: all that needs the
    table's columns only, checked before the first query reads a row
    (:attr:`qar_sql.command.Command.check`). Returns (QID, audit columns, wanted scenarios)."""
    plan = load(params.treatments)
    qids = _resolve_qid(plan, params.qid)
    _check_qid(qids, relation.columns, relation.display)
    audit_cols = audited_columns(relation.columns, params, enough_qis=False)[0] if params.risk else ()
    scenarios_of(plan, params.combine)  # (a name that is no treatment: its sentence)
    wanted = list(
        dict.fromkeys(
            tuple(x.strip() for x in o.split("+")) if isinstance(o, str) else tuple(o) for o in params.only or ()
        )
    )
    for w in wanted:
        for part in w:
            plan.get(part)
    return qids, audit_cols, wanted


def whatif_relation(
    session: Session, params: WhatIfParams, progress: Progress | None = None, *, started: float | None = None
) -> WhatIfResult:
    """Table 1 of Pastore et al. for every treatment in ``params.treatments`` and every
    combination (the file's ``combinations`` plus ``params.combine``) over the session's
    relation, with T̂(p, α) before and after over the audit columns (``params.risk``), the
    information loss of every treated scenario (``params.loss``); ``params.only`` keeps just the
    named scenarios."""
    started = started if started is not None else time.perf_counter()
    plan = load(params.treatments)
    combine, only, drop_null, risk = params.combine, params.only, params.drop_null, params.risk
    opts = Options.of(params)
    batch_size, key, loss = params.batch_size, params.key, params.loss
    db, relation = session.db, session.relation
    qids, audit_cols, wanted = checked_inputs(params, relation)
    # The audit of each release: over the audit columns, without the caller's progress bar
    # (the scenarios tick it).
    audit_opts = replace(opts, columns=audit_cols, exclude=None, progress=None)
    not_null = qids if drop_null else ()
    binder = Binder(db, relation.sql, relation.columns, plan, display=relation.display, key=key, not_null=not_null)
    scenarios = [()] + scenarios_of(plan, combine)
    if only:
        scenarios = [()] + [s for s in scenarios[1:] if s in wanted] + [w for w in wanted if w not in scenarios]
    sqls, sames = {}, {}
    for s in scenarios:
        after: dict[str, str] = {}
        sqls[s] = treated_sql(binder, relation.sql, s, not_null=not_null, originals=qids, kinds_out=after)
        sames[s] = " and ".join(_same(db, c, f"t.qar__o_{i}", binder.kinds[c], after[c]) for i, c in enumerate(qids))
    releases = {s: treated_sql(binder, relation.sql, s, not_null=not_null, modified=False) for s in scenarios}
    tick = Ticker(progress, len(scenarios) * (2 if risk else 1))

    counts = db.query_many(
        [render("treat_counts.sql", db.dialect, treated=sqls[s], qid=list(qids), same=sames[s]) for s in scenarios],
        jobs=opts.jobs,
        on_done=tick,
    )
    out, warnings = [], []
    for s, rows in zip(scenarios, counts):
        n, classes, singles, min_class, modified, true_singles = (int(v or 0) for v in rows[0])
        value = note = None
        if risk:
            value, note = _risk(db, releases[s], relation, audit_opts, batch_size=batch_size)
            tick()
            if note:
                warnings.append(f"{scenario_name(s)}: T̂ undefined: {note}")
        odds = tuple(
            (t.name, t.column, tuple((str(v), p) for v, p in binder.posterior_odds(t, s[:i]).items()))
            for i, t in enumerate(plan.get(x) for x in s)
            if t.kind == "pram"
        )
        il = _loss(db, binder, relation.sql, s, qids, not_null) if loss and s else None
        out.append(
            Scenario(scenario_name(s), s, n, singles, classes, min_class, modified, value, note, true_singles, odds, il)
        )
    if out[0].rows == 0:
        raise DataError(
            f"table {relation.display!r} has no rows to treat" + (" with no NULL in the QID" if drop_null else "")
        )
    return WhatIfResult(
        source=session.label,
        table=relation.display if relation.kind == "table" else None,
        engine=db.engine_name,
        qid=qids,
        drop_null=drop_null,
        audit_columns=tuple(audit_cols),
        p=opts.p,
        alpha=opts.alpha,
        scenarios=tuple(out),
        seconds=time.perf_counter() - started,
        warnings=tuple(warnings + relation.token_notes([*qids, *audit_cols])),
    )


def emit_sql(
    source: str | None = None,
    *,
    treatments: str | Path | Plan | Mapping,
    table: str | None = None,
    apply: Sequence[str] | None = None,
    view: str | None = None,
    dialect: str | None = None,
    qid: Sequence[str] | str | None = None,
    drop_null: bool = False,
    delimiter: str | None = None,
    key: str | None = None,
    null_tokens: Sequence[str] = (),
) -> str:
    """``CREATE VIEW`` for the treated release (``apply``, else the file's ``release``, else
    every treatment in file order), in ``dialect`` (default: the source's). It reads the
    source to check columns and types; it writes nothing."""
    plan = load(treatments)
    names = tuple(apply or plan.release or [t.name for t in plan.treatments])
    db, relation = open_source(source, table=table, delimiter=delimiter, null_tokens=null_tokens)
    with db:
        target = get_dialect(dialect, strict=True) if dialect else db.dialect
        if relation.kind == "frame":
            raise UsageError(
                f"a {relation.display} lives only in this Python process, so a view cannot read it; "
                "write it to a table or a Parquet file and emit the view for that"
            )
        if relation.kind in ("csv", "parquet"):
            if target.name != "duckdb":
                raise UsageError(
                    f"{relation.display!r} is a file, which only DuckDB reads; emit with "
                    "--dialect duckdb, or load the file into a table and name it with --table"
                )
            from_sql = file_relation_sql(
                target, relation.display, relation.kind, delimiter, null_tokens=check_null_tokens(null_tokens)
            )
        elif target.name == db.dialect.name:
            from_sql = relation.sql
        else:
            from_sql = target.quote_path(split_table(table or relation.display))
        not_null: tuple[str, ...] = ()
        if drop_null:
            not_null = _resolve_qid(plan, qid)
            _check_qid(not_null, relation.columns, relation.display)
        binder = Binder(
            db, relation.sql, relation.columns, plan, dialect=target, display=relation.display, key=key,
            not_null=not_null,
        )  # fmt: skip
        body = treated_sql(binder, from_sql, names, not_null=not_null, modified=False).rstrip()
        if target.settings_clause and target.session_sql:  # the view runs under qar's settings
            body += "\nsettings " + ", ".join(s.removeprefix("set ") for s in target.session_sql)
        view_name = view or f"{(table or Path(relation.display).stem).split('.')[-1]}_treated"
        header = (
            f"-- qar whatif: the treated release ({sql_comment(', '.join(names))}), dialect {target.name}.\n"
            f"-- Generated from {sql_comment(str(plan.path))}; it reads the source and changes nothing in it.\n"
        )
        return header + f"create view {target.quote_path(split_table(view_name))} as\n{body.rstrip()};\n"


# -- the JSON object -----------------------------------------------------------------------


def scenario_dict(s: Scenario, before: float | None) -> dict[str, Any]:
    return {
        "name": s.name,
        "treatments": list(s.treatments),
        **pick(s, ("rows", "singletons", "singleton_share", "modified_rows", "distinct", "min_class_size")),
        "risk": json_number(s.risk),
        "risk_change": json_number(s.risk - before) if s.risk is not None and before is not None else None,
        **pick(s, ("risk_note", "true_singletons", "true_singleton_share")),
        "posterior_odds": [
            {"treatment": t, "column": c, "values": dict(odds), "max": max((v for _, v in odds), default=None)}
            for t, c, odds in s.posterior_odds
        ],
        "posterior_odds_max": s.posterior_odds_max,
        "information_loss": loss_dict(s.information_loss) if s.information_loss else None,
    }
