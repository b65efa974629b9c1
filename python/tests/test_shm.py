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


def test_request_layout_keeps_same_length_bodies_back_to_back_and_aligns_the_others():
    # docs/PROTOCOL.md's example
    offsets, end = shm.request_layout([100, 100, 10])
    assert offsets.tolist() == [0, 100, 256] and end == 266
    assert shm.request_layout([])[1] == 0
    seed = int(os.environ.get("TQ_SEED", "20"))
    rng = np.random.default_rng(seed)
    for case in range(50):
        n = int(rng.integers(1, 80))
        lengths = [0] * n
        for i in range(n):  # runs of equal lengths (rows of dense fields), zero lengths included
            repeat = i > 0 and rng.random() < 0.6
            lengths[i] = lengths[i - 1] if repeat else (0 if rng.random() < 0.2 else int(rng.integers(1, 300)))
        offsets, end = shm.request_layout(lengths)
        at = 0
        for i, (o, n_i) in enumerate(zip(offsets.tolist(), lengths)):
            follows = i > 0 and n_i == lengths[i - 1]
            assert o == (at if follows else wire.align64(at)), (seed, case, i)
            at = o + n_i
        assert end == at, (seed, case)


def _naive(src: np.ndarray, dst: np.ndarray, s_off, d_off, lengths):
    for so, do, n in zip(s_off, d_off, lengths):
        dst[do:do + n] = src[so:so + n]


def test_copy_runs_copies_every_row_and_coalesces_runs():
    seed = int(os.environ.get("TQ_SEED", "20"))
    rng = np.random.default_rng(seed)
    src = rng.integers(0, 256, 1 << 18, dtype=np.uint8)
    for case in range(200):
        n = int(rng.integers(1, 80))
        same = case % 2 == 0
        lengths = np.full(n, int(rng.integers(0, 400))) if same else rng.integers(0, 400, n)
        s_off, d_off, a, b = [], [], 0, 0
        src_step, dst_step = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        for i in range(n):  # mostly strided or back to back, with jumps now and then
            if rng.random() < 0.15:
                a += int(rng.integers(1, 999))
            if rng.random() < 0.15:
                b += int(rng.integers(1, 999))
            s_off.append(a)
            d_off.append(b)
            a += int(lengths[i]) * (src_step if same else 1)
            b += int(lengths[i]) * (dst_step if same else 1)
        if a > len(src) or b > 1 << 18:
            continue
        dst = np.zeros(1 << 18, dtype=np.uint8)
        expected = dst.copy()
        _naive(src, expected, s_off, d_off, lengths)
        shm.copy_runs(src.ctypes.data + np.array(s_off), dst.ctypes.data + np.array(d_off), lengths)
        assert np.array_equal(dst, expected), (seed, case)
    # Every other row of a tensor into consecutive rows (a unit's rows of a put), and back: one copy
    rows = torch.from_numpy(rng.integers(0, 256, (64, 1000), dtype=np.uint8))
    packed = torch.zeros(32, 1000, dtype=torch.uint8)
    picked = range(1, 64, 2)
    assert shm.copy_runs([rows[i].data_ptr() for i in picked], [packed[k].data_ptr() for k in range(32)],
                         [1000] * 32) == 1
    assert torch.equal(packed, rows[1::2])
    back = torch.zeros(64, 1000, dtype=torch.uint8)
    assert shm.copy_runs([packed[k].data_ptr() for k in range(32)], [back[i].data_ptr() for i in picked],
                         [1000] * 32) == 1
    assert torch.equal(back[1::2], rows[1::2]) and not back[0::2].any()
    # Rows of several lengths back to back on both sides: one copy; a gap splits the run
    flat = torch.zeros(3000, dtype=torch.uint8)
    src_t = torch.from_numpy(src[:3000].copy())
    assert shm.copy_runs([src_t.data_ptr(), src_t.data_ptr() + 100, src_t.data_ptr() + 350],
                         [flat.data_ptr(), flat.data_ptr() + 100, flat.data_ptr() + 350], [100, 250, 7]) == 1
    assert shm.copy_runs([src_t.data_ptr(), src_t.data_ptr() + 100, src_t.data_ptr() + 350],
                         [flat.data_ptr(), flat.data_ptr() + 100, flat.data_ptr() + 400], [100, 250, 7]) == 2
    assert torch.equal(flat[:350], src_t[:350]) and torch.equal(flat[400:407], src_t[350:357])
    assert shm.copy_runs([], [], []) == 0


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
        # explicit offsets: the 16 rows back to back, the other body at the next multiple of 64
        assert server.items[-1][1] == [4000 * i for i in range(16)] + [64000]
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


def test_a_placed_grant_puts_each_body_where_the_server_says():
    server = FakeServer(placing="yes")
    conn = _connect(server)
    try:
        rows = torch.arange(8 * 700, dtype=torch.int32).reshape(8, 700)
        bodies = [rows[i].numpy() for i in range(0, 8, 2)] + [np.full(100, 9, dtype=np.uint8)]
        now = time.monotonic()
        reply = conn.call(ECHO, wire.packb(["w"]), bodies, now + 10, 10, placed=True)
        assert conn.shared_placed == 1 and server.items[-1] == [server.items[-1][0]]  # the short item
        got = [np.asarray(b).view(np.int32) if reply.shared else np.frombuffer(b, np.int32) for b in reply.bodies[:4]]
        assert all(np.array_equal(g, rows[i].numpy()) for g, i in zip(got, range(0, 8, 2)))
        assert bytes(reply.bodies[4]) == bytes([9]) * 100
        # without ``placed`` the same request takes an ordinary grant with explicit offsets
        conn.call(ECHO, wire.packb(["w"]), bodies, now + 10, 10)
        assert conn.shared_placed == 1 and len(server.items[-1]) == 2
    finally:
        conn.close()
        server.close()


