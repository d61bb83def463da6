"""The risk trend per table over the runs in a results store (``qar history``).

A series is one table from one source audited with one configuration: the same quasi-identifier
columns and the same p, α, π_u and PWM estimator. Only those risks are comparable; a change of
configuration starts a new series, which says what changed. Failed, interrupted and running runs
appear in a series (they are evidence too) but carry no risk: each joins the series of the
latest complete run before it with the same table and parameters. The change is against the
previous complete run of the same series. A running run shows its age.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from qar_sql.compliance import liveness
from qar_sql.compliance.store import StoredRun, runs, using
from qar_sql.errors import UsageError
from qar_sql.results import History, HistoryPoint, Series


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


def _point(r: StoredRun, risk: float | None, change: float | None, now: datetime) -> HistoryPoint:
    running = r.status == "running"
    gone = liveness.gone_reason(r.pid, r.host, r.heartbeat_at or r.started_at, now) if running else None
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
    with using(store) as st:
        st.require()
        rows = runs(st)
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
            points.append(_point(r, risk, change, now))
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
        known = sorted({r.table for r in rows if r.table} | {r.scan_name for r in rows if r.scan_name})
        if known:
            hint = f"tables and scans in the store: {', '.join(known[:10])}"
        elif rows:  # (a file source has no table)
            hint = "its runs are of sources with no table (files); leave --table out"
        else:
            hint = "the store has no runs yet"
        raise UsageError(f"no runs of table {table!r} in store {st.display}; {hint}")
    return History(st.display, tuple(series))
