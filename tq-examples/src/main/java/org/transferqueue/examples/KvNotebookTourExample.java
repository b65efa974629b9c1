package org.transferqueue.examples;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.transferqueue.client.KvApi;
import org.transferqueue.client.TransferQueueSystem;
import org.transferqueue.config.TqConfig;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakPolicy;
import org.transferqueue.storage.DataParserReference;
import org.transferqueue.storage.simple.DataParser;
import org.transferqueue.storage.simple.SimpleStorageManager;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

/**
 * US-7 "KV notebook tour": the key-value API step by step on a system with polling mode, 2 storage
 * units and room for 200 samples. Single and batch puts with tags, reads of key and field subsets,
 * appended columns, ragged rows, multimodal rows (a flat pixel buffer plus the image shapes),
 * object values, a data parser that the storage units run concurrently, a second partition, and
 * clearing everything.
 */
public final class KvNotebookTourExample {
  static final String TRAIN = "train";
  static final String VALIDATION = "validation";
  static final int PARSED_SAMPLES = 32;
  static final long PARSE_LATENCY_MS = 200;
  static final long[][][] IMAGE_SHAPES = {
    {{3, 32, 32}, {3, 64, 64}}, {{3, 48, 48}}, {{3, 16, 16}, {3, 24, 24}, {3, 32, 64}}
  };

  private KvNotebookTourExample() {}

