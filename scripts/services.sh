#!/usr/bin/env bash
# Helpers for the servers the test suite needs, sourced by scripts/test.sh and scripts/spark.sh:
#
# * qar_on_exit CMD / qar_trap_exit: run, when the script ends (also on Ctrl-C or TERM), the
#   commands that stop what the script itself started, last started first; a server that was
#   already running is never registered, so it is left alone.
# * qar_port_answers, qar_free_port, qar_listener_pid: is a port taken, a free one, who holds it.
# * qar_is_this_spark PORT HOME: whether the server on PORT is the Spark of this installation
#   (its java runs HOME/jars, none of them deleted since): a server left by an earlier clone
#   whose virtual environment was since deleted answers on the port but fails every query.

# Kept when this file is sourced again (spark.sh sources it inside test.sh, after registrations).
declare -p QAR_CLEANUP >/dev/null 2>&1 || QAR_CLEANUP=()

qar_on_exit() { QAR_CLEANUP+=("$1"); }

qar_cleanup() {
  local i
  for ((i = ${#QAR_CLEANUP[@]} - 1; i >= 0; i--)); do
    eval "${QAR_CLEANUP[$i]}" || true
  done
  QAR_CLEANUP=()
}

# bash runs the EXIT trap on a normal end and after the INT/TERM traps' exit: the status says
# what happened (130: Ctrl-C, 143: TERM), as for an untrapped signal.
qar_trap_exit() {
  trap qar_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

qar_port_answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

qar_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The process listening on TCP port $1 (Linux: the socket's inode in /proc/net/tcp*, then the
# process holding it). Exit status 1 when none can be seen (another user's process, not root).
qar_listener_pid() {
  python3 - "$1" <<'PY'
import os
import sys

port = int(sys.argv[1])
sockets = set()
for table in ("/proc/net/tcp", "/proc/net/tcp6"):
    try:
        with open(table) as f:
            rows = f.read().splitlines()[1:]
    except OSError:
        continue
    for row in rows:
        fields = row.split()
        if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
            sockets.add(f"socket:[{fields[9]}]")
for pid in sorted(filter(str.isdigit, os.listdir("/proc")), key=int):
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        continue
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") in sockets:
                print(pid)
                sys.exit(0)
        except OSError:
            pass
sys.exit(1)
PY
}

qar_is_this_spark() {
  local port="$1" home="$2" pid
  pid="$(qar_listener_pid "$port")" || return 1
  python3 - "$pid" "$home" <<'PY'
import os
import sys

pid, home = sys.argv[1], os.path.normpath(sys.argv[2])
with open(f"/proc/{pid}/cmdline", "rb") as f:
    args = f.read().decode(errors="replace").split("\0")
# The JVM's class path names the jars it runs: HOME/jars/* for a server of this pyspark.
if not any(f"{home}/jars" in arg for arg in args):
    sys.exit(1)
# A JVM keeps its jars open; one deleted or replaced since it started is not this installation's.
for fd in os.listdir(f"/proc/{pid}/fd"):
    try:
        target = os.readlink(f"/proc/{pid}/fd/{fd}")
    except OSError:
        continue
    if target.startswith(home + "/") and target.endswith(" (deleted)"):
        sys.exit(1)
sys.exit(0)
PY
}
