"""``BatchMeta`` and ``KVBatchMeta`` with upstream's fields and methods, plus sample generations.

A sample is a global index together with its **generation** (docs/PROTOCOL.md section 7.5): every
``BatchMeta`` the controller returns carries the generation of each sample in ``generations``, and
every storage request this client sends carries them back, so metadata from before a clear of an
index can never reach the sample that reuses the index. Hand-built metadata has generation -1
(unknown); the client replaces it by the current one before it talks to storage.

``field_schema[f]`` is ``{"dtype": torch.dtype | None, "shape": torch.Size | None, "is_nested":
bool, "is_non_tensor": bool, "per_sample_shapes": [tuple] | None}`` as upstream's.
"""

from __future__ import annotations

import copy
import dataclasses
import decimal
import itertools
import logging
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import msgpack
import numpy as np
import torch

from . import dtypes, wire
from .errors import InvalidArgumentError, ProtocolError

logger = logging.getLogger(__name__)

UNKNOWN_GENERATION = -1

# Extension types of metadata values (section 7.2).
EXT_BIG_INTEGER = 1
EXT_BIG_DECIMAL = 2


# ---------------------------------------------------------------- metadata values (ValueMap)

def _meta_default(obj):
    if isinstance(obj, decimal.Decimal):
        return msgpack.ExtType(EXT_BIG_DECIMAL, str(obj).encode())
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, torch.Tensor) and obj.dim() == 0:
        return obj.item()
    raise TypeError(f"metadata value of type {type(obj).__name__} cannot be encoded "
                    "(None, bool, int, float, str, list, dict with str keys)")


def check_value(value, what: str, path: str = "$", depth: int = 0):
    """Checks a metadata value (tags, extra info): JSON-like, str keys, valid Unicode."""
    if depth > 256:
        raise InvalidArgumentError(f"{what} at {path} nests too deep (a cycle?)")
    if value is None or isinstance(value, (bool, float, decimal.Decimal, np.generic)):
        return
    if isinstance(value, int):
        return
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise InvalidArgumentError(
                f"{what} at {path} is not valid Unicode: lone surrogate {value[e.start]!a} at index {e.start}"
            ) from None
        return
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            check_value(v, what, f"{path}[{i}]", depth + 1)
        return
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise InvalidArgumentError(f"{what}: map key {k!r} at {path} must be a str")
            check_value(k, what, f"{path} key", depth + 1)
            check_value(v, what, f"{path}[{k!r}]", depth + 1)
        return
    if isinstance(value, torch.Tensor) and value.dim() == 0:
        return
    raise InvalidArgumentError(f"{what} at {path}: value of type {type(value).__name__} cannot be stored "
                               "(None, bool, int, float, str, list, dict with str keys)")


class BigInteger(int):
    """An integer that travels as metadata extension 1 (decimal text), as Java's BigInteger does.

    Ints outside [-2^63, 2^64 - 1] are sent this way too; this type keeps the encoding of values a
    peer sent as extension 1 when they are sent back.
    """


