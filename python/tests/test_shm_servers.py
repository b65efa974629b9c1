"""Shared memory end to end against the Java servers (docs/PROTOCOL.md section 4.2), both backends
on ``tq up`` systems: round trips of many dtypes and shapes (seeded, ``TQ_SEED``), results that are
views of the server's segment, leases released with the last view, a killed client's leases freed
by its connection's end, and TCP when either side has shared memory off."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from transferqueue_jvm import dtypes, shm, wire
from transferqueue_jvm.client import TransferQueueClient, new_client_id
from transferqueue_jvm.interface import _deployment
from transferqueue_jvm import config as configs

SEED = int(os.environ.get("TQ_SEED", "20"))
DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
          torch.bfloat16, torch.float32, torch.float64]

pytestmark = pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="shared memory needs Linux")


def _until(condition, what: str, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def _conf(path, **network) -> dict:
    with open(path, encoding="utf-8") as f:
        conf = yaml.safe_load(f)
    conf.setdefault("network", {}).update(network)
    return conf


@pytest.fixture(scope="module", params=["SimpleStorage", "MooncakeStore"])
def tq(request, up_system):
    import transferqueue_jvm as tq
    tq.close()
    system = up_system(request.param)
    tq.init(str(system.config))
    tq.system = system
    yield tq
    tq.close()


def _storage_connections(tq):
    client = tq.get_client()
    addresses = set(client.storage.addresses)
    return [c for c in client._pool.connections() if c.address in addresses]


def _shm_stats(tq, address: str):
    """``[segment_bytes, used_bytes, grants, leases]`` of a server's pool (PROCESS_STATS), or None."""
    reply = tq.get_client()._pool.call(address, wire.TYPE_PROCESS_STATS, b"", (), 10.0)
    stats = wire.unpackb(reply.app_meta)
    return stats[1] if len(stats) > 1 else None


def _pool_state(tq, required: bool = True):
    """(used_bytes, grants, leases) per storage server; None (or a skip when ``required``) when the
    servers do not report their pool."""
    states = [_shm_stats(tq, a) for a in tq.get_client().storage.addresses]
    if any(s is None for s in states):
        if required:
            pytest.skip("the servers do not report their shared-memory pool in PROCESS_STATS")
        return None
    return [tuple(s[1:4]) for s in states]


def _one_server(tq, keys, pid) -> list[str]:
    """The keys among ``keys`` whose samples live on the first storage server (so their rows come
    back in one reply, back to back)."""
    meta = tq.get_client().kv_retrieve_meta(keys, pid)
    n = len(tq.get_client().storage.addresses)
    return [k for k, gi in zip(keys, meta.global_indexes) if gi % n == meta.global_indexes[0] % n]


def _memfd_ranges() -> list[tuple[int, int]]:
    out = []
    with open("/proc/self/maps", encoding="utf-8") as f:
        for line in f:
            if "memfd:tq-shm" in line:
                lo, hi = line.split()[0].split("-")
                out.append((int(lo, 16), int(hi, 16)))
    return out


def _in_mapping(t: torch.Tensor) -> bool:
    start = t.untyped_storage().data_ptr()
    end = start + t.untyped_storage().nbytes()
    return any(lo <= start and end <= hi for lo, hi in _memfd_ranges())


def _random(dtype: torch.dtype, shape, gen: torch.Generator) -> torch.Tensor:
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen) > 0.5
    if dtype.is_floating_point:
        return torch.randn(shape, generator=gen).to(dtype)
    info = torch.iinfo(dtype)
    return torch.randint(max(info.min, -1 << 30), min(info.max, 1 << 30), shape, generator=gen, dtype=torch.int64).to(dtype)


def test_connections_are_attached(tq, pid):
    tq.kv_batch_put(["a"], pid, {"x": torch.zeros(1, 4)})
    conns = _storage_connections(tq)
    assert conns and all(c.attached for c in conns)
    tq.kv_clear(["a"], pid)


