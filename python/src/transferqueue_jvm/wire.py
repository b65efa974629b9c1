"""Frames of the wire protocol, version 1 (docs/PROTOCOL.md sections 2 to 6).

A frame is a 32-byte little-endian header, the metadata section (a msgpack body table, then the
message's msgpack application metadata), zero padding up to a multiple of 64 bytes, then the raw
body segments back to back::

    offset size field
         0    4 magic 'TQFR'         16    8 correlation id
         4    2 version (1)          24    8 body length B
         6    2 type                 32    M metadata section
         8    4 flags (1 RESPONSE, 2 ERROR, 4 SHARED_BODY)
        12    4 metadata length M

Nothing here does I/O: :mod:`transferqueue_jvm.transport` moves the bytes.
"""

from __future__ import annotations

import struct
import threading
from dataclasses import dataclass

import msgpack

from .errors import FrameTooLongError, ProtocolError, UnsupportedVersionError, error_for

MAGIC = 0x52465154
CURRENT_VERSION = 1
HEADER_LENGTH = 32
BODY_ALIGNMENT = 64
FLAG_RESPONSE = 1
FLAG_ERROR = 2
#: the bodies lie in a shared-memory region, not on the socket (section 4.2; :mod:`.shm`)
FLAG_SHARED_BODY = 4

TYPE_HELLO = 1
TYPE_PING = 2
TYPE_PROCESS_STATS = 3
TYPE_SHM_ATTACH = 4
TYPE_SHM_GRANT = 5
TYPE_SHM_RELEASE = 6

# Limits (section 6): what this client accepts and sends by default.
MAX_FRAME_BYTES_DEFAULT = 1 << 30
MAX_METADATA_BYTES_DEFAULT = 16 << 20
MAX_BODY_SEGMENTS_DEFAULT = 65536

_HEADER = struct.Struct("<IHHIIQQ")
_ZEROS = bytes(BODY_ALIGNMENT)


def align64(x: int) -> int:
    """The next multiple of 64 at or above ``x``."""
    return (x + 63) & ~63


def body_offset(metadata_length: int) -> int:
    """Where the body starts, counted from the frame start."""
    return align64(HEADER_LENGTH + metadata_length)


_PACKERS = threading.local()


def reused_packer(name: str, **options) -> msgpack.Packer:
    """This thread's msgpack ``Packer`` of one set of options, made once.

    Every ``Packer`` (and so every ``msgpack.packb`` call) allocates and frees a 256 KiB buffer: on
    the Python heap, and with an mmap and munmap each time. A packer that is never re-entered (its
    ``default`` does not pack with the same packer) is kept per thread and reused instead.
    """
    packer = getattr(_PACKERS, name, None)
    if packer is None:
        packer = msgpack.Packer(autoreset=True, **options)
        setattr(_PACKERS, name, packer)
    return packer


def packb(obj) -> bytes:
    """msgpack with the protocol's conventions: str as str, bytes as bin, floats as float64."""
    return reused_packer("wire", use_bin_type=True, use_single_float=False, strict_types=False).pack(obj)


def pack_body_table(lengths) -> bytes:
    """The body table: a msgpack array of the segment lengths."""
    return packb(list(lengths))


@dataclass(frozen=True)
class Header:
    """A decoded frame header."""

    version: int
    type: int
    flags: int
    metadata_length: int
    correlation_id: int
    body_length: int

    @property
    def is_response(self) -> bool:
        return bool(self.flags & FLAG_RESPONSE)

    @property
    def is_error(self) -> bool:
        return bool(self.flags & FLAG_ERROR)

    @property
    def is_shared(self) -> bool:
        return bool(self.flags & FLAG_SHARED_BODY)

    @property
    def padded_metadata(self) -> int:
        """Bytes after the header up to the body: metadata plus padding."""
        return body_offset(self.metadata_length) - HEADER_LENGTH


def encode_header(type_: int, flags: int, correlation_id: int, metadata_length: int, body_length: int) -> bytes:
    """The 32 header bytes."""
    return _HEADER.pack(MAGIC, CURRENT_VERSION, type_, flags, metadata_length, correlation_id, body_length)


