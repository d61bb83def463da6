"""scripts/test.sh stops what it started and reuses only this installation's Spark (issue 31):
it left the Spark Connect server (a 1-1.5 GB JVM) and MariaDB running after the suite, and reused
whatever answered on port 15002 — a server left by an earlier clone whose virtual environment
was since deleted broke every Spark test of a later run.

The shell logic runs here with stand-in servers (Python processes listening on free ports); Spark
and MariaDB themselves are not started (a JVM is too heavy for a unit test, and the engine suite
runs them through scripts/test.sh)."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = ["test.sh", "spark.sh", "mariadb.sh", "services.sh"]
# A stand-in server: listens on a port the kernel picks when it binds (a port chosen first and
# bound later can be taken in between by any process of the machine) and writes it to the file
# argv[2]; it keeps the files argv[3:] (jars) open, as a JVM keeps its jars, and its command line
# names them, as the JVM's class path names HOME/jars/*. It runs until killed, or until the
# test's process argv[1] is gone.
STAND_IN = (
    "import os, socket, sys, time\n"
    "owner, ready, jars = int(sys.argv[1]), sys.argv[2], [open(j, 'rb') for j in sys.argv[3:]]\n"
    "s = socket.socket()\n"
    "s.bind(('127.0.0.1', 0))\n"
    "s.listen()\n"
    "with open(ready + '.part', 'w') as f:\n"
    "    f.write(str(s.getsockname()[1]))\n"
    "os.replace(ready + '.part', ready)\n"
    "while True:\n"
    "    time.sleep(1)\n"
    "    try:\n"
    "        os.kill(owner, 0)\n"
    "    except ProcessLookupError:\n"
    "        break\n"
)


def stand_in(ready: Path, *jars: Path) -> list[str]:
    """The command line of a stand-in server that writes its port to ``ready``."""
    return [sys.executable, "-c", STAND_IN, str(os.getpid()), str(ready), *map(str, jars)]


def port_of(ready: Path) -> int:
    """The port a stand-in listens on, once it does."""
    wait_for(ready.exists)
    return int(ready.read_text())


@contextlib.contextmanager
def unused_port():
    """A port nothing answers on, held (bound, not listening) until the block ends so that no
    other process takes it meanwhile."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


def answers(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


def wait_for(condition, seconds: float = 60) -> None:
    end = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.05)


