"""The wire test vectors of the Java side (tests/vectors/v1, written by tq-core's WireVectorsTest).

Every vector is decoded and encoded again to the same bytes: generically (frame, body table, msgpack
items), and through this client's own codecs wherever it has one (BatchMeta, field schemas, the
requests its client sends, PUT bodies of every dtype and kind, object values, packed buffers).
"""

from __future__ import annotations

import csv
import pathlib

import msgpack
import pytest
import torch

from transferqueue_jvm import errors, shm, values, wire
from transferqueue_jvm.batch import DENSE, JAGGED, OBJECT, Column
from transferqueue_jvm.client import Deployment, TransferQueueClient
from transferqueue_jvm.dtypes import to_torch
from transferqueue_jvm.metadata import BatchMeta, pack_meta, schemas_from_wire, schemas_to_wire, unpack_meta
from transferqueue_jvm.storage import SimpleStorage, _tensor_from_body, java_string_hash, sample_of

VECTORS = pathlib.Path(__file__).parent / "vectors" / "v1"


def _manifest():
    rows = []
    with open(VECTORS / "manifest.tsv", encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, kind, type_, flags, cid, exact, label = line.rstrip("\n").split("\t")
            rows.append(dict(file=name, kind=kind, type=int(type_), flags=int(flags), cid=int(cid),
                             exact=exact == "1", label=label))
    return rows


MANIFEST = _manifest()


def _frame(row):
    data = (VECTORS / row["file"]).read_bytes()
    return data, wire.decode_frame(data)


def _find(label, kind):
    for row in MANIFEST:
        if row["label"] == label and row["kind"] == kind:
            return _frame(row)[1]
    raise KeyError((label, kind))


def _generic(app: bytes):
    return msgpack.unpackb(app, raw=False, strict_map_key=False, ext_hook=lambda c, d: msgpack.ExtType(c, d))


def _repack(obj) -> bytes:
    return msgpack.packb(obj, use_bin_type=True, use_single_float=False)


def test_every_message_type_of_the_protocol_has_a_vector():
    types = {row["type"] for row in MANIFEST}
    expected = {1, 2, 3} | set(range(100, 128)) | set(range(200, 209)) | set(range(300, 312))
    assert expected <= types, sorted(expected - types)
    kinds = {row["kind"] for row in MANIFEST}
    assert kinds == {"request", "reply", "error"}


@pytest.mark.parametrize("row", MANIFEST, ids=[r["file"] for r in MANIFEST])
def test_vector_decodes_and_encodes_to_the_same_bytes(row):
    data, frame = _frame(row)
    h = frame.header
    assert (h.type, h.flags, h.correlation_id) == (row["type"], row["flags"], row["cid"])
    assert h.is_response == (row["kind"] != "request")
    assert h.is_error == (row["kind"] == "error")
    # The frame again from its parts: header, body table, metadata, padding, bodies.
    assert wire.encode_frame(h.type, h.flags, h.correlation_id, frame.app_meta, frame.bodies) == data
    # The application metadata again from its decoded msgpack value.
    if frame.app_meta:
        assert _repack(_generic(frame.app_meta)) == frame.app_meta
    if row["kind"] == "error":
        exc = wire.decode_error(frame.app_meta)
        code, message = _generic(frame.app_meta)
        assert isinstance(exc, errors.TQError) and int(exc.code) == code
        assert type(exc) is errors.error_class(code)
        assert wire.error_metadata(code, message) == frame.app_meta


def test_hello_vectors():
    for row in MANIFEST:
        if row["type"] == wire.TYPE_HELLO and row["kind"] == "request":
            _, frame = _frame(row)
            (token,) = _generic(frame.app_meta)
            assert wire.hello_metadata(token) == frame.app_meta
            assert token in (None, "s3cret", "wrong")
    unauth = _find("HELLO with a wrong token: UNAUTHENTICATED", "error")
    assert isinstance(wire.decode_error(unauth.app_meta), errors.UnauthenticatedError)


def test_error_classes_of_the_recorded_errors():
    assert isinstance(wire.decode_error(_find("UPDATE_PRODUCTION stale generation: STALE_METADATA", "error").app_meta),
                      errors.StaleMetadataError)
    deadline = wire.decode_error(_find("GET_METADATA fetch that times out: DEADLINE_EXCEEDED", "error").app_meta)
    assert isinstance(deadline, errors.DeadlineExceeded) and isinstance(deadline, TimeoutError)
    assert isinstance(wire.decode_error(_find("unknown message type: UNSUPPORTED_OPERATION", "error").app_meta),
                      errors.UnsupportedOperationError)
    assert isinstance(wire.decode_error(_find("GET stale generation: STALE_METADATA", "error").app_meta),
                      errors.StaleMetadataError)


def test_metadata_values_decode_with_their_extensions():
    req = _find("SET_TAGS merge", "request")
    ((mode, by_pid),) = unpack_meta(req.app_meta)
    assert mode == "MERGE"
    (tags,) = by_pid["train"].values()
    assert tags["big"] == 18446744073709551615 and tags["label"] == "caf\u00e9 \U0001F600"
    assert tags["none"] is None and tags["list"] == [1, "two", True] and tags["n"] == -3
    # this client writes the same bytes for the same update
    assert pack_meta([[mode, by_pid]]) == req.app_meta


BATCH_META_REPLIES = ["GET_METADATA insert", "GET_METADATA fetch with sampling config", "GET_METADATA force_fetch",
                      "GET_PARTITION_META", "RESOLVE_KEYS", "GET_SAMPLE_META"]


@pytest.mark.parametrize("label", BATCH_META_REPLIES)
def test_batch_meta_round_trips_through_the_python_class(label):
    frame = _find(label, "reply")
    meta = BatchMeta.from_wire(unpack_meta(frame.app_meta))
    assert all(g >= 0 for g in meta.generations)
    assert pack_meta(meta.to_wire()) == frame.app_meta


def test_resolve_keys_for_put_reply():
    frame = _find("RESOLVE_KEYS_FOR_PUT", "reply")
    w, created = unpack_meta(frame.app_meta)
    meta = BatchMeta.from_wire(w)
    assert meta.size == 2 and set(created) == set(meta.global_indexes)
    assert pack_meta([meta.to_wire(), created]) == frame.app_meta


@pytest.mark.parametrize("label", ["CHECK_PUT", "UPDATE_PRODUCTION"])
def test_field_schemas_round_trip(label):
    frame = _find(label, "request")
    args = unpack_meta(frame.app_meta)
    schemas = args[1] if label == "CHECK_PUT" else args[0][2]
    py = schemas_from_wire(schemas)
    assert py["y"]["is_nested"] and py["y"]["per_sample_shapes"] == [(1,), (2, 3), (0,)]
    assert py["x"]["dtype"] == torch.float32 and py["z"]["is_non_tensor"]
    assert schemas_to_wire(py) == schemas


class _Recording(TransferQueueClient):
    """The real client with the controller exchange replaced by a recorder."""

    def __init__(self, reply=None, **kw):
        super().__init__("TQ_CLIENT_test", Deployment("127.0.0.1:1", storage_unit_addresses=["127.0.0.1:2"], **kw))
        self.sent = []
        self.reply = reply

    def _ctl(self, type_, args, timeout=None):
        self.sent.append((type_, pack_meta(args)))
        return self.reply


def _client_request(fn, reply=None, **kw):
    c = _Recording(reply, **kw)
    try:
        fn(c)
    except Exception:  # replies are canned; only the request matters here
        pass
    c.close()
    return c.sent[0]


def _hand_meta(c):
    """The samples of the recorded MARK_CLEARING, with their generations."""
    indexes, pids, _, gens = _generic(_find("MARK_CLEARING", "request").app_meta)[0]
    return BatchMeta(indexes, pids, generations=gens)


def test_client_requests_equal_the_java_requests():
    insert_reply = unpack_meta(_find("GET_METADATA insert", "reply").app_meta)
    cases = [
        ("GET_METADATA insert", lambda c: c.get_meta(["x", "y"], 3, "train", mode="insert"), insert_reply, {}),
        ("GET_METADATA fetch with sampling config",
         lambda c: c.get_meta(["x", "z"], 2, "train", mode="fetch", task_name="actor",
                              sampling_config={"dp_rank": 0, "batch_index": 1, "temperature": 0.5}),
         insert_reply, {"fetch_timeout": 2.0}),
        ("GET_METADATA force_fetch", lambda c: c.get_meta(["x"], 0, "train", mode="force_fetch"), insert_reply, {}),
        ("GET_METADATA fetch with a token budget",
         lambda c: c.get_meta(["x"], 2, "train", mode="fetch", task_name="budget_reader", token_budget=4096),
         insert_reply, {"fetch_timeout": 2.0}),
        ("MARK_CLEARING", lambda c: c.clear_samples(_hand_meta(c)), None, {}),
        ("CREATE_PARTITION", None, None, {}),
        ("LIST_PARTITIONS", lambda c: c.get_partition_list(), [], {}),
        ("GET_CONSUMPTION", lambda c: c.get_consumption_status("actor", "train"), None, {}),
        ("RESET_CONSUMPTION", lambda c: c.reset_consumption("train", "actor"), None, {}),
        ("RESET_CONSUMPTION every task", lambda c: c.reset_consumption("train"), None, {}),
        ("GET_PARTITION_META", lambda c: c.clear_partition("train"), None, {}),
        ("RESOLVE_KEYS", lambda c: c.kv_retrieve_meta(["a", "missing"], "kv", create=False), None, {}),
        ("LIST_KEYS", lambda c: c.kv_list(), [{}, None], {}),
        ("STATISTICS", lambda c: c.statistics(), None, {}),
        ("CONTROLLER_ID", lambda c: c.controller_id(), None, {}),
        ("SNAPSHOT_STATE", lambda c: c._ctl(122, []), None, {}),
    ]
    for label, fn, reply, kw in cases:
        if fn is None:
            continue
        expected = _find(label, "request")
        type_, sent = _client_request(fn, reply, **kw)
        assert type_ == expected.header.type, label
        assert sent == expected.app_meta, (label, _generic(sent), _generic(expected.app_meta))


def test_get_production_request_names_partition_then_fields():
    expected = _find("GET_PRODUCTION", "request")
    type_, sent = _client_request(lambda c: c.get_production_status(["x", "y"], "train"))
    assert (type_, sent) == (105, expected.app_meta)


def test_consumption_and_production_replies_become_status_tensors():
    c = _Recording(unpack_meta(_find("GET_CONSUMPTION", "reply").app_meta))
    idx, consumed = c.get_consumption_status("actor", "train")
    assert idx.dtype == torch.long and consumed.dtype == torch.int8 and len(idx) == len(consumed)
    c.reply = unpack_meta(_find("GET_PRODUCTION", "reply").app_meta)
    idx, produced = c.get_production_status(["x", "y"], "train")
    assert produced.shape == (len(idx), 2) and bool(torch.all(produced == 1))
    c.reply = unpack_meta(_find("GET_PRODUCTION unknown partition", "reply").app_meta)
    assert c.get_production_status(["x"], "nowhere") == (None, None)
    c.close()


def _put_columns(frame):
    """The columns of a recorded PUT, rebuilt as this client's put columns."""
    token, gis, gens, fields = _generic(frame.app_meta)
    bodies = frame.bodies
    at = 0
    cols = {}
    for f in fields:
        name, kind = f[0], f[1]
        if kind == OBJECT:
            main, aux = bodies[at], bodies[at + 1:at + 1 + f[3]]
            at += 1 + f[3]
            cols[name] = Column(name, OBJECT, len(gis), values=values.decode_value(main, aux))
            continue
        dtype = to_torch(f[2])
        rows = []
        for shape in f[3]:
            rows.append(_tensor_from_body(bytearray(bodies[at]), dtype, shape))
            at += 1
        if kind == DENSE:
            cols[name] = Column(name, DENSE, len(rows), tensor=torch.stack(rows), dtype=dtype)
        else:
            cols[name] = Column(name, JAGGED, len(rows), row_tensors=rows, dtype=dtype)
    return token, gis, gens, fields, cols


def test_put_of_every_dtype_and_kind_encodes_as_java_does():
    frame = _find("PUT held, every dtype and kind", "request")
    token, gis, gens, fields, cols = _put_columns(frame)
    dtypes_put = {f[2] for f in fields if f[1] != OBJECT}
    assert dtypes_put == {"bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
                          "float64"}
    storage = SimpleStorage(["127.0.0.1:1"], None, 1.0, 1 << 30)
    py_fields, py_bodies, py_addresses = storage._fields_and_bodies(cols, list(range(len(gis))))
    nonempty = [i for i, b in enumerate(py_bodies) if memoryview(b).nbytes]
    assert py_addresses[nonempty].tolist() == shm.addresses_of([py_bodies[i] for i in nonempty]).tolist()
    assert msgpack.packb([token, gis, gens, py_fields], use_bin_type=True) == frame.app_meta
    assert [bytes(b) for b in py_bodies] == [bytes(b) for b in frame.bodies]
    obj = cols["obj"].values
    assert obj[0]["reward"] == 1.5 and obj[0]["ids"].dtype == torch.int32 and obj[0]["tags"] == ["a", "b"]
    assert obj[1][:6] == [None, True, -7, 18446744073709551615, 2.25, "h\u00e9llo \U0001F600"]
    assert obj[1][6] == b"x" * 40


def test_get_reply_carries_the_rows_that_were_put():
    _, gis, gens, fields, cols = _put_columns(_find("PUT held, every dtype and kind", "request"))
    req = _find("GET every field", "request")
    assert _generic(req.app_meta) == [gis, gens, [f[0] for f in fields]]
    reply = _find("GET every field", "reply")
    spec = _generic(reply.app_meta)
    at = 0
    for f, entry in zip(fields, spec):
        col = cols[f[0]]
        if entry[0]:
            assert values.decode_value(reply.bodies[at], reply.bodies[at + 1:at + 1 + entry[2]])[1] == col.values[1]
            at += 1 + entry[2]
            continue
        for i, (kind, dtype, shape) in enumerate(entry[1]):
            assert kind == col.kind and dtype == f[2]
            assert bytes(reply.bodies[at]) == bytes(col.row_view(i))
            at += 1


def test_object_cell_is_a_packed_buffer_this_client_writes_alike():
    frame = _find("WRITE object cell 3.0@obj (packed buffer)", "request")
    (body,) = frame.bodies
    main, aux = values.unpack(body)
    value = values.decode_value(main, aux)
    assert value["text"] == "hi" and value["ids"].dtype == torch.int64
    m2, t2 = values.encode_value(value)
    assert values.pack(m2, t2) == body


def test_store_node_routing_matches_java():
    assert sample_of("3.0@x") == 3 and sample_of("17.2@responses") == 17
    assert sample_of("plain-key") == -1 and sample_of(".0@x") == -1 and sample_of("1234567890123456789.0@x") == -1
    # Java's "plain-key".hashCode() and "caf\u00e9 \U0001F600".hashCode()
    assert java_string_hash("plain-key") == 1971124188
    assert java_string_hash("caf\u00e9 \U0001F600") == 548522946


def test_shared_request_section_with_explicit_offsets_is_written_as_java_writes_it():
    """PROTOCOL.md 4.2's example: bodies of 100, 100 and 10 bytes in grant 1234567 at [0, 100, 256]."""
    from transferqueue_jvm import shm
    section = (VECTORS / "value-shm-request-section.bin").read_bytes()
    offsets, end = shm.request_layout([100, 100, 10])
    assert offsets.tolist() == [0, 100, 256] and end == 266
    mine = wire.pack_body_table([100, 100, 10]) + wire.shared_request_item(1234567, offsets.tolist()) \
        + wire.packb(["x"])
    assert mine == section
    table, item, app = wire.split_shared_section(section, 0)
    assert (table, item, app) == ([100, 100, 10], [1234567, [0, 100, 256]], wire.packb(["x"]))
    frame = wire.shared_frame_prefix(200, 0, 9, wire.packb(["x"]), [100, 100, 10],
                                     wire.shared_request_item(1234567, [0, 100, 256]))
    assert frame[wire.HEADER_LENGTH:wire.HEADER_LENGTH + len(section)] == section


def test_shared_request_layout_is_the_java_clients():
    from transferqueue_jvm import shm
    lengths, expected = msgpack.unpackb((VECTORS / "value-shm-request-layout.msgpack").read_bytes())
    assert len(lengths) == 200 and len(expected) == 201
    offsets, end = shm.request_layout(lengths)
    assert offsets.tolist() == expected[:-1] and end == expected[-1]
