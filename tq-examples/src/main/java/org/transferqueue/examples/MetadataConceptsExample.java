package org.transferqueue.examples;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.transferqueue.client.MetaClient;
import org.transferqueue.client.TransferQueueSystem;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakPolicy;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;

/**
 * US-3 "Metadata concepts": {@link BatchMeta} is the handle of a batch of samples (global indexes,
 * partitions, field schema, readiness, tags, extra info). Part 1 builds and transforms metadata by
 * hand; part 2 moves metadata between a producer and a consumer of a live system.
 */
public final class MetadataConceptsExample {
  static final String PARTITION = "metadata_demo";

  private MetadataConceptsExample() {}

  /**
   * What the example observed.
   *
   * @param readyBefore readiness of the hand-built metadata before fields were added
   * @param readyAfter readiness after adding fields from a batch
   * @param firstSampleShape the shape of {@code input_ids} in sample 0's per-sample view
   * @param reordered global indexes after reordering with {@code [4,3,2,1,0]}
   * @param chunkSizes sizes of 10 samples chunked into 3
   * @param concatSize size of two concatenated batches of 5
   * @param unionFields fields of the union of two batches over the same samples
   * @param fetchedTags tags a consumer received with its fetch
   * @param producerTags tags the producer stored
   * @param evenRows {@code input_ids} rows of samples 0, 2, 4, 6 as read
   * @param chunkRows rows per read chunk
   */
  record Outcome(
      boolean readyBefore,
      boolean readyAfter,
      List<Long> firstSampleShape,
      List<Long> reordered,
      List<Integer> chunkSizes,
      int concatSize,
      List<String> unionFields,
      List<Map<String, Object>> fetchedTags,
      List<Map<String, Object>> producerTags,
      long[][] evenRows,
      List<Integer> chunkRows) {}

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
    out.println("Part 1: BatchMeta by hand");
    BatchMeta meta =
        BatchMeta.builder()
            .globalIndexes(0, 1, 2, 3, 4)
            .partitionId("train")
            .field("input_ids", FieldSchema.regular(DType.INT64, 512))
            .build();
    boolean readyBefore = meta.isReady();
    out.println("  5 samples, field input_ids of shape (512,); ready: " + readyBefore);
    List<Long> shape = meta.samples().get(0).fields().get("input_ids").shape();
    out.println("  samples[0].fields: " + meta.samples().get(0).fields());

    boolean readyAfter;
    BatchMeta withFields;
    try (TransferQueueSystem scratch = start();
        Batch responses =
            Batch.builder()
                .dense("response", Tensor.zeros(scratch.allocator(), DType.INT64, 5, 16))
                .build()) {
      withFields = meta.addFields(responses, true);
      readyAfter = withFields.isReady();
    }
    out.println(
        "  after adding 'response' from a batch: fields "
            + withFields.fieldNames()
            + ", ready: "
            + readyAfter);

    BatchMeta annotated =
        withFields
            .withExtraInfo(Map.of("epoch", 1L, "batch_idx", 7L))
            .withTagsMerged(
                List.of(
                    Map.of("uid", "u0", "session_id", 0L),
                    Map.of("uid", "u1", "session_id", 1L),
                    Map.of("uid", "u2", "session_id", 2L),
                    Map.of("uid", "u3", "session_id", 3L),
                    Map.of("uid", "u4", "session_id", 4L)));
    out.println(
        "  extra info " + annotated.extraInfo() + ", tags of sample 1: " + annotated.tags(1));
    out.println(
        "  select field input_ids: " + annotated.selectFields(List.of("input_ids")).fieldNames());
    out.println("  select samples [0, 2]: " + annotated.selectSamples(0, 2).globalIndexes());
    List<Long> reordered = annotated.reorder(4, 3, 2, 1, 0).globalIndexes();
    out.println("  reorder [4,3,2,1,0]: " + reordered);

