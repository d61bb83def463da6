"""Lock the command line's behaviour: every ``--help`` and the output of a fixed set of commands,
byte for byte, against the expected outputs committed in ``tests/cli/snapshots/``.

    python scripts/cli_snapshots.py              # --check (default): rerun, print a unified diff, exit 1 on any
    python scripts/cli_snapshots.py --update     # rewrite the snapshots; review them with `git diff`
    python scripts/cli_snapshots.py --only whatif  # only the cases whose name contains "whatif"

For changes that must not alter behaviour (issue 25's refactor): the check passes before and after.
A change that is meant to alter output runs ``--update`` and commits the reviewed diff with it.

The commands run as a user runs them: ``qar …`` in a fresh temporary working directory (relative
paths, no qar.toml found there), with every ``QAR_*`` variable removed, ``COLUMNS=80`` and
``TZ=UTC``, importing this checkout's ``qar_sql``. Inputs: a demo database made by ``qar demo``
(small and seeded), and, when ``../shared/data`` (or ``$QAR_SHARED_DATA``) holds them, the ARX
``adult.csv`` and the Valle d'Aosta driver licences (linked into the working directory, so outputs
name them by file name only). Without the shared data those cases are skipped with the reason.

What varies by nature is masked with named placeholders, and nothing else: wall-clock durations
(``<SECONDS>``), today's timestamps (``<NOW>``), run ids (``<UUID>``), process ids and host names
(``<PID>``, ``<HOST>``), the versions of qar-sql, DuckDB and Python (``<QAR_VERSION>``,
``<DUCKDB_VERSION>``, ``<PYTHON_VERSION>``), the temporary folder (``$TMP``), and the drawing inside each matplotlib
``<svg>`` (kept: the figure's ``aria-label``, which states what it shows; dropped: path data that a
matplotlib or font release changes). Everything else must come out identical on every run. DuckDB
runs with one thread (``--threads``): with several, its sums of doubles vary in the last digits.

A number printed to full precision (12 or more significant digits) matches its snapshot when the two
agree to 12 significant digits, and the rest of the text is identical: on a fresh machine (DuckDB
2.0.1 from pip, numpy 2.4 on an AVX-512 CPU) 11 numbers of 6 snapshots came out with other last
digits (0.11440461382169613 against ...612), and the suite runs on whatever pip installs where.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import datetime as dt
import difflib
import math
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SNAPSHOTS = REPO / "tests" / "cli" / "snapshots"
sys.path.insert(0, str(REPO))  # this checkout's qar_sql (the commands list, the versions to mask)
SHARED_DATA = Path(os.environ.get("QAR_SHARED_DATA") or REPO.parent / "shared" / "data")
DATA = {
    "adult": SHARED_DATA / "arx" / "adult.csv",
    "dl": SHARED_DATA / "driver_license" / "driverLicense_ValleAosta.csv",
}
#: ARX's hierarchies of adult.csv, linked as adult_hierarchies (qar anonymize).
HIERARCHIES = SHARED_DATA / "arx" / "hierarchies"
# Linked into the working directory under these names.
LINKS = {"adult": "adult.csv", "dl": "driver_licences.csv"}
DEMO_ROWS = "2000"
# DuckDB sums floating-point numbers in whatever order its threads finish: with more than one
# thread, sums of doubles (Cramer's V and correlations of the what-if information loss) vary in
# their last digits from run to run. The snapshots pin one thread, so they are the same on every
# machine; `--threads 0` shows the variation.
THREADS = 1
RUN = "import sys; from qar_sql.cli import main; sys.argv[0] = 'qar'; main()"

# A scan config in the working directory; not called qar.toml, so no other command finds it.
SCANS_TOML = """\
[store]
url = "scan_store.duckdb"

[defaults]
warn_above = 0.3
fail_above = 0.99

[sources.demo]
url = "demo.duckdb"

[[scan]]
name = "demo population"
source = "demo"
table = "population"
exclude = ["person_id"]
p = 2
pi_u = 0.2

