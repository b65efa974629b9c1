"""Upstream's module-level API: ``init``/``close``/``get_client`` and the key-value calls."""

from __future__ import annotations

import atexit
import logging
import os
import sys
import threading
import warnings
from typing import Any, Callable

import torch

from . import batch as batches
from . import config as configs
from .client import Deployment, TransferQueueClient, _check_keys, _check_name, new_client_id
from .errors import ClosedError, InvalidArgumentError, InvalidConfigurationError, StaleMetadataError, UnknownKeyError
from .metadata import KVBatchMeta

logger = logging.getLogger(__name__)

_lock = threading.RLock()
_client: TransferQueueClient | None = None
_system = None
_conf: dict | None = None
_pid: int | None = None  # the process that initialised: a forked child must init on its own


def _forget_if_forked() -> None:
    """In a forked child (a DataLoader worker, a multiprocessing process) the parent's client and
    servers are not this process's: forget them without closing anything (closing would cut the
    parent's connections or stop its servers). Called with ``_lock`` held."""
    global _client, _system, _conf, _pid
    if _pid is not None and _pid != os.getpid():
        _client = _system = _conf = _pid = None


def _deployment(conf: dict) -> Deployment:
    net, py = conf["network"], conf["python"]
    backend = conf["backend"]["storage_backend"]
    hard_pin = conf["backend"]["MooncakeStore"].get("hard_pin")
    return Deployment(
        controller_address=net["controller_address"],
        storage_backend=backend,
        storage_unit_addresses=list(net.get("storage_unit_addresses") or []),
        store_node_addresses=list(net.get("store_node_addresses") or []),
        auth_token=net.get("auth_token"),
        request_timeout=configs.seconds(conf["client"]["request_timeout"], "client.request_timeout"),
        storage_timeout=configs.seconds(conf["backend"]["SimpleStorage"]["send_recv_timeout"],
                                        "backend.SimpleStorage.send_recv_timeout"),
        connect_timeout=configs.seconds(net.get("connect_timeout", "10s"), "network.connect_timeout"),
        fetch_timeout=configs.seconds(conf["controller"]["get_metadata_timeout"], "controller.get_metadata_timeout"),
        polling_mode=bool(conf["controller"].get("polling_mode")),
        max_frame_bytes=int(net.get("max_frame_bytes") or (1 << 30)),
        hard_pin=True if hard_pin is None else bool(hard_pin),
        connections_per_peer=int(py.get("connections_per_peer", 2)),
        always_nested=bool(py.get("always_nested")),
        strict_missing_keys=bool(py.get("strict_missing_keys")),
        shared_memory=_flag(net.get("shared_memory", True), "network.shared_memory"),
        shared_memory_min_bytes=_positive(net.get("shared_memory_min_bytes", 65536), "network.shared_memory_min_bytes"),
    )


