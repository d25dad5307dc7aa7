"""A real Spark standalone cluster and a Spark Connect server on this machine, from the pinned pyspark.

``python -m webdedup.engines.spark_cluster up`` (``make spark-up``) starts, each in its own JVM through
pyspark's ``bin/spark-class``:

* a standalone master (``spark://127.0.0.1:<DEDUP_SPARK_MASTER_PORT>``, default 7177);
* two workers, each offering ``DEDUP_SPARK_WORKER_CORES`` cores (default 2: one executor of one core for
  each of the two applications, the dbt driver of profile ``spark_cluster`` and the Connect server, so
  both run at once with one executor on each worker) and ``DEDUP_SPARK_WORKER_MEMORY`` (default 2g);
* a Spark Connect server (``sc://127.0.0.1:<DEDUP_SPARK_CONNECT_PORT>``, default 15102), itself an
  application of the standalone master, with its own Hive metastore and warehouse.

``down`` (``make spark-down``) stops them (by their pid files), ``status`` lists them.  Logs and pid
files live in ``DEDUP_SPARK_CLUSTER_DIR`` (default ``target/spark-cluster``).  The workers' environment
has no PYTHONPATH to this project: executors import ``webdedup`` only from what the driver ships
(``spark_models.ship_package``), as on a real cluster.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyspark

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SPARK_HOME = Path(pyspark.__file__).resolve().parent
HOST = "127.0.0.1"
DEFAULT_DIR = PROJECT_ROOT / "target" / "spark-cluster"
#: Not passed on to the cluster's JVMs: executors must not find webdedup through the driver's paths.
DRIVER_ONLY_ENV = ("PYTHONPATH", "SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED")


def settings() -> dict[str, str]:
    env = os.environ.get
    return {
        "dir": str(Path(env("DEDUP_SPARK_CLUSTER_DIR", str(DEFAULT_DIR))).resolve()),
        "master_port": env("DEDUP_SPARK_MASTER_PORT", "7177"),
        "connect_port": env("DEDUP_SPARK_CONNECT_PORT", "15102"),
        "workers": env("DEDUP_SPARK_WORKERS", "2"),
        "worker_cores": env("DEDUP_SPARK_WORKER_CORES", "2"),
        "worker_memory": env("DEDUP_SPARK_WORKER_MEMORY", "2g"),
        "daemon_memory": env("DEDUP_SPARK_DAEMON_MEMORY", "512m"),
        "executor_memory": env("DEDUP_SPARK_EXECUTOR_MEMORY", "768m"),
        "connect_driver_memory": env("DEDUP_SPARK_CONNECT_DRIVER_MEMORY", "1g"),
    }


def master_url(config: dict[str, str] | None = None) -> str:
    return f"spark://{HOST}:{(config or settings())['master_port']}"


def connect_url(config: dict[str, str] | None = None) -> str:
    return f"sc://{HOST}:{(config or settings())['connect_port']}"


def _environment(config: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in DRIVER_ONLY_ENV}
    env.update(
        SPARK_HOME=str(SPARK_HOME),
        SPARK_DAEMON_MEMORY=config["daemon_memory"],
        SPARK_LOCAL_IP=HOST,
        SPARK_NO_DAEMONIZE="1",
        PYSPARK_PYTHON=sys.executable,
    )
    return env


def _start(name: str, arguments: list[str], config: dict[str, str]) -> int:
    folder = Path(config["dir"])
    folder.mkdir(parents=True, exist_ok=True)
    pid_file = folder / f"{name}.pid"
    if pid_file.exists() and _alive(int(pid_file.read_text())):
        return int(pid_file.read_text())
    with open(folder / f"{name}.log", "ab") as log:
        process = subprocess.Popen(
            [str(SPARK_HOME / "bin" / "spark-class"), *arguments],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=_environment(config),
            cwd=folder,
            start_new_session=True,  # its own process group: down stops the JVM and its children
        )
    pid_file.write_text(str(process.pid))
    return process.pid


def _alive(pid: int) -> bool:
    """Whether the process runs.  A process this one started (``up`` then ``down`` in one process, as
    the tests and the benchmark do) is reaped once it exits; a zombie is not alive."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    except ChildProcessError:  # not our child
        pass
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _wait_for(description: str, ready, timeout: float, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(1)
    tail = log.read_text(errors="replace")[-3000:] if log.exists() else "(no log)"
    raise RuntimeError(f"spark_cluster: {description} not ready after {timeout:.0f} s; end of {log}:\n{tail}")


def _port_open(port: str) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex((HOST, int(port))) == 0


def _log_says(log: Path, text: str) -> bool:
    return log.exists() and text in log.read_text(errors="replace")


def _event_log_conf() -> list[str]:
    """The Connect server's event log (benchmarks/spark_stages.py reads it) when DEDUP_SPARK_EVENT_LOG
    names a folder, as the spark_cluster profile does for its driver."""
    folder = os.environ.get("DEDUP_SPARK_EVENT_LOG", "")
    if not folder:
        return []
    settings = {
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": folder,
        "spark.eventLog.compress": "false",
    }
    return [item for key, value in settings.items() for item in ("--conf", f"{key}={value}")]


def up(timeout: float = 180) -> str:
    config = settings()
    folder = Path(config["dir"])
    _start(
        "master",
        ["org.apache.spark.deploy.master.Master", "--host", HOST, "--port", config["master_port"],
         "--webui-port", "0"],
        config,
    )  # fmt: skip
    _wait_for("master", lambda: _port_open(config["master_port"]), timeout, folder / "master.log")
    for number in range(1, int(config["workers"]) + 1):
        name = f"worker-{number}"
        (folder / name).mkdir(exist_ok=True)
        _start(
            name,
            [
                "org.apache.spark.deploy.worker.Worker",
                master_url(config),
                "--host", HOST,
                "--cores", config["worker_cores"],
                "--memory", config["worker_memory"],
                "--webui-port", "0",
                "--work-dir", str(folder / name),
            ],
            config,
        )  # fmt: skip
    for number in range(1, int(config["workers"]) + 1):
        log = folder / f"worker-{number}.log"
        registered = lambda log=log: _log_says(log, "Successfully registered with master")  # noqa: E731
        _wait_for(f"worker-{number}", registered, timeout, log)
    metastore = folder / "connect-metastore"
    derby_url = f"jdbc:derby:;databaseName={metastore};create=true"
    _start(
        "connect",
        [
            "org.apache.spark.deploy.SparkSubmit",
            "--master", master_url(config),
            "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
            "--name", "web_text_dedup_connect",
            "--driver-memory", config["connect_driver_memory"],
            "--conf", f"spark.connect.grpc.binding.address={HOST}",
            "--conf", f"spark.connect.grpc.binding.port={config['connect_port']}",
            "--conf", f"spark.executor.memory={config['executor_memory']}",
            "--conf", "spark.executor.cores=1",
            "--conf", f"spark.cores.max={config['workers']}",
            "--conf", "spark.sql.catalogImplementation=hive",
            "--conf", f"spark.sql.warehouse.dir={folder / 'connect-warehouse'}",
            "--conf", f"spark.hadoop.javax.jdo.option.ConnectionURL={derby_url}",
            "--conf", f"spark.driver.extraJavaOptions=-Dderby.system.home={metastore}-derby",
            "--conf", f"spark.pyspark.python={sys.executable}",
            "--conf", "spark.sql.session.timeZone=UTC",
            "--conf", "spark.ui.enabled=false",
            *_event_log_conf(),
            "spark-internal",
        ],
        config,
    )  # fmt: skip
    connect_log = folder / "connect.log"
    _wait_for("Spark Connect server", lambda: _port_open(config["connect_port"]), timeout, connect_log)
    workers = config["workers"]
    return f"standalone master {master_url(config)} ({workers} workers), Spark Connect {connect_url(config)}"


def down() -> str:
    folder = Path(settings()["dir"])
    stopped = []
    for name in ("connect", *sorted(p.stem for p in folder.glob("worker-*.pid")), "master"):
        pid_file = folder / f"{name}.pid"
        if not pid_file.exists():
            continue
        pid = int(pid_file.read_text())
        if _alive(pid):
            os.killpg(pid, signal.SIGTERM)
            deadline = time.monotonic() + 30
            while _alive(pid) and time.monotonic() < deadline:
                time.sleep(0.5)
            if _alive(pid):
                os.killpg(pid, signal.SIGKILL)
            stopped.append(name)
        pid_file.unlink()
    return f"stopped {', '.join(stopped) or 'nothing (not running)'}"


def status() -> str:
    folder = Path(settings()["dir"])
    rows = []
    for pid_file in sorted(folder.glob("*.pid")):
        pid = int(pid_file.read_text())
        rows.append(f"{pid_file.stem}: pid {pid} {'running' if _alive(pid) else 'not running'}")
    return "\n".join(rows) or "not running"


def main(argv: list[str]) -> int:
    commands = {"up": up, "down": down, "status": status}
    if len(argv) != 1 or argv[0] not in commands:
        print("usage: python -m webdedup.engines.spark_cluster up|down|status", file=sys.stderr)
        return 2
    try:
        print(commands[argv[0]]())
    except RuntimeError as error:
        print(error, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
