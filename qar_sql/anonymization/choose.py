"""``qar anonymize``'s run: hierarchies and models from the parameters, the least-loss node that
meets them (:func:`qar_sql.anonymization.risk.best_first` over the evaluator of :mod:`.evaluate`,
with the QaR target of :mod:`.risk` when ``--risk-below`` is given), and everything the result
shows about it (every metric, k, l, t, T̂ and its band, the frontier, the local variant, the
release as SQL and as treatments).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from qar_sql.anonymization import metrics
from qar_sql.anonymization import models as privacy
from qar_sql.anonymization.evaluate import Evaluator, NodeEval, checked_qi, evaluator
from qar_sql.anonymization.export import column_text, generalized, release_select, treatments
from qar_sql.anonymization.hierarchy import (
    Hierarchy,
    HierarchyError,
    IntervalHierarchy,
    intervals_from_toml,
    read_hierarchy,
    read_hierarchy_dir,
    read_interval_toml,
)
from qar_sql.anonymization.outcome import AnonymizeResult, LocalVariant, Node, pareto
from qar_sql.anonymization.risk import (
    NodeRisk,
    RiskSpec,
    RiskTarget,
    best_first,
    fit_theta,
    theta_of,
    unique_free,
)
from qar_sql.anonymization.search import NoNodeMeets, anonymize_session
from qar_sql.engines.database import Relation
from qar_sql.engines.dialects import refuse_unsafe_columns
from qar_sql.engines.session import Session
from qar_sql.engines.source import TEMP_TABLE, file_relation_sql, select_columns
from qar_sql.errors import ColumnError, ParameterError
from qar_sql.parameters.treat import AnonymizeParams
from qar_sql.pushdown.scan import Progress, histograms
from qar_sql.results import pick
from qar_sql.stats import interval as tail_interval
from qar_sql.treat.whatif import release as as_relation

#: Every metric the result reports, in order (``--metric`` names one; entropy is reported as
#: the variant asked for).
REPORTED = ("entropy", "loss", "precision", "discernibility", "aecs")
#: Nodes evaluated per statement by the search (the next lower bounds in the queue).
BATCH = 16
#: The parameters the QaR target takes as they stand (:class:`RiskSpec`).
RISK_SPEC = ("p", "alpha", "pi_u", "pwm", "theta")
#: The privacy models asked for, as the result keeps them.
MODELS = ("k", "l", "l_kind", "c", "t", "t_kind", "sensitive", "no_singletons", "risk_below", "suppression_limit")


def load_hierarchies(params: AnonymizeParams) -> dict[str, Hierarchy]:
    """The hierarchies of ``--hierarchies DIR``, then ``--hierarchy COLUMN=FILE`` (which replaces the
    directory's file of its column; a column given two by ``--hierarchy`` is refused, since one
    would be ignored), then the interval levels given as a mapping."""
    out: dict[str, Hierarchy] = {}
    if params.hierarchies:
        out.update(read_hierarchy_dir(params.hierarchies))
    given: dict[str, str] = {}  # column → the --hierarchy file that gave it (one each: no silent loser)
    for column, path in params.hierarchy_items:
        found: dict[str, Hierarchy]
        if str(path).lower().endswith(".toml"):
            found = dict(read_interval_toml(path))
            if column:
                if column not in found:
                    raise HierarchyError(
                        f"{Path(path).name} has no [hierarchies.{column}] table; add one, e.g. widths = [5, 10, 20]"
                    )
                found = {column: found[column]}
        else:
            found = {column: read_hierarchy(path, column)}
        for c in found:
            if c in given and given[c] != str(path):  # (the same file twice is one)
                raise HierarchyError(
                    f"column {c!r} is given two hierarchies by --hierarchy ({Path(given[c]).name} and "
                    f"{Path(path).name}); give it one"
                )
            given[c] = str(path)
        out.update(found)
    if params.intervals:
        out.update(intervals_from_toml(params.intervals, "intervals"))
    if not out:
        raise HierarchyError(
            "no hierarchy given; name one per QI column with --hierarchy COLUMN=FILE or --hierarchies DIR"
        )
    return out


def privacy_models(params: AnonymizeParams, hierarchies: Mapping[str, Hierarchy]) -> list[privacy.Model]:
    out: list[privacy.Model] = []
    if params.k:
        out.append(privacy.KAnonymity(k=int(params.k)))
    if params.no_singletons:
        out.append(privacy.NoSingletons())
    s = params.sensitive
    if params.l is not None:
        if params.l_kind == "distinct":
            out.append(privacy.DistinctLDiversity(sensitive=s, l=int(params.l)))
        elif params.l_kind == "entropy":
            out.append(privacy.EntropyLDiversity(sensitive=s, l=float(params.l)))
        else:
            out.append(privacy.RecursiveCLDiversity(sensitive=s, l=int(params.l), c=float(params.c or 1)))
    if params.t is not None:
        h = hierarchies.get(s or "") if params.t_kind == "hierarchical" else None
        if params.t_kind == "hierarchical" and h is None:
            raise HierarchyError(f"--t-kind hierarchical needs a hierarchy of {s!r}; add --hierarchy {s}=FILE")
        out.append(privacy.TCloseness(sensitive=s, t=float(params.t), kind=params.t_kind, hierarchy=h))
    return out


def _printed_relation(session: Session) -> str:
    """The FROM of the printed release: a file is read by its reader (the session's temp table
    of it does not exist where the user runs the SELECT)."""
    rel = session.relation
    if rel.kind not in ("csv", "parquet"):
        return rel.sql
    tokens = tuple(session.where.get("null_tokens") or ())
    names = rel.columns if rel.kind == "csv" and tokens else ()
    reader = file_relation_sql(
        session.dialect, rel.display, rel.kind, session.where.get("delimiter"), null_tokens=tokens, names=names
    )
    # The temp table comes first in rel.sql (alone, or in --drop-null's filter before any column).
    return rel.sql.replace(session.dialect.quote(TEMP_TABLE), reader, 1)


def metric_name(params: AnonymizeParams) -> str:
    """The metric of :mod:`.metrics` that ``--metric`` (and ``--no-monotonic``) name."""
    return "entropy_nm" if params.metric == "entropy" and not params.monotonic else params.metric


def _qid(params: AnonymizeParams, hierarchies: Mapping[str, Hierarchy], columns: Sequence[str]) -> list[str]:
    if params.qid:
        twice = next((c for i, c in enumerate(params.qid) if c in params.qid[:i]), None)
        if twice is not None:
            raise ColumnError(f"--qid names {twice!r} twice; name each quasi-identifier once")
        return list(params.qid)
    return [c for c in columns if c in hierarchies and c != params.sensitive]


class _Search:
    """One run's evaluations, kept: each node's evaluation and risk are computed once."""

    def __init__(self, ev: Evaluator, params: AnonymizeParams, metric: str, target: RiskTarget | None):
        self.ev, self.params, self.metric, self.target = ev, params, metric, target
        self.limit = params.suppression_limit * ev.rows
        self.values = metric in metrics.NEEDS_SUPPRESSED_VALUES
        self.evals: dict[tuple[int, ...], NodeEval] = {}
        self.full: dict[tuple[int, ...], NodeEval] = {}  # with the suppressed values (every metric)
        self.risks: dict[tuple[int, ...], NodeRisk] = {}

    def evaluate(self, nodes: list[tuple[int, ...]]) -> list[tuple[bool, float]]:
        for e in self.ev.evaluate(nodes, values=self.values):
            self.evals[e.levels] = e
            if self.values:
                self.full[e.levels] = e
        out = []
        for lv in nodes:
            e = self.evals[lv]
            ok = e.anonymous(self.limit)
            out.append((ok, self.score(self.metric, e) if ok else math.inf))
        return out

    def node(self, levels: tuple[int, ...]) -> NodeEval:
        """The node evaluated with every metric's inputs (evaluated now if the search never did)."""
        if levels not in self.full:
            self.full[levels] = self.ev.evaluate([levels], values=True)[0]
            self.evals.setdefault(levels, self.full[levels])
        return self.full[levels]

    def score(self, metric: str, e: NodeEval) -> float:
        return metrics.score(metric, self.ev.domain, e.levels, e.classes)

    def risk(self, levels: tuple[int, ...]) -> NodeRisk:
        assert self.target is not None
        if levels not in self.risks:
            e = self.evals.get(levels) or self.node(levels)
            self.risks[levels] = self.target.evaluate(levels, smallest=self.params.smallest, suppressed=e.violating)
        return self.risks[levels]

    def meets(self, levels: tuple[int, ...]) -> bool:
        return self.params.risk_below is None or self.risk(levels).meets(self.params.risk_below)

    def figures(self, levels: tuple[int, ...]) -> Node:
        e = self.node(levels)
        entropy = metric_name(self.params) if self.params.metric == "entropy" else "entropy"
        scores = {m: self.score(entropy if m == "entropy" else m, e) for m in REPORTED}
        risk = self.risks[levels].risk if levels in self.risks else None
        return Node(levels, e.violating, e.k, scores, risk)


