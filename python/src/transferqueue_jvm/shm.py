"""Same-host bodies through shared memory (docs/PROTOCOL.md section 4.2, the server side's pool).

A server offers a pool of memfd segments. This client maps a segment by opening
``/proc/<server pid>/fd/<fd>`` and ``mmap``-ing the whole file ``MAP_SHARED``; that works only for
a process of the same user on the same host (and pid namespace), which is the point: anything else
stays on TCP. Every mapping is checked against the reference the server sent (file size, the magic
``TQSHM\\0\\0\\1``, the 16-byte key) before a byte of it is used.

Design note (threads and lifetimes):

* A :class:`Segments` cache belongs to one connection. Callers (puts), the connection's reader
  thread (shared replies) and the :class:`Releaser` thread use it under its lock. A segment is
  mapped on first use and unmapped when no grant or lease uses it any more, except the segment of
  the HELLO offer, which stays mapped while the connection is open.
* A shared reply's bodies are numpy views over one *base* array per segment (``np.frombuffer`` of
  the mapping): every body slice, every tensor made from it (``torch.from_numpy``) and every view
  of those tensors keeps its base alive, and nothing else references it. A
  ``weakref.finalize`` on each base tells the :class:`Lease` when the last of them is garbage;
  the lease then asks for ``SHM_RELEASE``. A finalizer runs on whatever thread drops the last
  reference, inside the garbage collector maybe, so it only puts an item into the
  :class:`Releaser`'s ``SimpleQueue`` (reentrant by design); the releaser thread counts, coalesces
  the ids of each connection into one ``SHM_RELEASE`` and sends it without waiting for the reply.
* A mapping's memory is returned to the kernel when the ``mmap`` object is garbage: the cache
  drops its reference when the segment is unused or the connection closes, and the views that may
  still exist hold the ``mmap`` through their base. So neither a closed client nor a dead server
  leaves a mapping behind once no result tensor references it.

Design note (layout and copies): a request's bodies are laid out in its grant as the Java client
lays them out (:func:`request_layout`): a body as long as the one before it (the rows of a dense
field) follows it back to back, so that a storage unit can keep a field's rows as its cells where
they lie; any other body starts at the next multiple of 64. Bytes move
between the caller's memory and a mapping by :func:`copy_runs`: rows are coalesced into runs (back
to back on both sides, or rows of one size at a constant stride on each side, such as every N-th
row of a tensor) and each run is one ``memmove`` or one strided torch copy, both of which release
the GIL. Only the run list is built per row, with numpy.
"""

from __future__ import annotations

import ctypes
import logging
import mmap
import os
import queue
import threading
import weakref
from dataclasses import dataclass

import numpy as np
import torch

from . import wire
from .errors import ProtocolError, TQError

logger = logging.getLogger(__name__)

#: bytes 0..7 of every segment
MAGIC = b"TQSHM\x00\x00\x01"
#: the segment header; regions start at or after it
HEADER_BYTES = 64
KEY_BYTES = 16
NONCE_BYTES = 16
#: ``network.shared_memory_min_bytes`` default: smaller requests and replies stay on the socket
MIN_BYTES_DEFAULT = 65536
#: madvise advice (Linux 5.14+): fault a range in with one call, not one trap per page
MADV_POPULATE_READ = 22
MADV_POPULATE_WRITE = 23
_PAGE = mmap.PAGESIZE
_populate_works = True
#: a run of at least this many bytes is copied with torch (several threads), a shorter one with memmove
TORCH_COPY_BYTES = 1 << 20

# Whether a get may return views of the servers' memory (``python.shared_memory_views``). A view
# shows the server's own bytes (a stored cell, an object in a store node), so an in-place write
# through it would change what every later reader gets; off by default: results are copied once.
_VIEWS = [False]


def set_views(enabled: bool) -> None:
    """Sets ``python.shared_memory_views`` for this process (``init()`` does)."""
    _VIEWS[0] = bool(enabled)


def views_enabled() -> bool:
    """Whether gets may return views of the servers' memory (see :func:`set_views`)."""
    return _VIEWS[0]


def _populate(mm: mmap.mmap, start: int, length: int, advice: int):
    """Faults ``[start, start + length)`` of a mapping in ahead of a copy (about twice as fast as
    taking the faults one page at a time); a no-op where the kernel does not know the advice."""
    global _populate_works
    if not _populate_works or length < 16 * _PAGE:
        return
    lo = start - start % _PAGE
    try:
        mm.madvise(advice, lo, start + length - lo)
    except (OSError, ValueError):
        _populate_works = False


