"""Tutorial 1: the core components, and a put -> get -> clear round trip.

Upstream's tutorial/01_core_components.py, written for TransferQueue for Java. The three components
are the same: the controller (metadata, production and consumption state), the storage backend
(the data) and the client (what you call). Here the controller and the storage are Java server
processes; ``tq.init()`` with no addresses configured starts them from the bundled jar (no Ray) and
``tq.close()`` stops them.

Run: ``python 01_core_components.py [--backend SimpleStorage|MooncakeStore]``
"""

import argparse

import torch

import transferqueue_jvm as tq


def data_workflow() -> None:
    """put -> get_meta -> get_data -> clear_partition on one partition."""
    client = tq.get_client()
    input_ids = torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]])
    attention_mask = torch.ones_like(input_ids)
    batch = {"input_ids": input_ids, "attention_mask": attention_mask}
    partition_id = "tutorial_partition_0"

    print("[Step 1] put: without metadata, the client asks the controller for 4 new samples first")
    written = client.put(data=batch, partition_id=partition_id)
    print(f"  wrote {written.size} samples to '{partition_id}', global indexes {written.global_indexes}")

    print("[Step 2] get_meta: a consumer task asks for ready samples")
    meta = client.get_meta(data_fields=["input_ids", "attention_mask"], batch_size=4, partition_id=partition_id,
                           task_name="tutorial_task")
    print(f"  got metadata of {meta.size} samples: {meta.global_indexes}")

    print("[Step 3] get_data: the rows, read from the storage backend")
    data = client.get_data(meta)
    print(f"  fields: {sorted(data.keys())}")

    print("[Step 4] the data equals what was put")
    for name, expected in batch.items():
        if not torch.equal(data[name], expected):
            raise SystemExit(f"mismatch in field {name}: {data[name]} != {expected}")
    print("  data matches")

    print("[Step 5] clear_partition removes the data and the metadata (clear_samples removes some samples)")
    client.clear_partition(partition_id)
    assert partition_id not in client.get_partition_list()
    print(f"  partitions left: {client.get_partition_list()}")


def storage_backends() -> None:
    print("Storage backends of TransferQueue for Java (backend.storage_backend):")
    print("  1. SimpleStorage (default): in-memory Java storage units, samples spread over them")
    print("  2. MooncakeStore: Java store nodes with Mooncake's semantics (replicas, leases, offload)")
    print("  Upstream's Yuanrong and Ray RDT backends are not provided; a Java backend implements StorageBackend.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="SimpleStorage", choices=["SimpleStorage", "MooncakeStore"])
    backend = parser.parse_args().backend
    conf = tq.init({"backend": {"storage_backend": backend}})
    try:
        print(f"controller at {conf['network']['controller_address']}, backend {backend}")
        data_workflow()
        storage_backends()
    finally:
        tq.close()
    print("Tutorial 1 complete: put, get and clear worked")


if __name__ == "__main__":
    main()
