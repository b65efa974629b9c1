"""StreamingDataset / StreamingDataLoader against Java systems started by init(), both backends."""

import itertools
import queue
import threading

import pytest
import torch

from conftest import BACKENDS

POLL = 0.05  # seconds between fetches of an empty batch index
WAIT = 30.0  # deadline of every wait on a condition


@pytest.fixture(scope="module", params=BACKENDS)
def rq(request, need_servers):
    """transferqueue_jvm on a system whose controller runs the RankAwareSampler."""
    import transferqueue_jvm as tq
    tq.close()
    conf = tq.init({"controller": {"sampler": "RankAwareSampler"},
                    "backend": {"storage_backend": request.param}})
    yield tq, conf
    tq.close()


_parts = itertools.count()


@pytest.fixture
def part():
    return f"loader{next(_parts)}"


def produce(tq, partition, first, n):
    """Puts rows first..first+n-1: x = [v, v], text = 'row v'; returns the put's metadata and
    the value of each global index."""
    values = list(range(first, first + n))
    data = {"x": torch.tensor([[v, v] for v in values], dtype=torch.float32), "text": [f"row {v}" for v in values]}
    meta = tq.get_client().put(data, partition_id=partition)
    return meta, dict(zip(meta.global_indexes, values))


def dataset(tq, conf, partition, dp_rank, **kw):
    from transferqueue_jvm import StreamingDataset
    kw.setdefault("should_check_consumption_status", True)
    return StreamingDataset(conf, kw.pop("batch_size", 4), kw.pop("micro_batch_size", 2), ["x", "text"], partition,
                            "train", dp_rank, poll_interval=POLL, **kw)


def check_rows(batch, meta, value_of):
    """The rows are the ones the metadata names, in its order."""
    assert meta.size == len(batch["text"])
    for row, gi in enumerate(meta.global_indexes):
        v = value_of[gi]
        assert torch.equal(batch["x"][row], torch.tensor([v, v], dtype=torch.float32))
        assert batch["text"][row] == f"row {v}"


def take_batch(it, micro_batches):
    return [next(it) for _ in range(micro_batches)]


def indexes(items):
    return [gi for _, meta in items for gi in meta.global_indexes]


def test_replicas_of_one_group_see_identical_batches_and_groups_are_disjoint(rq, part):
    tq, conf = rq
    _, value_of = produce(tq, part, 0, 16)
    a, b = iter(dataset(tq, conf, part, 0)), iter(dataset(tq, conf, part, 0))
    c = iter(dataset(tq, conf, part, 1))
    got = {"a": [], "b": [], "c": []}
    # Group 0's replica b lags a batch behind a: it is served from the sampler's cache, also after
    # the partition is fully consumed.
    for _ in range(2):
        got["a"] += take_batch(a, 2)
        got["c"] += take_batch(c, 2)
        got["b"] += take_batch(b, 2)
    for name, it in (("a", a), ("b", b), ("c", c)):
        got[name] += list(it)  # ends: everything consumed
    for items in got.values():
        for batch, meta in items:
            assert meta.size == 2
            check_rows(batch, meta, value_of)
    assert indexes(got["a"]) == indexes(got["b"])
    assert not set(indexes(got["a"])) & set(indexes(got["c"]))
    assert sorted(indexes(got["a"]) + indexes(got["c"])) == sorted(value_of)
    assert len(indexes(got["a"])) == len(set(indexes(got["a"]))) == 8


def test_micro_batches_carry_the_metadata_of_their_rows_when_the_batch_is_not_a_multiple(rq, part):
    tq, conf = rq
    _, value_of = produce(tq, part, 100, 5)
    items = list(dataset(tq, conf, part, 0, batch_size=5, micro_batch_size=2))
    assert [meta.size for _, meta in items] == [2, 2, 1]
    for batch, meta in items:
        check_rows(batch, meta, value_of)
    assert sorted(indexes(items)) == sorted(value_of)