def populate_memory(address: int, length: int):
    """:func:`_populate` for memory this process allocated (a result tensor about to be filled).

    Only the pages that are not yet present are faulted in: ``mincore`` (a page-table walk, about
    a hundred times cheaper than the populate) finds them first, so memory that freed results left
    mapped (``python.reuse_freed_memory``) costs no populate at all. Populating present pages is
    not free: the kernel still visits each page and holds the process's mapping lock meanwhile."""
    global _populate_works
    if not _populate_works or length < 16 * _PAGE:
        return
    lo = (address + _PAGE - 1) // _PAGE * _PAGE
    hi = (address + length) // _PAGE * _PAGE
    libc = _libc()
    if hi <= lo or libc is None:
        return
    absent = _absent_pages(libc, lo, hi)
    if absent is not None:
        if not len(absent):
            return
        hi = lo + (int(absent[-1]) + 1) * _PAGE
        lo += int(absent[0]) * _PAGE
    if libc.madvise(lo, hi - lo, MADV_POPULATE_WRITE) != 0:
        _populate_works = False


def _absent_pages(libc, lo: int, hi: int) -> np.ndarray | None:
    """The indexes of the pages of ``[lo, hi)`` (page-aligned, private memory of this process) that
    are not present, or None when ``mincore`` cannot tell."""
    vec = np.empty((hi - lo) // _PAGE, dtype=np.uint8)
    if libc.mincore(lo, hi - lo, vec.ctypes.data) != 0:
        return None
    return np.flatnonzero((vec & 1) == 0)


_LIBC = []


def _libc():
    if not _LIBC:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
            libc.madvise.restype = ctypes.c_int
            libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
            libc.mincore.restype = ctypes.c_int
            _LIBC.append(libc)
        except (OSError, AttributeError):
            _LIBC.append(None)
    return _LIBC[0]


_from_buffer = ctypes.c_char.from_buffer


def address_of(buffer) -> int:
    """Where a buffer's first byte lies in this process (any address for an empty one)."""
    try:
        return ctypes.addressof(_from_buffer(buffer))
    except (TypeError, ValueError):  # read-only or empty: numpy reads the pointer of those too
        return np.frombuffer(buffer, dtype=np.uint8).__array_interface__["data"][0]


def addresses_of(buffers) -> np.ndarray:
    """:func:`address_of` of each buffer, as int64."""
    return np.fromiter((address_of(b) for b in buffers), dtype=np.int64, count=len(buffers))


def request_layout(lengths) -> tuple[np.ndarray, int]:
    """Where a request's bodies go in a granted region (docs/PROTOCOL.md section 4.2), as the Java
    client's ``SharedMessages.requestLayout`` places them: a body as long as the one before it
    follows it back to back (the rows of a dense field, which a storage unit then keeps as its cells
    without a copy), any other body starts at the next multiple of 64; so every body lies at
    ``start + k * length`` from a 64-aligned run start, aligned for its element type. Returns the
    offsets (int64) and the bytes they span (the end of the last body; 0 for no bodies)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    n = len(lengths)
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0
    starts_run = np.ones(n, dtype=bool)
    starts_run[1:] = lengths[1:] != lengths[:-1]
    firsts = np.flatnonzero(starts_run)
    run_bytes = np.add.reduceat(lengths, firsts).tolist()
    run_at, at = [], 0
    for b in run_bytes:  # one step per run: each starts at the next multiple of 64
        at = (at + 63) & ~63
        run_at.append(at)
        at += b
    run = np.cumsum(starts_run) - 1
    offsets = np.asarray(run_at, dtype=np.int64)[run] + (np.arange(n) - firsts[run]) * lengths
    return offsets, at


class _Raw:
    """An ``__array_interface__`` over memory at an address (no ownership: the caller keeps it alive)."""

    __slots__ = ("__array_interface__",)

    def __init__(self, address: int, shape: tuple, strides: tuple):
        self.__array_interface__ = {"version": 3, "typestr": "|u1", "data": (address, False),
                                    "shape": shape, "strides": strides}


def _tensor_at(address: int, shape: tuple, strides: tuple) -> torch.Tensor:
    return torch.from_numpy(np.asarray(_Raw(address, shape, strides)))


def copy_runs(src, dst, lengths) -> int:
    """Copies ``lengths[i]`` bytes from address ``src[i]`` to address ``dst[i]`` for every ``i``
    (ranges that do not overlap; the caller keeps both sides mapped meanwhile).

    Consecutive entries form a run when they lie back to back on both sides (any lengths), or have
    one length and a constant stride on each side (every N-th row of a tensor into consecutive rows,
    and back); order the entries so that runs are consecutive. Each run is copied once: by
    ``ctypes.memmove``, or by a torch copy (several threads) when it is large or strided; both
    release the GIL. Returns the number of copies made."""
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    if len(lengths) and not lengths.all():
        keep = lengths > 0
        src, dst, lengths = src[keep], dst[keep], lengths[keep]
    m = len(lengths)
    if m == 0:
        return 0
    step_src, step_dst, before = np.diff(src), np.diff(dst), lengths[:-1]
    # pair j links entry j to entry j + 1
    block = (step_src == before) & (step_dst == before)
    strided = (lengths[1:] == before) & (step_src >= before) & (step_dst >= before)
    linked = block | strided
    key_src = np.where(block, -1, step_src)
    key_dst = np.where(block, -1, step_dst)
    # Entry j + 1 starts a run unless pair j links it, with the stride of the run's pairs so far.
    changed = np.zeros(m - 1, dtype=bool)
    changed[1:] = linked[:-1] & ((key_src[1:] != key_src[:-1]) | (key_dst[1:] != key_dst[:-1]))
    first = np.ones(m, dtype=bool)
    first[1:] = ~linked | changed
    starts = np.flatnonzero(first).tolist()
    ends = starts[1:] + [m]
    copies = 0
    memmove = ctypes.memmove
    for s, e in zip(starts, ends):
        a, b = int(src[s]), int(dst[s])
        if e - s == 1 or key_src[s] == -1:
            n = int(src[e - 1] + lengths[e - 1]) - a
            if n < TORCH_COPY_BYTES:
                memmove(b, a, n)
            else:
                _tensor_at(b, (n,), (1,)).copy_(_tensor_at(a, (n,), (1,)))
        else:
            shape = (e - s, int(lengths[s]))
            _tensor_at(b, shape, (int(step_dst[s]), 1)).copy_(_tensor_at(a, shape, (int(step_src[s]), 1)))
        copies += 1
    return copies


@dataclass(frozen=True)
class SegmentRef:
    """A segment reference of the wire: ``[fd: int, key: bin(16), size: int]``."""

    fd: int
    key: bytes
    size: int

    @staticmethod
    def parse(obj, what: str) -> "SegmentRef":
        """Decodes a reference; :class:`ProtocolError` naming ``what`` when it is malformed."""
        if not isinstance(obj, list) or len(obj) != 3:
            raise ProtocolError(f"{what}: segment reference {obj!r:.80} is not [fd, key, size]")
        fd, key, size = obj
        if not _is_int(fd) or fd < 0 or not isinstance(key, bytes) or len(key) != KEY_BYTES \
                or not _is_int(size) or size < HEADER_BYTES:
            raise ProtocolError(f"{what}: segment reference [fd={fd!r:.20}, key of "
                                f"{len(key) if isinstance(key, bytes) else '?'} bytes, size={size!r:.20}] is malformed")
        return SegmentRef(fd, key, size)


@dataclass(frozen=True)
class Offer:
    """The HELLO reply's ``[pid, segment, probe_offset]``."""

    pid: int
    segment: SegmentRef
    probe_offset: int


@dataclass(frozen=True)
class Grant:
    """An SHM_GRANT reply: a region of ``length`` bytes at ``offset`` of ``segment``."""

    grant_id: int
    segment: SegmentRef
    offset: int
    length: int


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def parse_offer(app_meta: bytes) -> Offer | None:
    """The offer of a HELLO reply's application metadata: None when absent or nil."""
    if not app_meta:
        return None
    item = wire.unpackb(app_meta)
    if not isinstance(item, list) or len(item) < 1:
        raise ProtocolError(f"HELLO reply metadata {item!r:.80} is not [offer]")
    offer = item[0]
    if offer is None:
        return None
    if not isinstance(offer, list) or len(offer) != 3 or not _is_int(offer[0]) or not _is_int(offer[2]):
        raise ProtocolError(f"HELLO offer {offer!r:.80} is not [pid, segment, probe_offset]")
    segment = SegmentRef.parse(offer[1], "HELLO offer")
    probe = offer[2]
    if offer[0] <= 0 or probe < HEADER_BYTES or probe + 64 > segment.size:
        raise ProtocolError(f"HELLO offer: pid={offer[0]} or probe_offset={probe} is out of range "
                            f"(segment size {segment.size})")
    return Offer(offer[0], segment, probe)


def parse_grant(app_meta: bytes, requested: int) -> Grant:
    """An SHM_GRANT reply; :class:`ProtocolError` when malformed or smaller than ``requested``."""
    item = wire.unpackb(app_meta)
    if not isinstance(item, list) or len(item) != 4 or not all(_is_int(item[i]) for i in (0, 2, 3)):
        raise ProtocolError(f"SHM_GRANT reply {item!r:.80} is not [grant_id, segment, offset, length]")
    grant = Grant(item[0], SegmentRef.parse(item[1], f"grant {item[0]}"), item[2], item[3])
    if grant.length < requested or grant.offset < HEADER_BYTES or grant.offset + grant.length > grant.segment.size:
        raise ProtocolError(f"grant {grant.grant_id}: offset={grant.offset} length={grant.length} does not hold "
                            f"{requested} bytes inside a segment of {grant.segment.size} bytes")
    return grant


def is_placed_grant(app_meta: bytes) -> bool:
    """Whether an SHM_GRANT reply is the placed form ``[grant_id, placements]`` (two elements; the
    ordinary form has four)."""
    return bool(app_meta) and app_meta[0] == 0x92


@dataclass(frozen=True)
class Places:
    """Where the bodies of a placed grant or a lease lie: body ``i`` at ``offsets[i]`` of segment
    ``refs[index[i]]`` (the few segments named once each; ``index`` and ``offsets`` int64)."""

    refs: list[SegmentRef]
    index: np.ndarray
    offsets: np.ndarray

    def __len__(self) -> int:
        return len(self.offsets)

    def __iter__(self):
        """``(segment, offset)`` per body."""
        refs = self.refs
        return iter([(refs[j], o) for j, o in zip(self.index.tolist(), self.offsets.tolist())])

    def addresses(self, bases) -> np.ndarray:
        """Where each body lies in this process, given where each of :attr:`refs` is mapped."""
        return np.asarray(bases, dtype=np.int64)[self.index] + self.offsets


def _parse_places(entries: list, lengths, what: str) -> Places:
    """Decodes ``[[segment, offset], ...]``, one entry per body of ``lengths``; :class:`ProtocolError`
    naming ``what`` and the body when an entry is malformed or a body would lie outside its segment.
    Each entry's checks are plain comparisons; the bounds are checked for all bodies at once."""
    refs: list[SegmentRef] = []
    known: dict[tuple, int] = {}  # a message names few segments, each many times
    index = []
    last_raw, last = None, -1
    for i, entry in enumerate(entries):
        if type(entry) is not list or len(entry) != 2 or type(entry[1]) is not int:
            raise ProtocolError(f"{what}: body {i} {entry!r:.80} is not [segment, offset]")
        raw = entry[0]
        if raw != last_raw or type(raw) is not list:
            key = tuple(raw) if type(raw) is list and len(raw) == 3 and type(raw[1]) is bytes else None
            j = known.get(key) if key is not None else None
            if j is None:
                ref = SegmentRef.parse(raw, f"{what} body {i}")
                j = known.setdefault((ref.fd, ref.key, ref.size), len(refs))
                if j == len(refs):
                    refs.append(ref)
            last_raw, last = raw, j
        index.append(last)
    try:
        offsets = np.asarray([entry[1] for entry in entries], dtype=np.int64)
    except OverflowError:
        offsets = None
    index = np.asarray(index, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    sizes = np.asarray([r.size for r in refs], dtype=np.int64)[index] if refs else np.zeros(0, dtype=np.int64)
    bad = np.ones(len(entries), dtype=bool) if offsets is None else \
        (offsets < HEADER_BYTES) | (offsets > sizes - lengths)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ProtocolError(f"{what}: body {i} of {int(lengths[i])} bytes at offset {entries[i][1]} lies outside "
                            f"its segment of {refs[index[i]].size} bytes")
    return Places(refs, index, offsets)


def parse_placed_grant(app_meta: bytes, lengths) -> tuple[int, Places]:
    """A placed SHM_GRANT reply ``[grant_id, [[segment, offset], ...]]``, one placement per body;
    :class:`ProtocolError` when malformed or a body would lie outside its segment."""
    item = wire.unpackb(app_meta)
    if not isinstance(item, list) or len(item) != 2 or not _is_int(item[0]) or not isinstance(item[1], list):
        raise ProtocolError(f"placed SHM_GRANT reply {item!r:.80} is not [grant_id, placements]")
    grant_id, entries = item
    if len(entries) != len(lengths):
        raise ProtocolError(f"placed grant {grant_id}: {len(entries)} placements for {len(lengths)} bodies")
    return grant_id, _parse_places(entries, lengths, f"placed grant {grant_id}")


def parse_lease(item, lengths) -> tuple[int, Places]:
    """A reply's shared-body item ``[lease_id, [[segment, offset], ...]]``, one entry per body."""
    if not isinstance(item, list) or len(item) != 2 or not _is_int(item[0]) or not isinstance(item[1], list):
        raise ProtocolError(f"shared-body item {item!r:.80} is not [lease_id, bodies]")
    lease_id, entries = item
    if len(entries) != len(lengths):
        raise ProtocolError(f"lease {lease_id}: {len(entries)} shared bodies for a body table of {len(lengths)}")
    return lease_id, _parse_places(entries, lengths, f"lease {lease_id}")


class Segment:
    """One mapping of a server's segment, checked against its reference.

    ``use`` counts the grants and leases using it (guarded by the owning :class:`Segments`' lock).
    """

    def __init__(self, pid: int, ref: SegmentRef):
        self.ref = ref
        self.use = 0
        path = f"/proc/{pid}/fd/{ref.fd}"
        try:
            fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
        except OSError as e:
            raise ProtocolError(f"cannot open segment {path}: {e.strerror}") from None
        try:
            st = os.fstat(fd)
            actual = st.st_size
            self.identity = (st.st_dev, st.st_ino)
            if actual != ref.size:
                raise ProtocolError(f"segment {path} has {actual} bytes, the reference says {ref.size}")
            mm = mmap.mmap(fd, ref.size, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ | mmap.PROT_WRITE)
        except OSError as e:
            raise ProtocolError(f"cannot map segment {path}: {e.strerror}") from None
        finally:
            os.close(fd)
        header = mm[:32]
        problem = None
        if header[:8] != MAGIC:
            problem = f"magic {header[:8].hex()} (expected {MAGIC.hex()})"
        elif header[8:24] != ref.key:
            problem = "a key other than the reference's"
        elif int.from_bytes(header[24:32], "little") != ref.size:
            problem = f"size {int.from_bytes(header[24:32], 'little')} in its header (reference: {ref.size})"
        if problem is not None:
            mm.close()
            raise ProtocolError(f"segment {path} refused: {problem}")
        self.mm: mmap.mmap | None = mm
        self._view: memoryview | None = memoryview(mm)
        #: where the mapping starts in this process
        self.addr = np.frombuffer(mm, dtype=np.uint8, count=1).ctypes.data

    def write(self, offset: int, offsets, views: list[memoryview], addresses=None) -> int:
        """Copies ``views[i]`` to ``offset + offsets[i]``, straight from the caller's memory, run by
        run (:func:`copy_runs`; ``addresses`` are the views' own, when the caller has them).
        Returns the number of copies made."""
        offsets = np.asarray(offsets, dtype=np.int64)
        if not len(views):
            return 0
        lengths = np.fromiter((v.nbytes for v in views), dtype=np.int64, count=len(views))
        _populate(self.mm, offset, int(offsets[-1] + lengths[-1]), MADV_POPULATE_WRITE)
        src = addresses_of(views) if addresses is None else addresses
        return copy_runs(src, self.addr + offset + offsets, lengths)

    def prefetch(self, offset: int, length: int):
        """Faults a range in ahead of reading all of it."""
        _populate(self.mm, offset, length, MADV_POPULATE_READ)

    def prefetch_write(self, addresses: np.ndarray, lengths: np.ndarray):
        """Faults in the span of this mapping that bodies at ``addresses`` (of this process) with
        ``lengths`` will cover, ahead of writing them; bodies elsewhere are ignored."""
        if self.mm is None:
            return
        inside = (addresses >= self.addr) & (addresses < self.addr + self.ref.size)
        if inside.any():
            lo = int(addresses[inside].min()) - self.addr
            hi = int((addresses[inside] + lengths[inside]).max()) - self.addr
            _populate(self.mm, lo, hi - lo, MADV_POPULATE_WRITE)

    def is_current(self, pid: int) -> bool:
        """Whether the server still holds this segment under its fd (else it closed it)."""
        try:
            st = os.stat(f"/proc/{pid}/fd/{self.ref.fd}")
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == self.identity and st.st_size == self.ref.size

    def write_nonce(self, offset: int, nonce: bytes):
        self._view[offset:offset + len(nonce)] = nonce

    def base(self) -> np.ndarray:
        """A fresh uint8 array over the whole mapping (an exporter of its buffer)."""
        return np.frombuffer(self.mm, dtype=np.uint8)

    def address(self) -> int:
        """Where the mapping starts in this process."""
        return self.addr

    def close(self):
        """Drops this object's hold on the mapping: unmapped now, or when the last view over it is gone."""
        view, mm = self._view, self.mm
        self._view = self.mm = None
        if view is not None:
            view.release()
        if mm is not None:
            try:
                mm.close()
            except BufferError:
                pass  # result views still reference it: the mmap object unmaps when they are gone


class Segments:
    """The segments one connection mapped, by fd; see the module's design note."""

    def __init__(self, pid: int):
        self.pid = pid
        self._lock = threading.Lock()
        self._by_fd: dict[int, Segment] = {}
        self._pinned: Segment | None = None
        self._closed = False

    def acquire(self, ref: SegmentRef, pin: bool = False) -> Segment:
        """The mapping of ``ref`` with its use count raised (mapped now if needed); :class:`ProtocolError`
        when the segment cannot be mapped or is not the one referenced."""
        with self._lock:
            if self._closed:
                raise ProtocolError("the connection's shared memory is closed")
            seg = self._by_fd.get(ref.fd)
            if seg is not None and seg.ref != ref:
                # The server closed that segment and reused its fd for another one.
                if seg.use > 0:
                    raise ProtocolError(f"segment fd {ref.fd} was replaced while still in use")
                self._drop(seg)
                seg = None
            if seg is None:
                seg = Segment(self.pid, ref)
                self._by_fd[ref.fd] = seg
            seg.use += 1
            if pin:
                self._pinned = seg
            return seg

    def release(self, seg: Segment):
        """Lowers the use count. Unused mappings stay (their pages stay mapped for the next region
        in them) while the server holds the segment: each time a segment falls unused, every unused
        one the server closed since is unmapped."""
        with self._lock:
            seg.use -= 1
            if seg.use > 0:
                return
            for other in list(self._by_fd.values()):
                if other.use <= 0 and other is not self._pinned and not other.is_current(self.pid):
                    self._drop(other)

    def _drop(self, seg: Segment):
        del self._by_fd[seg.ref.fd]
        seg.close()

    def mapped(self) -> list[Segment]:
        with self._lock:
            return list(self._by_fd.values())

    def close(self):
        """Forgets every mapping (each unmapped once no view references it); idempotent."""
        with self._lock:
            self._closed = True
            segs = list(self._by_fd.values())
            self._by_fd.clear()
            self._pinned = None
        for seg in segs:
            seg.close()


class Lease:
    """The bytes of one shared reply; released when the last view over them is garbage.

    Bodies are slices of one base array per segment (see the module's design note). The lease is
    *sealed* once the reply is built; from then on the death of its last base sends
    ``SHM_RELEASE(lease_id)``.
    """

    def __init__(self, lease_id: int, conn, segments: Segments):
        self.lease_id = lease_id
        self.conn = conn
        self.segments = segments
        self._bases: dict[SegmentRef, tuple[Segment, np.ndarray]] = {}
        self._held: list[Segment] = []
        self.live = 0      # bases not yet garbage (counted by the releaser thread, and at seal)
        self.sealed = False
        self.done = False

    def view(self, ref: SegmentRef, offset: int, length: int | None) -> tuple[Segment, np.ndarray]:
        """The segment of ``ref`` (mapped if needed) and ``length`` bytes at ``offset`` of it: a uint8
        array whose life keeps the lease. :class:`ProtocolError` when the segment cannot be mapped.
        Only before :meth:`seal`; afterwards slice a view's ``base`` (the lease's array of that
        segment) to make more views."""
        if self._bases is None:
            raise RuntimeError(f"lease {self.lease_id} is sealed: no new views")
        entry = self._bases.get(ref)
        if entry is None:
            seg = self.segments.acquire(ref)  # this use ends when the lease does
            entry = (seg, seg.base())
            self._bases[ref] = entry
            self._held.append(seg)
            self.live += 1
            weakref.finalize(entry[1], RELEASER.dropped, self).atexit = False
        if length is None:
            return entry[0], entry[1]
        return entry[0], entry[1][offset:offset + length]

    def base(self, ref: SegmentRef) -> tuple[Segment, np.ndarray]:
        """The segment of ``ref`` (mapped if needed) and the lease's uint8 array over all of it: slices
        of it are the lease's views (:meth:`view` with the whole mapping). Only before :meth:`seal`."""
        seg, array = self.view(ref, 0, None)
        return seg, array

    def seal(self):
        """Ends the building: the lease is released when its views are gone (at once if none)."""
        self._bases = None  # the views hold the bases now
        RELEASER.sealed(self)


class Releaser:
    """The process's thread that counts dead views and sends coalesced ``SHM_RELEASE`` requests."""

    def __init__(self):
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._pid = None
        self._start_lock = threading.Lock()
        self.sent = 0  # SHM_RELEASE requests sent (tests and benchmarks)

    # -- called from anywhere, finalizers included: only a queue put
    def dropped(self, lease: Lease):
        self._queue.put(("drop", lease, None))
        self._ensure_thread()

    def sealed(self, lease: Lease):
        self._queue.put(("seal", lease, None))
        self._ensure_thread()

    def release_ids(self, conn, ids: list[int]):
        """Releases grant or lease ids directly (an unused grant, a reply that could not be used)."""
        self._queue.put(("ids", conn, list(ids)))
        self._ensure_thread()

    def _ensure_thread(self):
        if self._thread is not None and self._pid == os.getpid():
            return
        with self._start_lock:
            if self._thread is None or self._pid != os.getpid():
                self._pid = os.getpid()
                self._thread = threading.Thread(target=self._run, name="tq-shm-release", daemon=True)
                self._thread.start()

    def _run(self):
        while True:
            items = [self._queue.get()]
            while True:
                try:
                    items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            self.handle(items)

    def handle(self, items: list):
        """Counts the drops and seals of ``items`` and sends one SHM_RELEASE per connection (the
        releaser thread; tests call it directly)."""
        by_conn: dict[int, tuple[object, list[int]]] = {}
        for what, obj, ids in items:
            try:
                if what == "ids":
                    by_conn.setdefault(id(obj), (obj, []))[1].extend(ids)
                    continue
                lease = obj
                if what == "seal":
                    lease.sealed = True
                else:
                    lease.live -= 1
                if lease.sealed and lease.live <= 0 and not lease.done:
                    lease.done = True
                    by_conn.setdefault(id(lease.conn), (lease.conn, []))[1].append(lease.lease_id)
                    for seg in lease._held:
                        lease.segments.release(seg)
                    lease._held = []
            except Exception:  # noqa: BLE001 - the thread must go on; a broken item is logged once here
                logger.exception("shared memory: releasing %s failed", what)
        for conn, ids in by_conn.values():
            try:
                conn.send_release(ids)
                self.sent += 1
            except TQError as e:
                logger.debug("shared memory: SHM_RELEASE %s not sent: %s", ids, e)
            except Exception:  # noqa: BLE001 - as above
                logger.exception("shared memory: SHM_RELEASE %s failed", ids)

    def flush(self, timeout: float = 10.0) -> bool:
        """Waits until everything queued before this call was handled (tests)."""
        done = threading.Event()
        self._queue.put(("ids", _Flush(done), []))
        self._ensure_thread()
        return done.wait(timeout)


class _Flush:
    def __init__(self, event: threading.Event):
        self.event = event

    def send_release(self, ids):
        self.event.set()


#: the process's releaser (started on first use, again in a forked child)
RELEASER = Releaser()
