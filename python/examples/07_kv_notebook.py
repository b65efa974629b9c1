"""The key-value notebook (upstream's tutorial/basic.ipynb) as a script.

Upstream's notebook, written for TransferQueue for Java and run top to bottom: kv_put, kv_batch_put,
kv_batch_get, kv_list, partial keys and fields, adding fields, variable-length (jagged) tensors,
variable-size images, non-tensor values, several partitions, kv_clear and close. Differences: no Ray
(``tq.init()`` starts the Java servers); the field selection argument is ``select_fields`` (upstream
0.1.11's name; the notebook's later ``fields=`` is not accepted); a field put as a jagged tensor is
read back as a jagged tensor (upstream reads every tensor field back as a nested tensor), and a field
put dense is read back dense.

Run: ``python 07_kv_notebook.py [--backend SimpleStorage|MooncakeStore]``
"""

import argparse

import torch

import transferqueue_jvm as tq

try:
    from tensordict import TensorDict
    from tensordict.tensorclass import NonTensorStack
except ImportError:  # the notebook's containers are optional here: plain dicts and lists work too
    TensorDict = None


def batch(fields: dict, n: int):
    """A TensorDict when tensordict is installed, else the dict itself."""
    return TensorDict(fields, batch_size=n) if TensorDict is not None else fields


def texts(values: list):
    return NonTensorStack(*values) if TensorDict is not None else list(values)


def check(condition: bool, what: str) -> None:
    if not condition:
        raise SystemExit(f"unexpected: {what}")