def decode_header(buf) -> Header:
    """Decodes 32 header bytes; a wrong magic or version raises :class:`ProtocolError` /
    :class:`UnsupportedVersionError` (the connection cannot be trusted any more)."""
    magic, version, type_, flags, m, cid, b = _HEADER.unpack_from(buf, 0)
    if magic != MAGIC:
        raise ProtocolError(f"wrong frame magic 0x{magic:08x} (expected 0x{MAGIC:08x})")
    if version != CURRENT_VERSION:
        raise UnsupportedVersionError(f"frame version {version} is not supported (this client speaks 1)")
    if b >= 1 << 63:
        raise ProtocolError(f"body length {b} is not below 2^63")
    return Header(version, type_, flags, m, cid, b)


def frame_prefix(type_: int, flags: int, correlation_id: int, app_meta: bytes, body_lengths) -> bytes:
    """Header, metadata section and padding of a frame: everything before its bodies."""
    lengths = list(body_lengths)
    section = pack_body_table(lengths) + app_meta
    header = encode_header(type_, flags, correlation_id, len(section), sum(lengths))
    pad = body_offset(len(section)) - HEADER_LENGTH - len(section)
    return header + section + _ZEROS[:pad]


def shared_frame_prefix(type_: int, flags: int, correlation_id: int, app_meta: bytes, body_lengths,
                        shared_item: bytes) -> bytes:
    """A whole frame whose bodies lie in shared memory: flag ``FLAG_SHARED_BODY``, body length 0,
    metadata section = body table (the logical lengths), the shared-body item, the application metadata."""
    section = pack_body_table(body_lengths) + shared_item + app_meta
    header = encode_header(type_, flags | FLAG_SHARED_BODY, correlation_id, len(section), 0)
    pad = body_offset(len(section)) - HEADER_LENGTH - len(section)
    return header + section + _ZEROS[:pad]


def shared_request_item(grant_id: int, offsets=None) -> bytes:
    """A request's shared-body item: ``[grant_id, [o_0, o_1, ...]]`` with explicit body offsets in
    the grant, or the short form ``[grant_id]`` (the layout of :func:`shared_offsets`)."""
    return packb([grant_id] if offsets is None else [grant_id, list(offsets)])


def shared_offsets(body_lengths) -> tuple[list[int], int]:
    """Offsets of bodies in a granted region under the short form ``[grant_id]`` (``o_0 = 0``,
    ``o_{i+1} = align64(o_i + len_i)``) and the bytes they span (the end of the last body)."""
    offsets, at, end = [], 0, 0
    for length in body_lengths:
        offsets.append(at)
        end = at + length
        at = align64(end)
    return offsets, end


def encode_frame(type_: int, flags: int, correlation_id: int, app_meta: bytes, bodies=()) -> bytes:
    """A whole frame as one bytes object (tests and small messages; puts send bodies by reference)."""
    bodies = [bytes(b) for b in bodies]
    return frame_prefix(type_, flags, correlation_id, app_meta, [len(b) for b in bodies]) + b"".join(bodies)


def split_section(section, body_length: int, max_segments: int = MAX_BODY_SEGMENTS_DEFAULT,
                  max_segment_bytes: int = MAX_FRAME_BYTES_DEFAULT) -> tuple[list[int], bytes]:
    """Splits a metadata section into the body table and the raw application metadata.

    Raises :class:`ProtocolError` for a malformed table or lengths that do not add up to the header's
    body length, :class:`FrameTooLongError` for too many or too long segments.
    """
    table, end = _body_table(section, max_segments)
    if len(table) > max_segments:
        raise FrameTooLongError(f"body table has {len(table)} segments > max={max_segments}")
    for length in table:
        if length > max_segment_bytes:
            raise FrameTooLongError(f"body segment of {length} bytes > max={max_segment_bytes}")
    if sum(table) != body_length:
        raise ProtocolError(f"body table sums to {sum(table)} but the header says {body_length}")
    return table, bytes(section[end:])


# msgpack integer markers a body length may use: (size, struct format); negative values are refused
_INT_MARKERS = {0xcc: (1, ">B"), 0xcd: (2, ">H"), 0xce: (4, ">I"), 0xcf: (8, ">Q"),
                0xd0: (1, ">b"), 0xd1: (2, ">h"), 0xd2: (4, ">i"), 0xd3: (8, ">q")}


