"""Every record's scores to a file (``qar records --output FILE.csv|FILE.parquet``): its key
columns, then the scores, in key order. CSV floats at full precision (their repr), a text cell
that a spreadsheet would run as a formula with a leading ``'`` (:func:`~qar_sql.user_text.csv_row`);
Parquet written by an in-memory DuckDB."""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence

import numpy as np

from qar_sql.errors import ParameterError
from qar_sql.user_text import csv_row


def write_parquet(path: str, names: Sequence[str], keys: Sequence[tuple], **scores: np.ndarray) -> None:
    """Key columns and score arrays to Parquet, written by an in-memory DuckDB."""
    import duckdb

    data = {n: np.array([k[i] for k in keys], dtype=object) for i, n in enumerate(names)}
    data.update(scores)
    con = duckdb.connect()
    try:
        con.register("scores", data)
        con.execute("copy (select * from scores) to " + "'" + path.replace("'", "''") + "' (format parquet)")
    finally:
        con.close()


def write_scores(c, path: str) -> None:
    """Every record's DT, U+, U* and n_unique (a :class:`~qar_sql.ranking.records.Contributions`
    with every key fetched), in key order, to CSV or Parquet."""
    names = list(c.key)
    keys = [c.key_of(r) for r in range(c.rows)]
    if path.lower().endswith(".csv"):
        with open(path, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(csv_row(names + ["dt", "u_plus", "u_star", "n_unique"]))
            for r in range(c.rows):
                w.writerow(
                    csv_row(keys[r])
                    + [repr(float(c.dt[r])), repr(float(c.u_plus[r])), repr(float(c.u_star[r])), int(c.n_unique[r])]
                )
        return
    if path.lower().endswith(".parquet"):
        write_parquet(path, names, keys, dt=c.dt, u_plus=c.u_plus, u_star=c.u_star, n_unique=c.n_unique)
        return
    raise ParameterError(f"--output {path!r} must end in .csv or .parquet")


def write_influence(inf, keys: Mapping[int, tuple], path: str) -> None:
    """Every record's influence score (an :class:`~qar_sql.ranking.influence.Influence` with
    ``scores``), with ``keys`` (record position → key values), to CSV or Parquet."""
    names = list(inf.key)
    ordered = [keys[r] for r in range(inf.audit.rows)]
    if path.lower().endswith(".csv"):
        with open(path, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(csv_row(names + ["influence"]))
            for r in range(inf.audit.rows):
                w.writerow(csv_row(ordered[r]) + [repr(float(inf.scores[r]))])
    else:
        write_parquet(path, names, ordered, influence=inf.scores)
