"""The low-level client (upstream's names and argument order) against Java systems, both backends."""

import asyncio
import time

import numpy as np
import pytest
import torch

from data import assert_batch_equal, every_kind, same_bytes
from transferqueue_jvm import BatchMeta
from transferqueue_jvm.errors import DeadlineExceeded, StaleMetadataError


def test_put_without_metadata_then_fetch_and_get(tq, pid):
    c = tq.get_client()
    data = every_kind(4)
    meta = c.put(data, partition_id=pid)
    assert meta.size == 4 and meta.is_ready and all(g >= 0 for g in meta.generations)
    assert sorted(meta.field_names) == sorted(data)
    fetched = c.get_meta(["d_float32", "objects"], 2, pid, mode="fetch", task_name="actor")
    assert fetched.size == 2 and fetched.field_names == ["d_float32", "objects"]
    got = c.get_data(fetched)
    rows = [meta.global_indexes.index(g) for g in fetched.global_indexes]
    assert_batch_equal(got, {k: data[k] for k in ("d_float32", "objects")}, rows=rows)
    # the rest, then nothing: consumption is per task
    rest = c.get_meta(["d_float32"], 2, pid, mode="fetch", task_name="actor")
    assert set(rest.global_indexes) | set(fetched.global_indexes) == set(meta.global_indexes)
    other = c.get_meta(["d_float32"], 4, pid, mode="fetch", task_name="critic")
    assert other.size == 4
    every = c.get_meta(["d_float32"], 0, pid, mode="force_fetch")
    assert sorted(every.global_indexes) == sorted(meta.global_indexes)
    assert_batch_equal(c.get_data(meta), data)


def test_insert_then_put_with_metadata(tq, pid):
    c = tq.get_client()
    slots = c.get_meta(["x"], 3, pid, mode="insert")
    assert slots.size == 3 and not slots.is_ready
    out = c.put({"x": torch.arange(6.0).reshape(3, 2)}, metadata=slots)
    assert out.is_ready and out.field_schema["x"]["shape"] == torch.Size([2])
    assert same_bytes(c.get_data(out)["x"], torch.arange(6.0).reshape(3, 2))


def test_status_calls_and_reset(tq, pid):
    c = tq.get_client()
    meta = c.put({"x": torch.zeros(3, 1), "y": torch.ones(3, 1)}, partition_id=pid)
    idx, produced = c.get_production_status(["x", "y"], pid)
    assert idx.tolist() == sorted(idx.tolist()) and produced.shape == (len(idx), 2)
    assert c.check_production_status(["x", "y"], pid)
    assert not c.check_consumption_status("actor", pid)
    c.get_meta(["x"], 3, pid, mode="fetch", task_name="actor")
    idx, consumed = c.get_consumption_status("actor", pid)
    assert consumed.dtype == torch.int8 and int(consumed.sum()) == 3
    assert c.check_consumption_status("actor", pid)
    assert c.reset_consumption(pid, "actor") is True
    assert not c.check_consumption_status("actor", pid)
    assert c.reset_consumption(pid, "actor") is False  # nothing consumed any more
    assert c.reset_consumption(pid + "-none") is False  # no such partition
    assert c.get_production_status(["x"], pid + "-none") == (None, None)
    assert pid in c.get_partition_list()
    c.clear_samples(meta.select_samples([0]))
    assert meta.global_indexes[0] not in c.get_meta(["x"], 0, pid, mode="force_fetch").global_indexes
    c.clear_partition(pid)
    assert pid not in c.get_partition_list()


def test_custom_meta_and_keys(tq, pid):
    c = tq.get_client()
    meta = c.kv_retrieve_meta(["a", "b"], pid, create=True)
    assert meta.size == 2 and c.kv_retrieve_keys(meta.global_indexes, pid) == ["a", "b"]
    meta.update_custom_meta([{"r": 1}, {"r": 2}])
    c.set_custom_meta(meta)
    assert c.kv_list(pid) == {pid: {"a": {"r": 1}, "b": {"r": 2}}}
    again = c.kv_retrieve_meta(["b", "zz"], pid)
    assert again.size == 1 and again.custom_meta == [{"r": 2}]


def test_stale_metadata_after_a_clear(tq, pid):
    c = tq.get_client()
    meta = c.put({"x": torch.ones(2, 2)}, partition_id=pid)
    c.clear_samples(meta)
    # the indexes are reused by a new put, in a newer generation
    fresh = c.put({"x": torch.zeros(2, 2)}, partition_id=pid)
    if set(fresh.global_indexes) & set(meta.global_indexes):
        with pytest.raises(StaleMetadataError):
            c.get_data(meta)
    else:
        with pytest.raises(Exception):
            c.get_data(meta)
    assert same_bytes(c.get_data(fresh)["x"], torch.zeros(2, 2))