def test_hooks_are_applied(rq, part):
    tq, conf = rq
    from transferqueue_jvm.dataloader import default_fetch_batch_fn
    _, value_of = produce(tq, part, 200, 8)
    calls = []

    def fetch(**kw):
        calls.append(dict(kw["sampling_config"], batch_index=kw["batch_index"]))
        return default_fetch_batch_fn(**kw)

    def process(batch, meta, micro_batch_size):
        batch["x"] = batch["x"] * 2  # a whole-batch transform instead of chunking
        return [(batch, meta)]

    items = list(dataset(tq, conf, part, 3, fetch_batch_fn=fetch, process_batch_fn=process))
    assert [meta.size for _, meta in items] == [4, 4]
    for batch, meta in items:
        for row, gi in enumerate(meta.global_indexes):
            assert torch.equal(batch["x"][row], torch.tensor([2 * value_of[gi]] * 2, dtype=torch.float32))
    assert calls[0] == {"dp_rank": 3, "task_name": "train", "batch_index": 0}
    assert [c["batch_index"] for c in calls] == [0, 1, 2]  # the last fetch finds the end


def test_iteration_waits_for_the_producer_and_ends_when_it_is_done(rq, part):
    tq, conf = rq
    from transferqueue_jvm import mark_producer_done
    _, value_of = produce(tq, part, 300, 4)
    out: queue.Queue = queue.Queue()
    ds = dataset(tq, conf, part, 0, wait_for_producer_done=True)

    def consume():
        try:
            for item in ds:
                out.put(item)
            out.put("end")
        except BaseException as e:  # reported to the test thread
            out.put(e)

    consumer = threading.Thread(target=consume, daemon=True)
    consumer.start()
    first = [out.get(timeout=WAIT), out.get(timeout=WAIT)]
    assert sorted(indexes(first)) == sorted(value_of)
    # Everything written so far is consumed, but the producer is not done: the stream goes on.
    with pytest.raises(queue.Empty):
        out.get(timeout=20 * POLL)
    last, more = produce(tq, part, 304, 4)
    value_of.update(more)
    mark_producer_done(last)
    rest = [out.get(timeout=WAIT) for _ in range(3)]
    assert rest[2] == "end", rest[2]
    for batch, meta in first + rest[:2]:
        check_rows(batch, meta, value_of)
    assert sorted(indexes(first + rest[:2])) == sorted(value_of)
    consumer.join(WAIT)
    assert not consumer.is_alive()


def test_consumption_check_ends_the_stream_and_the_infinite_stream_keeps_polling(rq, part):
    tq, conf = rq
    produce(tq, part, 400, 4)
    assert len(list(dataset(tq, conf, part, 0))) == 2
    infinite = iter(dataset(tq, conf, part, 1, should_check_consumption_status=False))
    out: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: out.put(next(infinite)), daemon=True).start()
    with pytest.raises(queue.Empty):
        out.get(timeout=20 * POLL)
    _, value_of = produce(tq, part, 404, 4)
    batch, meta = out.get(timeout=WAIT)
    check_rows(batch, meta, value_of)
    infinite.close()  # abandoning the stream ends it and closes its connections


def test_reset_replays_the_buffer_and_step_switches_partition(rq, part):
    tq, conf = rq
    from transferqueue_jvm import StreamingDataLoader
    produce(tq, part, 500, 8)
    ds = dataset(tq, conf, part, 0)
    loader = StreamingDataLoader(ds)
    first = indexes(list(loader))
    assert len(first) == 8 and len(loader.get_buffer()) == 2
    assert ds._tq_client is None  # an ended iteration closes the dataset's connections
    assert list(loader) == []  # consumed, nothing buffered past batch_index
    loader.reset()
    assert indexes(list(loader)) == first
    other = part + "_next"
    _, value_of = produce(tq, other, 600, 4)
    loader.step(other)
    items = list(loader)
    assert sorted(indexes(items)) == sorted(value_of)
    assert len(loader.get_buffer()) == 1


def test_torch_dataloader_workers_fetch_distinct_batches(rq, part):
    tq, conf = rq
    from transferqueue_jvm import StreamingDataLoader
    _, value_of = produce(tq, part, 700, 24)
    loader = StreamingDataLoader(dataset(tq, conf, part, 0), num_workers=2, prefetch_factor=2)
    items = list(loader)
    got = indexes(items)
    assert sorted(got) == sorted(value_of)  # every sample once: no batch fetched by both workers
    for batch, meta in items:
        check_rows(batch, meta, value_of)


def test_plain_torch_dataloader_around_the_dataset(rq, part):
    tq, conf = rq
    _, value_of = produce(tq, part, 800, 8)
    loader = torch.utils.data.DataLoader(dataset(tq, conf, part, 0), batch_size=None, collate_fn=lambda x: x)
    items = list(loader)
    assert sorted(indexes(items)) == sorted(value_of)