def _target(session: Session, params: AnonymizeParams, qi, hierarchies) -> tuple[RiskTarget | None, list[str]]:
    """The QaR target over the audit columns (None without ``-p``/``--risk-below``)."""
    if not params.measures_risk:
        return None, []
    audit_cols = list(select_columns(session.columns, params.columns, params.exclude))
    if params.sensitive in audit_cols and params.columns is None:
        audit_cols.remove(params.sensitive)
    spec = RiskSpec(tuple(audit_cols), **pick(params, RISK_SPEC), below=params.risk_below)
    d = session.dialect

    def expression(column: str, level: int) -> str:
        return generalized(d, hierarchies[column], level)

    target = RiskTarget(
        session.db, session.relation, spec, qi, expression, jobs=params.jobs, batch_size=params.batch_size
    )
    return target, audit_cols


def _with_risk(session, params, qi, hierarchies, models, target, progress) -> dict:
    """The search with the QaR target: :func:`best_first` over the evaluator, in one pass. The
    least-loss node passing the models is the first it measures, so no search of the models
    alone goes first: that search resolves nodes of loss up to its optimum that the QaR search
    resolves again from its own order (on the benchmark's 729 nodes at 20,000 rows the two
    passes evaluated 217 nodes, this one 144)."""
    metric = metric_name(params)
    with evaluator(session, hierarchies, models, qi=qi, gs_factor=params.gs_factor) as ev:
        maxima = tuple(h - 1 for h in ev.heights)
        n_nodes = math.prod(ev.heights)
        if target is not None:
            target.fetch_cells(ev.codings)
        search = _Search(ev, params, metric, target)
        calls = [0]

        def evaluate(nodes: list[tuple[int, ...]]) -> list[tuple[bool, float]]:
            calls[0] += len(nodes)
            if progress:
                progress(min(calls[0], n_nodes), n_nodes)
            return search.evaluate(nodes)

        visit = best_first(
            maxima,
            evaluate,
            search.meets,
            lower_bound=lambda lv: metrics.lower_bound(metric, ev.domain, lv),
            exact_bound=metric == "entropy",
            monotone_models=privacy.monotone(models, params.suppression_limit),
            batch=ev.batch if ev.batch == 1 else BATCH,
        )
        chosen = visit.chosen
        # every node whose classes were computed: the search's, and those tagged passing whose
        # suppressed records a risk measurement needed
        evaluated = len(search.evals)
        node = None if chosen is None else search.figures(chosen)
        measured = [search.figures(lv) for lv in visit.measured if lv in search.risks]
        lowest = min(
            ((r.risk, lv) for lv, r in search.risks.items() if r.risk is not None and lv in search.evals), default=None
        )
        return {
            "rows": ev.rows,
            "chosen": node,
            "reached": None
            if chosen is not None
            else _reached(
                qi,
                min((e.violating for e in search.evals.values()), default=ev.rows),
                ev.rows,
                search.limit,
                lowest,
                params.risk_below,
            ),
            "risk": None if chosen is None else search.risks[chosen],
            "optimal": True,
            "nodes": n_nodes,
            "evaluated": evaluated,
            "anonymous": visit.anonymous(maxima),
            "measured": len(search.risks),
            "frontier": pareto(measured, params.metric),
        }


