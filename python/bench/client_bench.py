"""Throughput of the Python client over loopback, against a raw Python socket and the Java client.

    python3 python/bench/client_bench.py [--sizes small,large] [--backend SimpleStorage|MooncakeStore|all]
                                         [--iterations 3] [--warmup 1] [--no-java] [--json FILE]

For each size (``small``: 1024 keys x 9 fields x 8192 float32, 288 MiB; ``large``: 256 keys x 1 field
x 1 MiB, 256 MiB) and backend, on a system ``init()`` starts (a controller and two storage servers
as Java processes on 127.0.0.1), every iteration runs, interleaved:

* ``raw send``: this process sends the batch's bytes with ``socket.sendmsg`` straight from the
  tensors to a receiver process that ``recv_into``\\ s preallocated memory and answers one byte;
* ``raw recv``: the receiver process sends the same number of bytes, this process ``recv_into``\\ s
  preallocated memory;
* ``put``: ``kv_batch_put`` of the batch; ``get``: ``kv_batch_get`` of all its keys (checked equal
  to what was put on the first iteration); then ``kv_clear``.

Figures are medians of the measured iterations, GB/s = 10^9 bytes/s; ``put x`` is put GB/s over raw
send GB/s, ``get x`` get GB/s over raw recv GB/s (goal: 0.8 or more). Then the server jar's
``bench --mode loopback`` runs the same sizes through the Java client in the same invocation
(Java's own baseline is a socket to a receiver process too); its put and get GB/s are shown with
their ratio to the Python raw socket of this run.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
if os.environ.get("TQ_PYTHON_INSTALLED") != "1":
    sys.path.insert(0, str(HERE.parents[1] / "src"))

import torch  # noqa: E402

import transferqueue_jvm as tq  # noqa: E402
from transferqueue_jvm import launcher  # noqa: E402

SIZES = {"small": (1024, 9, 8192), "large": (256, 1, 1 << 18)}  # keys, fields, float32 per row
_CMD = struct.Struct("<cQ")
_IOV_MAX = 512


# ---------------------------------------------------------------- raw socket peer (a separate process)

def _recv_exactly(sock: socket.socket, view: memoryview) -> None:
    got, n = 0, view.nbytes
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise ConnectionError("peer closed")
        got += k


def _send_all(sock: socket.socket, buffers: list[memoryview]) -> None:
    i = 0
    while i < len(buffers):
        sent = sock.sendmsg(buffers[i:i + _IOV_MAX])
        while sent > 0:
            n = buffers[i].nbytes
            if sent >= n:
                sent -= n
                i += 1
            else:
                buffers[i] = buffers[i][sent:]
                sent = 0


def _byte_view(t: torch.Tensor) -> memoryview:
    return memoryview(t.contiguous().view(torch.uint8).numpy()).cast("B")


def peer(port: int, capacity: int) -> None:
    """The receiver/sender process of the raw baseline: preallocated memory, commands from the bench."""
    memory = torch.empty(capacity, dtype=torch.uint8)
    view = _byte_view(memory)
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        cmd = bytearray(_CMD.size)
        while True:
            try:
                _recv_exactly(sock, memoryview(cmd))
            except ConnectionError:
                return
            op, n = _CMD.unpack(cmd)
            if op == b"R":
                _recv_exactly(sock, view[:n])
                sock.sendall(b"k")
            elif op == b"S":
                _send_all(sock, [view[:n]])
            else:
                return


class RawSocket:
    """The bench's side of the raw baseline."""

    def __init__(self, capacity: int):
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        self.proc = subprocess.Popen([sys.executable, str(HERE), "--peer", str(server.getsockname()[1]),
                                      str(capacity)])
        server.settimeout(120)
        self.sock, _ = server.accept()
        server.close()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.memory = torch.empty(capacity, dtype=torch.uint8)
        self.view = _byte_view(self.memory)

    def send(self, tensors: list[torch.Tensor]) -> float:
        """Seconds to send the tensors' bytes from their memory until the receiver has them all."""
        n = sum(t.numel() * t.element_size() for t in tensors)
        ack = bytearray(1)
        start = time.perf_counter()
        self.sock.sendall(_CMD.pack(b"R", n))
        _send_all(self.sock, [_byte_view(t) for t in tensors])
        _recv_exactly(self.sock, memoryview(ack))
        return time.perf_counter() - start

    def recv(self, n: int) -> float:
        """Seconds to receive n bytes from the peer into preallocated memory."""
        start = time.perf_counter()
        self.sock.sendall(_CMD.pack(b"S", n))
        _recv_exactly(self.sock, self.view[:n])
        return time.perf_counter() - start

    def close(self) -> None:
        self.sock.close()
        self.proc.wait(30)


# ---------------------------------------------------------------- the Python client

def batch_of(keys: int, fields: int, seq: int, seed: int = 42) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return {f"f{i}": torch.rand((keys, seq), generator=g, dtype=torch.float32) for i in range(fields)}


