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

The hooks of the command :data:`qar_sql.commands.release.COMPARE` (``qar compare`` and
:func:`qar_sql.compare` are made from it): :func:`prepare` once before any connection (the
treatments file read), ``run(session, params, progress) → result`` with the original as the
session (:func:`session_keywords`), in steps, and :func:`verdict` (exit 1 below a --fail-below
threshold).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from qar_sql.comparison import audits, coordinates, metrics, tables
from qar_sql.comparison.anonymeter import require_anonymeter, run_anonymeter
from qar_sql.comparison.projection import API_KEYWORD, CLI_OPTION, ProjectionFit, fit_projections
from qar_sql.comparison.read import select_sql
from qar_sql.comparison.thresholds import below_thresholds, check_computed, check_thresholds
from qar_sql.engines.session import Session
from qar_sql.engines.source import Database, Relation, open_source
from qar_sql.errors import ColumnError, DataError, ExitCode
from qar_sql.parameters.release import CompareParams
from qar_sql.parameters.tail import TailParams
from qar_sql.pushdown.scan import Progress, Ticker
from qar_sql.results import CompareResult, Distributions, pick
from qar_sql.treat.treatments import Plan, load
from qar_sql.user_text import one_line

NAME = "compare"
Params = CompareParams


def prepare(params: CompareParams) -> CompareParams:
    """``params`` ready to run, before any connection: the --fail-below thresholds possible
    with the options, the optional package anonymeter present when asked for, the treatments
    file read (a bad file fails here), and the risk's α and π_u (a p above the compared columns
    is a note: the comparison's metrics are still reported)."""
    if params.risk:
        TailParams.validate(params)
    linked = bool(params.link or params.aligned or params.treatments)
    check_thresholds(
        dict(params.fail_below), linked=linked, attacker_columns=params.attacker_columns, target=params.target
    )
    if params.anonymeter:
        require_anonymeter()  # a missing optional package fails before any read
    if params.treatments is not None and not isinstance(params.treatments, Plan):
        params = replace(params, treatments=load(params.treatments))
    return params


def placed(params: CompareParams) -> CompareParams:
    """``params`` with the treated side placed (``params`` as given stay what the report shows):
    TREATED, else the original's own source (its --treated-table), taking the original's --table
    where TREATED is a database too; with treatments, the original itself."""
    if params.treatments is not None:
        return params
    treated = params.treated if params.treated is not None else params.original
    takes = params.treated is not None and tables.takes_table(params.treated)
    return replace(params, treated=treated, treated_table=params.treated_table or (params.table if takes else None))


def session_keywords(params: CompareParams) -> dict[str, Any]:
    """The keywords of ``session_of`` that open the original: its --null-token values apply to
    the CSV files among the two sides (a database table has NULLs of its own), refused when
    neither side is one."""
    params = placed(params)
    treated = params.treated if params.treatments is None else None
    tokens = tables.null_tokens_for(params.original, treated, tuple(params.null_tokens))[0]
    where = {"source": params.original, "table": params.table, "delimiter": params.delimiter}
    return where | {"threads": params.threads, "null_tokens": tokens}


def verdict(result: CompareResult, params: CompareParams) -> int:
    """Exit 1 when a metric is below its --fail-below threshold (each breach said on stderr), else 0."""
    breaches = below_thresholds(result, dict(params.fail_below))
    for b in breaches:
        print(one_line(b[0].upper() + b[1:] + "."), file=sys.stderr)
    return int(ExitCode.RISK_ABOVE_THRESHOLD) if breaches else int(ExitCode.OK)


def shown(result: CompareResult, params: CompareParams) -> dict[str, Any]:
    """The options of the comparison as given (``params`` before :func:`placed`), as its HTML
    report (:func:`qar_sql.commands.report.html`) lists them."""
    out = pick(params, ("original", "treated", "table", "treated_table"))
    out["treatments"] = getattr(params.treatments, "path", params.treatments)  # (the file, also once read)
    out |= pick(params, ("link", "aligned", "columns", "exclude"))
    out |= {"components": params.components or result.components, "target": params.target}  # the default as resolved
    return out | pick(params, ("p", "alpha", "pi_u", "pwm"))


_Tick = Callable[[], None]


@dataclass
class _Tables:
    """The two sides of a comparison, opened: each connection and relation, and how it is shown."""

    db_o: Database
    rel_o: Relation
    db_t: Database
    rel_t: Relation
    original: str
    treated: str


