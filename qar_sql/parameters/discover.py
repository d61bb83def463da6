"""The parameters of ``qar discover`` (:func:`qar_sql.discover`, :mod:`qar_sql.commands.discover`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from qar_sql.errors import ParameterError, shown


@dataclass(frozen=True, kw_only=True)
class DiscoverParams:
    """The parameters of ``qar discover`` (:mod:`qar_sql.measures.discovery`): the one place
    their defaults and the rules between them live; the click options and
    :func:`qar_sql.discover` take their defaults from here. Checked when made, before any
    connection."""

    columns: Sequence[str] | None = None
    exclude: Sequence[str] | None = None
    max_size: int = 3
    drop_null: bool = False
    batch_size: int | None = None
    jobs: int = 2

    def __post_init__(self) -> None:
        max_size, batch_size = self.max_size, self.batch_size
        if not isinstance(max_size, int) or isinstance(max_size, bool) or max_size < 1:
            raise ParameterError(f"--max-size {shown(max_size)} must be a whole number of at least 1, e.g. 3")
        if batch_size is not None and batch_size < 1:
            raise ParameterError(f"--batch-size {batch_size} must be at least 1")
