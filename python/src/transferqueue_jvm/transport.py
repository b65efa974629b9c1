"""Pooled, pipelined connections with correlation ids and deadlines (docs/PROTOCOL.md section 1).

Design note. A :class:`Connection` is one TCP socket with one reader thread. Callers on any thread
send requests under the connection's write lock (a frame is never interleaved with another) and
wait on their own :class:`Call` with a deadline; the reader thread reads reply frames in the order
the server writes them, matches each to its call by correlation id and completes it. Replies come
back in any order. A request's bodies are sent straight from the callers' buffers with
``socket.sendmsg`` (a tensor's memory is never copied into a frame); a reply's bodies are received
with ``recv_into`` straight into the buffers the call's *sink* names (tensor memory allocated from
the expected shapes), or into fresh ``bytearray``s where the sink has none or the lengths differ.

Deadlines: every call has one. A call that misses it fails with :class:`DeadlineExceeded`; its
reply, if it comes later, is read and discarded. If the deadline strikes while the request is
still being written, or while the reply's bodies are being read, the whole connection is closed
(half a frame cannot be withdrawn) and its other outstanding calls fail with
:class:`ConnectionFailed`. A :class:`Pool` keeps ``connections_per_peer`` connections per address,
spreads calls round-robin and replaces a broken connection on the next call.

Shared memory (docs/PROTOCOL.md section 4.2, :mod:`.shm`). With ``shared_memory`` on, the HELLO
asks for it; a server on the same host offers a segment, the connection maps it, proves that with
a nonce (SHM_ATTACH) and is *attached*. An attached connection sends a request whose bodies add up
to at least ``shared_memory_min_bytes`` through a granted region (SHM_GRANT, one copy from the
callers' buffers into the region, laid out as :func:`shm.request_layout` says, then a frame with
``FLAG_SHARED_BODY``, the bodies' explicit offsets and no body bytes; a store node's WRITE asks
for a *placed* grant instead, whose bodies go straight where the node keeps them); a reply with
``FLAG_SHARED_BODY`` arrives as views over the server's segment (no copy) under a lease that is
released when the last view is garbage. Anything that fails on the way (no offer, a
segment that cannot be mapped, a refused grant) leaves that call, or the whole connection, on TCP.
"""

from __future__ import annotations

import itertools
import socket
import threading
import time
from typing import Callable, Sequence

import logging
import os

import numpy as np

from . import shm, wire
from .errors import (ConnectionFailed, DeadlineExceeded, FrameTooLongError, ProtocolError, TQError,
                     ClosedError)

logger = logging.getLogger(__name__)

_IOV_MAX = 512
_POLL_SECONDS = 0.5

Sink = Callable[[list[int], bytes], Sequence | None]


class Reply:
    """A reply: its header, application metadata and bodies (buffers the caller owns).

    A reply that came through shared memory has ``shared``: per body its ``(segment, offset)``,
    and ``addresses``: per body where it lies in this process (int64); its bodies are then uint8
    numpy views over the segment, and ``lease`` makes more views of it (:meth:`shm.Lease.view`).
    Its lease is released once every view is garbage.
    """

    __slots__ = ("header", "app_meta", "bodies", "shared", "lease", "addresses", "_spans")

    def __init__(self, header, app_meta, bodies, shared=None, lease=None, addresses=None, spans=None):
        self.header = header
        self.app_meta = app_meta
        self.bodies = bodies
        self.shared = shared
        self.lease = lease
        self.addresses = addresses
        self._spans = spans

    def prefetch(self):
        """Faults the pages of a shared reply's bodies in ahead of reading them all (once)."""
        spans, self._spans = self._spans, None
        for seg, lo, hi in spans or ():
            if seg.mm is not None:
                seg.prefetch(lo, hi - lo)


class Call:
    """One outstanding request: completed once by the reader thread, or failed."""

    __slots__ = ("cid", "type", "sink", "_event", "reply", "error", "abandoned", "reading")

    def __init__(self, cid: int, type_: int, sink: Sink | None):
        self.cid = cid
        self.type = type_
        self.sink = sink
        self._event = threading.Event()
        self.reply: Reply | None = None
        self.error: BaseException | None = None
        self.abandoned = False
        self.reading = False

    def complete(self, reply: Reply | None, error: BaseException | None):
        if self._event.is_set():
            return
        self.reply, self.error = reply, error
        self._event.set()

    def wait(self, deadline: float) -> bool:
        return self._event.wait(max(0.0, deadline - time.monotonic()))


