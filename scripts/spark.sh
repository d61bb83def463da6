#!/usr/bin/env bash
# Start a local Spark Connect server from the installed pyspark package (its jars ship the
# Connect server since Spark 4.0, so nothing is downloaded) and export QAR_TEST_SPARK_URL.
# Meant to be sourced by scripts/test.sh:   source scripts/spark.sh
# scripts/test.sh stops the server it started when it exits (qar_spark_stop); after sourcing
# this file yourself, stop it with qar_spark_stop.
#
# Which server: QAR_TEST_SPARK_URL when set (yours: neither started nor stopped here). Else a
# server answering on QAR_SPARK_PORT (15002) is reused only when it is this installation's
# Spark (its java runs this pyspark's jars: scripts/services.sh, qar_is_this_spark); another
# one there (say, left by an earlier clone whose virtual environment was since deleted) is left
# alone and a new server starts on a free port. When the server cannot start, the URL is still
# exported: the Spark tests then fail under CI=true and skip on a user's machine.
# QAR_SPARK_NO_START=1 only defines the functions (the tests of this script); QAR_SPARK_NO_WAIT=1
# launches the server without waiting for it (scripts/test.sh calls qar_spark_wait later).
#
# The server runs with local[2] (this machine's two cores), a small driver heap, few shuffle
# partitions (the test tables are tiny), long heartbeat and network timeouts (a loaded machine
# once stalled the driver past the defaults, and local mode then exits), and writes its logs,
# pid file and warehouse under ${QAR_SPARK_HOME:-/tmp/qar-spark}/PORT.

source "$(dirname "${BASH_SOURCE[0]}")/services.sh"

qar_spark_started=""  # "SPARK_HOME|pid dir" of the server started here, for qar_spark_stop

# "reuse PORT" when this installation's Spark answers on PORT ($1; $2 is the pyspark home), else
# "start P": PORT when nothing answers there, otherwise a free port (the holder is left alone).
qar_spark_port() {
  local port="$1" home="$2"
  if qar_port_answers "$port"; then
    if qar_is_this_spark "$port" "$home"; then
      echo "reuse $port"
      return 0
    fi
    echo "note: port $port is held by something other than this installation's Spark ($home); it is left alone" >&2
    port="$(qar_free_port)" || return 1
  fi
  echo "start $port"
}

qar_spark_start() {
  local port="${QAR_SPARK_PORT:-15002}" root="${QAR_SPARK_HOME:-/tmp/qar-spark}" home work choice action
  if [ -n "${QAR_TEST_SPARK_URL:-}" ]; then
    qar_spark_url_given=1
    echo "Spark Connect: using QAR_TEST_SPARK_URL=$QAR_TEST_SPARK_URL as set (not started here)" >&2
    return 0
  fi
  export QAR_TEST_SPARK_URL="sc://localhost:$port"
  command -v java >/dev/null || { echo "note: java not found; Spark cannot start" >&2; return 1; }
  home="$(python3 -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))' 2>/dev/null)" \
    || { echo "note: pyspark is not installed (pip install '.[spark]')" >&2; return 1; }
  ls "$home"/jars/spark-connect*.jar >/dev/null 2>&1 \
    || { echo "note: $home/jars has no Spark Connect jar (pyspark >= 4.0 ships it)" >&2; return 1; }
  choice="$(qar_spark_port "$port" "$home")" || return 1
  read -r action port <<<"$choice"
  export QAR_TEST_SPARK_URL="sc://localhost:$port"
  if [ "$action" = reuse ]; then
    echo "Spark Connect: reusing this installation's server at $QAR_TEST_SPARK_URL (not stopped here)" >&2
    return 0
  fi
  work="$root/$port"
  mkdir -p "$work"
  # pip installs the launch scripts without their execute bit.
  chmod +x "$home"/sbin/*.sh "$home"/bin/* 2>/dev/null || true
  SPARK_HOME="$home" SPARK_LOG_DIR="$work/logs" SPARK_PID_DIR="$work" \
    "$home/sbin/start-connect-server.sh" \
    --master 'local[2]' \
    --driver-memory "${QAR_SPARK_MEMORY:-1g}" \
    --conf spark.connect.grpc.binding.port="$port" \
    --conf spark.sql.shuffle.partitions=4 \
    --conf spark.ui.enabled=false \
    --conf spark.executor.heartbeatInterval=60s \
    --conf spark.network.timeout=600s \
    --conf spark.sql.warehouse.dir="$work/warehouse" \
    --conf "spark.driver.extraJavaOptions=-Dderby.system.home=$work" >/dev/null 2>&1 \
    || { echo "note: start-connect-server.sh failed; see $work/logs" >&2; return 1; }
  qar_spark_started="$home|$work"
  echo "Spark Connect: starting at $QAR_TEST_SPARK_URL (SPARK_HOME=$home, logs in $work/logs)" >&2
  [ -n "${QAR_SPARK_NO_WAIT:-}" ] || qar_spark_wait
}

# Wait (up to 180 s) for the server qar_spark_start launched to open its port; 0 at once when
# none was launched here and QAR_TEST_SPARK_URL names a server that answers or was set by hand.
qar_spark_wait() {
  local port="${QAR_TEST_SPARK_URL##*:}"
  [ -n "$qar_spark_started" ] || { [ -n "$port" ] && qar_port_answers "$port"; } || [ -n "${qar_spark_url_given:-}" ] \
    || return 1
  for _ in $(seq 1 180); do
    if qar_port_answers "$port"; then return 0; fi
    sleep 1
  done
  echo "note: Spark Connect did not open port $port within 180 s; see ${qar_spark_started#*|}/logs" >&2
  return 1
}

# Stop the server qar_spark_start started (its pid file says which process); nothing otherwise.
qar_spark_stop() {
  [ -n "$qar_spark_started" ] || return 0
  local home="${qar_spark_started%%|*}" work="${qar_spark_started#*|}"
  SPARK_HOME="$home" SPARK_PID_DIR="$work" "$home/sbin/stop-connect-server.sh" >/dev/null 2>&1 \
    && echo "Spark Connect: stopped the server started for this run" >&2
  qar_spark_started=""
}

if [ -z "${QAR_SPARK_NO_START:-}" ] && ! qar_spark_start; then
  echo "note: Spark is not available; Spark tests will $( [ "${CI:-}" = true ] && echo FAIL || echo skip )" >&2
fi
