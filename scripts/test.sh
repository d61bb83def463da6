#!/usr/bin/env bash
# Run the test suite: install qar-sql with its test extras, start the local PostgreSQL 15,
# create the test role and database, then run pytest against DuckDB and PostgreSQL.
# Under CI=true a PostgreSQL that cannot be reached fails the PostgreSQL tests (never skips).
#
# The tests use a role of their own, qar_test (password qar_test), and the database qar_test.
# The role is created only when it does not exist; an existing role is never altered (its
# password is not reset). The database is created when missing, else qar_test is granted the
# right to create schemas in it. Set QAR_TEST_PG_URL to use another server or role.
#
# Speed (two cores): the slow setup steps (the extra venvs, MariaDB and Chromium from apt, the
# Spark JVM) run in the background while pip, ruff, mypy and mkdocs run; pytest then runs on
# every core (pytest-xdist, files kept whole on one worker), without the heavy matrix unless
# CI=true or QAR_TEST_HEAVY=1 (below). Arguments go to pytest (CONTRIBUTING.md).
#
# Servers this script starts (PostgreSQL, MariaDB, Spark Connect: a 1-1.5 GB JVM) it stops when
# it exits, also on Ctrl-C or TERM; servers that were already running are left as they are.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/services.sh
qar_trap_exit

# Every server's start script writes to /dev/null as its own user (pg_ctl runs "sh -c ... >/dev/null"
# as postgres): a /dev/null that is not a world-writable character device (a chmod run as root by
# mistake) stops them all with "cannot open /dev/null". Root puts it back; anyone else is told.
null_mode="$(stat -c %a /dev/null 2>/dev/null)"
if ! [ -c /dev/null ] || [ "$null_mode" != 666 ]; then
  if [ "$(id -u)" = 0 ] && [ -c /dev/null ]; then
    chmod 666 /dev/null && echo "note: /dev/null had mode $null_mode; set it back to 666" >&2
  else
    echo "note: /dev/null is not a character device with mode 666; servers will not start (as root: chmod 666 /dev/null)" >&2
  fi
fi

# Python writes the bytecode of what it compiles (git ignores __pycache__/): with
# PYTHONDONTWRITEBYTECODE set, as some images set it, every `qar` process a test starts compiles
# every module it imports again (the 87 help/demo snapshot cases: 61 s of CPU with it, 52 s without).
unset PYTHONDONTWRITEBYTECODE

