"""The two storage backends over the Java servers, with the Java client's routing and key layout.

* :class:`SimpleStorage`: storage units (docs/PROTOCOL.md section 8). Sample ``gi`` lives on unit
  ``gi mod N``; a put is one ``PUT`` per (partition, unit) held under a random non-zero token, then
  ``FINISH`` keep (after the controller accepted the notification) or rollback.
* :class:`MooncakeStore`: object-store nodes (section 9). One object per cell under the key
  ``"<gi>.<generation>@<field>"`` on node ``gi mod N``; tensor cells are their raw bytes, object
  cells packed buffers whose size goes to the controller as ``{"packed_size": n}``.

Both send tensor bytes straight from the columns' memory and receive them straight into columns
allocated once per field from the metadata's dtypes and shapes. Rows that arrive through shared
memory (:mod:`.shm`) become the column itself where the field's rows lie back to back in one
segment region of one lease (the result tensor is a view of the server's segment, no copy);
otherwise they are copied once into the column, run by run (rows back to back in a segment, or
every N-th row of the column from one server, go in one copy: :func:`shm.copy_runs`), and the
leases are released at once.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass

import numpy as np
import torch

from . import dtypes, memory, shm, values, wire
from .batch import DENSE, JAGGED, OBJECT, Column
from .errors import (CorruptDataError, FrameTooLongError, NotFoundError, StorageError, TQError,
                     error_for)
from .transport import Pool

PUT, GET, CLEAR, STATS, FINISH = 200, 201, 202, 203, 204
SU_SAVE_CHECKPOINT, SU_PREPARE_LOAD, SU_COMMIT_LOAD, SU_ABORT_LOAD = 205, 206, 207, 208
WRITE, READ, EXIST, SIZE, REMOVE, REMOVE_REGEX, REMOVE_ALL = 300, 301, 302, 303, 304, 305, 306

_FRAME_SLACK = 1 << 20  # room for header and metadata when a request is split by body bytes

#: store-node result codes with a name (section 5.2); others are reported by number
STORE_CODES = {0: "OK", -1: "INTERNAL_ERROR", -600: "INVALID_PARAMS", -703: "REPLICA_IS_NOT_READY",
               -704: "OBJECT_NOT_FOUND", -705: "OBJECT_ALREADY_EXISTS", -706: "OBJECT_HAS_LEASE",
               -707: "LEASE_EXPIRED", -200: "NO_AVAILABLE_HANDLE", -900: "RPC_FAIL", -901: "RPC_TIMEOUT"}


def _packb(obj) -> bytes:
    return wire.packb(obj)


def _unpack(app: bytes):
    return wire.unpackb(app) if app else None


def new_token() -> int:
    """A random non-zero 63-bit token."""
    while True:
        t = random.getrandbits(63)
        if t:
            return t


@dataclass
class ReadPlan:
    """Where the rows of one field go: the column allocated from the metadata, per row a view."""

    name: str
    kind: int
    dtype: torch.dtype | None
    shapes: list[tuple] | None
    storage: torch.Tensor | None = None   # dense: [n, ...]; jagged: flat values
    row_views: list[memoryview] | None = None
    row_offsets: np.ndarray | None = None  # where each row starts in storage (bytes, int64)
    row_lengths: np.ndarray | None = None  # each row's bytes (int64)
    rows: list | None = None              # filled row by row where the views could not be used
    shared: dict | None = None            # id(reply) -> (reply, rows, body indexes) that came in shared memory
    prepared: bool = False                # storage's pages are ready for the copies (prepare, populate_memory)

    @staticmethod
    def of(name: str, schema: dict, n: int) -> "ReadPlan":
        if schema.get("is_non_tensor"):
            return ReadPlan(name, OBJECT, None, None, rows=[None] * n)
        dtype = schema.get("dtype")
        if dtype is None:
            raise NotFoundError(f"field '{name}' has no data yet (placeholder schema)")
        if schema.get("is_nested"):
            shapes = schema.get("per_sample_shapes")
            if shapes is None or any(s is None for s in shapes):
                raise NotFoundError(f"no recorded shape of field '{name}' for some samples")
            shapes = [tuple(s) for s in shapes]
            kind = JAGGED
        else:
            shapes = [tuple(schema["shape"])] * n
            kind = DENSE
        plan = ReadPlan(name, kind, dtype, shapes)
        plan.allocate(n)
        return plan

    def allocate(self, n: int):
        esize = dtypes.size_of(self.dtype)
        if self.kind == DENSE:
            self.storage = memory.empty((n,) + self.shapes[0], self.dtype)
            row_bytes = math.prod(self.shapes[0]) * esize if self.shapes else 0
            flat = dtypes.byte_view(self.storage) if self.storage.numel() else None
            self.row_views = [flat[i * row_bytes:(i + 1) * row_bytes] if flat is not None else memoryview(b"")
                              for i in range(n)]
            self.row_offsets = np.arange(n, dtype=np.int64) * row_bytes
            self.row_lengths = np.full(n, row_bytes, dtype=np.int64)
        else:
            counts = [math.prod(s) for s in self.shapes]
            self.storage = memory.empty((sum(counts),), self.dtype)
            flat = dtypes.byte_view(self.storage) if self.storage.numel() else None
            views, at = [], 0
            for c in counts:
                views.append(flat[at * esize:(at + c) * esize] if flat is not None else memoryview(b""))
                at += c
            self.row_views = views
            self.row_lengths = np.asarray(counts, dtype=np.int64) * esize
            self.row_offsets = np.cumsum(self.row_lengths) - self.row_lengths

    def row_bytes(self, i: int) -> int:
        return self.row_views[i].nbytes

    def take(self, i: int, body, reply, k: int, dtype_name: str | None = None, shape=None) -> bool:
        """Row ``i`` arrived as ``reply.bodies[k]``; True when it is kept for the column (a shared body
        of the expected type and size, placed by :meth:`place_shared`), False when the caller decides."""
        if reply.shared is None or self.kind == OBJECT:
            return False
        if dtype_name is not None and (dtype_name != dtypes.name_of(self.dtype) or tuple(shape) != self.shapes[i]):
            return False
        if len(body) != self.row_views[i].nbytes:
            return False
        if not len(body):
            return True  # nothing to place: the row's (empty) view is already right
        if self.shared is None:
            self.shared = {}
        entry = self.shared.get(id(reply))
        if entry is None:
            entry = self.shared[id(reply)] = (reply, [], [])
        entry[1].append(i)
        entry[2].append(k)
        return True

    def take_all(self, rows: np.ndarray, ks: np.ndarray, reply):
        """:meth:`take` of rows ``rows`` (int64) as ``reply.bodies[ks]`` of a shared reply, whose
        bodies are known to have the rows' sizes; empty rows need nothing placed."""
        keep = self.row_lengths[rows] > 0
        if not keep.all():
            rows, ks = rows[keep], ks[keep]
        if not len(rows):
            return
        if self.shared is None:
            self.shared = {}
        entry = self.shared.get(id(reply))
        if entry is None:
            entry = self.shared[id(reply)] = (reply, [], [])
        entry[1].append(rows)
        entry[2].append(ks)

    def prepare(self):
        """Faults the column's memory in now (while the servers work on the replies), for a read
        whose rows will be copied in from shared memory."""
        if self.kind != OBJECT and not self.prepared and self.storage.numel():
            shm.populate_memory(self.storage.data_ptr(), self.storage.numel() * self.storage.element_size())
        self.prepared = True

    def place_shared(self, view: bool = True):
        """Places the shared rows taken so far (:meth:`take`). With ``view``, when the column's rows all
        lie back to back in one region of one lease, the column becomes a view of it (no copy);
        otherwise they are copied into the column, run by run (one copy each; the leases go with
        the replies). Called once per reply when several come (their copies then overlap the wait
        for the others), or once at the end."""
        if not self.shared:
            return
        shared = [(reply, _indexes(rs), _indexes(ks)) for reply, rs, ks in self.shared.values()]
        self.shared = None
        rows = np.concatenate([r for _, r, _ in shared])
        src = np.concatenate([reply.addresses[ks] for reply, _, ks in shared])
        lengths = self.row_lengths[rows]
        if view and len(shared) == 1 and self.rows is None and len(rows) == np.count_nonzero(self.row_lengths):
            whole = self._view_of(shared[0], rows, src, lengths)
            if whole is not None:
                self.storage = whole
                return
        if not self.prepared:
            self.prepared = True
            if self.storage.numel():
                shm.populate_memory(self.storage.data_ptr(), self.storage.numel() * self.storage.element_size())
        for reply, _, _ in shared:
            reply.prefetch()
        order = np.argsort(src, kind="stable")  # rows that lie back to back in a segment form runs
        shm.copy_runs(src[order], self.storage.data_ptr() + self.row_offsets[rows[order]], lengths[order])

    def _view_of(self, entry, rows, src, lengths) -> torch.Tensor | None:
        """The column as a view of one reply's segment when its rows lie there back to back in
        row order, else None."""
        reply, _, ks = entry
        order = np.argsort(rows, kind="stable")
        src, lengths = src[order], lengths[order]
        if not np.array_equal(src[1:], src[:-1] + lengths[:-1]):
            return None
        first, last = int(ks[order[0]]), int(ks[order[-1]])
        if reply.shared[first][0] is not reply.shared[last][0]:
            return None  # back to back across two mappings that happen to be adjacent
        start = reply.shared[first][1]
        # The bodies are slices of the lease's array over the segment: so is the whole run.
        span = reply.bodies[first].base[start:start + int(lengths.sum())]
        return torch.from_numpy(span).view(self.dtype).view(self.storage.shape)

    def set_row(self, i: int, tensor: torch.Tensor):
        """A row that arrived with another shape than expected: kept as its own tensor."""
        if self.rows is None:
            self.rows = [None] * len(self.row_views)
        self.rows[i] = tensor

    def result(self):
        """``(kind, value)``: a dense tensor, a list of row tensors, or a list of values."""
        if self.kind == OBJECT:
            return OBJECT, self.rows
        if self.kind == DENSE and self.rows is None:
            return DENSE, self.storage
        rows = []
        at = 0
        for i, shape in enumerate(self.shapes):
            c = math.prod(shape)
            if self.rows is not None and self.rows[i] is not None:
                rows.append(self.rows[i])
            elif self.kind == DENSE:
                rows.append(self.storage[i])
            else:
                rows.append(self.storage[at:at + c].view(shape))
            at += c
        if self.kind == DENSE:
            if len({tuple(r.shape) for r in rows}) <= 1 and rows:
                return DENSE, torch.stack(rows)
            return JAGGED, rows
        return JAGGED, rows


