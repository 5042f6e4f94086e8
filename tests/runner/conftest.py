"""A real two-node Ray cluster on 127.0.0.1, started once for the cluster tests: a head node
and a second node process joining it, one CPU and a small object store each, stopped (every
process it started, by id) at the end. Nothing in it reaches beyond this machine."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

RAY = Path(sys.executable).with_name("ray")
# The cluster's own token: the nodes, this driver and the CLI processes the tests start share
# it through the environment (never ~/.ray/auth_token).
AUTH = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
ENV = {
    **os.environ,
    **AUTH,
    "RAY_USAGE_STATS_ENABLED": "0",
    # A killed node is declared dead after ~2 s, not the default ~30 s.
    "RAY_health_check_period_ms": "500",
    "RAY_health_check_timeout_ms": "500",
    "RAY_health_check_failure_threshold": "3",
}
NODE = ["--node-ip-address=127.0.0.1", "--num-cpus=1", f"--memory={2 << 30}",
        f"--object-store-memory={96 << 20}", "--disable-usage-stats", "--block"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tree(pid: int) -> list[int]:
    """pid and every process descended from it (read from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


class Cluster:
    """The head node, the worker nodes started so far, and how to kill or stop them."""

    def __init__(self) -> None:
        self.temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.procs: list[subprocess.Popen] = []
        self.pids: set[int] = set()  # every process of the cluster seen, for the final stop
        self.head = self._start(["--head", f"--port={self.port}", "--include-dashboard=false",
                                 f"--temp-dir={self.temp}"])
        self.workers: list[subprocess.Popen] = []

    def _start(self, args: list[str]) -> subprocess.Popen:
        proc = subprocess.Popen([str(RAY), "start", *args, *NODE], env=ENV, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs.append(proc)
        return proc

    def add_worker(self) -> subprocess.Popen:
        """Start a node process joining the head, and wait until it is alive."""
        import ray

        before = self.alive_nodes()
        proc = self._start([f"--address={self.address}"])
        self.workers.append(proc)
        deadline = time.monotonic() + 60
        while not self.alive_nodes() - before:
            assert proc.poll() is None, "the second Ray node exited while joining"
            assert time.monotonic() < deadline, "the second Ray node did not join in 60 s"
            time.sleep(0.2)
        assert ray.cluster_resources().get("CPU", 0) >= 2
        return proc

    def alive_nodes(self) -> set[str]:
        import ray

        return {n["NodeID"] for n in ray.nodes() if n["Alive"]}

    def worker_running(self) -> bool:
        return bool(self.workers) and self.workers[-1].poll() is None

    def processes(self, proc: subprocess.Popen) -> list[int]:
        """The pids of a node: its `ray start` process and everything it started."""
        return _tree(proc.pid)

    def kill(self, proc: subprocess.Popen) -> None:
        """SIGKILL a node: its `ray start` process and everything it started."""
        for pid in _tree(proc.pid):
            self.pids.add(pid)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait(timeout=10)

    def stop(self) -> None:
        """Stop every process this cluster started, by id: SIGTERM, then SIGKILL."""
        pids = set(self.pids)
        for proc in self.procs:
            pids.update(_tree(proc.pid))
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 3
            while sig == signal.SIGTERM and time.monotonic() < deadline and any(
                    Path(f"/proc/{p}").exists() for p in pids):
                time.sleep(0.2)
        for proc in self.procs:
            proc.wait(timeout=10)
        shutil.rmtree(self.temp, ignore_errors=True)


def _only_loopback() -> bool:
    """Whether this process's network reaches nothing but loopback: then Ray, which picks the
    address a route out would use, can only pick 127.0.0.1 (scripts/test runs the suite in a
    network namespace of its own, with loopback alone, for this)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # a documentation address: a route test, no packet
        except OSError:
            return True
        return probe.getsockname()[0].startswith("127.")


@pytest.fixture(scope="session")
def cluster():
    """The running two-node cluster, this process connected to it as the driver."""
    if not _only_loopback():
        pytest.fail("the Ray cluster tests run where only loopback is reachable, so no node "
                    "listens on or connects to another address: run them through scripts/test "
                    "(it starts the suite in a network namespace of its own, `unshare -n`), or "
                    "deselect them with -m 'not cluster'")
    saved = {k: os.environ.get(k) for k in [*AUTH, "RAY_USAGE_STATS_ENABLED"]}
    os.environ.update({**AUTH, "RAY_USAGE_STATS_ENABLED": "0"})  # before Ray reads them
    ray = pytest.importorskip("ray") if not os.environ.get("CI") else __import__("ray")
    c = Cluster()
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", c.port), timeout=1):
                    break
            except OSError:
                assert c.head.poll() is None, "the Ray head node exited on start"
                assert time.monotonic() < deadline, "the Ray head node did not start in 60 s"
                time.sleep(0.2)
        ray.init(address=c.address, _node_ip_address="127.0.0.1", log_to_driver=False,
                 logging_level="warning", configure_logging=False)
        c.add_worker()
        yield c
    finally:
        if ray.is_initialized():
            ray.shutdown()
        c.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture
def two_nodes(cluster):
    """The cluster with two live nodes (a node killed by an earlier test is replaced)."""
    if not cluster.worker_running():
        cluster.add_worker()
    return cluster
