"""``qar discover``'s result as text (its JSON, docs/treatments.md, is
:meth:`~qar_sql.measures.discovery.DiscoverResult.to_dict`, and its Markdown that JSON's)."""

from __future__ import annotations

from collections.abc import Sequence

from qar_sql.measures.discovery import Combination, DiscoverResult
from qar_sql.output.registry import renders
from qar_sql.output.render_audit import render_result


def _pct(c: Combination) -> str:
    return f"{100 * c.singleton_share:.2f}%"


@renders(DiscoverResult, "text")
def render_discover(r: DiscoverResult, fmt: str, top: int | None = 20) -> str:
    return render_result(_discover_text(r, r.combinations[:top] if top else r.combinations), r.warnings)  # --top 0: all


def _discover_text(r: DiscoverResult, shown: Sequence[Combination]) -> list[str]:
    best = r.best
    lines = [
        f"Quasi-identifiers of {r.table or r.source} ({r.engine}, {r.seconds:.2f} s)",
        "",
        f"  rows                {r.rows:,}",
        f"  columns             {len(r.columns)}: {', '.join(r.columns)}",
        f"  combinations        {len(r.combinations):,} scanned of sizes 1..{r.max_size}, {r.skipped:,} skipped (supersets of identifiers)",
        f"  NULLs               {'rows with NULL in a combination left out of it' if r.drop_null else 'a value of their own'}",
        f"  best QID            {', '.join(r.best_qid) or 'none (no combination has a singleton)'}"
        + (f" ({best.singletons:,} singletons, {_pct(best)}, {best.distinct:,} distinct)" if best else ""),
        f"  identifiers         {'; '.join(', '.join(i) for i in r.identifiers) or 'none'}",
        "",
        f"  {'singletons':>10}  {'%S':>7}  {'distinct':>9}  {'rows':>9}  {'min class':>9}  columns",
    ]
    for c in shown:
        flag = "  (identifier)" if c.identifier else ""
        lines.append(
            f"  {c.singletons:>10,}  {_pct(c):>7}  {c.distinct:>9,}  {c.rows:>9,}  {c.min_class_size:>9,}  {', '.join(c.columns)}{flag}"
        )
    if len(shown) < len(r.combinations):
        lines.append(f"  … {len(r.combinations) - len(shown):,} more (use --top or --format json)")
    return lines
