"""What ``qar anonymize`` returns: the chosen node, how it was found, the frontier of loss against
T̂, and what a user takes away (the release as SQL, the treatments file).

The JSON object (docs/anonymize.md) is a contract: ``levels`` (column → level, QI order),
``labels``, ``suppressed``, ``scores`` (metric → ARX's value), ``metric``, ``k``, ``risk``,
``optimal``, ``nodes``, ``evaluated``, ``seconds``, ``frontier`` (rows of levels, scores, risk).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from qar_sql import plots
from qar_sql.errors import UsageError
from qar_sql.results import Tabular, flat, json_number, pick
from qar_sql.stats.interval import Interval


@dataclass(frozen=True)
class Node:
    """One node's figures: its levels (QI order), records suppressed, smallest class of the
    release, every metric's score and T̂ of its release (None: not measured, or no tail)."""

    levels: tuple[int, ...]
    suppressed: int
    k: int
    scores: Mapping[str, float]
    risk: float | None = None


@dataclass(frozen=True)
class LocalVariant:
    """Pastore's local recoding of a node: only the records unique on the QID in the source are
    generalized to its levels; nothing is suppressed."""

    levels: tuple[int, ...]
    modified: int
    singletons: int
    k: int
    risk: float | None
    meets: bool


@dataclass(frozen=True, repr=False)
class AnonymizeResult(Tabular):
    source: str
    table: str | None
    engine: str
    rows: int
    qi: tuple[str, ...]
    #: Each QI column's level labels, every level (``labels[i][level]``).
    level_labels: tuple[tuple[str, ...], ...]
    metric: str
    #: The privacy models asked for, as given (k, l, l_kind, c, t, t_kind, sensitive,
    #: no_singletons, risk_below, suppression_limit).
    models: Mapping[str, Any]
    chosen: Node | None
    optimal: bool
    nodes: int
    evaluated: int
    anonymous: int | None
    seconds: float
    #: The sensitive column's diversity and closeness in the release (None: not asked).
    l_value: float | None = None
    t_value: float | None = None
    risk_band: Interval | None = None  # the audit's tail-fit band of T̂ (docs/uncertainty.md)
    risk_note: str | None = None
    audit_columns: tuple[str, ...] = ()
    p: int | None = None
    alpha: float | None = None
    theta: str = "distinct"
    #: Nodes whose T̂ was measured, in the order the search measured them.
    measured: int = 0
    #: (subset, levels) pairs scanned for θ, and what measuring every node alone would scan.
    subsets_scanned: int = 0
    frontier: tuple[Node, ...] = ()
    local: LocalVariant | None = None
    release_sql: str = ""
    treatments: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    #: No node met every target: what the search got closest to, in words (the lowest T̂ it
    #: measured, or the fewest records a node leaves failing the models); None when one did.
    reached: str | None = None

    table_at = ("frontier",)

    def table_rows(self, data: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The frontier's nodes; the chosen node alone when no T̂ was measured (no frontier), so
        the table is never empty while a node was chosen."""
        chosen = {k: data.get(k) for k in ("levels", "suppressed", "k", "scores", "risk")}
        return super().table_rows(data) or ([flat(chosen)] if self.chosen is not None else [])

    @property
    def levels(self) -> dict[str, int] | None:
        return None if self.chosen is None else dict(zip(self.qi, self.chosen.levels))

    @property
    def labels(self) -> dict[str, str] | None:
        if self.chosen is None:
            return None
        return {c: self.level_labels[i][v] for i, (c, v) in enumerate(zip(self.qi, self.chosen.levels))}

    @property
    def risk(self) -> float | None:
        return None if self.chosen is None else self.chosen.risk

    def summary_line(self) -> str:
        if self.chosen is None:
            return f"{self.source}: no node of {self.nodes:,} meets the targets"
        shown = ", ".join(f"{c}={v}" for c, v in zip(self.qi, self.chosen.levels))
        return f"{self.source}: levels {shown}, {self.chosen.suppressed:,} records suppressed, k = {self.chosen.k}"

    def plot(self, ax: Any = None, *, title: bool | str = False) -> Any:
        """The frontier of loss against T̂ (:func:`qar_sql.plots.frontier`) on ``ax`` (None: a new
        figure's), titled ``title`` when it is a text or "NAME: loss against T̂" when True;
        matplotlib is the extra ``qar-sql[plot]``. The figure's layout is left as it is (its own
        is constrained; a caller's ``ax`` keeps the caller's). A search that measured no T̂ (no
        ``risk_below``, no ``risk=True``) has no point to draw and is refused."""
        if not any(n.risk is not None for n in (*self.frontier, *([self.chosen] if self.chosen else []))):
            raise UsageError(
                "the frontier plot draws T̂ of the release, which this search did not measure; "
                "pass risk_below= (or risk=True to measure the chosen node)"
            )
        ax = plots.frontier(self, ax)
        if isinstance(title, str):
            ax.set_title(title, fontsize=10)
        elif title:
            ax.set_title(
                f"{plots.literal(plots.readable_name(self.source, self.table, self.rows))}: loss against T̂", fontsize=10
            )
        return ax

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON object of ``qar anonymize`` (docs/anonymize.md)."""
        c = self.chosen

        def node(n: Any, *middle: str) -> dict[str, Any]:
            return {"levels": dict(zip(self.qi, n.levels)), **pick(n, middle)}

        def scores(n: Node) -> dict[str, float | None]:
            return {m: json_number(v) for m, v in n.scores.items()}

        out: dict[str, Any] = {
            **pick(self, ("source", "table", "engine", "rows")),
            "qid": list(self.qi),
            "models": dict(self.models),
            "levels": self.levels,
            "labels": self.labels,
            "suppressed": None if c is None else c.suppressed,
            "scores": None if c is None else scores(c),
            "metric": self.metric,
            "k": None if c is None else c.k,
            "l": json_number(self.l_value),
            "t": json_number(self.t_value),
            **pick(self, ("optimal", "nodes", "evaluated", "anonymous", "seconds")),
            "frontier": [
                {**node(n, "suppressed", "k"), "scores": scores(n), "risk": json_number(n.risk)} for n in self.frontier
            ],
            "warnings": list(self.warnings),
        }
        if self.p is not None:
            band = None if self.risk_band is None else asdict(self.risk_band)
            out |= {"risk": json_number(self.risk), "risk_interval": band, "risk_note": self.risk_note}
            out |= {"audit_columns": list(self.audit_columns)}
            out |= pick(self, ("p", "alpha", "theta", "measured", "subsets_scanned"))
        if self.local is not None:
            v = self.local
            out["local"] = {**node(v, "modified", "singletons", "k"), "risk": json_number(v.risk), "meets": v.meets}
        return out


def pareto(nodes: Sequence[Node], metric: str) -> tuple[Node, ...]:
    """The nodes no other beats on both the loss ``metric`` and T̂ (lower is better on both; a
    node without T̂ is left out), by increasing loss."""
    ranked = sorted((n for n in nodes if n.risk is not None), key=lambda n: (n.scores[metric], n.risk, n.levels))
    out: list[Node] = []
    for n in ranked:
        assert n.risk is not None
        if not out or n.risk < (out[-1].risk or math.inf):
            out.append(n)
    return tuple(out)
