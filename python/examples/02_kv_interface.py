"""Tutorial 2: the key-value API (kv_put, kv_batch_put, kv_list, kv_batch_get, kv_clear).

Upstream's tutorial/02_kv_interface.py, written for TransferQueue for Java: samples addressed by
your own string keys, with per-key tags, over the Java controller and storage that ``tq.init()``
starts. Every call has an ``async_`` twin (``await tq.async_kv_batch_get(...)``).

Run: ``python 02_kv_interface.py [--backend SimpleStorage|MooncakeStore]``
"""

import argparse

import torch

import transferqueue_jvm as tq


def kv_api() -> None:
    partition_id = "Train"

    print("[Step 1] kv_put: one sample under a key of your choice, with a tag")
    tag = {"global_steps": 0, "status": "running", "model_version": 0}
    tq.kv_put(key="0_0", partition_id=partition_id,
              fields={"input_ids": torch.tensor([1, 2, 3]), "attention_mask": torch.ones(3)}, tag=tag)
    print(f"  key '0_0' with fields input_ids, attention_mask and tag {tag}")

    print("[Step 2] kv_batch_put: several keys at once, one row each")
    keys = ["1_0", "1_1", "1_2", "2_0"]
    input_ids = torch.tensor([[4, 5, 6], [7, 8, 9], [10, 11, 12], [13, 14, 15]])
    tq.kv_batch_put(keys=keys, partition_id=partition_id,
                    fields={"input_ids": input_ids, "attention_mask": torch.ones(4, 3)},
                    tags=[{"global_steps": 1, "status": "running", "model_version": 1} for _ in keys])
    print(f"  keys {keys}")

    print("[Step 3] kv_batch_put of a new field for some keys: the other fields stay")
    response = torch.tensor([[4, 5, 6], [7, 8, 9]])
    tq.kv_batch_put(keys=["1_1", "2_0"], partition_id=partition_id, fields={"response": response},
                    tags=[{"global_steps": 1, "status": "finish", "model_version": 1}] * 2)
    print("  '1_1' and '2_0' now have input_ids, attention_mask and response")

    print("[Step 4] kv_put with fields=None: only the tag changes")
    tq.kv_put(key="0_0", partition_id=partition_id, fields=None,
              tag={"global_steps": 0, "status": "finish", "model_version": 0})

    print("[Step 5] kv_list: keys and tags per partition")
    listing = tq.kv_list()
    for pid, keys_and_tags in listing.items():
        for k, t in keys_and_tags.items():
            print(f"  partition {pid}: key '{k}' tag {t}")
    if listing[partition_id]["0_0"]["status"] != "finish":
        raise SystemExit(f"the tag of '0_0' was not updated: {listing[partition_id]['0_0']}")

    print("[Step 6] kv_batch_get of one field only")
    all_keys = list(listing[partition_id])
    only_ids = tq.kv_batch_get(keys=all_keys, partition_id=partition_id, select_fields="input_ids")
    print(f"  fields {list(only_ids.keys())}, input_ids of '2_0': {only_ids['input_ids'][all_keys.index('2_0')]}")

    print("[Step 7] kv_batch_get of the fields every key has")
    both = tq.kv_batch_get(keys=["1_1", "2_0"], partition_id=partition_id)
    print(f"  '1_1' and '2_0' have {sorted(both.keys())}")
    if not torch.equal(both["response"], response):
        raise SystemExit(f"response mismatch: {both['response']}")

    print("[Step 8] kv_clear of two keys")
    tq.kv_clear(keys=all_keys[:2], partition_id=partition_id)
    remaining = list(tq.kv_list(partition_id=partition_id)[partition_id])
    print(f"  cleared {all_keys[:2]}, remaining {remaining}")
    if sorted(remaining) != sorted(all_keys[2:]):
        raise SystemExit(f"unexpected keys after kv_clear: {remaining}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="SimpleStorage", choices=["SimpleStorage", "MooncakeStore"])
    tq.init({"backend": {"storage_backend": parser.parse_args().backend}})
    try:
        kv_api()
    finally:
        tq.close()
    print("Tutorial 2 complete: the key-value API worked")


if __name__ == "__main__":
    main()
