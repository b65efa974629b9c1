"""Put and get of the Python client through shared memory and over TCP, as ratios to a memory copy.

    python3 python/bench/shm_bench.py [--sizes small,large] [--backend SimpleStorage|MooncakeStore|all]
                                      [--servers 2] [--segment-bytes N] [--iterations 3] [--warmup 1]
                                      [--reuse-freed-memory] [--json FILE]

For each size (``small``: 1024 keys x 9 fields x 8192 float32, 288 MiB; ``large``: 256 keys x 1 field
x 1 MiB, 256 MiB) and backend, on one system ``init()`` starts (a controller and ``--servers``
storage units or store nodes as Java processes on 127.0.0.1, shared memory on), each iteration
runs, interleaved:

* ``memcpy``: the batch's bytes copied with numpy into one reused, pre-touched buffer in this
  process (the baseline: what moving the bytes once costs here and now);
* for ``shm`` (a client with ``network.shared_memory: true``) and ``tcp`` (a second client of the
  same system with it off): ``put`` (``kv_put_batch``), ``get`` (``get_data`` of all keys, kept
  until the figure is taken, then dropped: its leases are released in the background), then a
  clear.

Figures are medians of the measured iterations: GB/s (10^9 bytes/s), the ratio of each to the
memcpy GB/s of the same run, and CPU seconds per batch: this process's (``time.process_time``)
and the servers' (``/proc/<pid>/stat`` of the Java processes, user + system).

``--reuse-freed-memory`` starts the system with ``python.reuse_freed_memory: true``: a get's result
tensors are then carved from memory that earlier, freed results left mapped (as the Java client's
block pool does) instead of fresh pages, whose first touch costs about as much as the copy itself.
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve()
if os.environ.get("TQ_PYTHON_INSTALLED") != "1":
    sys.path.insert(0, str(HERE.parents[1] / "src"))
sys.path.insert(0, str(HERE.parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import procstat  # noqa: E402
import transferqueue_jvm as tq  # noqa: E402
from transferqueue_jvm import dtypes, shm  # noqa: E402
from transferqueue_jvm.client import TransferQueueClient, new_client_id  # noqa: E402
from transferqueue_jvm.interface import _deployment  # noqa: E402

SIZES = {"small": (1024, 9, 8192), "large": (256, 1, 1 << 18)}  # keys, fields, float32 per row


def batch_of(keys: int, fields: int, seq: int, seed: int = 42) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return {f"f{i}": torch.rand((keys, seq), generator=g, dtype=torch.float32) for i in range(fields)}


class Memcpy:
    """The baseline: copies the batch's tensors into one reused buffer, touched before the first copy."""

    def __init__(self, data: dict[str, torch.Tensor]):
        self.sources = [np.frombuffer(dtypes.byte_view(t), dtype=np.uint8) for t in data.values()]
        self.target = np.ones(sum(s.nbytes for s in self.sources), dtype=np.uint8)

    def run(self) -> float:
        start = time.perf_counter()
        at = 0
        for s in self.sources:
            np.copyto(self.target[at:at + s.nbytes], s)
            at += s.nbytes
        return time.perf_counter() - start


def _servers() -> list[int]:
    me = os.getpid()
    return [p for p in procstat.tree(me) if p != me]


def _measure(fn, servers):
    c0, s0, t0 = time.process_time(), procstat.cpu_seconds(servers), time.perf_counter()
    out = fn()
    t1 = time.perf_counter()
    return out, t1 - t0, time.process_time() - c0, procstat.cpu_seconds(servers) - s0


