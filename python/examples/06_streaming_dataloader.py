"""Tutorial 6: StreamingDataLoader for data-parallel training.

Upstream's tutorial/06_streaming_dataloader.py, written for TransferQueue for Java. Upstream runs
its producers and trainers as Ray actors and passes the ``RankAwareSampler`` class in the config;
here they are plain processes (``multiprocessing``) that connect to the Java servers this script
starts, each calling ``tq.init(conf)`` with the configuration the first ``tq.init`` returned (it names
the servers' addresses, so it connects and starts nothing), and the sampler is named in the config
(``controller.sampler: RankAwareSampler``).

* 2 producer processes put 20 samples each into partition ``train``, one at a time.
* 4 trainer processes form 2 data-parallel groups (``dp_rank`` 0, 0, 1, 1). Each iterates a
  ``StreamingDataLoader(num_workers=2, prefetch_factor=2)`` over a ``StreamingDataset`` with
  ``batch_size=2``: the two ranks of one group receive identical batches, the groups disjoint ones.
* Upstream's trainers stop after a fixed number of steps; here they stop when everything is
  consumed (``should_check_consumption_status=True``). So that a trainer does not stop while the
  producers are still writing, the partition's 40 indexes are pre-allocated
  (``controller.prealloc_sample_num``, upstream's ``TQ_PRE_ALLOC_SAMPLE_NUM``): a pre-allocated
  index counts as not yet consumed until it is written and read.
* Each trainer reports the samples it saw through the key-value API (partition ``results``).

Run: ``python 06_streaming_dataloader.py [--backend SimpleStorage|MooncakeStore]``
"""

import argparse
import multiprocessing

import torch

import transferqueue_jvm as tq
from transferqueue_jvm import StreamingDataLoader, StreamingDataset

PRODUCERS, SAMPLES_PER_PRODUCER = 2, 20
DP_RANKS = [0, 0, 1, 1]  # the data-parallel group of each trainer rank
JOIN_TIMEOUT = 120.0


def producer(conf: dict, producer_id: int) -> None:
    """Puts samples one at a time; sample ``seq`` has input_ids full of ``seq`` and meta_idx ``seq``."""
    tq.init(conf)  # the config names the servers' addresses: this connects, it starts nothing
    client = tq.get_client()
    for i in range(SAMPLES_PER_PRODUCER):
        seq = producer_id * 10000 + i
        client.put({"input_ids": torch.full((1, 16), seq, dtype=torch.long), "meta_idx": torch.tensor([seq])},
                   partition_id="train")
    tq.close()


def trainer(conf: dict, rank: int, dp_rank: int) -> None:
    """Iterates the stream of its data-parallel group and records the micro-batches it saw."""
    tq.init(conf)
    dataset = StreamingDataset(conf, batch_size=2, micro_batch_size=2, data_fields=["meta_idx"],
                               partition_id="train", task_name="update_task", dp_rank=dp_rank,
                               should_check_consumption_status=True, poll_interval=0.2)
    loader = StreamingDataLoader(dataset, num_workers=2, prefetch_factor=2)
    batches = []
    for batch, meta in loader:
        ids = batch["meta_idx"].view(-1).tolist()
        if len(ids) != meta.size:
            raise SystemExit(f"rank {rank}: {len(ids)} rows but metadata of {meta.size} samples")
        batches.append(sorted(ids))
    tq.kv_put(key=f"rank{rank}", partition_id="results", fields={"batches": sorted(batches)},
              tag={"dp_rank": dp_rank})
    tq.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="SimpleStorage", choices=["SimpleStorage", "MooncakeStore"])
    backend = parser.parse_args().backend
    total = PRODUCERS * SAMPLES_PER_PRODUCER
    conf = tq.init({"controller": {"sampler": "RankAwareSampler", "polling_mode": True,
                                   "prealloc_sample_num": total},
                    "backend": {"storage_backend": backend}})
    try:
        ctx = multiprocessing.get_context("fork")  # the children need not import torch again
        procs = [ctx.Process(target=producer, args=(conf, p), name=f"producer-{p}") for p in range(PRODUCERS)]
        procs += [ctx.Process(target=trainer, args=(conf, r, d), name=f"trainer-{r}") for r, d in enumerate(DP_RANKS)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(JOIN_TIMEOUT)
            if p.is_alive():
                p.kill()
                raise SystemExit(f"{p.name} did not finish within {JOIN_TIMEOUT} s")
            if p.exitcode != 0:
                raise SystemExit(f"{p.name} failed with exit code {p.exitcode}")

        keys = [f"rank{r}" for r in range(len(DP_RANKS))]
        results = tq.kv_batch_get(keys, "results")
        seen = {r: [tuple(b) for b in results["batches"][r]] for r in range(len(DP_RANKS))}
        for r, dp in enumerate(DP_RANKS):
            print(f"rank {r} (dp_rank {dp}): {len(seen[r])} micro-batches, samples "
                  f"{sorted(i for b in seen[r] for i in b)}")
        group = {dp: [seen[r] for r, d in enumerate(DP_RANKS) if d == dp] for dp in set(DP_RANKS)}
        for dp, ranks in group.items():
            if any(s != ranks[0] for s in ranks):
                raise SystemExit(f"the ranks of dp group {dp} saw different batches")
        ids = {dp: [i for b in ranks[0] for i in b] for dp, ranks in group.items()}
        everything = sorted(i for g in ids.values() for i in g)
        expected = sorted(p * 10000 + i for p in range(PRODUCERS) for i in range(SAMPLES_PER_PRODUCER))
        if everything != expected:
            raise SystemExit(f"the groups together did not see every sample exactly once: {everything}")
        print(f"ranks of one dp group saw identical batches; the {len(group)} groups saw disjoint samples, "
              f"{total} in all, each once")
    finally:
        tq.close()
    print("Tutorial 6 complete: streaming data-parallel loading worked")


if __name__ == "__main__":
    main()
