"""Tutorial 4: the controller: partition isolation, dynamic rows and columns, sequential sampling.

Upstream's tutorial/04_understanding_controller.py, written for TransferQueue for Java (the
controller is the Java one that ``tq.init()`` starts, with ``controller.sampler:
SequentialSampler``, the default). It also shows the consumption and production status calls.

Run: ``python 04_understanding_controller.py [--backend SimpleStorage|MooncakeStore]``
"""

import argparse

import torch

import transferqueue_jvm as tq


def check(condition: bool, what: str) -> None:
    if not condition:
        raise SystemExit(f"unexpected: {what}")


def partition_isolation(client) -> None:
    print("[Feature 1] partitions are isolated")
    client.put(data={"input_ids": torch.tensor([[1, 2, 3], [4, 5, 6]]), "labels": torch.tensor([[0], [1]])},
               partition_id="train")
    client.put(data={"input_ids": torch.tensor([[7, 8, 9], [10, 11, 12]]), "labels": torch.tensor([[2], [3]])},
               partition_id="val")
    for pid, task, first in (("train", "train_task", 1), ("val", "val_task", 7)):
        meta = client.get_meta(data_fields=["input_ids", "labels"], batch_size=2, partition_id=pid, task_name=task)
        data = client.get_data(meta)
        print(f"  '{pid}': indexes {meta.global_indexes}, input_ids {data['input_ids'].tolist()}")
        check(int(data["input_ids"][0, 0]) == first, f"partition {pid} returned another partition's rows")
        client.clear_partition(pid)


def dynamic_expansion(client) -> None:
    print("[Feature 2] rows and columns are added at any time")
    meta1 = client.put(data={"field1": torch.tensor([[1, 2], [3, 4]]), "field2": torch.tensor([[5, 6], [7, 8]])},
                       partition_id="dynamic")
    print(f"  put 2 samples: {meta1.global_indexes}")
    meta2 = client.put(data={"field1": torch.tensor([[9, 10], [11, 12], [13, 14]]),
                             "field2": torch.tensor([[15, 16], [17, 18], [19, 20]])}, partition_id="dynamic")
    print(f"  put 3 more: {meta2.global_indexes}")
    everything = client.get_meta(data_fields=["field1", "field2"], batch_size=5, partition_id="dynamic",
                                 task_name="dynamic_task")
    print(f"  a fetch of 5 gets {everything.global_indexes}")
    check(everything.size == 5, "five samples after two puts")
    meta3 = client.put(data={"field3": torch.tensor([[25, 26], [27, 28]])}, metadata=meta1)
    print(f"  a new field for the first 2 samples: {meta3.field_names}")
    _, produced = client.get_production_status(["field1", "field3"], "dynamic")
    print(f"  production status of field1, field3 per sample:\n{produced}")
    check(produced[:, 0].tolist() == [1] * 5 and produced[:, 1].tolist() == [1, 1, 0, 0, 0],
          "field3 is produced for the first two samples only")
    client.clear_partition("dynamic")


def sequential_sampling(client) -> None:
    print("[Feature 3] one task never gets a sample twice; tasks are independent")
    client.put(data={"data": torch.tensor([[i] for i in range(6)])}, partition_id="sampling")
    a1 = client.get_meta(data_fields=["data"], batch_size=3, partition_id="sampling", task_name="A")
    a2 = client.get_meta(data_fields=["data"], batch_size=3, partition_id="sampling", task_name="A")
    b1 = client.get_meta(data_fields=["data"], batch_size=2, partition_id="sampling", task_name="B")
    print(f"  task A: {a1.global_indexes} then {a2.global_indexes}; task B: {b1.global_indexes}")
    check(a1.global_indexes == [0, 1, 2] and a2.global_indexes == [3, 4, 5] and b1.global_indexes == [0, 1],
          "sequential sampling without replacement per task")
    print(f"  task A consumed everything: {client.check_consumption_status('A', 'sampling')}; "
          f"task B: {client.check_consumption_status('B', 'sampling')}")
    client.reset_consumption("sampling", "A")
    again = client.get_meta(data_fields=["data"], batch_size=6, partition_id="sampling", task_name="A")
    print(f"  after reset_consumption('sampling', 'A') task A gets {again.global_indexes} again")
    check(again.global_indexes == list(range(6)), "reset_consumption makes the samples fetchable again")
    client.clear_partition("sampling")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="SimpleStorage", choices=["SimpleStorage", "MooncakeStore"])
    tq.init({"backend": {"storage_backend": parser.parse_args().backend}})
    try:
        client = tq.get_client()
        partition_isolation(client)
        dynamic_expansion(client)
        sequential_sampling(client)
    finally:
        tq.close()
    print("Tutorial 4 complete: isolation, expansion and sequential sampling behaved as described")


if __name__ == "__main__":
    main()
