"""Tutorial 5: samplers: how a fetch chooses its samples.

Upstream's tutorial/05_custom_sampler.py writes Python ``BaseSampler`` subclasses (random with and
without replacement, priority sampling) and passes the instances to the controller. **That does not
apply here:** the controller is a Java process and cannot run Python code; its sampler is chosen by
name when it starts (``controller.sampler``: ``SequentialSampler``, ``GRPOGroupNSampler``,
``RankAwareSampler``, ``SeqlenBalancedSampler``, or the class name of a Java ``Sampler`` on the
server's class path, see tq-examples' CustomSamplerExample.java), with ``controller.sampler_args``.
This script does the closest things that Python code can do:

1. a built-in sampler chosen by config: ``GRPOGroupNSampler`` with ``n_samples_per_prompt: 2``
   serves whole prompt groups;
2. upstream's three policies as *client-side* samplers: ``get_meta(mode="force_fetch")`` returns the
   metadata of every sample without consuming anything, the policy picks rows, and ``get_data``
   reads exactly those (``select_samples``). Consumption tracking stays with the client here: the
   controller's consumed flags are not set by a client-side pick.

Run: ``python 05_custom_sampler.py [--backend SimpleStorage|MooncakeStore]``
"""

import argparse

import numpy as np
import torch

import transferqueue_jvm as tq
from transferqueue_jvm import BatchMeta

SEED = 7


def check(condition: bool, what: str) -> None:
    if not condition:
        raise SystemExit(f"unexpected: {what}")


def built_in_group_sampler(backend: str) -> None:
    print("[Example 1] controller.sampler: GRPOGroupNSampler, n_samples_per_prompt 2")
    tq.init({"controller": {"sampler": "GRPOGroupNSampler", "sampler_args": {"n_samples_per_prompt": 2}},
             "backend": {"storage_backend": backend}})
    try:
        client = tq.get_client()
        # Three prompts, two responses each, written prompt after prompt.
        written = client.put(data={"response": torch.tensor([[p * 10 + r] for p in range(3) for r in range(2)])},
                             partition_id="grpo")
        client.set_custom_meta(_with_tags(written, [{"group_id": i // 2} for i in range(6)]))
        first = client.get_meta(data_fields=["response"], batch_size=4, partition_id="grpo", task_name="actor")
        rows = client.get_data(first)["response"].flatten().tolist()
        print(f"  a fetch of 4 gets two whole groups: indexes {first.global_indexes}, responses {rows}")
        check(rows == [0, 1, 10, 11], "whole prompt groups, oldest first")
        other = client.get_meta(data_fields=["response"], batch_size=4, partition_id="grpo", task_name="critic")
        print(f"  another task consumes independently and gets the same groups: {other.global_indexes}")
        rest = client.get_meta(data_fields=["response"], batch_size=2, partition_id="grpo", task_name="actor")
        print(f"  the actor's next fetch of 2 gets the last group: {rest.global_indexes}")
        check(client.get_data(rest)["response"].flatten().tolist() == [20, 21], "the third group")
        client.clear_partition("grpo")
    finally:
        tq.close()


def _with_tags(meta: BatchMeta, tags: list[dict]) -> BatchMeta:
    meta.update_custom_meta(tags)
    return meta


class RandomWithReplacement:
    """Upstream's first policy: random samples, nothing consumed (batches may repeat samples)."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def sample(self, ready: list[int], batch_size: int) -> list[int]:
        return self.rng.choice(ready, size=batch_size, replace=False).tolist() if len(ready) >= batch_size else []


class RandomWithoutReplacement(RandomWithReplacement):
    """Upstream's second policy: random samples, each consumed once (remembered by this client)."""

    def __init__(self, seed: int):
        super().__init__(seed)
        self.consumed: set[int] = set()

    def sample(self, ready: list[int], batch_size: int) -> list[int]:
        picked = super().sample([i for i in ready if i not in self.consumed], batch_size)
        self.consumed.update(picked)
        return picked


class PrioritySampler(RandomWithoutReplacement):
    """Upstream's third policy: samples drawn with probability proportional to a priority score."""

    def sample(self, ready: list[int], batch_size: int, priority_scores=None) -> list[int]:
        left = [i for i in ready if i not in self.consumed]
        if len(left) < batch_size:
            return []
        weights = np.ones(len(left)) if priority_scores is None else np.asarray([priority_scores[i] for i in left])
        picked = self.rng.choice(left, size=batch_size, replace=False, p=weights / weights.sum()).tolist()
        self.consumed.update(picked)
        return picked


def fetch_with(client, sampler, partition_id: str, batch_size: int, **kwargs):
    """A client-side fetch: every sample's metadata, the policy's pick, the picked rows."""
    everything = client.get_meta(data_fields=["input"], batch_size=batch_size, partition_id=partition_id,
                                 mode="force_fetch")
    position = {gi: i for i, gi in enumerate(everything.global_indexes)}
    picked = sampler.sample(everything.global_indexes, batch_size, **kwargs)
    meta = everything.select_samples([position[gi] for gi in picked])
    rows = client.get_data(meta)["input"].flatten().tolist() if meta.size else []
    return meta.global_indexes, rows


def client_side_samplers(backend: str) -> None:
    tq.init({"backend": {"storage_backend": backend}})
    try:
        client = tq.get_client()
        written = client.put(data={"input": torch.arange(8).unsqueeze(1)}, partition_id="test")
        value_of = dict(zip(written.global_indexes, range(8)))

        print("[Example 2] random with replacement (client-side)")
        sampler = RandomWithReplacement(SEED)
        batches = [fetch_with(client, sampler, "test", n) for n in (2, 1, 2)]
        for indexes, rows in batches:
            print(f"  indexes {indexes} rows {rows}")
            check(rows == [value_of[i] for i in indexes], "rows are those of the picked samples")

        print("[Example 3] random without replacement (client-side)")
        sampler = RandomWithoutReplacement(SEED)
        batches = [fetch_with(client, sampler, "test", n) for n in (3, 1, 4, 1)]
        for indexes, rows in batches:
            print(f"  indexes {indexes} rows {rows}")
        seen = [i for indexes, _ in batches for i in indexes]
        check(len(seen) == len(set(seen)) == 8 and batches[-1][0] == [], "each sample once, then none left")

        print("[Example 4] priority sampling (client-side), priority_scores passed with each fetch")
        scores = {gi: s for gi, s in zip(written.global_indexes, [0.01, 0.01, 88, 999, 0.01, 0.01, 0.01, 10])}
        sampler = PrioritySampler(SEED)
        top, rows = fetch_with(client, sampler, "test", 1, priority_scores=scores)
        more, _ = fetch_with(client, sampler, "test", 2, priority_scores=scores)
        print(f"  first pick {top} (score {scores[top[0]]}), then {more} (scores {[scores[i] for i in more]})")
        check(scores[top[0]] >= 10, "a high-priority sample first")
        client.clear_partition("test")
    finally:
        tq.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="SimpleStorage", choices=["SimpleStorage", "MooncakeStore"])
    backend = parser.parse_args().backend
    built_in_group_sampler(backend)
    client_side_samplers(backend)
    print("Tutorial 5 complete: a built-in sampler by config and three client-side sampling policies worked")


if __name__ == "__main__":
    main()
