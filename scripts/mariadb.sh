#!/usr/bin/env bash
# Start a local MariaDB for the engine tests (tests/engine_registry.py), the way scripts/test.sh
# starts PostgreSQL: install Debian's mariadb-server when absent (root only), start mysqld
# without systemd, create the database qar_test, the user qar_test (every privilege on the
# databases qar_test%: each test works in a database of its own) and the SELECT-only user
# qar_test_ro (for the read-only tests). Prints the export lines for QAR_TEST_MYSQL_URL and
# QAR_TEST_MYSQL_RO_URL; use it as: eval "$(bash scripts/mariadb.sh)". When it started the
# server itself (none was running) it also prints qar_mariadb_started=1, and scripts/test.sh
# then stops it when it exits: bash scripts/mariadb.sh stop. A server that was already running
# is left alone.
# Exit status 1 when the server cannot be started (the MariaDB tests then skip, or fail under CI=true).
set -uo pipefail

run_as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi; }

socket=/run/mysqld/mysqld.sock
client() { run_as_root mariadb --protocol=socket -S "$socket" -u root "$@"; }

if [ "${1:-}" = stop ]; then  # mysqld_safe ends when the server shuts down cleanly
  client -e "shutdown" >/dev/null 2>&1 || { echo "note: could not shut MariaDB down" >&2; exit 1; }
  echo "MariaDB: stopped the server started for this run" >&2
  exit 0
fi

if ! command -v mysqld_safe >/dev/null && ! command -v mariadbd-safe >/dev/null; then
  { run_as_root apt-get update -qq && DEBIAN_FRONTEND=noninteractive run_as_root apt-get install -y -qq mariadb-server; } \
    >/dev/null 2>&1 || { echo "note: cannot install mariadb-server" >&2; exit 1; }
fi

started=""
if ! client -e "select 1" >/dev/null 2>&1; then
  run_as_root mkdir -p /run/mysqld && run_as_root chown mysql:mysql /run/mysqld 2>/dev/null
  # No systemd here: mysqld_safe keeps the server running in the background.
  (run_as_root mysqld_safe --skip-syslog >/dev/null 2>&1 &)
  started=1
  echo "qar_mariadb_started=1"  # first: a server that then fails to answer is stopped too
  # up to 180 s, as for Spark: pip, apt and the other servers start on the same two cores
  for _ in $(seq 1 180); do client -e "select 1" >/dev/null 2>&1 && break; sleep 1; done
fi
client -e "select 1" >/dev/null 2>&1 || { echo "note: MariaDB did not start${started:+ (stop it: bash scripts/mariadb.sh stop)}" >&2; exit 1; }

# The default collation stays case- and trailing-space-insensitive on purpose: qar must count
# 'a', 'A' and 'a ' apart there as DuckDB does.
client >/dev/null <<'SQL' || exit 1
create database if not exists qar_test character set utf8mb4 collate utf8mb4_general_ci;
create user if not exists 'qar_test'@'localhost' identified by 'qar_test';
create user if not exists 'qar_test'@'127.0.0.1' identified by 'qar_test';
grant all privileges on `qar\_test%`.* to 'qar_test'@'localhost';
grant all privileges on `qar\_test%`.* to 'qar_test'@'127.0.0.1';
create user if not exists 'qar_test_ro'@'localhost' identified by 'qar_test_ro';
create user if not exists 'qar_test_ro'@'127.0.0.1' identified by 'qar_test_ro';
grant select on `qar\_test%`.* to 'qar_test_ro'@'localhost';
grant select on `qar\_test%`.* to 'qar_test_ro'@'127.0.0.1';
SQL

echo "export QAR_TEST_MYSQL_URL='${QAR_TEST_MYSQL_URL:-mysql+pymysql://qar_test:qar_test@127.0.0.1:3306/qar_test}'"
echo "export QAR_TEST_MYSQL_RO_URL='${QAR_TEST_MYSQL_RO_URL:-mysql+pymysql://qar_test_ro:qar_test_ro@127.0.0.1:3306/qar_test}'"
