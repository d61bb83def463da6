"""Options that would be ignored are errors (docs/limits.md): every option of every command that
reads a table, given a valid value other than its default, either changes what the run prints
or writes (stdout, the files it writes) or is refused (exit 2, one sentence naming it).

Generated over the click command tree, not a list: each option's value comes from its click
type (a flag set, a choice's other word, a number beside the default, a column's name, a file
in a folder), with the few overrides a type cannot tell (:data:`VALUES`). The run is compared
with the same run without the option (times and dates masked). The options whose effect is not
in the output are listed in :data:`NOT_IN_OUTPUT` with the reason, and those with an observable
effect elsewhere have their own test below. The relation that refuses an option is declared
once (``Needs`` in :mod:`qar_sql.parameters.needs`, checked by :mod:`qar_sql.command`).
"""

from __future__ import annotations

import re
import types
from pathlib import Path

import click
import duckdb
import pytest
from click.testing import CliRunner

import qar_sql
from qar_sql import commands
from qar_sql.cli.main import cli
from qar_sql.command import Command
from tests.cli.test_checks_before_rows import COMMANDS, TABLE_COMMANDS, Files, base_args

COLUMNS = ("id", "age", "sex", "zip", "job", "edu", "race", "income", "disease")
SKIPPED = {"log_level", "verbose", "help"}
#: Options whose effect is no part of what the run prints or writes, with the reason.
NOT_IN_OUTPUT = {
    "quiet": "the progress bar and stage lines on stderr (tests/test_progress.py)",
    "batch_size": "QIs per statement: the same result in fewer or more statements (test below)",
    "store": "the run recorded in the store (test below)",
}
#: Options the base run gives already (its required ones), or whose effect this small table cannot
#: show, with the reason.
SHOWN_ELSEWHERE = {
    ("eliminate", "key"): "the base run's (records are ranked by it)",
    ("records", "key"): "the base run's",
    ("report", "key"): "the base run's",
    ("report", "output"): "the base run's (the report is compared there)",
    ("whatif", "treatments"): "the base run's",
    ("anonymize", "hierarchies"): "--hierarchy age=FILE of the base run wins over a folder's (docs/anonymize.md); "
    "tests/anonymize reads folders",
    ("anonymize", "drop_null"): "the base run's QI (age) has no NULL: interval levels refuse one (tests/anonymize)",
}
#: Values a click type cannot tell, by (command or "*", option name): the arguments to add.
VALUES: dict[tuple[str, str], list[str]] = {
    ("*", "table"): [],  # (the base run names the table: another is refused as not found)
    ("*", "columns"): ["-c", "age,sex,zip,job,edu"],
    ("*", "exclude"): ["-x", "id,disease,race"],
    ("*", "delimiter"): ["--delimiter", ";"],
    ("*", "null_tokens"): ["--null-token", "NA"],
    ("*", "key"): ["--key", "id"],
    ("*", "sensitive"): ["--sensitive", "disease"],
    ("*", "qid"): ["--qid", "age,sex"],
    ("*", "top"): ["--top", "2"],
    ("*", "row_subsamples"): ["--row-subsamples", "0.5"],
    ("*", "hierarchy"): ["--hierarchy", "zip=H"],
    ("*", "treatments"): ["-T", "T"],
    ("*", "orders"): ["--order", "sex=1,0"],
    ("*", "by"): ["--by", "u_plus"],
    ("*", "max_removed"): ["--max", "10%"],
    ("*", "store"): ["--store", "S"],
    ("*", "sampling_fraction"): ["--sampling-fraction", "0.5"],
    ("*", "population"): ["--population", "600"],
    ("*", "target"): ["--target", "disease"],
    ("*", "attacker_columns"): ["--attacker-columns", "age,sex"],
    ("*", "categorical"): ["--categorical", "sex"],
    ("*", "components"): ["--components", "age:2"],
    ("*", "combine"): ["--combine", "age5+zip10"],
    ("*", "only"): ["--only", "age5"],
    ("*", "apply_"): ["--apply", "age5"],
    ("*", "view"): ["--view", "v"],
    ("*", "domain"): ["--domain", "sex=3"],
    ("*", "compare_dt"): ["--compare-dt"],
    ("whatif", "key"): ["--key", "id"],
    ("anonymize", "hierarchies"): ["--hierarchies", "D"],
    ("anonymize", "qid"): ["--qid", "age"],
    ("anonymize", "k"): ["--k", "3"],
    ("anonymize", "l"): ["--l", "2", "--sensitive", "disease"],
    ("anonymize", "sensitive"): ["--sensitive", "race"],
    ("migrate", "to"): ["--to", "0001"],
}


