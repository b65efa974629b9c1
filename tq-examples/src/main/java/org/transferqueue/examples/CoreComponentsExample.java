package org.transferqueue.examples;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;
import org.transferqueue.client.MetaClient;
import org.transferqueue.client.TransferQueueSystem;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakPolicy;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;

/**
 * US-1 "Core components": the controller keeps metadata and status, storage keeps the data, the
 * client moves data between them. Data lives in partitions; samples have fields and a global index.
 *
 * <p>Starts a system with the defaults, writes 4 samples ({@code input_ids}, {@code
 * attention_mask}) into {@code tutorial_partition_0}, fetches metadata of 4 ready samples for task
 * {@code tutorial_task}, reads the data, checks it row by row, clears the partition and closes.
 */
public final class CoreComponentsExample {
  static final String PARTITION = "tutorial_partition_0";
  static final String TASK = "tutorial_task";
  static final long[][] INPUT_IDS = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {10, 11, 12}};

  private CoreComponentsExample() {}

  /**
   * What the example observed.
   *
   * @param fetchedIndexes the global indexes the fetch returned
   * @param readInputIds the {@code input_ids} rows read back
   * @param rowsMatch whether every row read equals the row written
   * @param partitionsAfterClear the partitions left after clearing
   */
  record Outcome(
      List<Long> fetchedIndexes,
      long[][] readInputIds,
      boolean rowsMatch,
      List<String> partitionsAfterClear) {}

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
    out.println("Starting TransferQueue with the default configuration (embedded)");
    try (TransferQueueSystem tq =
        TransferQueueSystem.builder()
            .config(TqConfig.defaults())
            .leakPolicy(LeakPolicy.THROW)
            .start()) {
      MetaClient client = tq.client();
      BufferAllocator allocator = tq.allocator();

      try (Batch batch =
          Batch.builder()
              .dense("input_ids", Tensors.longs(allocator, INPUT_IDS))
              .dense("attention_mask", Tensors.ones(allocator, DType.INT64, 4, 3))
              .build()) {
        BatchMeta written = client.put(batch, PARTITION);
        out.println(
            "Put 4 samples into '"
                + PARTITION
                + "': global indexes "
                + written.globalIndexes()
                + ", fields "
                + written.fieldNames());

        BatchMeta ready =
            client.getMeta(
                GetMetadataRequest.fetch(
                    PARTITION, List.of("input_ids", "attention_mask"), TASK, 4));
        out.println(
            "Controller handed task '"
                + TASK
                + "' metadata of "
                + ready.size()
                + " ready samples: "
                + ready.globalIndexes());

        long[][] read;
        boolean match = true;
        try (Batch data = client.getData(ready)) {
          read = Tensors.longRows(data.column("input_ids"));
          long[][] mask = Tensors.longRows(data.column("attention_mask"));
          for (int r = 0; r < read.length; r++) {
            // The fetch returns samples in ascending global index, the order they were written.
            int writtenRow = written.globalIndexes().indexOf(ready.globalIndex(r));
            boolean same =
                Arrays.equals(read[r], INPUT_IDS[writtenRow])
                    && Arrays.stream(mask[r]).allMatch(v -> v == 1);
            match &= same;
            out.println(
                "  sample "
                    + ready.globalIndex(r)
                    + ": input_ids="
                    + Arrays.toString(read[r])
                    + " attention_mask="
                    + Arrays.toString(mask[r])
                    + (same ? "  (as written)" : "  (DIFFERENT)"));
          }
        }

        client.clearPartition(PARTITION);
        List<String> left = client.getPartitionList();
        out.println("Cleared '" + PARTITION + "'; partitions left: " + left);
        out.println("Closing TransferQueue");
        return new Outcome(ready.globalIndexes(), read, match, left);
      }
    }
  }
}
