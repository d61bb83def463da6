"""``qar_sql.records``: the record-level functions behind one name, as ``qar records`` is one
command. Calling it gives the exact contributions; its attributes are the three rankings."""

from __future__ import annotations

import inspect

from qar_sql.measures.classic import suda
from qar_sql.ranking.influence import influence
from qar_sql.ranking.records import contributions


class Records:
    """``qar_sql.records(source, key=…, …)`` is :func:`qar_sql.ranking.records.contributions`
    (exact DT, U+, U*, n_unique per record); ``qar_sql.records.contributions``,
    ``.influence`` (``qar records --by influence``) and ``.suda`` (``--by suda``, a
    :class:`~qar_sql.measures.classic.SudaRecords`) are the functions themselves, so the dotted
    spelling of the first module path keeps working."""

    # The function itself as __call__: one signature, typed once (contributions'), and shown
    # whole by inspect/help (which would otherwise drop ``source`` as if it were ``self``).
    __call__ = staticmethod(contributions)
    __signature__ = inspect.signature(contributions)
    contributions = staticmethod(contributions)
    influence = staticmethod(influence)
    suda = staticmethod(suda)

    def __repr__(self) -> str:
        return "<qar_sql.records: records(source, key=...), .contributions, .influence, .suda>"


records = Records()
