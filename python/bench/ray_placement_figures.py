"""Figures of running on Ray: time from ``init()`` to ready, and producer -> consumer throughput.

On a local Ray cluster of three logical nodes (``ray.cluster_utils.Cluster``, no dashboard):

1. ``init()`` with 1 controller + ``--units`` storage units placed as Ray actors, timed until it
   returns (every role serves and the client reached the controller); ``--repeat`` times.
2. One producer actor (node 0) puts ``--keys`` keys x ``--fields`` float32 fields of ``--seq-len``
   values in batches of ``--chunk``; two consumer actors (nodes 1 and 2) then read half the keys each,
   concurrently. Reported: put and get throughput in MiB/s of payload. Run twice: the roles placed on
   Ray (attached with a bare ``init()``), and the same roles started by ``tq up`` on this host
   (the actors connect to its addresses).

    python3 python/bench/ray_placement_figures.py [--units 4] [--keys 1024 --fields 9 --seq-len 8192]

Prints one JSON object. The defaults move ``tq bench``'s ``small`` preset (288 MiB).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import socket
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
SRC = HERE.parent / "src"
if os.environ.get("TQ_PYTHON_INSTALLED") != "1":
    sys.path.insert(0, str(SRC))
    os.environ["PYTHONPATH"] = os.pathsep.join([str(SRC)] + [p for p in [os.environ.get("PYTHONPATH")] if p])

import ray  # noqa: E402
import torch  # noqa: E402


def _field(keys: torch.Tensor, f: int, seq_len: int) -> torch.Tensor:
    return torch.arange(seq_len, dtype=torch.float32)[None, :] + (keys[:, None] * 16 + f).to(torch.float32)


@ray.remote(num_cpus=0)
class Producer:
    def run(self, conf, partition: str, keys: int, fields: int, seq_len: int, chunk: int) -> float:
        import transferqueue_jvm as tq
        tq.init(conf)
        try:
            started = time.perf_counter()
            for start in range(0, keys, chunk):
                ks = torch.arange(start, min(keys, start + chunk))
                tq.kv_batch_put([f"k{int(k)}" for k in ks], partition,
                                {f"f{f}": _field(ks, f, seq_len) for f in range(fields)})
            return time.perf_counter() - started
        finally:
            tq.close()


@ray.remote(num_cpus=0)
class Consumer:
    def run(self, conf, partition: str, keys: int, parity: int, fields: int, seq_len: int, chunk: int) -> float:
        import transferqueue_jvm as tq
        tq.init(conf)
        try:
            mine = [k for k in range(keys) if k % 2 == parity]
            started = time.perf_counter()
            for start in range(0, len(mine), chunk):
                numbers = mine[start:start + chunk]
                batch = tq.kv_batch_get([f"k{k}" for k in numbers], partition)
                if not torch.equal(batch["f0"], _field(torch.tensor(numbers), 0, seq_len)):
                    raise AssertionError("read data differs from what was put")
            return time.perf_counter() - started
        finally:
            tq.close()


def _move(conf, args, partition: str) -> dict:
    payload = args.keys * args.fields * args.seq_len * 4
    producer = Producer.options(resources={"bench_node_0": 1}).remote()
    consumers = [Consumer.options(resources={f"bench_node_{i + 1}": 1}).remote() for i in range(2)]
    put_s = ray.get(producer.run.remote(conf, partition, args.keys, args.fields, args.seq_len, args.chunk))
    started = time.perf_counter()
    ray.get([c.run.remote(conf, partition, args.keys, i, args.fields, args.seq_len, args.chunk)
             for i, c in enumerate(consumers)])
    get_s = time.perf_counter() - started
    for a in [producer] + consumers:
        ray.kill(a)
    mib = payload / (1 << 20)
    return {"payload_mib": round(mib, 1), "put_s": round(put_s, 3), "put_mib_s": round(mib / put_s, 1),
            "get_s": round(get_s, 3), "get_mib_s": round(mib / get_s, 1)}


def _tq_up(units: int, token: str):
    from transferqueue_jvm import launcher
    ports = launcher._free_ports(1 + units, "127.0.0.1")
    conf = {"backend": {"SimpleStorage": {"num_data_storage_units": units}},
            "network": {"controller_address": f"127.0.0.1:{ports[0]}",
                        "storage_unit_addresses": [f"127.0.0.1:{p}" for p in ports[1:]]}}
    fd, path = tempfile.mkstemp(suffix=".yaml")
    with os.fdopen(fd, "w") as f:
        json.dump(conf, f)  # JSON is YAML
    env = dict(os.environ, TQ_AUTH_TOKEN=token)
    proc = subprocess.Popen(launcher.java_command({"java_options": "-Xmx1g"}) + ["up", "--config", path],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    ready = 0
    for line in proc.stdout:
        if re.search(r"listening on \S+:\d+", line):
            ready += 1
            if ready == 1 + units:
                break
    if ready < 1 + units:
        raise RuntimeError(f"tq up exited with status {proc.wait()}")
    conf["network"]["auth_token"] = token
    return proc, conf, path


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--units", type=int, default=4)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--keys", type=int, default=1024)
    p.add_argument("--fields", type=int, default=9)
    p.add_argument("--seq-len", type=int, default=8192)
    p.add_argument("--chunk", type=int, default=128)
    args = p.parse_args()

    from ray.cluster_utils import Cluster
    import transferqueue_jvm as tq
    from transferqueue_jvm import interface

    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 4, "resources": {"bench_node_0": 4}, "include_dashboard": False,
        "object_store_memory": 100 << 20})
    for i in (1, 2):
        cluster.add_node(num_cpus=4, resources={f"bench_node_{i}": 4}, object_store_memory=100 << 20)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, namespace="tq_bench")
    out: dict = {"host": {"cpus": os.cpu_count(), "load_1m": round(os.getloadavg()[0], 1)},
                 "units": args.units, "init_to_ready_s": []}
    try:
        conf = {"backend": {"SimpleStorage": {"num_data_storage_units": args.units}},
                "python": {"start_timeout": "300s"}}
        for _ in range(args.repeat):
            started = time.perf_counter()
            tq.init(conf)
            out["init_to_ready_s"].append(round(time.perf_counter() - started, 2))
            nodes = {w["node_id"] for w in interface._system.placement[1:]}
            out["unit_nodes"] = len(nodes)
            tq.close()
        tq.init(conf)
        out["ray_placed"] = _move(None, args, "ray")  # the actors attach with a bare init()
        tq.close()
        proc, up_conf, path = _tq_up(args.units, "bench-token")
        try:
            out["tq_up_one_host"] = _move(up_conf, args, "up")
        finally:
            proc.terminate()
            proc.wait(30)
            os.unlink(path)
    finally:
        tq.close()
        ray.shutdown()
        cluster.shutdown()
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
