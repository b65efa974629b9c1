"""The key-value API against Java systems started by init(), on both backends."""

import asyncio
import warnings

import numpy as np
import pytest
import torch
from tensordict import TensorDict

from data import assert_batch_equal, every_kind, pattern, rows_of, same_bytes
from transferqueue_jvm import KVBatchMeta
from transferqueue_jvm.errors import UnknownKeyError


def test_kv_batch_put_and_get_every_dtype_and_kind(tq, pid):
    data = every_kind(3)
    keys = ["a", "b", "c"]
    meta = tq.kv_batch_put(keys, pid, data, tags=[{"i": i} for i in range(3)])
    assert isinstance(meta, KVBatchMeta)
    assert meta.keys == keys and meta.partition_id == pid and sorted(meta.fields) == sorted(data)
    assert meta.tags == [{"i": 0}, {"i": 1}, {"i": 2}]
    got = tq.kv_batch_get(keys, pid)
    assert isinstance(got, TensorDict) and got.batch_size[0] == 3
    assert_batch_equal(got, data)
    # key order is the request's
    got = tq.kv_batch_get(["c", "a"], pid)
    assert_batch_equal(got, data, rows=[2, 0])


def test_kv_put_of_one_key_with_tensors_and_values(tq, pid):
    meta = tq.kv_put("k", pid, {"ids": torch.tensor([1, 2, 3]), "note": "hello", "np": np.arange(4.0)},
                     tag={"score": 0.5})
    assert meta.keys == ["k"] and sorted(meta.fields) == ["ids", "note", "np"] and meta.tags == [{"score": 0.5}]
    got = tq.kv_batch_get("k", pid)
    assert same_bytes(got["ids"], torch.tensor([[1, 2, 3]]))
    assert same_bytes(got["np"], torch.arange(4.0, dtype=torch.float64).unsqueeze(0))
    assert got["note"].tolist() == ["hello"]


def test_kv_put_tag_only_then_fields_for_some_keys(tq, pid):
    tq.kv_batch_put(["a", "b"], pid, tags=[{"s": 1}, {"s": 2}])
    assert tq.kv_list(pid) == {pid: {"a": {"s": 1}, "b": {"s": 2}}}
    tq.kv_put("a", pid, {"x": torch.ones(2)})
    tq.kv_put("a", pid, tag={"t": True})
    assert tq.kv_list(pid)[pid]["a"] == {"s": 1, "t": True}
    # a field written for some keys only is not ready for all of them
    with pytest.raises(ValueError):
        tq.kv_batch_get(["a", "b"], pid, select_fields=["x"])
    assert same_bytes(tq.kv_batch_get(["a"], pid)["x"], torch.ones(1, 2))


def test_kv_batch_get_drops_missing_keys_with_a_warning_or_fails_when_strict(tq, pid):
    tq.kv_batch_put(["a", "b"], pid, {"x": torch.arange(4.0).reshape(2, 2)})
    with pytest.warns(UserWarning, match="zz"):
        got = tq.kv_batch_get(["zz", "b"], pid)
    assert same_bytes(got["x"], torch.tensor([[2.0, 3.0]]))
    with pytest.raises(UnknownKeyError, match="zz"):
        tq.kv_batch_get(["zz", "b"], pid, strict=True)
    with pytest.raises(ValueError, match="not found"):
        tq.kv_batch_get(["zz"], pid)
    with pytest.raises(ValueError, match="not found"):
        tq.kv_batch_get(["a"], pid + "-nowhere")


def test_kv_batch_get_by_meta_and_select_fields(tq, pid):
    meta = tq.kv_batch_put(["a", "b"], pid, {"x": torch.zeros(2, 1), "y": ["u", "v"]})
    got = tq.kv_batch_get_by_meta(meta, select_fields="y")
    assert list(got.keys()) == ["y"] and got["y"].tolist() == ["u", "v"]
    with pytest.raises(ValueError, match="select_fields"):
        tq.kv_batch_get_by_meta(meta, select_fields=["nope"])
    with pytest.raises(ValueError, match="partition_id"):
        tq.kv_batch_get_by_meta(KVBatchMeta(keys=["a"], tags=[{}]))
    sub = meta.select_keys(["b"])
    assert tq.kv_batch_get_by_meta(sub)["y"].tolist() == ["v"]