def _indexes(parts: list) -> np.ndarray:
    """The int64 array of ``parts``: ints (:meth:`ReadPlan.take`) and int64 arrays
    (:meth:`ReadPlan.take_all`); two lists of one shape give aligned arrays."""
    arrays = [x for x in parts if type(x) is not int]
    if len(arrays) == len(parts):
        return np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)
    return np.concatenate(arrays + [np.asarray([x for x in parts if type(x) is int], dtype=np.int64)])


def _prepare(pool: Pool, plans: dict, requests: int) -> bool:
    """Whether a read of ``requests`` replies places shared rows reply by reply: when there are
    several and the pool's connections may bring them through shared memory (no single lease can
    then hold a whole column, so the columns are filled by copies). Their memory is then faulted in
    at once, while the servers work."""
    if requests < 2 or not any(c.attached for c in pool.connections()):
        return False
    for plan in plans.values():
        plan.prepare()
    return True


def _tensor_from_body(body, dtype: torch.dtype, shape) -> torch.Tensor:
    n = math.prod(shape) * dtypes.size_of(dtype)
    if len(body) != n:
        raise CorruptDataError(f"row of {dtype} {list(shape)} needs {n} bytes, got {len(body)}")
    if n == 0:
        return torch.empty(tuple(shape), dtype=dtype)
    buf = body if isinstance(body, bytearray) else bytearray(body)
    return torch.frombuffer(buf, dtype=torch.uint8).view(dtype).reshape(tuple(shape))


