"""``progress=`` of the Python API (issue 28, item 3): a callable gets (done, total) as before;
``True`` draws tqdm's bar (``tqdm.auto``) when the ``progress`` extra is installed, else qar's own
text progress — the click bar the commands draw on a terminal; False or None draw nothing; any
other value is one sentence (exit 2)."""

from __future__ import annotations

import importlib.util
import os
import pty
import subprocess
import sys

import duckdb
import pytest
from conftest import IN_CI, REPO

import qar_sql
from qar_sql.demo import write_population
from qar_sql.errors import ParameterError

COLUMNS = ["age", "sex", "postcode", "region", "education", "occupation"]
HAS_TQDM = importlib.util.find_spec("tqdm") is not None


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("progress") / "demo.duckdb"
    con = duckdb.connect(str(path))
    write_population(con, "population", n=500, seed=1)
    con.close()
    return str(path)


def audit(demo: str, progress):
    return qar_sql.audit(demo, table="population", columns=COLUMNS, p=2, progress=progress)


def test_a_callable_gets_done_and_total_as_before(demo):
    ticks: list[tuple[int, int]] = []
    r = audit(demo, lambda done, total: ticks.append((done, total)))
    assert ticks and ticks[-1][0] == ticks[-1][1]  # it ends at total
    assert all(0 < d <= t for d, t in ticks)
    assert r.risk == audit(demo, None).risk  # progress changes no number


def test_false_and_none_draw_nothing(demo, capsys):
    audit(demo, False)
    audit(demo, None)
    assert capsys.readouterr().err == ""


def test_another_value_is_one_sentence(demo):
    with pytest.raises(ParameterError, match=r"progress='yes' is not a progress; give True"):
        audit(demo, "yes")


@pytest.mark.skipif(not HAS_TQDM, reason="tqdm (pip install 'qar-sql[progress]') is not installed here")
def test_true_draws_tqdms_bar(demo, capsys):
    r = audit(demo, True)
    err = capsys.readouterr().err
    # tqdm.auto outside Jupyter is tqdm's text bar on stderr: "audit: 100%|██████████| 2/2 [...]"
    assert "audit: 100%|" in err and "2/2" in err
    assert r.risk == audit(demo, None).risk
    for name in ("discover", "uniqueness"):  # one wrapper for every function that takes progress
        fn = getattr(qar_sql, name)
        extra = {"group_size": 5, "p": 2} if name == "uniqueness" else {"max_size": 2}
        fn(demo, table="population", columns=COLUMNS, progress=True, **extra)
        assert f"{name}: 100%|" in capsys.readouterr().err


def test_true_without_tqdm_draws_qars_own_bar(demo):
    """Without tqdm, qar's text progress: on a terminal (a pty here), click's bar."""
    if not HAS_TQDM:
        python = sys.executable
    else:
        python = os.environ.get("QAR_TEST_BASE_PYTHON", "")  # the base venv has no tqdm
        if not os.path.exists(python):
            why = "tqdm is installed here and QAR_TEST_BASE_PYTHON (a venv without it) is not set"
            if IN_CI:
                pytest.fail(why)
            pytest.skip(why)
    code = (
        "import qar_sql; "
        f"r = qar_sql.audit({demo!r}, table='population', columns={COLUMNS!r}, p=2, progress=True); "
        "print(r.risk)"
    )
    leader, follower = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([python, "-c", code], stderr=follower, stdout=subprocess.PIPE, text=True, env=env)
    os.close(follower)
    err = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        err += chunk
    os.close(leader)
    assert proc.returncode == 0
    text = err.decode("utf-8", "replace")
    assert "audit" in text and "2/2" in text and "%|" not in text  # click's bar, not tqdm's