def test_hand_built_metadata_reads_the_current_sample(tq, pid):
    c = tq.get_client()
    meta = c.put({"x": torch.arange(4.0).reshape(2, 2)}, partition_id=pid)
    by_hand = BatchMeta(meta.global_indexes, meta.partition_ids, meta.field_schema, np.ones(2))
    assert by_hand.generations == [-1, -1]
    assert same_bytes(c.get_data(by_hand)["x"], torch.arange(4.0).reshape(2, 2))


def test_blocking_fetch_runs_out_of_time_with_a_timeout_error(tq, pid):
    c = tq.get_client()
    c.put({"x": torch.zeros(1, 1)}, partition_id=pid)
    start = time.monotonic()
    with pytest.raises(TimeoutError) as info:
        c.get_meta(["x"], 5, pid, mode="fetch", task_name="actor")
    assert isinstance(info.value, DeadlineExceeded) and time.monotonic() - start < 30
    # nothing was consumed
    assert c.get_meta(["x"], 1, pid, mode="fetch", task_name="actor").size == 1


def test_async_twins_of_the_client(tq, pid):
    c = tq.get_client()

    async def run():
        meta = await c.async_put({"x": torch.ones(2, 3)}, partition_id=pid)
        got = await c.async_get_data(meta)
        parts = await c.async_get_partition_list()
        await c.async_clear_partition(pid)
        return got, parts

    got, parts = asyncio.run(run())
    assert same_bytes(got["x"], torch.ones(2, 3)) and pid in parts


def test_empty_metadata_gives_an_empty_batch(tq):
    got = tq.get_client().get_data(BatchMeta.empty())
    assert got.batch_size[0] == 0


def test_batch_meta_methods_without_servers():
    m = BatchMeta([5, 6, 7], ["p"] * 3, {"x": {"dtype": torch.float32, "shape": torch.Size([2]), "is_nested": False,
                                                "is_non_tensor": False}},
                  np.ones(3), {"e": 1}, [{"a": 1}, {}, {}], None, [0, 1, 2])
    assert m.size == 3 and m.is_ready and m.field_names == ["x"]
    assert m[1].global_indexes == [6] and m[1].generations == [1]
    assert [c.global_indexes for c in m.chunk(2)] == [[5, 6], [7]]
    assert BatchMeta.concat(m.chunk(2)).generations == [0, 1, 2]
    m2 = m.copy()
    m2.reorder([2, 0, 1])
    assert m2.global_indexes == [7, 5, 6] and m2.generations == [2, 0, 1] and m2.custom_meta[1] == {"a": 1}
    assert m.select_fields([]).field_names == []
    assert m.union(m).size == 3
    with pytest.raises(ValueError):
        m.union(m2)
    with pytest.raises(ValueError):
        m.update_custom_meta([{}])
    assert m.get_shapes("x") == [torch.Size([2])] * 3
    assert m.chunk_by_partition()[0].size == 3
    assert BatchMeta.empty().size == 0 and not BatchMeta.empty().is_ready


UPSTREAM_CLIENT_CALLS = ["get_meta", "put", "get_data", "set_custom_meta", "clear_partition", "clear_samples",
                         "get_consumption_status", "get_production_status", "check_consumption_status",
                         "check_production_status", "reset_consumption", "get_partition_list", "kv_retrieve_meta",
                         "kv_retrieve_keys", "kv_list", "save_controller_checkpoint", "load_controller_checkpoint",
                         "save_storage_checkpoint", "load_storage_checkpoint"]


def test_every_upstream_call_has_its_async_twin_with_the_same_arguments():
    import inspect
    from transferqueue_jvm import TransferQueueClient
    for name in UPSTREAM_CLIENT_CALLS + ["save_checkpoint", "load_checkpoint"]:
        sync, twin = getattr(TransferQueueClient, name), getattr(TransferQueueClient, "async_" + name)
        assert inspect.iscoroutinefunction(twin), name
        assert list(inspect.signature(sync).parameters) == list(inspect.signature(twin).parameters), name
    sig = inspect.signature(TransferQueueClient.get_consumption_status)
    assert list(sig.parameters)[1:] == ["task_name", "partition_id"]
    assert list(inspect.signature(TransferQueueClient.reset_consumption).parameters)[1:] == ["partition_id",
                                                                                           "task_name"]


def test_samples_views_and_pickling_keep_generations():
    import pickle
    m = BatchMeta([5, 6], ["p", "p"], {"x": {"dtype": torch.int64, "shape": None, "is_nested": True,
                                             "is_non_tensor": False, "per_sample_shapes": [(2,), (3,)]}},
                  np.ones(2), {"e": 1}, [{"a": 1}, {}], None, [3, 4])
    s = m.samples[1]
    assert (s.global_index, s.generation, s.partition_id, s.production_status) == (6, 4, "p", 1)
    assert s.fields["x"]["shape"] == (3,) and dict(m.samples[0].custom_meta) == {"a": 1}
    assert [v.global_index for v in m.samples] == [5, 6] and len(m.samples) == 2
    with pytest.raises(TypeError):
        m.samples[0].custom_meta["b"] = 2
    back = pickle.loads(pickle.dumps(m))
    assert back.global_indexes == [5, 6] and back.generations == [3, 4] and back.is_ready
    assert back.field_schema["x"]["per_sample_shapes"] == [(2,), (3,)] and back.custom_meta == [{"a": 1}, {}]