def _open(session: Session, params: CompareParams, stack: ExitStack) -> _Tables:
    """The original (the session's relation) and the treated release: a second source, or with
    treatments the original itself (the release is read beside it)."""
    db_o, rel_o = session.db, session.relation
    original = f"{session.label} {rel_o.display}" if rel_o.kind == "table" else rel_o.display
    if params.treatments is not None:
        return _Tables(db_o, rel_o, db_o, rel_o, original, f"{original} with {params.treatments.path}")
    tokens = params.null_tokens if tables.csv_file(params.treated) else ()
    where = pick(params, ("delimiter", "threads"))
    db_t, rel_t = open_source(params.treated, table=params.treated_table, null_tokens=tokens, **where)
    stack.callback(db_t.close)
    session.log_also(db_t)
    return _Tables(db_o, rel_o, db_t, rel_t, original, tables.display(params.treated, rel_t))


@dataclass
class _Columns:
    """The compared columns, by kind, and the attacker's and the target among them."""

    cols: Sequence[str]
    numeric: list[str]
    categorical: list[str]
    attackers: tuple[str, ...]


def _columns(t: _Tables, params: CompareParams, notes: list[str]) -> _Columns:
    """The compared columns (and the notes of the null tokens read in them), checked against
    the target and the link key."""
    from_treatments = params.treatments is not None
    cols = tables.compared_columns(t.rel_o, t.rel_t, params.columns, params.exclude, params.link, from_treatments)
    for rel, side in ((t.rel_o, "original"), (t.rel_t, "treated table")):
        for note in rel.token_notes(cols):
            if note not in notes:
                notes.append(f"{note} (the {side})" if t.rel_o is not t.rel_t else note)
    attackers = tables.subset(params.attacker_columns, cols, "--attacker-columns")  # (before kinds reads rows)
    target = params.target
    if target is not None and target not in cols:
        raise ColumnError(
            f"--target {target!r} is not among the compared columns ({', '.join(cols)}); "
            "name one of them, or add it to --columns"
        )
    if target is not None and len(cols) < 2:
        raise ColumnError(f"--target {target!r} leaves no other column to infer it from; compare more columns")
    numeric, cat = tables.kinds(t.db_o, t.rel_o, t.db_t, t.rel_t, cols, params.categorical, from_treatments)
    if params.link is not None:
        for db, rel, side in ((t.db_o, t.rel_o, "original"), (t.db_t, t.rel_t, "treated table")):
            tables.check_key(db, rel, params.link, side)
    return _Columns(cols, numeric, cat, attackers)


@dataclass
class _Reads:
    """The reads of a comparison: the original's compared columns (the fit), and each side with
    its link key — or, with treatments, both sides in one statement (``pair``)."""

    fit: tables.Side
    original: tables.Side | None = None
    treated: tables.Side | None = None
    pair: tables.Side | None = None

    def both(self, numeric: set[str], batch_rows: int) -> tuple[Iterator, Iterator]:
        """Each side's batches of the compared columns (anonymeter's reads)."""
        if self.pair is None:
            assert self.treated is not None
            return self.fit.batches(numeric, batch_rows), self.treated.batches(numeric, batch_rows)
        # The release statement holds both sides: read it once per side.
        pair = self.pair
        ori = ({k[2:]: v for k, v in b.items() if k.startswith("o:")} for b in pair.batches(numeric, batch_rows))
        syn = ({k: v for k, v in b.items() if not k.startswith("o:")} for b in pair.batches(numeric, batch_rows))
        return ori, syn


def _reads(t: _Tables, c: _Columns, params: CompareParams, orders: tuple[str | None, str | None]) -> _Reads:
    """What each side reads; ``orders``: the stored row orders of an --aligned pair, found before
    a query read a row (None, None: not aligned)."""
    cols, link = c.cols, params.link
    fit = tables.Side(t.db_o, select_sql(t.db_o, t.rel_o.sql, cols), {col: col for col in cols}, t.original)
    if params.treatments is not None:
        return _Reads(fit, pair=tables.treatment_side(t.db_o, t.rel_o, params.treatments, cols, t.treated))
    order_o, order_t = orders
    keyed = [*cols, link] if link else list(cols)
    names = {col: col for col in cols} | ({link: "key:"} if link else {})
    original = tables.Side(t.db_o, select_sql(t.db_o, t.rel_o.sql, keyed, order_by=order_o), names, t.original)
    treated = tables.Side(t.db_t, select_sql(t.db_t, t.rel_t.sql, keyed, order_by=order_t), dict(names), t.treated)
    return _Reads(fit, original, treated)


