"""Result types. Frozen dataclasses: ``dataclasses.asdict`` serves JSON, the store and tests.

Every result is also :class:`Tabular`: its tabular part (QIs, records, curves, scenarios) as a
pyarrow Table, a pandas or a polars DataFrame, a one-line ``repr`` instead of the dataclass's
field dump (which runs to hundreds of kilobytes), and a small HTML view for Jupyter.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from qar_sql import plots
from qar_sql.errors import ExitCode, UsageError
from qar_sql.extras import require
from qar_sql.stats.evt import TailFit
from qar_sql.stats.interval import METHOD_DESCRIPTION, TailIntervals
from qar_sql.stats.koot import MonteCarlo
from qar_sql.stats.sensitivity import ColumnOut
from qar_sql.user_text import html_text, one_line
from qar_sql.version import __version__

#: Rows shown by ``_repr_html_``: enough to see the riskiest, small enough for a notebook.
HTML_ROWS = 10


def _require(module: str, extra_hint: str) -> Any:
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise UsageError(f"{module} is not installed; install it with: pip install {extra_hint}") from exc


def _fmt(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float | np.floating):
        return "nan" if value != value else f"{value:.4g}"
    if isinstance(value, tuple | list):
        return ", ".join(str(v) for v in value)
    return str(value)


def _pandas_column(pd: Any, values: list) -> Any:
    """Whole numbers with gaps (a key fetched for the top records only) as pandas' nullable
    Int64: left to pandas they would become floats (5.0, NaN), which a key is not."""
    if None in values and all(isinstance(v, int) and not isinstance(v, bool) for v in values if v is not None):
        return pd.array(values, dtype="Int64")
    return values


def format_risk(risk: float | None) -> str:
    return "no tail" if risk is None else f"{risk:.4g}"


class SingletonShare:
    """For counts of one combination or release: ``singletons`` of the ``rows`` counted."""

    singletons: int
    rows: int

    @property
    def singleton_share(self) -> float:
        """%S as a fraction S / rows (0 when no row is counted)."""
        return self.singletons / self.rows if self.rows else 0.0


def json_number(x: float | None) -> float | None:
    """JSON-safe float at full precision (NaN/inf become null, never a bare NaN)."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return None
    return float(x)


def json_key(key: tuple | None) -> Any:
    """A record's key as the JSON shows it: one value, a list of several, or null."""
    return list(key) if key is not None and len(key) > 1 else (key[0] if key else None)


def shown_records(params: Any) -> tuple[int, bool]:
    """How many records ``qar records``'s output lists (``params``: its RecordsParams, None:
    the defaults) and whether its JSON lists every one (``--all``)."""
    top = 100 if params is None else params.top
    return top or 0, bool(params is not None and params.all_records)


def plain(value: Any) -> Any:
    """A value as the JSON shows it: a float by :func:`json_number`, a time in ISO 8601, a tuple
    or list as a list."""
    if isinstance(value, float):
        return json_number(value)
    if isinstance(value, datetime):
        return value.isoformat()
    return [plain(v) for v in value] if isinstance(value, tuple | list) else value


def data(item: Any, names: Sequence[str]) -> dict[str, Any]:
    """Name → that attribute of one item as its JSON shows it (:func:`plain`), in order."""
    return {name: plain(getattr(item, name)) for name in names}


def pick(item: Any, names: Sequence[str]) -> dict[str, Any]:
    """Name → that attribute of one item, in order: the fields a result takes over as they stand
    from another object (or a JSON object from its result), named once."""
    return {name: getattr(item, name) for name in names}


