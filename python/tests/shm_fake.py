"""A server of the transport's shared-memory messages in this process (docs/PROTOCOL.md section 4.2),
for the client's tests without Java: HELLO with an offer, SHM_ATTACH, SHM_GRANT, SHM_RELEASE, and
one application message, ECHO (type 16), answered with the request's bodies (shared when the
connection is attached and they add up to ``min_bytes``)."""

from __future__ import annotations

import os
import socket
import threading

from transferqueue_jvm import shm, wire

ECHO = 16


class FakeSegment:
    def __init__(self, size: int):
        self.fd = os.memfd_create("tq-shm-test", os.MFD_CLOEXEC)
        os.ftruncate(self.fd, size)
        import mmap
        self.mm = mmap.mmap(self.fd, size, flags=mmap.MAP_SHARED)
        self.key = os.urandom(16)
        self.size = size
        self.mm[0:8] = shm.MAGIC
        self.mm[8:24] = self.key
        self.mm[24:32] = size.to_bytes(8, "little")
        self.next = 128  # 64..127: the probe region

    def ref(self):
        return [self.fd, self.key, self.size]

    def close(self):
        self.mm.close()
        os.close(self.fd)


class FakeServer:
    """Listens on 127.0.0.1; ``offer``: False sends no offer, ``corrupt``: the offer's key is wrong."""

    def __init__(self, offer: bool = True, corrupt: bool = False, min_bytes: int = 1024,
                 segment_bytes: int = 1 << 22, grant_limit: int | None = None, bad_lease: bool = False,
                 placing: str | None = None):
        self.offer, self.corrupt, self.min_bytes = offer, corrupt, min_bytes
        self.grant_limit = grant_limit
        self.bad_lease = bad_lease  # shared replies name an offset outside the segment
        # "yes": a grant that announces its request is placed (each body on its own, last body first);
        # "unmappable": placed in a segment the client cannot map (a wrong key)
        self.placing = placing
        self.placed: dict[int, tuple] = {}  # grant id -> (type, metadata, lengths, offsets)
        self.segment = FakeSegment(segment_bytes)
        self.lock = threading.Lock()
        self.grants: dict[int, tuple[int, int]] = {}
        self.leases: set[int] = set()
        self.released: list[list[int]] = []
        self.issued: list[int] = []  # lease ids, in order
        self.requests: list[tuple[int, int]] = []  # (type, flags) of every request
        self.items: list = []  # the shared-body items of shared requests
        self.ids = iter(range(1, 1 << 30))
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.address = "127.0.0.1:%d" % self.sock.getsockname()[1]
        self.conns: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(c)
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def close(self):
        self.sock.close()
        for c in self.conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()

    @staticmethod
    def _read(c, n):
        buf = bytearray()
        while len(buf) < n:
            got = c.recv(n - len(buf))
            if not got:
                raise EOFError
            buf += got
        return bytes(buf)

    def _alloc(self, n, limit=None):
        at = self.segment.next
        if limit is not None and n > limit or at + n > self.segment.size:
            return None
        self.segment.next = wire.align64(at + n)
        return at

    def _reply(self, c, h, app=b"", bodies=(), flags=wire.FLAG_RESPONSE):
        c.sendall(wire.encode_frame(h.type, flags, h.correlation_id, app, bodies))

    def _serve(self, c):
        probe, attached = None, False
        try:
            while True:
                h = wire.decode_header(self._read(c, 32))
                section = self._read(c, h.padded_metadata)[:h.metadata_length]
                self.requests.append((h.type, h.flags))
                if h.is_shared:
                    table, item, app = wire.split_shared_section(section, h.body_length)
                    self.items.append(item)
                    with self.lock:
                        at, granted = self.grants.pop(item[0], (None, None))
                    if item[0] in self.placed:
                        type_, meta, lengths, offsets = self.placed.pop(item[0])
                        assert len(item) == 1 and (type_, meta, lengths) == (h.type, app, table), item
                        bodies = [bytes(self.segment.mm[o:o + n]) for o, n in zip(offsets, table)]
                    else:
                        offsets = item[1] if len(item) > 1 else wire.shared_offsets(table)[0]
                        end = 0
                        for o, n in zip(offsets, table):  # in order, not overlapping, within the grant
                            assert end <= o and o + n <= granted, (offsets, table, granted)
                            end = o + n
                        bodies = [bytes(self.segment.mm[at + o:at + o + n]) for o, n in zip(offsets, table)]
                else:
                    table, app = wire.split_section(section, h.body_length)
                    bodies = [self._read(c, n) for n in table]
                if h.type == wire.TYPE_HELLO:
                    meta = wire.unpackb(app)
                    if len(meta) > 1 and meta[1] and self.offer:
                        probe = 64
                        ref = self.segment.ref()
                        if self.corrupt:
                            ref = [ref[0], bytes(16), ref[2]]
                        self._reply(c, h, wire.packb([[os.getpid(), ref, probe]]))
                    else:
                        self._reply(c, h)
                elif h.type == wire.TYPE_SHM_ATTACH:
                    nonce = wire.unpackb(app)[0]
                    attached = probe is not None and nonce is not None and \
                        bytes(self.segment.mm[probe:probe + 16]) == nonce
                    probe = None
                    self._reply(c, h, wire.packb([attached]))
                elif h.type == wire.TYPE_SHM_GRANT and self.placing and len(wire.unpackb(app)) == 4:
                    n, type_, meta, lengths = wire.unpackb(app)
                    with self.lock:
                        offsets = [self._alloc(max(1, k)) for k in reversed(lengths)][::-1]
                        gid = next(self.ids)
                        self.placed[gid] = (type_, meta, lengths, offsets)
                    ref = self.segment.ref()
                    if self.placing == "unmappable":
                        ref = [ref[0], bytes(16), ref[2]]
                    self._reply(c, h, wire.packb([gid, [[ref, o] for o in offsets]]))
                elif h.type == wire.TYPE_SHM_GRANT:
                    n = wire.unpackb(app)[0]
                    with self.lock:
                        at = self._alloc(n, self.grant_limit)
                        if at is None:
                            self._reply(c, h, wire.error_metadata(300, f"cannot grant {n} bytes"),
                                        flags=wire.FLAG_RESPONSE | wire.FLAG_ERROR)
                            continue
                        gid = next(self.ids)
                        self.grants[gid] = (at, n)
                    self._reply(c, h, wire.packb([gid, self.segment.ref(), at, n]))
                elif h.type == wire.TYPE_SHM_RELEASE:
                    ids = wire.unpackb(app)[0]
                    with self.lock:
                        self.released.append(ids)
                        for i in ids:
                            self.leases.discard(i)
                            self.grants.pop(i, None)
                            self.placed.pop(i, None)
                    self._reply(c, h)
                elif h.type == ECHO:
                    if attached and sum(len(b) for b in bodies) >= self.min_bytes:
                        with self.lock:
                            places = []
                            for b in bodies:
                                at = self._alloc(len(b))
                                self.segment.mm[at:at + len(b)] = b
                                places.append([self.segment.ref(), self.segment.size if self.bad_lease else at])
                            lease = next(self.ids)
                            self.leases.add(lease)
                            self.issued.append(lease)
                        prefix = wire.shared_frame_prefix(h.type, wire.FLAG_RESPONSE, h.correlation_id, app,
                                                          [len(b) for b in bodies], wire.packb([lease, places]))
                        c.sendall(prefix)
                    else:
                        self._reply(c, h, app, bodies)
                else:
                    self._reply(c, h, wire.error_metadata(204, f"type {h.type}"),
                                flags=wire.FLAG_RESPONSE | wire.FLAG_ERROR)
        except (EOFError, OSError):
            pass
        finally:
            with self.lock:
                self.leases.clear()
                self.grants.clear()
