"""Zero copy in Python over TCP, on both backends: a put sends the bytes of each tensor
from the tensor's own memory, a get receives them into the tensors it returns, and a get of
256 x 1 MiB allocates less than 1 MiB of Python heap besides those tensors (tracemalloc).

These are statements about the socket path: the client runs with ``network.shared_memory: false``
(the shared-memory path is test_shm_servers.py's)."""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pytest
import torch
import yaml

from transferqueue_jvm import transport

MIB = 1 << 20
ROWS = 256


def _address(buffer) -> tuple[int, int]:
    """(start address, length) of a buffer's memory."""
    view = memoryview(buffer).cast("B")
    return np.frombuffer(view, dtype=np.uint8).ctypes.data if view.nbytes else 0, view.nbytes


def tcp_only(config_path) -> dict:
    """The configuration of a ``tq up`` system with shared memory off for this client."""
    with open(config_path, encoding="utf-8") as f:
        conf = yaml.safe_load(f)
    conf.setdefault("network", {})["shared_memory"] = False
    return conf


def _inside(span: tuple[int, int], tensor: torch.Tensor) -> bool:
    start = tensor.untyped_storage().data_ptr()
    return start <= span[0] and span[0] + span[1] <= start + tensor.untyped_storage().nbytes()


@pytest.fixture(scope="module", params=["SimpleStorage", "MooncakeStore"])
def tq(request, up_system):
    """Both backends on ``tq up`` systems (moving 256 MiB once per backend is enough)."""
    import transferqueue_jvm as tq
    tq.close()
    tq.init(tcp_only(up_system(request.param).config))
    yield tq
    tq.close()


@pytest.fixture
def recorded(monkeypatch):
    """Address ranges of every buffer of at least 64 KiB the connections send from or receive into."""
    sent, received = [], []
    send_all, recv_exact = transport.Connection._send_all, transport.Connection._recv_exact

    def record_send(self, buffers, deadline):
        sent.extend(_address(b) for b in buffers if b.nbytes >= 1 << 16)
        return send_all(self, buffers, deadline)

    def record_recv(self, view):
        if view.nbytes >= 1 << 16:
            received.append(_address(view))
        return recv_exact(self, view)

    monkeypatch.setattr(transport.Connection, "_send_all", record_send)
    monkeypatch.setattr(transport.Connection, "_recv_exact", record_recv)
    return sent, received