def test_initialize_storage_manager_checks_the_backend(tq):
    c = tq.get_client()
    c.initialize_storage_manager(tq.backend, {})
    c.initialize_storage_manager("AsyncSimpleStorageManager" if tq.backend == "SimpleStorage"
                                 else "MooncakeStorageManager", {})
    with pytest.raises(ValueError, match="backend"):
        c.initialize_storage_manager("Yuanrong", {})


def test_put_runs_a_data_parser_here_before_sending(tq, pid):
    c = tq.get_client()

    def parser(batch):
        batch["url"][:] = [f"content of {u}" for u in batch["url"]]
        batch["x"].mul_(2)

    meta = c.put({"url": ["a", "b"], "x": torch.ones(2, 2)}, partition_id=pid, data_parser=parser)
    got = c.get_data(meta)
    assert got["url"].tolist() == ["content of a", "content of b"] and same_bytes(got["x"], torch.full((2, 2), 2.0))
    from transferqueue_jvm.errors import DataParserFailedError
    with pytest.raises(DataParserFailedError, match="length"):
        c.put({"url": ["a"]}, partition_id=pid, data_parser=lambda b: b["url"].append("extra"))


def test_checkpoint_save_and_load_restore_data_and_status(tq, pid, tmp_path):
    c = tq.get_client()
    meta = c.put({"x": torch.arange(6.0).reshape(3, 2), "s": ["a", "b", "c"]}, partition_id=pid)
    c.get_meta(["x"], 2, pid, mode="fetch", task_name="actor")
    tq.kv_put("k", pid + "-kv", {"y": torch.ones(2)}, tag={"t": 1})
    ckpt = tmp_path / "step_1"
    tq.save_checkpoint(ckpt, metadata={"step": 1})
    assert (ckpt / "MANIFEST").is_file() and (ckpt / "metadata.json").is_file()
    c.clear_partition(pid)
    tq.kv_clear("k", pid + "-kv")
    assert pid not in c.get_partition_list()
    assert "user_metadata " in (ckpt / "MANIFEST").read_text()
    (ckpt / "metadata.json").unlink()  # the metadata comes from the MANIFEST
    assert c.load_checkpoint(str(ckpt)) == {"step": 1}
    assert same_bytes(c.get_data(meta)["x"], torch.arange(6.0).reshape(3, 2))
    _, consumed = c.get_consumption_status("actor", pid)
    assert int(consumed.sum()) == 2
    assert tq.kv_list(pid + "-kv") == {pid + "-kv": {"k": {"t": 1}}}
    with pytest.raises(NotImplementedError):
        c.save_storage_checkpoint(str(ckpt))
    with pytest.raises(FileNotFoundError):
        tq.load_checkpoint(tmp_path / "nowhere")


def test_token_budget_fetch_fills_a_batch_from_total_lengths(tq, pid):
    c = tq.get_client()
    meta = c.put({"x": torch.arange(5.0).reshape(5, 1)}, partition_id=pid)
    meta.update_custom_meta([{"total_lengths": n} for n in (300, 500, 400, 2000, 100)])
    c.set_custom_meta(meta)
    gi = meta.global_indexes

    def fetch(**kw):
        return c.get_meta(["x"], None, pid, mode="fetch", task_name="actor", token_budget=1000, **kw)

    assert fetch().global_indexes == gi[0:2]  # 300 + 500; 400 more would exceed 1000
    assert fetch().global_indexes == [gi[2]]  # 400; 2000 more would exceed
    assert fetch().global_indexes == [gi[3]]  # longer than the budget: alone
    # 100 of 1000 tokens ready: not served without underfill (empty when polling, else a timeout)
    if c.deployment.polling_mode:
        assert fetch(sampling_config={"allow_underfill": False}).size == 0
    else:
        with pytest.raises(DeadlineExceeded):
            fetch(sampling_config={"allow_underfill": False})
    assert c.get_meta(["x"], 1, pid, mode="fetch", task_name="actor", token_budget=1000).global_indexes == [gi[4]]
    batch = asyncio.run(c.async_get_meta(["x"], None, pid, mode="fetch", task_name="critic", token_budget=800))
    assert batch.global_indexes == gi[0:2]
    with pytest.raises(ValueError, match="token_budget"):
        c.get_meta(["x"], None, pid, mode="fetch", task_name="actor", token_budget=0)
    with pytest.raises(ValueError, match="token_budget"):
        c.get_meta(["x"], 2, pid, mode="insert", token_budget=10)