[[scan]]
name = "demo, published columns"
source = "demo"
table = "population"
columns = ["age", "sex", "region", "marital_status", "education", "occupation"]
p = 2
fail_above = 0.5
"""

# Treatments for adult.csv's columns (the demo uses examples/treatments.toml).
ADULT_TREATMENTS = """\
qid = "attacker"
combinations = [["age_10y", "country_coarse"]]

[qis]
attacker = ["age", "sex", "race"]

[treatments.age_10y]
column = "age"
kind = "bands"
width = 10

[treatments.country_coarse]
column = "native-country"
kind = "map"
map = { "Mexico" = "Other", "Philippines" = "Other", "Germany" = "Other" }
"""


@dataclasses.dataclass(frozen=True)
class Case:
    """One command line: its snapshot is tests/cli/snapshots/<name>.txt."""

    name: str
    args: tuple[str, ...]
    data: str | None = None  # "adult" or "dl": needs that shared dataset
    files: tuple[str, ...] = ()  # files or folders the command writes, shown after its output
    env: tuple[tuple[str, str], ...] = ()
    stage: int = 1  # stage 0 makes what later stages read (the demo, a results store)


def cases() -> list[Case]:
    """The fixed set of command lines, every format of each command on the demo."""
    demo = ("demo.duckdb", "-t", "population")
    dx = (*demo, "-x", "person_id")
    # Seven columns (35 QIs at p = 3) for the heavier commands: every column the demo's treatments touch.
    dc = (*demo, "-c", "age,sex,postcode,region,marital_status,number_of_children,country_of_birth")
    key = ("--key", "person_id")
    fmts = ("text", "json", "markdown", "html")
    out: list[Case] = []

    def each(command: str, label: str, args: tuple[str, ...], formats=fmts, **kw) -> None:
        """One case per format: <command>-<label>-<format>."""
        for f in formats:
            fmt = ("-f", f) if f != "text" else ()
            out.append(Case("-".join(filter(None, (command, label, f))), (command, *args, *fmt), **kw))

    # Stage 0: the demo database the other cases read, and a results store with two runs.
    out.append(Case("demo-setup", ("demo", "--path", "demo.duckdb", "--rows", DEMO_ROWS), stage=0))
    out += [
        Case(
            "audit-store-ok",
            ("audit", *demo, "-c", "age,sex,postcode,region", "-p", "2", "--pi-u", "0.2", "--store", "store.duckdb"),
            stage=0,
        ),
        Case("audit-store-failed", ("audit", *demo, "-c", "age,sex", "-p", "2", "--store", "store.duckdb"), stage=0),
    ]
    # The demo writes a file of its own in each format.
    for f in ("text", "json", "markdown"):
        out.append(Case(f"demo-{f}", ("demo", "--path", f"demo_{f}.duckdb", "--rows", "500", "-p", "2", "-f", f)))

    each("audit", "demo", dx)
    out += [
        Case("audit-demo-p2-histograms-json", ("audit", *dx, "-p", "2", "--histograms", "-f", "json")),
        Case("audit-demo-group-size-text", ("audit", *dx, "--group-size", "30", "--top", "3")),
        Case("audit-demo-show-sql", ("audit", *demo, "-c", "age,sex,postcode,region", "-p", "2", "--show-sql")),
        Case("audit-demo-fail-above-unbiased", ("audit", *dx, "--fail-above", "0.5", "--k", "3", "--pwm", "unbiased")),
        Case("audit-error-unknown-column", ("audit", *demo, "-c", "age,no_such_column")),
        Case("audit-error-missing-file", ("audit", "no_such_file.csv")),
        Case("audit-error-bad-alpha", ("audit", *dx, "--alpha", "1.5")),
        Case("sql-demo-duckdb", ("sql", *demo, "-c", "age,sex,postcode")),
        Case("sql-demo-postgresql", ("sql", *demo, "-c", "age,sex,postcode,region", "-p", "2", "-d", "postgresql")),
        Case("sql-demo-clickhouse", ("sql", *demo, "-c", "age,sex,postcode", "-d", "clickhouse")),
    ]
    each("records", "demo", (*dc, *key, "--top", "5"))
    five = ("-c", "age,sex,postcode,region,marital_status")
    out += [
        Case("records-demo-influence-json", ("records", *dc, *key, "--by", "influence", "--top", "5", "-f", "json")),
        Case(
            "records-demo-suda-text", ("records", *demo, *five, *key, "--by", "suda", "--max-size", "2", "--top", "5")
        ),
        Case(
            "records-demo-output-csv", ("records", *dc, *key, "--top", "3", "-o", "records.csv"), files=("records.csv",)
        ),
    ]
    each("eliminate", "demo", (*dc, *key, "--by", "dt,random", "--step", "100", "--max", "400"), formats=fmts[:3])
    each("discover", "demo", (*dx, "--max-size", "2"), formats=fmts[:3])
    each("whatif", "demo", (*dc, "-T", "treatments.toml", "--only", "age_10y", "--only", "age_5y+postcode_local"))
    out += [
        Case("whatif-demo-all-no-risk-text", ("whatif", *dc, "-T", "treatments.toml", "--no-risk")),
        Case("whatif-demo-emit-sql", ("whatif", *demo, "-T", "treatments.toml", "--emit-sql")),
        Case(
            "whatif-demo-emit-sql-postgresql",
            ("whatif", *demo, "-T", "treatments.toml", "--emit-sql", "--apply", "age_10y", "-d", "postgresql"),
        ),
    ]
    each("risk", "demo", (*demo, "-c", "age,sex,postcode,occupation"))
    out += [
        Case(
            "risk-demo-sensitive-json",
            (
                "risk",
                *demo,
                "-c",
                "age,sex,region",
                "-s",
                "income_band",
                "--sampling-fraction",
                "0.1",
                "-p",
                "2",
                "-f",
                "json",
            ),
        ),
        Case(
            "risk-demo-per-record",
            ("risk", *demo, "-c", "age,sex,region", *key, "--per-record", "per_record.csv"),
            files=("per_record.csv",),
        ),
    ]
    each("uniqueness", "demo", (*dc, "--group-size", "30", "--top", "5"), formats=[f for f in fmts if f != "json"])
    each("uniqueness", "demo", (*dc, "--group-size", "30"), formats=("json",))  # (JSON lists all: no --top)
    out.append(
        Case(
            "uniqueness-demo-qid-json",
            ("uniqueness", *demo, "--qid", "age,sex,postcode", "--group-size", "20", "--from-marginals", "-f", "json"),
        )
    )
    each("compare", "demo", (*dc, "--treatments", "treatments.toml"))
    out.append(
        Case(
            "report-demo",
            ("report", *dc, *key, "--top", "5", "--treatments", "treatments.toml", "-o", "report.html"),
            files=("report.html",),
        )
    )
    each("scan", "demo", ("scans.toml", "--no-store"), formats=fmts[:3])
    out += [
        Case(
            "scan-demo-html",
            ("scan", "scans.toml", "--no-store", "-f", "html", "--report-dir", "scan_reports"),
            files=("scan_reports",),
        ),
        Case(
            "scan-demo-store-junit-markdown",
            ("scan", "scans.toml", "--junit", "junit.xml", "--markdown", "summary.md"),
            files=("junit.xml", "summary.md"),
        ),
    ]
    each("history", "", ("--store", "store.duckdb"), formats=fmts[:3])
    each("migrate", "status", ("--store", "store.duckdb", "--status"), formats=fmts[:3])
    each("config", "", (), formats=fmts[:2])
    out.append(Case("config-env", ("config",), env=(("QAR_P", "2"), ("QAR_ALPHA", "0.05"))))

    # adult.csv: 30,162 x 9, semicolon-separated.
    ad = ("adult.csv",)
    arx = ("--hierarchies", "adult_hierarchies")
    each("audit", "adult", ad, data="adult")
    out += [
        Case("sql-adult", ("sql", *ad, "-c", "sex,age,race,education", "-p", "2"), data="adult"),
        Case("records-adult-json", ("records", *ad, "--top", "5", "-f", "json"), data="adult"),
        Case("discover-adult-json", ("discover", *ad, "--max-size", "2", "-f", "json"), data="adult"),
        Case(
            "risk-adult-markdown",
            ("risk", *ad, "-c", "sex,age,race", "-s", "salary-class", "-f", "markdown"),
            data="adult",
        ),
        Case(
            "uniqueness-adult-json",
            ("uniqueness", *ad, "--qid", "age,sex,race", "--group-size", "50", "-f", "json"),
            data="adult",
        ),
        Case("whatif-adult-text", ("whatif", *ad, "-T", "adult_treatments.toml"), data="adult"),
        Case("anonymize-adult-k100-text", ("anonymize", *ad, *arx, "--k", "100"), data="adult"),
        Case(
            "anonymize-adult-k100-p3-json",
            ("anonymize", *ad, *arx, "--k", "100", "-p", "3", "-f", "json"),
            data="adult",
        ),
        Case("anonymize-error-no-model", ("anonymize", *ad, *arx), data="adult"),
        Case(
            "eliminate-adult-json",
            (
                "eliminate",
                *ad,
                "-c",
                "sex,age,race,marital-status,education,native-country",
                "--max",
                "200",
                "--step",
                "50",
                "-f",
                "json",
            ),
            data="adult",
        ),
    ]
    # The Valle d'Aosta driver licences: 87,642 x 14; Pastore et al.'s QI (year of birth, sex, municipality).
    dl = ("driver_licences.csv",)
    seven = (
        "-c",
        "anno_nascita,comune_residenza,sesso,categoria_patente,abilitato_a,punti_patente,stato_estero_nascita",
    )
    pastore = ("-c", "anno_nascita,sesso,comune_residenza")
    out += [
        Case("audit-licences-text", ("audit", *dl, *seven), data="dl"),
        Case("audit-licences-json", ("audit", *dl, *seven, "-f", "json"), data="dl"),
        Case("discover-licences-pastore-text", ("discover", *dl, *pastore, "--drop-null"), data="dl"),
        Case("discover-licences-pastore-json", ("discover", *dl, *pastore, "--drop-null", "-f", "json"), data="dl"),
        Case("risk-licences-json", ("risk", *dl, *pastore, "-f", "json"), data="dl"),
        Case(
            "uniqueness-licences-markdown",
            ("uniqueness", *dl, "--qid", "anno_nascita,sesso,comune_residenza", "--group-size", "10", "-f", "markdown"),
            data="dl",
        ),
    ]
    return out


def help_cases() -> list[Case]:
    """``--help`` of the group and of every command and subcommand, found from click itself."""
    import click

    from qar_sql.cli import cli

    out: list[Case] = []

    def walk(cmd: click.Command, path: tuple[str, ...]) -> None:
        out.append(Case("help-" + "-".join(("qar", *path)), (*path, "--help")))
        if isinstance(cmd, click.Group):
            for name in sorted(cmd.commands):
                walk(cmd.commands[name], (*path, name))

    walk(cli, ())
    return out


# --- running -------------------------------------------------------------------------------------


def environment() -> dict[str, str]:
    """The commands' environment: no QAR_* settings, a fixed width and zone, this checkout first."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("QAR_")}
    env.update(
        PYTHONPATH=os.pathsep.join([str(REPO)] + [p for p in [env.get("PYTHONPATH")] if p]),
        COLUMNS="80",
        LINES="24",
        TZ="UTC",
        PYTHONIOENCODING="utf-8",
        PYTHONUTF8="1",
        MPLBACKEND="Agg",
    )
    return env