def test_kv_list_and_clear(tq, pid):
    tq.kv_batch_put(["a", "b", "c"], pid, {"x": torch.zeros(3, 2)}, tags=[{}, {"k": "v"}, {}])
    listing = tq.kv_list()
    assert listing[pid] == {"a": {}, "b": {"k": "v"}, "c": {}}
    tq.kv_clear(["a", "missing"], pid)
    tq.kv_clear("c", pid)
    assert tq.kv_list(pid) == {pid: {"b": {"k": "v"}}}
    assert same_bytes(tq.kv_batch_get("b", pid)["x"], torch.zeros(1, 2))
    tq.kv_clear(["b"], pid)
    assert tq.kv_list(pid).get(pid, {}) == {}


def test_overwrite_of_a_key_replaces_its_data(tq, pid):
    tq.kv_put("k", pid, {"x": torch.zeros(3)})
    tq.kv_put("k", pid, {"x": torch.ones(3)})
    assert same_bytes(tq.kv_batch_get("k", pid)["x"], torch.ones(1, 3))
    # another shape: the field becomes jagged across keys
    tq.kv_put("k2", pid, {"x": torch.ones(5)})
    got = tq.kv_batch_get(["k", "k2"], pid)
    rows = rows_of(got["x"]) if got["x"].is_nested else list(got["x"])
    assert [tuple(r.shape) for r in rows] == [(3,), (5,)]


def test_async_twins(tq, pid):
    async def run():
        meta = await tq.async_kv_batch_put(["a", "b"], pid, {"x": pattern(torch.bfloat16, (2, 4))},
                                           tags=[{"n": 1}, {"n": 2}])
        await tq.async_kv_put("c", pid, {"x": pattern(torch.bfloat16, (4,), 5)})
        got = await tq.async_kv_batch_get(["a", "b", "c"], pid)
        by_meta = await tq.async_kv_batch_get_by_meta(meta)
        listing = await tq.async_kv_list(pid)
        await tq.async_kv_clear(["a"], pid)
        return got, by_meta, listing, await tq.async_kv_list(pid)

    got, by_meta, listing, after = asyncio.run(run())
    assert got["x"].shape == (3, 4) and same_bytes(by_meta["x"], pattern(torch.bfloat16, (2, 4)))
    assert listing[pid]["b"] == {"n": 2} and "a" not in after[pid]


def test_tensordict_input_with_nested_and_non_tensor_stack(tq, pid):
    from tensordict import NonTensorStack
    td = TensorDict({"n": torch.nested.as_nested_tensor([torch.ones(2), torch.zeros(3)], layout=torch.jagged),
                     "s": NonTensorStack("x", {"y": 1})}, batch_size=[2])
    tq.kv_batch_put(["a", "b"], pid, td)
    got = tq.kv_batch_get(["a", "b"], pid)
    assert [tuple(r.shape) for r in rows_of(got["n"])] == [(2,), (3,)]
    assert got["s"].tolist() == ["x", {"y": 1}]


def test_kv_put_refuses_what_upstream_refuses(tq, pid):
    with pytest.raises(ValueError):
        tq.kv_put("k", pid)
    with pytest.raises(ValueError, match="kv_batch_put"):
        tq.kv_put("k", pid, {"n": torch.nested.as_nested_tensor([torch.ones(2)], layout=torch.jagged)})
    with pytest.raises(ValueError):
        tq.kv_batch_put(["a", "b"], pid, {"x": torch.zeros(3, 1)})
    with pytest.raises(ValueError):
        tq.kv_batch_put(["a", "b"], pid, tags=[{}])
    with pytest.raises(ValueError):
        tq.kv_batch_put(["a", "a"], pid, {"x": torch.zeros(2, 1)})
    assert tq.kv_list(pid).get(pid, {}) == {}