def _table(path: Path) -> str:
    con = duckdb.connect(str(path))
    values = ", ".join(
        f"hash(i, {n}) % {m} as {c}" for n, (c, m) in enumerate(zip(COLUMNS[1:], (40, 2, 30, 9, 5, 6, 11, 4)))
    )
    con.execute(f"create table base as select i as id, {values} from range(300) t(i)")
    # (some NULLs, for --drop-null and --missing)
    con.execute(
        "create view people as select * replace (case when id % 37 = 0 then null else zip end as zip) from base"
    )
    con.close()
    return str(path)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Files:
    tmp = tmp_path_factory.mktemp("ignored")
    (tmp / "treat.toml").write_text(
        'qid = "q"\n[qis]\nq = ["age", "sex", "zip"]\n[treatments.age5]\ncolumn = "age"\nkind = "bands"\nwidth = 5\n'
        '[treatments.zip10]\ncolumn = "zip"\nkind = "bands"\nwidth = 10\n'
    )
    (tmp / "h.toml").write_text("[hierarchies.age]\nwidths = [5, 10, 20]\norigin = 0\n")
    (tmp / "hz.toml").write_text("[hierarchies.zip]\nwidths = [5, 10]\norigin = 0\n")
    (tmp / "out").mkdir()
    (tmp / "dir").mkdir()
    (tmp / "dir" / "x_hierarchy_age.csv").write_text("".join(f"{a};{a // 10 * 10}\n" for a in range(40)))
    source = _table(tmp / "people.duckdb")
    return Files(source, source, str(tmp / "treat.toml"), str(tmp / "h.toml"), "", str(tmp / "out"), str(tmp / "dir"))


def value_of(name: str, param: click.Option, f: Files, out: Path) -> list[str]:
    """A valid value of ``param`` other than its default, as arguments."""
    given = VALUES.get((name, param.name)) or VALUES.get(("*", param.name))  # type: ignore[arg-type]
    if given is not None:
        swap = {"H": str(Path(f.hierarchies).with_name("hz.toml")), "T": f.treatments, "D": f.missing}
        return [swap.get(a, str(out.parent / "store.duckdb") if a == "S" else a) for a in given]
    flag = param.opts[0]
    if param.is_flag:
        return [param.secondary_opts[0] if param.secondary_opts and param.default else flag]
    kind, default = param.type, param.default
    if isinstance(kind, click.Choice):
        return [flag, next(c for c in kind.choices if c != default)]
    if isinstance(kind, click.Path):
        suffix = {"plot": ".png", "plot_path": ".png", "output": ".toml" if name == "anonymize" else ".html"}
        return [flag, str(out / f"{param.name}{suffix.get(param.name, '.csv')}")]
    if isinstance(kind, click.types.IntParamType | click.IntRange):
        number = default + 1 if isinstance(default, int) and not isinstance(default, bool) else 3
        return [flag, str(number)]
    if isinstance(kind, click.types.FloatParamType | click.FloatRange):
        return [flag, str(default / 2 if isinstance(default, float) and default else 0.5)]
    return [flag, "age"]


def _masked(text: str) -> str:
    """``text`` without what differs from run to run: times, dates, temporary names."""
    text = re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+(\+\d\d:\d\d)?", "DATE", text)
    text = re.sub(r'"(seconds|elapsed)": [\d.e-]+', r'"\1": T', text)
    return re.sub(r"\d+(\.\d+)? ?(s|ms|seconds)\b", "T", text)


def _run(args: list[str], out: Path) -> tuple[int, str]:
    for old in out.iterdir():
        old.unlink()
    r = CliRunner().invoke(cli, args, catch_exceptions=False)
    written = "".join(
        f"\n--- {p.name}\n" + _masked(p.read_bytes().decode("utf-8", "replace")) for p in sorted(out.iterdir())
    )
    return r.exit_code, _masked(r.output) + written