def command(threads: int) -> list[str]:
    """``qar`` as this interpreter runs it, every DuckDB connection with ``threads`` threads (0:
    DuckDB's default, one per core)."""
    if not threads:
        return [sys.executable, "-c", RUN]
    pin = (
        "import duckdb; _connect = duckdb.connect\n"
        "def connect(*a, **k):\n"
        "    con = _connect(*a, **k)\n"
        f"    con.execute('set threads = {int(threads)}')\n"
        "    return con\n"
        "duckdb.connect = connect\n"
    )
    return [sys.executable, "-c", pin + RUN]


def prepare(tmp: Path) -> None:
    """The working directory's inputs (the demo database itself is the stage-0 case demo-setup)."""
    shutil.copy(REPO / "examples" / "treatments.toml", tmp / "treatments.toml")
    (tmp / "scans.toml").write_text(SCANS_TOML)
    (tmp / "adult_treatments.toml").write_text(ADULT_TREATMENTS)
    for key, path in DATA.items():
        if path.is_file():
            (tmp / LINKS[key]).symlink_to(path)
    if HIERARCHIES.is_dir():
        (tmp / "adult_hierarchies").symlink_to(HIERARCHIES)


#: Wall-clock seconds of each case's command, for the summary's slowest cases.
TIMES: dict[str, float] = {}


