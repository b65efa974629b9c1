"""Upstream's streaming dataloader: ``StreamingDataset`` and ``StreamingDataLoader``.

A :class:`StreamingDataset` is a torch ``IterableDataset`` for one data-parallel group: it asks the
controller for global batches of a partition through the configured sampler, reads their data and
yields ``(batch, meta)`` micro-batches as soon as samples are ready. :class:`StreamingDataLoader`
is a torch ``DataLoader`` around it with upstream's defaults (no re-batching, identity collate)::

    conf = tq.init({"controller": {"sampler": "RankAwareSampler"}})
    dataset = StreamingDataset(conf, batch_size=8, micro_batch_size=2, data_fields=["input_ids"],
                               partition_id="train", task_name="update_actor", dp_rank=dp_group,
                               should_check_consumption_status=True)
    for batch, meta in StreamingDataLoader(dataset):
        ...

Fetching (as upstream): global batch ``k`` is requested in ``fetch`` mode with
``sampling_config = {dp_rank, task_name, batch_index: k, partition_id}``. With the controller's
``RankAwareSampler`` every replica (rank) of one data-parallel group, i.e. every dataset with the
same ``dp_rank``, receives the same samples for the same ``k`` (the first asker samples, the others
are served from the sampler's cache), and different groups receive disjoint samples. The dataset's
own client does not wait at the controller: a batch that cannot be served yet is asked for again
after ``poll_interval`` seconds (default: the configuration's ``client.empty_batch_sleep_interval``,
upstream's ``TQ_STREAMING_DATASET_EMPTY_BATCH_SLEEP_INTERVAL``, 1 s).

Guarantees beyond upstream (as the Java ``StreamingLoader``):

* **No micro-batch twice.** In a DataLoader with ``num_workers = W`` worker ``w`` fetches the batch
  indexes ``w, w + W, w + 2W, ...`` (upstream's workers all start at index 0, which a caching
  sampler answers with the same batch in every worker). Micro-batches of consecutive rows carry the
  metadata of exactly those rows (upstream's chunking pairs rows and metadata of different sizes
  when the batch is not a multiple of the micro-batch size).
* **Termination** (``should_check_consumption_status=True``): the iteration ends when a fetch finds
  nothing although the task had consumed every sample of the partition *before* that fetch began.
  Checking first means that a replica lagging behind its group still receives every batch its group
  was assigned (from the sampler's cache) before it stops. A producer that writes a partition in
  several puts needs ``controller.prealloc_sample_num`` (upstream's ``TQ_PRE_ALLOC_SAMPLE_NUM``), or
  ``wait_for_producer_done=True`` together with :func:`mark_producer_done` (the tag is the Java
  ``StreamingLoader``'s, so Java and Python producers and consumers mix).

There is no ``__len__`` (as upstream): the number of batches is known only when the stream ends.
As upstream, the dataset keeps every batch it fetched (``buffer``, replayed after ``reset()``) until
``step()`` moves it to another partition: a long stream over one partition should be stepped.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Iterable, Iterator

import torch
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

from .client import TransferQueueClient, _check_name, _check_names, new_client_id
from .errors import DeadlineExceeded, UnknownPartitionError
from .metadata import BatchMeta

PRODUCER_DONE_TAG = "tq_producer_done"
"""The tag :func:`mark_producer_done` sets and ``wait_for_producer_done`` looks for."""

__all__ = ["StreamingDataset", "StreamingDataLoader", "default_fetch_batch_fn", "chunk_batch_fn",
           "mark_producer_done", "PRODUCER_DONE_TAG"]


def _deployment_of(config):
    """The deployment a dataset connects to and the merged configuration: from ``config``, or from
    the current :func:`init`."""
    from . import config as configs
    from . import interface
    if config is None:
        with interface._lock:
            config = interface._conf
        if config is None:
            raise ValueError("StreamingDataset: config is None and transferqueue_jvm is not initialised; pass the "
                             "configuration tq.init() returned")
    merged = configs.load(config)
    if not configs.has_addresses(merged):
        raise ValueError("StreamingDataset: the config names no controller address "
                         "(network.controller_address); pass the configuration tq.init() returned")
    deployment = interface._deployment(merged)
    deployment.fetch_timeout = 0.0  # the dataset polls; it never parks a request at the controller
    return deployment, merged


class StreamingDataset(IterableDataset):
    """The micro-batches of one data-parallel group, streamed from a partition.

    Args:
        config: the configuration ``tq.init()`` returned (or any config naming the controller's
            address); None: the configuration of the current ``tq.init()``.
        batch_size: samples per fetch (a global batch), at least 1.
        micro_batch_size: rows per yielded micro-batch, 1 to ``batch_size``; the last micro-batch
            of a batch is smaller when the batch is not a multiple.
        data_fields: the fields to read; a sample is fetched when all of them are produced.
        partition_id: the partition to read.
        task_name: the consuming task, the identity of consumption tracking.
        dp_rank: the data-parallel group (upstream's name): datasets with the same ``dp_rank``
            receive identical batches under ``RankAwareSampler``.
        should_check_consumption_status: False (default): an infinite stream that polls for new
            data; True: end when the partition is consumed (see the module documentation).
        fetch_batch_fn: ``fn(tq_client, data_fields, batch_size, partition_id, task_name,
            sampling_config, batch_index) -> (batch or None, BatchMeta)``; default
            :func:`default_fetch_batch_fn`.
        process_batch_fn: ``fn(batch, meta, micro_batch_size=...) -> iterable of (batch, meta)``;
            default :func:`chunk_batch_fn`.
        poll_interval: seconds to wait after an empty fetch; default
            ``client.empty_batch_sleep_interval`` of the configuration (1 s; environment variable
            ``TQ_STREAMING_DATASET_EMPTY_BATCH_SLEEP_INTERVAL``).
        wait_for_producer_done: with ``should_check_consumption_status``, end only once some
            sample of the partition carries the tag set by :func:`mark_producer_done`.

    Raises:
        ValueError: for an invalid argument, naming it and its value.
    """

    def __init__(self, config, batch_size: int, micro_batch_size: int, data_fields: list[str], partition_id: str,
                 task_name: str, dp_rank: int, should_check_consumption_status: bool = False,
                 fetch_batch_fn: Callable | None = None, process_batch_fn: Callable | None = None, *,
                 poll_interval: float | None = None, wait_for_producer_done: bool = False):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")
        if (not isinstance(micro_batch_size, int) or isinstance(micro_batch_size, bool) or micro_batch_size < 1
                or micro_batch_size > batch_size):
            raise ValueError(f"micro_batch_size must be an int from 1 to batch_size {batch_size}, "
                             f"got {micro_batch_size!r}")
        if isinstance(data_fields, str):
            data_fields = [data_fields]
        if not isinstance(data_fields, (list, tuple)) or len(data_fields) < 1:
            raise ValueError(f"data_fields must be a list with at least one field name, got {data_fields!r}")
        _check_names(list(data_fields), "data_fields")
        _check_name(partition_id, "partition_id")
        _check_name(task_name, "task_name")
        if not isinstance(dp_rank, int) or isinstance(dp_rank, bool) or dp_rank < 0:
            raise ValueError(f"dp_rank must be an int >= 0, got {dp_rank!r}")
        for name, fn in (("fetch_batch_fn", fetch_batch_fn), ("process_batch_fn", process_batch_fn)):
            if fn is not None and not callable(fn):
                raise ValueError(f"{name} must be callable, got {type(fn).__name__}")
        self._deployment, conf = _deployment_of(config)
        if poll_interval is None:
            from .config import seconds
            poll_interval = seconds(conf["client"]["empty_batch_sleep_interval"], "client.empty_batch_sleep_interval")
        if not isinstance(poll_interval, (int, float)) or not poll_interval > 0:
            raise ValueError(f"poll_interval must be a positive number of seconds, got {poll_interval!r}")
        super().__init__()
        self.config = config
        self.batch_size = batch_size
        self.micro_batch_size = micro_batch_size
        self.data_fields = list(data_fields)
        self.partition_id = partition_id
        self.task_name = task_name
        self.dp_rank = dp_rank
        self.should_check_consumption_status = bool(should_check_consumption_status)
        self.wait_for_producer_done = bool(wait_for_producer_done)
        self.fetch_batch_fn = fetch_batch_fn or default_fetch_batch_fn
        self.process_batch_fn = process_batch_fn or chunk_batch_fn
        self.poll_interval = float(poll_interval)
        self.sampling_config: dict[str, Any] = {"dp_rank": dp_rank, "task_name": task_name}
        # The fetched (batch, meta) of this process, in fetch order: reset() replays them.
        self.buffer: list[tuple[Any, BatchMeta]] = []
        self.batch_index = 0
        self._tq_client: TransferQueueClient | None = None
        self._client_pid: int | None = None
        self._iterating = 0  # iterations in progress in this process; the last one to end closes the client

    # ------------------------------------------------------------ clients per process
    def _client(self) -> TransferQueueClient:
        """This process's client: a DataLoader worker (forked or spawned) makes its own."""
        if self._tq_client is None or self._client_pid != os.getpid():
            self._tq_client = TransferQueueClient(f"StreamingDataset_{new_client_id()}", self._deployment)
            self._client_pid = os.getpid()
        return self._tq_client

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_tq_client"] = None  # connections do not cross processes
        state["_client_pid"] = None
        state["_iterating"] = 0
        return state

    def close(self) -> None:
        """Closes this process's client (connections only; the servers keep running)."""
        if self._tq_client is not None and self._client_pid == os.getpid():
            self._tq_client.close()
        self._tq_client = None

    # ------------------------------------------------------------ iteration
    def __iter__(self) -> Iterator[tuple[Any, BatchMeta]]:
        """Yields ``(batch, meta)`` micro-batches: first the buffered batches from ``batch_index``
        on, then newly fetched ones; see the class documentation for when it ends. The dataset's
        connections close when the iteration ends or is abandoned (the generator is closed)."""
        client = self._client()
        self._iterating += 1
        try:
            yield from self._stream(client)
        finally:
            self._iterating -= 1
            if self._iterating == 0:
                self.close()  # the next iteration connects again

    def _stream(self, client: TransferQueueClient) -> Iterator[tuple[Any, BatchMeta]]:
        worker = get_worker_info()
        stride, offset = (worker.num_workers, worker.id) if worker is not None else (1, 0)
        while True:
            if self.batch_index < len(self.buffer):
                data, meta = self.buffer[self.batch_index]
                self.batch_index += 1
                yield from self.process_batch_fn(data, meta, micro_batch_size=self.micro_batch_size)
                continue
            exhausted_before = self.should_check_consumption_status and self._exhausted(client)
            try:
                data, meta = self.fetch_batch_fn(
                    tq_client=client, data_fields=self.data_fields, batch_size=self.batch_size,
                    partition_id=self.partition_id, task_name=self.task_name,
                    sampling_config=dict(self.sampling_config), batch_index=offset + stride * self.batch_index)
            except DeadlineExceeded:
                data, meta = None, None  # a controller answering a fetch only when served
            if data is not None and meta is not None and meta.size > 0:
                self.buffer.append((data, meta))
                continue
            if exhausted_before:
                return
            time.sleep(self.poll_interval)

    def _exhausted(self, client: TransferQueueClient) -> bool:
        try:
            if not client.check_consumption_status(self.task_name, self.partition_id):
                return False
        except UnknownPartitionError:
            return False  # the producer has not created it yet
        if not self.wait_for_producer_done:
            return True
        try:
            everything = client.get_meta([], 0, self.partition_id, mode="force_fetch")
        except UnknownPartitionError:
            return False
        return any(tags.get(PRODUCER_DONE_TAG) is True for tags in everything.custom_meta)

    def reset(self) -> None:
        """Restarts at the first buffered batch: the next iteration replays the fetched batches
        (in this process; a DataLoader worker keeps its own buffer), then fetches new ones."""
        self.batch_index = 0

    def step(self, partition_id: str) -> None:
        """Switches to another partition (the next training step): empties the buffer, restarts."""
        _check_name(partition_id, "partition_id")
        self.buffer = []
        self.batch_index = 0
        self.partition_id = partition_id

    def __repr__(self) -> str:
        return (f"StreamingDataset(partition_id={self.partition_id!r}, task_name={self.task_name!r}, "
                f"dp_rank={self.dp_rank}, batch_size={self.batch_size}, micro_batch_size={self.micro_batch_size})")


def default_fetch_batch_fn(tq_client: TransferQueueClient, data_fields: list[str], batch_size: int,
                           partition_id: str, task_name: str, sampling_config: dict[str, Any],
                           batch_index: int) -> tuple[Any, BatchMeta]:
    """Fetches global batch ``batch_index``: ``get_meta`` with ``sampling_config`` plus
    ``batch_index`` and ``partition_id``, then ``get_data``. Returns ``(None, meta)`` when the
    controller cannot serve the batch yet."""
    config = {**sampling_config, "batch_index": batch_index, "partition_id": partition_id}
    try:
        meta = tq_client.get_meta(data_fields=data_fields, batch_size=batch_size, partition_id=partition_id,
                                  task_name=task_name, sampling_config=config)
    except DeadlineExceeded:
        return None, BatchMeta.empty()
    if meta.size == 0:
        return None, meta
    return tq_client.get_data(meta), meta


def _row_slicer(value) -> Callable[[int, int], Any]:
    """A function giving rows ``[start, end)`` of one field of a batch, views where possible."""
    if isinstance(value, torch.Tensor) and value.is_nested:
        if value.layout == torch.jagged:  # cannot be sliced on dim 0: a view of its values instead
            values, offsets = value.values(), value.offsets()
            return lambda s, e: torch.nested.nested_tensor_from_jagged(
                values[offsets[s]:offsets[e]], offsets=offsets[s:e + 1] - offsets[s])
        rows, layout = value.unbind(0), value.layout
        return lambda s, e: torch.nested.as_nested_tensor(list(rows[s:e]), layout=layout)
    return lambda s, e: value[s:e]


def chunk_batch_fn(batch, batch_meta: BatchMeta, micro_batch_size: int = 1) -> list[tuple[Any, BatchMeta]]:
    """Splits a batch into micro-batches of ``micro_batch_size`` consecutive rows (the last one
    smaller), each with the metadata of exactly its rows. Works on a ``TensorDict`` and on the
    ``dict`` a get returns without tensordict (tensors, jagged tensors, lists)."""
    if not isinstance(micro_batch_size, int) or isinstance(micro_batch_size, bool) or micro_batch_size <= 0:
        raise ValueError(f"micro_batch_size must be a positive integer, got {micro_batch_size!r}")
    total = batch_meta.size
    if total == 0:
        raise ValueError("chunk_batch_fn: the batch is empty")
    is_td = hasattr(batch, "batch_size") and hasattr(batch, "items") and not isinstance(batch, dict)
    if is_td:
        sizes = {"the batch": int(batch.batch_size[0])}
    else:
        sizes = {f"field '{k}'": (int(v.size(0)) if isinstance(v, torch.Tensor) else len(v)) for k, v in batch.items()}
    for what, rows in sizes.items():
        if rows != total:
            raise ValueError(f"chunk_batch_fn: {what} has {rows} rows but its metadata {total} samples")
    slicers = {name: _row_slicer(value) for name, value in batch.items()}
    out = []
    for start in range(0, total, micro_batch_size):
        end = min(start + micro_batch_size, total)
        part = {name: cut(start, end) for name, cut in slicers.items()}
        if is_td:
            part = type(batch)(part, batch_size=[end - start])
        out.append((part, batch_meta.select_samples(list(range(start, end)))))
    return out


def mark_producer_done(written: BatchMeta, client: TransferQueueClient | None = None) -> None:
    """Tells datasets with ``wait_for_producer_done=True`` (and Java loaders with
    ``UNTIL_PRODUCER_DONE``) that the producer of a partition has written everything: merges the tag
    ``tq_producer_done = True`` into the tags of ``written`` (typically the producer's last put)."""
    if not isinstance(written, BatchMeta) or written.size == 0:
        raise ValueError(f"mark_producer_done needs the metadata of at least one written sample, got {written!r:.120}")
    if client is None:
        from .interface import get_client
        client = get_client()
    client._set_tags(written.global_indexes, written.partition_ids, [{PRODUCER_DONE_TAG: True}] * written.size)


def _identity_collate(item):
    """Keeps the dataset's ``(batch, meta)`` as it is (module level: picklable for workers)."""
    return item


class StreamingDataLoader(DataLoader):
    """A torch ``DataLoader`` over a :class:`StreamingDataset` with upstream's defaults: no
    re-batching (``batch_size=None``: the dataset makes the micro-batches) and an identity
    ``collate_fn``, so each item is the dataset's ``(batch, meta)``. Worker processes each open
    their own client and fetch distinct batch indexes (see :mod:`transferqueue_jvm.dataloader`)."""

    def __init__(self, dataset: StreamingDataset, num_workers: int = 0, collate_fn: Callable | None = None,
                 pin_memory: bool = False, worker_init_fn: Callable | None = None, multiprocessing_context=None,
                 prefetch_factor: int | None = None, persistent_workers: bool = False, pin_memory_device: str = ""):
        if not isinstance(dataset, StreamingDataset):
            raise TypeError(f"dataset must be a StreamingDataset, got {type(dataset).__name__}")
        self.dataset: StreamingDataset = dataset
        kwargs: dict[str, Any] = {}
        if pin_memory_device:
            kwargs["pin_memory_device"] = pin_memory_device
        super().__init__(dataset, batch_size=None, shuffle=None, sampler=None, batch_sampler=None,
                         num_workers=num_workers, collate_fn=collate_fn or _identity_collate,
                         pin_memory=pin_memory, drop_last=False, timeout=0, worker_init_fn=worker_init_fn,
                         multiprocessing_context=multiprocessing_context, generator=None,
                         prefetch_factor=prefetch_factor, persistent_workers=persistent_workers, **kwargs)

    def reset(self) -> None:
        """:meth:`StreamingDataset.reset`."""
        self.dataset.reset()

    def step(self, partition_id: str) -> None:
        """:meth:`StreamingDataset.step`."""
        self.dataset.step(partition_id)

    def get_buffer(self) -> Iterable[tuple[Any, BatchMeta]]:
        """The dataset's buffer of fetched ``(batch, meta)`` (of this process)."""
        return self.dataset.buffer