def _without_risk(session, params, qi, hierarchies, models, target) -> dict:
    """The search of the models alone (:func:`.search.anonymize_session`, ARX's Flash), and T̂
    of the chosen release when ``-p`` is given."""
    try:
        sr = anonymize_session(
            session,
            hierarchies,
            models,
            params.suppression_limit,
            metric_name(params),
            qi=qi,
            gs_factor=params.gs_factor,
        )
    except NoNodeMeets as missed:  # a target tried and missed: a result without a node (exit 1), as --risk-below's
        return {
            "rows": missed.rows,
            "chosen": None,
            "reached": _reached(qi, missed.fewest, missed.rows, None, None, None),
            "risk": None,
            "optimal": True,
            "nodes": missed.nodes,
            "evaluated": missed.evaluated,
            "anonymous": 0,
            "measured": 0,
            "frontier": (),
        }
    levels = tuple(sr.levels[c] for c in qi)
    entropy = metric_name(params) if params.metric == "entropy" else "entropy"
    scores = {m: sr.scores[entropy if m == "entropy" else m] for m in REPORTED}
    risk = None
    if target is not None:
        risk = target.evaluate(levels, smallest=params.smallest, suppressed=sr.suppressed)
    node = Node(levels, sr.suppressed, sr.k, scores, None if risk is None else risk.risk)
    return {
        "rows": sr.rows,
        "chosen": node,
        "risk": risk,
        "optimal": sr.optimal,
        "nodes": sr.nodes,
        "evaluated": sr.evaluated,
        "anonymous": sr.anonymous,
        "measured": 0 if risk is None else 1,
        "frontier": (),
        "search": sr,
    }


