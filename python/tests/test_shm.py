"""Shared memory in the client without Java: segment checks over a memfd of this process, the grant
layout, frames with FLAG_SHARED_BODY, the release of leases (coalesced), and a connection to an
in-process fake server (shm_fake) for attach, shared puts and gets, and every fallback to TCP."""

from __future__ import annotations

import gc
import mmap
import os
import time

import numpy as np
import pytest
import torch

from shm_fake import ECHO, FakeServer
from transferqueue_jvm import shm, wire
from transferqueue_jvm.errors import ConnectionFailed, ProtocolError
from transferqueue_jvm.transport import Connection

pytestmark = pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="needs Linux memfd_create")


def _until(condition, what: str, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def _memfd(size: int, key: bytes, magic: bytes = shm.MAGIC, header_size: int | None = None) -> int:
    fd = os.memfd_create("tq-shm-unit", os.MFD_CLOEXEC)
    os.ftruncate(fd, size)
    with mmap.mmap(fd, size) as m:
        m[0:8] = magic
        m[8:24] = key
        m[24:32] = (size if header_size is None else header_size).to_bytes(8, "little")
    return fd


# ------------------------------------------------------------------ segments

def test_segment_maps_when_size_magic_and_key_agree():
    key = os.urandom(16)
    fd = _memfd(1 << 16, key)
    try:
        seg = shm.Segment(os.getpid(), shm.SegmentRef(fd, key, 1 << 16))
        seg.write(128, [0, 64], [memoryview(b"abc"), memoryview(b"xyz")])
        with open(f"/proc/self/fd/{fd}", "rb") as f:
            data = f.read()
        assert data[128:131] == b"abc" and data[192:195] == b"xyz"
        seg.close()
        assert seg.mm is None
    finally:
        os.close(fd)


@pytest.mark.parametrize("case", ["size", "magic", "key", "header-size", "fd"])
def test_segment_is_refused_when_it_is_not_the_referenced_one(case):
    key = os.urandom(16)
    fd = _memfd(1 << 16, key, magic=b"TQSHM\0\0\2" if case == "magic" else shm.MAGIC,
                header_size=(1 << 15) if case == "header-size" else None)
    try:
        ref = shm.SegmentRef(fd if case != "fd" else 1 << 20, bytes(16) if case == "key" else key,
                             (1 << 17) if case == "size" else 1 << 16)
        with pytest.raises(ProtocolError):
            shm.Segment(os.getpid(), ref)
    finally:
        os.close(fd)


@pytest.mark.parametrize("bad", [None, [1, b"k" * 16], [-1, b"k" * 16, 4096], [1, b"short", 4096],
                                 [1, b"k" * 16, 10], [True, b"k" * 16, 4096], ["1", b"k" * 16, 4096]])
def test_a_malformed_segment_reference_is_a_protocol_error(bad):
    with pytest.raises(ProtocolError):
        shm.SegmentRef.parse(bad, "test")


def test_offer_grant_and_lease_items_are_checked():
    ref = [3, b"k" * 16, 1 << 20]
    assert shm.parse_offer(b"") is None
    assert shm.parse_offer(wire.packb([None])) is None
    offer = shm.parse_offer(wire.packb([[1234, ref, 64]]))
    assert offer == shm.Offer(1234, shm.SegmentRef(3, b"k" * 16, 1 << 20), 64)
    for bad in ([[1234, ref, 0]], [[1234, ref, (1 << 20) - 10]], [[0, ref, 64]], [[1234, ref]], 5):
        with pytest.raises(ProtocolError):
            shm.parse_offer(wire.packb(bad))
    grant = shm.parse_grant(wire.packb([7, ref, 4096, 8192]), 8000)
    assert (grant.grant_id, grant.offset, grant.length) == (7, 4096, 8192)
    for bad, want in (([7, ref, 4096, 100], 8000), ([7, ref, (1 << 20) - 64, 128], 128), ([7, ref, 0, 128], 1),
                      ([7, ref, 4096], 1)):
        with pytest.raises(ProtocolError):
            shm.parse_grant(wire.packb(bad), want)
    assert shm.parse_lease([9, [[ref, 64], [ref, 128]]], [10, 0])[0] == 9
    for bad in ([9, [[ref, 64]]], [9, [[ref, 32], [ref, 128]]], [9, [[ref, (1 << 20) - 5], [ref, 128]]],
                [None, []], [9]):
        with pytest.raises(ProtocolError):
            shm.parse_lease(bad, [10, 0])


# ------------------------------------------------------------------ wire

def test_region_offsets_are_64_byte_aligned_and_the_span_ends_with_the_last_body():
    assert wire.shared_offsets([]) == ([], 0)
    assert wire.shared_offsets([10]) == ([0], 10)
    assert wire.shared_offsets([10, 0, 64, 65, 1]) == ([0, 64, 64, 128, 256], 257)
    rng = np.random.default_rng(int(os.environ.get("TQ_SEED", "20")))
    lengths = [int(x) for x in rng.integers(0, 5000, 200)]
    offsets, span = wire.shared_offsets(lengths)
    for i, (o, n) in enumerate(zip(offsets, lengths)):
        assert o % 64 == 0
        if i:
            assert o == wire.align64(offsets[i - 1] + lengths[i - 1])
    assert span == offsets[-1] + lengths[-1]


def test_a_frame_with_shared_bodies_has_the_flag_no_body_bytes_and_the_item_after_the_table():
    app = wire.packb([1, "x"])
    frame = wire.shared_frame_prefix(200, 0, 42, app, [100, 0, 7], wire.packb([5]))
    h = wire.decode_header(frame)
    assert h.flags == wire.FLAG_SHARED_BODY and h.is_shared and h.body_length == 0 and h.correlation_id == 42
    assert len(frame) == wire.body_offset(h.metadata_length) and len(frame) % 64 == 0
    section = frame[32:32 + h.metadata_length]
    assert section.startswith(bytes([0x93, 100, 0, 7]) + bytes([0x91, 5]))
    table, item, rest = wire.split_shared_section(section, 0)
    assert (table, item, rest) == ([100, 0, 7], [5], app)
    reply = wire.shared_frame_prefix(201, wire.FLAG_RESPONSE, 42, b"", [3], wire.packb([9, [[[1, b"k" * 16, 4096], 64]]]))
    assert wire.decode_header(reply).flags == 5
    with pytest.raises(ProtocolError):
        wire.split_shared_section(section, 10)
    with pytest.raises(ProtocolError):
        wire.split_shared_section(bytes([0x91, 3, 0xc1]), 0)


def test_hello_asks_for_shared_memory_only_when_enabled():
    assert wire.hello_metadata(None) == bytes([0x91, 0xc0])
    assert wire.hello_metadata("t", True) == bytes([0x92, 0xa1, 0x74, 0xc3])


# ------------------------------------------------------------------ releases

class _Recorder:
    def __init__(self):
        self.sent = []

    def send_release(self, ids):
        self.sent.append(list(ids))


def test_releases_are_counted_and_coalesced_per_connection():
    a, b = _Recorder(), _Recorder()
    r = shm.Releaser()
    leases = [shm.Lease(i, a if i < 3 else b, shm.Segments(os.getpid())) for i in range(5)]
    for lease in leases:
        lease.live = 2
    r.handle([("seal", lease, None) for lease in leases] + [("drop", lease, None) for lease in leases])
    assert a.sent == [] and b.sent == []  # one view of each is still alive
    r.handle([("drop", lease, None) for lease in leases] + [("ids", a, [77])])
    assert a.sent == [[0, 1, 2, 77]] and b.sent == [[3, 4]]
    r.handle([("drop", leases[0], None)])  # a late duplicate changes nothing
    assert a.sent == [[0, 1, 2, 77]]


# ------------------------------------------------------------------ a connection to the fake server

def _connect(server: FakeServer, **kw) -> Connection:
    host, port = server.address.rsplit(":", 1)
    return Connection(host, int(port), None, 5.0, shared_memory=kw.pop("shared_memory", True),
                      shared_memory_min_bytes=kw.pop("min_bytes", 1024), **kw)


def _echo(conn: Connection, bodies):
    now = time.monotonic()
    return conn.call(ECHO, wire.packb(["echo"]), bodies, now + 10, 10)


def _inside(arr: np.ndarray, seg: shm.Segment) -> bool:
    start = seg.address()
    return start <= arr.ctypes.data and arr.ctypes.data + arr.nbytes <= start + seg.ref.size


def test_attached_connection_puts_and_gets_through_the_segment():
    server = FakeServer()
    conn = _connect(server)
    try:
        assert conn.attached
        rng = np.random.default_rng(int(os.environ.get("TQ_SEED", "20")))
        x = torch.from_numpy(rng.standard_normal((16, 1000)).astype(np.float32))
        small = torch.arange(3, dtype=torch.int64)
        reply = _echo(conn, [x[i].numpy() for i in range(16)] + [small.numpy()])
        assert (ECHO, wire.FLAG_SHARED_BODY) in server.requests
        assert reply.shared is not None and reply.lease is not None
        (seg,) = conn.segments.mapped()
        for i in range(16):
            got = torch.from_numpy(reply.bodies[i]).view(torch.float32)
            assert torch.equal(got, x[i]) and _inside(reply.bodies[i], seg)
        assert torch.equal(torch.from_numpy(reply.bodies[16]).view(torch.int64), small)
        lease_id = reply.lease.lease_id
        view = torch.from_numpy(reply.bodies[3]).view(torch.float32)
        del reply, got
        gc.collect()
        shm.RELEASER.flush()
        assert all(lease_id not in ids for ids in server.released), "released while a view is alive"
        assert torch.equal(view, x[3])
        del view
        gc.collect()
        _until(lambda: any(lease_id in ids for ids in server.released), "the lease's SHM_RELEASE")
        assert lease_id not in server.leases
    finally:
        conn.close()
        server.close()


def test_small_requests_and_replies_stay_on_the_socket():
    server = FakeServer(min_bytes=1 << 20)
    conn = _connect(server, min_bytes=1 << 20)
    try:
        reply = _echo(conn, [np.ones(1000, dtype=np.float32)])
        assert reply.shared is None and (ECHO, 0) in server.requests
        assert np.frombuffer(reply.bodies[0], dtype=np.float32).sum() == 1000
    finally:
        conn.close()
        server.close()


@pytest.mark.parametrize("how", ["client-off", "server-off", "corrupt-offer"])
def test_fallback_to_tcp(how):
    server = FakeServer(offer=how != "server-off", corrupt=how == "corrupt-offer")
    conn = _connect(server, shared_memory=how != "client-off")
    try:
        assert not conn.attached
        reply = _echo(conn, [np.arange(10000, dtype=np.int32)])
        assert reply.shared is None
        assert np.array_equal(np.frombuffer(reply.bodies[0], dtype=np.int32), np.arange(10000, dtype=np.int32))
        types = [t for t, _ in server.requests]
        assert all(f == 0 for _, f in server.requests)
        if how == "client-off":
            assert types == [wire.TYPE_HELLO, ECHO]
        elif how == "server-off":
            assert wire.TYPE_SHM_ATTACH not in types
        else:
            assert types == [wire.TYPE_HELLO, wire.TYPE_SHM_ATTACH, ECHO]
    finally:
        conn.close()
        server.close()


def test_a_refused_grant_sends_the_request_over_tcp():
    server = FakeServer(grant_limit=2048)
    conn = _connect(server)
    try:
        assert conn.attached
        reply = _echo(conn, [np.arange(10000, dtype=np.int32)])
        assert (ECHO, 0) in server.requests and (wire.TYPE_SHM_GRANT, 0) in server.requests
        got = np.asarray(reply.bodies[0]).view(np.int32) if reply.shared else np.frombuffer(reply.bodies[0], np.int32)
        assert np.array_equal(got, np.arange(10000, dtype=np.int32))
    finally:
        conn.close()
        server.close()


def test_server_death_fails_calls_and_the_mapping_goes_with_the_last_view():
    import weakref
    server = FakeServer()
    conn = _connect(server)
    reply = _echo(conn, [np.full(4096, 7, dtype=np.uint8)])
    (seg,) = conn.segments.mapped()
    mapping = weakref.ref(seg.mm)
    body = reply.bodies[0]
    del reply, seg
    server.close()
    with pytest.raises(ConnectionFailed):
        _echo(conn, [np.zeros(4096, dtype=np.uint8)])
    _until(lambda: not conn.is_open, "the connection to close")
    assert int(body.sum()) == 7 * 4096  # still readable: the view holds the mapping
    assert mapping() is not None
    del body
    gc.collect()
    _until(lambda: mapping() is None, "the mapping to be unmapped")


def test_a_sealed_lease_makes_no_new_views():
    lease = shm.Lease(1, _Recorder(), shm.Segments(os.getpid()))
    lease.seal()
    with pytest.raises(RuntimeError):
        lease.view(shm.SegmentRef(3, b"k" * 16, 1 << 20), 64, 10)


def test_a_forked_child_never_writes_releases_on_its_parents_connection():
    server = FakeServer()
    conn = _connect(server)
    try:
        reply = _echo(conn, [np.full(4096, 1, dtype=np.uint8)])
        lease_id = reply.lease.lease_id
        child = os.fork()
        if child == 0:  # the child drops its copy of the views and releases what it can
            try:
                del reply
                gc.collect()
                shm.RELEASER.flush()
                conn.send_release([lease_id])
            finally:
                os._exit(0)
        os.waitpid(child, 0)
        assert all(lease_id not in ids for ids in server.released)
        assert int(_echo(conn, [np.full(4096, 2, dtype=np.uint8)]).bodies[0][0]) == 2  # the stream is intact
        del reply
        gc.collect()
        _until(lambda: any(lease_id in ids for ids in server.released), "the parent's release")
    finally:
        conn.close()
        server.close()


def test_a_malformed_shared_reply_fails_its_call_only_and_its_lease_is_released():
    server = FakeServer(bad_lease=True)
    conn = _connect(server)
    try:
        with pytest.raises(ProtocolError, match="outside"):
            _echo(conn, [np.zeros(4096, dtype=np.uint8)])
        assert conn.is_open
        lease = server.issued[-1]
        _until(lambda: any(lease in ids for ids in server.released), "the refused lease's release")
        assert _echo(conn, [np.zeros(10, dtype=np.uint8)]).shared is None  # the stream is intact
    finally:
        conn.close()
        server.close()
