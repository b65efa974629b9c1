#!/usr/bin/env python3
"""Side by side with upstream TransferQueue: its perftest workload, in one run, interleaved.

Systems (``--systems``, comma-separated, default all that can start here):

- ``upstream-simple``: upstream TransferQueue 0.1.11's SimpleStorage on a local Ray (started here,
  no dashboard), upstream's default of 2 storage units (``--upstream-units`` for more variants);
- ``upstream-mooncake``: upstream's MooncakeStore backend against a real ``mooncake_master``
  (Mooncake 0.3.13.post1) started here on loopback, TCP protocol, P2P handshake metadata;
- ``ours-simple`` / ``ours-mooncake``: this project through its Python client (``transferqueue_jvm``),
  SimpleStorage (2 storage units) and MooncakeStore (2 store nodes), servers started by ``init()``;
- ``java``: this project's Java client, ``tq bench --mode loopback`` on the same sizes, for reference.

Every system runs the same workload (compare_workload.py): one writer and one reader client process,
put -> list -> get -> clear per iteration, the same warm-up and measured iteration counts; the
iterations run in blocks that rotate among the systems, so the machine's noise hits all alike. The
reader checks the data it read on the first warm-up and the last measured iteration; a system that
returned wrong data gets no figure.

    python python/bench/compare_upstream.py --preset small --case simple,complex \\
        --json compare.json --chart compare.png

The harness installs nothing. Prepare a venv with python/bench/requirements-compare.txt
(docs/PERFORMANCE.md, "Comparison with upstream"); whatever is missing is named with its pip line.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

import procstat  # noqa: E402
from compare_workload import PRESETS, Case, segment_bytes  # noqa: E402

REQUIREMENTS = HERE / "requirements-compare.txt"
SYSTEMS = ["upstream-simple", "upstream-mooncake", "ours-simple", "ours-mooncake", "java"]
LABELS = {
    "upstream-simple": "upstream SimpleStorage",
    "upstream-mooncake": "upstream MooncakeStore (mooncake_master, TCP)",
    "ours-simple": "ours SimpleStorage (Python client)",
    "ours-mooncake": "ours MooncakeStore (Python client)",
}
PIP_LINE = f"pip install -r {REQUIREMENTS.relative_to(REPO)} -e python"


# ------------------------------------------------------------------------------------ requirements

_PROBE = """
import importlib, json, sys
out = {}
for m in sys.argv[1:]:
    try:
        importlib.import_module(m)
        out[m] = None
    except BaseException as e:
        out[m] = f"{type(e).__name__}: {e}"
try:
    from transferqueue_jvm import launcher
    launcher.jar_path()
    launcher.find_java()
    out["servers"] = None
except BaseException as e:
    out["servers"] = f"{type(e).__name__}: {e}"