def test_round_trip_of_every_dtype_and_many_shapes(tq, pid):
    gen = torch.Generator().manual_seed(SEED)
    rng = np.random.default_rng(SEED)
    before = sum(c.shared_sent for c in _storage_connections(tq)), sum(c.shared_received for c in _storage_connections(tq))
    for i, dtype in enumerate(DTYPES):
        n = int(rng.integers(1, 48))
        inner = [(int(rng.integers(1, 40)), int(rng.integers(64, 2048))), (int(rng.integers(4096, 40000)),)][i % 2]
        dense = _random(dtype, (n,) + inner, gen)
        jagged = [_random(dtype, (0 if k % 5 == 0 else int(rng.integers(0, 3000)), 3), gen) for k in range(n)]
        small = _random(dtype, (n, 2), gen)  # below shared_memory_min_bytes on its own
        keys = [f"{dtypes.name_of(dtype)}-{k}" for k in range(n)]
        tq.kv_batch_put(keys, pid, {"dense": dense, "jagged": jagged, "small": small})
        order = list(rng.permutation(n))
        got = tq.kv_batch_get([keys[k] for k in order], pid)
        assert torch.equal(got["dense"], dense[order]), dtype
        assert torch.equal(got["small"], small[order]), dtype
        rows = got["jagged"]
        rows = list(rows.unbind()) if rows.is_nested else list(rows)
        assert all(torch.equal(a, jagged[k]) for a, k in zip(rows, order)), dtype
        del got, rows
        tq.kv_clear(keys, pid)
    after = sum(c.shared_sent for c in _storage_connections(tq)), sum(c.shared_received for c in _storage_connections(tq))
    assert after[0] > before[0] and after[1] > before[1], "no request or reply went through shared memory"


@pytest.fixture
def views():
    """``python.shared_memory_views: true`` for one test."""
    shm.set_views(True)
    try:
        yield
    finally:
        shm.set_views(False)


def test_a_result_is_the_callers_own_memory_and_writing_it_changes_no_stored_value(tq, pid):
    keys = [f"k{i}" for i in range(64)]
    x = torch.randn(64, 4096, generator=torch.Generator().manual_seed(SEED))
    tq.kv_batch_put(keys, pid, {"x": x})
    # Rows that lie back to back in one reply (a unit keeps them in shared memory as put) are still
    # copied: the result is not the stored cell.
    some = _one_server(tq, keys, pid)
    rows = [keys.index(k) for k in some]
    got = tq.kv_batch_get(some, pid)["x"]
    assert torch.equal(got, x[rows]) and not _in_mapping(got)
    got += 1.0
    assert torch.equal(tq.kv_batch_get(some, pid)["x"], x[rows]), "a write to a result changed the store"
    tq.kv_clear(keys, pid)


def test_a_result_is_a_view_of_the_servers_segment_and_its_lease_ends_with_it(tq, pid, views):
    keys = [f"k{i}" for i in range(64)]
    x = torch.randn(64, 4096, generator=torch.Generator().manual_seed(SEED))
    tq.kv_batch_put(keys, pid, {"x": x})
    baseline = _pool_state(tq, required=False)
    # Samples of one server: their rows come in one reply, back to back.
    some = _one_server(tq, keys, pid)
    rows = [keys.index(k) for k in some]
    got = tq.kv_batch_get(some, pid)["x"]
    assert torch.equal(got, x[rows])
    assert _in_mapping(got), "the result is not a view of a shared-memory segment"
    row = got[3]
    del got
    gc.collect()
    assert torch.equal(row, x[rows[3]])  # a view of the view keeps the lease: the bytes stay
    if baseline is not None:
        assert _pool_state(tq) != baseline, "no lease outstanding while a view lives"
    del row
    gc.collect()
    if baseline is not None:
        _until(lambda: _pool_state(tq) == baseline, "the server's pool back at its baseline")
    tq.kv_clear(keys, pid)


def test_client_with_shared_memory_off_stays_on_tcp(tq, pid):
    conf = configs.load(_conf(tq.system.config, shared_memory=False))
    client = TransferQueueClient(new_client_id(), _deployment(conf))
    try:
        keys = [f"k{i}" for i in range(16)]
        x = torch.randn(16, 8192)
        tq.kv_batch_put(keys, pid, {"x": x})
        meta = client.kv_retrieve_meta(keys, pid)
        got = client.get_data(meta)["x"]
        assert torch.equal(got, x) and not _in_mapping(got)
        conns = [c for c in client._pool.connections() if c.address in set(client.storage.addresses)]
        assert conns and not any(c.attached for c in conns)
        assert sum(c.shared_received + c.shared_sent for c in conns) == 0
        tq.kv_clear(keys, pid)
    finally:
        client.close()