def _formats(name: str) -> list[str]:
    """The --format values of ``name`` but text (the base run's) and html (the report's page,
    compared by tests/output): an option shown only in the text is ignored in another format."""
    fmt = next((p for p in COMMANDS[name].params if p.name == "fmt"), None)
    if fmt is None or not isinstance(fmt.type, click.Choice):
        return []
    return [f for f in fmt.type.choices if f not in ("text", "html")]


@pytest.mark.parametrize(
    ("name", "fmt"), [(n, None) for n in TABLE_COMMANDS] + [(n, f) for n in TABLE_COMMANDS for f in _formats(n)]
)
def test_every_option_changes_the_output_or_is_refused(name, fmt, files):
    """In the text (``fmt`` None) and in each other --format: ``qar anonymize --local -f sql``
    printed the same SELECT as without it (the local variant is in the text and JSON only), exit
    0. An option whose effect one format does not carry is refused there
    (``Needs(unused_with=("fmt=sql",))``), in one sentence naming it."""
    out = Path(files.folder)
    base = [*base_args(name, files.plain, files), *(["--format", fmt] if fmt else [])]
    code, before = _run([name, *base], out)
    if fmt and code not in (0, 1):
        pytest.skip(f"qar {name} -f {fmt} does not run on the base arguments: {before.strip()[-200:]}")
    assert code in (0, 1), (name, before)
    free = ("fmt", *FORMAT_FREE.get(name, ())) if fmt else ()
    findings = []
    for param in COMMANDS[name].params:
        if not isinstance(param, click.Option) or param.name in (*SKIPPED, *NOT_IN_OUTPUT, *free):
            continue
        if (name, param.name) in SHOWN_ELSEWHERE:
            continue
        args = value_of(name, param, files, out)
        if not args:
            continue
        shown = f"qar {name}" + (f" -f {fmt}" if fmt else "")
        if found := _unchanged(param, [name, *base], args, before, out, shown):
            findings.append(found)
    assert not findings, "\n".join(findings)


def _unchanged(param: click.Option, run: list[str], args: list[str], before: str, out: Path, shown: str) -> str | None:
    """``run`` with ``args`` (``param``'s valid value): refused in a sentence naming the option
    (None), or the finding, ``shown`` with the args, when its output is ``before``'s (the run's
    without them)."""
    code, after = _run([*run, *args], out)
    if code == 2:
        sentence = after.strip().splitlines()[-1]
        assert any(o in sentence for o in (*param.opts, *param.secondary_opts)) or "Error" in sentence, (args, after)
        return None
    return f"{shown} {' '.join(args)}: exit {code}, the same output as without it" if after == before else None


#: Options the run above leaves unchanged in a format for a reason other than being ignored, by
#: command; and the blind spots this generator found and left (pass 9, h4's report): each a
#: finding, not an allowance.
FORMAT_FREE: dict[str, tuple[str, ...]] = {
    # the SELECT and the frontier are of the chosen node, which these options may leave the same on
    # this table (a search option, not an ignored one); --local is refused there
    "anonymize": (
        "exclude", "k", "sensitive", "no_singletons", "suppression_limit", "metric", "gs_factor",
        "alpha", "pi_u", "pwm", "theta",
    ),
    # LEFT (a decision for the lead): -f csv is the per-QI table (docs/commands.md); the options of
    # the tail fit and of the other sections change nothing in it
    "audit": (
        "alpha", "pi_u", "pwm", "group_size", "prune", "interval_level", "bootstrap", "theta", "sensitivity",
        "row_subsamples",
    ),
    "compare": ("categorical", "attacker_columns", "alpha", "pi_u", "pwm", "impute"),
    # (this table leaves them the same; on others --missing wildcard and --risk-threshold change the CSV)
    "risk": ("missing", "risk_threshold"),
    "uniqueness": ("from_marginals", "monte_carlo", "treatments", "exposed", "exposed_qis"),
    "whatif": ("loss",),  # (--no-loss skips the loss columns' work; the CSV has none)
}  # fmt: skip