    BatchMeta ten =
        BatchMeta.builder()
            .globalIndexes(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)
            .partitionId("train")
            .field("input_ids", FieldSchema.regular(DType.INT64, 512))
            .allProduced()
            .build();
    List<Integer> chunkSizes = ten.chunk(3).stream().map(BatchMeta::size).toList();
    out.println("  10 samples in 3 chunks: sizes " + chunkSizes);
    BatchMeta concatenated =
        BatchMeta.concat(
            List.of(ten.selectSamples(0, 1, 2, 3, 4), ten.selectSamples(5, 6, 7, 8, 9)));
    out.println("  concat of two batches of 5: " + concatenated.size() + " samples");
    BatchMeta other =
        BatchMeta.builder()
            .globalIndexes(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)
            .partitionId("train")
            .field("attention_mask", FieldSchema.regular(DType.INT64, 512))
            .allProduced()
            .build();
    List<String> unionFields = ten.union(other).fieldNames();
    out.println("  union of the same samples with another field: " + unionFields);

    out.println("Part 2: metadata through a live system");
    try (TransferQueueSystem tq = start()) {
      MetaClient client = tq.client();
      BufferAllocator allocator = tq.allocator();
      Random random = new Random(3);
      long[] ids = new long[8 * 512];
      for (int i = 0; i < ids.length; i++) {
        ids[i] = random.nextInt(32_000);
      }
      long[][] expected = new long[8][];
      for (int r = 0; r < 8; r++) {
        expected[r] = Arrays.copyOfRange(ids, r * 512, r * 512 + 512);
      }
      BatchMeta written;
      try (Batch batch =
          Batch.builder()
              .dense("input_ids", Tensor.ofLongs(allocator, DType.INT64, ids, 8, 512))
              .dense("attention_mask", Tensors.ones(allocator, DType.INT64, 8, 512))
              .build()) {
        written = client.put(batch, PARTITION);
      }
      List<Map<String, Object>> tags = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        tags.add(
            Map.of(
                "uid",
                UUID.nameUUIDFromBytes(new byte[] {(byte) i}).toString(),
                "session_id",
                (long) random.nextInt(100),
                "model_version",
                0L));
      }
      client.setTags(written.withTagsMerged(tags));
      out.println("  producer put 8 samples and stored their tags");

      BatchMeta fetched =
          client.getMeta(
              GetMetadataRequest.fetch(
                  PARTITION, List.of("input_ids", "attention_mask"), "demo_task", 8));
      out.println(
          "  consumer fetched "
              + fetched.size()
              + " samples; tags of the first: "
              + fetched.tags(0));
      List<Map<String, Object>> fetchedTags = new ArrayList<>();
      for (long gi : written.globalIndexes()) {
        // The tags of each written sample as the consumer received them, in written order.
        fetchedTags.add(fetched.tags(fetched.globalIndexes().indexOf(gi)));
      }

      try (Batch onlyIds = client.getData(fetched.selectFields(List.of("input_ids")))) {
        out.println(
            "  read only input_ids: fields "
                + onlyIds.fields()
                + ", "
                + onlyIds.rowCount()
                + " rows");
      }
      long[][] evenRows;
      try (Batch even = client.getData(fetched.selectSamples(0, 2, 4, 6))) {
        evenRows = Tensors.longRows(even.column("input_ids"));
        out.println("  read samples [0, 2, 4, 6]: " + even.rowCount() + " rows");
      }
      List<Integer> chunkRows = new ArrayList<>();
      for (BatchMeta chunk : fetched.chunk(2)) {
        try (Batch part = client.getData(chunk)) {
          chunkRows.add(part.rowCount());
        }
      }
      out.println("  read in 2 chunks of " + chunkRows + " rows");
      long[][] expectedEven = {expected[0], expected[2], expected[4], expected[6]};
      if (!Arrays.deepEquals(evenRows, expectedEven)) {
        out.println("  (rows differ from what was written)");
      }
      return new Outcome(
          readyBefore,
          readyAfter,
          shape,
          reordered,
          chunkSizes,
          concatenated.size(),
          unionFields,
          fetchedTags,
          tags,
          evenRows,
          chunkRows);
    }
  }

  private static TransferQueueSystem start() {
    return TransferQueueSystem.builder()
        .config(TqConfig.defaults())
        .leakPolicy(LeakPolicy.THROW)
        .start();
  }

  /**
   * The {@code input_ids} rows the example writes, recomputed from its seed.
   *
   * @return 8 rows of 512 values
   */
  static long[][] writtenInputIds() {
    Random random = new Random(3);
    long[][] rows = new long[8][512];
    for (long[] row : rows) {
      for (int i = 0; i < row.length; i++) {
        row[i] = random.nextInt(32_000);
      }
    }
    return rows;
  }
}