class SimpleStorage:
    """SimpleStorage units over the wire (one address per unit, in routing order)."""

    name = "SimpleStorage"
    clears_by_field = False

    def __init__(self, addresses: list[str], pool: Pool, timeout: float, max_frame_bytes: int):
        if not addresses:
            raise StorageError("no storage unit addresses")
        self.addresses = list(addresses)
        self.pool = pool
        self.timeout = timeout
        self.max_frame_bytes = max_frame_bytes

    def unit_of(self, gi: int) -> int:
        return gi % len(self.addresses)

    # -- put
    def _fields_and_bodies(self, cols: dict[str, Column], positions: list[int]):
        """The PUT's field entries, its bodies and where each body lies in this process (int64)."""
        fields, bodies, addresses = [], [], []
        at = np.asarray(positions, dtype=np.int64)
        for name, col in cols.items():
            if col.kind == OBJECT:
                main, tensors = values.encode_column([col.values[p] for p in positions],
                                                     f"field '{name}'")
                fields.append([name, OBJECT, len(main), len(tensors)])
                mine = [main] + [dtypes.byte_view(t) for t in tensors]
                bodies.extend(mine)
                addresses.append(shm.addresses_of(mine))
            else:
                fields.append([name, col.kind, dtypes.name_of(col.dtype), col.row_shapes(positions)])
                bodies.extend(col.row_views(positions))
                addresses.append(_rows_of(col, col.rows)[1][at])
        return fields, bodies, np.concatenate(addresses) if addresses else np.zeros(0, dtype=np.int64)

    def _pieces(self, cols, positions):
        """Splits the rows of one unit so that no request exceeds the frame limit."""
        budget = self.max_frame_bytes - _FRAME_SLACK
        pieces, cur, size = [], [], 0
        for p in positions:
            b = 0
            for col in cols.values():
                if col.kind == OBJECT:
                    main, tensors = values.encode_value(col.values[p], f"field '{col.name}'")
                    b += len(main) + sum(t.numel() * t.element_size() for t in tensors)
                else:
                    b += col.row_nbytes(p)
            if b > budget:
                raise FrameTooLongError(f"row {p} of the put needs {b} bytes, more than one frame "
                                        f"(max_frame_bytes={self.max_frame_bytes}) can carry")
            if cur and size + b > budget:
                pieces.append(cur)
                cur, size = [], 0
            cur.append(p)
            size += b
        if cur:
            pieces.append(cur)
        return pieces

    def put(self, gis, generations, cols, row_groups, deadline):
        """Sends the held PUTs; returns the parts ``(unit, token, group)`` (caller decides them)."""
        needs_split = self._total_bytes(cols) + _FRAME_SLACK > self.max_frame_bytes
        starts, parts = [], []
        try:
            for group_id, rows in enumerate(row_groups):
                by_unit: dict[int, list[int]] = {}
                for p in rows:
                    by_unit.setdefault(self.unit_of(gis[p]), []).append(p)
                for unit in sorted(by_unit):
                    pieces = self._pieces(cols, by_unit[unit]) if needs_split else [by_unit[unit]]
                    for piece in pieces:
                        token = new_token()
                        fields, bodies, addresses = self._fields_and_bodies(cols, piece)
                        meta = _packb([token, [gis[p] for p in piece], [generations[p] for p in piece], fields])
                        parts.append((unit, token, group_id))
                        starts.append(self.pool.start(self.addresses[unit], PUT, meta, bodies,
                                                      max(0.001, deadline - time.monotonic()),
                                                      addresses=addresses))
        except BaseException as e:
            self._settle(starts)
            self.finish(parts, rollback=lambda part: True)
            raise e
        failure = self._settle(starts)
        if failure is not None:
            self.finish(parts, rollback=lambda part: True)
            raise failure
        return parts

    def _settle(self, starts):
        failure = None
        for s in starts:
            try:
                Pool.finish(s)
            except TQError as e:
                failure = failure or e
        return failure

    @staticmethod
    def _total_bytes(cols):
        total = 0
        for col in cols.values():
            if col.kind == DENSE:
                total += col.tensor.numel() * col.tensor.element_size()
            elif col.kind == JAGGED:
                total += sum(r.numel() * r.element_size() for r in col.row_tensors)
            else:
                total += 64 * col.rows  # a guess; object rows are split by their encoded size
        return total if all(c.kind != OBJECT for c in cols.values()) else max(total, 1 << 62)

    def finish(self, parts, rollback):
        """FINISH per unit: keep, or take back the parts ``rollback(part)`` names."""
        calls = []
        for back in (True, False):
            by_unit: dict[int, list[int]] = {}
            for part in parts:
                if bool(rollback(part)) == back:
                    by_unit.setdefault(part[0], []).append(part[1])
            for unit, tokens in by_unit.items():
                try:
                    calls.append(self.pool.start(self.addresses[unit], FINISH, _packb([back, tokens]), (),
                                                 self.timeout))
                except TQError:
                    pass  # an unreachable unit keeps its held put until it closes; nothing to undo here
        failure = self._settle(calls)
        return failure

    # -- get
    def get(self, meta, fields: list[str]):
        n = meta.size
        plans = {f: ReadPlan.of(f, meta.field_schema[f], n) for f in fields}
        by_unit: dict[int, list[int]] = {}
        for i, gi in enumerate(meta.global_indexes):
            by_unit.setdefault(self.unit_of(gi), []).append(i)
        starts = []
        for unit, positions in sorted(by_unit.items()):
            for piece in self._get_pieces(plans, positions):
                req = _packb([[meta.global_indexes[p] for p in piece], [meta.generations[p] for p in piece], fields])
                sink = self._sink(plans, fields, piece)
                starts.append((piece, self.pool.start(self.addresses[unit], GET, req, (), self.timeout, sink)))
        several = _prepare(self.pool, plans, len(starts))
        failure = None
        for piece, s in starts:  # each reply placed as it comes, while the others are on their way
            try:
                reply = Pool.finish(s)
            except TQError as e:
                failure = failure or e
                continue
            if failure is None:
                self._assemble(plans, fields, piece, reply)
                if several:
                    for plan in plans.values():
                        plan.place_shared(view=False)
            del reply
        if failure is not None:
            raise failure
        for plan in plans.values():
            plan.place_shared(view=shm.views_enabled())
        return {f: plans[f].result() for f in fields}

    def _get_pieces(self, plans, positions):
        budget = self.max_frame_bytes - _FRAME_SLACK
        if not any(p.kind == OBJECT for p in plans.values()):
            at = np.asarray(positions, dtype=np.int64)
            total = sum(int(p.row_lengths[at].sum()) for p in plans.values())
            if total <= budget:
                return [positions]
        pieces, cur, size = [], [], 0
        for i in positions:
            b = sum(p.row_bytes(i) if p.kind != OBJECT else budget // 64 for p in plans.values())
            if cur and size + b > budget:
                pieces.append(cur)
                cur, size = [], 0
            cur.append(i)
            size += b
        if cur:
            pieces.append(cur)
        return pieces

    @staticmethod
    def _sink(plans, fields, piece):
        def sink(table, app):
            spec = wire.unpackb(app)
            dests = []
            for f, entry in zip(fields, spec):
                plan = plans[f]
                if entry[0]:  # object cells: main frame and aux frames into fresh buffers
                    dests.extend([None] * (1 + entry[2]))
                    continue
                for p, (kind, dtype, shape) in zip(piece, entry[1]):
                    ok = (plan.kind != OBJECT and kind == plan.kind and dtype == dtypes.name_of(plan.dtype)
                          and tuple(shape) == plan.shapes[p])
                    dests.append(plan.row_views[p] if ok else None)
            return dests
        return sink

    @staticmethod
    def _assemble(plans, fields, piece, reply):
        spec = wire.unpackb(reply.app_meta)
        if not isinstance(spec, list) or len(spec) != len(fields):
            raise CorruptDataError(f"GET reply names {len(spec) if isinstance(spec, list) else '?'} fields, "
                                   f"expected {len(fields)}")
        bodies = reply.bodies
        at = 0
        for f, entry in zip(fields, spec):
            plan = plans[f]
            if entry[0]:
                main = bodies[at]
                aux = bodies[at + 1:at + 1 + entry[2]]
                at += 1 + entry[2]
                rows = values.decode_value(main, aux)
                if plan.kind != OBJECT:
                    raise CorruptDataError(f"field '{f}' is recorded as tensors but the unit holds objects")
                if not isinstance(rows, list) or len(rows) != len(piece):
                    raise CorruptDataError(f"field '{f}': the unit sent {len(rows)} values for {len(piece)} rows")
                for p, v in zip(piece, rows):
                    plan.rows[p] = v
                continue
            if reply.shared is not None and plan.kind == DENSE and len(entry[1]) == len(piece) and piece:
                expected = [DENSE, dtypes.name_of(plan.dtype), list(plan.shapes[0])]
                if all(e == expected for e in entry[1]):
                    # every row as expected: the rows whose bodies have their size are taken at once
                    rows = np.asarray(piece, dtype=np.int64)
                    ks = np.arange(at, at + len(piece), dtype=np.int64)
                    lengths = np.fromiter((len(b) for b in bodies[at:at + len(piece)]), dtype=np.int64,
                                          count=len(piece))
                    fits = lengths == plan.row_lengths[rows]
                    plan.take_all(rows[fits], ks[fits], reply)
                    for p, k in zip(rows[~fits].tolist(), ks[~fits].tolist()):
                        plan.set_row(p, _tensor_from_body(bodies[k], plan.dtype, plan.shapes[p]))
                    at += len(piece)
                    continue
            for p, (kind, dtype, shape) in zip(piece, entry[1]):
                body = bodies[at]
                at += 1
                if plan.kind == OBJECT:
                    raise CorruptDataError(f"field '{f}' is recorded as objects but the unit holds tensors")
                if body is plan.row_views[p] or (kind == plan.kind and plan.take(p, body, reply, at - 1, dtype, shape)):
                    continue
                plan.set_row(p, _tensor_from_body(body, dtypes.to_torch(dtype), shape))

    # -- clear
    def clear(self, meta):
        by_unit: dict[int, list[int]] = {}
        for i, gi in enumerate(meta.global_indexes):
            by_unit.setdefault(self.unit_of(gi), []).append(i)
        starts = []
        for unit, positions in by_unit.items():
            req = _packb([[meta.global_indexes[p] for p in positions], [meta.generations[p] for p in positions]])
            starts.append(self.pool.start(self.addresses[unit], CLEAR, req, (), self.timeout))
        failure = self._settle(starts)
        if failure is not None:
            raise failure

    def stats(self):
        return [_unpack(self.pool.call(a, STATS, _packb([]), (), self.timeout).app_meta) for a in self.addresses]


def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode`` over the UTF-16 code units, as a signed 32-bit int."""
    h = 0
    data = s.encode("utf-16-le")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] | (data[i + 1] << 8))) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def sample_of(key: str) -> int:
    """The sample of a cell key (one to 18 digits, then '.'), or -1 (``KvKeys.sampleOf``)."""
    gi = 0
    for i, c in enumerate(key[:19]):
        if c == "." and i > 0:
            return gi
        if not ("0" <= c <= "9") or i == 18:
            return -1
        gi = gi * 10 + (ord(c) - 48)
    return -1


#: samples below this have at most 18 digits: :func:`sample_of` reads them back from a cell key
_SAMPLE_LIMIT = 10 ** 18


def _rows_of(col: Column, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The bytes and the address of each of the ``n`` rows of a tensor column (int64 each)."""
    if col.kind == DENSE:
        b = col.row_nbytes(0) if n else 0
        return np.full(n, b, dtype=np.int64), col.tensor.data_ptr() + np.arange(n, dtype=np.int64) * b
    tensors = col.row_tensors
    sizes = np.fromiter((t.numel() * t.element_size() for t in tensors), dtype=np.int64, count=n)
    return sizes, np.fromiter((t.data_ptr() for t in tensors), dtype=np.int64, count=n)


def cell_key(gi: int, generation: int, field: str) -> str:
    return f"{gi}.{generation}@{field}"


@dataclass
class _ReadBatch:
    """The cells of one READ: per cell its key, capacity, field (index into the read's fields) and row."""

    keys: list[str]
    caps: np.ndarray
    fis: np.ndarray
    rows: np.ndarray

    def dests(self, plans, fields) -> list:
        """Where each body is received over TCP: the row's view of a tensor column, None for objects."""
        names = [fields[fi] for fi in self.fis.tolist()]
        return [None if plans[f].kind == OBJECT else plans[f].row_views[p] for f, p in zip(names, self.rows.tolist())]


class MooncakeStore:
    """Object-store nodes over the wire (one address per node, in sharding order)."""

    name = "MooncakeStore"
    clears_by_field = True

    def __init__(self, addresses: list[str], pool: Pool, timeout: float, max_frame_bytes: int,
                 hard_pin: bool = True):
        if not addresses:
            raise StorageError("no store node addresses")
        self.addresses = list(addresses)
        self.pool = pool
        self.timeout = timeout
        self.max_frame_bytes = max_frame_bytes
        self.hard_pin = hard_pin

    def node_of(self, key: str) -> int:
        gi = sample_of(key)
        n = len(self.addresses)
        return gi % n if gi >= 0 else java_string_hash(key) % n

    def _row_nodes(self, gis) -> np.ndarray:
        """Per row the node of its cells (``gi mod N``, as :meth:`node_of` finds for a key that starts
        with the sample), or -1 where the key itself must be hashed (a sample :func:`sample_of`
        does not read back)."""
        g = np.fromiter((gi if 0 <= gi < _SAMPLE_LIMIT else -1 for gi in gis), dtype=np.int64, count=len(gis))
        return np.where(g >= 0, g % len(self.addresses), -1)

    def _nodes(self, row_nodes: np.ndarray, keys: list[str]) -> np.ndarray:
        """The node of each key of one field, given :meth:`_row_nodes`."""
        if (row_nodes >= 0).all():
            return row_nodes
        out = row_nodes.copy()
        for p in np.flatnonzero(row_nodes < 0).tolist():
            out[p] = self.node_of(keys[p])
        return out

    def _spans(self, sizes: np.ndarray, what: list[str]) -> list[tuple[int, int]]:
        """Splits items of one node with ``sizes`` by the frame budget: ``(start, end)`` per batch."""
        budget = self.max_frame_bytes - _FRAME_SLACK
        n = len(sizes)
        over = np.flatnonzero(sizes > budget)
        if len(over):
            p = int(over[0])
            raise FrameTooLongError(f"object {what[p]!r} of {int(sizes[p])} bytes is larger than one frame "
                                    f"(max_frame_bytes={self.max_frame_bytes})")
        if int(sizes.sum()) <= budget and n <= 1 << 20:
            return [(0, n)] if n else []
        out, start, size = [], 0, 0
        for i, b in enumerate(sizes.tolist()):
            if i > start and (size + b > budget or i - start >= 1 << 20):
                out.append((start, i))
                start, size = i, 0
            size += b
        out.append((start, n))
        return out

    def put(self, gis, generations, cols, deadline):
        """Writes every cell; returns the backend metadata per row ``{field: {...}}``."""
        n = len(gis)
        backend = [dict() for _ in range(n)]
        row_nodes = self._row_nodes(gis)
        prefixes = [f"{gi}.{g}@" for gi, g in zip(gis, generations)]
        # per node, field by field: keys, bodies, their sizes and addresses
        by_node: dict[int, tuple[list, list, list, list]] = {}
        for name, col in cols.items():
            keys = [prefix + name for prefix in prefixes]
            nodes = self._nodes(row_nodes, keys)
            if col.kind == OBJECT:
                bodies = []
                for p in range(n):
                    main, tensors = values.encode_value(col.values[p], f"field '{name}' row {p}")
                    backend[p][name] = {"packed_size": values.packed_size(main, tensors)}
                    bodies.append(self._joined(values.pack_parts(main, tensors)))
                sizes = np.fromiter((memoryview(b).nbytes for b in bodies), dtype=np.int64, count=n)
                addresses = shm.addresses_of(bodies)
            else:
                bodies = col.row_views(range(n))
                sizes, addresses = _rows_of(col, n)
            for node in np.unique(nodes).tolist():
                rows = np.flatnonzero((nodes == node) & (sizes > 0))  # zero-byte tensors are not written
                if not len(rows):
                    continue
                entry = by_node.setdefault(node, ([], [], [], []))
                picked = rows.tolist()
                entry[0].extend([keys[p] for p in picked])
                entry[1].extend([bodies[p] for p in picked])
                entry[2].append(sizes[rows])
                entry[3].append(addresses[rows])
        starts = []
        for node, (keys, bodies, sizes, addresses) in by_node.items():
            sizes, addresses = np.concatenate(sizes), np.concatenate(addresses)
            for lo, hi in self._spans(sizes, keys):
                meta = _packb([True, 1, self.hard_pin, False, keys[lo:hi]])
                # placed: through shared memory the node places each body in its own memory (one copy)
                starts.append((keys[lo:hi], self.pool.start(self.addresses[node], WRITE, meta, bodies[lo:hi],
                                                            max(0.001, deadline - time.monotonic()), placed=True,
                                                            addresses=addresses[lo:hi])))
        self._check_codes(starts, "write")
        return backend

    @staticmethod
    def _joined(parts):
        if len(parts) == 1:
            return parts[0]
        return b"".join(bytes(p) for p in parts)

    def _check_codes(self, starts, what):
        failed, failure = {}, None
        for keys, s in starts:
            try:
                reply = Pool.finish(s)
            except TQError as e:
                failure = failure or e
                continue
            codes = _unpack(reply.app_meta)[0]
            for k, c in zip(keys, codes):
                if c != 0:
                    failed[k] = c
        if failure is not None:
            raise failure
        if failed:
            shown = {k: f"{c} {STORE_CODES.get(c, '')}".strip() for k, c in list(failed.items())[:10]}
            raise StorageError(f"{what} failed for {len(failed)} keys: {shown}")
        return failed

    def get(self, meta, fields: list[str]):
        n = meta.size
        plans = {f: ReadPlan.of(f, meta.field_schema[f], n) for f in fields}
        row_nodes = self._row_nodes(meta.global_indexes)
        prefixes = [f"{gi}.{g}@" for gi, g in zip(meta.global_indexes, meta.generations)]
        # per node, field by field: keys, capacities, field numbers, rows
        by_node: dict[int, tuple[list, list, list, list]] = {}
        for fi, f in enumerate(fields):
            plan = plans[f]
            keys = [prefix + f for prefix in prefixes]
            nodes = self._nodes(row_nodes, keys)
            if plan.kind == OBJECT:
                caps = np.empty(n, dtype=np.int64)
                for p in range(n):
                    bm = (meta._custom_backend_meta[p] or {}).get(f) or {}
                    if "packed_size" not in bm:
                        raise NotFoundError(f"object cell {keys[p]!r} has no packed_size in its backend metadata")
                    caps[p] = int(bm["packed_size"])
                wanted = np.ones(n, dtype=bool)
            else:
                caps = plan.row_lengths
                wanted = caps > 0
            for node in np.unique(nodes).tolist():
                rows = np.flatnonzero((nodes == node) & wanted)
                if not len(rows):
                    continue
                entry = by_node.setdefault(node, ([], [], [], []))
                entry[0].extend([keys[p] for p in rows.tolist()])
                entry[1].append(caps[rows])
                entry[2].append(np.full(len(rows), fi, dtype=np.int64))
                entry[3].append(rows)
        starts = []
        for node, (keys, caps, fis, rows) in by_node.items():
            caps, fis, rows = np.concatenate(caps), np.concatenate(fis), np.concatenate(rows)
            for lo, hi in self._spans(caps, keys):
                batch = _ReadBatch(keys[lo:hi], caps[lo:hi], fis[lo:hi], rows[lo:hi])
                dests = batch.dests(plans, fields)
                req = _packb([batch.keys, batch.caps.tolist()])
                starts.append((batch, self.pool.start(self.addresses[node], READ, req, (), self.timeout,
                                                      lambda table, app, d=dests: d)))
        several = _prepare(self.pool, plans, len(starts))
        missing, failure = {}, None
        for batch, s in starts:  # each reply placed as it comes, while the others are on their way
            try:
                reply = Pool.finish(s)
            except TQError as e:
                failure = failure or e
                continue
            self._place_reply(plans, fields, batch, reply, missing)
            if several:
                for plan in plans.values():
                    plan.place_shared(view=False)
            del reply
        if failure is not None:
            raise failure
        if missing:
            shown = {k: f"{c} {STORE_CODES.get(c, '')}".strip() for k, c in list(missing.items())[:10]}
            raise NotFoundError(f"{len(missing)} cells could not be read: {shown}")
        for plan in plans.values():
            plan.place_shared(view=shm.views_enabled())
        return {f: plans[f].result() for f in fields}

    @staticmethod
    def _place_reply(plans, fields, batch: "_ReadBatch", reply, missing: dict):
        """Takes one READ reply's cells into the plans; the keys whose result is not their capacity
        go into ``missing``. Shared tensor cells of one field are taken all at once."""
        results = _unpack(reply.app_meta)[0]
        if len(results) != len(batch.keys) or len(reply.bodies) != len(batch.keys):
            raise CorruptDataError(f"READ reply has {len(results)} results and {len(reply.bodies)} bodies "
                                   f"for {len(batch.keys)} keys")
        ok = np.asarray(results, dtype=np.int64) == batch.caps
        for k in np.flatnonzero(~ok).tolist():
            missing[batch.keys[k]] = results[k]
        bodies, lengths = reply.bodies, None
        for fi in np.unique(batch.fis).tolist():
            plan = plans[fields[fi]]
            ks = np.flatnonzero((batch.fis == fi) & ok)
            if not len(ks):
                continue
            rows = batch.rows[ks]
            if plan.kind == OBJECT:
                for k, p in zip(ks.tolist(), rows.tolist()):
                    main, aux = values.unpack(bodies[k])
                    plan.rows[p] = values.decode_value(main, aux)
                continue
            if reply.shared is not None:
                if lengths is None:
                    lengths = np.fromiter((len(b) for b in bodies), dtype=np.int64, count=len(bodies))
                fits = lengths[ks] == plan.row_lengths[rows]
                plan.take_all(rows[fits], ks[fits], reply)
                rows, ks = rows[~fits], ks[~fits]
            views = plan.row_views
            for k, p in zip(ks.tolist(), rows.tolist()):
                if bodies[k] is not views[p]:
                    memoryview(views[p])[:] = memoryview(bodies[k]).cast("B")

    def clear(self, meta):
        by_node: dict[int, list[str]] = {}
        for f in meta.field_names:
            for gi, g in zip(meta.global_indexes, meta.generations):
                if g < 0:
                    continue
                key = cell_key(gi, g, f)
                by_node.setdefault(self.node_of(key), []).append(key)
        starts = []
        for node, keys in by_node.items():
            starts.append((keys, self.pool.start(self.addresses[node], REMOVE, _packb([True, keys]), (),
                                                 self.timeout)))
        failed, failure = {}, None
        for keys, s in starts:
            try:
                codes = _unpack(Pool.finish(s).app_meta)[0]
            except TQError as e:
                failure = failure or e
                continue
            for k, c in zip(keys, codes):
                if c not in (0, -704):
                    failed[k] = c
        if failure is not None:
            raise failure
        if failed:
            raise StorageError(f"remove failed for keys {failed}")


def error_of(code: int, message: str) -> TQError:
    return error_for(code, message)