def run(case: Case, tmp: Path, env: dict[str, str], threads: int) -> str:
    """The case's snapshot text: its command line, exit code, stdout, stderr and written files, masked."""
    start = time.perf_counter()
    proc = subprocess.run(
        [*command(threads), *case.args],
        cwd=tmp,
        env={**env, **dict(case.env)},
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
    )
    TIMES[case.name] = time.perf_counter() - start
    envs = "".join(f"{k}={v} " for k, v in case.env)
    parts = [f"$ {envs}qar {' '.join(_shell(a) for a in case.args)}", f"exit code {proc.returncode}"]
    parts += ["──── stdout", proc.stdout, "──── stderr", _drop_noise(proc.stderr)]
    for name in case.files:
        for path in sorted([tmp / name] if (tmp / name).is_file() else (tmp / name).rglob("*")):
            if path.is_file():
                body = path.read_text(encoding="utf-8", errors="replace")
                parts += [f"──── file {path.relative_to(tmp)}", body]
    return mask("\n".join(p.rstrip("\n") for p in parts) + "\n", tmp)


def _shell(arg: str) -> str:
    return arg if re.fullmatch(r"[\w.,:/=+@%-]+", arg) else "'" + arg.replace("'", "'\\''") + "'"


#: A progress stage line off a terminal (``12:01:03  whatif: scenarios 8/8 (100%), 10 s``): written
#: every 10 s of a long command, so whether one appears depends on the machine's load, not on qar.
_STAGE_LINE = re.compile(r"^\d\d:\d\d:\d\d  \S.*, \d+ s$")