def run(size: str, backend: str, servers_n: int, iterations: int, warmup: int, segment_bytes: int | None = None,
        reuse_freed_memory: bool = False) -> dict:
    keys_n, fields, seq = SIZES[size]
    data = batch_of(keys_n, fields, seq)
    keys = [f"k{i}" for i in range(keys_n)]
    nbytes = keys_n * fields * seq * 4
    tq.close()
    network = {"shared_memory_segment_bytes": segment_bytes} if segment_bytes else {}
    conf = tq.init({"backend": {"storage_backend": backend, "SimpleStorage": {"num_data_storage_units": servers_n}},
                    "python": {"store_node_bytes": max(512 << 20, 2 * nbytes), "store_nodes": servers_n,
                               "reuse_freed_memory": reuse_freed_memory},
                    "network": network})
    servers = _servers()
    tcp_conf = copy.deepcopy(conf)
    tcp_conf["network"]["shared_memory"] = False
    clients = {"shm": tq.get_client(), "tcp": TransferQueueClient(new_client_id(), _deployment(tcp_conf))}
    memcpy = Memcpy(data)
    samples: dict[str, list[tuple[float, float, float]]] = {}
    try:
        for it in range(warmup + iterations):
            sample = {"memcpy": (memcpy.run(), 0.0, 0.0)}
            for mode, client in clients.items():
                pid = f"bench_{size}_{mode}_{it}"
                meta, *put = _measure(lambda: client.kv_put_batch(keys, pid, data, None), servers)
                got, *get = _measure(lambda: client.get_data(meta), servers)
                if it == 0 and not all(torch.equal(got[k], v) for k, v in data.items()):
                    raise AssertionError(f"{size}/{backend}/{mode}: the get differs from the put")
                del got
                gc.collect()
                shm.RELEASER.flush()
                client.clear_samples(meta)
                sample[f"{mode}_put"], sample[f"{mode}_get"] = tuple(put), tuple(get)
            if it >= warmup:
                for k, v in sample.items():
                    samples.setdefault(k, []).append(v)
        attached = [c.attached for c in clients["shm"]._pool.connections()
                    if c.address in set(clients["shm"].storage.addresses)]
    finally:
        clients["tcp"].close()
        tq.close()
    out = {"size": size, "backend": backend, "servers": servers_n, "segment_bytes": segment_bytes or 64 << 20,
           "reuse_freed_memory": reuse_freed_memory,
           "bytes": nbytes, "iterations": iterations,
           "shm_attached": bool(attached) and all(attached), "samples": samples}
    base = nbytes / statistics.median(s[0] for s in samples["memcpy"]) / 1e9
    out["memcpy_gb_per_s"] = base
    for k, v in samples.items():
        if k == "memcpy":
            continue
        gbs = nbytes / statistics.median(s[0] for s in v) / 1e9
        out[k] = {"gb_per_s": gbs, "ratio_to_memcpy": gbs / base,
                  "client_cpu_s": statistics.median(s[1] for s in v),
                  "server_cpu_s": statistics.median(s[2] for s in v)}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="small,large", help="small, large (comma-separated)")
    ap.add_argument("--backend", default="all", help="SimpleStorage, MooncakeStore or all")
    ap.add_argument("--servers", type=int, default=2, help="storage units or store nodes")
    ap.add_argument("--segment-bytes", type=int, help="the servers' network.shared_memory_segment_bytes "
                    "(default 64 MiB: larger regions get a fresh segment each time)")
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--reuse-freed-memory", action="store_true",
                    help="init() with python.reuse_freed_memory: gets receive into reused pages (process-wide)")
    ap.add_argument("--json", help="write every figure to this file")
    args = ap.parse_args(argv)
    backends = ["SimpleStorage", "MooncakeStore"] if args.backend == "all" else [args.backend]
    results = []
    print(f"{'size':6} {'backend':14} {'op':8} {'GB/s':>6} {'x memcpy':>8} {'client s':>9} {'server s':>9}")
    for backend in backends:
        for size in args.sizes.split(","):
            r = run(size, backend, args.servers, args.iterations, args.warmup, args.segment_bytes,
                    args.reuse_freed_memory)
            results.append(r)
            print(f"{size:6} {backend:14} {'memcpy':8} {r['memcpy_gb_per_s']:6.2f} {1.0:8.2f}"
                  f"{'':>10}{'':>10}   (shared memory attached: {r['shm_attached']})")
            for op in ("shm_put", "tcp_put", "shm_get", "tcp_get"):
                f = r[op]
                print(f"{size:6} {backend:14} {op:8} {f['gb_per_s']:6.2f} {f['ratio_to_memcpy']:8.2f} "
                      f"{f['client_cpu_s']:9.3f} {f['server_cpu_s']:9.3f}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
