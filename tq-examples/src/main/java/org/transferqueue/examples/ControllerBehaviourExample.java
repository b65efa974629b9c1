package org.transferqueue.examples;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import org.transferqueue.client.MetaClient;
import org.transferqueue.client.TransferQueueSystem;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakPolicy;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.tensor.Batch;

/**
 * US-4 "Controller behaviour", in three parts, each on a freshly started system: (a) partitions are
 * isolated, (b) partitions grow by rows and by columns, (c) the default sampler hands each task the
 * ready samples in order, and tasks consume independently.
 */
public final class ControllerBehaviourExample {
  private ControllerBehaviourExample() {}

  /**
   * What the example observed.
   *
   * @param trainIds {@code input_ids} fetched from {@code train}
   * @param valIds {@code input_ids} fetched from {@code val}
   * @param dynamicFetched the number of samples a fetch of 5 returned from {@code dynamic}
   * @param field3Produced for each of the 5 samples of {@code dynamic}, whether {@code field3} is
   *     produced, in global-index order
   * @param taskAFirst global indexes of task A's first fetch of 3
   * @param taskASecond global indexes of task A's second fetch of 3
   * @param taskB global indexes of task B's fetch of 2
   */
  record Outcome(
      long[][] trainIds,
      long[][] valIds,
      int dynamicFetched,
      List<Boolean> field3Produced,
      List<Long> taskAFirst,
      List<Long> taskASecond,
      List<Long> taskB) {}

  /**
   * Runs the example.
   *
   * @param args ignored
   */
  public static void main(String[] args) {
    run(System.out);
  }

  private static TransferQueueSystem start() {
    return TransferQueueSystem.builder()
        .config(TqConfig.defaults())
        .leakPolicy(LeakPolicy.THROW)
        .start();
  }

  /**
   * Runs the example, printing each step.
   *
   * @param out where to print
   * @return what the example observed
   */
  static Outcome run(PrintStream out) {
    long[][] trainIds;
    long[][] valIds;
    out.println("(a) partition isolation");
    try (TransferQueueSystem tq = start()) {
      MetaClient client = tq.client();
      BufferAllocator allocator = tq.allocator();
      try (Batch train =
              Batch.builder()
                  .dense(
                      "input_ids",
                      Tensors.longs(allocator, new long[] {1, 2, 3}, new long[] {4, 5, 6}))
                  .dense("labels", Tensors.longs(allocator, new long[] {0}, new long[] {1}))
                  .build();
          Batch val =
              Batch.builder()
                  .dense(
                      "input_ids",
                      Tensors.longs(allocator, new long[] {7, 8, 9}, new long[] {10, 11, 12}))
                  .dense("labels", Tensors.longs(allocator, new long[] {2}, new long[] {3}))
                  .build()) {
        client.put(train, "train");
        client.put(val, "val");
      }
      List<String> fields = List.of("input_ids", "labels");
      trainIds = fetchIds(client, "train", fields, "train_task", 2);
      valIds = fetchIds(client, "val", fields, "val_task", 2);
      out.println("  train_task reads only train: " + Tensors.text(trainIds));
      out.println("  val_task reads only val:     " + Tensors.text(valIds));
    }

    int dynamicFetched;
    List<Boolean> field3;
    out.println("(b) dynamic expansion");
    try (TransferQueueSystem tq = start()) {
      MetaClient client = tq.client();
      BufferAllocator allocator = tq.allocator();
      BatchMeta first;
      try (Batch two =
              Batch.builder()
                  .dense("field1", Tensors.longs(allocator, new long[] {1, 2}, new long[] {3, 4}))
                  .dense("field2", Tensors.longs(allocator, new long[] {5, 6}, new long[] {7, 8}))
                  .build();
          Batch three =
              Batch.builder()
                  .dense(
                      "field1",
                      Tensors.longs(
                          allocator, new long[] {9, 10}, new long[] {11, 12}, new long[] {13, 14}))
                  .dense(
                      "field2",
                      Tensors.longs(
                          allocator, new long[] {15, 16}, new long[] {17, 18}, new long[] {19, 20}))
                  .build();
          Batch third =
              Batch.builder()
                  .dense(
                      "field3", Tensors.longs(allocator, new long[] {25, 26}, new long[] {27, 28}))
                  .build()) {
        first = client.put(two, "dynamic");
        client.put(three, "dynamic");
        BatchMeta five =
            client.getMeta(
                GetMetadataRequest.fetch("dynamic", List.of("field1", "field2"), "grow_task", 5));
        dynamicFetched = five.size();
        out.println("  2 then 3 samples put; a fetch of 5 returned " + dynamicFetched);
        client.put(third, first);
      }
      var status = client.getProductionStatus("dynamic", List.of("field3")).orElseThrow();
      field3 = new ArrayList<>();
      for (int r = 0; r < status.indexes().size(); r++) {
        field3.add(status.isProduced(r, 0));
      }
      out.println("  field3 written with the first put's metadata; produced per sample: " + field3);
    }

    BatchMeta a1;
    BatchMeta a2;
    BatchMeta b1;
    out.println("(c) default sampling");
    try (TransferQueueSystem tq = start()) {
      MetaClient client = tq.client();
      try (Batch six =
          Batch.builder()
              .dense(
                  "data",
                  Tensors.longs(
                      tq.allocator(),
                      new long[] {0},
                      new long[] {1},
                      new long[] {2},
                      new long[] {3},
                      new long[] {4},
                      new long[] {5}))
              .build()) {
        client.put(six, "sampling");
      }
      List<String> data = List.of("data");
      a1 = client.getMeta(GetMetadataRequest.fetch("sampling", data, "A", 3));
      a2 = client.getMeta(GetMetadataRequest.fetch("sampling", data, "A", 3));
      b1 = client.getMeta(GetMetadataRequest.fetch("sampling", data, "B", 2));
      out.println("  task A, batch of 3: " + a1.globalIndexes());
      out.println("  task A, batch of 3: " + a2.globalIndexes());
      out.println("  task B, batch of 2: " + b1.globalIndexes() + " (tasks consume independently)");
    }
    return new Outcome(
        trainIds,
        valIds,
        dynamicFetched,
        field3,
        a1.globalIndexes(),
        a2.globalIndexes(),
        b1.globalIndexes());
  }

  private static long[][] fetchIds(
      MetaClient client, String partition, List<String> fields, String task, int n) {
    BatchMeta meta = client.getMeta(GetMetadataRequest.fetch(partition, fields, task, n));
    try (Batch read = client.getData(meta)) {
      return Tensors.longRows(read.column("input_ids"));
    }
  }
}