mkdir -p build/test-setup
setup=build/test-setup
rm -f "$setup"/*.env "$setup"/*.log
pids=()
# Runs "$@" in the background; its stdout (export lines) goes to $setup/NAME.env, read by
# collect once every job has ended.
background() {
  local name=$1
  shift
  ("$@") >"$setup/$name.env" 2>"$setup/$name.log" &
  pids+=($!)
}
collect() {
  local pid f
  for pid in "${pids[@]}"; do wait "$pid"; done
  pids=()
  for f in "$setup"/*.log; do [ -s "$f" ] && cat "$f" >&2; done
  for f in "$setup"/*.env; do source "$f"; done
}
ci_verb() { [ "${CI:-}" = true ] && echo FAIL || echo skip; }

# Installs an extra into a venv of its own under build/ (made from the base interpreter, seeing
# none of its or this environment's packages: the extra brings all its test needs) and prints the
# export of the venv's Python in the named variable, unless the module imports here already or
# the variable is set: extra_venv EXTRA VENV VARIABLE MODULE NAME WHAT.
extra_venv() {
  local extra=$1 venv=build/$2 var=$3 module=$4 name=$5 what=$6
  if ! python3 -c "import $module" 2>/dev/null && [ -z "${!var:-}" ]; then
    # A venv that saw the base interpreter's packages (older runs made them so) is made again.
    grep -qs "include-system-site-packages = true" "$venv/pyvenv.cfg" && rm -rf "$venv"
    if { [ -x "$venv/bin/python" ] || python3 -m venv "$venv"; } \
      && "$venv/bin/python" -m pip install --quiet --disable-pip-version-check ".[$extra]"; then
      echo "export $var='$PWD/$venv/bin/python'"
    else
      echo "note: $name could not be installed; $what will $(ci_verb)" >&2
    fi
  fi
}
# anonymeter (the [anonymeter] extra) pins numpy < 1.27 and pyarrow < 22, below what the rest of the
# suite runs on, so it is not in [dev]: the extra goes into a venv of its own, and
# tests/commands/test_compare_anonymeter.py runs `qar compare --anonymeter` there.
background anonymeter extra_venv anonymeter anonymeter-venv QAR_TEST_ANONYMETER_PYTHON anonymeter anonymeter "its test"

# dbt 1.9 (the [dbt] extra) pins protobuf < 7 and pathspec < 0.13, below what the suite runs on:
# it goes into a venv of its own too, and tests/integrations/test_dbt_package.py runs dbt with that Python.
background dbt extra_venv dbt dbt-venv QAR_TEST_DBT_PYTHON dbt.adapters.duckdb dbt "the dbt package tests"

# The base install, no extra: a venv that does NOT see this environment's packages, so
# tests/test_base_install.py checks that the core commands run on duckdb, SQLAlchemy, scipy, numpy,
# jinja2, click and PyYAML alone, and that qar compare names the extra it needs (exit 2).
base_venv() {
  rm -rf build/base-venv  # rebuilt each run: the installed copy of qar-sql must be this tree's
  if python3 -m venv build/base-venv && build/base-venv/bin/python -m pip install --quiet --disable-pip-version-check .; then
    echo "export QAR_TEST_BASE_PYTHON='$PWD/build/base-venv/bin/python'"
  else
    echo "note: the base venv could not be built; its test will $(ci_verb)" >&2
  fi
}
[ -n "${QAR_TEST_BASE_PYTHON:-}" ] || background base base_venv

# MariaDB for the engine tests, then headless Chromium for the HTML report test (Debian's
# packages, one job: apt takes one lock). mariadb.sh says whether it started the server
# (qar_mariadb_started=1): then it is stopped at exit.
apt_servers() {
  local env status
  env=$(bash scripts/mariadb.sh)
  status=$?
  case "$env" in *qar_mariadb_started=1*) echo "qar_mariadb_started=1" ;; esac
  if [ "$status" = 0 ]; then
    echo "$env" | grep -v '^qar_mariadb_started='
  else
    echo "note: MariaDB is not available; MariaDB tests will $(ci_verb)" >&2
  fi
  if ! command -v chromium >/dev/null; then
    { [ "$(id -u)" = 0 ] && (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1; } \
      || echo "note: Chromium is not available; the browser test of the report will $(ci_verb)" >&2
  fi
}
background servers apt_servers
# At exit, first the background jobs end (an apt install is not cut), then MariaDB stops if
# its job started it (the registrations run last first).
qar_on_exit "grep -qs '^qar_mariadb_started=1' $setup/servers.env && bash scripts/mariadb.sh stop"
qar_on_exit "wait"

python3 -m pip install --quiet --disable-pip-version-check '.[dev]' || exit 3

: "${QAR_TEST_PG_URL:=postgresql+psycopg://qar_test:qar_test@localhost:5432/qar_test}"
export QAR_TEST_PG_URL
start_postgres() {
  command -v pg_isready >/dev/null || { echo "PostgreSQL client tools not found" >&2; return 1; }
  if ! pg_isready -q -h localhost -p 5432; then
    if command -v pg_ctlcluster >/dev/null; then
      if pg_ctlcluster 15 main start 2>&1; then
        qar_on_exit "pg_ctlcluster 15 main stop"
      elif sudo -n pg_ctlcluster 15 main start 2>&1; then
        qar_on_exit "sudo -n pg_ctlcluster 15 main stop"
      fi
    fi
    for _ in $(seq 1 180); do pg_isready -q -h localhost -p 5432 && break; sleep 1; done  # (a busy machine starts it slowly)
  fi
  pg_isready -q -h localhost -p 5432 || return 1
  # SQL goes to psql on stdin, run as the postgres superuser (root: su; otherwise sudo -n).
  run_pg() {
    if [ "$(id -u)" = 0 ]; then su postgres -c "psql -v ON_ERROR_STOP=1 -qtAX -d postgres"
    else sudo -n -u postgres psql -v ON_ERROR_STOP=1 -qtAX -d postgres; fi
  }
  run_pg >/dev/null <<'SQL' || return 1
do $$ begin
  if not exists (select from pg_roles where rolname = 'qar_test') then
    create role qar_test login password 'qar_test' createdb createrole;
  else
    raise notice 'role qar_test exists: left as it is';
  end if;
end $$;
SQL
  if ! echo "select 1 from pg_database where datname = 'qar_test'" | run_pg | grep -q 1; then
    echo "create database qar_test owner qar_test" | run_pg >/dev/null || return 1
  else
    echo "grant create, connect on database qar_test to qar_test" | run_pg >/dev/null || return 1
  fi
}

# Spark Connect for the engine tests: a local server from the pyspark package (exports
# QAR_TEST_SPARK_URL); reused only when it is this installation's, stopped at exit if started
# here. Launched now, waited for just before pytest.
qar_on_exit "declare -F qar_spark_stop >/dev/null && qar_spark_stop"
QAR_SPARK_NO_WAIT=1 source scripts/spark.sh

if ! start_postgres; then
  echo "note: PostgreSQL is not available; PostgreSQL tests will $(ci_verb)" >&2
fi

# The project's own checks: lint and format (ruff), types (mypy), the docs site (strict).
checks=0
python3 -m ruff check qar_sql tests bench scripts || checks=1
python3 -m ruff format --check --quiet qar_sql tests bench scripts || checks=1
python3 -m mypy || checks=1
NO_MKDOCS_2_WARNING=1 python3 -m mkdocs build --strict --quiet || checks=1
[ "$checks" = 0 ] || echo "note: ruff, mypy or mkdocs failed (above); the tests run, and the script fails at the end" >&2

collect
qar_spark_wait || echo "note: Spark is not available; Spark tests will $(ci_verb)" >&2

# The heavy matrix (tests/conftest.py, HEAVY_KEEP: Spark, ClickHouse, dbt on PostgreSQL, Chromium,
# ARX's cases on SQLite, the CI entry points end to end) runs under CI=true (.ci/run) or with
# QAR_TEST_HEAVY=1; otherwise one test of each kind stands for it. A -m of the caller's wins.
heavy=(-m "not heavy")
{ [ "${CI:-}" = true ] || [ "${QAR_TEST_HEAVY:-}" = 1 ]; } && heavy=()
python3 -m pytest -q -p no:cacheprovider -n "${QAR_TEST_WORKERS:-auto}" --dist loadfile "${heavy[@]}" "$@"
status=$?
[ "$status" = 0 ] && [ "$checks" != 0 ] && status=1
exit "$status"
