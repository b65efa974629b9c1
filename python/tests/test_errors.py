"""Bad input on both backends and both deployments: each refused call raises the exception class of
its error code (errors.py) naming the offending value, and leaves what is stored unchanged."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from data import assert_batch_equal, every_kind
from transferqueue_jvm import errors
from transferqueue_jvm.client import TransferQueueClient, new_client_id

KEYS = ["a", "b", "c"]


@pytest.fixture
def stored(tq, pid):
    """A partition holding three keys of every dtype and kind, with tags; ``check()`` asserts that
    the partition still holds exactly that."""
    data = every_kind(3, salt=7)
    tags = [{"n": i} for i in range(3)]
    tq.kv_batch_put(KEYS, pid, data, tags=tags)

    def check():
        assert tq.kv_list(pid) == {pid: {k: t for k, t in zip(KEYS, tags)}}
        assert_batch_equal(tq.kv_batch_get(KEYS, pid), data)

    check()
    return data, check


def test_mismatched_lengths_are_refused(tq, pid, stored):
    data, check = stored
    with pytest.raises(errors.InvalidArgumentError, match="length 2") as e:
        tq.kv_batch_put(["a", "b"], pid, {"d_float32": torch.zeros(3, 2, 3)})
    assert isinstance(e.value, ValueError) and e.value.code_name == "INVALID_ARGUMENT"
    with pytest.raises(errors.InvalidArgumentError, match="tags 1"):
        tq.kv_batch_put(["a", "b"], pid, {"d_float32": torch.zeros(2, 2, 3)}, tags=[{}])
    with pytest.raises(errors.ShapeMismatchError, match="'y': 2"):
        tq.kv_batch_put(KEYS, pid, {"x": torch.zeros(3), "y": torch.zeros(2)})
    c = tq.get_client()
    slots = c.kv_retrieve_meta(KEYS, pid)
    with pytest.raises(errors.ShapeMismatchError, match="2 rows but the metadata has 3"):
        c.put({"d_float32": torch.zeros(2, 2, 3)}, metadata=slots)
    check()


def test_duplicate_keys_are_refused(tq, pid, stored):
    _, check = stored
    with pytest.raises(errors.DuplicateKeyError, match=r"\['a'\]") as e:
        tq.kv_batch_put(["a", "z", "a"], pid, {"d_float32": torch.ones(3, 2, 3)})
    assert isinstance(e.value, ValueError)
    with pytest.raises(errors.DuplicateKeyError):
        tq.kv_batch_get(["b", "b"], pid)
    check()


def test_unknown_keys_are_refused(tq, pid, stored):
    _, check = stored
    with pytest.raises(errors.UnknownKeyError, match="nope"):
        tq.kv_batch_get(["a", "nope"], pid, strict=True)
    with pytest.raises(errors.UnknownKeyError, match="not found"):
        tq.kv_batch_get(["nope"], pid)
    with pytest.raises(errors.UnknownKeyError):
        tq.kv_batch_get(["a"], pid + "-absent")
    check()


def test_wrong_dtypes_are_refused(tq, pid, stored):
    _, check = stored
    # a dtype the wire does not have
    with pytest.raises(errors.UnknownDtypeError, match="complex64"):
        tq.kv_batch_put(["a", "z"], pid, {"d_float32": torch.zeros(2, 2, 3, dtype=torch.complex64)})
    with pytest.raises(errors.UnknownDtypeError, match="uint16"):
        tq.kv_put("a", pid, {"new": torch.zeros(3, dtype=torch.uint16)})
    # another dtype than the field's in this partition
    with pytest.raises(errors.SchemaConflictError, match="d_float32") as e:
        tq.kv_batch_put(["a", "z"], pid, {"d_float32": torch.zeros(2, 2, 3, dtype=torch.int32)})
    assert "float32" in str(e.value) and "int32" in str(e.value)
    # a value that cannot be encoded, nested deep in an object column
    with pytest.raises(errors.InvalidArgumentError, match="objects"):
        tq.kv_batch_put(["a", "z"], pid, {"objects": [{"ok": 1}, {"bad": [object()]}]})
    with pytest.raises(errors.UnknownDtypeError):
        tq.kv_batch_put(["a", "z"], pid, {"jagged": [torch.ones(2), torch.ones(3, dtype=torch.complex128)]})
    check()


def test_shape_mismatch_in_a_jagged_column_and_in_an_insert(tq, pid, stored):
    _, check = stored
    with pytest.raises(errors.TQError) as e:
        tq.kv_batch_put(["a", "z"], pid, {"jagged": [torch.ones(2), torch.ones(3, dtype=torch.int64)]})
    assert e.value.code_name in ("SCHEMA_CONFLICT", "INVALID_ARGUMENT", "SHAPE_MISMATCH")
    assert "jagged" in str(e.value)
    check()


def test_a_value_over_the_frame_limit_is_refused_before_sending(tq, pid, stored):
    _, check = stored
    small = dataclasses.replace(tq.get_client().deployment, max_frame_bytes=1 << 20)
    client = TransferQueueClient(new_client_id(), small)
    try:
        big = {"d_float32": torch.zeros(3, 2, 3), "huge": torch.zeros(3, 1 << 18)}  # 3 MiB
        with pytest.raises(errors.FrameTooLongError, match="max_frame_bytes"):
            client.kv_put_batch(["a", "b", "z"], pid, big, None)
    finally:
        client.close()
    check()


def test_a_closed_system_refuses_every_call(tq, pid, stored):
    _, check = stored
    client = tq.get_client()
    client_copy = TransferQueueClient(new_client_id(), client.deployment)
    client_copy.close()
    for call in (lambda: client_copy.kv_list(pid),
                 lambda: client_copy.kv_put_batch(["a"], pid, {"d_float32": torch.ones(1, 2, 3)}, None),
                 lambda: client_copy.get_data(client.kv_retrieve_meta(KEYS, pid))):
        with pytest.raises(errors.ClosedError) as e:
            call()
        assert e.value.code_name == "CLOSED"
    tq.close()
    try:
        for call in (lambda: tq.kv_put("a", pid, {"d_float32": torch.ones(2, 3)}),
                     lambda: tq.kv_batch_get(KEYS, pid), lambda: tq.kv_list(pid), lambda: tq.kv_clear(KEYS, pid),
                     tq.get_client):
            with pytest.raises(errors.ClosedError, match="init"):
                call()
        with pytest.raises(errors.ClosedError):
            client.kv_list(pid)
    finally:
        tq.init(tq.init_conf)
    if tq.deployment == "up":  # the servers outlived the client: nothing they store was touched
        check()