def _reached(
    qi: Sequence[str],
    fewest: int,
    rows: int,
    limit: float | None,
    lowest: tuple[float, tuple[int, ...]] | None,
    risk_below: float | None,
) -> str:
    """What a search that met no target got closest to (:attr:`AnonymizeResult.reached`): the
    lowest T̂ it measured when a risk target was asked and some node passed the models, else the
    fewest records a node evaluated leaves in classes failing the models (``limit``: the most
    the suppression limit allows; None: every node failed it)."""
    if risk_below is not None and lowest is not None:
        risk, levels = lowest
        shown = ", ".join(f"{c}={v}" for c, v in zip(qi, levels))
        return f"the lowest T̂ it measured is {risk:.6g} (levels {shown})"
    if risk_below is not None and limit is not None and fewest <= limit:
        return "every node that passes the models left no tail to fit, so none has a T̂ to compare"
    share = fewest / rows if rows else 0.0
    return (
        f"the fewest records a node leaves in classes failing the models is {fewest:,} of {rows:,} "
        f"({share:.2%}), above the suppression limit"
    )


def refuse_impossible(session: Session, params: AnonymizeParams) -> None:
    """A model no release of this table can meet, whatever the hierarchies and the suppression
    limit, is bad input (exit 2) before the search, not a target the search tried and missed
    (exit 1): a class of at least k records out of fewer rows, no singletons in a table of one
    row, l distinct sensitive values (every l-diversity needs ⌈l⌉) where the table holds fewer
    (NULL and '' one value, as the evaluator reads them)."""
    least = max(params.k or 0, 2 if params.no_singletons else 0)
    t = session.relation.sql
    if least:
        (rows,) = session.db.query(f"select count(*) from {t} as t")[0]
        rows = int(rows)
        if least > rows:
            what = f"--k {params.k}" if params.k == least else "--no-singletons"
            fix = "give a smaller --k or a larger table" if params.k == least else "a table of one row is a singleton"
            raise ParameterError(
                f"{what} asks for classes of at least {least} records, but the table has {rows:,} "
                f"row{'s' if rows != 1 else ''}{' (NULLs dropped)' if params.drop_null else ''}, so no release "
                f"can meet it; {fix}"
            )
    if params.l is not None and params.sensitive is not None:
        x = column_text(session.dialect, params.sensitive)
        (values,) = session.db.query(f"select count(distinct coalesce({x}, '')) from {t} as t")[0]
        if math.ceil(params.l) > int(values):
            raise ParameterError(
                f"--l {params.l:g} asks for at least {math.ceil(params.l)} distinct values of "
                f"{params.sensitive!r} in every class, but the table holds {int(values):,}, so no release "
                "can meet it; give a smaller --l"
            )


