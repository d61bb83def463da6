"""The risk trend per table over the runs in a results store (``qar history``).

A series is one table audited with the same source and parameters (p, α, π_u): only those risks
are comparable. Failed and running runs appear in a series (they are evidence too) but carry no
risk; the change is against the previous complete run with a risk.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from qar_sql.compliance.store import StoredRun, open_store, runs
from qar_sql.errors import UsageError


@dataclass(frozen=True)
class HistoryPoint:
    run_id: str
    started_at: datetime
    status: str  # complete, failed, running
    risk: float | None
    change: float | None  # risk minus the previous complete run's risk; None for the first
    rows: int | None
    n_qi: int | None
    seconds: float | None
    error: str | None


@dataclass(frozen=True)
class Series:
    table: str | None
    source: str  # masked
    scan_name: str | None  # the latest run's scan name
    p: int
    alpha: float
    pi_u: float
    points: tuple[HistoryPoint, ...]

    @property
    def label(self) -> str:
        return f"{self.scan_name or self.table or self.source} (p={self.p}, α={self.alpha:g})"

    @property
    def latest(self) -> HistoryPoint | None:
        scored = [pt for pt in self.points if pt.risk is not None]
        return scored[-1] if scored else None


@dataclass(frozen=True)
class History:
    store: str  # masked
    series: tuple[Series, ...]


def _key(r: StoredRun) -> tuple:
    prm = r.parameters
    return (r.source, r.table, prm.get("p"), prm.get("alpha"), prm.get("pi_u"))


def history(store: str | None = None, *, table: str | None = None) -> History:
    """The runs in ``store`` grouped into series, oldest run first. ``table`` keeps the series
    whose table (or scan name) is exactly that."""
    st = open_store(store)
    try:
        rows = runs(st)
    finally:
        st.close()
    groups: dict[tuple, list[StoredRun]] = {}
    for r in rows:
        groups.setdefault(_key(r), []).append(r)
    series = []
    for (source, tbl, p, alpha, pi_u), rs in groups.items():
        if table is not None and table != tbl and table not in {r.scan_name for r in rs}:
            continue
        points, previous = [], None
        for r in rs:
            risk = r.risk if r.status == "complete" else None
            change = None if risk is None or previous is None else risk - previous
            points.append(
                HistoryPoint(r.run_id, r.started_at, r.status, risk, change, r.rows, r.n_qi, r.seconds, r.error)
            )
            if risk is not None:
                previous = risk
        series.append(Series(tbl, source, rs[-1].scan_name, p, alpha, pi_u, tuple(points)))
    series.sort(key=lambda s: (s.table or "", s.source, s.p, s.alpha, s.pi_u))
    if table is not None and not series:
        known = sorted({r.table for r in rows if r.table})
        hint = f"tables in the store: {', '.join(known[:10])}" if known else "the store has no runs yet"
        raise UsageError(f"no runs of table {table!r} in store {st.display}; {hint}")
    return History(st.display, tuple(series))


# --------------------------------------------------------------------------------------------
# Output


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
                "p": s.p,
                "alpha": s.alpha,
                "pi_u": s.pi_u,
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


def history_text(h: History, markdown: bool = False) -> str:
    if not h.series:
        return f"No runs in {h.store} yet; record one with qar audit … --store or qar scan.\n"
    lines = [f"## Risk history in `{h.store}`" if markdown else f"Risk history in {h.store}"]
    for s in h.series:
        lines += ["", f"### {s.label}" if markdown else f"{s.label} — {s.source}"]
        head = ("when (UTC)", "status", "risk", "change", "rows")
        rows = [
            (
                _iso(pt.started_at),
                pt.status,
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
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only; never open a window
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise UsageError("the trend plot needs matplotlib; install it with: pip install 'qar-sql[plot]'") from exc
    fig, ax = plt.subplots(figsize=(8, 4.5))
    try:
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
    finally:
        plt.close(fig)
    return path