  /**
   * What the example observed.
   *
   * @param sample0 {@code input_ids} of {@code sample_0}
   * @param batchRows {@code input_ids} of {@code batch_0..2}
   * @param listedTrainKeys the keys of {@code train} after step 3
   * @param subsetRows {@code input_ids} of {@code batch_0} and {@code batch_2}
   * @param responseRows {@code response} of the batch keys after step 7
   * @param allFieldsAfterAppend the fields a default read of the batch keys returned
   * @param raggedRows the ragged responses as read
   * @param raggedSubsetRows the ragged responses of the first and last key
   * @param features3dShapes the shapes of the ragged 3-D rows
   * @param imagesPerSample the number of images reconstructed per multimodal sample
   * @param pixelsMatch whether every reconstructed image holds the bytes written
   * @param prompts the prompt strings read back
   * @param metadata the metadata maps read back
   * @param mixed the object and tensor values of the mixed single-key put
   * @param parsedShapes the shapes of the parsed rows
   * @param normalDataIntact whether {@code normal_data} came back as written
   * @param parseMillis how long the parsed batch put took
   * @param partitions the partitions and their key counts in the global listing
   * @param keysLeft the number of keys left after clearing
   */
  record Outcome(
      long[] sample0,
      long[][] batchRows,
      List<String> listedTrainKeys,
      long[][] subsetRows,
      long[][] responseRows,
      List<String> allFieldsAfterAppend,
      long[][] raggedRows,
      long[][] raggedSubsetRows,
      List<List<Long>> features3dShapes,
      List<Integer> imagesPerSample,
      boolean pixelsMatch,
      List<Object> prompts,
      List<Object> metadata,
      List<Object> mixed,
      List<List<Long>> parsedShapes,
      boolean normalDataIntact,
      long parseMillis,
      Map<String, Integer> partitions,
      int keysLeft) {}

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
    TqConfig config =
        TqConfig.builder()
            .controller(c -> c.pollingMode(true))
            .backend(b -> b.simpleStorage(s -> s.numDataStorageUnits(2).totalStorageSize(200L)))
            .build();
    try (TransferQueueSystem tq =
        TransferQueueSystem.builder().config(config).leakPolicy(LeakPolicy.THROW).start()) {
      KvApi kv = tq.kv();
      BufferAllocator allocator = tq.allocator();
      Steps steps = new Steps(kv, allocator, out);
      return steps.run(tq);
    }
  }

  /** The tour's steps over one system. */
  private record Steps(KvApi kv, BufferAllocator allocator, PrintStream out) {
    private static final List<String> BATCH_KEYS = List.of("batch_0", "batch_1", "batch_2");
    private static final List<String> RAGGED_KEYS = List.of("ragged_0", "ragged_1", "ragged_2");
    private static final List<String> MM_KEYS = List.of("mm_0", "mm_1", "mm_2");

    Outcome run(TransferQueueSystem tq) {
      // 1. One key, fields as a map: each tensor gets a batch dimension of 1.
      try (Tensor ids = Tensor.ofLongs(allocator, DType.INT64, new long[] {1, 2, 3, 4}, 4)) {
        kv.put(
            "sample_0",
            TRAIN,
            Map.of("input_ids", ids),
            Map.of("source", "wikipedia", "score", 0.95));
      }
      // 2. One key, fields as a one-row batch.
      try (Batch row =
          Batch.builder()
              .dense("input_ids", Tensors.longs(allocator, new long[] {5, 6, 7, 8}))
              .dense("attention_mask", Tensors.ones(allocator, DType.INT64, 1, 4))
              .build()) {
        kv.put("sample_1", TRAIN, row, Map.of("source", "books", "score", 0.88));
      }
      // 3. Several keys at once, one tag map per key.
      try (Batch rows =
          Batch.builder()
              .dense(
                  "input_ids",
                  Tensors.longs(
                      allocator, new long[] {10, 20}, new long[] {30, 40}, new long[] {50, 60}))
              .build()) {
        kv.batchPut(
            BATCH_KEYS,
            TRAIN,
            rows,
            List.of(
                Map.of("split", "train", "idx", 0L),
                Map.of("split", "train", "idx", 1L),
                Map.of("split", "train", "idx", 2L)));
      }
      out.println("1-3. put sample_0, sample_1 and " + BATCH_KEYS);

      // 4. Read one key, then many.
      long[] sample0;
      try (Batch one = kv.batchGet(List.of("sample_0"), TRAIN, List.of("input_ids"))) {
        sample0 = Tensors.longRows(one.column("input_ids"))[0];
      }
      long[][] batchRows;
      try (Batch many = kv.batchGet(BATCH_KEYS, TRAIN, null)) {
        batchRows = Tensors.longRows(many.column("input_ids"));
      }
      out.println(
          "4. sample_0 input_ids "
              + Arrays.toString(sample0)
              + "; batch keys "
              + Tensors.text(batchRows));

      // 5. List keys and tags.
      Map<String, Map<String, Object>> listed = kv.list(TRAIN).get(TRAIN);
      listed.forEach((key, tags) -> out.println("5. " + key + " -> " + tags));

      // 6. A key subset and a field subset.
      long[][] subset;
      try (Batch two = kv.batchGet(List.of("batch_0", "batch_2"), TRAIN, List.of("input_ids"))) {
        subset = Tensors.longRows(two.column("input_ids"));
      }
      out.println("6. batch_0 and batch_2: " + Tensors.text(subset));

      // 7. Append a column to the batch keys and read every field.
      try (Batch response =
          Batch.builder()
              .dense(
                  "response",
                  Tensors.longs(
                      allocator,
                      new long[] {100, 200},
                      new long[] {300, 400},
                      new long[] {500, 600}))
              .build()) {
        kv.batchPut(BATCH_KEYS, TRAIN, response, null);
      }
      long[][] responses;
      List<String> allFields;
      try (Batch all = kv.batchGet(BATCH_KEYS, TRAIN, null)) {
        responses = Tensors.longRows(all.column("response"));
        allFields = all.fields().stream().sorted().toList();
      }
      out.println(
          "7. after appending 'response': fields "
              + allFields
              + ", response "
              + Tensors.text(responses));

      // 8. Ragged rows: responses of different lengths, and 3-D rows of shape (k, 3, 4).
      try (Batch ragged =
          Batch.builder()
              .add("response", jagged(new long[][] {{10, 11, 12}, {20}, {30, 31}}))
              .add("features", features3d(new long[] {2, 5, 1}))
              .build()) {
        kv.batchPut(RAGGED_KEYS, TRAIN, ragged, null);
      }
      long[][] raggedRows;
      List<List<Long>> shapes3d = new ArrayList<>();
      try (Batch all = kv.batchGet(RAGGED_KEYS, TRAIN, null)) {
        raggedRows = Tensors.longRows(all.column("response"));
        JaggedColumn features = (JaggedColumn) all.column("features");
        for (int r = 0; r < features.rowCount(); r++) {
          shapes3d.add(Arrays.stream(features.rowShape(r)).boxed().toList());
        }
      }
      long[][] raggedSubset;
      try (Batch two = kv.batchGet(List.of("ragged_0", "ragged_2"), TRAIN, List.of("response"))) {
        raggedSubset = Tensors.longRows(two.column("response"));
      }
      out.println(
          "8. ragged responses " + Tensors.text(raggedRows) + ", 3-D row shapes " + shapes3d);

      // 9. Multimodal: each sample's images as one flat pixel buffer plus the image shapes.
      MultimodalResult multimodal = multimodal();
      out.println(
          "9. images reconstructed per sample: "
              + multimodal.imagesPerSample()
              + ", pixels intact: "
              + multimodal.pixelsMatch());

      // 10. Object values: strings and maps, and a single key mixing an object and a tensor.
      try (Batch objects =
          Batch.builder()
              .objects("prompt", List.of("What is 2+2?", "Name a prime."))
              .objects(
                  "metadata",
                  List.of(
                      Map.of("lang", "en", "difficulty", 1L),
                      Map.of("lang", "en", "difficulty", 2L)))
              .build()) {
        kv.batchPut(List.of("obj_0", "obj_1"), TRAIN, objects, null);
      }
      List<Object> prompts;
      List<Object> metadata;
      try (Batch read = kv.batchGet(List.of("obj_0", "obj_1"), TRAIN, null)) {
        prompts = ((ObjectColumn) read.column("prompt")).values();
        metadata = ((ObjectColumn) read.column("metadata")).values();
      }
      List<Object> mixed = new ArrayList<>();
      try (Tensor ids = Tensor.ofLongs(allocator, DType.INT64, new long[] {7, 8, 9}, 3)) {
        kv.put("mixed", TRAIN, Map.of("text", "hello", "ids", ids), null);
      }
      try (Batch read = kv.batchGet(List.of("mixed"), TRAIN, null)) {
        mixed.add(((ObjectColumn) read.column("text")).get(0));
        mixed.add(Arrays.toString(Tensors.longRows(read.column("ids"))[0]));
      }
      out.println("10. prompts " + prompts + ", metadata " + metadata + ", mixed " + mixed);

      // 11. A data parser: storage units turn "float32:HxW" into tensors, rows concurrently.
      ((SimpleStorageManager) tq.storage()).parsers().register("decode_shapes", new ShapeDecoder());
      List<String> parseKeys = new ArrayList<>();
      float[] normal = new float[PARSED_SAMPLES * 2];
      List<Object> specs = new ArrayList<>();
      for (int i = 0; i < PARSED_SAMPLES; i++) {
        parseKeys.add("parse_" + i);
        normal[2 * i] = i;
        normal[2 * i + 1] = i + 0.5f;
        specs.add("float32:" + (i % 4 + 1) + "x" + (i % 3 + 2));
      }
      long started = System.nanoTime();
      try (Batch toParse =
          Batch.builder()
              .dense(
                  "normal_data",
                  Tensor.ofFloats(allocator, DType.FLOAT32, normal, PARSED_SAMPLES, 2))
              .objects("data_to_be_parsed", specs)
              .build()) {
        kv.batchPut(parseKeys, TRAIN, toParse, null, DataParserReference.of("decode_shapes"));
      }
      long parseMillis = (System.nanoTime() - started) / 1_000_000;
      List<List<Long>> parsedShapes = new ArrayList<>();
      boolean normalIntact = true;
      try (Batch read = kv.batchGet(parseKeys, TRAIN, null)) {
        JaggedColumn parsed = (JaggedColumn) read.column("data_to_be_parsed");
        double[][] normalRows = Tensors.doubleRows(read.column("normal_data"));
        for (int i = 0; i < PARSED_SAMPLES; i++) {
          parsedShapes.add(Arrays.stream(parsed.rowShape(i)).boxed().toList());
          normalIntact &= normalRows[i][0] == i && normalRows[i][1] == i + 0.5;
        }
      }
      out.println(
          "11. parsed "
              + PARSED_SAMPLES
              + " rows of "
              + PARSE_LATENCY_MS
              + " ms each in "
              + parseMillis
              + " ms; first shapes "
              + parsedShapes.subList(0, 4));

      // 12. A second partition, and every partition listed.
      try (Tensor ids = Tensor.ofLongs(allocator, DType.INT64, new long[] {42}, 1)) {
        kv.put("val_0", VALIDATION, Map.of("input_ids", ids), Map.of("split", "validation"));
      }
      Map<String, Integer> partitions = new LinkedHashMap<>();
      kv.list(null).forEach((partition, keys) -> partitions.put(partition, keys.size()));
      out.println("12. partitions and key counts: " + partitions);

      // 13. Clear every key of every partition.
      kv.list(null)
          .forEach(
              (partition, keys) -> {
                if (!keys.isEmpty()) {
                  kv.clear(List.copyOf(keys.keySet()), partition);
                }
              });
      int left = kv.list(null).values().stream().mapToInt(Map::size).sum();
      out.println("13. cleared everything; keys left: " + left);
      return new Outcome(
          sample0,
          batchRows,
          List.copyOf(listed.keySet()),
          subset,
          responses,
          allFields,
          raggedRows,
          raggedSubset,
          shapes3d,
          multimodal.imagesPerSample(),
          multimodal.pixelsMatch(),
          prompts,
          metadata,
          mixed,
          parsedShapes,
          normalIntact,
          parseMillis,
          partitions,
          left);
    }

    private JaggedColumn jagged(long[][] rows) {
      List<long[]> shapes = new ArrayList<>();
      for (long[] row : rows) {
        shapes.add(new long[] {row.length});
      }
      long[] flat = Arrays.stream(rows).flatMapToLong(java.util.Arrays::stream).toArray();
      return JaggedColumn.fromValues(
          Tensor.ofLongs(allocator, DType.INT64, flat, flat.length), shapes);
    }

    private JaggedColumn features3d(long[] firstDims) {
      List<long[]> shapes = new ArrayList<>();
      long total = 0;
      for (long k : firstDims) {
        shapes.add(new long[] {k, 3, 4});
        total += k * 12;
      }
      return JaggedColumn.fromValues(Tensor.zeros(allocator, DType.FLOAT32, total), shapes);
    }

    private record MultimodalResult(List<Integer> imagesPerSample, boolean pixelsMatch) {}

    private MultimodalResult multimodal() {
      List<long[]> pixelShapes = new ArrayList<>();
      List<long[]> shapeShapes = new ArrayList<>();
      List<Byte> pixels = new ArrayList<>();
      List<Long> shapeValues = new ArrayList<>();
      for (long[][] images : IMAGE_SHAPES) {
        long bytes = 0;
        for (int k = 0; k < images.length; k++) {
          long size = images[k][0] * images[k][1] * images[k][2];
          for (long p = 0; p < size; p++) {
            pixels.add((byte) (k + 1));
          }
          bytes += size;
          for (long d : images[k]) {
            shapeValues.add(d);
          }
        }
        pixelShapes.add(new long[] {bytes});
        shapeShapes.add(new long[] {images.length, 3});
      }
      byte[] flatPixels = new byte[pixels.size()];
      for (int i = 0; i < flatPixels.length; i++) {
        flatPixels[i] = pixels.get(i);
      }
      long[] flatShapes = shapeValues.stream().mapToLong(Long::longValue).toArray();
      try (Batch rows =
          Batch.builder()
              .add(
                  "pixels",
                  JaggedColumn.fromValues(
                      Tensor.ofBytes(allocator, DType.UINT8, flatPixels, flatPixels.length),
                      pixelShapes))
              .add(
                  "image_shapes",
                  JaggedColumn.fromValues(
                      Tensor.ofLongs(allocator, DType.INT64, flatShapes, flatShapes.length),
                      shapeShapes))
              .build()) {
        kv.batchPut(MM_KEYS, TRAIN, rows, null);
      }
      List<Integer> counts = new ArrayList<>();
      boolean match = true;
      try (Batch read = kv.batchGet(MM_KEYS, TRAIN, null)) {
        JaggedColumn readPixels = (JaggedColumn) read.column("pixels");
        JaggedColumn readShapes = (JaggedColumn) read.column("image_shapes");
        for (int r = 0; r < read.rowCount(); r++) {
          long[] dims = readShapes.row(r).toLongArray();
          Tensor buffer = readPixels.row(r);
          long offset = 0;
          int images = dims.length / 3;
          for (int k = 0; k < images; k++) {
            long size = dims[3 * k] * dims[3 * k + 1] * dims[3 * k + 2];
            // Each image is a view of the flat buffer, reshaped to its own (C, H, W).
            Tensor image =
                Tensor.wrap(
                    DType.UINT8,
                    buffer.segment().asSlice(offset, size),
                    dims[3 * k],
                    dims[3 * k + 1],
                    dims[3 * k + 2]);
            match &= image.getLong(0) == k + 1 && image.getLong(size - 1) == k + 1;
            offset += size;
          }
          match &= offset == buffer.numel();
          counts.add(images);
        }
      }
      return new MultimodalResult(counts, match);
    }
  }

  /**
   * Turns {@code "float32:HxW"} strings into float32 tensors of shape (H, W). Each row is decoded
   * as its own task after a simulated latency (standing in for fetching and decoding a file), so a
   * unit's rows are decoded concurrently and the put takes about one latency, not one per row.
   */
  static final class ShapeDecoder implements DataParser {
    private final Executor delayed =
        CompletableFuture.delayedExecutor(PARSE_LATENCY_MS, TimeUnit.MILLISECONDS);

    @Override
    public Batch parse(Batch rows, Map<String, String> args, BufferAllocator allocator) {
      List<CompletableFuture<long[]>> decoded = new ArrayList<>();
      for (Object spec : ((ObjectColumn) rows.column("data_to_be_parsed")).values()) {
        decoded.add(CompletableFuture.supplyAsync(() -> dims((String) spec), delayed));
      }
      List<Tensor> tensors = new ArrayList<>();
      try {
        for (CompletableFuture<long[]> future : decoded) {
          long[] dims = future.join();
          Tensor tensor = Tensor.zeros(allocator, DType.FLOAT32, dims);
          tensors.add(tensor);
          Random random = new Random(dims[0] * 31 + dims[1]);
          for (long i = 0; i < tensor.numel(); i++) {
            tensor.setDouble(i, random.nextFloat());
          }
        }
        return Batch.builder()
            .add("normal_data", rows.column("normal_data"))
            .add("data_to_be_parsed", JaggedColumn.copyOf(allocator, DType.FLOAT32, tensors))
            .build();
      } finally {
        tensors.forEach(Tensor::close);
      }
    }

    private static long[] dims(String spec) {
      String[] parts = spec.substring(spec.indexOf(':') + 1).split("x");
      return new long[] {Long.parseLong(parts[0]), Long.parseLong(parts[1])};
    }
  }
}