def _drop_noise(stderr: str) -> str:
    """Matplotlib's one-off notice while it builds its font cache (a fresh machine's first run),
    and progress stage lines (their number depends on the machine's speed)."""
    return "".join(
        line
        for line in stderr.splitlines(keepends=True)
        if "building the font cache" not in line and not _STAGE_LINE.match(line.rstrip("\n"))
    )


# --- masking: only what varies by nature ---------------------------------------------------------

Q = r'(?:"|&#34;|&quot;|\\")'  # a JSON quote, also inside HTML or a JSON string


def mask(text: str, tmp: Path) -> str:
    import duckdb

    from qar_sql.output.report_md import escape_md
    from qar_sql.version import __version__

    # The folder's random name may hold "_", which Markdown output escapes ("qar-snapshots-0t\\_pwc08").
    for path in {str(tmp.resolve()), str(tmp)}:
        text = text.replace(path, "$TMP").replace(escape_md(path), "$TMP")
    for key, path in DATA.items():
        text = text.replace(str(path.resolve()), LINKS[key]).replace(str(path), LINKS[key])
    text = text.replace(str(REPO), "$REPO")
    # Wall-clock durations: "seconds" fields (JSON, also inside HTML) and "(…, 0.37 s)" headers.
    text = re.sub(rf"({Q}(?:seconds|age_seconds){Q}: )-?[0-9.]+(?:e[+-]?\d+)?", r"\g<1><SECONDS>", text)
    text = re.sub(r"\b\d+\.\d+ s\b", "<SECONDS> s", text)
    # The stage lines a long run prints every 10 s off a terminal ("10:16:51  report: scanning …"):
    # whether one appears depends on the machine's load.
    text = re.sub(r"(?m)^\d\d:\d\d:\d\d  [a-z]+: [^\n]*\n", "", text)
    text = re.sub(r'\btime="\d+(?:\.\d+)?"', 'time="<SECONDS>"', text)  # JUnit XML
    # Today's timestamps (data values of other dates stay).
    days = {d.isoformat() for d in (dt.date.today(), dt.datetime.now(dt.UTC).date())}
    for day in days:
        text = re.sub(rf"{day}(?:[ T]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:[+-]\d\d:\d\d|Z)?(?: UTC)?)?", "<NOW>", text)
    text = re.sub(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", "<UUID>", text)
    text = re.sub(rf"({Q}pid{Q}: )\d+", r"\g<1><PID>", text)
    # Temporary tables are named qar_<what>_<process id>_<counter> (the SQL a report lists).
    text = re.sub(r"\b(qar_[a-z]+)_\d+_(\d+)\b", r"\1_<PID>_\2", text)
    text = re.sub(rf"({Q}host{Q}: {Q}){re.escape(socket.gethostname())}", r"\g<1><HOST>", text)
    # Versions: qar-sql's changes at a release, DuckDB's with the installed wheel.
    text = re.sub(rf"({Q}(?:qar_sql_version|qar_version){Q}: {Q}){re.escape(__version__)}", r"\g<1><QAR_VERSION>", text)
    text = re.sub(rf"\bqar-sql {re.escape(__version__)}\b", "qar-sql <QAR_VERSION>", text)
    text = re.sub(rf"({Q}engine_version{Q}: {Q}){re.escape(duckdb.__version__)}", r"\g<1><DUCKDB_VERSION>", text)
    text = re.sub(rf"\b(duckdb|DuckDB) {re.escape(duckdb.__version__)}\b", r"\1 <DUCKDB_VERSION>", text)
    # Python's, with the interpreter the venv was made from (a report names it).
    python = re.escape(platform.python_version())
    text = re.sub(rf"({Q}python_version{Q}: {Q}){python}", r"\g<1><PYTHON_VERSION>", text)
    text = re.sub(rf"\bPython {python}\b", "Python <PYTHON_VERSION>", text)
    # Matplotlib's drawing (a matplotlib or font release changes it); its aria-label stays.
    return re.sub(r"<svg\b([^>]*)>.*?</svg>", _svg, text, flags=re.S)


def _svg(match: re.Match) -> str:
    label = re.search(r'\saria-label="[^"]*"', match.group(1))
    return f"<svg{label.group(0) if label else ''}><!-- drawing masked --></svg>"


# --- check and update ----------------------------------------------------------------------------

# A number printed to full precision: 12 or more significant digits (a float's repr; rounded output,
# "0.1144", is compared as text).
FULL_PRECISION = re.compile(r"-?(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _full(token: str) -> bool:
    return len(re.sub(r"^[-0.]+|[eE].*$|\.", "", token)) >= 12


def same_but_last_digits(expected: str, text: str) -> bool:
    """True when the two texts differ only in full-precision numbers that agree to 12 significant
    digits (sums of doubles whose last digits move with the DuckDB and numpy installed; see the
    module's docstring)."""
    if FULL_PRECISION.split(expected) != FULL_PRECISION.split(text):  # (the text between; so as many numbers)
        return False
    pairs = zip(FULL_PRECISION.findall(expected), FULL_PRECISION.findall(text), strict=True)
    return all(a == b or (_full(a) and _full(b) and math.isclose(float(a), float(b), rel_tol=1e-12)) for a, b in pairs)


def select(only: list[str], inputs: str = "all") -> tuple[list[Case], list[str]]:
    """The cases to run and the reasons for those skipped (shared data absent). ``inputs``: "demo"
    (every --help and the demo's cases), "shared" (those on the shared datasets) or "all"."""
    chosen, skipped = [], []
    for case in help_cases() + cases():
        if inputs == "demo" and case.data or inputs == "shared" and not case.data:
            continue
        if only and case.stage and not any(o in case.name for o in only):
            continue
        if case.data and not DATA[case.data].is_file():
            skipped.append(f"skipped {case.name}: {DATA[case.data]} is absent (shared data not on this machine)")
            continue
        chosen.append(case)
    return chosen, skipped


def execute(chosen: list[Case], jobs: int, threads: int) -> dict[str, str]:
    """Every case's masked snapshot, stage by stage (later stages read what stage 0 made)."""
    results: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="qar-snapshots-") as name:
        tmp = Path(name)
        prepare(tmp)
        env = environment()
        for stage in sorted({c.stage for c in chosen}):
            batch = [c for c in chosen if c.stage == stage]
            # Stage 0 in order: its second store run must follow the first.
            with concurrent.futures.ThreadPoolExecutor(jobs if stage else 1) as pool:
                for case, text in zip(batch, pool.map(lambda c: run(c, tmp, env, threads), batch)):
                    results[case.name] = text
    return results


def difference(name: str, text: str) -> str:
    """The unified diff of case ``name``'s snapshot against ``text`` (its output now); "" when equal."""
    path = SNAPSHOTS / f"{name}.txt"
    expected = path.read_text(encoding="utf-8") if path.is_file() else ""
    if text == expected or same_but_last_digits(expected, text):
        return ""
    where = str(path.relative_to(REPO))
    return "".join(
        difflib.unified_diff(
            expected.splitlines(keepends=True),
            text.splitlines(keepends=True),
            f"{where} (expected{'' if path.is_file() else ': missing'})",
            f"{where} (this checkout)",
        )
    )


def stale() -> list[str]:
    """A line for each snapshot file no case makes."""
    known = {c.name for c in help_cases() + cases()}
    return [
        f"{path.relative_to(REPO)}: no case makes this snapshot (run --update to remove it)"
        for path in sorted(SNAPSHOTS.glob("*.txt"))
        if path.stem not in known
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="rerun and compare with the snapshots (default)")
    mode.add_argument("--update", action="store_true", help="rewrite the snapshots from this checkout")
    ap.add_argument("--only", action="append", default=[], help="only cases whose name contains this (repeatable)")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="commands run at once (default 2)")
    ap.add_argument(
        "--threads",
        type=int,
        default=THREADS,
        help=f"threads of every DuckDB connection (default {THREADS}; 0: one per core, which makes some sums vary)",
    )
    ap.add_argument(
        "--inputs",
        choices=("all", "demo", "shared"),
        default="all",
        help="demo: --help and the demo; shared: the datasets",
    )
    ap.add_argument("--list", action="store_true", help="print the cases and exit")
    args = ap.parse_args(argv)

    chosen, skipped = select(args.only, args.inputs)
    for line in skipped:
        print(line)
    if args.list:
        for case in chosen:
            print(f"{case.name}: qar {' '.join(case.args)}")
        return 0
    start = time.perf_counter()
    results = execute(chosen, args.jobs, args.threads)
    seconds = time.perf_counter() - start
    SNAPSHOTS.mkdir(parents=True, exist_ok=True)
    if args.update:
        for name, text in results.items():
            (SNAPSHOTS / f"{name}.txt").write_text(text, encoding="utf-8")
        if not args.only and not skipped and args.inputs == "all":
            # (not named stale: that local would hide the function stale() the check calls below)
            gone = sorted(p for p in SNAPSHOTS.glob("*.txt") if p.stem not in results)
            for path in gone:
                path.unlink()
                print(f"removed {path.relative_to(REPO)} (no such case)")
        print(
            f"wrote {len(results)} snapshots to {SNAPSHOTS.relative_to(REPO)} in {seconds:.0f} s; review them with git diff"
        )
        return 0

    differ = 0
    for name, text in results.items():
        diff = difference(name, text)
        if diff:
            differ += 1
            sys.stdout.write(diff)
    if not args.only and args.inputs == "all":
        for line in stale():
            differ += 1
            print(line)
    slowest = sorted(TIMES.items(), key=lambda kv: -kv[1])[:5]
    print("slowest: " + ", ".join(f"{name} {t:.1f} s" for name, t in slowest))
    print(
        f"{len(results) - differ} of {len(results)} identical, {differ} different, {len(skipped)} skipped ({seconds:.0f} s)"
    )
    if differ:
        print("If the change is meant to alter output: python scripts/cli_snapshots.py --update, then review git diff.")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
