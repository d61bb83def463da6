"""The influence statement: Σ_j g_j U_j(r) per record, rendered for one dialect.

Its own module because both the influence ranking and the audit-time capture render it, and
neither should import the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from qar_sql.engines.render import render
from qar_sql.pushdown.scan import QIBatch, combinations


@dataclass(frozen=True)
class Weight:
    index: int
    g: str  # repr of the float: full precision in SQL


def render_influence(
    dialect,
    relation_sql,
    columns,
    p,
    order_by,
    g: np.ndarray,
    *,
    limit: int | None,
    positive_only=True,
    codes_table: str | None = None,
    pairs_table: str | None = None,
    key_join: Sequence[str] = (),
) -> str:
    """The influence statement; over ``codes_table`` (a DuckDB temp table of codes with r)
    when given, else with the codes in a CTE. With ``pairs_table`` the (qi, r) singleton pairs
    are read from that table; with ``key_join`` (r is DuckDB's rowid) ties break by those key
    columns of ``relation_sql`` and the result carries them."""
    combos = combinations(len(columns), p)
    nz = np.flatnonzero(g)
    qis = [QIBatch(int(j), tuple(f"c{i}" for i in combos[j])) for j in nz]
    weights = [Weight(int(j), repr(float(g[j]))) for j in nz]
    # Where the statement reads the codes: the temp table, or the CTE that makes them.
    if codes_table:
        codes = {"encode_sql": None, "encoded": dialect.quote(codes_table)}
    else:
        encode_sql = render("encode.sql", dialect, columns=list(columns), relation=relation_sql, order_by=order_by)
        codes = {"encode_sql": encode_sql, "encoded": "encoded"}
    return render(
        "influence.sql", dialect, **codes, qis=qis, weights=weights, limit=limit, positive_only=positive_only,
        pairs_table=pairs_table, key_join=list(key_join), relation=relation_sql,
    )  # fmt: skip
