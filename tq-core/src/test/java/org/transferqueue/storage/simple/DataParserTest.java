package org.transferqueue.storage.simple;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.storage.simple.Cells.dense;
import static org.transferqueue.storage.simple.Cells.objects;
import static org.transferqueue.storage.simple.Cells.row;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.storage.DataParserReference;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

/** Scenarios 5.C: data parsers registered by name and run by the storage units. */
@ExtendWith(LeakCheckExtension.class)
class DataParserTest {

  private static SimpleStorageManager manager(
      BufferAllocator allocator, int units, RecordingNotifier n) {
    SimpleStorageSettings config =
        SimpleStorageSettings.builder()
            .unitCount(units)
            .totalStorageSize(OptionalLong.empty())
            .build();
    return new SimpleStorageManager(config, allocator, n, new DataParserRegistry());
  }

  private static BatchMeta meta(List<String> fields, long... gis) {
    BatchMeta.Builder builder = BatchMeta.builder().globalIndexes(gis).partitionId("p");
    fields.forEach(f -> builder.field(f, FieldSchema.placeholder()));
    return builder.build();
  }

  private static void put(
      SimpleStorageManager manager, BatchMeta meta, Batch.Builder data, String parser) {
    try (Batch batch = data.build()) {
      manager.put(batch, meta, DataParserReference.of(parser));
    }
  }

  /** Replaces every field's object values by mapping each value. */
  private static DataParser mapObjects(java.util.function.UnaryOperator<Object> f) {
    return (rows, args, allocator) -> {
      Batch.Builder out = Batch.builder();
      for (String field : rows.fields()) {
        List<Object> mapped = new ArrayList<>();
        ((ObjectColumn) rows.column(field)).values().forEach(v -> mapped.add(f.apply(v)));
        out.objects(field, mapped);
      }
      return out.build();
    };
  }

  private static ErrorCode codeOf(Throwable e) {
    return ((TqException) e).code();
  }

  @Test
  void AS028_parserMaterialisesTensorsFromShapes(BufferAllocator allocator) {
    RecordingNotifier notifier = new RecordingNotifier();
    try (SimpleStorageManager manager = manager(allocator, 2, notifier)) {
      manager
          .parsers()
          .register(
              "shapes_to_tensors",
              (rows, args, alloc) -> {
                List<Tensor> tensors = new ArrayList<>();
                for (Object shape : ((ObjectColumn) rows.column("data_to_be_parsed")).values()) {
                  long[] dims = ((List<?>) shape).stream().mapToLong(d -> (Long) d).toArray();
                  tensors.add(Tensor.zeros(alloc, DType.FLOAT32, dims));
                }
                try {
                  return Batch.builder()
                      .add("normal_data", rows.column("normal_data"))
                      .add("data_to_be_parsed", JaggedColumn.copyOf(alloc, DType.FLOAT32, tensors))
                      .build();
                } finally {
                  tensors.forEach(Tensor::close);
                }
              });

      put(
          manager,
          meta(List.of(), 0, 1, 2),
          Batch.builder()
              .add(
                  "normal_data",
                  dense(allocator, new float[] {1, 2}, new float[] {3, 4}, new float[] {5, 6}))
              .objects(
                  "data_to_be_parsed", List.of(List.of(2L, 3L), List.of(1L, 4L), List.of(3L, 2L))),
          "shapes_to_tensors");

      try (Batch read =
          manager.get(meta(List.of("data_to_be_parsed", "normal_data"), 0, 1, 2), allocator)) {
        assertThat(row(read.column("normal_data"), 2)).containsExactly(5, 6);
        JaggedColumn parsed = (JaggedColumn) read.column("data_to_be_parsed");
        assertThat(parsed.rowShape(0)).containsExactly(2, 3);
        assertThat(parsed.rowShape(1)).containsExactly(1, 4);
        assertThat(parsed.rowShape(2)).containsExactly(3, 2);
      }
      assertThat(notifier.accepted())
          .singleElement()
          .satisfies(
              update -> {
                assertThat(update.fields().get("normal_data"))
                    .isEqualTo(FieldSchema.regular(DType.FLOAT32, 2));
                assertThat(update.fields().get("data_to_be_parsed"))
                    .as("the schema describes the stored (parsed) data")
                    .isEqualTo(
                        FieldSchema.nestedOf(
                            DType.FLOAT32,
                            List.of(
                                FieldSchema.shapeOf(2, 3),
                                FieldSchema.shapeOf(1, 4),
                                FieldSchema.shapeOf(3, 2))));
              });
    }
  }

