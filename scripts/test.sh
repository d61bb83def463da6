#!/usr/bin/env bash
# Run the whole test suite: install qar-sql with its test extras, start the local PostgreSQL 15,
# create the test role and database, then run pytest against DuckDB and PostgreSQL.
# Under CI=true a PostgreSQL that cannot be reached fails the PostgreSQL tests (never skips).
#
# The tests use a role of their own, qar_test (password qar_test), and the database qar_test.
# The role is created only when it does not exist; an existing role is never altered (its
# password is not reset). The database is created when missing, else qar_test is granted the
# right to create schemas in it. Set QAR_TEST_PG_URL to use another server or role.
#
# Servers this script starts (PostgreSQL, MariaDB, Spark Connect: a 1-1.5 GB JVM) it stops when
# it exits, also on Ctrl-C or TERM; servers that were already running are left as they are.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/services.sh
qar_trap_exit

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
    for _ in $(seq 1 30); do pg_isready -q -h localhost -p 5432 && break; sleep 1; done
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

# MariaDB for the engine tests (tests/engines/test_conformance.py): installed and started by its own script,
# which says whether it started the server (qar_mariadb_started=1): then it is stopped at exit.
mariadb_env=$(bash scripts/mariadb.sh)
mariadb_status=$?
case "$mariadb_env" in *qar_mariadb_started=1*) qar_on_exit "bash scripts/mariadb.sh stop" ;; esac
if [ "$mariadb_status" = 0 ]; then
  eval "$mariadb_env"
else
  echo "note: MariaDB is not available; MariaDB tests will $( [ "${CI:-}" = true ] && echo FAIL || echo skip )" >&2
fi

# Spark Connect for the engine tests: a local server from the pyspark package (exports
# QAR_TEST_SPARK_URL); reused only when it is this installation's, stopped at exit if started here.
qar_on_exit "declare -F qar_spark_stop >/dev/null && qar_spark_stop"
source scripts/spark.sh

# Headless Chromium for the HTML report test (Debian's package), installed where absent.
if ! command -v chromium >/dev/null; then
  { [ "$(id -u)" = 0 ] && (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1; } \
    || echo "note: Chromium is not available; the browser test of the report will $( [ "${CI:-}" = true ] && echo FAIL || echo skip )" >&2
fi

# Installs an extra into a venv of its own under build/ that sees this environment's packages,
# and exports the venv's Python in the named variable (unless the module imports here already,
# or the variable is set): extra_venv EXTRA VENV VARIABLE MODULE NAME WHAT.
extra_venv() {
  local extra=$1 venv=build/$2 var=$3 module=$4 name=$5 what=$6
  if ! python3 -c "import $module" 2>/dev/null && [ -z "${!var:-}" ]; then
    if { [ -x "$venv/bin/python" ] || python3 -m venv --system-site-packages "$venv"; } \
      && "$venv/bin/python" -m pip install --quiet --disable-pip-version-check ".[$extra]"; then
      export "$var=$PWD/$venv/bin/python"
    else
      echo "note: $name could not be installed; $what will $( [ "${CI:-}" = true ] && echo FAIL || echo skip )" >&2
    fi
  fi
}
# anonymeter (the [anonymeter] extra) pins numpy < 1.27 and pyarrow < 22, below what the rest of the
# suite runs on, so it is not in [dev]: the extra goes into a venv of its own that sees this
# environment's packages, and tests/commands/test_compare_anonymeter.py runs `qar compare --anonymeter` there.
extra_venv anonymeter anonymeter-venv QAR_TEST_ANONYMETER_PYTHON anonymeter anonymeter "its test"

# dbt 1.9 (the [dbt] extra) pins protobuf < 7 and pathspec < 0.13, below what the suite runs on:
# it goes into a venv of its own too, and tests/integrations/test_dbt_package.py runs dbt with that Python.
extra_venv dbt dbt-venv QAR_TEST_DBT_PYTHON dbt.adapters.duckdb dbt "the dbt package tests"

# The base install, no extra (issue 28): a venv that does NOT see this environment's packages, so
# tests/test_base_install.py checks that the core commands run on duckdb, SQLAlchemy, scipy, numpy,
# jinja2, click and PyYAML alone, and that qar compare names the extra it needs (exit 2).
if [ -z "${QAR_TEST_BASE_PYTHON:-}" ]; then
  rm -rf build/base-venv  # rebuilt each run: the installed copy of qar-sql must be this tree's
  if python3 -m venv build/base-venv && build/base-venv/bin/python -m pip install --quiet --disable-pip-version-check .; then
    export QAR_TEST_BASE_PYTHON=$PWD/build/base-venv/bin/python
  else
    echo "note: the base venv could not be built; its test will $( [ "${CI:-}" = true ] && echo FAIL || echo skip )" >&2
  fi
fi

if ! start_postgres; then
  echo "note: PostgreSQL is not available; PostgreSQL tests will $( [ "${CI:-}" = true ] && echo FAIL || echo skip )" >&2
fi

# The project's own checks: lint and format (ruff), types (mypy), the docs site (strict).
checks=0
python3 -m ruff check qar_sql tests bench scripts || checks=1
python3 -m ruff format --check --quiet qar_sql tests bench scripts || checks=1
python3 -m mypy || checks=1
NO_MKDOCS_2_WARNING=1 python3 -m mkdocs build --strict --quiet || checks=1
[ "$checks" = 0 ] || echo "note: ruff, mypy or mkdocs failed (above); the tests run, and the script fails at the end" >&2

python3 -m pytest -q -p no:cacheprovider "$@"
status=$?
[ "$status" = 0 ] && [ "$checks" != 0 ] && status=1
exit "$status"