def choose(session: Session, params: AnonymizeParams, progress: Progress | None = None) -> AnonymizeResult:
    """The least-loss node of the lattice that meets every model and target (exact: see
    :func:`~qar_sql.anonymization.risk.best_first`), with what the result reports about it."""
    started = time.perf_counter()
    refuse_unsafe_columns(session.columns, "the release qar anonymize writes")  # before the search
    if params.sensitive is not None and params.sensitive not in session.columns:
        # (without --l or --t it only keeps the column out of the QIs and the audit: a typo did nothing)
        raise ColumnError(f"sensitive column {params.sensitive!r} (--sensitive) is not in the table; check its name")
    hierarchies = load_hierarchies(params)
    models = privacy_models(params, hierarchies)
    qi = _qid(params, hierarchies, session.columns)
    if params.drop_null:
        session = _without_nulls(session, qi)
    if params.measures_risk and params.suppression_limit > 0 and (params.l is not None or params.t is not None):
        raise ParameterError(
            "--risk-below (or -p) with --l or --t needs --suppression-limit 0: T̂ is measured on a release "
            "that removes the classes smaller than k (as the treatments file's suppress_records does), and a "
            "class failing l-diversity or t-closeness can be of any size, so that release would not be the one "
            "the search chose"
        )
    target, audit_cols = _target(session, params, qi, hierarchies)
    checked_qi(session.columns, hierarchies, models, qi)  # (the evaluator's checks, before a row is counted)
    refuse_impossible(session, params)  # (it counts the rows: after every check of the options)
    if params.risk_below is not None or not models:
        found = _with_risk(session, params, qi, hierarchies, models, target, progress)
    else:
        found = _without_risk(session, params, qi, hierarchies, models, target)
    node: Node | None = found["chosen"]
    nr: NodeRisk | None = found["risk"]
    chosen = None if node is None else node.levels
    band = None
    if nr is not None and nr.fit is not None:
        iv = tail_interval.bootstrap_intervals(
            nr.theta, nr.rows, nr.fit, alpha=params.alpha, pi_u=params.pi_u, pwm=params.pwm
        )
        band = iv.risk
    l_value, t_value = _diversity(session, params, qi, hierarchies, chosen) if chosen is not None else (None, None)
    local = _local(session, params, qi, hierarchies, chosen, audit_cols) if params.local and chosen else None
    sql, steps = "", {}
    d = session.dialect
    if chosen is not None and node is not None:
        levels = dict(zip(qi, chosen))
        smallest = params.smallest if node.suppressed else None
        comment = (
            f"qar anonymize: the release at levels {', '.join(f'{c}={v}' for c, v in levels.items())}"
            + (f", records of classes smaller than {smallest} removed" if smallest else "")
            + ".\nCreate it as a view if you like (create view ... as <this select>); qar writes nothing."
        )
        sql = release_select(
            d, _printed_relation(session), session.columns, hierarchies, levels, smallest, comment=comment
        )
        steps = treatments(
            qi,
            hierarchies,
            levels,
            _values(session, [c for c in qi if levels[c] and not isinstance(hierarchies[c], IntervalHierarchy)]),
            _ranges(session, [c for c in qi if levels[c] and isinstance(hierarchies[c], IntervalHierarchy)]),
            smallest=params.smallest,
            suppressed=node.suppressed,
        )
    return AnonymizeResult(
        source=session.label,
        table=session.relation.display if session.relation.kind == "table" else None,
        engine=session.db.engine_name,
        qi=tuple(qi),
        level_labels=tuple(hierarchies[c].labels for c in qi),
        metric=params.metric,
        models=pick(params, MODELS),
        chosen=node,
        reached=found.get("reached"),
        **{name: found[name] for name in ("rows", "optimal", "nodes", "evaluated", "anonymous", "measured")},
        seconds=time.perf_counter() - started,
        l_value=l_value,
        t_value=t_value,
        risk_band=band,
        risk_note=None if nr is None else nr.note,
        audit_columns=tuple(audit_cols),
        p=params.p if params.measures_risk else None,
        alpha=params.alpha if params.measures_risk else None,
        theta=params.theta,
        subsets_scanned=target.scanned if target else 0,
        frontier=found["frontier"],
        local=local,
        release_sql=sql,
        treatments=steps,
        warnings=(),
    )


def _without_nulls(session: Session, qi: Sequence[str]) -> Session:
    """The session's relation without the rows that have NULL in a QI column (``--drop-null``);
    the same connection, read-only."""
    q = session.dialect.quote
    keep = " and ".join(f"t.{q(c)} is not null" for c in qi if c in session.columns)
    sql = f"(select * from {session.relation.sql} as t where {keep})" if keep else session.relation.sql
    return Session(session.db, dataclasses.replace(session.relation, sql=sql), session.label, session.where)


def _values(session: Session, columns: Sequence[str]) -> dict[str, list[str]]:
    """Each column's distinct values as text (what a ``map`` treatment lists)."""
    d = session.dialect
    out: dict[str, list[str]] = {c: [] for c in columns}
    for c in columns:
        x = column_text(d, c)
        out[c] = [
            r[0]
            for r in session.db.query(f"select distinct {x} from {session.relation.sql} as t where {x} is not null")
        ]
    return out


def _ranges(session: Session, columns: Sequence[str]) -> dict[str, tuple[float | None, float | None]]:
    d = session.dialect
    out: dict[str, tuple[float | None, float | None]] = {}
    for c in columns:
        x = f"cast(t.{d.quote(c)} as {d.double})"
        lo, hi = session.db.query(f"select min({x}), max({x}) from {session.relation.sql} as t")[0]
        out[c] = (None if lo is None else float(lo), None if hi is None else float(hi))
    return out