def notebook() -> None:
    print("## 2. kv_put: one sample")
    tq.kv_put(key="sample_0", partition_id="train", fields={"input_ids": torch.tensor([1, 2, 3, 4])},
              tag={"source": "wikipedia", "score": 0.95})
    tq.kv_put(key="sample_1", partition_id="train",
              fields={"input_ids": torch.tensor([5, 6, 7, 8]), "attention_mask": torch.ones(4, dtype=torch.long)},
              tag={"source": "books", "score": 0.88})
    print("stored sample_0 and sample_1")

    print("## 3. kv_batch_put: three samples in one call")
    keys = ["batch_0", "batch_1", "batch_2"]
    tq.kv_batch_put(keys=keys, partition_id="train",
                    fields=batch({"input_ids": torch.tensor([[10, 20], [30, 40], [50, 60]]),
                                  "attention_mask": torch.ones(3, 2, dtype=torch.long)}, 3),
                    tags=[{"split": "train", "idx": i} for i in range(3)])

    print("## 4. kv_batch_get")
    one = tq.kv_batch_get(keys="sample_0", partition_id="train")
    print(f"sample_0 input_ids: {one['input_ids']}")
    check(torch.equal(one["input_ids"], torch.tensor([[1, 2, 3, 4]])), "sample_0 round trip")
    three = tq.kv_batch_get(keys=keys, partition_id="train")
    print(f"batch input_ids:\n{three['input_ids']}")

    print("## 5. kv_list")
    for partition, key_tags in tq.kv_list(partition_id="train").items():
        for key, tag in key_tags.items():
            print(f"  {partition}/{key}: {tag}")

    print("## 6. partial keys and partial fields")
    partial = tq.kv_batch_get(keys=["batch_0", "batch_2"], partition_id="train")
    check(partial["input_ids"].tolist() == [[10, 20], [50, 60]], "only the two requested rows")
    only_ids = tq.kv_batch_get(keys="sample_1", partition_id="train", select_fields="input_ids")
    check(list(only_ids.keys()) == ["input_ids"], "only the requested field")
    print(f"partial keys: {partial['input_ids'].tolist()}; partial fields: {list(only_ids.keys())}")

    print("## 7. adding a field to existing keys")
    tq.kv_batch_put(keys=keys, partition_id="train",
                    fields=batch({"response": torch.tensor([[100, 200], [300, 400], [500, 600]])}, 3))
    now = tq.kv_batch_get(keys=keys, partition_id="train")
    print(f"fields now: {sorted(now.keys())}")
    check(sorted(now.keys()) == ["attention_mask", "input_ids", "response"], "earlier fields are kept")

    print("## 8. variable-length (jagged) tensors")
    nested_keys = ["nested_0", "nested_1", "nested_2"]
    responses = [torch.tensor([10, 11, 12]), torch.tensor([20]), torch.tensor([30, 31])]
    tq.kv_batch_put(keys=nested_keys, partition_id="train",
                    fields=batch({"input_ids": torch.tensor([[1, 2], [3, 4], [5, 6]]),
                                  "response": torch.nested.as_nested_tensor(responses, layout=torch.jagged)}, 3),
                    tags=[{"len": 3}, {"len": 1}, {"len": 2}])
    got = tq.kv_batch_get(keys=["nested_0", "nested_2"], partition_id="train")
    rows = list(got["response"].unbind(0))
    print(f"nested_0 and nested_2 responses: {[r.tolist() for r in rows]}")
    check(torch.equal(rows[0], responses[0]) and torch.equal(rows[1], responses[2]), "jagged rows round trip")
    hidden = [torch.randn(2, 3, 4), torch.randn(5, 3, 4), torch.randn(1, 3, 4)]
    nd3d_keys = ["nd3d_0", "nd3d_1", "nd3d_2"]
    tq.kv_batch_put(keys=nd3d_keys, partition_id="train",
                    fields=batch({"input_ids": torch.tensor([[1, 2], [3, 4], [5, 6]]),
                                  "hidden_states": torch.nested.as_nested_tensor(hidden, layout=torch.jagged)}, 3))
    shapes = [tuple(s.shape) for s in tq.kv_batch_get(keys=nd3d_keys, partition_id="train")["hidden_states"].unbind(0)]
    print(f"3-D jagged hidden_states shapes: {shapes}")
    check(shapes == [(2, 3, 4), (5, 3, 4), (1, 3, 4)], "3-D jagged shapes")
    tq.kv_clear(keys=nested_keys, partition_id="train")
    tq.kv_clear(keys=nd3d_keys, partition_id="train")

    print("## 9. a variable number of variable-size images per sample")
    images = [[torch.randn(3, 32, 32), torch.randn(3, 64, 64)], [torch.randn(3, 48, 48)],
              [torch.randn(3, 16, 16), torch.randn(3, 24, 24), torch.randn(3, 32, 64)]]
    image_keys = ["img_sample_0", "img_sample_1", "img_sample_2"]
    pixels = torch.nested.as_nested_tensor([torch.cat([i.flatten() for i in imgs]) for imgs in images],
                                           layout=torch.jagged)
    dims = torch.nested.as_nested_tensor([torch.tensor([list(i.shape) for i in imgs]) for imgs in images],
                                         layout=torch.jagged)
    tq.kv_batch_put(keys=image_keys, partition_id="train",
                    fields=batch({"prompt": torch.tensor([[101, 102], [201, 202], [301, 302]]),
                                  "pixel_data": pixels, "image_shapes": dims}, 3),
                    tags=[{"num_images": len(imgs)} for imgs in images])
    got = tq.kv_batch_get(keys=image_keys, partition_id="train")
    for s, (flat, dim) in enumerate(zip(got["pixel_data"].unbind(0), got["image_shapes"].unbind(0))):
        offset, rebuilt = 0, []
        for c, h, w in dim.tolist():
            rebuilt.append(flat[offset:offset + c * h * w].reshape(c, h, w))
            offset += c * h * w
        print(f"sample {s}: {len(rebuilt)} image(s) {[tuple(i.shape) for i in rebuilt]}")
        check(all(torch.equal(a, b) for a, b in zip(rebuilt, images[s])), f"images of sample {s}")
    tq.kv_clear(keys=image_keys, partition_id="train")

    print("## 10. non-tensor values")
    nt_keys = ["nt_sample_0", "nt_sample_1", "nt_sample_2"]
    prompts = ["Summarise the following article.", "Translate to French:", "Write a poem about rain."]
    metas = [{"source": "wiki", "lang": "en"}, {"source": "books", "lang": "fr"}, {"source": "user", "lang": "en"}]
    tq.kv_batch_put(keys=nt_keys, partition_id="train",
                    fields=batch({"input_ids": torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]]),
                                  "prompt_text": texts(prompts), "metadata": texts(metas)}, 3))
    got = tq.kv_batch_get(keys=nt_keys, partition_id="train")
    print(f"prompt_text: {list(got['prompt_text'])}")
    print(f"metadata: {list(got['metadata'])}")
    check(list(got["prompt_text"]) == prompts and list(got["metadata"]) == metas, "non-tensor values round trip")
    tq.kv_put(key="single_nt", partition_id="train", fields={"label": "positive", "score": torch.tensor([0.99])})
    single = tq.kv_batch_get(keys="single_nt", partition_id="train")
    print(f"single key: label={list(single['label'])} score={single['score'].tolist()}")
    tq.kv_clear(keys=nt_keys, partition_id="train")
    tq.kv_clear(keys="single_nt", partition_id="train")

    print("## 11. several partitions")
    tq.kv_put(key="val_sample_0", partition_id="validation", fields={"input_ids": torch.tensor([99, 98, 97])},
              tag={"split": "val"})
    partitions = sorted(tq.kv_list())
    print(f"all partitions: {partitions}")
    check(partitions == ["train", "validation"], "two partitions")

    print("## 12. kv_clear")
    tq.kv_clear(keys="sample_0", partition_id="train")
    tq.kv_clear(keys="sample_1", partition_id="train")
    tq.kv_clear(keys=keys, partition_id="train")
    tq.kv_clear(keys="val_sample_0", partition_id="validation")
    remaining = sum(len(v) for v in tq.kv_list().values())
    print(f"remaining keys across all partitions: {remaining}")
    check(remaining == 0, "every key cleared")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="SimpleStorage", choices=["SimpleStorage", "MooncakeStore"])
    print("## 1. init")
    tq.init({"controller": {"polling_mode": True},
             "backend": {"storage_backend": parser.parse_args().backend,
                         "SimpleStorage": {"total_storage_size": 200, "num_data_storage_units": 2}}})
    try:
        notebook()
    finally:
        tq.close()
    print("Key-value notebook complete: every section worked")


if __name__ == "__main__":
    main()