  @Test
  void shouldRejectUnitsParsingAFieldIntoDifferentKinds(BufferAllocator allocator) {
    RecordingNotifier notifier = new RecordingNotifier();
    try (SimpleStorageManager manager = manager(allocator, 2, notifier)) {
      manager
          .parsers()
          .register(
              "odd_to_tensor",
              (rows, args, alloc) -> {
                long first = (Long) ((ObjectColumn) rows.column("v")).get(0);
                if (first % 2 == 0) {
                  return Batch.builder()
                      .add("v", ((ObjectColumn) rows.column("v")).slice(0, rows.rowCount()))
                      .build();
                }
                return Batch.builder()
                    .dense("v", Tensor.zeros(alloc, DType.FLOAT32, rows.rowCount()))
                    .build();
              });

      assertThatThrownBy(
              () ->
                  put(
                      manager,
                      meta(List.of(), 0, 1),
                      Batch.builder().add("v", objects(0L, 1L)),
                      "odd_to_tensor"))
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.DATA_PARSER_FAILED))
          .hasMessageContaining("field 'v'");
      assertThat(notifier.offered()).isEmpty();
      assertThat(manager.unitStats()).allSatisfy(s -> assertThat(s.cells()).isZero());
    }
  }

  @Test
  void AS029_parserReceivesItsArguments(BufferAllocator allocator) {
    try (SimpleStorageManager manager = manager(allocator, 2, new RecordingNotifier())) {
      manager
          .parsers()
          .register(
              "prefix",
              (rows, args, alloc) -> {
                List<Object> out = new ArrayList<>();
                ((ObjectColumn) rows.column("text"))
                    .values()
                    .forEach(v -> out.add(args.get("prefix") + v));
                return Batch.builder().objects("text", out).build();
              });

      try (Batch batch = Batch.builder().add("text", objects("a", "b")).build()) {
        manager.put(
            batch,
            meta(List.of(), 0, 1),
            new DataParserReference("prefix", Map.of("prefix", "parsed_")));
      }

      try (Batch read = manager.get(meta(List.of("text"), 0, 1), allocator)) {
        assertThat(((ObjectColumn) read.column("text")).values())
            .containsExactly("parsed_a", "parsed_b");
      }
    }
  }

  @Test
  void AS030_parserObjectTransformsValues(BufferAllocator allocator) {
    try (SimpleStorageManager manager = manager(allocator, 2, new RecordingNotifier())) {
      manager.parsers().register("double", mapObjects(v -> 2 * (Long) v));

      put(manager, meta(List.of(), 2, 3), Batch.builder().add("value", objects(1L, 2L)), "double");

      try (Batch read = manager.get(meta(List.of("value"), 2, 3), allocator)) {
        assertThat(((ObjectColumn) read.column("value")).values()).containsExactly(2L, 4L);
      }
    }
  }

  @Test
  void AS031_unknownParserIsATypedErrorAndTouchesNothing(BufferAllocator allocator) {
    RecordingNotifier notifier = new RecordingNotifier();
    try (SimpleStorageManager manager = manager(allocator, 2, notifier)) {
      manager.parsers().register("known", mapObjects(v -> v));

      assertThatThrownBy(
              () ->
                  put(
                      manager,
                      meta(List.of(), 0),
                      Batch.builder().add("data", objects(1L)),
                      "not_callable"))
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.DATA_PARSER_FAILED))
          .hasMessageContaining("data_parser must be callable")
          .hasMessageContaining("'not_callable'")
          .hasMessageContaining("[known]");
      assertThat(notifier.offered()).isEmpty();
      assertThat(manager.unitStats()).allSatisfy(s -> assertThat(s.samples()).isZero());
    }
  }

  @Test
  void AS032_parserMustReturnABatch(BufferAllocator allocator) {
    try (SimpleStorageManager manager = manager(allocator, 2, new RecordingNotifier())) {
      manager.parsers().register("nothing", (rows, args, alloc) -> null);

      assertThatThrownBy(
              () ->
                  put(
                      manager,
                      meta(List.of(), 1),
                      Batch.builder().add("data", objects(1L)),
                      "nothing"))
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.DATA_PARSER_FAILED))
          .hasMessageContaining("data_parser must return a dict");
    }
  }

  @Test
  void AS033_parserMustNotRemoveAKey(BufferAllocator allocator) {
    try (SimpleStorageManager manager = manager(allocator, 2, new RecordingNotifier())) {
      manager
          .parsers()
          .register(
              "drop",
              (rows, args, alloc) ->
                  Batch.builder()
                      .add("extra", ((ObjectColumn) rows.column("extra")).slice(0, rows.rowCount()))
                      .build());

      assertThatThrownBy(
              () ->
                  put(
                      manager,
                      meta(List.of(), 2),
                      Batch.builder().add("data", objects(1L)).add("extra", objects(2L)),
                      "drop"))
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.DATA_PARSER_FAILED))
          .hasMessageContaining("data_parser must not change dict keys")
          .hasMessageContaining("Original keys: [data, extra], got: [extra]");
      assertThat(manager.unitStats()).allSatisfy(s -> assertThat(s.cells()).isZero());
    }
  }

  @Test
  void AS034_parserMustNotAddAKey(BufferAllocator allocator) {
    try (SimpleStorageManager manager = manager(allocator, 2, new RecordingNotifier())) {
      manager
          .parsers()
          .register(
              "add",
              (rows, args, alloc) ->
                  Batch.builder()
                      .add("data", ((ObjectColumn) rows.column("data")).slice(0, rows.rowCount()))
                      .objects("new_key", List.of(999L))
                      .build());

      assertThatThrownBy(
              () ->
                  put(manager, meta(List.of(), 3), Batch.builder().add("data", objects(1L)), "add"))
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.DATA_PARSER_FAILED))
          .hasMessageContaining("data_parser must not change dict keys");
    }
  }

  @Test
  void AS035_parserMustKeepTheRowCount(BufferAllocator allocator) {
    RecordingNotifier notifier = new RecordingNotifier();
    try (SimpleStorageManager manager = manager(allocator, 1, notifier)) {
      manager
          .parsers()
          .register(
              "drop_last",
              (rows, args, alloc) ->
                  Batch.builder()
                      .add(
                          "data",
                          ((ObjectColumn) rows.column("data")).slice(0, rows.rowCount() - 1))
                      .build());

      assertThatThrownBy(
              () ->
                  put(
                      manager,
                      meta(List.of(), 4, 5),
                      Batch.builder().add("data", objects(1L, 2L)),
                      "drop_last"))
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.DATA_PARSER_FAILED))
          .hasMessageContaining(
              "data_parser changed the number of elements for key 'data': expected 2, got 1");

      assertThatThrownBy(() -> manager.get(meta(List.of("data"), 4), allocator))
          .isInstanceOf(TqException.class);
      assertThat(notifier.offered()).isEmpty();
    }
  }

  @Test
  void shouldReportAParserThatThrows(BufferAllocator allocator) {
    try (SimpleStorageManager manager = manager(allocator, 2, new RecordingNotifier())) {
      manager
          .parsers()
          .register(
              "boom",
              (rows, args, alloc) -> {
                throw new IllegalStateException("cannot fetch url");
              });

      assertThatThrownBy(
              () ->
                  put(
                      manager,
                      meta(List.of(), 0, 1),
                      Batch.builder().add("data", objects(1L, 2L)),
                      "boom"))
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.DATA_PARSER_FAILED))
          .hasMessageContaining("data_parser 'boom' failed: cannot fetch url");
      assertThat(manager.unitStats()).allSatisfy(s -> assertThat(s.samples()).isZero());
    }
  }

  @Test
  void shouldRejectRegisteringANameTwice() {
    DataParserRegistry registry = new DataParserRegistry().register("p", (r, a, al) -> r);

    assertThatThrownBy(() -> registry.register("p", (r, a, al) -> r))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.DUPLICATE_KEY));
  }
}