def test_killed_client_holding_leases_leaves_the_pool_at_its_baseline(tq, pid, tmp_path):
    keys = [f"k{i}" for i in range(32)]
    x = torch.randn(32, 8192)
    tq.kv_batch_put(keys, pid, {"x": x})
    baseline = _pool_state(tq)
    script = textwrap.dedent("""
        import sys, time
        import transferqueue_jvm as tq
        from transferqueue_jvm import shm
        tq.init(sys.argv[1])
        shm.set_views(True)  # python.shared_memory_views: the result holds its lease
        held = tq.kv_batch_get(sys.argv[3].split(","), sys.argv[2])
        print("holding", flush=True)
        time.sleep(300)
    """)
    env = dict(os.environ)
    if os.environ.get("TQ_PYTHON_INSTALLED") != "1":
        env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1] / "src")
    held = _one_server(tq, keys, pid)
    proc = subprocess.Popen([sys.executable, "-c", script, str(tq.system.config), pid, ",".join(held)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        assert line.strip() == "holding", proc.stderr.read()[-4000:]
        assert _pool_state(tq) != baseline, "the other client holds no lease"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    _until(lambda: _pool_state(tq) == baseline, "the killed client's leases freed")
    assert torch.equal(tq.kv_batch_get(keys, pid)["x"], x)  # this client is unaffected
    tq.kv_clear(keys, pid)


@pytest.fixture(scope="module")
def tcp_server(need_servers):
    from deployments import UpSystem
    system = UpSystem("SimpleStorage", network={"shared_memory": False})
    yield system
    system.stop()


def test_server_with_shared_memory_off_serves_over_tcp(tcp_server):
    client = TransferQueueClient(new_client_id(), _deployment(configs.load(str(tcp_server.config))))
    try:
        from transferqueue_jvm.metadata import BatchMeta  # noqa: F401 - the put creates the samples
        x = torch.randn(8, 16384)
        meta = client.put({"x": x}, partition_id="p")
        got = client.get_data(meta)["x"]
        assert torch.equal(got, x)
        conns = client._pool.connections()
        assert conns and not any(c.attached for c in conns)
    finally:
        client.close()


def test_client_in_another_pid_namespace_falls_back_to_tcp(tq, pid):
    """The server's /proc/<pid>/fd is not there from another pid namespace: the offer cannot be
    mapped, SHM_ATTACH declines, and everything goes over TCP."""
    import shutil
    if tq.system.backend != "SimpleStorage":
        pytest.skip("one backend is enough: the negotiation is the transport's")
    if shutil.which("unshare") is None or os.geteuid() != 0:
        pytest.skip("needs root and unshare(1) for a new pid namespace")
    script = textwrap.dedent("""
        import sys, torch
        import transferqueue_jvm as tq
        tq.init(sys.argv[1])
        x = torch.arange(1 << 18, dtype=torch.float32).reshape(4, -1)
        tq.kv_batch_put(["a", "b", "c", "d"], sys.argv[2], {"x": x})
        ok = torch.equal(tq.kv_batch_get(["a", "b", "c", "d"], sys.argv[2])["x"], x)
        client = tq.get_client()
        conns = [c for c in client._pool.connections() if c.address in set(client.storage.addresses)]
        print("equal", ok, "attached", any(c.attached for c in conns), "connections", len(conns), flush=True)
        tq.close()
    """)
    env = dict(os.environ)
    if os.environ.get("TQ_PYTHON_INSTALLED") != "1":
        env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1] / "src")
    r = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c", script,
                        str(tq.system.config), pid], capture_output=True, text=True, env=env, timeout=120)
    if r.returncode != 0 and "unshare" in r.stderr and "Operation not permitted" in r.stderr:
        pytest.skip(f"no new pid namespace here: {r.stderr.strip()}")
    assert r.returncode == 0, r.stderr[-4000:]
    words = r.stdout.split()
    assert words[:4] == ["equal", "True", "attached", "False"] and int(words[5]) >= 1, r.stdout


def _tcp_client(tq):
    return TransferQueueClient(new_client_id(), _deployment(configs.load(_conf(tq.system.config, shared_memory=False))))


def _bytes_of(t: torch.Tensor) -> torch.Tensor:
    t = t.contiguous()
    return t.view(torch.uint8) if t.dtype != torch.bool and t.numel() else t