def bash(code: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", code], cwd=REPO, capture_output=True, text=True, env=env or None)


def interruptible(code: str) -> list[str]:
    """``bash -c CODE`` that takes SIGINT as from a terminal. A process started in the background
    inherits SIGINT ignored (pytest, then its children, too), and bash cannot trap a signal
    ignored on entry: Ctrl-C was lost and the test waited out its timeout. The shim restores
    SIGINT and execs bash (the same process id), rather than a preexec_fn (unsafe with threads)."""
    shim = "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp('bash', ['bash', '-c', sys.argv[1]])"
    return [sys.executable, "-c", shim, code]


@pytest.fixture
def servers(tmp_path):
    """start(kind) → the port of a running stand-in: "spark" (of the pyspark home tmp/home) or
    "other" (no jars); all are stopped after the test."""
    procs: list[subprocess.Popen] = []
    home = tmp_path / "home"
    (home / "jars").mkdir(parents=True)
    jar = home / "jars" / "spark-connect.jar"
    jar.write_bytes(b"PK")

    def start(kind: str) -> int:
        ready = tmp_path / f"{kind}-{len(procs)}.port"
        procs.append(subprocess.Popen(stand_in(ready, *([jar] if kind == "spark" else []))))
        port = port_of(ready)
        assert answers(port)
        return port

    start.home = home  # type: ignore[attr-defined]
    start.jar = jar  # type: ignore[attr-defined]
    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_scripts_parse(script):
    r = subprocess.run(["bash", "-n", str(REPO / "scripts" / script)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="the listener is found through Linux's /proc")
def test_only_this_installations_spark_is_reused(servers):
    home = servers.home
    ours, other = servers("spark"), servers("other")

    def port_choice(port: int) -> str:
        r = bash(f'QAR_SPARK_NO_START=1 source scripts/spark.sh && qar_spark_port {port} "{home}"')
        assert r.returncode == 0, r.stderr
        return r.stdout.strip()

    def is_this_spark(port: int, where: Path = home) -> bool:
        return bash(f'source scripts/services.sh && qar_is_this_spark {port} "{where}"').returncode == 0

    with unused_port() as empty:
        assert is_this_spark(ours) and not is_this_spark(other) and not is_this_spark(empty)
        assert port_choice(empty) == f"start {empty}"
    assert not is_this_spark(ours, home.parent / "another-clone")  # another installation's jars
    assert port_choice(ours) == f"reuse {ours}"
    action, port = port_choice(other).split()
    assert action == "start" and int(port) != other and not answers(int(port))
    assert answers(other)  # the holder is left alone
    # The installation's jars deleted since the server started (its virtual environment removed):
    # the server still answers but is no longer this installation's.
    servers.jar.unlink()
    assert not is_this_spark(ours)
    action, port = port_choice(ours).split()
    assert action == "start" and int(port) != ours


@pytest.mark.parametrize(("how", "status"), [("end", 0), ("TERM", 143), ("INT", 130)])
def test_the_script_stops_what_it_started_when_it_exits(how, status, tmp_path):
    """qar_trap_exit + qar_on_exit: the registered stops run once, last first, on a normal end
    and on Ctrl-C (INT) or TERM; a server the script did not start is never registered."""
    log, ready, port_file = tmp_path / "log", tmp_path / "ready", tmp_path / "started.port"
    other, proc = subprocess.Popen(stand_in(tmp_path / "already.port")), None
    try:
        already = port_of(tmp_path / "already.port")
        rest = f'sleep 60 & qar_on_exit "kill $!"; touch {ready}; wait $!' if how != "end" else f"touch {ready}"
        code = (
            "source scripts/services.sh\n"
            "qar_trap_exit\n"
            f"{shlex.join(stand_in(port_file))} >/dev/null 2>&1 &\n"
            f'qar_on_exit "kill $!; wait $! 2>/dev/null; echo stopped-server $BASHPID >> {log}"\n'
            f'qar_on_exit "echo stopping $BASHPID >> {log}"\n'
            "QAR_SPARK_NO_START=1 source scripts/spark.sh\n"  # as test.sh does: sources services.sh again
            f"until [ -e {port_file} ]; do sleep 0.05; done\n"
            f"{rest}\n"
        )
        proc = subprocess.Popen(interruptible(code), cwd=REPO)
        wait_for(ready.exists)
        started = int(port_file.read_text())
        if how != "end":
            assert answers(started)
            proc.send_signal(getattr(signal, f"SIG{how}"))
        assert proc.wait(timeout=120) == status
        assert log.read_text().split("\n") == [f"stopping {proc.pid}", f"stopped-server {proc.pid}", ""]
        assert not answers(started)
        assert answers(already) and other.poll() is None  # not started by the script: left running
    finally:
        for p in (other, proc):
            if p is not None and p.poll() is None:  # a failed test leaves no process behind
                p.kill()
                p.wait()


def test_test_sh_registers_a_stop_for_each_server_it_starts():
    """test.sh's own wiring (it installs packages and starts servers, so it is read, not run):
    the trap is set before any server starts, and each start registers its stop."""
    text = (REPO / "scripts" / "test.sh").read_text(encoding="utf-8")
    trap = text.index("qar_trap_exit")
    for start, stop in [
        ("pg_ctlcluster 15 main start", 'qar_on_exit "pg_ctlcluster 15 main stop"'),
        ("bash scripts/mariadb.sh)", "bash scripts/mariadb.sh stop"),
        ("source scripts/spark.sh", "qar_spark_stop"),
    ]:
        assert trap < text.index(start) and stop in text, start
    spark = (REPO / "scripts" / "spark.sh").read_text(encoding="utf-8")
    assert 'qar_spark_started="$home|$work"' in spark and "stop-connect-server.sh" in spark
    mariadb = (REPO / "scripts" / "mariadb.sh").read_text(encoding="utf-8")
    assert mariadb.index('echo "qar_mariadb_started=1"') > mariadb.index("mysqld_safe --skip-syslog")