def test_put_sends_from_and_get_receives_into_the_tensors(tq, pid, recorded):
    sent, received = recorded
    keys = [f"k{i}" for i in range(64)]
    x = torch.randn(64, MIB // 4)
    jag = [torch.randn((1 << 14) + 1000 * i, 3) for i in range(8)]
    tq.kv_batch_put(keys, pid, {"x": x})
    tq.kv_batch_put(keys[:8], pid, {"j": jag})
    assert sum(n for _, n in sent) >= 64 * MIB
    strangers = [s for s in sent if not _inside(s, x) and not any(_inside(s, t) for t in jag)]
    assert strangers == [], "bytes sent from memory that is not the tensors'"
    sent.clear()

    got = tq.kv_batch_get(keys, pid)["x"]
    assert torch.equal(got, x)
    assert sum(n for _, n in received) >= 64 * MIB
    assert all(_inside(r, got) for r in received), "bytes received elsewhere than the returned tensor"
    received.clear()

    rows = tq.kv_batch_get(keys[:8], pid, select_fields="j")["j"]
    rows = list(rows.unbind()) if isinstance(rows, torch.Tensor) and rows.is_nested else list(rows)
    assert all(torch.equal(a, b) for a, b in zip(rows, jag))
    # the rows of a jagged column (a nested tensor) are views of the one allocation the bodies were
    # received into
    base = rows[0].untyped_storage()
    assert all(r.untyped_storage().data_ptr() == base.data_ptr() for r in rows)
    assert received and all(_inside(r, rows[0]) for r in received)
    tq.kv_clear(keys, pid)


def test_a_get_of_256_mib_allocates_under_1_mib_of_python_heap(tq, pid):
    keys = [f"k{i}" for i in range(ROWS)]
    tq.kv_batch_put(keys, pid, {"x": torch.ones(ROWS, MIB // 4)})
    tq.kv_batch_get(keys, pid)  # connections open, caches warm
    gc.collect()
    tracemalloc.start()
    try:
        base, _ = tracemalloc.get_traced_memory()
        got = tq.kv_batch_get(keys, pid)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got["x"].shape == (ROWS, MIB // 4) and bool(got["x"].eq(1).all())
    assert peak - base < MIB, f"{(peak - base) / MIB:.2f} MiB of Python heap for a get of {ROWS} MiB"
    tq.kv_clear(keys, pid)


@pytest.mark.parametrize("table", [[], [0], [5, 127, 128, 255, 256, 65535, 65536, (1 << 32) - 1, 1 << 32, 1 << 40],
                                   list(range(0, 3000, 7)), [1 << 20] * 70000])
def test_the_body_table_is_read_without_an_unpacker_as_msgpack_reads_it(table):
    import msgpack
    from transferqueue_jvm import wire
    app = wire.packb(["app", 1])
    section = msgpack.packb(table) + app
    assert wire.split_section(section, sum(table), max_segments=1 << 20, max_segment_bytes=1 << 41) == (table, app)
    tracemalloc.start()
    try:
        wire.split_section(section, sum(table), max_segments=1 << 20, max_segment_bytes=1 << 41)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * len(table) + 4096


@pytest.mark.parametrize("section, error", [
    (b"", "truncated"), (b"\x92\x01", "truncated"), (b"\xdc\x00", "truncated"), (b"\x91\xcd\x01", "truncated"),
    (b"\x81\x01\x02", "marker 0x81"), (b"\x91\xff", "marker 0xff"), (b"\x91\xd0\xff", "-1"),
    (b"\x91\xa1x", "marker 0xa1")])
def test_a_malformed_body_table_is_a_protocol_error(section, error):
    from transferqueue_jvm import wire
    from transferqueue_jvm.errors import ProtocolError
    with pytest.raises(ProtocolError, match=error):
        wire.split_section(section, 0)


@pytest.mark.parametrize("backend", ["SimpleStorage", "MooncakeStore"])
def test_put_and_get_of_256_mib_add_no_copy_to_the_peak_rss(up_system, backend, tmp_path):
    """In a fresh interpreter on a ``tq up`` system: a put of 256 MiB raises the peak RSS by much
    less than 256 MiB (no copy of the batch), a get by the 256 MiB it returns and not twice that."""
    import json
    import os
    import subprocess
    import sys
    import textwrap
    from pathlib import Path
    script = textwrap.dedent("""
        import json, resource, sys, torch
        import transferqueue_jvm as tq
        def peak():
            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        tq.init(sys.argv[1])
        keys = [f"k{i}" for i in range(256)]
        warm = torch.ones(4, 1 << 18)
        tq.kv_batch_put(keys[:4], "rss", {"x": warm}); tq.kv_batch_get(keys[:4], "rss"); tq.kv_clear(keys[:4], "rss")
        x = torch.ones(256, 1 << 18)
        x.add_(1)  # touched: resident
        before = peak()
        tq.kv_batch_put(keys, "rss", {"x": x})
        after_put = peak()
        got = tq.kv_batch_get(keys, "rss")["x"]
        after_get = peak()
        assert torch.equal(got, x)
        tq.kv_clear(keys, "rss")
        tq.close()
        print(json.dumps({"put": after_put - before, "get": after_get - after_put}))
    """)
    env = dict(os.environ)
    if os.environ.get("TQ_PYTHON_INSTALLED") != "1":
        env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1] / "src")
    config = tmp_path / "tq-tcp.yaml"
    config.write_text(yaml.safe_dump(tcp_only(up_system(backend).config)), encoding="utf-8")
    r = subprocess.run([sys.executable, "-c", script, str(config)], capture_output=True,
                       text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-4000:]
    grew = json.loads(r.stdout.strip().splitlines()[-1])
    assert grew["put"] < 64 * MIB, f"a put of 256 MiB raised the peak RSS by {grew['put'] / MIB:.0f} MiB"
    assert grew["get"] < (256 + 64) * MIB, f"a get of 256 MiB raised the peak RSS by {grew['get'] / MIB:.0f} MiB"