def _diversity(session, params, qi, hierarchies, chosen) -> tuple[float | None, float | None]:
    """The release's smallest distinct l and largest equal-distance t of the sensitive column
    (None when not asked): over the kept classes."""
    if not params.sensitive or (params.l is None and params.t is None):
        return None, None
    d = session.dialect
    q = d.quote
    gen = [generalized(d, hierarchies[c], lv) for c, lv in zip(qi, chosen)]
    keys = ", ".join(f"{g} as g{i}" for i, g in enumerate(gen))
    glist = ", ".join(f"g{i}" for i in range(len(gen)))
    s = f"cast(t.{q(params.sensitive)} as {d.text})"
    base = f"select {keys}, {s} as s from {session.relation.sql} as t"
    rows = session.db.query(f"select {glist}, s, count(*) from ({base}) as b group by {glist}, s")
    classes: dict[tuple, dict] = {}
    for r in rows:
        classes.setdefault(tuple(r[:-2]), {})[r[-2]] = int(r[-1])
    total: dict = {}
    for counts in classes.values():
        for v, n in counts.items():
            total[v] = total.get(v, 0) + n
    rows_n = sum(total.values())
    kept = [c for c in classes.values() if sum(c.values()) >= params.smallest]
    if not kept:
        return None, None
    l_value = float(min(len(c) for c in kept)) if params.l is not None else None
    t_value = None
    if params.t is not None:
        dists = []
        for c in kept:
            size = sum(c.values())
            dists.append(0.5 * sum(abs(c.get(v, 0) / size - n / rows_n) for v, n in total.items()))
        t_value = max(dists)
    return l_value, t_value


def _local(session, params, qi, hierarchies, chosen, audit_cols) -> LocalVariant:
    """Pastore's local recoding at the chosen levels: only the records unique on the QID in the
    source are generalized (nothing suppressed); k, singletons and T̂ of that release."""
    d = session.dialect
    q = d.quote
    cols = list(session.columns)
    # as text on both sides of the CASE (a level's label is text, the column may be a number)
    gen = {c: generalized(d, hierarchies[c], lv) if lv else column_text(d, c) for c, lv in zip(qi, chosen)}
    key = ", ".join(f"t.{q(c)}" for c in qi)
    inner = f"select t.*, count(*) over (partition by {key}) as qar__n from {session.relation.sql} as t"
    sel = ", ".join(
        (f"case when t.qar__n = 1 then {gen[c]} else {column_text(d, c)} end" if c in gen else f"t.{q(c)}")
        + f" as {q(c)}"
        for c in cols
    )
    release = f"select {sel}, case when t.qar__n = 1 then 1 else 0 end as qar__modified from ({inner}) as t"
    classes = ", ".join(f"r.{q(c)}" for c in qi)
    row = session.db.query(
        f"select sum(m), sum(case when n = 1 then 1 else 0 end), min(n) from "
        f"(select count(*) as n, sum(r.qar__modified) as m from ({release}) as r group by {classes}) as x"
    )[0]
    modified, singles, k = (int(v or 0) for v in row)
    risk = None
    if params.measures_risk and audit_cols:
        spec = RiskSpec(tuple(audit_cols), **pick(params, RISK_SPEC))
        body = f"select {', '.join(q(c) for c in audit_cols)} from ({release}) as r"
        view = Relation(session.relation.sql, session.relation.display, tuple(audit_cols), "table")
        with as_relation(session.db, body, view) as (runner, rel):
            hist = histograms(runner, rel.sql, audit_cols, params.p, jobs=params.jobs)
        n = next(sum(s * c for s, c in h) for h in hist.values() if h)
        counts = np.array(
            [(sum(c for _, c in hist[j]), sum(c for s, c in hist[j] if s == 1)) for j in sorted(hist)], dtype=float
        )
        if unique_free(counts, n, params.theta):
            risk = 0.0
        else:
            fit, _ = fit_theta(theta_of(counts, n, params.theta), n, spec)
            risk = None if fit is None else fit.risk
    meets = (
        (params.risk_below is None or (risk is not None and risk <= params.risk_below))
        and (not params.k or k >= params.k)
        and (not params.no_singletons or singles == 0)
    )
    return LocalVariant(tuple(chosen), modified, singles, k, risk, meets)