#: The commands that read no table, with a run that succeeds (``S``: a store holding one run);
#: qar demo writes a population (its --overwrite is of a file that exists: tests/commands).
STORE_COMMANDS = {"history": ["--store", "S"], "migrate": ["--store", "S"], "config": []}


@pytest.mark.parametrize("name", sorted(STORE_COMMANDS))
def test_every_option_of_a_command_without_a_table_changes_the_output_or_is_refused(name, files, tmp_path):
    """As :func:`test_every_option_changes_the_output_or_is_refused`, for the commands that read
    a store or a config instead of a table (the tree's other commands: generated from click's)."""
    out = Path(files.folder)
    store = str(tmp_path / "store.duckdb")
    assert CliRunner().invoke(cli, ["audit", files.plain, "-t", "people", "-x", "id,disease", "--store", store, "-q"])
    base = [store if a == "S" else a for a in STORE_COMMANDS[name]]
    code, before = _run([name, *base], out)
    assert code == 0, (name, before)
    findings = []
    for param in COMMANDS[name].params:
        if not isinstance(param, click.Option) or param.name in SKIPPED or param.name in ("store", "fmt"):
            continue
        args = value_of(name, param, files, out)
        if not args:
            continue
        if found := _unchanged(param, [name, *base], args, before, out, f"qar {name}"):
            findings.append(found)
        for other in COMMANDS[name].params:  # (beside each flag of the command: --status)
            if isinstance(other, click.Option) and other.is_flag and other.name not in SKIPPED | {param.name}:
                code, beside = _run([name, *base, other.opts[0]], out)
                code2, both = _run([name, *base, other.opts[0], *args], out)
                if code2 != 2 and both == beside:
                    findings.append(f"qar {name} {other.opts[0]} {' '.join(args)}: the same output as without it")
    assert not findings, "\n".join(findings)


def _commands() -> dict[str, Command]:
    """Every :class:`~qar_sql.command.Command` of the command line, by name."""
    found = {}
    for module in vars(commands).values():
        for value in vars(module).values() if isinstance(module, types.ModuleType) else ():
            if isinstance(value, Command):
                found[value.name] = value
    return found


def _typed(name: str, option: str, f: Files, out: Path) -> list[str]:
    param = next(p for p in COMMANDS[name].params if p.name == option)
    return value_of(name, param, f, out)


def _entry_args(name: str, entry: str, f: Files, out: Path) -> list[str] | None:
    """Arguments that make ``entry`` (``a``, ``a=v``, ``a~v``) hold, None when none can."""
    option, _, wanted = entry.replace("~", "=").partition("=")
    param = next((p for p in COMMANDS[name].params if p.name == option), None)
    if param is None:
        return None
    if wanted:
        return [param.opts[0], wanted]
    return _typed(name, option, f, out)


def test_every_declared_relation_refuses_its_option(files):
    """The other side: each option a relation declares ignored beside another (or without one) is
    refused, exit 2, naming it, on the command line; generated from every command's relations."""
    import_all = _commands()
    out, checked = Path(files.folder), 0
    for name, cmd in sorted(import_all.items()):
        if name not in COMMANDS:
            continue
        base = base_args(name, files.plain, files) if name in TABLE_COMMANDS else []
        for option, relation in cmd.relations().items():
            if option not in {p.name for p in COMMANDS[name].params}:
                continue  # (a keyword of the API only)
            for entry in relation.unused_with:
                beside = _entry_args(name, entry, files, out)
                if beside is None:
                    continue
                args = [name, *base, *_typed(name, option, files, out), *beside]
                code, text = _run(args, out)
                # (the sentence names this option, or one of the base run's of the same relation)
                assert code == 2 and "has no effect" in text, (args, text)
                checked += 1
    assert checked >= 35, checked


#: Sources whose engine runs a run's statements one at a time (DuckDB's files and URLs, chdb,
#: Spark Connect: nothing is opened before the refusal), and server databases, whose --jobs
#: opens concurrent connections (the check passes; the table does not exist there).
SERIAL = ("people.csv", "people.parquet", "people.duckdb", "duckdb:///people.duckdb", "chdb:///x", "sc://h:1")
CONCURRENT = ("postgresql+psycopg://qar_test:qar_test@localhost:1/none", "sqlite:///no/such.db")
#: A command whose concurrent option has its own engines: qar sql's --jobs sets the batches of
#: PostgreSQL's SQL only (pushdown/scan.batches_follow_jobs).
OWN_ENGINES = {"sql": {"sqlite:///no/such.db": "refused"}}


