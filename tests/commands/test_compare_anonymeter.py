"""``qar compare --anonymeter`` against anonymeter itself, run on the same tables read by pandas.

anonymeter (the ``qar-sql[anonymeter]`` extra) pins ``numpy < 1.27`` and ``pyarrow < 22``, below what
the rest of the suite runs on, so it is not in the ``dev`` extra. The test runs ``qar compare`` in
a Python that has it: this one when anonymeter is importable here, else the one named by
``QAR_TEST_ANONYMETER_PYTHON`` (``scripts/test.sh`` makes a virtual environment with the extra,
seeing the suite's other packages, and sets it). Under ``CI=true`` a missing anonymeter fails.

The independent computation: the oracle script below reads both CSV files with pandas and calls
anonymeter's three evaluators with the same parameters; its risks and confidence intervals must
equal those qar reports after reading the files through DuckDB and Arrow. Every original record
is attacked (attacks = rows), so the linkability and inference draws cannot differ; the
singling-out queries come from the same seed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import IN_CI, REPO

ROWS = 150

ORACLE = """
import json, sys, warnings
import numpy as np
import pandas as pd
from anonymeter.evaluators import InferenceEvaluator, LinkabilityEvaluator, SinglingOutEvaluator

ori_path, syn_path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
numeric = ["age", "income"]

def frame(path):
    df = pd.read_csv(path)
    return pd.DataFrame(
        {c: df[c].astype(float) if c in numeric else df[c].fillna("NULL").astype(str) for c in df.columns}
    )

ori, syn = frame(ori_path), frame(syn_path)
cols = list(ori.columns)
out = {}
np.random.seed(0)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    so = SinglingOutEvaluator(ori=ori, syn=syn, n_attacks=n, n_cols=3, seed=0).evaluate(mode="multivariate")
    out["singling_out"] = so.risk()
    lk = LinkabilityEvaluator(
        ori=ori, syn=syn, aux_cols=(["age", "sex"], ["region", "income", "diagnosis"]), n_attacks=n, n_neighbors=1
    ).evaluate(n_jobs=1)
    out["linkability"] = lk.risk()
    inf = InferenceEvaluator(
        ori=ori, syn=syn, aux_cols=[c for c in cols if c != "diagnosis"], secret="diagnosis", n_attacks=n
    ).evaluate(n_jobs=1)
    out["inference"] = inf.risk()
print(json.dumps({k: [float(r.value), float(r.ci[0]), float(r.ci[1])] for k, r in out.items()}))
"""


def anonymeter_python() -> str:
    if importlib.util.find_spec("anonymeter") is not None:
        return sys.executable
    python = os.environ.get("QAR_TEST_ANONYMETER_PYTHON")
    if python:
        return python
    why = (
        "anonymeter is not installed here and QAR_TEST_ANONYMETER_PYTHON is not set "
        "(pip install 'qar-sql[anonymeter]', or run scripts/test.sh, which makes a venv with it)"
    )
    if IN_CI:
        pytest.fail(why)
    pytest.skip(why)


def write_pair(tmp_path) -> tuple[str, str]:
    """A small original and a perturbed release, row i made from row i, with NULLs."""
    rng = np.random.default_rng(7)
    age = rng.integers(20, 70, ROWS)
    sex = rng.choice(["F", "M"], ROWS).astype(object)
    sex[::13] = None
    region = rng.choice(["north", "south", "east", "west"], ROWS)
    income = np.round(rng.normal(30, 8, ROWS), 1)
    diagnosis = np.where(age + rng.normal(0, 10, ROWS) > 45, "sick", "well")
    t_age = age + rng.integers(-3, 4, ROWS)
    t_region = np.where(rng.random(ROWS) < 0.8, region, "north")
    t_income = np.round(income + rng.normal(0, 3, ROWS), 1)
    paths = []
    for name, cols in (
        ("original.csv", (age, sex, region, income, diagnosis)),
        ("release.csv", (t_age, sex, t_region, t_income, diagnosis)),
    ):
        lines = ["age,sex,region,income,diagnosis"]
        lines += [",".join("" if v is None else str(v) for v in row) for row in zip(*cols)]
        (tmp_path / name).write_text("\n".join(lines) + "\n")
        paths.append(str(tmp_path / name))
    return paths[0], paths[1]


def test_anonymeter_risks_equal_anonymeter_on_the_same_frames(tmp_path):
    python = anonymeter_python()
    original, release = write_pair(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(REPO)}  # this checkout's qar_sql
    qar = subprocess.run(
        [
            python,
            "-c",
            "from qar_sql.cli.main import cli; cli()",
            "compare",
            original,
            release,
            "--aligned",
            "--attacker-columns",
            "age,sex",
            "--target",
            "diagnosis",
            "--no-risk",
            "--anonymeter",
            "--anonymeter-attacks",
            str(ROWS),
            "-f",
            "json",
            "-q",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=900,
    )
    assert qar.returncode == 0, qar.stderr
    got = {a["evaluator"]: a for a in json.loads(qar.stdout)["anonymeter"]}
    oracle = subprocess.run(
        [python, "-c", ORACLE, original, release, str(ROWS)], capture_output=True, text=True, env=env, timeout=900
    )
    assert oracle.returncode == 0, oracle.stderr
    want = json.loads(oracle.stdout.strip().splitlines()[-1])
    assert set(got) == set(want) == {"singling_out", "linkability", "inference"}
    for name, (risk, low, high) in want.items():
        a = got[name]
        assert [a["risk"], *a["ci"]] == pytest.approx([risk, low, high], abs=1e-12), name
        assert 0 <= a["ci"][0] <= a["risk"] <= a["ci"][1] <= 1
