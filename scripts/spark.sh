#!/usr/bin/env bash
# Start a local Spark Connect server from the installed pyspark package (its jars ship the
# Connect server since Spark 4.0, so nothing is downloaded) and export QAR_TEST_SPARK_URL.
# Meant to be sourced by scripts/test.sh:   source scripts/spark.sh
# A server already answering on the port is reused. When the server cannot start, the URL is
# still exported: the Spark tests then fail under CI=true and skip on a user's machine.
#
# The server runs with local[2] (this machine's two cores), a small driver heap, few shuffle
# partitions (the test tables are tiny), long heartbeat and network timeouts (a loaded machine
# once stalled the driver past the defaults, and local mode then exits), and writes its logs and warehouse under
# ${QAR_SPARK_HOME:-/tmp/qar-spark}. Stop it with: "$SPARK_HOME/sbin/stop-connect-server.sh"
# (SPARK_HOME printed below).

qar_spark_start() {
  local port="${QAR_SPARK_PORT:-15002}" work="${QAR_SPARK_HOME:-/tmp/qar-spark}" home
  export QAR_TEST_SPARK_URL="${QAR_TEST_SPARK_URL:-sc://localhost:$port}"
  command -v java >/dev/null || { echo "note: java not found; Spark cannot start" >&2; return 1; }
  home="$(python3 -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))' 2>/dev/null)" \
    || { echo "note: pyspark is not installed (pip install '.[spark]')" >&2; return 1; }
  ls "$home"/jars/spark-connect*.jar >/dev/null 2>&1 \
    || { echo "note: $home/jars has no Spark Connect jar (pyspark >= 4.0 ships it)" >&2; return 1; }
  # The port answers already: a server from an earlier run (or the user's own).
  if (exec 3<>"/dev/tcp/localhost/$port") 2>/dev/null; then return 0; fi
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
  echo "Spark Connect: starting at $QAR_TEST_SPARK_URL (SPARK_HOME=$home, logs in $work/logs)" >&2
  for _ in $(seq 1 180); do
    if (exec 3<>"/dev/tcp/localhost/$port") 2>/dev/null; then return 0; fi
    sleep 1
  done
  echo "note: Spark Connect did not open port $port within 180 s; see $work/logs" >&2
  return 1
}

if ! qar_spark_start; then
  echo "note: Spark is not available; Spark tests will $( [ "${CI:-}" = true ] && echo FAIL || echo skip )" >&2
fi