def _fit(reads: _Reads, c: _Columns, params: CompareParams, spelled: str, tick: _Tick) -> tuple[list, list]:
    """The projections (their specifications, and as fitted) in two passes over the original:
    all compared columns, the attacker's, all but the target."""
    components, impute = params.components, params.impute
    what = "the compared columns"
    fits = [ProjectionFit(c.numeric, c.categorical, components, what=what, impute=impute, spelled=spelled)]
    if c.attackers:
        fits.append(
            coordinates.sub_fit(c.attackers, c.numeric, c.categorical, components, "the attacker's columns", impute)
        )
    if params.target:
        others = [col for col in c.cols if col != params.target]
        what = f"the columns other than {params.target!r}"
        fits.append(coordinates.sub_fit(others, c.numeric, c.categorical, components, what, impute))
    first_pass = [True]

    def fit_batches() -> Iterator[dict[str, np.ndarray]]:
        yield from reads.fit.batches(set(c.numeric), params.batch_rows)
        if first_pass[0]:
            first_pass[0] = False
            tick()

    fitted = fit_projections(fit_batches, fits)
    tick()
    return fits, fitted


def _coordinates(reads: _Reads, fitted: list, params: CompareParams, numeric: set[str], tick: _Tick) -> tuple:
    """Each side's coordinates in every projection, with its target and link key: one pass
    over each side, or over the one statement that holds both."""
    main, att, inf = _projections(fitted, params)
    rows, target = params.batch_rows, params.target
    if reads.pair is not None:
        o, t = coordinates.coordinates(reads.pair.batches(numeric, rows), main, att, inf, target, False, both=True)
        tick()
    else:
        assert reads.original is not None and reads.treated is not None
        keyed = bool(params.link)
        o, _ = coordinates.coordinates(reads.original.batches(numeric, rows), main, att, inf, target, keyed)
        tick()
        t, _ = coordinates.coordinates(reads.treated.batches(numeric, rows), main, att, inf, target, keyed)
    tick()
    return o, t


def _projections(fitted: list, params: CompareParams) -> tuple:
    """(all columns, the attacker's or None, all but the target or None) of the fitted projections."""
    att = fitted[1] if params.attacker_columns else None
    inf = fitted[-1] if params.target else None
    return fitted[0], att, inf


def _own(o: dict, t: dict, params: CompareParams, notes: list[str]) -> np.ndarray | None:
    """The treated record made from each original record (None: not linked)."""
    n_o, n_t = len(o["main"]), len(t["main"])
    if params.link:
        return coordinates.own_by_key(o["key"], t["key"], params.link)
    if params.aligned or params.treatments is not None:
        if n_o != n_t:
            raise DataError(
                f"--aligned needs tables with as many rows, but the original has {n_o} and the treated "
                f"table {n_t}; link them on a key with --link"
            )
        return np.arange(n_o)
    notes.append(
        "no link between original and treated records (--link KEY or --aligned): the hidden rate, "
        "local cloaking and correlation protection rate need to know which treated record was "
        "made from which original, so only DTC, CDR, inference and the QaR risks are reported"
    )
    return None


def _risks(t: _Tables, cols: Sequence[str], params: CompareParams, notes: list[str], tick: _Tick) -> dict[str, Any]:
    """The QaR audits of both sides, in the database, over the compared columns."""
    tail = (params.p, params.alpha, params.pi_u, params.pwm, params.jobs)
    res_o, note_o = audits.audit_side(t.db_o, t.rel_o, cols, *tail)
    tick()
    if params.treatments is not None:
        res_t, note_t = audits.audit_release(t.db_o, t.rel_o, params.treatments, cols, *tail)
    else:
        res_t, note_t = audits.audit_side(t.db_t, t.rel_t, cols, *tail)
    tick()
    return audits.risks(res_o, note_o, res_t, note_t, notes)