print(json.dumps(out))
"""


def _import_errors(modules: list[str]) -> dict[str, str | None]:
    """``{module: None or the import error}``, from one child interpreter (an import may fail for
    a missing shared library, not only a missing package); ``servers``: the jar and a JDK 25."""
    r = subprocess.run([sys.executable, "-c", _PROBE, *modules], capture_output=True, text=True, timeout=300)
    try:
        return json.loads(r.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return {m: f"probe failed: {r.stderr.strip()[-500:]}" for m in modules + ["servers"]}


def mooncake_master() -> str | None:
    """The ``mooncake_master`` executable (next to this Python, or on PATH)."""
    here = Path(sys.executable).parent / "mooncake_master"
    if here.exists():
        return str(here)
    return shutil.which("mooncake_master")


def check_requirements(systems: list[str]) -> dict[str, str]:
    """``{system: why it cannot run}`` for the systems whose requirements are missing."""
    problems: dict[str, str] = {}
    need = {
        "upstream-simple": [("transfer_queue", "transferqueue==0.1.11"), ("ray", "'ray[default]==2.60.0'"),
                            ("tensordict", "tensordict==0.15.3")],
        "upstream-mooncake": [("transfer_queue", "transferqueue==0.1.11"), ("ray", "'ray[default]==2.60.0'"),
                              ("tensordict", "tensordict==0.15.3"),
                              ("mooncake.store", "mooncake-transfer-engine-non-cuda==0.3.13.post1")],
        "ours-simple": [("transferqueue_jvm", "-e python  # this project's package, from the repository root"), ("tensordict", "tensordict==0.15.3")],
        "ours-mooncake": [("transferqueue_jvm", "-e python  # this project's package, from the repository root"), ("tensordict", "tensordict==0.15.3")],
        "java": [],
    }
    errors = _import_errors(sorted({m for s in systems for m, _ in need[s]}))
    for system in systems:
        missing = []
        for module, req in need[system]:
            err = errors.get(module)
            if err is not None:
                hint = ""
                if "libibverbs" in err:
                    hint = " (the Mooncake wheel needs the system library: apt-get install libibverbs1)"
                missing.append(f"{module} ({err}){hint}: pip install {req}")
        if system == "upstream-mooncake" and not missing:
            if mooncake_master() is None:
                missing.append("mooncake_master executable not found (it comes with "
                               "mooncake-transfer-engine-non-cuda==0.3.13.post1)")
            else:
                r = subprocess.run([mooncake_master(), "--help"], capture_output=True, text=True, timeout=60)
                if "error while loading shared libraries" in r.stderr:
                    missing.append(f"mooncake_master cannot start: {r.stderr.strip()}"
                                   + (" (apt-get install libibverbs1)" if "libibverbs" in r.stderr else ""))
        if system.startswith("ours") and not missing and errors.get("servers"):
            missing.append(errors["servers"])
        if system == "java" and not (REPO / "tq").exists():
            missing.append(f"{REPO / 'tq'} not found")
        if missing:
            problems[system] = "; ".join(missing)
    return problems


# ------------------------------------------------------------------------------- JSON-line channel

class ChannelError(RuntimeError):
    """The peer process answered with an error, ended, or missed the deadline."""


class Channel:
    """Requests and replies as JSON lines over a child's stdin/stdout, each bounded by a deadline."""

    def __init__(self, proc: subprocess.Popen, name: str):
        self.proc = proc
        self.name = name
        self._buf = b""

    def call(self, method: str, *args, timeout: float = 600.0):
        self.send(method, *args)
        return self.receive(method, timeout)

    def send(self, method: str, *args) -> None:
        msg = json.dumps({"method": method, "args": list(args)}) + "\n"
        try:
            self.proc.stdin.write(msg.encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as e:
            raise ChannelError(f"{self.name}: cannot send {method}: {e}") from e

    def receive(self, method: str, timeout: float):
        """The reply to the request sent last, by the deadline."""
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ChannelError(f"{self.name}: no answer to {method} within {timeout:.0f} s")
            ready, _, _ = select.select([fd], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise ChannelError(f"{self.name}: ended (exit status {self.proc.poll()}) during {method}")
                self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        reply = json.loads(line)
        if "error" in reply:
            raise ChannelError(f"{self.name}: {method} failed: {reply['error']}")
        return reply["result"]


def serve(handler) -> None:
    """The child side: answers JSON-line requests on the original stdout until ``close`` or EOF.

    Whatever the libraries print goes to stderr (fd 1 is pointed at fd 2)."""
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            result = getattr(handler, req["method"])(*req["args"])
            reply = {"result": result}
        except BaseException as e:  # answered to the caller, which decides
            reply = {"error": f"{type(e).__name__}: {e}\n{traceback.format_exc()}"}
        out.write(json.dumps(reply) + "\n")
        if req["method"] == "close":
            break


def spawn(args: list[str], name: str, log, env: dict | None = None) -> tuple[subprocess.Popen, Channel]:
    e = dict(os.environ if env is None else env)
    e["PYTHONPATH"] = os.pathsep.join([str(HERE)] + ([e["PYTHONPATH"]] if e.get("PYTHONPATH") else []))
    proc = subprocess.Popen([sys.executable, str(HERE / "compare_upstream.py"), *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=log, env=e)
    return proc, Channel(proc, name)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen, deadline_s: float, what: str) -> None:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with status {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not accept connections on 127.0.0.1:{port} within {deadline_s:.0f} s")


# ------------------------------------------------------------------------------------ system hosts

class Worker:
    """Child-process side of one client of this project (``--worker``)."""

    def __init__(self, api: str, role: str):
        from compare_workload import ClientRole
        self.role = ClientRole(api, role)

    def __getattr__(self, name):
        return getattr(self.role, name)


class Host:
    """One system under test (``--host SPEC``): starts its servers and its two client processes,
    and runs the iterations the harness asks for."""

    def __init__(self, spec: dict):
        self.spec = spec
        self.system = spec["system"]
        self.children: list[subprocess.Popen] = []
        self.master: subprocess.Popen | None = None
        self.ray = None
        self.clients: dict[str, Any] = {}
        self.timeout = float(spec.get("call_timeout", 600))

    # -- start
    def start(self) -> dict:
        if self.system.startswith("upstream"):
            return self._start_upstream()
        return self._start_ours()

    def _start_upstream(self) -> dict:
        # Ray otherwise advertises (and its workers connect to) the machine's outward address;
        # with this it keeps every socket on 127.0.0.1: the smallest setting for one host.
        os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
        # Ray's memory monitor kills workers when the whole machine's memory use passes 95 %; on a
        # machine shared with other jobs it killed the storage units and clients mid-run.
        os.environ.setdefault("RAY_memory_monitor_refresh_ms", "0")
        import ray
        self.ray = ray
        seg = int(self.spec["segment_bytes"])
        conf: dict[str, Any] = {"controller": {"sampler": "SequentialSampler", "polling_mode": False}}
        info: dict[str, Any] = {}
        if self.system == "upstream-mooncake":
            rpc, metrics = free_port(), free_port()
            cmd = [self.spec["mooncake_master"], "-rpc_address=127.0.0.1", f"-rpc_port={rpc}",
                   "-metrics_host=127.0.0.1", f"-metrics_port={metrics}", "-client_ttl=30",
                   "-default_kv_lease_ttl=999999", "-default_kv_soft_pin_ttl=999999",
                   "-allow_evict_soft_pinned_objects=false", "-eviction_high_watermark_ratio=1.0",
                   "-eviction_ratio=0.0"]
            self.master = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=sys.stderr, stderr=sys.stderr)
            self.children.append(self.master)
            wait_port(rpc, self.master, 60, "mooncake_master")
            info["mooncake_master"] = " ".join(cmd)
            conf["backend"] = {"storage_backend": "MooncakeStore", "MooncakeStore": {
                "auto_init": False,  # started above, on our ports (upstream's auto_init pkills every mooncake_master)
                "metadata_server": "P2PHANDSHAKE", "master_server_address": f"127.0.0.1:{rpc}",
                "local_hostname": "127.0.0.1", "protocol": "tcp", "device_name": "",
                "global_segment_size": seg, "local_buffer_size": 64 << 20}}
        else:
            units = int(self.spec.get("units", 2))
            conf["backend"] = {"storage_backend": "SimpleStorage",
                               "SimpleStorage": {"num_data_storage_units": units, "total_storage_size": None}}
        for attempt in (1, 2):
            try:
                ray.init(address="local", include_dashboard=False, num_cpus=8, log_to_driver=False,
                         configure_logging=False, namespace=f"compare-{os.getpid()}")
                break
            except Exception as e:  # Ray's fixed 30 s for the raylet to register: once more on a busy machine
                if attempt == 2 or "timed out during startup" not in str(e):
                    raise
                print(f"ray.init: {e}; trying once more", file=sys.stderr)
                ray.shutdown()
        from compare_workload import ClientRole
        actor = ray.remote(num_cpus=0)(ClientRole)
        pids = {}
        # The writer initialises first: as in upstream's perftest, it creates the controller and
        # the storage; the reader then attaches to them.
        for role in ("writer", "reader"):
            handle = actor.remote("transfer_queue", role)
            pids[role] = ray.get(handle.initialize.remote(conf), timeout=self.timeout)
            self.clients[role] = handle
        info.update({"config": conf, "client_pids": pids, "ray": ray.__version__})
        return info

    def _start_ours(self) -> dict:
        import transferqueue_jvm as tq
        backend = "SimpleStorage" if self.system == "ours-simple" else "MooncakeStore"
        conf = {"backend": {"storage_backend": backend,
                            "SimpleStorage": {"num_data_storage_units": int(self.spec.get("units", 2))}},
                "python": {"store_node_bytes": int(self.spec["segment_bytes"])}}
        merged = tq.init(conf)
        net = merged["network"]
        client_conf = {"backend": {"storage_backend": backend}, "network": {
            "controller_address": net["controller_address"],
            "storage_unit_addresses": net.get("storage_unit_addresses") or [],
            "store_node_addresses": net.get("store_node_addresses") or []}}
        pids = {}
        for role in ("writer", "reader"):
            proc, chan = spawn(["--worker", "transferqueue_jvm", role], f"{self.system} {role}", sys.stderr)
            self.children.append(proc)
            pids[role] = chan.call("initialize", client_conf, timeout=self.timeout)
            self.clients[role] = chan
        return {"config": conf, "network": client_conf["network"], "client_pids": pids}

    # -- calls
    def _call(self, role: str, method: str, *args):
        c = self.clients[role]
        if self.ray is not None:
            return self.ray.get(getattr(c, method).remote(*args), timeout=self.timeout)
        return c.call(method, *args, timeout=self.timeout)

    def prepare(self, case: dict) -> int:
        return max(self._call(r, "prepare", case) for r in ("writer", "reader"))

    def iteration(self, check: bool) -> dict:
        put = self._call("writer", "put")
        list_s, keys = self._call("reader", "list")
        get, problem = self._call("reader", "get", keys, check)
        clear = self._call("writer", "clear", keys)
        return {"put": put, "list": list_s, "get": get, "clear": clear, "keys": len(keys), "problem": problem}

    def profile(self, on: bool) -> None:
        for r in ("writer", "reader"):
            self._call(r, "profile", on)

    def profile_report(self) -> dict:
        return {r: self._call(r, "profile_report") for r in ("writer", "reader")}

    def close(self) -> None:
        for r in ("reader", "writer"):
            if r in self.clients:
                try:
                    self._call(r, "close")
                except Exception as e:  # the processes are stopped below anyway
                    print(f"close of the {r} failed: {e}", file=sys.stderr)
        if self.ray is not None:
            self.ray.shutdown()
        else:
            import transferqueue_jvm as tq
            tq.close()
        for p in self.children:
            if p.poll() is None:
                p.terminate()
        for p in self.children:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


# ----------------------------------------------------------------------------------- the harness

@dataclass
class Figures:
    """Timings of one system on one case."""

    iterations: list[dict] = field(default_factory=list)
    warmup: list[dict] = field(default_factory=list)
    problem: str | None = None
    verified_checks: int = 0

    def summary(self, nbytes: int) -> dict | None:
        if self.problem is not None or not self.iterations:
            return None
        n = len(self.iterations)
        put = sum(i["put"] for i in self.iterations) / n
        get = sum(i["get"] for i in self.iterations) / n
        return {
            "put_s": put, "get_s": get,
            "list_s": sum(i["list"] for i in self.iterations) / n,
            "clear_s": sum(i["clear"] for i in self.iterations) / n,
            "put_gbs": nbytes / put / 1e9, "get_gbs": nbytes / get / 1e9,
            "rt_gbs": 2 * nbytes / (put + get) / 1e9,
            "cpu_s_per_batch": sum(i["cpu_s"] for i in self.iterations) / n,
            "iterations": n,
        }


class SystemProc:
    """The harness's handle on one host process."""

    def __init__(self, system: str, spec: dict, log):
        self.system = system
        self.label = spec.get("label", LABELS.get(system, system))
        self.proc, self.chan = spawn(["--host", json.dumps(spec)], system, log)
        self.meter = procstat.TreeMeter(self.proc.pid)
        self.info: dict = {}

    def call(self, method: str, *args, timeout: float = 600.0):
        return self.chan.call(method, *args, timeout=timeout)

    def stop(self) -> None:
        try:
            if self.proc.poll() is None:
                self.chan.call("close", timeout=30)
        except ChannelError as e:
            print(f"  {self.system}: close: {e}", file=sys.stderr)
        pids = [p for p in procstat.tree(self.proc.pid) if p != self.proc.pid]
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for pid in pids:  # anything of this system's tree still alive, by its id
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def schedule(systems: list[str], iterations: int, block: int) -> list[tuple[str, int]]:
    """Blocks of ``block`` iterations rotating among the systems: round r starts with system r mod n."""
    out = []
    done = 0
    r = 0
    while done < iterations:
        n = min(block, iterations - done)
        order = systems[r % len(systems):] + systems[:r % len(systems)]
        out.extend((s, n) for s in order)
        done += n
        r += 1
    return out


def run_java(case: Case, warmup: int, iterations: int, log) -> dict:
    """``tq bench`` on the same size, loopback mode, both backends; its figures for reference."""
    with tempfile.TemporaryDirectory(prefix="tq-compare-") as tmp:
        out = os.path.join(tmp, "bench.json")
        cmd = [str(REPO / "tq"), "bench", "--preset", case.preset, "--backend", "all", "--mode", "loopback",
               "--warmup", str(warmup), "--iterations", str(iterations), "--seed", str(case.seed), "--json", out]
        if case.complex:
            cmd.append("--complex")
        t0 = time.monotonic()
        meter_proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=REPO)
        meter = procstat.TreeMeter(meter_proc.pid)
        while meter_proc.poll() is None:
            meter.sample_memory()
            time.sleep(0.5)
        if meter_proc.returncode != 0 or not os.path.exists(out):
            return {"problem": f"tq bench exited with status {meter_proc.returncode}: {' '.join(cmd)}"}
        with open(out) as f:
            data = json.load(f)
    return {"command": " ".join(cmd[1:]), "seconds": time.monotonic() - t0, "json": data,
            "memory": meter.memory_report()}


def java_rows(java: dict) -> list[dict]:
    """Per backend: mean put/get/round-trip GB/s and CPU s per put + get, from tq bench's JSON."""
    rows = []
    for size in java.get("json", {}).get("sizes", []):
        for res in size.get("results", []):
            mean = res.get("mean", {})
            cpu = res.get("cpu", {})
            rows.append({"backend": res.get("backend"), "mode": res.get("mode"),
                         "verified": res.get("verified"),
                         "put_gbs": mean.get("putGbPerSec"), "get_gbs": mean.get("getGbPerSec"),
                         "rt_gbs": mean.get("totalGbPerSec"),
                         # tq bench measures the CPU of the put and of the get (not of list and clear)
                         "cpu_s_put_get": (cpu.get("putSeconds") or 0) + (cpu.get("getSeconds") or 0)
                         if cpu else None})
    return rows


def fmt(v, spec=".3f") -> str:
    return "-" if v is None else format(v, spec)


def print_case(case: Case, res: dict, systems: list[SystemProc]) -> list[str]:
    lines = [f"\n{case.name} ({case.batch}x{case.fields}x{case.seq_len}, {case.nbytes() / 2**20:.1f} MiB per batch; "
             f"{res['warmup']} warm-up + {res['iterations']} measured iterations per system, blocks of "
             f"{res['block']} rotating)"]
    head = (f"  {'system':48s} {'put GB/s':>9s} {'get GB/s':>9s} {'rt GB/s':>8s} {'list s':>7s} {'clear s':>8s}"
            f" {'CPU s/batch':>11s} {'peak RSS MiB':>12s}  data")
    lines.append(head)
    for s in systems:
        row = res["systems"].get(s.system)
        if row is None:
            continue
        summ = row["summary"]
        rss = row["peak_rss_bytes"] / 2**20
        if summ is None:
            lines.append(f"  {s.label:48s} {'no figure: ' + (row['problem'] or 'no iterations')}")
            continue
        lines.append(f"  {s.label:48s} {summ['put_gbs']:9.3f} {summ['get_gbs']:9.3f} {summ['rt_gbs']:8.3f}"
                     f" {summ['list_s']:7.4f} {summ['clear_s']:8.4f} {summ['cpu_s_per_batch']:11.3f} {rss:12.0f}"
                     f"  equal ({row['verified_checks']} checks)")
    for jr in res.get("java_rows", []):
        lines.append(f"  {'ours Java client, tq bench ' + str(jr['backend']) + '/loopback (ref.)':48s}"
                     f" {fmt(jr['put_gbs']):>9s} {fmt(jr['get_gbs']):>9s} {fmt(jr['rt_gbs']):>8s}"
                     f" {'':7s} {'':8s} {fmt(jr['cpu_s_put_get']):>11s} {'':12s}"
                     f"  {'equal' if jr['verified'] else 'NOT verified'}")
    if res.get("java_problem"):
        lines.append(f"  Java client (tq bench): {res['java_problem']}")
    ratios = res.get("ratios", {})
    if ratios:
        ups = sorted({u for r in ratios.values() for u in r})
        lines.append("  round trip, ours / upstream: " + "; ".join(
            f"{LABELS.get(o, o).split(' (')[0]} vs " + ", ".join(
                f"{LABELS.get(u, u).split(' (')[0]} {ratios[o][u]['rt']:.2f}x (CPU {ratios[o][u]['cpu']:.2f}x)"
                for u in ups if u in ratios[o]) for o in ratios))
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--preset", default="small", help="sizes, comma-separated: " + ", ".join(PRESETS))
    ap.add_argument("--case", default="simple,complex", help="simple, complex or both (comma-separated)")
    ap.add_argument("--systems", default="all", help="comma-separated of " + ", ".join(SYSTEMS) + " (default all)")
    ap.add_argument("--upstream-units", default="2",
                    help="storage units of upstream SimpleStorage, comma-separated for several variants "
                         "(default 2: upstream's default and this project's)")
    ap.add_argument("--warmup", type=int, default=5, help="warm-up iterations per system and case (default 5)")
    ap.add_argument("--iterations", type=int, default=8, help="measured iterations per system and case (default 8)")
    ap.add_argument("--block", type=int, default=2, help="iterations per rotation block (default 2)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--json", help="write every figure here")
    ap.add_argument("--chart", help="write a PNG chart of the round trips here")
    ap.add_argument("--profile", action="store_true",
                    help="cProfile the clients' timed calls during the measured iterations and print the top")
    ap.add_argument("--call-timeout", type=float, default=600, help="deadline of each remote call, seconds")
    ap.add_argument("--log", help="the systems' output (default: a temporary file, named at the end)")
    ap.add_argument("--skip-missing", action="store_true",
                    help="run the systems that can start and report the others (default: refuse)")
    args = ap.parse_args(argv)

    wanted = SYSTEMS if args.systems == "all" else [s.strip() for s in args.systems.split(",") if s.strip()]
    bad = [s for s in wanted if s not in SYSTEMS]
    if bad:
        ap.error(f"unknown system(s) {bad}; known: {', '.join(SYSTEMS)}")
    kinds = [k.strip() for k in args.case.split(",") if k.strip()]
    if any(k not in ("simple", "complex") for k in kinds):
        ap.error(f"--case: {args.case!r} (simple, complex)")
    try:
        cases = [Case.of(p.strip(), k == "complex", args.seed) for p in args.preset.split(",") for k in kinds]
    except ValueError as e:
        ap.error(str(e))
    if args.warmup < 1 or args.iterations < 1 or args.block < 1:
        ap.error("--warmup, --iterations and --block must be >= 1 (the first warm-up iteration checks the data)")

    problems = check_requirements(wanted)
    if problems:
        for s, why in problems.items():
            print(f"compare_upstream: {s} cannot run: {why}", file=sys.stderr)
        print(f"compare_upstream: prepare the environment with: {PIP_LINE}", file=sys.stderr)
        if not args.skip_missing:
            return 2
    runnable = [s for s in wanted if s not in problems]
    py_systems = [s for s in runnable if s != "java"]

    largest = max(c.nbytes() for c in cases)
    copies = 4 * len(py_systems) + (3 if "java" in runnable else 0) + 1
    avail = _mem_available()
    if avail is not None and largest * copies > avail:
        print(f"compare_upstream: refused: {max(cases, key=Case.nbytes).name} holds {largest / 2**30:.2f} GiB per batch"
              f" and the run needs about {largest * copies / 2**30:.1f} GiB ({copies} copies), but "
              f"{avail / 2**30:.1f} GiB is available", file=sys.stderr)
        return 3

    log_path = args.log or tempfile.mkstemp(prefix="compare-upstream-", suffix=".log")[1]
    log = open(log_path, "ab", buffering=0)
    seg = segment_bytes(largest)
    specs: list[tuple[str, dict]] = []
    for s in py_systems:
        base = {"system": s, "segment_bytes": seg, "call_timeout": args.call_timeout,
                "mooncake_master": mooncake_master()}
        if s == "upstream-simple":
            for u in [int(x) for x in args.upstream_units.split(",")]:
                specs.append((s if u == 2 else f"{s}-{u}", {**base, "units": u,
                              "label": f"upstream SimpleStorage ({u} unit{'s' if u > 1 else ''})"}))
        else:
            specs.append((s, base))

    report: dict[str, Any] = {
        "command": " ".join([Path(sys.argv[0]).name] + (argv if argv is not None else sys.argv[1:])),
        "environment": _environment(), "warmup": args.warmup, "iterations": args.iterations, "block": args.block,
        "unavailable": problems, "segment_bytes": seg, "cases": []}
    procs: list[SystemProc] = []
    try:
        for name, spec in specs:
            print(f"starting {name} ...", flush=True)
            sp = SystemProc(name, spec, log)
            sp.system = name
            procs.append(sp)
        t0 = time.monotonic()
        # This project's systems start side by side with the first Ray one; the Ray clusters one
        # after the other (Ray gives a starting raylet a fixed 30 s to register, which two clusters
        # starting at once on 2 busy cores missed).
        ray_hosts = [sp for sp in procs if sp.system.startswith("upstream")]
        others = [sp for sp in procs if sp not in ray_hosts]
        for sp in others:
            sp.chan.send("start")
        for sp in ray_hosts + others:
            if sp in ray_hosts:
                sp.chan.send("start")
            sp.info = sp.chan.receive("start", args.call_timeout)
            sp.info["start_seconds"] = time.monotonic() - t0
            print(f"  {sp.label}: up after {sp.info['start_seconds']:.1f} s", flush=True)
        report["systems"] = {sp.system: {"label": sp.label, **sp.info} for sp in procs}
        for case in cases:
            res = run_case(case, procs, args)
            report["cases"].append(res)
            lines = print_case(case, res, procs)
            print("\n".join(lines), flush=True)
        for sp in procs:
            sp.meter.sample_memory()
            report["systems"][sp.system]["memory"] = sp.meter.memory_report()
    finally:
        for sp in procs:
            sp.stop()
    try:
        if "java" in runnable:
            # After the Python systems stopped: all of them alive at once and a tq bench with its
            # own servers beside them was more than a 24 GiB machine shared with other jobs held.
            for case, res in zip(cases, report["cases"]):
                print(f"java client (reference): tq bench, {case.name} ...", flush=True)
                add_java(res, run_java(case, args.warmup, args.iterations, log))
    finally:
        log.close()
    print("\n== summary ==")
    for case, res in zip(cases, report["cases"]):
        print("\n".join(print_case(case, res, procs)))
    print("\nprocesses' peak RSS (MiB), per system:")
    for sp in procs:
        mem = report["systems"].get(sp.system, {}).get("memory", [])
        total = sum(m["peak_rss_bytes"] for m in mem) / 2**20
        top = ", ".join(f"{m['name']} {m['peak_rss_bytes'] / 2**20:.0f}" for m in mem[:8])
        print(f"  {sp.label}: {total:.0f} in {len(mem)} processes ({top}{', ...' if len(mem) > 8 else ''})")
    print(f"systems' output: {log_path}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
        print(f"wrote {args.json}")
    if args.chart:
        chart(report, args.chart)
        print(f"wrote {args.chart}")
    return 1 if any(r.get("failed") for r in report["cases"]) else 0


def add_java(res: dict, java: dict) -> None:
    """Puts a ``tq bench`` run's figures into a case's result."""
    if "problem" in java:
        res["java_problem"] = java["problem"]
        res["failed"] = True
    else:
        res["java"] = {"command": java["command"], "seconds": java["seconds"], "memory": java["memory"],
                       "sizes": java["json"].get("sizes")}
        res["java_rows"] = java_rows(java)


def run_case(case: Case, procs: list[SystemProc], args) -> dict:
    nbytes = case.nbytes()
    print(f"\n{case.name}: {nbytes / 2**20:.1f} MiB per batch; preparing data", flush=True)
    figs = {sp.system: Figures() for sp in procs}
    live = []
    for sp in procs:
        try:
            sp.call("prepare", case.to_dict(), timeout=args.call_timeout)
            live.append(sp)
        except ChannelError as e:
            figs[sp.system].problem = f"prepare failed: {e}"
    by_name = {sp.system: sp for sp in live}
    names = [sp.system for sp in live]
    total = args.warmup + args.iterations
    plan = [(s, n, True) for s, n in schedule(names, args.warmup, args.block)]
    plan += [(s, n, False) for s, n in schedule(names, args.iterations, args.block)]
    profiling: set[str] = set()
    for s, n, warm in plan:
        sp = by_name[s]
        f = figs[s]
        if f.problem is not None:
            continue
        if not warm and args.profile and s not in profiling:
            sp.call("profile", True)
            profiling.add(s)
        for _ in range(n):
            index = len(f.warmup) + len(f.iterations)
            check = index == 0 or index == total - 1
            cpu0 = sp.meter.snapshot()
            try:
                it = sp.call("iteration", check, timeout=args.call_timeout)
            except ChannelError as e:
                f.problem = str(e).splitlines()[0]
                break
            it["cpu_s"] = sp.meter.snapshot() - cpu0
            if check:
                if it["problem"] is not None:
                    f.problem = f"data read back differs: {it['problem']}"
                    break
                f.verified_checks += 1
            (f.warmup if warm else f.iterations).append(it)
            print(f"  {'warm-up' if warm else 'iteration'} {index + 1}/{total} {sp.label}: "
                  f"put {it['put']:.4f} s, get {it['get']:.4f} s, CPU {it['cpu_s']:.2f} s", flush=True)
        sp.meter.sample_memory()
    res: dict[str, Any] = {"case": case.to_dict(), "warmup": args.warmup, "iterations": args.iterations,
                           "block": args.block, "systems": {}}
    for sp in procs:
        f = figs[sp.system]
        if args.profile and f.problem is None:
            try:
                prof = sp.call("profile_report")
                res.setdefault("profiles", {})[sp.system] = prof
                sp.call("profile", False)
            except ChannelError as e:
                res.setdefault("profiles", {})[sp.system] = {"error": str(e)}
        mem = sp.meter.memory_report()
        res["systems"][sp.system] = {"label": sp.label, "summary": f.summary(nbytes), "problem": f.problem,
                                     "verified_checks": f.verified_checks, "iterations": f.iterations,
                                     "warmup_iterations": f.warmup,
                                     "peak_rss_bytes": sum(m["peak_rss_bytes"] for m in mem)}
        if f.problem is not None:
            res["failed"] = True
    ratios: dict[str, dict] = {}
    for o in [sp.system for sp in procs if sp.system.startswith("ours")]:
        so = res["systems"][o]["summary"]
        for u in [sp.system for sp in procs if sp.system.startswith("upstream")]:
            su = res["systems"][u]["summary"]
            if so and su:
                ratios.setdefault(o, {})[u] = {"put": so["put_gbs"] / su["put_gbs"],
                                               "get": so["get_gbs"] / su["get_gbs"],
                                               "rt": so["rt_gbs"] / su["rt_gbs"],
                                               "cpu": so["cpu_s_per_batch"] / su["cpu_s_per_batch"]
                                               if su["cpu_s_per_batch"] > 0 else None}
    res["ratios"] = ratios
    if args.profile:
        for s, prof in res.get("profiles", {}).items():
            for role, text in (prof.items() if isinstance(prof, dict) else []):
                print(f"\n--- profile {s} {role} ({case.name}) ---\n{text[:6000]}")
    return res


def chart(report: dict, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    cases = report["cases"]
    names: list[str] = []
    for c in cases:
        for s in c["systems"]:
            if s not in names:
                names.append(s)
    has_java = any(c.get("java_rows") for c in cases)
    series = [(s, cases[0]["systems"][s]["label"] if s in cases[0]["systems"] else s) for s in names]
    if has_java:
        backends = sorted({r["backend"] for c in cases for r in c.get("java_rows", [])})
        series += [(f"java:{b}", f"ours Java client {b}/loopback (tq bench, ref.)") for b in backends]
    fig, ax = plt.subplots(figsize=(12, 7), dpi=100)
    width = 0.8 / max(1, len(series))
    for k, (key, label) in enumerate(series):
        vals = []
        for c in cases:
            v = None
            if key.startswith("java:"):
                for r in c.get("java_rows", []):
                    if r["backend"] == key[5:]:
                        v = r["rt_gbs"]
            else:
                summ = c["systems"].get(key, {}).get("summary")
                v = summ["rt_gbs"] if summ else None
            vals.append(v or 0.0)
        xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(cases))]
        bars = ax.bar(xs, vals, width, label=label, hatch="//" if key.startswith("java:") else None)
        for b, v in zip(bars, vals):
            ax.annotate(f"{v:.2f}" if v else "n/a", (b.get_x() + b.get_width() / 2, b.get_height()),
                        ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels([f"{c['case']['name']}\n{c['case']['bytes'] / 2**20:.0f} MiB/batch" for c in cases])
    ax.set_ylabel("round trip GB/s (2 x bytes / (put + get))")
    env = report["environment"]
    ax.set_title(f"Upstream TransferQueue vs this project, same run, same machine "
                 f"({env['cpus']} cores, {env['mem_gib']:.0f} GiB)")
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _mem_available() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _environment() -> dict:
    mem = 0
    try:
        with open("/proc/meminfo") as f:
            mem = int(f.readline().split()[1]) * 1024
    except OSError:
        pass
    versions = {}
    for mod in ("transfer_queue", "ray", "torch", "tensordict", "transferqueue_jvm"):
        try:
            from importlib import metadata
            dist = {"transfer_queue": "transferqueue", "transferqueue_jvm": "transferqueue-jvm"}.get(mod, mod)
            versions[mod] = metadata.version(dist)
        except Exception:
            versions[mod] = None
    try:
        from importlib import metadata
        versions["mooncake"] = metadata.version("mooncake-transfer-engine-non-cuda")
    except Exception:
        versions["mooncake"] = None
    try:
        load = os.getloadavg()
    except OSError:
        load = None
    return {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
            "mem_gib": mem / 2**30, "versions": versions, "load_average_at_start": load,
            "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--host":
        serve(Host(json.loads(sys.argv[2])))
    elif len(sys.argv) >= 4 and sys.argv[1] == "--worker":
        serve(Worker(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(main())
