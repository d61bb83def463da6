"""``qar_sql.records``: the record-level functions behind one name, as ``qar records`` is one
command. Calling it gives the exact contributions; its attributes are the three rankings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Unpack

import numpy as np

from qar_sql.engines.source import SourceLike
from qar_sql.measures import classic
from qar_sql.measures.audit import SourceOptions
from qar_sql.measures.classic import SudaResult, suda_order
from qar_sql.pushdown.record_keys import ROW_KEY
from qar_sql.ranking.influence import influence
from qar_sql.ranking.records import Contributions, contributions
from qar_sql.results import Tabular


@dataclass(frozen=True, repr=False)
class SudaRecords(Tabular):
    """``qar records --by suda`` as a result: SUDA and DIS-SUDA of every record (``suda``, in
    source order), the ``key`` names and the key values fetched (the 1,000 highest scores, or
    every record with ``all_keys``)."""

    suda: SudaResult
    key: tuple[str, ...]
    keys: dict[int, tuple] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        return int(self.suda.score.size)

    def order(self) -> np.ndarray:
        """Record positions by SUDA score, highest first; ties by key order."""
        return suda_order(self.suda)

    def table_columns(self) -> dict[str, list]:
        """One row per record whose key was fetched, highest SUDA score first: the key, the
        SUDA and DIS-SUDA scores and the number of minimal sample uniques of each size."""
        order = [int(r) for r in self.order() if int(r) in self.keys]
        out: dict[str, list] = {"record": order}
        if self.key != (ROW_KEY,):
            for i, name in enumerate(self.key):
                out[name] = [self.keys[r][i] for r in order]
        out["suda"] = self.suda.score[order].tolist()
        out["dis_suda"] = self.suda.dis_score[order].tolist()
        for k in range(self.suda.max_size):
            out[f"msu_{k + 1}"] = self.suda.msu_counts[order, k].tolist()
        return out

    def summary_line(self) -> str:
        risky = int(np.count_nonzero(self.suda.score))
        return (
            f"{self.rows:,} records, {risky:,} with a minimal sample unique of up to {self.suda.max_size} of "
            f"{len(self.suda.columns)} key columns; {self.suda.uniques:,} unique on all"
        )


def suda(
    source: SourceLike = None,
    *,
    table: str | None = None,
    columns: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    key: Sequence[str] | None = None,
    max_size: int | None = None,
    missing: str = "value",
    sampling_fraction: float | None = None,
    population: int | None = None,
    delimiter: str | None = None,
    all_text: bool = False,
    all_keys: bool = False,
    jobs: int = 2,
) -> SudaRecords:
    """SUDA and DIS-SUDA of every record (:func:`qar_sql.measures.classic.suda`) as a result
    with tables, a short ``repr`` and a notebook view."""
    result, key_names, keys = classic.suda(
        source,
        table=table,
        columns=columns,
        exclude=exclude,
        key=key,
        max_size=max_size,
        missing=missing,
        sampling_fraction=sampling_fraction,
        population=population,
        delimiter=delimiter,
        all_text=all_text,
        all_keys=all_keys,
        jobs=jobs,
    )
    return SudaRecords(result, key_names, keys)


class Records:
    """``qar_sql.records(source, key=…, …)`` is :func:`qar_sql.ranking.records.contributions`
    (exact DT, U+, U*, n_unique per record); ``qar_sql.records.contributions``,
    ``.influence`` (``qar records --by influence``) and ``.suda`` (``--by suda``) are the
    functions themselves, so the spelling of the original module path keeps working."""

    contributions = staticmethod(contributions)
    influence = staticmethod(influence)
    suda = staticmethod(suda)

    def __call__(
        self,
        source: SourceLike = None,
        *,
        key: Sequence[str] | None = None,
        top: int | None = 100,
        by: str = "dt",
        all_keys: bool = False,
        **options: Unpack[SourceOptions],
    ) -> Contributions:
        return contributions(source, key=key, top=top, by=by, all_keys=all_keys, **options)

    def __repr__(self) -> str:
        return "<qar_sql.records: records(source, key=...), .contributions, .influence, .suda>"


records = Records()