def test_an_unmappable_placed_grant_is_released_before_the_request_goes_over_tcp():
    server = FakeServer(placing="unmappable")
    conn = _connect(server)
    try:
        now = time.monotonic()
        reply = conn.call(ECHO, wire.packb(["w"]), [np.arange(5000, dtype=np.int32)], now + 10, 10, placed=True)
        got = np.asarray(reply.bodies[0]).view(np.int32) if reply.shared else np.frombuffer(reply.bodies[0], np.int32)
        assert np.array_equal(got, np.arange(5000, dtype=np.int32)) and conn.shared_placed == 0
        types = [t for t, _ in server.requests]
        assert types[-3:] == [wire.TYPE_SHM_GRANT, wire.TYPE_SHM_RELEASE, ECHO] and server.requests[-1] == (ECHO, 0)
        assert not server.placed, "the placed grant was not released"
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


# ------------------------------------------------------------------ placing shared rows into a column

class _Seg:
    """Stands in for a mapped segment: a numpy array (the lease's base) and its address."""

    def __init__(self, data: np.ndarray):
        self.base = data
        self.addr = data.ctypes.data
        self.mm = None


def _shared_reply(rows: list[bytes], rng) -> tuple:
    """A shared reply whose bodies are ``rows``, in one or two segments, with gaps now and then:
    what a server's lease may look like (rows in place, or copied into a fresh region)."""
    from transferqueue_jvm.transport import Reply
    segs = [_Seg(np.zeros(sum(len(r) for r in rows) + 64 * len(rows) + 64, dtype=np.uint8)) for _ in range(2)]
    at = [64, 64]
    bodies, shared, addresses = [], [], []
    for r in rows:
        k = int(rng.integers(0, 2))
        if rng.random() < 0.2:
            at[k] = wire.align64(at[k] + 1)
        seg = segs[k]
        seg.base[at[k]:at[k] + len(r)] = np.frombuffer(r, dtype=np.uint8)
        bodies.append(seg.base[at[k]:at[k] + len(r)])
        shared.append((seg, at[k]))
        addresses.append(seg.addr + at[k])
        at[k] += len(r)
    return Reply(None, b"", bodies, shared, None, np.asarray(addresses, dtype=np.int64)), segs


DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
          torch.bfloat16, torch.float32, torch.float64]


@pytest.mark.parametrize("kind", ["dense", "jagged"])
def test_scattered_shared_rows_are_placed_into_the_column_as_they_were(kind):
    from transferqueue_jvm import dtypes
    from transferqueue_jvm.storage import ReadPlan
    seed = int(os.environ.get("TQ_SEED", "20"))
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    for dtype in DTYPES:
        n = int(rng.integers(1, 40))
        if kind == "dense":
            shape = (int(rng.integers(1, 5)), int(rng.integers(1, 70)))
            shapes = [shape] * n
        else:
            shapes = [(int(rng.integers(0, 50)), 3) for _ in range(n)]
        rows = [(torch.rand(s, generator=gen) * 100).to(dtype) for s in shapes]
        schema = {"dtype": dtype, "shape": shapes[0], "is_nested": kind == "jagged",
                  "per_sample_shapes": shapes if kind == "jagged" else None}
        plan = ReadPlan.of("x", schema, n)
        servers = int(rng.integers(1, 4))  # rows of server u are u, u + servers, ...: one reply each
        replies = []
        for u in range(servers):
            mine = list(range(u, n, servers))
            if not mine:
                continue
            reply, segs = _shared_reply([dtypes.byte_view(rows[i]).tobytes() for i in mine], rng)
            replies.append((reply, segs))
            for k, i in enumerate(mine):
                plan.take(i, reply.bodies[k], reply, k)
        plan.place_shared()
        got = plan.result()[1]
        got = list(got) if kind == "dense" else got
        for i in range(n):
            assert torch.equal(got[i].view(torch.uint8) if dtype != torch.bool else got[i], rows[i].view(torch.uint8)
                               if dtype != torch.bool else rows[i]), (seed, dtype, i)


def test_rows_back_to_back_in_one_reply_become_a_view_of_it():
    from transferqueue_jvm.storage import ReadPlan
    from transferqueue_jvm.transport import Reply
    x = torch.arange(12 * 50, dtype=torch.float32).reshape(12, 50)
    seg = _Seg(np.zeros(64 + x.numel() * 4, dtype=np.uint8))
    seg.base[64:] = x.view(torch.uint8).reshape(-1).numpy()
    bodies = [seg.base[64 + 200 * i:64 + 200 * (i + 1)] for i in range(12)]
    reply = Reply(None, b"", bodies, [(seg, 64 + 200 * i) for i in range(12)], None,
                  np.array([seg.addr + 64 + 200 * i for i in range(12)], dtype=np.int64))
    plan = ReadPlan.of("x", {"dtype": torch.float32, "shape": (50,)}, 12)
    for i in reversed(range(12)):
        plan.take(i, bodies[i], reply, i)
    plan.place_shared()
    got = plan.result()[1]
    assert torch.equal(got, x) and got.data_ptr() == seg.addr + 64
