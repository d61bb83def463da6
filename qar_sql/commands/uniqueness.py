"""``qar_sql.uniqueness``: the uniqueness probability of every QI of a source and, with a
what-if treatments file, of each treated release (the paper's Figure 4: κ and π before and after
a recoding such as age in bands of 2 or 5).

It lives beside the what-if because the treated releases are the what-if's: each scenario is
a SELECT over the source (:func:`qar_sql.treat.treatments.treated_sql`), measured through
:func:`qar_sql.treat.whatif.release` like any table. Nothing is copied or written.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from qar_sql.engines.source import SourceLike, open_source, resolve_source
from qar_sql.errors import DataError
from qar_sql.measures.uniqueness import UniquenessOptions, uniqueness_relation
from qar_sql.progress import with_progress
from qar_sql.pushdown.scan import Progress
from qar_sql.results import UniquenessResult, UniquenessScenario
from qar_sql.secrets import mask_source
from qar_sql.treat.treatments import Binder, Plan, load, treated_sql
from qar_sql.treat.whatif import release, scenario_name, scenarios_of


@with_progress("uniqueness")
def uniqueness(
    source: SourceLike = None,
    *,
    group_size: int,
    table: str | None = None,
    columns: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    qid: Sequence[str] | None = None,
    p: int = 3,
    target: float = 0.5,
    domain: str | int = "observed",
    from_marginals: bool = False,
    monte_carlo: int = 0,
    seed: int | None = None,
    treatments: str | Path | Plan | Mapping | None = None,
    exposed: int = 5,
    exposed_qis: int = 1,
    delimiter: str | None = None,
    batch_size: int | None = None,
    jobs: int = 2,
    threads: int | None = None,
    progress: Progress | None = None,
    null_tokens: Sequence[str] = (),
) -> UniquenessResult:
    """For every p-subset of ``columns`` (default: all but ``exclude``), or the one QI
    ``qid``: if ``group_size`` people reveal these columns, the probability that every one of
    them is unique (Koot et al. 2011) — exact, uniform, Kullback-Leibler and Poisson — with
    κ, k50 and the largest k at which the probability still reaches ``target``.

    ``domain``: "observed" (M = values seen), "product" (M = product of the columns' value
    counts) or a whole number. ``from_marginals``: also the independence model built from
    one-column distributions. ``monte_carlo``: simulated groups per QI (seeded by ``seed``).
    ``treatments``: a what-if file (path, TOML text, dict or Plan); each of its treatments and
    combinations is measured too, as ``result.scenarios``.
    """
    started = time.perf_counter()
    opts = UniquenessOptions(
        group_size, columns, exclude, qid, p, target, domain, from_marginals, monte_carlo, seed, exposed, exposed_qis,
        batch_size, jobs, progress,
    )  # fmt: skip
    opts.check()
    plan = load(treatments) if treatments is not None else None
    db, relation = open_source(source, table=table, delimiter=delimiter, threads=threads, null_tokens=null_tokens)
    # A treated release: the same QIs and measures, without the extras of the source's report.
    release_opts = replace(
        opts, from_marginals=False, monte_carlo=0, seed=None, exposed=0, exposed_qis=1, progress=None
    )
    with db:
        result = uniqueness_relation(db, relation, opts, started=started, source=mask_source(resolve_source(source)))
        scenarios = []
        if plan is not None:
            binder = Binder(db, relation.sql, relation.columns, plan, display=relation.display)
            order = {q.index: i for i, q in enumerate(result.qis)}
            for names in scenarios_of(plan):
                sql = treated_sql(binder, relation.sql, names, modified=False)
                with release(db, sql, relation) as (runner, treated):
                    try:
                        after = uniqueness_relation(runner, treated, release_opts)
                    except DataError as exc:
                        raise DataError(f"treatment {scenario_name(names)!r}: {exc}") from exc
                qis = tuple(sorted(after.qis, key=lambda q: order[q.index]))
                scenarios.append(UniquenessScenario(scenario_name(names), tuple(names), after.rows, qis))
        return replace(result, scenarios=tuple(scenarios), seconds=time.perf_counter() - started)