def run_python(size: str, backend: str, iterations: int, warmup: int, reuse_freed_memory: bool = False) -> dict:
    keys_n, fields, seq = SIZES[size]
    data = batch_of(keys_n, fields, seq)
    keys = [f"k{i}" for i in range(keys_n)]
    nbytes = keys_n * fields * seq * 4
    tq.close()
    tq.init({"backend": {"storage_backend": backend},
             "python": {"store_node_bytes": max(512 << 20, nbytes), "reuse_freed_memory": reuse_freed_memory}})
    raw = RawSocket(nbytes)
    times: dict[str, list[float]] = {"raw_send": [], "raw_recv": [], "put": [], "get": []}
    try:
        for it in range(warmup + iterations):
            pid = f"bench_{size}_{it}"
            sample = {"raw_send": raw.send(list(data.values())), "raw_recv": raw.recv(nbytes)}
            start = time.perf_counter()
            tq.kv_batch_put(keys, pid, data)
            sample["put"] = time.perf_counter() - start
            start = time.perf_counter()
            got = tq.kv_batch_get(keys, pid)
            sample["get"] = time.perf_counter() - start
            if it == 0 and not all(torch.equal(got[k], v) for k, v in data.items()):
                raise AssertionError(f"{size}/{backend}: the get differs from the put")
            del got
            tq.kv_clear(keys, pid)
            if it >= warmup:
                for k, v in sample.items():
                    times[k].append(v)
    finally:
        raw.close()
        tq.close()
    med = {k: statistics.median(v) for k, v in times.items()}
    gbs = {k: nbytes / v / 1e9 for k, v in med.items()}
    return {"size": size, "backend": backend, "bytes": nbytes, "iterations": iterations, "seconds": times,
            "median_seconds": med, "gb_per_s": gbs,
            "put_ratio": gbs["put"] / gbs["raw_send"], "get_ratio": gbs["get"] / gbs["raw_recv"]}


# ---------------------------------------------------------------- the Java client

def run_java(size: str, backend: str, iterations: int, warmup: int) -> dict:
    keys_n, fields, seq = SIZES[size]
    with tempfile.TemporaryDirectory(prefix="tq-bench-") as tmp:
        out = Path(tmp) / "bench.json"
        cmd = [launcher.find_java(), "--enable-native-access=ALL-UNNAMED",
               "-jar", str(launcher.jar_path()), "bench", "--mode", "loopback", "--backend", backend,
               "--batch", str(keys_n), "--fields", str(fields), "--seq-len", str(seq),
               "--iterations", str(iterations), "--warmup", str(warmup), "--json", str(out)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        report = json.loads(out.read_text())
    result = report["sizes"][0]["results"][0]
    mean = result["mean"]
    return {"size": size, "backend": backend, "put_gb_per_s": mean["putGbPerSec"], "get_gb_per_s": mean["getGbPerSec"],
            "java_baseline_gb_per_s": result["baseline"]["gbPerSec"], "put_ratio_java_baseline": mean["putRatio"],
            "get_ratio_java_baseline": mean["getRatio"], "command": " ".join(cmd[1:])}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="small,large", help="small, large (comma-separated)")
    ap.add_argument("--backend", default="SimpleStorage", help="SimpleStorage, MooncakeStore or all")
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--no-java", action="store_true", help="skip the Java client's figures")
    ap.add_argument("--json", help="write every figure to this file")
    ap.add_argument("--reuse-freed-memory", action="store_true",
                    help="init() with python.reuse_freed_memory: gets receive into reused pages (process-wide)")
    ap.add_argument("--peer", nargs=2, type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.peer:
        peer(*args.peer)
        return 0
    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    unknown = [s for s in sizes if s not in SIZES]
    if unknown:
        ap.error(f"unknown sizes {unknown}; known: {sorted(SIZES)}")
    backends = ["SimpleStorage", "MooncakeStore"] if args.backend == "all" else [args.backend]
    rows, java_rows = [], []
    print(f"{'size':6} {'backend':14} {'raw send':>9} {'put':>7} {'put x':>6} {'raw recv':>9} {'get':>7} {'get x':>6}"
          f" {'Java put':>9} {'x':>5} {'Java get':>9} {'x':>5}   (GB/s; x = ratio to the Python raw socket)")
    for size in sizes:
        for backend in backends:
            r = run_python(size, backend, args.iterations, args.warmup, args.reuse_freed_memory)
            rows.append(r)
            j = None if args.no_java else run_java(size, backend, args.iterations, max(args.warmup, 1))
            if j is not None:
                java_rows.append(j)
            g = r["gb_per_s"]
            line = (f"{size:6} {backend:14} {g['raw_send']:9.3f} {g['put']:7.3f} {r['put_ratio']:6.2f}"
                    f" {g['raw_recv']:9.3f} {g['get']:7.3f} {r['get_ratio']:6.2f}")
            if j is not None:
                line += (f" {j['put_gb_per_s']:9.3f} {j['put_gb_per_s'] / g['raw_send']:5.2f}"
                         f" {j['get_gb_per_s']:9.3f} {j['get_gb_per_s'] / g['raw_recv']:5.2f}")
            print(line, flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"python": rows, "java": java_rows, "sizes": SIZES}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