def test_scattered_shared_gets_equal_tcp_gets_byte_for_byte_and_release_their_leases(tq, pid):
    """Rows of 1665 bytes and jagged rows, read in a random order from both servers: placed run by
    run from the leases; the same bytes as a client on TCP reads."""
    gen = torch.Generator().manual_seed(SEED)
    rng = np.random.default_rng(SEED)
    tcp = _tcp_client(tq)
    conns = _storage_connections(tq)
    received = sum(c.shared_received for c in conns)
    try:
        for dtype in DTYPES:
            n = int(rng.integers(40, 80))
            inner = (5, 333) if dtype.itemsize == 1 else (3, int(rng.integers(100, 700)))
            dense = _random(dtype, (n,) + inner, gen)
            jagged = [_random(dtype, (int(rng.integers(0, 3000)), 3), gen) for _ in range(n)]
            keys = [f"s{dtypes.name_of(dtype)}-{k}" for k in range(n)]
            tq.kv_batch_put(keys, pid, {"dense": dense, "jagged": jagged})
            picked = [keys[k] for k in rng.permutation(n)[:int(rng.integers(n // 2, n + 1))]]
            baseline = _pool_state(tq, required=False)
            got = tq.kv_batch_get(picked, pid)
            want = tcp.get_data(tcp.kv_retrieve_meta(picked, pid))
            assert torch.equal(_bytes_of(got["dense"]), _bytes_of(want["dense"])), (SEED, dtype)
            rows = [got["jagged"], want["jagged"]]
            rows = [list(r.unbind()) if isinstance(r, torch.Tensor) and r.is_nested else list(r) for r in rows]
            assert len(rows[0]) == len(rows[1]) == len(picked)
            for a, b in zip(*rows):
                assert a.shape == b.shape and torch.equal(_bytes_of(a), _bytes_of(b)), (SEED, dtype)
            order = [keys.index(k) for k in picked]
            assert torch.equal(_bytes_of(got["dense"]), _bytes_of(dense[order])), (SEED, dtype)
            del got, want, rows
            gc.collect()
            if baseline is not None:
                _until(lambda: _pool_state(tq) == baseline, "the get's leases released")
            tq.kv_clear(keys, pid)
    finally:
        tcp.close()
    assert sum(c.shared_received for c in _storage_connections(tq)) > received, "no reply came in shared memory"


def test_a_unit_keeps_the_rows_of_a_shared_put_as_its_cells(tq, pid):
    """Rows of 100 bytes (not a multiple of 64) lie back to back in the grant, so each unit keeps
    them where they are: its pool holds them until the samples are cleared."""
    if tq.system.backend != "SimpleStorage":
        pytest.skip("store nodes copy a write into their own memory")
    baseline = _pool_state(tq)
    n = 2000
    x = torch.randn(n, 25, generator=torch.Generator().manual_seed(SEED))
    keys = [f"c{i}" for i in range(n)]
    tq.kv_batch_put(keys, pid, {"x": x})
    meta = tq.get_client().kv_retrieve_meta(keys, pid)
    units = len(tq.get_client().storage.addresses)
    held = _pool_state(tq)
    for u, (before, after) in enumerate(zip(baseline, held)):
        rows = sum(1 for gi in meta.global_indexes if gi % units == u)
        assert after[0] - before[0] >= rows * 100, f"unit {u} keeps no cells in its pool: {before} -> {after}"
    assert torch.equal(tq.kv_batch_get(keys, pid)["x"], x)
    gc.collect()
    tq.kv_clear(keys, pid)
    _until(lambda: _pool_state(tq) == baseline, "the cells' regions freed with the samples")


def test_a_store_node_write_goes_straight_into_a_placed_grant(tq, pid):
    """A WRITE's bodies are written where the store node places them (the placed form of SHM_GRANT):
    the nodes count them as placed bytes, not granted ones, and they read back as written."""
    if tq.system.backend != "MooncakeStore":
        pytest.skip("only a store node's WRITE is placed")
    stats = [_shm_stats(tq, a) for a in tq.get_client().storage.addresses]
    if any(s is None or len(s) < 7 for s in stats):
        pytest.skip("the store nodes do not report placed bytes in PROCESS_STATS")
    placed = sum(c.shared_placed for c in _storage_connections(tq))
    n = 64
    x = torch.randn(n, 3001, generator=torch.Generator().manual_seed(SEED))  # 12004-byte rows
    keys = [f"w{i}" for i in range(n)]
    tq.kv_batch_put(keys, pid, {"x": x})
    assert sum(c.shared_placed for c in _storage_connections(tq)) > placed
    after = [_shm_stats(tq, a) for a in tq.get_client().storage.addresses]
    assert sum(a[6] - b[6] for a, b in zip(after, stats)) >= x.numel() * 4, (stats, after)
    assert sum(a[5] - b[5] for a, b in zip(after, stats)) == 0, "bodies went through an ordinary grant"
    assert torch.equal(tq.kv_batch_get(keys, pid)["x"], x)
    tq.kv_clear(keys, pid)