def test_kv_batch_meta_methods_without_servers():
    m = KVBatchMeta(keys=["a", "b", "c"], tags=[{"i": 0}, {"i": 1}, {"i": 2}], partition_id="p", fields=["x"])
    assert m.size == 3 and len(m) == 3
    assert m.select_keys(["c", "a"]).tags == [{"i": 2}, {"i": 0}]
    with pytest.raises(RuntimeError):
        m.select_keys(["zz"])
    with pytest.raises(ValueError):
        m.select_keys(["a", "a"])
    parts = m.chunk(2)
    assert [p.keys for p in parts] == [["a", "b"], ["c"]]
    assert KVBatchMeta.concat(parts).keys == ["a", "b", "c"]
    m.reorder([2, 0, 1])
    assert m.keys == ["c", "a", "b"] and m.tags[0] == {"i": 2}
    with pytest.raises(ValueError):
        m.reorder([0, 0, 1])
    with pytest.raises(ValueError):
        KVBatchMeta(keys=["a"], tags=[])
    with pytest.raises(ValueError):
        KVBatchMeta(keys=["a", "a"], tags=[{}, {}])
    with pytest.raises(ValueError):
        KVBatchMeta.concat([m, KVBatchMeta(keys=["z"], tags=[{}], partition_id="other", fields=["x"])])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert KVBatchMeta.concat([]).keys == []


def test_kv_batch_meta_names_the_keys_samples_and_refuses_a_stale_read(tq, pid):
    from transferqueue_jvm.errors import StaleMetadataError
    meta = tq.kv_batch_put(["a", "b"], pid, {"x": torch.zeros(2, 2)})
    assert len(meta.global_indexes) == 2 and all(g >= 0 for g in meta.generations)
    c = tq.get_client()
    assert c.kv_retrieve_meta(["a", "b"], pid).global_indexes == meta.global_indexes
    # "a" is cleared and written again: it is another sample now
    tq.kv_clear("a", pid)
    tq.kv_put("a", pid, {"x": torch.ones(2)})
    with pytest.raises(StaleMetadataError, match="'a'"):
        tq.kv_batch_get_by_meta(meta)
    # the descriptor of "b" alone is still good, and so is a descriptor built from keys alone
    assert same_bytes(tq.kv_batch_get_by_meta(meta.select_keys(["b"]))["x"], torch.zeros(1, 2))
    by_hand = KVBatchMeta(keys=["a", "b"], tags=[{}, {}], partition_id=pid, fields=["x"])
    assert by_hand.generations == [-1, -1]
    got = tq.kv_batch_get_by_meta(by_hand)
    assert same_bytes(got["x"], torch.tensor([[1.0, 1.0], [0.0, 0.0]]))
    fresh = tq.kv_put("a", pid, {"x": torch.full((2,), 3.0)})
    assert same_bytes(tq.kv_batch_get_by_meta(fresh)["x"], torch.full((1, 2), 3.0))


def test_kv_batch_meta_carries_samples_through_its_methods():
    m = KVBatchMeta(keys=["a", "b", "c"], tags=[{}, {}, {}], partition_id="p", fields=["x"],
                    global_indexes=[4, 5, 6], generations=[0, 1, 2])
    assert m.select_keys(["c", "a"]).global_indexes == [6, 4] and m.select_keys(["c"]).generations == [2]
    parts = m.chunk(2)
    assert [p.generations for p in parts] == [[0, 1], [2]]
    assert KVBatchMeta.concat(parts).global_indexes == [4, 5, 6]
    m.reorder([1, 2, 0])
    assert m.global_indexes == [5, 6, 4] and m.generations == [1, 2, 0]
    with pytest.raises(ValueError):
        KVBatchMeta(keys=["a"], tags=[{}], global_indexes=[1, 2])


def test_kv_batch_meta_wire_layout_equals_the_java_vector():
    import pathlib
    from transferqueue_jvm.metadata import pack_meta, unpack_meta
    data = (pathlib.Path(__file__).parent / "vectors" / "v1" / "value-kv-batch-meta.msgpack").read_bytes()
    meta = KVBatchMeta.from_wire(unpack_meta(data))
    assert meta.keys == ["a", "b", "c"] and meta.global_indexes == [4, 9, -1] and meta.generations == [0, 2, -1]
    assert meta.knows_sample(0) and not meta.knows_sample(2) and meta.tags[0] == {"score": 0.5, "label": "caf\u00e9"}
    assert pack_meta(meta.to_wire()) == data