def flat(record: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``record`` with each nested object's fields as ``outer.inner`` keys, at any depth."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        if isinstance(value, Mapping) and value:
            out |= flat(value, f"{prefix}{key}.")
        else:
            out[f"{prefix}{key}"] = value
    return out


def cell(value: Any) -> Any:
    """One cell of a result's table: a list of values joined by ", " as the text shows them, any
    other list or object (records, lists of lists) as its JSON, anything else as it is."""
    if isinstance(value, list) and not any(isinstance(v, list | Mapping) for v in value):
        return ", ".join(v if isinstance(v, str) else json.dumps(v) for v in value)
    return json.dumps(value, ensure_ascii=False) if isinstance(value, list | Mapping) else value


def json_rows(data: Mapping[str, Any], path: Sequence[str]) -> list[dict[str, Any]]:
    """The rows of a result's table: the records its JSON ``data`` holds at ``path`` (a key; then,
    for records held in each of those, their key), each flattened (:func:`flat`) after the fields
    of the record that holds it. Records held by name (an object of records, or of lists of them)
    have the name in a column named for that object."""
    name, *inner = path
    value: Any = data.get(name) or []
    rows: list[dict[str, Any]] = []
    for key, held in value.items() if isinstance(value, Mapping) else [(None, value)]:
        head = {} if key is None else {name: key}
        for record in held if isinstance(held, list) else [held]:
            if inner:
                outer = flat(head | {k: v for k, v in record.items() if k != inner[0]})
                rows += [outer | row for row in json_rows(record, inner)]
            else:
                rows.append(flat(head | record))
    return rows


class Tabular:
    """Tables out of a result. A result's table is the list of records its JSON holds at
    :attr:`table_at` (:func:`json_rows`), with the JSON's own field names; a subclass says its
    one-line summary (:meth:`summary_line`) and, optionally, richer HTML."""

    #: Non-ASCII characters of the JSON as \\u escapes (as some commands have always written them).
    ascii_json: typing.ClassVar[bool] = False
    #: Where ``to_dict()`` holds the table's records (:func:`json_rows`).
    table_at: typing.ClassVar[tuple[str, ...]] = ("qis",)

    #: The result's data: the JSON object ``--format json`` prints (each result's own method).
    to_dict: typing.Callable[..., dict[str, Any]]

    def table_rows(self, data: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The table's rows in ``data``, the result's ``to_dict()``."""
        return json_rows(data, self.table_at)

    def table_columns(self, data: Mapping[str, Any] | None = None) -> dict[str, list]:
        """The table as column name → values (a column missing from a row: None), from ``data``:
        the result's ``to_dict()`` (given the options its command passed)."""
        rows = self.table_rows(self.to_dict() if data is None else data)
        return {name: [cell(row.get(name)) for row in rows] for name in dict.fromkeys(k for row in rows for k in row)}

    def summary_line(self) -> str:  # pragma: no cover - interface
        raise NotImplementedError

    def to_arrow(self) -> Any:
        """The tabular part as a ``pyarrow.Table``."""
        require("arrow", "to_arrow()")
        import pyarrow as pa

        return pa.table(self.table_columns())

    def to_pandas(self) -> Any:
        """The tabular part as a ``pandas.DataFrame``."""
        pd = _require("pandas", "pandas")
        return pd.DataFrame({name: _pandas_column(pd, values) for name, values in self.table_columns().items()})

    def to_polars(self) -> Any:
        """The tabular part as a ``polars.DataFrame`` (when polars is installed)."""
        pl = _require("polars", "polars")
        return pl.DataFrame(self.table_columns(), strict=False)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {one_line(self.summary_line())}>"

    def table_order(self) -> Sequence[int] | None:
        """Rows of the table in the order its Markdown and notebook view list them (riskiest
        first where the table itself is in QI order); None: the table's own order."""
        return None

    def _html_table(self, columns: dict[str, list] | None = None, rows: int = HTML_ROWS) -> str:
        order = self.table_order() if columns is None else None
        columns = self.table_columns() if columns is None else columns
        names = list(columns)
        n = len(columns[names[0]]) if names else 0
        shown = list(order[:rows]) if order is not None else range(min(n, rows))
        head = "".join(f"<th>{html_text(c)}</th>" for c in names)
        body = "".join(
            "<tr>" + "".join(f"<td>{html_text(_fmt(columns[c][i]))}</td>" for c in names) + "</tr>" for i in shown
        )
        more = f"<p>… {n - rows} more rows: <code>.to_pandas()</code></p>" if n > rows else ""
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}"

    def _repr_html_(self) -> str:
        title = html_text(type(self).__name__)
        return f"<div><p><b>{title}</b> {html_text(self.summary_line())}</p>{self._html_table()}</div>"


@dataclass(frozen=True)
class QIBounds:
    """What a pruned QI's (p − 1)-column subsets prove about it (docs/method.md, "Pruning"):
    its classes H lie in [distinct_low, distinct_high], its singletons are at least
    ``singletons_low`` and its smallest class at most ``min_class_high``."""

    distinct_low: int
    distinct_high: int
    singletons_low: int
    min_class_high: int


@dataclass(frozen=True)
class QIStats:
    """Counts for one quasi-identifier (a set of p columns) over the L rows. A QI the audit
    pruned (``bounds`` set) was never grouped: its counts are 0 and its θ NaN, and ``bounds``
    says what is known of it instead."""

    index: int
    columns: tuple[str, ...]
    distinct: int  # H(j): distinct value combinations, NULL a value of its own
    singletons: int  # S(j): classes of size 1 = records unique on j
    min_class_size: int  # smallest equivalence class (k of k-anonymity); 0 for an empty table
    class_sizes: tuple[tuple[int, int], ...]  # (class size, number of classes), ascending
    rows: int  # L
    bounds: QIBounds | None = None  # a pruned QI: what its subsets prove (its counts are unknown)

    @property
    def pruned(self) -> bool:
        return self.bounds is not None

    @property
    def theta(self) -> float:
        """θ(j) = H(j) / L (NaN for a pruned QI: see :attr:`theta_bounds`)."""
        if self.bounds is not None:
            return float("nan")
        return self.distinct / self.rows if self.rows else float("nan")

    @property
    def theta_bounds(self) -> tuple[float, float] | None:
        """(lowest, highest) θ a pruned QI can have; None for a QI that was grouped."""
        b = self.bounds
        return None if b is None else (b.distinct_low / self.rows, b.distinct_high / self.rows)

    def records_below(self, k: int) -> int:
        """Records in classes smaller than k (those violating k-anonymity on this QI)."""
        return sum(size * n for size, n in self.class_sizes if size < k)

    @property
    def is_key(self) -> bool:
        return self.rows > 0 and self.distinct == self.rows

    def to_dict(self, k: int, histograms: bool = False) -> dict[str, Any]:
        """The QI in the audit's JSON (``class_sizes`` with ``histograms``); a pruned one has its
        bounds instead of its counts."""
        b = self.bounds
        if b is not None:  # pruned: never grouped, so no counts; what its subsets prove instead
            return {
                **data(self, ("index", "columns")),
                **dict.fromkeys(("distinct", "singletons", "theta", "min_class_size", "records_below_k")),
                "pruned": True,
                "theta_bounds": plain(self.theta_bounds),
                "distinct_bounds": [b.distinct_low, b.distinct_high],
                "singletons_low": b.singletons_low,
                "min_class_size_high": b.min_class_high,
            }
        d = {
            **data(self, ("index", "columns", "distinct", "singletons", "theta", "min_class_size")),
            "records_below_k": self.records_below(k),
        }
        if histograms:
            d["class_sizes"] = plain(self.class_sizes)
        return d


@dataclass(frozen=True)
class ScanResult:
    """What the pushed-down scan brings back: L and per-QI counts."""

    rows: int
    columns: tuple[str, ...]
    p: int
    qis: tuple[QIStats, ...]

    @property
    def theta(self) -> np.ndarray:
        return np.array([q.distinct for q in self.qis], dtype=float) / self.rows

    @property
    def distinct(self) -> np.ndarray:
        return np.array([q.distinct for q in self.qis], dtype=np.int64)


@dataclass(frozen=True)
class UniqueRisk:
    """The unique measure's tail fit (θ = S/L, docs/method.md), when it was computed; ``fit``
    None: no tail."""

    fit: TailFit | None

    @property
    def risk(self) -> float | None:
        return self.fit.risk if self.fit else None


@dataclass(frozen=True)
class RowsRisk:
    """T̂ on a nested subsample of ``rows`` records (``share`` of the table's; 1.0: the table)."""

    rows: int
    share: float
    risk: float | None


@dataclass(frozen=True, repr=False)
class AuditResult(Tabular):
    """The QaR audit of one table. ``risk`` is T̂(p, α); it is None when there is no tail."""

    source: str  # passwords masked
    table: str | None
    engine: str
    engine_version: str
    rows: int
    columns: tuple[str, ...]
    p: int
    alpha: float
    pi_u: float
    pwm: str
    qis: tuple[QIStats, ...]
    fit: TailFit | None
    warnings: tuple[str, ...]
    seconds: float
    k: int = 5  # the k used for the k-anonymity summary
    column_notes: tuple[str, ...] = field(default=())
    uniqueness: UniquenessResult | None = None  # with group_size: the birthday measures per QI
    #: Bootstrap intervals for T̂, u, ξ̂, β̂ (docs/uncertainty.md); None without a tail or with bootstrap=0.
    intervals: TailIntervals | None = None
    prune: str = "off"  # "auto": QIs that cannot reach the tail were not grouped
    n_pruned: int = 0  # QIs of size p not grouped: below the tail by their bounds
    n_subsets: int = 0  # smaller QIs grouped for the bounds: size p − 1, and (p ≥ 3) each column alone
    #: the θ ``fit`` is of: "distinct" (H/L, the paper's) or "unique" (S/L)
    measure: str = "distinct"
    #: the unique measure's T̂ when it was computed (measure "unique", or asked, as the report does)
    unique: UniqueRisk | None = None
    #: T̂ of the QIs that avoid each column (docs/uncertainty.md); None when not computed
    leave_one_column_out: tuple[ColumnOut, ...] | None = None
    #: ((p', T̂ at p'), ...) where computed: p − 1 with a pruned audit, p ± 1 with sensitivity
    risk_by_p: tuple[tuple[int, float | None], ...] | None = None
    #: T̂ on nested subsamples of the rows, the whole table last
    risk_by_rows: tuple[RowsRisk, ...] | None = None

    @property
    def risk(self) -> float | None:
        return self.fit.risk if self.fit else None

    @property
    def theta(self) -> np.ndarray:
        """θ of every QI in QI order; NaN for a pruned QI (its bounds are in ``qis``)."""
        theta = np.array([q.distinct for q in self.qis], dtype=float) / self.rows
        if self.n_pruned:
            theta[[q.index for q in self.qis if q.pruned]] = np.nan
        return theta

    @property
    def n_qi(self) -> int:
        return len(self.qis)

    @property
    def n_grouped(self) -> int:
        """QIs of size p whose classes were counted (all of them unless pruned)."""
        return self.n_qi - self.n_pruned

    def riskiest(self, n: int = 10) -> list[QIStats]:
        """The n QIs with the largest θ (ties: more singletons first, then QI order). Pruned QIs
        come last: every one is below the tail, under every grouped QI of the top."""
        return [self.qis[i] for i in self.table_order()[:n]]

    def table_order(self) -> list[int]:
        """The QIs' positions as :meth:`riskiest` lists them."""
        qis = self.qis
        return sorted(
            range(len(qis)), key=lambda i: (qis[i].pruned, -qis[i].distinct, -qis[i].singletons, qis[i].index)
        )

    @property
    def min_class_size(self) -> int:
        """The smallest class over all QIs (k-anonymity). With pruned QIs it is exact when it is
        1 (a grouped QI has a class of one, or a pruned QI's subset does), else an upper bound
        (:attr:`bounded`)."""
        exact = min((q.min_class_size for q in self.qis if not q.pruned), default=0)
        high = min((q.bounds.min_class_high for q in self.qis if q.bounds is not None), default=exact)
        return min(exact, high) if self.n_grouped else high

    @property
    def qis_with_singletons(self) -> int:
        """QIs on which some record is unique; with pruned QIs a lower bound unless every pruned
        QI has a subset with a singleton (:attr:`bounded`)."""
        return sum(q.singletons > 0 if q.bounds is None else q.bounds.singletons_low > 0 for q in self.qis)

    @property
    def bounded(self) -> tuple[str, ...]:
        """The summary figures that are bounds, not exact values, because QIs were pruned:
        ``min_class_size`` (an upper bound) and ``qis_with_singletons`` (a lower bound)."""
        if not self.n_pruned:
            return ()
        out = []
        if self.min_class_size > 1:
            out.append("min_class_size")
        if any(q.bounds is not None and q.bounds.singletons_low == 0 for q in self.qis):
            out.append("qis_with_singletons")
        return tuple(out)

    @property
    def n_keys(self) -> int:
        return sum(q.is_key for q in self.qis)

    # -- data, tables, repr, HTML ------------------------------------------------------------

    def to_dict(self, *, histograms: bool = False) -> dict[str, Any]:
        """The documented JSON object of an audit (docs/python-api.md, JSON); ``histograms``: each
        QI's class sizes too."""
        fit = ("risk", "u", "n_exceedances", "xi", "beta")
        d: dict[str, Any] = {
            "qar_sql_version": __version__,
            **data(self, ("source", "table", "engine", "engine_version", "rows", "columns", "p", "alpha", "pi_u")),
            **data(self, ("pwm", "n_qi")),
            **(data(self.fit, fit) if self.fit else dict.fromkeys(fit) | {"n_exceedances": 0}),
            **self._interval_dicts(),
            **pick(self, ("n_keys", "k", "min_class_size", "qis_with_singletons", "prune", "n_grouped", "n_pruned")),
            "n_subsets_grouped": self.n_subsets,
            "bounds": list(self.bounded),
            **data(self, ("warnings", "column_notes", "seconds")),
            "qis": [q.to_dict(self.k, histograms) for q in self.qis],
        }
        if self.uniqueness is not None:  # qar audit --group-size
            d["uniqueness"] = self.uniqueness.block()
        return d | self._sensitivity_dict()

    def _interval_dicts(self) -> dict[str, dict[str, Any] | None]:
        """``risk_interval``, ``u_interval``, ``xi_interval``, ``beta_interval``: the tail-fit
        bands, each ``low``, ``high``, ``level``, ``method`` (a token) and ``description`` (what
        the band covers, in words), then how it was drawn (``resamples``, ``seed``, ``failed``:
        resamples without a tail) and ``widened`` (a bound moved out to the point estimate); all
        None without a tail or with ``--bootstrap 0`` (docs/uncertainty.md)."""
        iv, out = self.intervals, {}
        for name in ("risk", "u", "xi", "beta"):
            one = getattr(iv, name) if iv is not None else None
            out[f"{name}_interval"] = (
                None
                if iv is None or one is None
                else {
                    **data(one, ("low", "high", "level", "method")),
                    "description": METHOD_DESCRIPTION,
                    **pick(iv, ("resamples", "seed", "failed")),
                    "widened": name in iv.widened,
                }
            )
        return out

    def _sensitivity_dict(self) -> dict[str, Any]:
        """The measure's name (``theta``), the unique measure's T̂ where computed
        (``risk_unique``) and, where computed, how T̂ moves: without each column
        (``leave_one_column_out``, column → T̂, and ``leave_one_column_out_reasons`` for the
        nulls), with p (``risk_by_p``) and with the rows (``risk_by_rows``).
        docs/uncertainty.md, "Sensitivity"."""
        d: dict[str, Any] = {"theta": self.measure}
        if self.unique is not None:
            d["risk_unique"] = json_number(self.unique.risk)
        loco = self.leave_one_column_out
        if loco is not None:
            d["leave_one_column_out"] = {c.column: json_number(c.risk) for c in loco}
            d["leave_one_column_out_reasons"] = {c.column: c.reason for c in loco if c.reason}
        if self.risk_by_p is not None:
            d["risk_by_p"] = {str(q): json_number(v) for q, v in self.risk_by_p}
        if self.risk_by_rows is not None:
            d["risk_by_rows"] = [data(x, ("rows", "share", "risk")) for x in self.risk_by_rows]
        return d

    def plot(self, ax: Any = None, *, title: str | None = None) -> Any:
        """θ of the grouped QIs as a histogram, the threshold u and the fitted GPD tail above it,
        drawn on ``ax`` (a matplotlib Axes) or, when None, on a new figure made without pyplot
        (so the caller's backend and figures are left alone; ``ax.figure`` shows it in a
        notebook). ``title`` replaces "θ of NAME (p = …, T̂ = …)", where NAME is the table, the
        file, or for a frame e.g. "pandas DataFrame (1,000 rows)". Returns the Axes. Needs
        ``qar-sql[plot]``."""
        return plots.audit(self, ax, title)

    def summary_line(self) -> str:
        risk = format_risk(self.risk)
        return (
            f"{self.source}{f' table {self.table}' if self.table else ''}: T(p={self.p}, alpha={self.alpha:g}) = "
            f"{risk}; {self.rows:,} rows, {len(self.columns)} columns, {self.n_qi:,} QIs"
        )

    def _repr_html_(self) -> str:
        """Summary first, then the riskiest QIs and a small inline figure of the sorted θ."""
        e = html_text
        risk = "no tail (see warnings)" if self.risk is None else f"{self.risk:.4g}"
        facts = [
            ("source", self.source + (f" (table {self.table})" if self.table else "")),
            ("T̂(p, α)", risk),
            ("rows · columns · QIs", f"{self.rows:,} · {len(self.columns)} · {self.n_qi:,}"),
            ("p · α · π_u", f"{self.p} · {self.alpha:g} · {self.pi_u:g}"),
            ("smallest class · QIs that are keys", f"{self.min_class_size} · {self.n_keys}"),
        ]
        summary = "".join(f"<tr><th style='text-align:left'>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in facts)
        top = self.riskiest(HTML_ROWS)
        riskiest = self._html_table(
            {
                "columns": [", ".join(q.columns) for q in top],
                **{
                    name: [getattr(q, name) for q in top]
                    for name in ("distinct", "singletons", "theta", "min_class_size")
                },
            }
        )
        warnings = "".join(f"<li>{e(w)}</li>" for w in self.warnings[:5])
        return (
            f"<div><p><b>QaR audit</b></p><table>{summary}</table>{_theta_svg(self.theta)}"
            f"<p><b>Riskiest quasi-identifiers</b> (of {self.n_qi:,}; all: <code>.to_pandas()</code>)</p>{riskiest}"
            + (f"<ul>{warnings}</ul>" if warnings else "")
            + "</div>"
        )


@dataclass(frozen=True, repr=False)
class DemoResult(AuditResult):
    """``qar demo``'s audit of the synthetic population it wrote to ``path`` (table
    ``population``): an audit in every way, whose text also says where the population is."""

    path: str = ""

    @classmethod
    def of(cls, audit: AuditResult, path: str) -> DemoResult:
        """``audit``, of the population written to ``path``."""
        return cls(**{f.name: getattr(audit, f.name) for f in dataclasses.fields(audit)}, path=path)


def _theta_svg(theta: np.ndarray, width: int = 240, height: int = 60, points: int = 120) -> str:
    """θ of every QI, sorted descending, as a small inline line (at most ``points`` vertices,
    so the figure stays a few hundred bytes for any number of QIs)."""
    values = np.sort(np.asarray(theta, dtype=float)[np.isfinite(theta)])[::-1]
    if values.size < 2:
        return ""
    idx = np.unique(np.linspace(0, values.size - 1, min(points, values.size)).round().astype(int))
    top = values[0] if values[0] > 0 else 1.0
    xy = " ".join(f"{width * i / (values.size - 1):.1f},{height - height * values[i] / top:.1f}" for i in idx)
    return (
        f"<figure><svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' role='img' "
        f"aria-label='theta of each QI, sorted'><polyline fill='none' stroke='currentColor' points='{xy}'/>"
        f"</svg><figcaption>θ of each QI, largest first (max {values[0]:.3g})</figcaption></figure>"
    )


# -- qar compare (qar_sql.comparison) ------------------------------------------------------------

#: Metrics a ``--fail-below`` threshold may name (higher is more protective for each).
THRESHOLD_METRICS = (
    "dtc",
    "cdr",
    "hidden_rate",
    "local_cloaking",
    "correlation_protection_rate",
    "mae",
    "local_cloaking_ties",
)


@dataclass(frozen=True)
class Inference:
    """The inference attack on one target column."""

    target: str
    kind: str  # "accuracy" (categorical target) or "mae" (numeric target)
    value: float | None  # None when no record has a target value on both sides
    components: int  # axes of the projection on the other columns


@dataclass(frozen=True)
class ThetaChange:
    """One quasi-identifier's θ = distinct combinations / rows, before and after."""

    columns: tuple[str, ...]
    theta_original: float
    theta_treated: float

    @property
    def change(self) -> float:
        return self.theta_treated - self.theta_original


@dataclass(frozen=True)
class AnonymeterRisk:
    """One anonymeter evaluator's risk with its confidence interval."""

    evaluator: str  # "singling_out", "linkability", "inference"
    risk: float
    ci_low: float
    ci_high: float
    attack_rate: float
    baseline_rate: float
    detail: str = ""


@dataclass(frozen=True, eq=False)
class Distributions:
    """Per-record values behind the medians, and the first two axes, for the figures."""

    dcr: np.ndarray  # per treated record
    nndr: np.ndarray  # per treated record
    # per original record: exact up to the median, above it possibly a lower bound (the count is
    # at least that); the figure clips at the 95th percentile, which is then a lower bound too
    local_cloaking: np.ndarray | None
    original_xy: np.ndarray  # (rows × 2) first two axes (a sample when the table is large)
    treated_xy: np.ndarray


@dataclass(frozen=True, repr=False)
class CompareResult(Tabular):
    """The privacy metrics of a treated table against its original (definitions in
    docs/compare.md). Rates are fractions 0–1; None where a metric needs what was not given."""

    original: str
    treated: str
    engine_original: str
    engine_treated: str
    rows_original: int
    rows_treated: int
    columns: tuple[str, ...]
    categorical: tuple[str, ...]
    method: str  # saiph's method: famd, pca or mca
    components: int
    explained_variance: float  # share of the total variance the kept axes carry
    link: str | None  # "key:<column>", "aligned", "treatments" or None
    dtc: float
    cdr: float
    hidden_rate: float | None
    local_cloaking: float | None
    correlation_protection_rate: float | None
    attacker_columns: tuple[str, ...]
    attacker_components: int | None
    inference: Inference | None
    p: int
    risk_original: float | None
    risk_treated: float | None
    qis: tuple[ThetaChange, ...]
    anonymeter: tuple[AnonymeterRisk, ...] | None
    notes: tuple[str, ...]
    seconds: float
    distributions: Distributions | None = field(default=None, repr=False, compare=False)
    # The Avatar paper's local cloaking: treated records as close as or closer than the own one
    local_cloaking_ties: float | None = None
    impute: str = "none"  # how a missing numeric value entered the projection ("none" or "mean")
    null_tokens: tuple[str, ...] = ()  # CSV cells read as NULL (--null-token)
    missing_numeric: dict = field(default_factory=dict)  # {numeric column: NULLs in the original}

    def to_dict(self) -> dict[str, Any]:
        """The JSON document: the contract's fields first (docs/compare.md), then the context."""
        n, inf = json_number, self.inference
        return {
            **data(self, ("rows_original", "rows_treated", "components", "dtc", "cdr", "hidden_rate")),
            **data(self, ("local_cloaking", "correlation_protection_rate")),
            "inference": None if inf is None else {"target": inf.target, inf.kind: n(inf.value)},
            **data(self, ("risk_original", "risk_treated", "local_cloaking_ties", "impute", "null_tokens")),
            "missing_numeric": dict(self.missing_numeric),
            "qar_sql_version": __version__,
            **pick(self, ("original", "treated")),
            "engines": [self.engine_original, self.engine_treated],
            **data(self, ("columns", "categorical", "method", "explained_variance", "link", "attacker_columns")),
            "attacker_components": self.attacker_components,
            "inference_components": inf.components if inf else None,
            "p": self.p,
            "qis": [data(q, ("columns", "theta_original", "theta_treated")) for q in self.qis],
            "anonymeter": None
            if self.anonymeter is None
            else [
                {
                    **data(a, ("evaluator", "risk")),
                    "ci": [n(a.ci_low), n(a.ci_high)],
                    **data(a, ("attack_rate", "baseline_rate", "detail")),
                }
                for a in self.anonymeter
            ],
            **data(self, ("notes", "seconds")),
        }

    def plot(self, ax: Any = None, *, title: str | None = None) -> Any:
        """The distance of each treated record to its closest original (DCR) and their median,
        the DTC, on ``ax`` or a new pyplot-free figure, titled ``title`` if given; returns the
        Axes. Needs the comparison run with ``figures=True`` and ``qar-sql[plot]``."""
        return plots.distances(self, ax, title)

    def summary_line(self) -> str:
        risk = f"; T {format_risk(self.risk_original)} -> {format_risk(self.risk_treated)}" if self.qis else ""
        return (
            f"{self.original} vs {self.treated}: DTC = {self.dtc:.4g}, CDR = {self.cdr:.4g}, "
            f"hidden rate = {_fmt(self.hidden_rate)}{risk}"
        )

    def table_order(self) -> list[int]:
        """The QIs' positions, the riskiest of the original first."""
        return sorted(range(len(self.qis)), key=lambda i: (-self.qis[i].theta_original, self.qis[i].columns))

    def metric(self, name: str) -> float | None:
        """A metric by its ``--fail-below`` name."""
        if name == "mae":
            return self.inference.value if self.inference and self.inference.kind == "mae" else None
        return getattr(self, name)


@dataclass(frozen=True)
class ExposedValue:
    """One value combination of a QI and how exposed its records are in a group of k."""

    values: tuple  # the QI's values, column order (None for NULL)
    class_size: int  # records with these values
    exposure: float  # (1 − class_size / L)^(k − 1): each such record's chance to be unique among k


@dataclass(frozen=True)
class MarginalUniqueness:
    """The measures under independence: p from the product of one-column distributions."""

    domain: int
    kappa: float
    pi_uniform: float
    pi_kl: float
    pi_poisson: float
    pi_exact: float
    k50: int
    pi_kl_u: float | None = None  # π_u(k, M) · exp(−κ k² / M), section 4.1

    def to_dict(self) -> dict[str, Any]:
        return data(self, BIRTHDAY_MEASURES)


#: M, κ, the four π and k50 as the JSON names them: a QI's own, or its independence model's.
BIRTHDAY_MEASURES = ("domain", "kappa", "pi_uniform", "pi_kl", "pi_poisson", "pi_exact", "k50", "pi_kl_u")


@dataclass(frozen=True)
class QIUniqueness:
    """The probability that k people are all unique on one quasi-identifier (Koot et al.)."""

    index: int  # QI index (itertools.combinations order)
    columns: tuple[str, ...]
    distinct: int  # H: values observed (NULL a value)
    domain: int  # M
    kappa: float  # Σ p log(p M)
    pi_uniform: float  # M! / ((M − k)! M^k)
    pi_kl: float  # exp(−(1/2 + κ) k² / M); 0 when k > H
    pi_poisson: float  # e^(−k) Π (1 + k p)
    pi_exact: float  # k! e_k(p)
    k50: int  # largest k with pi_exact ≥ 1/2
    k_at: int  # largest k with pi_exact ≥ the target
    exposure_mean: float  # Σ p (1 − p)^(k−1): expected share of a group of k that is unique
    exposure_max: float  # (1 − p_min)^(k−1): the most exposed records' chance to be unique
    class_sizes: tuple[tuple[int, int], ...] = field(default=(), repr=False)  # (size, classes)
    monte_carlo: MonteCarlo | None = None
    marginal: MarginalUniqueness | None = None
    most_exposed: tuple[ExposedValue, ...] = ()
    pi_kl_u: float | None = None  # π_u(k, M) · exp(−κ k² / M): Koot's validated form (section 4.1)

    def to_dict(self) -> dict[str, Any]:
        """One QI of ``qar uniqueness`` (the names are a contract users' scripts read)."""
        d = data(self, ("columns", *BIRTHDAY_MEASURES, "k_at", "index", "distinct", "exposure_mean", "exposure_max"))
        if self.monte_carlo is not None:
            d["monte_carlo"] = data(self.monte_carlo, ("draws", "share", "low", "high"))
        if self.marginal is not None:
            d["marginal"] = self.marginal.to_dict()
        if self.most_exposed:
            d["most_exposed"] = [
                {"values": list(e.values), **data(e, ("class_size", "exposure"))} for e in self.most_exposed
            ]
        return d


@dataclass(frozen=True)
class UniquenessScenario:
    """The measures on a treated release (the what-if file's treatments, applied in order)."""

    name: str
    treatments: tuple[str, ...]
    rows: int
    qis: tuple[QIUniqueness, ...]  # in the order of the original's QIs


@dataclass(frozen=True, repr=False)
class UniquenessResult(Tabular):
    """``qar uniqueness``: for every QI the uniqueness probability of a group of k, riskiest
    (largest pi_exact, then largest k50) first."""

    source: str  # passwords masked
    table: str | None
    engine: str
    rows: int
    columns: tuple[str, ...]
    p: int
    group_size: int  # k
    target: float  # the probability k_at is computed for
    domain_mode: str  # "observed", "product" or "number"
    qis: tuple[QIUniqueness, ...]
    seconds: float
    from_marginals: bool = False
    monte_carlo_draws: int = 0
    seed: int | None = None
    scenarios: tuple[UniquenessScenario, ...] = ()
    warnings: tuple[str, ...] = ()

    def qi(self, columns) -> QIUniqueness:
        """The QI on exactly these columns (any order)."""
        found = [q for q in self.qis if set(q.columns) == set(columns)]
        if not found:
            raise KeyError(tuple(columns))
        return found[0]

    def block(self) -> dict[str, Any]:
        """The ``uniqueness`` block of the audit JSON, and the core of :meth:`to_dict`."""
        return {
            **data(self, ("group_size", "rows", "domain_mode", "target")),
            "qis": [q.to_dict() for q in self.qis],
        }

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON object of ``qar uniqueness`` (docs/uniqueness.md)."""
        d: dict[str, Any] = {
            "qar_sql_version": __version__,
            **data(self, ("source", "table", "engine", "columns", "p", "from_marginals")),
            "monte_carlo": self.monte_carlo_draws,
            **data(self, ("seed", "seconds", "warnings")),
        }
        d.update(self.block())
        if self.scenarios:
            d["scenarios"] = [
                {**data(s, ("name", "treatments", "rows")), "qis": [q.to_dict() for q in s.qis]} for s in self.scenarios
            ]
        return d

    def plot(self, ax: Any = None, *, n_curves: int = 3, title: str | None = None) -> Any:
        """π(k) of the ``n_curves`` riskiest QIs against the group size k (exact, KL, uniform),
        on ``ax`` or a new pyplot-free figure, titled ``title`` if given; returns the Axes.
        Needs ``qar-sql[plot]``."""
        return plots.uniqueness(self, ax, n_curves, title)

    def summary_line(self) -> str:
        top = self.qis[0] if self.qis else None
        riskiest = (
            f"; riskiest ({', '.join(top.columns)}): pi_exact = {top.pi_exact:.4g}, k50 = {top.k50}" if top else ""
        )
        return (
            f"{self.source}{f' table {self.table}' if self.table else ''}: groups of k = {self.group_size}, "
            f"{self.rows:,} rows, {len(self.qis):,} QIs (domain {self.domain_mode}){riskiest}"
        )


# --------------------------------------------------------------------------------------------
# Results as JSON data and back: what the results store keeps of a run (migration 0004), so a
# report rebuilt from it (qar report --from-store) has every section the live report had.

_NON_FINITE = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


def to_plain(obj: Any) -> Any:
    """A result as JSON-ready data, losslessly: a dataclass as the object of its fields, tuples
    as lists, a float that is not finite as the string "NaN", "Infinity" or "-Infinity" (strict
    JSON has no such numbers); :func:`from_plain` turns it back into the same result."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type) and (fields := dataclasses.fields(obj)):
        return {f.name: to_plain(getattr(obj, f.name)) for f in fields if f.init}
    if isinstance(obj, dict):
        return {str(k): to_plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple | np.ndarray):
        return [to_plain(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not np.isfinite(obj):
        return "NaN" if obj != obj else ("Infinity" if obj > 0 else "-Infinity")
    return obj


def from_plain(kind: Any, data: Any) -> Any:
    """The value of type ``kind`` (a dataclass or a type annotation) that :func:`to_plain` gave
    ``data``. A field missing from ``data`` takes its default (data written by an older qar-sql)."""
    if data is None:
        return None
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if dataclasses.is_dataclass(kind) and isinstance(kind, type):
        hints = typing.get_type_hints(kind)
        return kind(
            **{
                f.name: from_plain(hints[f.name], data[f.name])
                for f in dataclasses.fields(kind)
                if f.init and f.name in data
            }
        )
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        for i, option in enumerate(options):  # the first that fits (a dataclass needs an object)
            if dataclasses.is_dataclass(option) and not isinstance(data, dict) and i < len(options) - 1:
                continue
            return from_plain(option, data)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_plain(args[0], v) for v in data)
        return tuple(from_plain(a, v) for a, v in zip(args, data, strict=True)) if args else _tuples(data)
    if origin in (dict, typing.get_origin(typing.Mapping[str, Any])):
        key, value = args or (str, Any)
        return {from_plain(key, k): from_plain(value, v) for k, v in data.items()}
    if origin is list:
        return [from_plain(args[0] if args else Any, v) for v in data]
    if kind is float:
        return _NON_FINITE[data] if isinstance(data, str) else float(data)
    if kind is int:
        return int(data)
    if kind is tuple:
        return _tuples(data)
    if kind is np.ndarray:
        return np.asarray(data)
    return data


def _tuples(data: Any) -> Any:
    """A bare ``tuple`` field (values of any type): its lists back as tuples."""
    return tuple(_tuples(v) for v in data) if isinstance(data, list) else data


@dataclass(frozen=True, repr=False)
class Settings(Tabular):
    """``qar config``'s result: the resolved settings (:class:`qar_sql.config_file.Setting`, one row
    each in ``--format csv``, as in the JSON) and the config file they were read from
    (:class:`qar_sql.config_file.Config`; None: none found)."""

    table_at = ("settings",)  # one row per setting, its name in the column "settings"

    settings: tuple[Any, ...]
    config: Any = None
    ascii_json: typing.ClassVar[bool] = True  # qar config's JSON has always escaped non-ASCII

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``qar config`` (a contract: the file, then name → value, origin, variable)."""
        found = self.config
        return {
            "config_file": str(found.path) if found and found.path else None,
            "settings": {s.name: {"value": s.shown, "origin": s.origin, "env": s.envvar} for s in self.settings},
        }

    def summary_line(self) -> str:
        return f"{len(self.settings)} settings"


# --- qar migrate, qar scan and qar history (the store commands: qar_sql.compliance) ------------


@dataclass(frozen=True)
class MigrationState:
    """One migration as the store sees it: ``applied``, ``pending``, ``changed`` (applied, but
    the file differs now) or ``unknown`` (applied by a newer qar-sql; no such file here)."""

    version: str
    name: str
    state: str
    checksum: str | None
    applied_at: datetime | None


@dataclass(frozen=True, repr=False)
class MigrateResult(Tabular):
    table_at = ("migrations",)
    store: str  # masked
    dialect: str
    applied: tuple[str, ...]  # names applied by this call
    migrations: tuple[MigrationState, ...]  # the state afterwards

    @property
    def pending(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.migrations if m.state == "pending")

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of ``qar migrate`` (docs/compliance.md)."""
        return {
            **data(self, ("store", "dialect", "applied")),
            "migrations": [data(m, ("version", "name", "state", "checksum", "applied_at")) for m in self.migrations],
        }

    def summary_line(self) -> str:
        return f"{self.store}: {len(self.applied)} migration(s) applied, {len(self.pending)} pending"


@dataclass(frozen=True)
class ScanOutcome:
    """One scan's verdict: ``ok``, ``warn`` (above warn_above), ``fail`` (above fail_above) or
    ``error`` (the scan did not produce a risk; ``error`` says why)."""

    name: str
    table: str | None
    source: str  # masked
    status: str
    risk: float | None
    fail_above: float | None
    warn_above: float | None
    exit_code: int
    seconds: float
    error: str | None = None
    rows: int | None = None
    n_qi: int | None = None
    p: int = 3
    alpha: float = 0.01
    #: The source's name in the config ([sources.NAME]); the JUnit classname groups by it.
    source_name: str | None = None
    #: The audit itself, for the per-table HTML reports of ``qar scan --format html``.
    result: AuditResult | None = field(default=None, repr=False, compare=False)
    #: Where each setting came from (the spec's :class:`~qar_sql.precedence.Chosen`): the report names it.
    origins: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)


#: A scan's fields in ``qar scan``'s JSON, in order.
_SCAN_JSON: tuple[str, ...] = ("name", "table", "source", "status", "risk", "warn_above", "fail_above")
_SCAN_JSON += ("p", "alpha", "rows", "n_qi", "seconds", "error", "exit_code")


@dataclass(frozen=True, repr=False)
class ScanReport(Tabular):
    table_at = ("scans",)
    outcomes: tuple[ScanOutcome, ...]
    store: str | None  # masked; None when nothing was recorded
    started_at: datetime
    seconds: float
    not_run: tuple[str, ...] = ()  # scans left out by an interruption (Ctrl-C)
    notes: tuple[str, ...] = ()  # ScanConfig.notes: settings replaced or set from outside the file

    @property
    def exit_code(self) -> int:
        codes = {o.exit_code for o in self.outcomes}
        for code in (ExitCode.INTERRUPTED, ExitCode.USAGE, ExitCode.RUNTIME, ExitCode.RISK_ABOVE_THRESHOLD):
            if int(code) in codes:
                return int(code)
        return int(ExitCode.OK)

    def count(self, status: str) -> int:
        return sum(o.status == status for o in self.outcomes)

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON object of ``qar scan`` (docs/compliance.md)."""
        return {
            **data(self, ("store", "started_at", "seconds", "exit_code", "not_run")),
            "scans": [data(o, _SCAN_JSON) for o in self.outcomes],
        }

    def summary_line(self) -> str:
        counts = ", ".join(f"{self.count(s)} {s}" for s in ("ok", "warn", "fail", "error") if self.count(s))
        return f"{len(self.outcomes)} scan(s): {counts or 'none run'}; exit code {self.exit_code}"


# A point's time is never None: the overloads let the tables know their cells are text.
@typing.overload
def iso_time(t: datetime) -> str: ...
@typing.overload
def iso_time(t: None) -> None: ...
def iso_time(t: datetime | None) -> str | None:
    """A run's time as ``qar history`` writes it (to the second, a space before the time)."""
    return None if t is None else t.isoformat(sep=" ", timespec="seconds")


@dataclass(frozen=True)
class HistoryPoint:
    run_id: str
    started_at: datetime
    status: str  # complete, failed, interrupted, running
    risk: float | None
    change: float | None  # risk minus the previous complete run's risk; None for the first
    rows: int | None
    n_qi: int | None
    seconds: float | None
    error: str | None
    age_seconds: float | None = None  # running runs: seconds since they started
    pid: int | None = None
    host: str | None = None
    heartbeat_at: datetime | None = None
    gone: str | None = None  # running runs whose process is gone: why (the next run marks them)


@dataclass(frozen=True)
class Series:
    table: str | None
    source: str  # masked
    scan_name: str | None  # the latest run's scan name
    p: int
    alpha: float
    pi_u: float
    points: tuple[HistoryPoint, ...]
    columns: tuple[str, ...] | None = None  # None: no run of this series resolved its columns
    pwm: str = "plotting"
    #: How this configuration differs from the previous series of the same table, or None.
    new_configuration: str | None = None

    @property
    def label(self) -> str:
        return f"{self.scan_name or self.table or self.source} (p={self.p}, α={self.alpha:g})"

    @property
    def latest(self) -> HistoryPoint | None:
        scored = [pt for pt in self.points if pt.risk is not None]
        return scored[-1] if scored else None


@dataclass(frozen=True, repr=False)
class History(Tabular):
    table_at = ("series", "runs")  # one row per run, after its series' fields
    store: str  # masked
    series: tuple[Series, ...]

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON object of ``qar history`` (docs/compliance.md)."""
        n = json_number
        return {
            "store": self.store,
            "series": [
                {
                    **data(
                        s, ("table", "source", "scan_name", "columns", "p", "alpha", "pi_u", "pwm", "new_configuration")
                    ),
                    "latest_risk": n(s.latest.risk) if s.latest else None,
                    "latest_change": n(s.latest.change) if s.latest else None,
                    "runs": [
                        {
                            "run_id": pt.run_id,
                            "started_at": iso_time(pt.started_at),
                            **data(pt, ("status", "risk", "change", "rows", "n_qi", "seconds", "error", "age_seconds")),
                            **pick(pt, ("pid", "host")),
                            "heartbeat_at": iso_time(pt.heartbeat_at),
                            "process_gone": pt.gone,
                        }
                        for pt in s.points
                    ],
                }
                for s in self.series
            ],
        }

    def summary_line(self) -> str:
        runs = sum(len(s.points) for s in self.series)
        return f"{self.store}: {len(self.series)} series, {runs} run(s)"