def _deadline_error(what: str, timeout: float) -> DeadlineExceeded:
    return DeadlineExceeded(f"{what} did not finish within its deadline of {timeout:.3f} s")


class Connection:
    """One connection to one server: HELLO on open, then pipelined calls."""

    def __init__(self, host: str, port: int, token: str | None, connect_timeout: float,
                 max_frame_bytes: int = wire.MAX_FRAME_BYTES_DEFAULT, shared_memory: bool = False,
                 shared_memory_min_bytes: int = shm.MIN_BYTES_DEFAULT):
        self.address = f"{host}:{port}"
        self._owner_pid = os.getpid()
        self.max_frame_bytes = max_frame_bytes
        self.shared_memory_min_bytes = shared_memory_min_bytes
        #: the server's segments this connection mapped; not None once attached
        self.segments: shm.Segments | None = None
        #: requests sent and replies received with shared bodies, requests written into placed grants
        #: (tests, benchmarks; not exact under races)
        self.shared_sent = 0
        self.shared_received = 0
        self.shared_placed = 0
        self._write_lock = threading.Lock()
        self._lock = threading.Lock()
        self._pending: dict[int, Call] = {}
        self._ids = itertools.count(1)
        self._closed = False
        self._failure: BaseException | None = None
        try:
            self._sock = socket.create_connection((host, port), timeout=connect_timeout)
        except OSError as e:
            raise ConnectionFailed(f"cannot connect to {self.address}: {e}") from None
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock.settimeout(_POLL_SECONDS)
        self._reader = threading.Thread(target=self._read_loop, name=f"tq-reader-{self.address}", daemon=True)
        self._reader.start()
        deadline = time.monotonic() + connect_timeout
        try:
            hello = self.call(wire.TYPE_HELLO, wire.hello_metadata(token, shared_memory), (), deadline, connect_timeout)
            if shared_memory:
                self._attach(hello.app_meta, deadline, connect_timeout)
        except BaseException:
            self.close()
            raise

    def _attach(self, hello_meta: bytes, deadline: float, timeout: float):
        """Maps the offered segment and proves it (SHM_ATTACH); on any failure the connection stays on TCP."""
        try:
            offer = shm.parse_offer(hello_meta)
        except ProtocolError as e:
            logger.warning("%s: malformed shared-memory offer, staying on TCP: %s", self.address, e)
            self.call(wire.TYPE_SHM_ATTACH, wire.packb([None]), (), deadline, timeout)
            return
        if offer is None:
            return
        segments = shm.Segments(offer.pid)
        nonce = os.urandom(shm.NONCE_BYTES)
        try:
            segments.acquire(offer.segment, pin=True).write_nonce(offer.probe_offset, nonce)
        except ProtocolError as e:
            logger.info("%s: shared memory not usable, staying on TCP: %s", self.address, e)
            segments.close()
            segments, nonce = None, None
        try:
            reply = self.call(wire.TYPE_SHM_ATTACH, wire.packb([nonce]), (), deadline, timeout)
            attached = wire.unpackb(reply.app_meta) if reply.app_meta else None
        except (ConnectionFailed, DeadlineExceeded):
            raise
        except TQError as e:
            logger.info("%s: SHM_ATTACH failed, staying on TCP: %s", self.address, e)
            attached = None
        if segments is not None and isinstance(attached, list) and attached[:1] == [True]:
            self.segments = segments
        elif segments is not None:
            segments.close()

    @property
    def attached(self) -> bool:
        """Whether bodies may go through shared memory on this connection."""
        return self.segments is not None
    # -- state
    @property
    def is_open(self) -> bool:
        return not self._closed

    def close(self, error: BaseException | None = None):
        """Closes the socket; every outstanding call fails with ``error`` (or ConnectionFailed)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._failure = error
            pending = list(self._pending.values())
            self._pending.clear()
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # already disconnected: closing is all that is left
        self._sock.close()
        if self.segments is not None:
            self.segments.close()
        for call in pending:
            call.complete(None, ConnectionFailed(f"connection to {self.address} closed"
                                                 + (f": {error}" if error else "")))
        if threading.current_thread() is not self._reader:
            self._reader.join(timeout=2 * _POLL_SECONDS + 1)

    # -- calls
    def call(self, type_: int, app_meta: bytes, bodies: Sequence, deadline: float, timeout: float,
             sink: Sink | None = None, placed: bool = False, addresses: np.ndarray | None = None) -> Reply:
        """Sends one request and waits for its reply until ``deadline`` (time.monotonic()).

        ``bodies`` are buffers (bytes, memoryviews over tensors) sent without copying. Raises the
        error reply's exception, :class:`DeadlineExceeded` or :class:`ConnectionFailed`.
        """
        call = self.start(type_, app_meta, bodies, deadline, timeout, sink, placed, addresses)
        return self.finish(call, deadline, timeout)

    def start(self, type_: int, app_meta: bytes, bodies: Sequence, deadline: float, timeout: float,
              sink: Sink | None = None, placed: bool = False, addresses: np.ndarray | None = None) -> Call:
        """Sends a request without waiting for its reply (pipelining); :meth:`finish` waits.

        ``placed``: when the bodies go through shared memory, ask the server to place them (a placed
        grant, docs/PROTOCOL.md section 4.2: the server chooses where each body goes, typically its
        final storage, so the one copy into shared memory is the only one); the server may answer
        with an ordinary grant instead. For requests whose type places bodies (a store node's WRITE).

        ``addresses``: where each body's first byte lies in this process (int64), when the caller
        knows (rows of one tensor: its data pointer plus the row offsets); else they are looked up
        body by body when the bodies go through shared memory.
        """
        views = [b if type(b) is memoryview and b.format == "B" and b.ndim == 1 else memoryview(b).cast("B")
                 for b in bodies]
        lengths = [v.nbytes for v in views]
        item = None
        if self.segments is not None and type_ >= 16 and sum(lengths) >= self.shared_memory_min_bytes:
            item = self._place_shared(views, lengths, deadline, timeout, addresses,
                                      (type_, app_meta) if placed else None)
        if item is not None:
            self.shared_sent += 1
            prefix = wire.shared_frame_prefix(type_, 0, 0, app_meta, lengths, wire.shared_request_item(*item))
            views = []
            total = len(prefix)
        else:
            prefix = wire.frame_prefix(type_, 0, 0, app_meta, lengths)
            total = len(prefix) + sum(lengths)
        m = len(prefix) - wire.HEADER_LENGTH
        if total > self.max_frame_bytes:
            raise FrameTooLongError(f"request of type {type_} is {total} bytes > max_frame_bytes={self.max_frame_bytes}")
        if m > wire.MAX_METADATA_BYTES_DEFAULT + 64:
            raise FrameTooLongError(f"request metadata of {m} bytes > max={wire.MAX_METADATA_BYTES_DEFAULT}")
        with self._write_lock:
            with self._lock:
                if self._closed:
                    raise ConnectionFailed(f"connection to {self.address} is closed")
                cid = next(self._ids)
                call = Call(cid, type_, sink)
                self._pending[cid] = call
            header = bytearray(prefix[:wire.HEADER_LENGTH])
            header[16:24] = cid.to_bytes(8, "little")
            buffers = [memoryview(header), memoryview(prefix)[wire.HEADER_LENGTH:]]
            buffers.extend(v for v in views if v.nbytes)
            try:
                self._send_all(buffers, deadline)
            except DeadlineExceeded:
                self._forget(cid)
                self.close(ConnectionFailed("a request's deadline struck while it was being written"))
                raise _deadline_error(f"request of type {type_} to {self.address}", timeout) from None
            except OSError as e:
                self._forget(cid)
                self.close(e)
                raise ConnectionFailed(f"cannot send to {self.address}: {e}") from None
        return call

    def _place_shared(self, views: list[memoryview], lengths: list[int], deadline: float, timeout: float,
                      addresses: np.ndarray | None, announce: tuple[int, bytes] | None = None) -> tuple[int, list[int] | None] | None:
        """SHM_GRANT for the bodies, then one copy of each run of them into shared memory:
        ``(grant_id, offsets)`` for the request's shared-body item, or None when the server cannot
        grant it (the request then goes over TCP).

        With ``announce`` (the request's type and application metadata) the grant asks the server
        to place the bodies; a placed grant's bodies are written where the server says and the item
        is the short ``[grant_id]`` (offsets None). Otherwise (or when the server answers with an
        ordinary grant) they are laid out as :func:`shm.request_layout` says, with explicit offsets."""
        offsets, span = shm.request_layout(lengths)
        span = max(1, span)
        request = [span] if announce is None else [span, announce[0], bytes(announce[1]), list(lengths)]
        try:
            reply = self.call(wire.TYPE_SHM_GRANT, wire.packb(request), (), deadline, timeout)
        except (ConnectionFailed, DeadlineExceeded):
            raise
        except TQError as e:
            logger.debug("%s: SHM_GRANT of %d bytes refused, sending over TCP: %s", self.address, span, e)
            return None
        if announce is not None and shm.is_placed_grant(reply.app_meta):
            return self._write_placed(views, lengths, reply.app_meta, addresses)
        grant = None
        try:
            grant = shm.parse_grant(reply.app_meta, span)
            seg = self.segments.acquire(grant.segment)
            try:
                seg.write(grant.offset, offsets, views, addresses)
            finally:
                self.segments.release(seg)
        except BaseException:
            if grant is not None:
                shm.RELEASER.release_ids(self, [grant.grant_id])
            raise
        return grant.grant_id, offsets.tolist()

    def _write_placed(self, views: list[memoryview], lengths: list[int], app_meta: bytes,
                      addresses: np.ndarray | None = None) -> tuple[int, None] | None:
        """Writes each body at its placement; ``(grant_id, None)``, or None when a placement cannot
        be mapped: the grant is then released ahead of the request, which goes over TCP."""
        try:
            grant_id, places = shm.parse_placed_grant(app_meta, lengths)
        except ProtocolError:
            item = wire.unpackb(app_meta)
            if shm._is_int(item[0]):
                self.send_release([item[0]])
            raise
        held = []
        try:
            try:
                for ref in places.refs:
                    held.append(self.segments.acquire(ref))
            except ProtocolError as e:
                logger.info("%s: placed grant %d not mappable, sending over TCP: %s", self.address, grant_id, e)
                self.send_release([grant_id])  # written ahead of the request: the placing is undone first
                return None
            dst = places.addresses([seg.addr for seg in held])
            length = np.asarray(lengths, dtype=np.int64)
            for seg in held:
                seg.prefetch_write(dst, length)
            order = np.argsort(dst, kind="stable")  # bodies placed back to back form runs
            src = shm.addresses_of(views) if addresses is None else addresses
            shm.copy_runs(src[order], dst[order], length[order])
        except BaseException:
            self.send_release([grant_id])
            raise
        finally:
            for seg in held:
                self.segments.release(seg)
        self.shared_placed += 1
        return grant_id, None

    def send_release(self, ids: list[int]):
        """SHM_RELEASE of lease and grant ids, without waiting for the reply (a closed connection
        released them all already). A no-op in a forked child: the socket is its parent's."""
        if not ids or self._closed or os.getpid() != self._owner_pid:
            return
        timeout = 60.0
        self.start(wire.TYPE_SHM_RELEASE, wire.packb([list(ids)]), (), time.monotonic() + timeout, timeout)

    def finish(self, call: Call, deadline: float, timeout: float) -> Reply:
        if not call.wait(deadline):
            with self._lock:
                call.abandoned = True
                self._pending.pop(call.cid, None)
                reading = call.reading
            if reading:
                self.close(ConnectionFailed("a call's deadline struck while its reply was being read"))
            if not call.wait(time.monotonic()):
                raise _deadline_error(f"request of type {call.type} to {self.address}", timeout)
        if call.error is not None:
            raise call.error
        return call.reply

    def _forget(self, cid):
        with self._lock:
            self._pending.pop(cid, None)

    def _send_all(self, buffers: list[memoryview], deadline: float):
        i = 0
        while i < len(buffers):
            if time.monotonic() > deadline:
                raise DeadlineExceeded("send")
            batch = buffers[i:i + _IOV_MAX]
            try:
                sent = self._sock.sendmsg(batch)
            except (socket.timeout, BlockingIOError, InterruptedError):
                continue
            # Skip what was sent; keep the rest of a partly sent buffer.
            while sent > 0 and i < len(buffers):
                n = buffers[i].nbytes
                if sent >= n:
                    sent -= n
                    i += 1
                else:
                    buffers[i] = buffers[i][sent:]
                    sent = 0

    # -- reader thread
    def _recv_exact(self, view: memoryview):
        got = 0
        n = view.nbytes
        while got < n:
            try:
                k = self._sock.recv_into(view[got:], n - got)
            except socket.timeout:
                if self._closed:
                    raise ConnectionFailed("closed")
                continue
            except InterruptedError:
                continue
            if k == 0:
                raise ConnectionFailed(f"{self.address} closed the connection")
            got += k

    def _read_loop(self):
        header_buf = bytearray(wire.HEADER_LENGTH)
        header_view = memoryview(header_buf)
        discard = bytearray(1 << 16)
        discard_view = memoryview(discard)
        try:
            while not self._closed:
                self._recv_exact(header_view)
                header = wire.decode_header(header_buf)
                if not header.is_response:
                    raise ProtocolError("a frame from the server without the response flag")
                if header.metadata_length > wire.MAX_METADATA_BYTES_DEFAULT:
                    raise FrameTooLongError(f"reply metadata of {header.metadata_length} bytes")
                if wire.body_offset(header.metadata_length) + header.body_length > self.max_frame_bytes:
                    raise FrameTooLongError(f"reply frame of {header.body_length} body bytes > max_frame_bytes")
                section = bytearray(header.padded_metadata)
                self._recv_exact(memoryview(section))
                if header.is_shared and not header.is_error:
                    self._shared_reply(header, memoryview(section)[:header.metadata_length])
                    continue
                table, app = wire.split_section(memoryview(section)[:header.metadata_length], header.body_length,
                                                max_segment_bytes=self.max_frame_bytes)
                with self._lock:
                    call = self._pending.get(header.correlation_id)
                    if call is not None:
                        call.reading = True
                if call is None or header.is_error:
                    for length in table:
                        left = length
                        while left:
                            k = min(left, len(discard))
                            self._recv_exact(discard_view[:k])
                            left -= k
                    if call is not None:
                        self._forget(call.cid)
                        call.complete(None, wire.decode_error(app) if header.is_error
                                      else ProtocolError("reply without error flag"))
                    continue
                dests = None
                if call.sink is not None:
                    try:
                        dests = call.sink(table, app)
                    except Exception:  # a sink that cannot place the bodies: they go into fresh buffers
                        dests = None
                bodies = []
                for k, length in enumerate(table):
                    dest = dests[k] if dests is not None and k < len(dests) else None
                    if dest is None or memoryview(dest).nbytes != length:
                        dest = bytearray(length)
                    if length:
                        self._recv_exact(memoryview(dest).cast("B"))
                    bodies.append(dest)
                self._forget(call.cid)
                call.complete(Reply(header, app, bodies), None)
        except BaseException as e:  # any failure ends the connection; the calls learn why
            if not self._closed:
                self.close(e)

    def _shared_reply(self, header, section: memoryview):
        """A reply whose bodies lie in the server's segments: views over the mapping under a lease.

        A malformed item or a segment that cannot be mapped fails the call with PROTOCOL_ERROR (the
        stream itself is intact); its lease is released at once whenever its id could be read."""
        with self._lock:
            call = self._pending.pop(header.correlation_id, None)
        try:
            table, item, app = wire.split_shared_section(section, header.body_length,
                                                         max_segment_bytes=self.max_frame_bytes)
        except TQError as e:  # no body bytes follow: the stream stays readable, only this call fails
            if call is not None:
                call.complete(None, e)
            return
        lease_id = item[0] if isinstance(item, list) and item and shm._is_int(item[0]) else None
        lease = None
        try:
            if self.segments is None:
                raise ProtocolError("a reply with shared bodies on a connection that is not attached")
            lease_id, places = shm.parse_lease(item, table)
            if call is None:  # abandoned: nothing will read it
                shm.RELEASER.release_ids(self, [lease_id])
                return
            lease = shm.Lease(lease_id, self, self.segments)
            try:
                mapped = [lease.base(ref) for ref in places.refs]
                segs = [seg for seg, _ in mapped]
                bases = [base for _, base in mapped]
                index, offsets = places.index.tolist(), places.offsets.tolist()
                bodies = [bases[j][o:o + n] for j, o, n in zip(index, offsets, table)]
                shared = [(segs[j], o) for j, o in zip(index, offsets)]
                addresses = places.addresses([seg.addr for seg in segs])
                ends = places.offsets + np.asarray(table, dtype=np.int64)
                spans = []
                for j, seg in enumerate(segs):
                    mine = places.index == j
                    if mine.any():
                        spans.append([seg, int(places.offsets[mine].min()), int(ends[mine].max())])
            finally:
                lease.seal()  # on failure the views made so far are dropped: that releases the lease
        except ProtocolError as e:
            if lease_id is not None and lease is None:
                shm.RELEASER.release_ids(self, [lease_id])
            if call is not None:
                call.complete(None, e)
            return
        self.shared_received += 1
        call.complete(Reply(header, app, bodies, shared, lease, addresses, spans), None)


class Pool:
    """Connections per server address, opened on first use, round-robin, replaced when broken."""

    def __init__(self, token: str | None, connect_timeout: float = 10.0, connections_per_peer: int = 2,
                 max_frame_bytes: int = wire.MAX_FRAME_BYTES_DEFAULT, shared_memory: bool = False,
                 shared_memory_min_bytes: int = shm.MIN_BYTES_DEFAULT):
        self.token = token
        self.shared_memory = shared_memory
        self.shared_memory_min_bytes = shared_memory_min_bytes
        self.connect_timeout = connect_timeout
        self.per_peer = max(1, connections_per_peer)
        self.max_frame_bytes = max_frame_bytes
        self._lock = threading.Lock()
        self._conns: dict[str, list[Connection | None]] = {}
        self._next: dict[str, int] = {}
        self._dial: dict[str, list[threading.Lock]] = {}
        self._closed = False

    def connection(self, address: str) -> Connection:
        """An open connection to ``address`` (round-robin over its slots; a broken one is re-dialled).

        A slot is dialled under its own lock, so that callers racing for a fresh slot share one
        connection instead of replacing (and closing) each other's.
        """
        with self._lock:
            if self._closed:
                raise ClosedError("the client is closed")
            slots = self._conns.setdefault(address, [None] * self.per_peer)
            dial_locks = self._dial.setdefault(address, [threading.Lock() for _ in range(self.per_peer)])
            i = self._next.get(address, 0)
            self._next[address] = (i + 1) % self.per_peer
            conn = slots[i]
            if conn is not None and conn.is_open:
                return conn
        with dial_locks[i]:
            with self._lock:
                conn = slots[i]
                if conn is not None and conn.is_open:
                    return conn
            host, _, port = address.rpartition(":")
            conn = Connection(host.strip("[]"), int(port), self.token, self.connect_timeout, self.max_frame_bytes,
                              self.shared_memory, self.shared_memory_min_bytes)
            with self._lock:
                if self._closed:
                    conn.close()
                    raise ClosedError("the client is closed")
                old = slots[i]
                slots[i] = conn
        if old is not None:
            old.close()
        return conn

    def call(self, address: str, type_: int, app_meta: bytes, bodies: Sequence = (), timeout: float = 30.0,
             sink: Sink | None = None, placed: bool = False, addresses: np.ndarray | None = None) -> Reply:
        deadline = time.monotonic() + timeout
        conn = self.connection(address)
        return conn.call(type_, app_meta, bodies, deadline, timeout, sink, placed, addresses)

    def start(self, address: str, type_: int, app_meta: bytes, bodies: Sequence = (), timeout: float = 30.0,
              sink: Sink | None = None, placed: bool = False, addresses: np.ndarray | None = None):
        """Starts a call; returns ``(connection, call, deadline, timeout)`` for :meth:`finish`
        (``placed``, ``addresses``: see :meth:`Connection.start`)."""
        deadline = time.monotonic() + timeout
        conn = self.connection(address)
        return conn, conn.start(type_, app_meta, bodies, deadline, timeout, sink, placed, addresses), deadline, timeout

    @staticmethod
    def finish(started) -> Reply:
        conn, call, deadline, timeout = started
        return conn.finish(call, deadline, timeout)

    def connections(self) -> list[Connection]:
        """The open connections (tests and benchmarks)."""
        with self._lock:
            return [c for slots in self._conns.values() for c in slots if c is not None and c.is_open]

    def close(self):
        with self._lock:
            self._closed = True
            conns = [c for slots in self._conns.values() for c in slots if c is not None]
            self._conns.clear()
        for c in conns:
            c.close()


def is_error(e: BaseException) -> bool:
    return isinstance(e, TQError)
