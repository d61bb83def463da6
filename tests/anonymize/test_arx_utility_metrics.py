"""ARX's loss metrics node for node: the 361 values of TestUtilityMetrics.java on adult that
qar's models and metrics cover (arx_utility_metrics.json, extracted by
_extract_arx_utility_cases.py): AECS, non-monotonic Discernibility, entropy (monotonic and not),
Loss (per column, ARX's RANK aggregate lists them sorted) and non-monotonic Precision, under
k-anonymity, hierarchical t-closeness and recursive (c, l)-diversity on occupation, with and
without a 5% suppression limit. ARX scores a node's release with the violating classes
suppressed whether or not the node is within the limit; so do these checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qar_sql.anonymization import metrics
from qar_sql.anonymization.evaluate import evaluator
from qar_sql.anonymization.hierarchy import read_hierarchy_dir
from qar_sql.anonymization.models import KAnonymity, RecursiveCLDiversity, TCloseness
from tests.anonymize.fixtures import (
    ADULT_HIERARCHIES,
    ENGINES,
    need_adult,
)

CASES = json.loads((Path(__file__).parent / "arx_utility_metrics.json").read_text())


def _models(spec, occupation):
    out = []
    for m in spec:
        if m[0] == "k":
            out.append(KAnonymity(k=m[1]))
        elif m[0] == "t_hier":
            out.append(TCloseness(sensitive="occupation", t=m[1], kind="hierarchical", hierarchy=occupation))
        elif m[0] == "l_recursive":
            out.append(RecursiveCLDiversity(sensitive="occupation", c=m[1], l=m[2]))
        else:  # pragma: no cover - the extractor keeps only these
            raise AssertionError(m)
    return out


def test_the_cases_are_all_there():
    assert sum(len(c["nodes"]) for c in CASES["cases"]) == 361


@pytest.mark.parametrize("engine", ENGINES)
def test_every_node_as_arx(adult, engine):
    need_adult()
    hs = read_hierarchy_dir(ADULT_HIERARCHIES)
    occupation = hs.pop("occupation")
    session = adult(engine)
    checked = 0
    for case in CASES["cases"]:
        with evaluator(session, hs, _models(case["models"], occupation)) as ev:
            assert list(ev.qi) == CASES["qi"]
            nodes = [tuple(n) for n, _ in case["nodes"]]
            for (_, want), e in zip(case["nodes"], ev.evaluate(nodes, values=True)):
                if case["metric"] == "loss_rank":
                    got = sorted(metrics._loss_columns(ev.domain, e.levels, e.classes), reverse=True)
                    assert got == pytest.approx(json.loads(want), abs=1e-9), (case, e.levels)
                else:
                    got = metrics.score(case["metric"], ev.domain, e.levels, e.classes)
                    assert got == pytest.approx(float(want), rel=1e-9), (case, e.levels)
                checked += 1
    assert checked == 361
