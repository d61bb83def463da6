"""``qar discover``: find the quasi-identifiers of a source (Pastore, Pellegrino & Scarano 2020;
METHOD.md §5); the algorithm is :mod:`qar_sql.measures.discovery`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qar_sql import cli_options
from qar_sql.command import SOURCE, Command, api_function
from qar_sql.parameters.measures import DiscoverParams
from qar_sql.parameters.needs import Needs

if TYPE_CHECKING:  # numpy-backed: loaded when discover runs, not when `qar --help` loads
    from qar_sql.engines.session import Session
    from qar_sql.measures.discovery import DiscoverResult
    from qar_sql.pushdown.scan import Progress

NAME = "discover"
Params = DiscoverParams
DOC = """Singletons, %S, distinct values and smallest class of every combination of 1 …
    ``max_size`` columns, identifiers pruned with their supersets, and the best QID.
"""


def run(session: Session, params: DiscoverParams, progress: Progress | None = None) -> DiscoverResult:
    """Every combination of 1 … ``params.max_size`` columns of the session's relation."""
    from qar_sql.measures.discovery import discover_relation

    return discover_relation(session, params, progress)


COMMAND: Command[DiscoverParams, DiscoverResult] = Command(
    name=NAME,
    Params=DiscoverParams,
    run=run,
    help="""Find the quasi-identifiers of SOURCE: singletons, %S, distinct values and smallest
    class of every combination of 1 … --max-size columns; identifiers (every row unique) and
    the best QID (the smallest combination with the most singletons).

    Supersets of an identifier are identifiers too and are not scanned.
    """,
    doc=DOC,
    source=tuple(n for n in SOURCE if n != "all_text"),
    outputs={
        "top": cli_options.top(20, "Combinations listed in text and Markdown (0: all); JSON lists all.", minimum=0),
        "fmt": cli_options.fmt,
        "quiet": cli_options.quiet,
    },
    emits=("top",),
    only={
        "top": Needs(
            unused_with=("fmt=json", "fmt=csv"), why="it caps the lists of text and Markdown; JSON and CSV list all"
        )
    },
    progress="combinations",
    order=tuple("table columns exclude delimiter null_tokens max_size drop_null top fmt jobs batch_size quiet".split()),
)

discover = api_function(COMMAND)
