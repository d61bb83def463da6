"""The risk trend per table over the runs in a results store (``qar history``).

A series is one table from one source audited with one configuration: the same quasi-identifier
columns and the same p, α, π_u and PWM estimator. Only those risks are comparable; a change of
configuration starts a new series, which says what changed. Failed, interrupted and running runs
appear in a series (they are evidence too) but carry no risk: each joins the series of the
latest complete run before it with the same table and parameters. The change is against the
previous complete run of the same series. A running run shows its age.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, overload

from qar_sql.compliance import liveness
from qar_sql.compliance.store import StoredRun, open_store, runs
from qar_sql.errors import UsageError
from qar_sql.results import Tabular, attribute_columns


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
    store: str  # masked
    series: tuple[Series, ...]

    def table_columns(self) -> dict[str, list]:
        """One row per run, series by series, oldest first: the series label, then the run."""
        rows = [(s, pt) for s in self.series for pt in s.points]
        names = ("run_id", "started_at", "status", "risk", "change", "rows", "n_qi", "seconds", "error")
        return {
            "series": [s.label for s, _ in rows],
            "table": [s.table for s, _ in rows],
            **attribute_columns([pt for _, pt in rows], names),
        }

    def summary_line(self) -> str:
        runs = sum(len(s.points) for s in self.series)
        return f"{self.store}: {len(self.series)} series, {runs} run(s)"


def _params(r: StoredRun) -> tuple:
    prm = r.parameters
    return (r.source, r.table, prm.get("p"), prm.get("alpha"), prm.get("pi_u"), prm.get("pwm", "plotting"))


def _config(r: StoredRun) -> tuple:
    """A complete run's configuration: table, source, parameters and its resolved columns."""
    return _params(r) + (tuple(r.columns),)


def _group(rows: list[StoredRun]) -> dict[tuple, list[StoredRun]]:
    """Runs by configuration. A run that did not complete has no resolved columns (it may have
    failed before resolving them): it joins the configuration of the latest complete run before
    it with the same table and parameters (else the first after it), else one of its own."""
    groups: dict[tuple, list[StoredRun]] = {}
    complete = [r for r in rows if r.status == "complete"]
    for r in complete:
        groups.setdefault(_config(r), []).append(r)
    for r in rows:
        if r.status == "complete":
            continue
        same = [c for c in complete if _params(c) == _params(r)]
        before = [c for c in same if (c.started_at, c.run_id) <= (r.started_at, r.run_id)]
        home = before[-1] if before else (same[0] if same else None)
        key = _config(home) if home is not None else _params(r) + (None,)
        groups.setdefault(key, []).append(r)
    for rs in groups.values():
        rs.sort(key=lambda r: (r.started_at, r.run_id))
    return groups


def _what_changed(old: Series, new: Series) -> str:
    """One phrase: how ``new``'s configuration differs from ``old``'s."""
    parts = []
    if old.columns is not None and new.columns is not None and old.columns != new.columns:
        added = [c for c in new.columns if c not in old.columns]
        removed = [c for c in old.columns if c not in new.columns]
        what = f"{len(old.columns)} → {len(new.columns)} columns"
        if added:
            what += " (+" + ", +".join(added[:5]) + (" …" if len(added) > 5 else "") + ")"
        if removed:
            what += " (−" + ", −".join(removed[:5]) + (" …" if len(removed) > 5 else "") + ")"
        if not added and not removed:
            what = "the same columns in another order"
        parts.append(what)
    for name, a, b in (("p", old.p, new.p), ("α", old.alpha, new.alpha), ("π_u", old.pi_u, new.pi_u)):
        if a != b:
            parts.append(f"{name} {a:g} → {b:g}")
    if old.pwm != new.pwm:
        parts.append(f"pwm {old.pwm} → {new.pwm}")
    return "; ".join(parts) or "another configuration"


def _point(r: StoredRun, change: float | None, now: datetime) -> HistoryPoint:
    risk = r.risk if r.status == "complete" else None
    running = r.status == "running"
    gone = None
    if running:
        gone = liveness.gone_reason(r.pid, r.host, r.heartbeat_at or r.started_at, now)
    return HistoryPoint(
        r.run_id,
        r.started_at,
        r.status,
        risk,
        change,
        r.rows,
        r.n_qi,
        r.seconds,
        r.error,
        age_seconds=(now - r.started_at).total_seconds() if running else None,
        pid=r.pid,
        host=r.host,
        heartbeat_at=r.heartbeat_at,
        gone=gone,
    )


def history(store: str | None = None, *, table: str | None = None) -> History:
    """The runs in ``store`` grouped into series, oldest run first. ``table`` keeps the series
    whose table (or scan name) is exactly that."""
    st = open_store(store)
    try:
        rows = runs(st)
    finally:
        st.close()
    now = liveness.now()
    series = []
    for key, rs in _group(rows).items():
        source, tbl, p, alpha, pi_u, pwm, columns = key
        if table is not None and table != tbl and table not in {r.scan_name for r in rs}:
            continue
        points: list[HistoryPoint] = []
        previous: float | None = None
        for r in rs:
            risk = r.risk if r.status == "complete" else None
            change = None if risk is None or previous is None else risk - previous
            points.append(_point(r, change, now))
            if risk is not None:
                previous = risk
        series.append(Series(tbl, source, rs[-1].scan_name, p, alpha, pi_u, tuple(points), columns, pwm))
    # Per table and source, series in the order their configurations were first used; each
    # after the first says what changed.
    series.sort(key=lambda s: (s.table or "", s.source, s.points[0].started_at, s.points[0].run_id))
    for i in range(1, len(series)):
        old, new = series[i - 1], series[i]
        if (old.table, old.source) == (new.table, new.source):
            series[i] = replace(new, new_configuration=_what_changed(old, new))
    if table is not None and not series:
        known = sorted({r.table for r in rows if r.table})
        hint = f"tables in the store: {', '.join(known[:10])}" if known else "the store has no runs yet"
        raise UsageError(f"no runs of table {table!r} in store {st.display}; {hint}")
    return History(st.display, tuple(series))


