"""Render ``qar history`` (:class:`~qar_sql.results.History`): text and the trend plot (its JSON
is :meth:`~qar_sql.results.History.to_dict`, its Markdown that JSON's). No database code here: the series are built by :mod:`qar_sql.compliance.history`."""

from __future__ import annotations

from pathlib import Path

from qar_sql.errors import UsageError
from qar_sql.output.canvas import new_figure
from qar_sql.output.readable_numbers import dash
from qar_sql.output.registry import renders
from qar_sql.plots import literal
from qar_sql.results import History, HistoryPoint, iso_time
from qar_sql.user_text import one_line


def age(seconds: float) -> str:
    """``3 h 05 min``, ``12 min``, ``40 s``: how long ago, for people."""
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes:02d} min"
    return f"{hours // 24} d {hours % 24} h"


def _status(pt: HistoryPoint) -> str:
    """``running (12 min)``; with a gone process or a silent heartbeat, says so."""
    if pt.status != "running" or pt.age_seconds is None:
        return pt.status
    notes = [age(pt.age_seconds)]
    if pt.gone is not None and pt.pid is not None and "process" in pt.gone:
        notes.append(f"process {pt.pid} is gone")
    elif pt.gone is not None:
        notes.append("no heartbeat")
    return f"running ({'; '.join(notes)})"


def history_text(h: History) -> str:
    if not h.series:
        return f"No runs in {one_line(h.store)} yet; record one with qar audit … --store or qar scan.\n"
    lines = [f"Risk history in {one_line(h.store)}"]  # (a store's name or a source may hold a line break)
    head = ("when (UTC)", "status", "risk", "change", "rows")
    for s in h.series:
        lines += ["", f"{one_line(s.label)} — {one_line(s.source)}"]
        if s.new_configuration:
            lines.append(f"  New configuration, a new series: {s.new_configuration}.")
        if s.columns is not None:
            lines.append(f"  Columns ({len(s.columns)}): {one_line(', '.join(s.columns))}")
        rows = [
            (
                iso_time(pt.started_at),
                _status(pt),
                dash(pt.risk),
                dash(pt.change, "+.6g"),
                "—" if pt.rows is None else f"{pt.rows:,}",
            )
            for pt in s.points
        ]
        widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
        lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [head, *rows]]
    return "\n".join(lines) + "\n"


def plot_history(h: History, path: str | Path) -> Path:
    """Write the trend (risk over time, one line per series) as PNG or SVG, chosen by suffix.
    matplotlib is the optional extra ``qar-sql[plot]``."""
    path = Path(path)
    if path.suffix.lower() not in (".png", ".svg"):
        raise UsageError(f"plot file {str(path)!r} must end in .png or .svg")
    fig = new_figure("the trend plot", figsize=(8, 4.5))
    ax = fig.subplots()
    drawn = 0
    for s in h.series:
        pts = [pt for pt in s.points if pt.risk is not None]
        if pts:
            ax.plot([pt.started_at for pt in pts], [pt.risk for pt in pts], marker="o", label=literal(s.label))
            drawn += 1
    if not drawn:
        raise UsageError(f"store {h.store} has no complete run with a risk to plot yet")
    ax.set_ylabel("QaR risk T̂(p, α)")
    ax.set_xlabel("run (UTC)")
    ax.set_title("Re-identification risk over time")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    fig.autofmt_xdate()
    fig.savefig(path)
    return path


@renders(History, "text")
def render_history(h: History, fmt: str) -> str:
    return history_text(h)
