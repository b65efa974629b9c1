"""The low-level client: upstream's ``TransferQueueClient`` over the Java controller and storage.

Names and argument orders are upstream's, inconsistencies included
(``get_consumption_status(task_name, partition_id)`` but ``reset_consumption(partition_id,
task_name)``). Every call has an ``async_`` twin with the same arguments; the twins run the call on
the client's worker threads. Each call ends by its deadline (``client.request_timeout`` for the
controller and store nodes, ``backend.SimpleStorage.send_recv_timeout`` for storage units; a
blocking fetch gets its wait on top), and raises a :class:`~transferqueue_jvm.errors.TQError`
subclass naming what went wrong.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import torch

from . import batch as batches
from .errors import (ClosedError, DeadlineExceeded, DuplicateKeyError, InvalidArgumentError, NotFoundError,
                     ShapeMismatchError, StaleMetadataError, TQError, UnknownFieldError, UnknownKeyError,
                     UnsupportedOperationError)
from .metadata import (UNKNOWN_GENERATION, BatchMeta, check_value, pack_meta, schemas_to_wire, unpack_meta)
from .storage import MooncakeStore, SimpleStorage
from .transport import Pool

logger = logging.getLogger(__name__)

# Controller service (docs/PROTOCOL.md section 7.1).
CONTROLLER_ID, CREATE_PARTITION, LIST_PARTITIONS, PARTITION_INDEX_RANGE = 100, 101, 102, 103
UPDATE_PRODUCTION, GET_PRODUCTION, SCAN_READY, GET_CONSUMPTION, RESET_CONSUMPTION = 104, 105, 106, 107, 108
GET_METADATA, GET_PARTITION_META, SET_TAGS, GET_TAGS, GET_BACKEND_META = 109, 110, 111, 112, 113
CLEAR_PARTITION, CLEAR_SAMPLES, RESOLVE_KEYS, RESOLVE_INDEXES, LIST_KEYS = 114, 115, 116, 117, 118
PARTITION_STATISTICS, STATISTICS, CHECK_PUT, SNAPSHOT_STATE, RESTORE_STATE = 119, 120, 121, 122, 123
RESOLVE_KEYS_FOR_PUT, GET_SAMPLE_META, METRICS_ENDPOINT, MARK_CLEARING = 124, 125, 126, 127

_MODES = {"fetch": "FETCH", "force_fetch": "FORCE_FETCH", "insert": "INSERT"}


@dataclass
class Deployment:
    """Where the servers are and how to talk to them."""

    controller_address: str
    storage_backend: str = "SimpleStorage"
    storage_unit_addresses: list[str] = field(default_factory=list)
    store_node_addresses: list[str] = field(default_factory=list)
    auth_token: str | None = None
    request_timeout: float = 30.0
    storage_timeout: float = 200.0
    connect_timeout: float = 10.0
    fetch_timeout: float = 1.0
    polling_mode: bool = False
    max_frame_bytes: int = 1 << 30
    hard_pin: bool = True
    connections_per_peer: int = 2
    always_nested: bool = False
    strict_missing_keys: bool = False
    #: ``network.shared_memory``: ask same-host servers for shared memory (False: TCP only, byte for byte as before)
    shared_memory: bool = True
    #: ``network.shared_memory_min_bytes``: requests with fewer body bytes stay on the socket
    shared_memory_min_bytes: int = 65536


def _check_name(value, what: str):
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{what} must be a str, got {type(value).__name__} {value!r:.80}")
    if not value:
        raise InvalidArgumentError(f"{what} is empty")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InvalidArgumentError(f"{what} {value!a} is not valid Unicode: lone surrogate at index {e.start}") from None


def _check_names(values, what: str):
    if not isinstance(values, (list, tuple)):
        raise InvalidArgumentError(f"{what} must be a list of str, got {type(values).__name__}")
    for i, v in enumerate(values):
        try:
            _check_name(v, what)
        except InvalidArgumentError as e:
            raise InvalidArgumentError(f"{what} {list(values)!r:.200}: element at position {i}: {e.message}") from None


def _check_field_name(name: str):
    _check_name(name, "field name")
    if "@" in name:
        raise InvalidArgumentError(f"field name '{name}' contains '@', which separates index and field in KV keys")


class TransferQueueClient:
    """A client of one deployment: controller calls, storage reads and writes."""

    def __init__(self, client_id: str, deployment: Deployment):
        self.client_id = client_id
        self.deployment = d = deployment
        self._pool = Pool(d.auth_token, d.connect_timeout, d.connections_per_peer, d.max_frame_bytes,
                          d.shared_memory, d.shared_memory_min_bytes)
        if d.storage_backend == "SimpleStorage":
            self.storage = SimpleStorage(d.storage_unit_addresses, self._pool, d.storage_timeout, d.max_frame_bytes)
        elif d.storage_backend == "MooncakeStore":
            self.storage = MooncakeStore(d.store_node_addresses, self._pool, d.request_timeout, d.max_frame_bytes,
                                         d.hard_pin)
        else:
            raise InvalidArgumentError(f"backend.storage_backend: {d.storage_backend!r} is not supported by the Python "
                                       "client (SimpleStorage, MooncakeStore)")
        self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="tq-async")
        self._closed = False

    # ------------------------------------------------------------ plumbing
    def _ctl(self, type_: int, args: list, timeout: float | None = None):
        if self._closed:
            raise ClosedError("the client is closed")
        reply = self._pool.call(self.deployment.controller_address, type_, pack_meta(args), (),
                                timeout or self.deployment.request_timeout)
        return unpack_meta(reply.app_meta) if reply.app_meta else None

    async def _async(self, fn, *args, **kwargs):
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))

    def close(self) -> None:
        """Closes the connections; idempotent. The servers keep running."""
        if self._closed:
            return
        self._closed = True
        self._pool.close()
        self._executor.shutdown(wait=False, cancel_futures=True)

    # ------------------------------------------------------------ metadata
    def get_meta(self, data_fields: list[str], batch_size: int | None, partition_id: str, mode: str = "fetch",
                 task_name: str | None = None, sampling_config: dict[str, Any] | None = None,
                 token_budget: int | None = None) -> BatchMeta:
        """Metadata of a batch: ``fetch`` (sampled, consumed), ``force_fetch`` (all), ``insert`` (new).

        With ``token_budget`` (fetch only; upstream PR #123) the batch is filled up to that many
        tokens instead of ``batch_size`` samples: ready samples are taken in index order while the
        integers of their ``total_lengths`` custom_meta add up to at most the budget. A sample
        longer than the budget comes alone, one without ``total_lengths`` counts as the whole
        budget. ``batch_size`` may then be None, else it caps the number of samples. When fewer
        tokens are ready the batch holds what is ready, unless ``sampling_config`` has
        ``allow_underfill: False`` (then the fetch is served as one that found too few samples).
        """
        if mode not in _MODES:
            raise ValueError(f"mode must be one of {sorted(_MODES)}, got {mode!r}")
        _check_name(partition_id, "partition_id")
        if data_fields is not None:
            if isinstance(data_fields, str):
                data_fields = [data_fields]
            _check_names(data_fields, "data_fields")
        if mode == "fetch":
            if task_name is None:
                raise ValueError("task_name is required for mode 'fetch'")
            _check_name(task_name, "task_name")
        if token_budget is not None:
            if mode != "fetch":
                raise ValueError(f"token_budget is only for mode 'fetch', not {mode!r}")
            if isinstance(token_budget, bool) or not isinstance(token_budget, int) or token_budget <= 0:
                raise ValueError(f"token_budget must be a positive int, got {token_budget!r}")
        budget_without_size = token_budget is not None and batch_size is None
        if mode != "force_fetch" and not budget_without_size and (
                isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0):
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        cfg = dict(sampling_config or {})
        dp_rank = cfg.pop("dp_rank", None)
        batch_index = cfg.pop("batch_index", None)
        cfg.pop("task_name", None)
        cfg.pop("partition_id", None)
        check_value(cfg, "sampling_config")
        timeout_ns = None
        call_timeout = self.deployment.request_timeout
        if mode == "fetch":
            timeout_ns = int(self.deployment.fetch_timeout * 1e9)
            call_timeout += self.deployment.fetch_timeout
        req = [_MODES[mode], partition_id, list(data_fields) if data_fields is not None else None,
               task_name if mode == "fetch" else None, None if mode == "force_fetch" else batch_size,
               [dp_rank, batch_index, cfg], timeout_ns]
        if token_budget is not None:
            req.append(token_budget)  # the eighth element, sent only with a budget
        try:
            w = self._ctl(GET_METADATA, [req], call_timeout)
        except DeadlineExceeded as e:
            raise DeadlineExceeded(f"get_meta: not enough ready samples of {data_fields} in partition "
                                   f"'{partition_id}' for task '{task_name}' within {self.deployment.fetch_timeout} s "
                                   f"({e.message})") from None
        return BatchMeta.from_wire(w)

    def _with_generations(self, meta: BatchMeta) -> BatchMeta:
        """Hand-built metadata gets the current generations (GET_SAMPLE_META)."""
        if all(g != UNKNOWN_GENERATION for g in meta.generations):
            return meta
        meta = meta.copy()
        by_pid: dict[str, list[int]] = {}
        for i, (p, g) in enumerate(zip(meta.partition_ids, meta.generations)):
            if g == UNKNOWN_GENERATION:
                by_pid.setdefault(p, []).append(i)
        for pid, positions in by_pid.items():
            current = BatchMeta.from_wire(self._ctl(
                GET_SAMPLE_META, [pid, [meta.global_indexes[i] for i in positions], []]))
            gens = dict(zip(current.global_indexes, current.generations))
            for i in positions:
                gi = meta.global_indexes[i]
                if gi not in gens:
                    raise NotFoundError(f"sample {gi} of partition '{pid}' not found (it is no active sample of "
                                        "that partition)")
                meta.generations[i] = gens[gi]
        return meta

    # ------------------------------------------------------------ put
    def put(self, data, metadata: BatchMeta | None = None, partition_id: str | None = None,
            data_parser: Callable | None = None) -> BatchMeta:
        """Stores a batch; without ``metadata`` new samples are inserted into ``partition_id``."""
        data = batches.apply_data_parser(data, data_parser)  # runs here: Java units cannot run Python
        cols = batches.columns_of(data)
        for name in cols:
            _check_field_name(name)
        n = batches.row_count(data)
        if n == 0:
            raise ValueError("put of an empty batch")
        if metadata is None:
            if partition_id is None:
                raise ValueError("put needs metadata or a partition_id")
            metadata = self.get_meta(list(cols), n, partition_id, mode="insert")
        elif not isinstance(metadata, BatchMeta):
            raise TypeError(f"metadata must be a BatchMeta, got {type(metadata).__name__}")
        if metadata.size == 0:
            raise InvalidArgumentError("metadata cannot be empty for a put")
        if metadata.size != n:
            raise ShapeMismatchError(f"batch has {n} rows but the metadata has {metadata.size} samples")
        if len(set(metadata.global_indexes)) != n:
            raise InvalidArgumentError("the metadata names a global index more than once")
        meta = self._with_generations(metadata)
        self._store(meta, cols, check=True)
        self._push_tags(meta, replace=True)
        return metadata.add_fields(data) if metadata is meta else self._sync_back(metadata, meta, data)

    @staticmethod
    def _sync_back(original: BatchMeta, meta: BatchMeta, data) -> BatchMeta:
        original.generations = list(meta.generations)
        return original.add_fields(data)

    def _groups(self, meta: BatchMeta) -> list[tuple[str, list[int]]]:
        groups: dict[str, list[int]] = {}
        for i, p in enumerate(meta.partition_ids):
            groups.setdefault(p, []).append(i)
        return list(groups.items())

    def _store(self, meta: BatchMeta, cols, check: bool):
        """Checks, writes and notifies: CHECK_PUT, storage writes, UPDATE_PRODUCTION, FINISH."""
        d = self.deployment
        start = time.monotonic()
        groups = self._groups(meta)
        gis, gens = meta.global_indexes, meta.generations
        # Encode object values before anything is sent: a refused value changes nothing.
        for name, col in cols.items():
            if col.kind == batches.OBJECT:
                from . import values
                for i, v in enumerate(col.values):
                    values.encode_value(v, f"field '{name}' row {i}")
        schemas_by_group = []
        for pid, rows in groups:
            sub = {name: batches.schema_of(c, rows) for name, c in cols.items()}
            schemas_by_group.append(sub)
            if check:
                self._ctl(CHECK_PUT, [pid, schemas_to_wire(sub), [gis[r] for r in rows], [gens[r] for r in rows]])
        if isinstance(self.storage, SimpleStorage):
            deadline = start + d.storage_timeout
            parts = self.storage.put(gis, gens, cols, [rows for _, rows in groups], deadline)
            rejected_from = None
            try:
                for g, (pid, rows) in enumerate(groups):
                    rejected_from = g
                    self._ctl(UPDATE_PRODUCTION, [[pid, [gis[r] for r in rows], schemas_to_wire(schemas_by_group[g]),
                                                   None, [gens[r] for r in rows]]])
                rejected_from = None
            finally:
                if rejected_from is None:
                    self.storage.finish(parts, rollback=lambda part: False)
                else:
                    self.storage.finish(parts, rollback=lambda part: part[2] >= rejected_from)
            return
        backend = self.storage.put(gis, gens, cols, start + d.request_timeout)
        try:
            for g, (pid, rows) in enumerate(groups):
                records = {gis[r]: backend[r] for r in rows if backend[r]}
                self._ctl(UPDATE_PRODUCTION, [[pid, [gis[r] for r in rows], schemas_to_wire(schemas_by_group[g]),
                                               records or None, [gens[r] for r in rows]]])
        except StaleMetadataError:
            self._remove_cells(meta, cols)
            raise
        for r in range(meta.size):
            for f, v in backend[r].items():
                meta._custom_backend_meta[r][f] = v

    def _remove_cells(self, meta: BatchMeta, cols):
        m = meta.copy()
        m.field_schema = {name: batches.schema_of(c) for name, c in cols.items()}
        m._refresh()
        try:
            self.storage.clear(m)
        except TQError as e:
            logger.warning("could not remove the cells of a refused put: %s", e)

    def _push_tags(self, meta: BatchMeta, replace: bool):
        self._set_tags(meta.global_indexes, meta.partition_ids, meta.custom_meta, replace)

    def _set_tags(self, global_indexes, partition_ids, tags, replace: bool = False):
        """One SET_TAGS: the non-empty ``tags`` of each sample, merged into (or replacing) its tags."""
        by_pid: dict[str, dict[int, dict]] = {}
        for gi, pid, t in zip(global_indexes, partition_ids, tags):
            if t:
                by_pid.setdefault(pid, {})[gi] = t
        if by_pid:
            self._ctl(SET_TAGS, [["REPLACE" if replace else "MERGE", by_pid]])

    # ------------------------------------------------------------ get
    def get_data(self, metadata: BatchMeta):
        """Reads the fields of ``metadata``'s samples, in its order; the kind put is the kind got."""
        if not isinstance(metadata, BatchMeta):
            raise TypeError(f"metadata must be a BatchMeta, got {type(metadata).__name__}")
        if metadata.size == 0 or not metadata.field_names:
            return batches.make_result({}, metadata.size, {})
        for f in metadata.field_names:
            _check_field_name(f)
        meta = self._with_generations(metadata)
        try:
            cols = self.storage.get(meta, meta.field_names)
        except (NotFoundError, UnknownFieldError, ShapeMismatchError) as e:
            current = self._current_after(meta, e)
            cols = self.storage.get(current, current.field_names)
        kinds = {f: k for f, (k, _) in cols.items()}
        return batches.make_result({f: v for f, (_, v) in cols.items()}, meta.size, kinds,
                                   always_nested=self.deployment.always_nested)

    def _current_after(self, meta: BatchMeta, failure: TQError) -> BatchMeta:
        """After a failed read: STALE_METADATA for a cleared sample, else the current metadata."""
        current_parts = []
        for pid, rows in self._groups(meta):
            w = self._ctl(GET_SAMPLE_META, [pid, [meta.global_indexes[r] for r in rows], meta.field_names])
            cur = BatchMeta.from_wire(w)
            by_gi = {gi: i for i, gi in enumerate(cur.global_indexes)}
            for r in rows:
                gi = meta.global_indexes[r]
                if gi not in by_gi or cur.generations[by_gi[gi]] != meta.generations[r]:
                    raise StaleMetadataError(
                        f"sample {gi} (generation {meta.generations[r]}) of partition '{pid}' no longer exists: "
                        "its index was cleared since the metadata was made; fetch fresh metadata") from failure
            missing = [f for f in meta.field_names if f not in cur.field_schema]
            if missing:
                raise UnknownFieldError(f"fields {missing} are not stored for partition '{pid}'") from failure
            if not np.all(cur.production_status == 1):
                raise failure
            current_parts.append(cur.select_samples([by_gi[meta.global_indexes[r]] for r in rows]))
        if len(current_parts) == 1 and self._groups(meta)[0][1] == list(range(meta.size)):
            return current_parts[0]
        raise failure

    # ------------------------------------------------------------ tags, clears
    def set_custom_meta(self, metadata: BatchMeta) -> None:
        """Overwrites the per-sample tags (custom_meta) of the samples in the controller."""
        for i, t in enumerate(metadata.custom_meta):
            check_value(t, f"custom_meta[{i}]")
        self._push_tags(metadata, replace=True)

    def clear_partition(self, partition_id: str) -> None:
        """Removes a partition's data and metadata; unknown partitions are ignored."""
        _check_name(partition_id, "partition_id")
        w = self._ctl(GET_PARTITION_META, [partition_id])
        if w is None:
            return
        meta = BatchMeta.from_wire(w)
        if meta.size:
            # Marked first, so that no fetch hands out a sample whose cells are being removed.
            self._ctl(MARK_CLEARING, [_clear_request(meta)])
            self._clear_storage(meta)
        self._ctl(CLEAR_PARTITION, [partition_id])

    def _clear_storage(self, meta: BatchMeta):
        if self.storage.clears_by_field:
            meta = meta.copy()
            for pid in dict.fromkeys(meta.partition_ids):
                stats = self._ctl(PARTITION_STATISTICS, [pid])
                if stats:
                    for f in stats[7]:
                        meta.field_schema.setdefault(f, {"dtype": None, "shape": None, "is_nested": False,
                                                         "is_non_tensor": False})
            meta._refresh()
        self.storage.clear(meta)

    def clear_samples(self, metadata: BatchMeta) -> None:
        """Removes the samples of ``metadata``: their cells, then their metadata (and keys)."""
        if metadata.size == 0:
            return
        meta = self._with_generations(metadata)
        # Three steps: mark (no fetch hands them out any more), remove the cells, free the indexes.
        self._ctl(MARK_CLEARING, [_clear_request(meta)])
        self._clear_storage(meta)
        self._ctl(CLEAR_SAMPLES, [_clear_request(meta)])

    # ------------------------------------------------------------ status
    def get_consumption_status(self, task_name: str, partition_id: str):
        """``(LongTensor[N] indexes, Int8Tensor[N] consumed)``, or ``(None, None)``."""
        _check_name(task_name, "task_name")
        _check_name(partition_id, "partition_id")
        w = self._ctl(GET_CONSUMPTION, [partition_id, task_name])
        if w is None:
            return None, None
        _, _, indexes, consumed = w
        idx = torch.tensor(indexes, dtype=torch.long)
        done = set(consumed)
        return idx, torch.tensor([1 if i in done else 0 for i in indexes], dtype=torch.int8)

    def get_production_status(self, data_fields: list[str], partition_id: str):
        """``(LongTensor[N] indexes, Int8Tensor[N, F] produced)``, or ``(None, None)``."""
        if isinstance(data_fields, str):
            data_fields = [data_fields]
        _check_names(data_fields, "data_fields")
        _check_name(partition_id, "partition_id")
        w = self._ctl(GET_PRODUCTION, [partition_id, list(data_fields)])
        if w is None:
            return None, None
        _, fields, indexes, produced = w
        idx = torch.tensor(indexes, dtype=torch.long)
        out = torch.zeros((len(indexes), len(data_fields)), dtype=torch.int8)
        pos = {gi: i for i, gi in enumerate(indexes)}
        for j, f in enumerate(data_fields):
            if fields is not None and f in fields:
                for gi in produced[fields.index(f)]:
                    out[pos[gi], j] = 1
        return idx, out

    def check_consumption_status(self, task_name: str, partition_id: str) -> bool:
        _, consumed = self.get_consumption_status(task_name, partition_id)
        return consumed is not None and consumed.numel() > 0 and bool(torch.all(consumed == 1))

    def check_production_status(self, data_fields: list[str], partition_id: str) -> bool:
        _, produced = self.get_production_status(data_fields, partition_id)
        return produced is not None and produced.numel() > 0 and bool(torch.all(produced == 1))

    def reset_consumption(self, partition_id: str, task_name: str | None = None) -> bool:
        """Forgets what a task (None: every task) consumed in a partition.

        Returns whether anything was reset: True when some sample was marked consumed by the task
        (by any task, for None) and now is not; False for an unknown partition or task and when
        nothing had been consumed (upstream answers True in those cases too).
        """
        _check_name(partition_id, "partition_id")
        if task_name is not None:
            _check_name(task_name, "task_name")
        return bool(self._ctl(RESET_CONSUMPTION, [partition_id, task_name]))

    def get_partition_list(self) -> list[str]:
        return list(self._ctl(LIST_PARTITIONS, []) or [])

    # ------------------------------------------------------------ keys
    def kv_retrieve_meta(self, keys: list[str] | str, partition_id: str, create: bool = False) -> BatchMeta:
        """The samples of keys (created when ``create``); missing keys are left out."""
        if isinstance(keys, str):
            keys = [keys]
        _check_name(partition_id, "partition_id")
        _check_keys(keys)
        return BatchMeta.from_wire(self._ctl(RESOLVE_KEYS, [partition_id, list(keys), bool(create)]))

    def kv_retrieve_keys(self, global_indexes: list[int] | int, partition_id: str) -> list[str]:
        if isinstance(global_indexes, int):
            global_indexes = [global_indexes]
        _check_name(partition_id, "partition_id")
        return list(self._ctl(RESOLVE_INDEXES, [partition_id, [int(i) for i in global_indexes]]))

    def kv_list(self, partition_id: str | None = None) -> dict[str, dict[str, Any]]:
        if partition_id is not None:
            _check_name(partition_id, "partition_id")
        w = self._ctl(LIST_KEYS, [partition_id])
        listing = w[0] or {}
        return {pid: {k: (t or {}) for k, t in keys.items()} for pid, keys in listing.items()}

    def kv_put_batch(self, keys: list[str], partition_id: str, data, tags: list[dict] | None) -> BatchMeta:
        """The key-value put: RESOLVE_KEYS_FOR_PUT, store, notify, tags (MERGE)."""
        _check_name(partition_id, "partition_id")
        _check_keys(keys)
        if tags is not None:
            for i, t in enumerate(tags):
                if t is not None and not isinstance(t, dict):
                    raise InvalidArgumentError(f"tags[{i}] must be a dict, got {type(t).__name__}")
                check_value(t, f"tags[{i}]")
        if data is None:
            meta = self.kv_retrieve_meta(keys, partition_id, create=True)
        else:
            cols = batches.columns_of(data)
            for name in cols:
                _check_field_name(name)
            from . import values
            for name, col in cols.items():
                if col.kind == batches.OBJECT:
                    for i, v in enumerate(col.values):
                        values.encode_value(v, f"field '{name}' row {i}")
            schema = batches.schema_of_columns(cols)
            w, created = self._ctl(RESOLVE_KEYS_FOR_PUT, [partition_id, list(keys), schemas_to_wire(schema), len(keys)])
            meta = BatchMeta.from_wire(w)
            try:
                if meta.size != len(keys):
                    raise RuntimeError(f"Retrieved BatchMeta size {meta.size} does not match with input `keys` "
                                       f"size {len(keys)}!")
                self._store(meta, cols, check=False)
            except BaseException:
                if created:
                    made = set(created)
                    gone = meta.select_samples([i for i, gi in enumerate(meta.global_indexes) if gi in made])
                    try:
                        gone.field_schema = dict(schema)
                        gone._refresh()
                        self.storage.clear(gone) if isinstance(self.storage, MooncakeStore) else None
                        self._ctl(CLEAR_SAMPLES, [_clear_request(gone)])
                    except TQError as e2:
                        logger.warning("could not remove the keys of a refused put: %s", e2)
                raise
            meta.field_schema.update(schema)
            meta.production_status[:] = 1
            meta._refresh()
        if tags is not None:
            meta.update_custom_meta([t or {} for t in tags])
            self._set_tags(meta.global_indexes, [partition_id] * meta.size, tags)
        return meta

    # ------------------------------------------------------------ storage manager, checkpoints
    def initialize_storage_manager(self, manager_type: str, config: dict[str, Any] | None = None) -> None:
        """Upstream's storage set-up. Here the storage comes from the deployment, so this only checks
        that ``manager_type`` names the deployment's backend (``SimpleStorage``, ``MooncakeStore``;
        upstream's manager names ``AsyncSimpleStorageManager`` / ``MooncakeStorageManager`` too)."""
        aliases = {"AsyncSimpleStorageManager": "SimpleStorage", "SimpleStorageManager": "SimpleStorage",
                   "MooncakeStorageManager": "MooncakeStore", "KVStorageManager": "MooncakeStore"}
        name = aliases.get(manager_type, manager_type)
        if name != self.deployment.storage_backend:
            raise InvalidArgumentError(f"manager_type {manager_type!r} is not this deployment's backend "
                                       f"{self.deployment.storage_backend!r}")

    def save_checkpoint(self, checkpoint_dir: str, include_storage: bool = True,
                        metadata: dict[str, Any] | None = None) -> None:
        """Saves the whole deployment (docs/CHECKPOINT.md) into ``checkpoint_dir``; the directory must be
        the same path for this process and every storage server. SimpleStorage is always saved (its
        units hold the data only in memory), MooncakeStore only with ``include_storage``. ``metadata``
        (a JSON-encodable dict) is saved in the MANIFEST and returned by :meth:`load_checkpoint`."""
        from . import checkpoint
        checkpoint.save(self, checkpoint_dir, include_storage, metadata)

    def load_checkpoint(self, checkpoint_dir: str) -> dict[str, Any]:
        """Replaces the deployment's state by a checkpoint, validated first; returns its user metadata."""
        from . import checkpoint
        return checkpoint.load(self, checkpoint_dir)

    def save_storage_checkpoint(self, checkpoint_dir: str) -> None:
        """Storage alone cannot be saved apart from the controller state it belongs to: use
        :meth:`save_checkpoint`. Raises :class:`UnsupportedOperationError` (also a NotImplementedError)."""
        raise UnsupportedOperationError("storage is saved with the controller state: use save_checkpoint(dir)")

    def load_storage_checkpoint(self, checkpoint_dir: str) -> None:
        """See :meth:`save_storage_checkpoint`: use :meth:`load_checkpoint`."""
        raise UnsupportedOperationError("storage is loaded with the controller state: use load_checkpoint(dir)")

    # ------------------------------------------------------------ checkpoints (controller state)
    def save_controller_checkpoint(self, path: str) -> None:
        """Writes the controller state (``controller_state.msgpack`` encoding) to a file."""
        state = self._ctl(SNAPSHOT_STATE, [])
        with open(path, "wb") as f:
            f.write(state)

    def load_controller_checkpoint(self, path: str) -> None:
        with open(path, "rb") as f:
            self._ctl(RESTORE_STATE, [f.read()])

    # ------------------------------------------------------------ more
    def controller_id(self) -> str:
        return self._ctl(CONTROLLER_ID, [])

    def statistics(self):
        return self._ctl(STATISTICS, [])


def _check_keys(keys):
    if not isinstance(keys, (list, tuple)):
        raise InvalidArgumentError(f"keys must be a list of str, got {type(keys).__name__}")
    if not keys:
        raise InvalidArgumentError("keys is empty")
    _check_names(keys, "keys")
    if len(set(keys)) != len(keys):
        seen, dup = set(), []
        for k in keys:
            if k in seen:
                dup.append(k)
            seen.add(k)
        raise DuplicateKeyError(f"keys contain duplicates: {dup}")


def _clear_request(meta: BatchMeta) -> list:
    """The ClearSamplesRequest of docs/PROTOCOL.md for the samples of ``meta``."""
    return [list(meta.global_indexes), list(meta.partition_ids), True, list(meta.generations)]


def _make_async(name: str):
    sync = getattr(TransferQueueClient, name)

    @functools.wraps(sync)
    async def twin(self, *args, **kwargs):
        return await self._async(sync, self, *args, **kwargs)

    twin.__name__ = "async_" + name
    twin.__qualname__ = "TransferQueueClient.async_" + name
    twin.__doc__ = f"Asynchronous :meth:`{name}` (same arguments)."
    return twin


for _name in ["get_meta", "put", "get_data", "set_custom_meta", "clear_partition", "clear_samples",
              "get_consumption_status", "get_production_status", "check_consumption_status",
              "check_production_status", "reset_consumption", "get_partition_list", "kv_retrieve_meta",
              "kv_retrieve_keys", "kv_list", "save_controller_checkpoint", "load_controller_checkpoint",
              "save_storage_checkpoint", "load_storage_checkpoint", "save_checkpoint", "load_checkpoint"]:
    setattr(TransferQueueClient, "async_" + _name, _make_async(_name))


def new_client_id() -> str:
    return "TQ_CLIENT_" + uuid.uuid4().hex[:8]