def test_a_concurrent_option_is_refused_where_statements_run_one_at_a_time(files):
    """Every option declared ``Needs(concurrent=True)`` (--jobs), of every command: typed on a
    source whose engine runs one statement at a time it is refused (exit 2) with the engine's
    reason, before anything is read; on a server database it passes that check. Generated from
    the commands' relations (the table commands' sources; qar scan's in tests/compliance)."""
    checked = 0
    for name, cmd in sorted(_commands().items()):
        if name not in TABLE_COMMANDS:
            continue
        for option, relation in cmd.relations().items():
            if not relation.concurrent:
                continue
            param = next(p for p in COMMANDS[name].params if p.name == option)
            for source in (*SERIAL, *CONCURRENT):
                base = [source if a == files.plain else a for a in base_args(name, files.plain, files)]
                r = CliRunner().invoke(cli, [name, *base, param.opts[0], "3"])
                refused = "has no effect on" in r.output
                expected = source in SERIAL or OWN_ENGINES.get(name, {}).get(source) == "refused"
                assert refused == expected and "Traceback" not in r.output, (name, source, r.output)
                if refused:
                    assert r.exit_code == 2 and f"{param.opts[0]} has no effect on" in r.output, (
                        name,
                        source,
                        r.output,
                    )
                checked += 1
    assert checked >= 11 * 8, checked
    # qar audit --show-sql prints qar sql's statements: its --jobs follows qar sql's rule
    for source, said in zip(CONCURRENT, ("", "--jobs has no effect on the SQL of sqlite")):
        r = CliRunner().invoke(cli, ["audit", source, "-t", "people", "-c", "age,sex,zip", "--show-sql", "-j", "3"])
        assert (r.exit_code, said in r.output) == ((2, True) if said else (0, True)), (source, r.output)


def test_the_api_refuses_a_concurrent_keyword_on_a_frame(files):
    """The Python API's sources the command line has not: DataFrames (pandas, polars, Arrow) and
    an open DuckDB source; a keyword at its default is no error (a config's or variable's value
    applies silently on the command line too)."""
    pandas = pytest.importorskip("pandas")
    polars = pytest.importorskip("polars")
    frame = duckdb.connect(files.plain, read_only=True).execute("select * from people").df()
    for source in (frame, polars.from_pandas(frame), polars.from_pandas(frame).to_arrow()):
        with pytest.raises(qar_sql.QarError, match="jobs has no effect on a DataFrame: DuckDB runs one") as caught:
            qar_sql.audit(source, exclude="id,disease", jobs=3)
        assert caught.value.exit_code == 2
    assert qar_sql.audit(pandas.DataFrame(frame), exclude="id,disease", jobs=qar_sql.audit.__signature__.parameters[
        "jobs"].default).risk is not None  # fmt: skip
    with qar_sql.connect(files.plain, table="people") as opened, pytest.raises(qar_sql.QarError, match="open source"):
        qar_sql.records(opened, key="id", exclude="id,disease", jobs=4)


#: What a refusal of an option that would be ignored says (Needs, the CSV options' check).
IGNORED = re.compile(r"has no effect|applies to CSV files")


def test_a_variable_sets_an_option_for_every_command_and_is_never_refused_as_ignored(files, monkeypatch):
    """The other side of "only what is typed is refused": every option refused by the kind of
    source (a CSV option on this DuckDB table, a ``Needs(concurrent=True)`` one where DuckDB runs
    one statement at a time), set by its ``QAR_`` variable instead, is silently unused. (A
    relation between options refuses only what is typed by construction: ``check_needs``'s
    ``typed``.) Generated from the commands' options and relations (the variables are click's)."""
    out, checked = Path(files.folder), 0
    for name, cmd in sorted(_commands().items()):
        if name not in TABLE_COMMANDS:
            continue
        base = base_args(name, files.plain, files)
        for param in COMMANDS[name].params:
            if not isinstance(param, click.Option) or not param.envvar:
                continue
            relation = cmd.relations().get(param.name)
            if not (relation and relation.concurrent) and param.name not in ("delimiter", "null_tokens", "all_text"):
                continue
            args = value_of(name, param, files, out)
            value = "1" if param.is_flag else args[-1]
            with monkeypatch.context() as env:
                env.setenv(param.envvar if isinstance(param.envvar, str) else param.envvar[0], value)
                code, text = _run([name, *base], out)
            assert not (code == 2 and IGNORED.search(text)), (name, param.envvar, value, text)
            checked += 1
    assert checked >= 30, checked