def _big(value):
    """Ints outside msgpack's range (and BigInteger values) become extension 1 (decimal text)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        if isinstance(value, BigInteger) or value < -(1 << 63) or value > (1 << 64) - 1:
            return msgpack.ExtType(EXT_BIG_INTEGER, str(value).encode())
        return value
    if isinstance(value, (list, tuple)):
        return [_big(v) for v in value]
    if isinstance(value, dict):
        return {k: _big(v) for k, v in value.items()}
    return value


def meta_ext_hook(code, data):
    """Decodes the extensions of metadata values."""
    text = bytes(data).decode("utf-8")
    if code == EXT_BIG_INTEGER:
        return BigInteger(text)
    if code == EXT_BIG_DECIMAL:
        return decimal.Decimal(text)
    raise ProtocolError(f"unknown metadata extension type {code}")


def pack_meta(obj) -> bytes:
    """msgpack of application metadata with metadata values in it."""
    return wire.reused_packer("meta", use_bin_type=True, use_single_float=False,
                              default=_meta_default).pack(_big(obj))


def unpack_meta(data):
    """Decodes exactly one item of application metadata."""
    try:
        return msgpack.unpackb(data, raw=False, strict_map_key=False, ext_hook=meta_ext_hook, use_list=True)
    except msgpack.ExtraData:
        raise ProtocolError("bytes after the application metadata") from None
    except ProtocolError:
        raise
    except Exception as e:
        raise ProtocolError(f"malformed application metadata: {e}") from None


# ---------------------------------------------------------------- field schemas

def schema_to_wire(s: dict[str, Any]) -> list:
    """``[dtype|nil, shape|nil, nested, nonTensor, perSampleShapes|nil]``."""
    dtype = s.get("dtype")
    nested = bool(s.get("is_nested", False))
    shape = s.get("shape")
    per = s.get("per_sample_shapes") if nested else None
    return [
        None if dtype is None else dtypes.name_of(dtype),
        None if (shape is None or nested) else [int(d) for d in shape],
        nested,
        bool(s.get("is_non_tensor", False)),
        None if per is None else [None if p is None else [int(d) for d in p] for p in per],
    ]


def schema_from_wire(w: list) -> dict[str, Any]:
    dtype, shape, nested, non_tensor, per = w
    out = {
        "dtype": None if dtype is None else dtypes.to_torch(dtype),
        "shape": None if shape is None else torch.Size(shape),
        "is_nested": bool(nested),
        "is_non_tensor": bool(non_tensor),
    }
    if per is not None:
        out["per_sample_shapes"] = [None if p is None else tuple(p) for p in per]
    return out


def schemas_to_wire(schemas: dict[str, dict] | None):
    if schemas is None:
        return None
    return {name: schema_to_wire(s) for name, s in schemas.items()}


def schemas_from_wire(w) -> dict[str, dict]:
    if w is None:
        return {}
    return {name: schema_from_wire(s) for name, s in w.items()}


# ---------------------------------------------------------------- BatchMeta

class SampleView:
    """A read-only view of one sample of a :class:`BatchMeta` (``meta.samples[i]``)."""

    __slots__ = ("_batch", "_idx")

    def __init__(self, batch: "BatchMeta", idx: int) -> None:
        self._batch = batch
        self._idx = idx

    @property
    def global_index(self) -> int:
        return self._batch.global_indexes[self._idx]

    @property
    def generation(self) -> int:
        return self._batch.generations[self._idx]

    @property
    def partition_id(self) -> str:
        return self._batch.partition_ids[self._idx]

    @property
    def production_status(self) -> int:
        return int(self._batch.production_status[self._idx])

    @property
    def custom_meta(self) -> MappingProxyType:
        return MappingProxyType(self._batch.custom_meta[self._idx])

    @property
    def fields(self) -> MappingProxyType:
        """Per field its schema for this sample: a nested field's ``shape`` is this sample's shape."""
        out = {}
        for name, meta in self._batch.field_schema.items():
            one = {k: v for k, v in meta.items() if k != "per_sample_shapes"}
            per = meta.get("per_sample_shapes")
            if per is not None:
                one["shape"] = per[self._idx]
            out[name] = MappingProxyType(one)
        return MappingProxyType(out)

    def __repr__(self) -> str:
        return (f"SampleView(global_index={self.global_index}, generation={self.generation}, "
                f"partition_id={self.partition_id!r}, production_status={self.production_status})")


class SampleViews:
    """The samples of a :class:`BatchMeta` as views: ``len``, indexing and iteration."""

    __slots__ = ("_batch",)

    def __init__(self, batch: "BatchMeta") -> None:
        self._batch = batch

    def __len__(self) -> int:
        return self._batch.size

    def __getitem__(self, idx: int) -> SampleView:
        n = self._batch.size
        if idx < 0:
            idx += n
        if not 0 <= idx < n:
            raise IndexError(f"sample {idx} out of range [0, {n})")
        return SampleView(self._batch, idx)

    def __iter__(self):
        return (SampleView(self._batch, i) for i in range(self._batch.size))


class BatchMeta:
    """Metadata of a batch of samples: indexes, generations, partitions, schema, status, tags."""

    __slots__ = ("global_indexes", "partition_ids", "field_schema", "production_status", "extra_info",
                 "custom_meta", "_custom_backend_meta", "generations", "_size", "_field_names", "_is_ready")

    def __init__(self, global_indexes: list[int], partition_ids: list[str],
                 field_schema: dict[str, dict[str, Any]] | None = None,
                 production_status: np.ndarray | None = None, extra_info: dict[str, Any] | None = None,
                 custom_meta: list[dict[str, Any]] | None = None,
                 _custom_backend_meta: list[dict[str, Any]] | None = None,
                 generations: list[int] | None = None) -> None:
        self.global_indexes = [int(i) for i in global_indexes]
        self.partition_ids = list(partition_ids)
        self.field_schema = {k: dict(v) for k, v in (field_schema or {}).items()}
        self.extra_info = dict(extra_info or {})
        n = len(self.global_indexes)
        if len(self.partition_ids) != n:
            raise ValueError(f"Length mismatch: global_indexes has {n}, partition_ids has {len(self.partition_ids)}")
        if production_status is not None:
            self.production_status = np.array(production_status, dtype=np.int8, copy=True)
            if len(self.production_status) != n:
                raise ValueError(f"production_status length {len(self.production_status)} != batch_size {n}")
        else:
            self.production_status = np.zeros(n, dtype=np.int8)
        for name, meta in self.field_schema.items():
            per = meta.get("per_sample_shapes")
            if per is not None and len(per) != n:
                raise ValueError(f"Field '{name}' per_sample_shapes length {len(per)} != batch_size {n}")
        if generations is None:
            self.generations = [UNKNOWN_GENERATION] * n
        else:
            self.generations = [int(g) for g in generations]
            if len(self.generations) != n:
                raise ValueError(f"generations length {len(self.generations)} != batch_size {n}")
        if not custom_meta:
            self.custom_meta = [{} for _ in range(n)]
        else:
            self.custom_meta = [dict(d or {}) for d in custom_meta]
            if len(self.custom_meta) != n:
                raise ValueError(f"custom_meta length {len(self.custom_meta)} != batch_size {n}")
        if not _custom_backend_meta:
            self._custom_backend_meta = [{} for _ in range(n)]
        else:
            self._custom_backend_meta = [dict(d or {}) for d in _custom_backend_meta]
            if len(self._custom_backend_meta) != n:
                raise ValueError(f"_custom_backend_meta length {len(self._custom_backend_meta)} != batch_size {n}")
        self._refresh()

    def _refresh(self):
        self._size = len(self.global_indexes)
        self._field_names = sorted(self.field_schema.keys())
        self._is_ready = self._size > 0 and bool(np.all(self.production_status == 1))

    # -- upstream's properties
    @property
    def size(self) -> int:
        return self._size

    @property
    def field_names(self) -> list[str]:
        return self._field_names

    @property
    def is_ready(self) -> bool:
        return self._is_ready

    def __len__(self) -> int:
        return self._size

    @property
    def samples(self) -> SampleViews:
        """Read-only per-sample views (global index, generation, partition, status, tags, fields)."""
        return SampleViews(self)

    _STATE = ("global_indexes", "partition_ids", "field_schema", "production_status", "extra_info",
              "custom_meta", "_custom_backend_meta", "generations")

    def __getstate__(self):
        return {k: getattr(self, k) for k in self._STATE}

    def __setstate__(self, state):
        for k in self._STATE:
            setattr(self, k, state[k] if k in state else
                    ([UNKNOWN_GENERATION] * len(state["global_indexes"]) if k == "generations" else None))
        self._refresh()

    def get_dtypes(self, field_name: str) -> list:
        if field_name not in self.field_schema:
            raise KeyError(f"Field '{field_name}' not found in field_schema")
        return [self.field_schema[field_name].get("dtype")] * self.size

    def get_shapes(self, field_name: str) -> list:
        if field_name not in self.field_schema:
            raise KeyError(f"Field '{field_name}' not found in field_schema")
        meta = self.field_schema[field_name]
        per = meta.get("per_sample_shapes")
        if per is not None:
            return list(per)
        return [meta.get("shape")] * self.size

    # -- extra info
    def get_extra_info(self, key: str, default: Any = None) -> Any:
        return self.extra_info.get(key, default)

    def set_extra_info(self, key: str, value: Any) -> None:
        self.extra_info[key] = value

    def get_all_extra_info(self) -> dict[str, Any]:
        return copy.deepcopy(self.extra_info)

    def update_extra_info(self, info_dict: dict[str, Any]) -> None:
        self.extra_info.update(info_dict)

    def remove_extra_info(self, key: str) -> Any:
        return self.extra_info.pop(key, None)

    def clear_extra_info(self) -> None:
        self.extra_info.clear()

    def has_extra_info(self, key: str) -> bool:
        return key in self.extra_info

    # -- custom meta (tags)
    def get_all_custom_meta(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self.custom_meta)

    def update_custom_meta(self, custom_meta: list[dict[str, Any]] | None):
        if custom_meta is None:
            return
        if len(custom_meta) != self.size:
            raise ValueError(f"The length of custom_meta list {len(custom_meta)} must match the batch size: {self.size}")
        for i, meta in enumerate(custom_meta):
            if meta is not None and not isinstance(meta, dict):
                raise ValueError(f"custom_meta[{i}] must be a dict, got {type(meta).__name__}")
            check_value(meta, f"custom_meta[{i}]")
        for i, meta in enumerate(custom_meta):
            self.custom_meta[i].update(meta or {})

    def clear_custom_meta(self) -> None:
        self.custom_meta = [{} for _ in range(self.size)]

    # -- core operations
    def add_fields(self, tensor_dict, set_all_ready: bool = True) -> "BatchMeta":
        from .batch import columns_of, schema_of_columns
        cols = columns_of(tensor_dict)
        n = next(iter(cols.values())).rows if cols else 0
        if n == 0:
            logger.warning("Input TensorDict is empty with batch_size=0. No action is taken.")
            return self
        if n != self.size:
            raise ValueError(f"add_fields batch size mismatch: self.size={self.size} vs tensor_dict={n}")
        self.field_schema.update(schema_of_columns(cols))
        if set_all_ready:
            self.production_status[:] = 1
        self._refresh()
        return self

    def select_samples(self, sample_indices: list[int]) -> "BatchMeta":
        if any(i < 0 or i >= self.size for i in sample_indices):
            raise ValueError(f"Sample indices must be in range [0, {self.size})")
        schema = {}
        for name, meta in self.field_schema.items():
            m = copy.deepcopy(meta)
            if meta.get("per_sample_shapes") is not None:
                m["per_sample_shapes"] = [meta["per_sample_shapes"][i] for i in sample_indices]
            schema[name] = m
        return BatchMeta(
            [self.global_indexes[i] for i in sample_indices], [self.partition_ids[i] for i in sample_indices],
            schema, self.production_status[list(sample_indices)], self.extra_info,
            [copy.deepcopy(self.custom_meta[i]) for i in sample_indices],
            [copy.deepcopy(self._custom_backend_meta[i]) for i in sample_indices],
            [self.generations[i] for i in sample_indices])

    def select_fields(self, field_names: list[str]) -> "BatchMeta":
        schema = {f: copy.deepcopy(self.field_schema[f]) for f in field_names if f in self.field_schema}
        backend = [{f: v for f, v in m.items() if f.startswith("_") or f in field_names}
                   for m in self._custom_backend_meta]
        return BatchMeta(self.global_indexes, self.partition_ids, schema, self.production_status.copy(),
                         copy.deepcopy(self.extra_info), copy.deepcopy(self.custom_meta), backend,
                         self.generations)

    def copy(self) -> "BatchMeta":
        return BatchMeta(list(self.global_indexes), list(self.partition_ids), copy.deepcopy(self.field_schema),
                         self.production_status.copy(), copy.deepcopy(self.extra_info),
                         copy.deepcopy(self.custom_meta), copy.deepcopy(self._custom_backend_meta),
                         list(self.generations))

    def __getitem__(self, item) -> "BatchMeta":
        if isinstance(item, (int, np.integer)):
            item = int(item)
            if item < 0:
                item += self.size
            if item < 0 or item >= self.size:
                raise IndexError("BatchMeta index out of range")
            return self.select_samples([item])
        if isinstance(item, slice):
            return self.select_samples(list(range(*item.indices(self.size))))
        raise TypeError(f"Indexing with {type(item)} is not supported.")

    def chunk(self, chunks: int) -> list["BatchMeta"]:
        n = self.size
        if n < chunks:
            logger.warning(f"Chunk size {chunks} > number of samples in BatchMeta {n}, "
                           "this will return some empty BatchMeta chunks.")
        base, rem = divmod(n, chunks)
        out, start = [], 0
        for i in range(chunks):
            end = start + base + (1 if i < rem else 0)
            out.append(self.select_samples(list(range(start, end))))
            start = end
        return out

    def chunk_by_partition(self) -> list["BatchMeta"]:
        groups: dict[str, list[int]] = {}
        for i, p in enumerate(self.partition_ids):
            groups.setdefault(p, []).append(i)
        return [self.select_samples(idx) for idx in groups.values()]

    def union(self, other: "BatchMeta") -> "BatchMeta":
        if not other or other.size == 0:
            return self.copy()
        if self.size == 0:
            return other.copy()
        if self.global_indexes != other.global_indexes:
            raise ValueError(f"BatchMeta.union: global_indexes do not match. self.global_indexes="
                             f"{self.global_indexes}, other.global_indexes={other.global_indexes}")
        if self.partition_ids != other.partition_ids:
            raise ValueError(f"BatchMeta.union: partition_ids do not match. self.partition_ids="
                             f"{self.partition_ids}, other.partition_ids={other.partition_ids}")
        schema = copy.deepcopy(self.field_schema)
        schema.update(copy.deepcopy(other.field_schema))
        custom = [{**copy.deepcopy(a), **copy.deepcopy(b)} for a, b in zip(self.custom_meta, other.custom_meta)]
        backend = [{**copy.deepcopy(a), **copy.deepcopy(b)}
                   for a, b in zip(self._custom_backend_meta, other._custom_backend_meta)]
        gens = [b if a == UNKNOWN_GENERATION else a for a, b in zip(self.generations, other.generations)]
        return BatchMeta(list(self.global_indexes), list(self.partition_ids), schema,
                         np.bitwise_and(self.production_status, other.production_status),
                         {**self.extra_info, **other.extra_info}, custom, backend, gens)

    @classmethod
    def concat(cls, data: list["BatchMeta"], validate: bool = True) -> "BatchMeta":
        if not data:
            logger.warning("Try to concat empty BatchMeta chunks. Returning empty BatchMeta.")
            return BatchMeta.empty()
        data = [c for c in data if c is not None and c.size > 0]
        if not data:
            return BatchMeta.empty()
        if validate:
            base = data[0].field_names
            for i, c in enumerate(data):
                if c.field_names != base:
                    raise ValueError(f"BatchMeta.concat: field_names mismatch at chunk[{i}]. Expected {base}, "
                                     f"got {c.field_names}.")
            for f in base:
                d0 = data[0].field_schema[f].get("dtype")
                for i, c in enumerate(data[1:], start=1):
                    if c.field_schema[f].get("dtype") != d0:
                        raise ValueError(f"Field '{f}' dtype mismatch in concat: chunk[0]={d0}, "
                                         f"chunk[{i}]={c.field_schema[f].get('dtype')}")
        schema: dict[str, dict] = {}
        for f, meta in data[0].field_schema.items():
            nested = any(c.field_schema.get(f, {}).get("is_nested", False) for c in data)
            schema[f] = {"dtype": meta.get("dtype"), "shape": None if nested else meta.get("shape"),
                         "is_nested": nested, "is_non_tensor": meta.get("is_non_tensor", False)}
            if nested or any(c.field_schema.get(f, {}).get("per_sample_shapes") for c in data):
                shapes = []
                for c in data:
                    cm = c.field_schema.get(f, {})
                    if cm.get("per_sample_shapes"):
                        shapes.extend(cm["per_sample_shapes"])
                    else:
                        shapes.extend([cm.get("shape")] * c.size)
                schema[f]["per_sample_shapes"] = shapes
        extra: dict[str, Any] = {}
        for c in data:
            for k, v in c.extra_info.items():
                if k in extra and not _values_equal(extra[k], v):
                    raise ValueError(f"BatchMeta.concat: extra_info key '{k}' has conflicting values across "
                                     f"chunks and cannot be merged. {extra[k]!r} != {v!r}")
                extra.setdefault(k, v)
        return BatchMeta(
            list(itertools.chain.from_iterable(c.global_indexes for c in data)),
            list(itertools.chain.from_iterable(c.partition_ids for c in data)),
            schema, np.concatenate([c.production_status for c in data]), extra,
            list(itertools.chain.from_iterable(c.custom_meta for c in data)),
            list(itertools.chain.from_iterable(c._custom_backend_meta for c in data)),
            list(itertools.chain.from_iterable(c.generations for c in data)))

    def reorder(self, indices: list[int]):
        if len(indices) != self.size:
            raise ValueError(f"Indices length {len(indices)} mismatch batch size {self.size}")
        if len(set(indices)) != self.size:
            raise ValueError("Indices contain duplicates")
        if any(i < 0 or i >= self.size for i in indices):
            raise ValueError(f"Reorder indices must be in range [0, {self.size})")
        self.global_indexes = [self.global_indexes[i] for i in indices]
        self.partition_ids = [self.partition_ids[i] for i in indices]
        self.production_status = self.production_status[list(indices)]
        self.generations = [self.generations[i] for i in indices]
        for meta in self.field_schema.values():
            if meta.get("per_sample_shapes") is not None:
                meta["per_sample_shapes"] = [meta["per_sample_shapes"][i] for i in indices]
        self.custom_meta = [self.custom_meta[i] for i in indices]
        self._custom_backend_meta = [self._custom_backend_meta[i] for i in indices]

    @classmethod
    def empty(cls, extra_info: dict[str, Any] | None = None) -> "BatchMeta":
        return cls([], [], {}, None, extra_info or {}, [], [], [])

    def __str__(self):
        return (f"BatchMeta(size={self.size}, field_names={self.field_names}, is_ready={self.is_ready}, "
                f"global_indexes={self.global_indexes}, generations={self.generations}, "
                f"extra_info={self.extra_info})")

    __repr__ = __str__

    # -- wire
    def to_wire(self) -> list:
        """``[gis, pids, FieldSchemas, productionStatus[bool], extraInfo, tags, backendMeta, generations]``."""
        return [list(self.global_indexes), list(self.partition_ids), schemas_to_wire(self.field_schema),
                [bool(s) for s in self.production_status], dict(self.extra_info),
                [dict(t) for t in self.custom_meta], [dict(b) for b in self._custom_backend_meta],
                list(self.generations)]

    @classmethod
    def from_wire(cls, w: list) -> "BatchMeta":
        if not isinstance(w, list) or len(w) != 8:
            raise ProtocolError(f"BatchMeta is not an array of 8: {w!r:.200}")
        gis, pids, fields, status, extra, tags, backend, gens = w
        n = len(gis)
        return cls(gis, pids, schemas_from_wire(fields), np.array([1 if s else 0 for s in status], dtype=np.int8),
                   extra or {}, [t or {} for t in (tags or [])] or None,
                   [b or {} for b in (backend or [])] or None, gens if gens is not None else [-1] * n)


def _values_equal(a, b) -> bool:
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and torch.equal(a, b)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(a, b))
    try:
        return bool(a == b)
    except Exception:
        return a is b


# ---------------------------------------------------------------- KVBatchMeta

@dataclass
class KVBatchMeta:
    """The metadata of key-value calls: keys, their tags, partition, fields, extra info.

    Beyond upstream's five fields it carries, per key, the **global index and generation** of the
    key's sample when the descriptor was made (``-1`` where not known, as in a descriptor built by
    hand), as the Java ``KvBatchMeta`` does. :func:`~transferqueue_jvm.kv_batch_get_by_meta` refuses
    with :class:`~transferqueue_jvm.errors.StaleMetadataError` a read through the descriptor of a key
    that was cleared and written again since (it names another sample now); a descriptor whose
    samples are unknown reads whatever the keys name now.
    """

    keys: list[str] = dataclasses.field(default_factory=list)
    tags: list[dict] = dataclasses.field(default_factory=list)
    partition_id: str | None = None
    fields: list[str] | None = None
    extra_info: dict[str, Any] | None = dataclasses.field(default_factory=dict)
    global_indexes: list[int] | None = None
    generations: list[int] | None = None

    def __post_init__(self):
        if len(self.keys) != len(self.tags):
            raise ValueError(f"keys and tags must have same length, but got {len(self.keys)} and {len(self.tags)}")
        if len(self.keys) != len(set(self.keys)):
            raise ValueError("Got duplicated keys.")
        if self.fields is not None and len(self.fields) != len(set(self.fields)):
            raise ValueError("Got duplicated fields.")
        self.keys = list(self.keys)
        self.tags = copy.deepcopy(list(self.tags))
        self.extra_info = copy.deepcopy(self.extra_info)
        self.global_indexes = self._sample_column(self.global_indexes, "global_indexes")
        self.generations = self._sample_column(self.generations, "generations")

    def _sample_column(self, column, what: str) -> list[int]:
        if column is None:
            return [UNKNOWN_GENERATION] * len(self.keys)
        column = [int(v) for v in column]
        if len(column) != len(self.keys):
            raise ValueError(f"keys and {what} must have same length, but got {len(self.keys)} and {len(column)}")
        bad = [v for v in column if v < -1]
        if bad:
            raise ValueError(f"{what} must be -1 (unknown) or at least 0, got {bad[0]}")
        return column

    def knows_sample(self, i: int) -> bool:
        """Whether the descriptor names key ``i``'s sample (index and generation)."""
        return self.global_indexes[i] >= 0 and self.generations[i] >= 0

    @classmethod
    def of(cls, keys: list[str], samples: "BatchMeta", partition_id: str | None,
           fields: list[str] | None) -> "KVBatchMeta":
        """The descriptor of keys written or resolved with their samples (one row per key)."""
        return cls(list(keys), [dict(t) for t in samples.custom_meta], partition_id, fields,
                   dict(samples.extra_info), list(samples.global_indexes), list(samples.generations))

    @property
    def size(self) -> int:
        return len(self.keys)

    def __len__(self) -> int:
        return len(self.keys)

    def __str__(self):
        return f"KVBatchMeta(size={self.size}, field_names={self.fields}, extra_info={self.extra_info})"

    def _rows(self, positions) -> "KVBatchMeta":
        return KVBatchMeta([self.keys[i] for i in positions], [self.tags[i] for i in positions], self.partition_id,
                           self.fields, self.extra_info, [self.global_indexes[i] for i in positions],
                           [self.generations[i] for i in positions])

    def select_keys(self, keys_to_select: list[str]) -> "KVBatchMeta":
        if len(set(keys_to_select)) != len(keys_to_select):
            raise ValueError("Contain duplicate keys.")
        missing = set(keys_to_select) - set(self.keys)
        if missing:
            raise RuntimeError(f"Keys {missing} not found in current batch.")
        pos = {k: i for i, k in enumerate(self.keys)}
        return self._rows([pos[k] for k in keys_to_select])

    def reorder(self, indexes: list[int]):
        if len(indexes) != self.size:
            raise ValueError(f"Attempted to reorder with indexes length {len(indexes)} that does not match "
                             f"the batch size {self.size}.")
        if len(set(indexes)) != len(indexes):
            raise ValueError("Contain duplicate indexes.")
        if any(not 0 <= i < self.size for i in indexes):
            raise ValueError(f"Reorder indexes must be in range [0, {self.size}), got {list(indexes)}")
        self.keys = [self.keys[i] for i in indexes]
        self.tags = [self.tags[i] for i in indexes]
        self.global_indexes = [self.global_indexes[i] for i in indexes]
        self.generations = [self.generations[i] for i in indexes]

    def chunk(self, chunks: int) -> list["KVBatchMeta"]:
        if not isinstance(chunks, int) or chunks <= 0:
            raise ValueError(f"chunks must be a positive int, got {chunks!r}")
        if self.size < chunks:
            logger.warning(f"Chunk size {chunks} > number of samples in this batch {self.size}, this will return "
                           "some empty KVBatchMeta chunks.")
        base, rem = divmod(self.size, chunks)
        out, start = [], 0
        for i in range(chunks):
            end = start + base + (1 if i < rem else 0)
            out.append(self._rows(range(start, end)))
            start = end
        return out

    @classmethod
    def concat(cls, data: list["KVBatchMeta"]) -> "KVBatchMeta":
        if not data:
            logger.warning("Try to concat empty KVBatchMeta chunks. Returning empty KVBatchMeta.")
            return KVBatchMeta()
        data = [c for c in data if c and c.size > 0]
        if not data:
            logger.warning("No valid KVBatchMeta chunks to concatenate. Returning empty KVBatchMeta.")
            return KVBatchMeta()
        base_fields = set(data[0].fields or [])
        pid = data[0].partition_id
        keys, tags, gis, gens = [], [], [], []
        for c in data:
            if c.fields is not None and set(c.fields) != base_fields:
                raise ValueError("Field names do not match for concatenation.")
            if c.partition_id != pid:
                raise ValueError("Partition do not match for concatenation.")
            keys.extend(c.keys)
            tags.extend(c.tags)
            gis.extend(c.global_indexes)
            gens.extend(c.generations)
        extra: dict[str, Any] = {}
        for c in data:
            for k, v in (c.extra_info or {}).items():
                if k in extra and not _values_equal(extra[k], v):
                    raise ValueError(f"KVBatchMeta.concat: extra_info key '{k}' has conflicting values across chunks.")
                extra.setdefault(k, v)
        return KVBatchMeta(keys, tags, pid, data[0].fields, extra or None, gis, gens)

    def to_wire(self) -> list:
        """``[keys, tags, partitionId, fields, extraInfo, globalIndexes, generations]`` (section 7.2)."""
        return [list(self.keys), [dict(t) for t in self.tags], self.partition_id,
                None if self.fields is None else list(self.fields), self.extra_info,
                list(self.global_indexes), list(self.generations)]

    @classmethod
    def from_wire(cls, w: list) -> "KVBatchMeta":
        if not isinstance(w, list) or len(w) != 7:
            raise ProtocolError(f"KvBatchMeta is not an array of 7: {w!r:.200}")
        keys, tags, pid, fields, extra, gis, gens = w
        keys = keys or []
        return cls(keys, [t or {} for t in (tags or [{}] * len(keys))], pid, fields, extra or {}, gis, gens)