@pytest.mark.parametrize("kw, message", [
    ({"micro_batch_size": 5}, "micro_batch_size"),
    ({"micro_batch_size": 0}, "micro_batch_size"),
    ({"batch_size": 0}, "batch_size"),
    ({"dp_rank": -1}, "dp_rank"),
    ({"data_fields": []}, "data_fields"),
    ({"poll_interval": 0}, "poll_interval"),
    ({"fetch_batch_fn": 3}, "fetch_batch_fn"),
])
def test_bad_arguments_are_refused_naming_the_value(rq, kw, message):
    tq, conf = rq
    from transferqueue_jvm import StreamingDataset
    args = {"config": conf, "batch_size": 4, "micro_batch_size": 2, "data_fields": ["x"], "partition_id": "p",
            "task_name": "t", "dp_rank": 0}
    args.update(kw)
    with pytest.raises(ValueError, match=message):
        StreamingDataset(**args)


def _forked_child(conf, partition):
    import os

    import transferqueue_jvm as tq
    try:
        tq.get_client()
        os._exit(3)  # the parent's client (its sockets) must not be handed to a forked child
    except tq.ClosedError:
        pass
    tq.init(conf)  # names the parent's servers: connects, starts nothing
    tq.kv_put("from_child", partition, fields={"v": torch.tensor([7])})
    tq.close()  # the child's client only: the parent's servers keep running
    os._exit(0)


def test_a_forked_process_initialises_its_own_client_and_leaves_the_parents_alone(rq, part):
    import multiprocessing
    tq, conf = rq
    tq.kv_put("from_parent", part, fields={"v": torch.tensor([1])})
    child = multiprocessing.get_context("fork").Process(target=_forked_child, args=(conf, part))
    child.start()
    child.join(WAIT)
    assert child.exitcode == 0
    got = tq.kv_batch_get(["from_parent", "from_child"], part)
    assert got["v"].flatten().tolist() == [1, 7]


def _meta(n):
    from transferqueue_jvm import BatchMeta
    return BatchMeta(global_indexes=list(range(100, 100 + n)), partition_ids=["p"] * n, field_schema={})


@pytest.mark.parametrize("as_tensordict", [False, True])
def test_chunking_keeps_rows_and_metadata_together_for_every_column_kind(as_tensordict):
    from transferqueue_jvm.dataloader import chunk_batch_fn
    rows = [torch.arange(k + 1, dtype=torch.float32) for k in range(5)]
    data = {"dense": torch.arange(10).reshape(5, 2),
            "jagged": torch.nested.as_nested_tensor(rows, layout=torch.jagged),
            "text": [f"t{i}" for i in range(5)]}
    if as_tensordict:
        tensordict = pytest.importorskip("tensordict")
        data["text"] = tensordict.NonTensorStack(*data["text"])
        data = tensordict.TensorDict(data, batch_size=[5])
    parts = chunk_batch_fn(data, _meta(5), micro_batch_size=2)
    assert [meta.global_indexes for _, meta in parts] == [[100, 101], [102, 103], [104]]
    for batch, meta in parts:
        for j, gi in enumerate(meta.global_indexes):
            i = gi - 100
            assert batch["dense"][j].tolist() == [2 * i, 2 * i + 1]
            assert torch.equal(batch["jagged"].unbind(0)[j], rows[i])
            assert list(batch["text"])[j] == f"t{i}"
    jagged = data["jagged"].values()
    for batch, _ in parts:  # a jagged micro-batch is a view of the batch's values, not a copy
        part = batch["jagged"].values()
        assert part.untyped_storage().data_ptr() == jagged.untyped_storage().data_ptr()


def test_chunking_refuses_rows_and_metadata_of_different_sizes():
    from transferqueue_jvm.dataloader import chunk_batch_fn
    tensordict = pytest.importorskip("tensordict")
    with pytest.raises(ValueError, match="the batch has 4 rows but its metadata 5 samples"):
        chunk_batch_fn(tensordict.TensorDict({"x": torch.zeros(4, 1)}, batch_size=[4]), _meta(5), 2)
    with pytest.raises(ValueError, match="field 'y' has 4 rows but its metadata 5 samples"):
        chunk_batch_fn({"x": torch.zeros(5, 1), "y": ["a"] * 4}, _meta(5), 2)
    with pytest.raises(ValueError, match="micro_batch_size"):
        chunk_batch_fn({"x": torch.zeros(5, 1)}, _meta(5), 0)