def test_the_api_refuses_a_keyword_it_would_ignore(files):
    with pytest.raises(qar_sql.QarError, match="alpha has no effect without risk_below") as caught:
        qar_sql.anonymize(files.plain, table="people", qid="age", hierarchy=f"age={files.hierarchies}", k=2, alpha=0.02)
    assert caught.value.exit_code == 2
    with pytest.raises(qar_sql.QarError, match="greedy_steps has no effect without by='greedy'"):
        qar_sql.eliminate(files.plain, table="people", key="id", exclude="id,disease", greedy_steps=3)


def test_scan_refuses_a_typed_jobs_where_every_scan_runs_one_statement_at_a_time(files, tmp_path, monkeypatch):
    """qar scan has no SOURCE: a typed --jobs (the API's jobs= other than its default) is refused
    when every scan's source runs one statement at a time, before any scan runs; one server
    database among them uses it; $QAR_JOBS applies silently."""
    duck = f'[sources.duck]\nurl = "{files.plain}"\n[[scan]]\nname = "d"\nsource = "duck"\ntable = "people"\nexclude = ["id"]\n'
    config = tmp_path / "qar.toml"
    config.write_text(duck)
    r = CliRunner().invoke(cli, ["scan", str(config), "--no-store", "-j", "3"])
    assert r.exit_code == 2 and "--jobs has no effect on a DuckDB file: DuckDB runs one" in r.output, r.output
    with pytest.raises(qar_sql.QarError, match="jobs has no effect"):
        qar_sql.scan_config(str(config), jobs=3)
    monkeypatch.setenv("QAR_JOBS", "3")
    assert CliRunner().invoke(cli, ["scan", str(config), "--no-store"]).exit_code in (0, 1)
    server = '[sources.pg]\nurl = "postgresql+psycopg://u@localhost:1/none"\n[[scan]]\nname = "p"\nsource = "pg"\ntable = "t"\n'
    config.write_text(duck + server)
    r = CliRunner().invoke(cli, ["scan", str(config), "--no-store", "-j", "3"])
    assert r.exit_code == 3 and "has no effect" not in r.output, r.output  # (the server is unreachable)


def _kind(param: click.Parameter) -> str:
    """What a variable's value is read as: a number, a flag, or text (a name, a path, a word)."""
    if getattr(param, "is_flag", False):
        return "flag"
    if isinstance(param.type, click.types.IntParamType | click.types.FloatParamType):
        return "number"
    return "text"


#: Variables that several options share with one meaning, each read as the same kind of value:
#: a target (a dbt target, a column, a probability) is three things, so three variables.
def test_a_variable_means_one_thing_wherever_it_is_read():
    """One ``QAR_`` variable set for one command must not break another that reads it as something
    else (QAR_TARGET=prod, a dbt target for qar scan, failed every qar uniqueness: 'prod' is not a
    valid float; and named a column of qar compare). Generated from click's tree: the options that
    share a variable share its name's meaning; the kinds of their values must agree."""
    shared: dict[str, set[tuple[str, str, str]]] = {}
    for name, command in COMMANDS.items():
        for param in command.params:
            envvar = param.envvar if isinstance(param.envvar, str) else (param.envvar or [None])[0]
            if envvar:
                shared.setdefault(envvar, set()).add((name, param.name or "", _kind(param)))
    mixed = {v: sorted(uses) for v, uses in shared.items() if len({kind for _, _, kind in uses}) > 1}
    assert not mixed, mixed
    targets = {v for v, uses in shared.items() if any(p == "target" for _, p, _ in uses)}
    assert len(targets) == 3, targets  # (scan's dbt target, compare's column, uniqueness's probability)