def split_shared_section(section, body_length: int, max_segments: int = MAX_BODY_SEGMENTS_DEFAULT,
                         max_segment_bytes: int = MAX_FRAME_BYTES_DEFAULT) -> tuple[list[int], object, bytes]:
    """Splits the metadata section of a ``FLAG_SHARED_BODY`` frame into the body table, the decoded
    shared-body item and the raw application metadata (:class:`ProtocolError` when malformed)."""
    if body_length != 0:
        raise ProtocolError(f"a frame with shared bodies has body length {body_length}, not 0")
    table, end = _body_table(section, max_segments)
    for length in table:
        if length > max_segment_bytes:
            raise FrameTooLongError(f"body segment of {length} bytes > max={max_segment_bytes}")
    rest = bytes(memoryview(section).cast("B")[end:])
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False, use_list=True, max_buffer_size=max(1, len(rest)))
    try:
        unpacker.feed(rest)
        item = unpacker.unpack()
    except (ValueError, msgpack.OutOfData, msgpack.UnpackException) as e:
        raise ProtocolError(f"malformed shared-body item: {e!r}") from None
    return table, item, rest[unpacker.tell():]


def _body_table(section, max_segments: int) -> tuple[list[int], int]:
    """Decodes the msgpack array of non-negative ints that starts the section; returns it and where
    it ends. Read by hand: a msgpack ``Unpacker`` allocates a 1 MiB buffer for every frame."""
    data = memoryview(section).cast("B")
    n_bytes = len(data)

    def need(at: int, k: int):
        if at + k > n_bytes:
            raise ProtocolError("malformed body table: truncated")

    need(0, 1)
    b = data[0]
    if 0x90 <= b <= 0x9f:
        count, at = b & 0x0f, 1
    elif b in (0xdc, 0xdd):
        size = 2 if b == 0xdc else 4
        need(1, size)
        count, at = int.from_bytes(data[1:1 + size], "big"), 1 + size
    else:
        raise ProtocolError(f"body table is not an array of non-negative ints (marker 0x{b:02x})")
    if count > max_segments:
        raise FrameTooLongError(f"body table has {count} segments > max={max_segments}")
    table = []
    for _ in range(count):
        need(at, 1)
        b = data[at]
        if b <= 0x7f:
            table.append(b)
            at += 1
            continue
        marker = _INT_MARKERS.get(b)
        if marker is None:
            raise ProtocolError(f"body table is not an array of non-negative ints (marker 0x{b:02x})")
        size, fmt = marker
        need(at + 1, size)
        value = struct.unpack_from(fmt, data, at + 1)[0]
        if value < 0:
            raise ProtocolError(f"body table is not an array of non-negative ints: {value}")
        table.append(value)
        at += 1 + size
    return table, at


def unpackb(data):
    """Decodes exactly one msgpack item (bytes after it are a :class:`ProtocolError`)."""
    try:
        return msgpack.unpackb(data, raw=False, strict_map_key=False, use_list=True)
    except msgpack.ExtraData:
        raise ProtocolError("bytes after the application metadata") from None
    except (ValueError, msgpack.UnpackException) as e:
        raise ProtocolError(f"malformed application metadata: {e}") from None


def hello_metadata(token: str | None, want_shm: bool = False) -> bytes:
    """Application metadata of a HELLO: ``[token|nil]``, or ``[token|nil, true]`` asking for shared memory."""
    return packb([token, True] if want_shm else [token])


def error_metadata(code: int, message: str) -> bytes:
    """Application metadata of an error reply: ``[code, message]``."""
    return packb([int(code), message])


def decode_error(app_meta: bytes):
    """The exception an error reply carries."""
    try:
        code, message = unpackb(app_meta)[:2]
        return error_for(int(code), str(message))
    except Exception:
        return ProtocolError(f"malformed error reply metadata {bytes(app_meta[:64]).hex()}")


@dataclass
class Frame:
    """A whole decoded frame (tests and vectors)."""

    header: Header
    table: list[int]
    app_meta: bytes
    bodies: list[bytes]


def decode_frame(data: bytes) -> Frame:
    """Decodes one whole frame from bytes."""
    header = decode_header(data)
    start = HEADER_LENGTH
    section = data[start:start + header.metadata_length]
    table, app = split_section(section, header.body_length)
    at = body_offset(header.metadata_length)
    bodies = []
    for length in table:
        bodies.append(bytes(data[at:at + length]))
        at += length
    if at != len(data):
        raise ProtocolError(f"frame has {len(data) - at} bytes after its body")
    return Frame(header, table, app, bodies)