def run(
    session: Session,
    params: CompareParams,
    progress: Progress | None = None,
    *,
    started: float | None = None,
    on_cli: bool = False,
) -> CompareResult:
    """The comparison of the treated release that ``params`` places (:func:`placed`) with the
    session's relation, the original. ``on_cli``: messages name the components option as the
    command line does (``--components 8``; else ``components=8``, as a Python caller). A
    --fail-below threshold on a metric the result lacks is a usage error: it can neither pass
    nor fail."""
    started = started if started is not None else time.perf_counter()
    params, spelled = placed(params), CLI_OPTION if on_cli else API_KEYWORD
    notes: list[str] = []
    tick = Ticker(progress, 5 + (2 if params.risk else 0) + (1 if params.anonymeter else 0))
    with ExitStack() as stack:
        t = _open(session, params, stack)
        orders: tuple[str | None, str | None] = (None, None)
        if params.aligned and params.treatments is None:  # (the stored orders, before a query reads a row)
            orders = (tables.row_order(t.db_o, t.rel_o, "original"), tables.row_order(t.db_t, t.rel_t, "treated table"))
        c = _columns(t, params, notes)
        numeric = set(c.numeric)
        reads = _reads(t, c, params, orders)
        fits, fitted = _fit(reads, c, params, spelled, tick)
        main, att, inf = _projections(fitted, params)
        o, tr = _coordinates(reads, fitted, params, numeric, tick)
        if len(tr["main"]) == 0:
            raise DataError(f"the treated table {t.treated!r} has no rows; compare a release that has records")

        own = _own(o, tr, params, notes)
        closest = metrics.closest_originals(o["main"], tr["main"])
        linkage = cpr = None
        if own is not None:
            # Exact up to the median (metrics.cloaking_counts); the counts above it may be lower
            # bounds, which the figure's clipping at the 95th percentile states truthfully.
            linkage = metrics.link(o["main"], tr["main"], own, cloaking=params.cloaking)
            if att is not None:
                cpr = metrics.link(o["att"], tr["att"], own, cloaking=False).hidden_rate
        elif c.attackers:
            notes.append("--attacker-columns: the correlation protection rate needs a link (--link or --aligned)")
        inference = None
        if inf is not None and params.target is not None:
            inference = coordinates.inference(o, tr, params.target, params.target in numeric, inf.components)
        tick()

        risks: dict[str, Any] = {"risk_original": None, "risk_treated": None, "qis": ()}
        if params.risk:
            risks = _risks(t, c.cols, params, notes, tick)
        anon = None
        if params.anonymeter:
            ori, syn = reads.both(numeric, params.batch_rows)
            anon = run_anonymeter(
                ori, syn, numeric, c.cols, c.attackers, params.target, n_attacks=params.anonymeter_attacks
            )
            tick()

    distributions = None
    if params.figures:
        distributions = Distributions(
            dcr=closest.dcr,
            nndr=closest.nndr,
            local_cloaking=linkage.local_cloaking if linkage is not None else None,
            original_xy=coordinates.sample_xy(o["main"]),
            treated_xy=coordinates.sample_xy(tr["main"]),
        )
    link = "treatments" if params.treatments is not None else None
    link = f"key:{params.link}" if params.link else ("aligned" if params.aligned else link)
    result = CompareResult(
        original=t.original,
        treated=t.treated,
        engine_original=t.db_o.engine_name,
        engine_treated=t.db_t.engine_name,
        rows_original=len(o["main"]),
        rows_treated=len(tr["main"]),
        columns=tuple(c.cols),
        categorical=tuple(c.categorical),
        method=main.method,
        components=main.components,
        explained_variance=float(main.explained_variance_ratio.sum()),
        link=link,
        dtc=closest.dtc,
        cdr=closest.cdr,
        hidden_rate=linkage.hidden_rate if linkage is not None else None,
        local_cloaking=linkage.median_local_cloaking if linkage is not None else None,
        correlation_protection_rate=cpr,
        attacker_columns=tuple(c.attackers),
        attacker_components=att.components if att is not None else None,
        inference=inference,
        p=params.p,
        **risks,
        anonymeter=anon,
        notes=tuple(notes),
        local_cloaking_ties=linkage.median_local_cloaking_ties if linkage is not None else None,
        impute=params.impute,
        null_tokens=tuple(params.null_tokens),
        missing_numeric=fits[0].missing_numeric(),
        seconds=time.perf_counter() - started,
        distributions=distributions,
    )
    check_computed(result, dict(params.fail_below))
    return result