# --------------------------------------------------------------------------------------------
# Output


# A point's time is never None: the overloads let the tables know their cells are text.
@overload
def _iso(t: datetime) -> str: ...
@overload
def _iso(t: None) -> None: ...
def _iso(t: datetime | None) -> str | None:
    return None if t is None else t.isoformat(sep=" ", timespec="seconds")


def history_dict(h: History) -> dict[str, Any]:
    from qar_sql.output.formats import _num

    return {
        "store": h.store,
        "series": [
            {
                "table": s.table,
                "source": s.source,
                "scan_name": s.scan_name,
                "columns": None if s.columns is None else list(s.columns),
                "p": s.p,
                "alpha": s.alpha,
                "pi_u": s.pi_u,
                "pwm": s.pwm,
                "new_configuration": s.new_configuration,
                "latest_risk": _num(s.latest.risk) if s.latest else None,
                "latest_change": _num(s.latest.change) if s.latest else None,
                "runs": [
                    {
                        "run_id": pt.run_id,
                        "started_at": _iso(pt.started_at),
                        "status": pt.status,
                        "risk": _num(pt.risk),
                        "change": _num(pt.change),
                        "rows": pt.rows,
                        "n_qi": pt.n_qi,
                        "seconds": _num(pt.seconds),
                        "error": pt.error,
                        "age_seconds": _num(pt.age_seconds),
                        "pid": pt.pid,
                        "host": pt.host,
                        "heartbeat_at": _iso(pt.heartbeat_at),
                        "process_gone": pt.gone,
                    }
                    for pt in s.points
                ],
            }
            for s in h.series
        ],
    }


def _g(x: float | None) -> str:
    return "—" if x is None else f"{x:.6g}"


def _signed(x: float | None) -> str:
    return "—" if x is None else f"{x:+.6g}"


def _status(pt: HistoryPoint) -> str:
    """``running (12 min)``; with a gone process or a silent heartbeat, says so."""
    if pt.status != "running" or pt.age_seconds is None:
        return pt.status
    notes = [liveness.age(pt.age_seconds)]
    if pt.gone is not None and pt.pid is not None and "process" in pt.gone:
        notes.append(f"process {pt.pid} is gone")
    elif pt.gone is not None:
        notes.append("no heartbeat")
    return f"running ({'; '.join(notes)})"


def history_text(h: History, markdown: bool = False) -> str:
    if not h.series:
        return f"No runs in {h.store} yet; record one with qar audit … --store or qar scan.\n"
    lines = [f"## Risk history in `{h.store}`" if markdown else f"Risk history in {h.store}"]
    for s in h.series:
        lines += ["", f"### {s.label}" if markdown else f"{s.label} — {s.source}"]
        notes = []
        if s.new_configuration:
            notes.append(f"New configuration, a new series: {s.new_configuration}.")
        if s.columns is not None:
            notes.append(f"Columns ({len(s.columns)}): {', '.join(s.columns)}")
        if markdown and notes:
            lines += ["", "  \n".join(notes)]  # a Markdown line break between the notes
        else:
            lines += [f"  {n}" for n in notes]
        head = ("when (UTC)", "status", "risk", "change", "rows")
        rows = [
            (
                _iso(pt.started_at),
                _status(pt),
                _g(pt.risk),
                _signed(pt.change),
                "—" if pt.rows is None else f"{pt.rows:,}",
            )
            for pt in s.points
        ]
        if markdown:
            lines += ["", "| " + " | ".join(head) + " |", "|---|---|---:|---:|---:|"]
            lines += ["| " + " | ".join(r) + " |" for r in rows]
        else:
            widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
            lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(head, widths)).rstrip())
            lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(lines) + "\n"


def plot(h: History, path: str | Path) -> Path:
    """Write the trend (risk over time, one line per series) as PNG or SVG, chosen by suffix.
    matplotlib is the optional extra ``qar-sql[plot]``."""
    path = Path(path)
    if path.suffix.lower() not in (".png", ".svg"):
        raise UsageError(f"plot file {str(path)!r} must end in .png or .svg")
    from qar_sql.output.canvas import new_figure

    fig = new_figure("the trend plot", figsize=(8, 4.5))
    ax = fig.subplots()
    drawn = 0
    for s in h.series:
        pts = [pt for pt in s.points if pt.risk is not None]
        if pts:
            ax.plot([pt.started_at for pt in pts], [pt.risk for pt in pts], marker="o", label=s.label)
            drawn += 1
    if not drawn:
        raise UsageError(f"store {h.store} has no complete run with a risk to plot yet")
    ax.set_ylabel("QaR risk T̂(p, α)")
    ax.set_xlabel("run (UTC)")
    ax.set_title("Re-identification risk over time")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    fig.autofmt_xdate()
    fig.tight_layout()
    fig.savefig(path)
    return path
