package org.transferqueue.examples;

import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import org.transferqueue.client.KvApi;
import org.transferqueue.client.TransferQueueSystem;
import org.transferqueue.config.TqConfig;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakPolicy;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;

/**
 * US-2 "Redis-style KV": a driver addresses samples by key ({@code "<uid>_<session>"}) in partition
 * {@code Train}, keeps a tag map per key, appends columns to some keys, reads columns by key and
 * clears keys.
 *
 * <p>The key-value API has no production or consumption tracking and no sampler: the driver decides
 * which keys go where.
 */
public final class RedisStyleKvExample {
  static final String PARTITION = "Train";
  static final List<String> BATCH_KEYS = List.of("1_0", "1_1", "1_2", "2_0");
  static final List<String> ALL_KEYS = List.of("0_0", "1_0", "1_1", "1_2", "2_0");

  private RedisStyleKvExample() {}

  /**
   * What the example observed.
   *
   * @param listing the keys and tags of every partition after the writes
   * @param inputIds {@code input_ids} of every key, in key order
   * @param defaultFields the fields a read without a selection returned
   * @param remainingKeys the keys left after clearing the first two
   */
  record Outcome(
      Map<String, Map<String, Map<String, Object>>> listing,
      long[][] inputIds,
      List<String> defaultFields,
      List<String> remainingKeys) {}

  /**
   * Runs the example.
   *
   * @param args ignored
   */
  public static void main(String[] args) {
    run(System.out);
  }

  /**
   * Runs the example, printing each step.
   *
   * @param out where to print
   * @return what the example observed
   */
  static Outcome run(PrintStream out) {
    try (TransferQueueSystem tq =
        TransferQueueSystem.builder()
            .config(TqConfig.defaults())
            .leakPolicy(LeakPolicy.THROW)
            .start()) {
      KvApi kv = tq.kv();
      BufferAllocator allocator = tq.allocator();

      try (Tensor ids = Tensor.ofLongs(allocator, DType.INT64, new long[] {1, 2, 3}, 3);
          Tensor mask = Tensors.ones(allocator, DType.INT64, 3)) {
        kv.put(
            "0_0",
            PARTITION,
            Map.of("input_ids", ids, "attention_mask", mask),
            Map.of("global_steps", 0L, "status", "running", "model_version", 0L));
      }
      out.println("kv put '0_0' with input_ids [1, 2, 3], a mask and tag status=running");

      try (Batch four =
          Batch.builder()
              .dense(
                  "input_ids",
                  Tensors.longs(
                      allocator,
                      new long[] {4, 5, 6},
                      new long[] {7, 8, 9},
                      new long[] {10, 11, 12},
                      new long[] {13, 14, 15}))
              .dense("attention_mask", Tensors.ones(allocator, DType.INT64, 4, 3))
              .build()) {
        Map<String, Object> tag =
            Map.of("global_steps", 1L, "status", "running", "model_version", 1L);
        kv.batchPut(BATCH_KEYS, PARTITION, four, List.of(tag, tag, tag, tag));
      }
      out.println("kv batch put " + BATCH_KEYS + " with 4x3 input_ids and masks");

      try (Batch responses =
          Batch.builder()
              .dense(
                  "response", Tensors.longs(allocator, new long[] {4, 5, 6}, new long[] {7, 8, 9}))
              .build()) {
        Map<String, Object> done =
            Map.of("global_steps", 1L, "status", "finish", "model_version", 1L);
        kv.batchPut(List.of("1_1", "2_0"), PARTITION, responses, List.of(done, done));
      }
      out.println("appended a 'response' column to 1_1 and 2_0 only, status=finish");

      kv.put("0_0", PARTITION, (Batch) null, Map.of("status", "finish"));
      out.println("updated the tag of 0_0 to status=finish without writing data");

      Map<String, Map<String, Map<String, Object>>> listing = kv.list(null);
      listing.forEach(
          (partition, keys) -> {
            out.println("partition '" + partition + "':");
            keys.forEach((key, tags) -> out.println("  " + key + " -> " + tags));
          });

      long[][] inputIds;
      try (Batch read = kv.batchGet(ALL_KEYS, PARTITION, List.of("input_ids"))) {
        inputIds = Tensors.longRows(read.column("input_ids"));
      }
      out.println("input_ids of " + ALL_KEYS + ": " + Tensors.text(inputIds));

      List<String> defaultFields;
      try (Batch read = kv.batchGet(ALL_KEYS, PARTITION, null)) {
        defaultFields = read.fields().stream().sorted().toList();
      }
      out.println(
          "reading every field of all keys returns "
              + defaultFields
              + " ('response' is not on every key)");

      kv.clear(ALL_KEYS.subList(0, 2), PARTITION);
      List<String> remaining = List.copyOf(kv.list(PARTITION).get(PARTITION).keySet());
      out.println("cleared " + ALL_KEYS.subList(0, 2) + "; keys left: " + remaining);
      return new Outcome(listing, inputIds, defaultFields, remaining);
    }
  }
}
