"""The Python API given values of the wrong type (the third hostile round): one QarError
sentence naming the value, never a raw TypeError/ValueError; numpy integers (what a
DataFrame's columns hold) are whole numbers; a comma-separated string of columns means what
``--columns age,sex`` means on the command line."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import qar_sql
from qar_sql.cli.main import cli
from qar_sql.errors import ParameterError, QarError


@pytest.fixture
def people():
    rng = np.random.default_rng(5)
    return pd.DataFrame(
        {
            "id": range(80),
            "age": rng.integers(20, 30, 80),
            "sex": rng.choice(["F", "M"], 80),
            "zip": rng.choice(["a", "b", "c", "d"], 80),
            "diagnosis": rng.choice(["flu", "cold"], 80),
        }
    )


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda df: qar_sql.audit(df, alpha="0.01", p=2, pi_u=0.3), "alpha = '0.01' is text"),
        (lambda df: qar_sql.audit(df, pi_u="0.3", p=2), "pi_u = '0.3' is text"),
        (lambda df: qar_sql.whatif(df, treatments=None), "treatments = None"),
        (
            lambda df: qar_sql.uniqueness(df, group_size=2, p=1, monte_carlo=10, seed=-1),
            "seed=-1 is not a whole number of at least 0",
        ),
        (
            lambda df: qar_sql.uniqueness(df, group_size=2, p=1, monte_carlo=10, seed="x"),
            "seed='x' is text; pass a number",
        ),
        (lambda df: qar_sql.uniqueness(df, group_size=2, p=1, target="0.5"), "target probability '0.5' is text"),
        (lambda df: qar_sql.audit(df, columns=3, p=1), "columns=3 must name columns"),
        (lambda df: qar_sql.risk(df, columns=["age", "sex"], population=np.int64(20)), "population=20 must"),
    ],
)
def test_a_value_of_the_wrong_type_is_one_sentence(people, call, words):
    with pytest.raises(QarError) as err:
        call(people)
    assert words in str(err.value)
    assert "np.int64" not in str(err.value)


def test_numpy_integers_are_whole_numbers(people):
    r = qar_sql.uniqueness(
        people, group_size=np.int64(2), p=np.int64(1), monte_carlo=np.int64(20), seed=np.int64(3), columns=["age"]
    )
    plain = qar_sql.uniqueness(people, group_size=2, p=1, monte_carlo=20, seed=3, columns=["age"])
    assert r.qis[0].monte_carlo == plain.qis[0].monte_carlo


def test_a_comma_separated_string_of_columns_is_split_as_on_the_command_line(people):
    listed = qar_sql.audit(people, columns=["age", "sex", "zip"], p=2, pi_u=0.4)
    text = qar_sql.audit(people, columns="age, sex,zip", p=2, pi_u=0.4)
    assert text.columns == listed.columns == ("age", "sex", "zip")
    assert text.risk == listed.risk
    assert qar_sql.audit(people, exclude="id,diagnosis", p=2, pi_u=0.4).columns == ("age", "sex", "zip")
    r = qar_sql.uniqueness(people, group_size=2, qid="age,sex")
    assert r.qis[0].columns == ("age", "sex")
    r = qar_sql.risk(people, columns="age,sex", sensitive="diagnosis")
    assert r.qis[0].columns == ("age", "sex") and r.sensitive == ("diagnosis",)
    with pytest.raises(QarError, match="names no column"):
        qar_sql.audit(people, columns=" , ", p=1)


def test_integer_labels_of_a_frame_name_its_columns(people):
    """pd.read_csv(header=None) labels columns 0, 1, ...; DuckDB reads them as '0', '1', ...:
    columns=[1, 2] was refused as "columns=1 must name columns"."""
    frame = people.drop(columns="id").set_axis(range(4), axis=1)
    by_int = qar_sql.audit(frame, columns=[0, 1, np.int64(2)], p=2, pi_u=0.4)
    by_text = qar_sql.audit(frame, columns=["0", "1", "2"], p=2, pi_u=0.4)
    assert by_int.columns == by_text.columns == ("0", "1", "2")
    assert by_int.risk == by_text.risk
    assert qar_sql.audit(frame, exclude=[3], p=2, pi_u=0.4).columns == ("0", "1", "2")
    with pytest.raises(QarError, match="columns=True must name columns"):
        qar_sql.audit(frame, columns=[True], p=1)


def test_uniqueness_seed_minus_one_on_the_command_line(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,2\n3,4\n5,6\n", encoding="utf-8")
    r = CliRunner().invoke(cli, ["uniqueness", str(path), "-p", "1", "-g", "2", "--monte-carlo", "5", "--seed", "-1"])
    assert r.exit_code == 2, r.output
    assert (
        r.stderr.splitlines()[-1]
        == "Error: Invalid value for '--seed' (env var: 'QAR_SEED'): -1 is not in the range x>=0."
    )


@pytest.mark.parametrize("command", ["audit", "risk", "uniqueness", "records", "discover"])
def test_two_rows_raise_no_numpy_warning(tmp_path, command):
    """A 2-row table (the smallest a command takes): an answer or one sentence, never a raw
    numpy RuntimeWarning on stderr (uniqueness and audit --group-size printed "divide by zero
    encountered in log1p" for the constant column b: an exposure of (1 − 1)^(k−1))."""
    path = tmp_path / "two.csv"
    path.write_text("id,a,b\n1,x,1\n2,y,1\n", encoding="utf-8")
    extra = {
        "audit": ["-p", "1", "-x", "id", "--group-size", "2", "--pi-u", "0.9", "--alpha", "0.5"],
        "risk": ["-c", "a,b"],
        "uniqueness": ["-p", "1", "-g", "2", "-x", "id"],
        "records": ["-p", "1", "--key", "id"],
        "discover": ["-x", "id"],
    }[command]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = CliRunner().invoke(
            cli, [command, str(path), *extra, "-q"] if command != "risk" else [command, str(path), *extra]
        )
    assert r.exit_code in (0, 1, 2), r.output
    assert "unexpected" not in r.output and "RuntimeWarning" not in r.output, r.output


def test_parameter_error_is_a_qar_error():
    assert issubclass(ParameterError, QarError)


@pytest.mark.parametrize("name", ["audit", "eliminate", "records", "discover", "risk"])
def test_a_bad_keyword_is_named_as_the_caller_wrote_it(people, name):
    """qar_sql.eliminate(..., jobs=0) and records said "--jobs 0 ...": the check that stands in
    for click's types named the flag (its error alone was not written as keywords)."""
    with pytest.raises(QarError) as err:
        getattr(qar_sql, name)(people, jobs=0)
    assert str(err.value).startswith("jobs=0 is not a whole number from 1 to 64"), str(err.value)