def _flag(value, key: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise InvalidConfigurationError(f"{key}: {value!r} is not true or false")


def _positive(value, key: str) -> int:
    try:
        n = int(value)
    except (TypeError, ValueError):
        n = 0
    if isinstance(value, bool) or n < 1:
        raise InvalidConfigurationError(f"{key}: {value!r} is not a positive number of bytes")
    return n


def _on_ray(conf: dict) -> bool:
    """Whether the roles go on Ray: ``python.placement`` is ``ray``, or ``auto`` with Ray connected in
    this process (``auto`` never imports Ray itself)."""
    mode = conf["python"].get("placement", "auto")
    if mode not in ("auto", "ray", "local"):
        raise InvalidConfigurationError(f"python.placement: {mode!r} (auto, ray, local)")
    ray = sys.modules.get("ray")
    return mode == "ray" or (mode == "auto" and ray is not None and ray.is_initialized())


def init(conf=None):
    """Connects to a deployment, or starts one when the configuration names no addresses.

    ``conf``: upstream's config dict or ``DictConfig``, or a path to a ``tq.yaml``; the ``network``
    section and the ``TQ_*`` environment variables of the Java servers apply. Without addresses the
    roles start as child processes, or, with Ray connected (``python.placement``), as Ray actors;
    then any process of the Ray job attaches with a bare ``init()`` (see ``ray_placement``). Returns
    the merged configuration (with the addresses of the roles). A second call while initialised
    returns the current configuration.
    """
    global _client, _system, _conf, _pid
    with _lock:
        _forget_if_forked()
        if _client is not None:
            return _conf
        merged = configs.load(conf)
        system = None
        if not configs.has_addresses(merged) and _on_ray(merged):
            from . import ray_placement
            system, merged = ray_placement.acquire(merged)  # system: None when attached to another's
        elif not configs.has_addresses(merged):
            from .launcher import LocalSystem
            if merged["metrics"].get("enabled") and not merged["metrics"].get("port"):
                from .launcher import _free_ports
                merged["metrics"]["port"] = _free_ports(1, "127.0.0.1")[0]
            system = LocalSystem(merged)
            merged["network"].update(system.start())
        try:
            client = TransferQueueClient(new_client_id(), _deployment(merged))
            client.get_partition_list()  # fails now if the controller cannot be reached
        except BaseException:
            if system is not None:
                system.stop()
            raise
        if merged["python"].get("reuse_freed_memory"):
            from .memory import retain_freed_memory
            retain_freed_memory()
        from . import shm
        shm.set_views(merged["python"].get("shared_memory_views", False))
        _client, _system, _conf, _pid = client, system, merged, os.getpid()
        return merged


def close() -> None:
    """Closes the client and stops the roles ``init`` started; idempotent."""
    global _client, _system, _conf
    with _lock:
        _forget_if_forked()
        client, system = _client, _system
        _client = _system = _conf = None
    if client is not None:
        client.close()
    if system is not None:
        system.stop()


atexit.register(close)


def get_client() -> TransferQueueClient:
    """The process-wide client of :func:`init`."""
    with _lock:
        _forget_if_forked()
        if _client is None:
            raise ClosedError("TransferQueue is not initialised: call transferqueue_jvm.init() first")
        return _client


def get_metrics_endpoint() -> str | None:
    """``host:port`` of the controller's Prometheus endpoint, or None when metrics are off."""
    with _lock:
        if _conf is None or not _conf["metrics"].get("enabled"):
            return None
        host = _conf["network"].get("bind_host") or "127.0.0.1"
        return f"{host}:{_conf['metrics']['port']}" if _conf["metrics"].get("port") else None


# ---------------------------------------------------------------- key-value API

def _single_row(fields: dict) -> dict:
    batch: dict[str, Any] = {}
    for name, value in fields.items():
        if isinstance(value, torch.Tensor):
            if value.is_nested:
                raise ValueError("Please use (async)kv_batch_put for batch operation")
            batch[name] = value.unsqueeze(0)
        else:
            try:
                import numpy as np
                if isinstance(value, np.ndarray) and value.dtype != object:
                    batch[name] = torch.from_numpy(value).unsqueeze(0)
                    continue
            except ImportError:
                pass
            batch[name] = [value]
    return batch


def kv_put(key: str, partition_id: str, fields=None, tag: dict[str, Any] | None = None,
           data_parser: Callable | None = None) -> KVBatchMeta:
    """Puts the fields and/or the tag of one key (created when missing).

    ``data_parser`` (upstream: run inside the storage units) runs here, in the calling process,
    before anything is sent: the Java storage units cannot run Python code. It gets the dict
    ``{field: batched values}`` and must change the values in place, keeping keys and lengths.
    """
    if fields is None and tag is None:
        raise ValueError("Please provide at least one parameter of fields or tag.")
    if fields is not None:
        if isinstance(fields, dict):
            fields = _single_row(fields)
        elif batches.TensorDict is None or not isinstance(fields, batches.TensorDict):
            raise ValueError("`fields` can only be dict or TensorDict")
        fields = batches.apply_data_parser(fields, data_parser)
    _check_name(key, "key")
    meta = get_client().kv_put_batch([key], partition_id, fields, None if tag is None else [tag])
    return KVBatchMeta.of([key], meta, partition_id, meta.field_names)


def kv_batch_put(keys: list[str], partition_id: str, fields=None, tags: list[dict[str, Any]] | None = None,
                 data_parser: Callable | None = None) -> KVBatchMeta:
    """Puts the fields and/or tags of several keys in one call (``data_parser``: see :func:`kv_put`)."""
    if fields is None and tags is None:
        raise ValueError("Please provide at least one parameter of `fields` or `tags`.")
    if not isinstance(keys, (list, tuple)):
        raise InvalidArgumentError(f"keys must be a list of str, got {type(keys).__name__}")
    if fields is not None:
        n = batches.row_count(fields)
        if n != len(keys):
            raise InvalidArgumentError(f"`keys` with length {len(keys)} does not match the `fields` TensorDict with "
                             f"batch_size {n}")
        fields = batches.apply_data_parser(fields, data_parser)
    if tags is not None and len(tags) != len(keys):
        raise InvalidArgumentError(f"keys with length {len(keys)} does not match length of tags {len(tags)}")
    meta = get_client().kv_put_batch(list(keys), partition_id, fields, tags)
    return KVBatchMeta.of(list(keys), meta, partition_id, meta.field_names)


def kv_batch_get(keys: list[str] | str, partition_id: str, select_fields: list[str] | str | None = None,
                 strict: bool | None = None):
    """Reads keys in order. Missing keys are dropped with a warning (``strict=True``, or the option
    ``python.strict_missing_keys``: :class:`UnknownKeyError`); none found is
    ``UnknownKeyError("keys or partition were not found!")``, a ``ValueError`` as upstream's."""
    return _read(keys, partition_id, select_fields, strict, None)


def _read(keys, partition_id, select_fields, strict, descriptor: KVBatchMeta | None):
    client = get_client()
    if isinstance(keys, str):
        keys = [keys]
    _check_keys(keys)
    _check_name(partition_id, "partition_id")
    meta = client.kv_retrieve_meta(keys, partition_id, create=False)
    found = keys if meta.size == len(keys) else None
    if 0 < meta.size < len(keys):
        found = client.kv_retrieve_keys(meta.global_indexes, partition_id)
    if descriptor is not None and meta.size:
        _require_same_samples(descriptor, meta, found)
    if meta.size == 0:
        raise UnknownKeyError("keys or partition were not found!")
    if meta.size < len(keys):
        present = set(found)
        missing = [k for k in keys if k not in present]
        if strict if strict is not None else client.deployment.strict_missing_keys:
            raise UnknownKeyError(f"keys not found in partition '{partition_id}': {missing}")
        warnings.warn(f"kv_batch_get: keys not found in partition '{partition_id}' were dropped: {missing}",
                      stacklevel=3)
        logger.warning("kv_batch_get: dropped missing keys %s of partition '%s'", missing, partition_id)
    if select_fields is not None:
        fields = [select_fields] if isinstance(select_fields, str) else list(select_fields)
        unknown = [f for f in fields if f not in meta.field_schema]
        if unknown:
            raise ValueError(f"Some fields are not ready in all the requested keys! fields {unknown} are not "
                             f"produced for every requested key (available: {meta.field_names})")
        meta = meta.select_fields(fields)
    if not meta.field_names or not meta.is_ready:
        raise ValueError("Some fields are not ready in all the requested keys!")
    return client.get_data(meta)


def _require_same_samples(descriptor: KVBatchMeta, resolved, found: list[str]) -> None:
    """Refuses a read through a descriptor one of whose keys names another sample now (the key was
    cleared and written again since): its global index or generation differs."""
    position = {k: i for i, k in enumerate(descriptor.keys)}
    stale = []
    for r, key in enumerate(found):
        i = position.get(key)
        if i is not None and descriptor.knows_sample(i) and (
                descriptor.global_indexes[i] != resolved.global_indexes[r]
                or descriptor.generations[i] != resolved.generations[r]):
            stale.append(key)
    if stale:
        raise StaleMetadataError(f"keys {stale} of partition '{descriptor.partition_id}' were cleared and written "
                                 "again since the descriptor was made; read them by key or with a fresh descriptor")


def kv_batch_get_by_meta(meta: KVBatchMeta, select_fields: list[str] | str | None = None, strict: bool | None = None):
    """Reads the keys of a ``KVBatchMeta``; ``select_fields`` must be among ``meta.fields``. A key whose
    sample is not the one the descriptor names any more is :class:`StaleMetadataError`."""
    if not isinstance(meta, KVBatchMeta):
        raise TypeError(f"meta must be a KVBatchMeta, got {type(meta).__name__}")
    if meta.partition_id is None:
        raise ValueError("Must provide partition_id in the input KVBatchMeta.")
    if select_fields is not None:
        fields = [select_fields] if isinstance(select_fields, str) else list(select_fields)
        if meta.fields is None or any(f not in meta.fields for f in fields):
            raise ValueError(f"Some fields assigned in select_fields not found in the metadata. Assigned: {fields}; "
                             f"Fields in KVBatchMeta: {meta.fields}.")
    else:
        fields = meta.fields
    return _read(meta.keys, meta.partition_id, fields, strict, meta)


def kv_list(partition_id: str | None = None) -> dict[str, dict[str, Any]]:
    """``{partition: {key: tags}}`` of one or every partition."""
    return get_client().kv_list(partition_id)


def kv_clear(keys: list[str] | str, partition_id: str) -> None:
    """Removes keys (their data, tags and status); unknown keys are ignored."""
    if isinstance(keys, str):
        keys = [keys]
    client = get_client()
    meta = client.kv_retrieve_meta(keys, partition_id, create=False)
    if meta.size > 0:
        client.clear_samples(meta)


def save_checkpoint(checkpoint_dir, *, include_storage: bool = True, metadata: dict[str, Any] | None = None) -> None:
    """Saves the whole system into ``checkpoint_dir`` (docs/CHECKPOINT.md; ``metadata`` is saved in the
    MANIFEST and returned by :func:`load_checkpoint`). The directory must be the same path for this
    process and every server."""
    get_client().save_checkpoint(str(checkpoint_dir), include_storage, metadata)


def load_checkpoint(checkpoint_dir) -> dict[str, Any]:
    """Replaces the system's state by the checkpoint in ``checkpoint_dir`` (validated first); returns
    the ``metadata`` saved with it (empty for none)."""
    return get_client().load_checkpoint(str(checkpoint_dir))


async def _run(fn, *args, **kwargs):
    return await get_client()._async(fn, *args, **kwargs)


async def async_save_checkpoint(checkpoint_dir, *, include_storage=True, metadata=None) -> None:
    return await _run(get_client().save_checkpoint, str(checkpoint_dir), include_storage, metadata)


async def async_load_checkpoint(checkpoint_dir) -> dict[str, Any]:
    return await _run(get_client().load_checkpoint, str(checkpoint_dir))


async def async_kv_put(key, partition_id, fields=None, tag=None, data_parser=None) -> KVBatchMeta:
    return await _run(kv_put, key, partition_id, fields, tag, data_parser)


async def async_kv_batch_put(keys, partition_id, fields=None, tags=None, data_parser=None) -> KVBatchMeta:
    return await _run(kv_batch_put, keys, partition_id, fields, tags, data_parser)


async def async_kv_batch_get(keys, partition_id, select_fields=None, strict=None):
    return await _run(kv_batch_get, keys, partition_id, select_fields, strict)


async def async_kv_batch_get_by_meta(meta, select_fields=None, strict=None):
    return await _run(kv_batch_get_by_meta, meta, select_fields, strict)


async def async_kv_list(partition_id=None):
    return await _run(kv_list, partition_id)


async def async_kv_clear(keys, partition_id) -> None:
    return await _run(kv_clear, keys, partition_id)
