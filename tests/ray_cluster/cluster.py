"""A Ray cluster of a head and worker nodes on this machine (loopback only), for tests and benchmarks.

Every node has its own ``ray start`` (1 CPU, a small object store, no dashboard), all under one
private temp dir and with one private auth token; :meth:`Cluster.stop` kills, by PID, every process
whose command line names that temp dir and their descendants — not ``ray stop --force``, which
would stop every other Ray on a shared machine too.
"""

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

BIN = Path(sys.executable).parent
STARTUP_TIMEOUT_S = 90


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _procs() -> dict[int, tuple[bytes, int]]:
    out: dict[int, tuple[bytes, int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as fh:
                cmd = fh.read()
            with open(f"/proc/{d}/stat", "rb") as fh:
                ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        out[int(d)] = (cmd, ppid)
    return out


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def _kill_tree(tag: str) -> int:
    """SIGKILL every process whose command line contains ``tag``, and their descendants."""
    procs = _procs()
    chosen = {pid for pid, (cmd, _) in procs.items() if tag.encode() in cmd and pid != os.getpid()}
    grew = True
    while grew:
        grew = False
        for pid, (_, ppid) in procs.items():
            if ppid in chosen and pid not in chosen:
                chosen.add(pid)
                grew = True
    for pid in chosen:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return len(chosen)


class Cluster:
    """A head node plus ``workers`` worker nodes named ``node-a``, ``node-b``, ... (1 CPU each by default)."""

    def __init__(self, workers: int = 2, cpus_per_node: int = 1, object_store_bytes: int = 100_000_000) -> None:
        self.temp_dir = tempfile.mkdtemp(prefix="ddlray", dir="/tmp")  # short: Ray's socket paths have a limit
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.node_ports: dict[str, int] = {}
        self.cpus_per_node = cpus_per_node
        self.object_store_bytes = object_store_bytes
        self.initial_workers = workers
        token = os.environ.get("RAY_AUTH_TOKEN") or secrets.token_hex(32)  # this process may hold one already
        self.env = dict(os.environ, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=token,
                        RAY_USAGE_STATS_ENABLED="0", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
                        PYTHONHASHSEED="0")

    def _ray(self, *args: str) -> None:
        subprocess.run([str(BIN / "ray"), *args], env=self.env, check=True, capture_output=True,
                       timeout=STARTUP_TIMEOUT_S)

    def _common(self) -> tuple[str, ...]:
        return (f"--num-cpus={self.cpus_per_node}", "--node-ip-address=127.0.0.1",
                f"--object-store-memory={self.object_store_bytes}", "--disable-usage-stats")

    def start(self) -> Cluster:
        self._ray("start", "--head", f"--port={self.port}", "--include-dashboard=false",
                  f"--temp-dir={self.temp_dir}", *self._common())
        self._wait(1)
        for _ in range(self.initial_workers):
            self.add_node()
        return self

    def add_node(self) -> str:
        name = f"node-{chr(ord('a') + len(self.node_ports))}"
        self.node_ports[name] = _free_port()
        self._ray("start", f"--address={self.address}", f"--node-manager-port={self.node_ports[name]}",
                  *self._common())
        self._wait(1 + len(self.node_ports))
        return name

    def _wait(self, n: int) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline:
            if len(self.raylets()) == n:
                return
            time.sleep(0.25)
        raise RuntimeError(f"the Ray cluster did not reach {n} nodes (raylets: {sorted(self.raylets())})")

    def raylets(self) -> dict[int, bytes]:
        return {pid: cmd for pid, (cmd, _) in _procs().items()
                if b"/raylet\x00" in cmd and self.temp_dir.encode() in cmd and alive(pid)}

    def raylet_of(self, name: str) -> int:
        flag = f"--node_manager_port={self.node_ports[name]}".encode()
        pids = [pid for pid, cmd in self.raylets().items() if flag in cmd]
        assert len(pids) == 1, f"raylet of {name}: {pids}"
        return pids[0]

    def stop(self) -> None:
        _kill_tree(self.temp_dir)
        shutil.rmtree(self.temp_dir, ignore_errors=True)
