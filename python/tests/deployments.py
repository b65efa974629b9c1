"""Java systems the tests start themselves: ``tq up`` (the server jar's ``up`` command) as a
separate process, its roles reached through the ``network`` section of a tq.yaml."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import yaml

from transferqueue_jvm import launcher

_READY = re.compile(r"^(controller|storage-unit \d+|store-node \d+) listening on (\S+)$")


def free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def java_base(java: str | None = None) -> list[str]:
    """``java`` with the options the server jar needs."""
    return [java or launcher.find_java(), "--enable-native-access=ALL-UNNAMED"]


def write_config(directory: Path, backend: str, units: int = 2, network: dict | None = None) -> Path:
    """A tq.yaml naming free loopback addresses for a controller and ``units`` storage servers;
    ``network``: more keys of the ``network`` section."""
    ports = free_ports(1 + units)
    servers = [f"127.0.0.1:{p}" for p in ports[1:]]
    conf = {
        "backend": {"storage_backend": backend,
                    "SimpleStorage": {"num_data_storage_units": units},
                    "MooncakeStore": {"global_segment_size": 512 << 20, "local_buffer_size": 64 << 20}},
        "network": {"controller_address": f"127.0.0.1:{ports[0]}",
                    "storage_unit_addresses": servers if backend == "SimpleStorage" else [],
                    "store_node_addresses": servers if backend == "MooncakeStore" else [],
                    **(network or {})},
    }
    path = directory / f"tq-{backend}.yaml"
    path.write_text(yaml.safe_dump(conf), encoding="utf-8")
    return path


class UpSystem:
    """``java -jar tq-server.jar up --config FILE`` running in its own process group."""

    def __init__(self, backend: str, directory: Path | None = None, timeout: float = 90.0, java: str | None = None,
                 network: dict | None = None):
        self.backend = backend
        self._tmp = None
        if directory is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="tq-up-")
            directory = Path(self._tmp.name)
        self.config = write_config(directory, backend, network=network)
        self.log = directory / f"up-{backend}.log"
        self.addresses: dict[str, str] = {}
        with open(self.log, "wb") as err:
            self.proc = subprocess.Popen(
                java_base(java) + ["-jar", str(launcher.jar_path()), "up", "--config", str(self.config)],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err, text=True,
                start_new_session=True)
        expected = 3
        ready = threading.Event()

        def read():
            for line in self.proc.stdout:
                m = _READY.match(line.strip())
                if m:
                    self.addresses[m.group(1)] = m.group(2)
                    if len(self.addresses) == expected:
                        ready.set()
            self.proc.stdout.close()

        threading.Thread(target=read, name=f"tq-up-{backend}", daemon=True).start()
        deadline = time.monotonic() + timeout
        while not ready.wait(0.1):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"tq up ({backend}) did not start: {self.log.read_text(errors='replace')}")

    def stop(self) -> None:
        """SIGTERM to ``tq up`` (it stops its roles), SIGKILL to the group after 20 s."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
