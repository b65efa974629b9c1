"""Tutorial 3: the metadata system (BatchMeta) and a workflow that uses it.

Upstream's tutorial/03_metadata_concepts.py, written for TransferQueue for Java. ``BatchMeta`` is
columnar: ``global_indexes``, ``partition_ids``, a ``field_schema`` (dtype, per-sample shape,
is_nested, is_non_tensor per field), per-sample ``custom_meta`` (stored at the controller as the
samples' tags) and batch-level ``extra_info``. Operations: add_fields, select_fields,
select_samples, reorder, chunk, concat, union. Our BatchMeta also carries each sample's
generation, which lets the servers refuse metadata of samples cleared in the meantime.

Run: ``python 03_metadata_concepts.py [--backend SimpleStorage|MooncakeStore]``
"""

import argparse
import uuid

import numpy as np
import torch

import transferqueue_jvm as tq
from transferqueue_jvm import BatchMeta


def schema(dtype, shape):
    return {"dtype": dtype, "shape": shape, "is_nested": False, "is_non_tensor": False}


def make_batch(global_indexes, fields=("input_ids", "attention_mask", "responses")) -> BatchMeta:
    all_fields = {"input_ids": schema(torch.int64, (512,)), "attention_mask": schema(torch.int64, (512,)),
                  "responses": schema(torch.int64, (128,))}
    return BatchMeta(global_indexes=list(global_indexes), partition_ids=["train_0"] * len(global_indexes),
                     field_schema={k: v for k, v in all_fields.items() if k in fields})


def field_schema_basics() -> None:
    print("[Schema 1] a BatchMeta with one field; shape is ONE sample's shape")
    batch = make_batch([0, 1, 2], fields=("input_ids",))
    print(f"  input_ids: {batch.field_schema['input_ids']}, is_ready={batch.is_ready}")
    print("[Schema 2] production_status 1 = ready for consumption")
    ready = BatchMeta(global_indexes=[0, 1, 2], partition_ids=["train_0"] * 3,
                      field_schema={"input_ids": schema(torch.int64, (512,))},
                      production_status=np.array([1, 1, 1], dtype="int8"))
    print(f"  not ready: {batch.is_ready}, ready: {ready.is_ready}")
    if batch.is_ready or not ready.is_ready:
        raise SystemExit("is_ready does not follow production_status")
    print("[Schema 3] per-sample views")
    view = ready.samples[0]
    print(f"  samples[0].fields['input_ids']['dtype'] = {view.fields['input_ids']['dtype']}")


def operations() -> None:
    batch = make_batch(range(5), fields=("input_ids", "attention_mask"))
    print(f"[Op 1] built: {len(batch)} samples, fields {batch.field_names}")
    batch.add_fields({"responses": torch.randint(0, 1000, (5, 128)), "log_probs": torch.randn(5, 128)})
    print(f"[Op 2] add_fields: now {batch.field_names}, is_ready={batch.is_ready}")
    batch.extra_info["epoch"] = 1
    batch.update_custom_meta([{"uid": f"prompt@{i}", "session_id": "session@0"} for i in range(5)])
    print(f"[Op 3] extra_info {batch.get_all_extra_info()}, custom_meta[0] {batch.custom_meta[0]}")
    print(f"[Op 4] select_fields -> {batch.select_fields(['input_ids', 'responses']).field_names}")
    print(f"[Op 5] select_samples([0, 2, 4]) -> {batch.select_samples([0, 2, 4]).global_indexes}")
    batch.reorder([4, 3, 2, 1, 0])
    print(f"[Op 6] reorder -> {batch.global_indexes}")
    chunks = make_batch(range(10)).chunk(3)
    print(f"[Op 7] chunk(3) of 10 -> {[c.global_indexes for c in chunks]}")
    joined = BatchMeta.concat([make_batch(range(3)), make_batch(range(3, 6))])
    print(f"[Op 8] concat -> {joined.global_indexes}")
    unioned = make_batch(range(3), ("input_ids", "attention_mask")).union(
        make_batch(range(3), ("attention_mask", "responses")))
    print(f"[Op 9] union -> fields {unioned.field_names}")
    print(f"[Op 10] BatchMeta.empty(): size {BatchMeta.empty().size}")
    if [len(c) for c in chunks] != [4, 3, 3] or joined.global_indexes != list(range(6)):
        raise SystemExit("chunk/concat gave unexpected results")


def real_workflow() -> None:
    client = tq.get_client()
    partition_id = "demo_partition"
    data = {"input_ids": torch.randint(0, 1000, (8, 512)), "attention_mask": torch.ones(8, 512)}
    print("[Step 1] put 8 samples")
    meta = client.put(data=data, partition_id=partition_id)
    print(f"  {meta}")
    print("[Step 2] custom_meta per sample, stored at the controller with set_custom_meta")
    meta.update_custom_meta([{"uid": uuid.uuid4().hex[:4], "model_version": 0} for _ in range(meta.size)])
    client.set_custom_meta(meta)
    print("[Step 3] another process gets the metadata, custom_meta included")
    fetched = client.get_meta(data_fields=["input_ids", "attention_mask"], batch_size=8, partition_id=partition_id,
                              task_name="demo_task")
    print(f"  {len(fetched)} samples, fields {fetched.field_names}, custom_meta[0] {fetched.custom_meta[0]}")
    if fetched.get_all_custom_meta() != meta.get_all_custom_meta():
        raise SystemExit("custom_meta did not round-trip through the controller")
    print("[Step 4] select_fields: read input_ids only")
    only_ids = client.get_data(fetched.select_fields(["input_ids"]))
    print(f"  keys {list(only_ids.keys())}")
    print("[Step 5] select_samples([0, 2, 4, 6]): read four rows")
    part = client.get_data(fetched.select_samples([0, 2, 4, 6]))
    if not torch.equal(part["input_ids"], data["input_ids"][[0, 2, 4, 6]]):
        raise SystemExit("select_samples read the wrong rows")
    print("  rows 0, 2, 4, 6 match what was put")
    print("[Step 6] chunk(2): read each half")
    for i, chunk in enumerate(fetched.chunk(2)):
        rows = client.get_data(chunk)
        print(f"  chunk {i}: indexes {chunk.global_indexes}, input_ids shape {tuple(rows['input_ids'].shape)}")
    client.clear_partition(partition_id)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="SimpleStorage", choices=["SimpleStorage", "MooncakeStore"])
    backend = parser.parse_args().backend
    field_schema_basics()
    operations()
    tq.init({"backend": {"storage_backend": backend}})
    try:
        real_workflow()
    finally:
        tq.close()
    print("Tutorial 3 complete: BatchMeta operations and the metadata workflow worked")


if __name__ == "__main__":
    main()
