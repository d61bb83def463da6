"""scripts/test.sh stops what it started and reuses only this installation's Spark (issue 31):
it left the Spark Connect server (a 1-1.5 GB JVM) and MariaDB running after the suite, and reused
whatever answered on port 15002 — a server left by an earlier clone whose virtual environment
was since deleted broke every Spark test of a later run.

The shell logic runs here with stand-in servers (Python processes listening on free ports); Spark
and MariaDB themselves are not started (a JVM is too heavy for a unit test, and the engine suite
runs them through scripts/test.sh)."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = ["test.sh", "spark.sh", "mariadb.sh", "services.sh"]
# A stand-in Spark: listens on argv[1] and keeps argv[2] (a jar) open, as a JVM keeps its jars;
# its command line names the jar, as the JVM's class path names HOME/jars/*.
FAKE_SPARK = (
    "import socket, sys, time\n"
    "jar = open(sys.argv[2], 'rb')\n"
    "s = socket.socket()\n"
    "s.bind(('127.0.0.1', int(sys.argv[1])))\n"
    "s.listen()\n"
    "print('ready', flush=True)\n"
    "time.sleep(120)\n"
)


def free_ports(n: int) -> list[int]:
    """n distinct free ports: each socket is held until all are chosen, since the kernel may hand
    a just-closed port out again: two ports chosen one after the other can be equal, and the
    "server the script did not start" is then the one it should have stopped."""
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def answers(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


def wait_for(condition, seconds: float = 15) -> None:
    end = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.05)


def bash(code: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", code], cwd=REPO, capture_output=True, text=True, env=env or None)


@pytest.fixture
def servers(tmp_path):
    """start(kind, port) → a running stand-in: "spark" (of the pyspark home tmp/home) or "other"
    (python -m http.server); all are stopped after the test."""
    procs: list[subprocess.Popen] = []
    home = tmp_path / "home"
    (home / "jars").mkdir(parents=True)
    jar = home / "jars" / "spark-connect.jar"
    jar.write_bytes(b"PK")

    def start(kind: str, port: int) -> subprocess.Popen:
        if kind == "spark":
            cmd = [sys.executable, "-c", FAKE_SPARK, str(port), str(jar)]
        else:
            cmd = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(proc)
        wait_for(lambda: answers(port))
        return proc

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
    ours, other, empty = free_ports(3)
    servers("spark", ours)
    servers("other", other)

    def port_choice(port: int) -> str:
        r = bash(f'QAR_SPARK_NO_START=1 source scripts/spark.sh && qar_spark_port {port} "{home}"')
        assert r.returncode == 0, r.stderr
        return r.stdout.strip()

    def is_this_spark(port: int, where: Path = home) -> bool:
        return bash(f'source scripts/services.sh && qar_is_this_spark {port} "{where}"').returncode == 0

    assert is_this_spark(ours) and not is_this_spark(other) and not is_this_spark(empty)
    assert not is_this_spark(ours, home.parent / "another-clone")  # another installation's jars
    assert port_choice(ours) == f"reuse {ours}"
    assert port_choice(empty) == f"start {empty}"
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
    started, already = free_ports(2)
    log, ready = tmp_path / "log", tmp_path / "ready"
    other = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(already), "--bind", "127.0.0.1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: answers(already))
        rest = f'sleep 60 & qar_on_exit "kill $!"; touch {ready}; wait $!' if how != "end" else f"touch {ready}"
        code = (
            "source scripts/services.sh\n"
            "qar_trap_exit\n"
            f"python3 -m http.server {started} --bind 127.0.0.1 >/dev/null 2>&1 &\n"
            f'qar_on_exit "kill $!; wait $! 2>/dev/null; echo stopped-server $BASHPID >> {log}"\n'
            f'qar_on_exit "echo stopping $BASHPID >> {log}"\n'
            "QAR_SPARK_NO_START=1 source scripts/spark.sh\n"  # as test.sh does: sources services.sh again
            f"until (exec 3<>/dev/tcp/127.0.0.1/{started}) 2>/dev/null; do sleep 0.05; done\n"
            f"{rest}\n"
        )
        proc = subprocess.Popen(["bash", "-c", code], cwd=REPO)
        wait_for(ready.exists)
        if how != "end":
            assert answers(started)
            proc.send_signal(getattr(signal, f"SIG{how}"))
        assert proc.wait(timeout=30) == status
        assert log.read_text().split("\n") == [f"stopping {proc.pid}", f"stopped-server {proc.pid}", ""]
        assert not answers(started)
        assert answers(already) and other.poll() is None  # not started by the script: left running
    finally:
        other.kill()
        other.wait()


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
