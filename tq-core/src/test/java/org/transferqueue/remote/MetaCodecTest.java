package org.transferqueue.remote;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.TqException;
import org.transferqueue.controller.ClearSamplesRequest;
import org.transferqueue.controller.ConsumptionStatus;
import org.transferqueue.controller.ControllerStatistics;
import org.transferqueue.controller.FetchMode;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.controller.IndexSet;
import org.transferqueue.controller.KvListing;
import org.transferqueue.controller.PartitionStatistics;
import org.transferqueue.controller.ProductionStatus;
import org.transferqueue.controller.TagUpdate;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.KvBatchMeta;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.remote.controller.ControllerCodec;
import org.transferqueue.sampler.SamplingConfig;
import org.transferqueue.tensor.DType;
import org.transferqueue.testing.Seeds;

class MetaCodecTest {
  private static final int ROUNDS = 200;

  private static final class Gen {
    final Random random;

    Gen(long seed) {
      random = new Random(seed);
    }

    String name() {
      return "n" + random.nextInt(50) + (random.nextBoolean() ? "é" : "");
    }

    Object value(int depth) {
      int kind = random.nextInt(depth > 2 ? 8 : 10);
      return switch (kind) {
        case 0 -> null;
        case 1 -> name();
        case 2 -> random.nextBoolean();
        case 3 -> random.nextLong();
        case 4 -> random.nextDouble() * 1e6 - 5e5;
        case 5 -> new BigInteger(100, random).negate();
        case 6 -> new BigDecimal(BigInteger.valueOf(random.nextLong()), random.nextInt(20) - 10);
        case 7 -> (long) random.nextInt(10);
        case 8 -> {
          List<Object> list = new ArrayList<>();
          for (int i = random.nextInt(4); i > 0; i--) {
            list.add(value(depth + 1));
          }
          yield list;
        }
        default -> map(depth + 1);
      };
    }

    Map<String, Object> map(int depth) {
      Map<String, Object> map = new LinkedHashMap<>();
      for (int i = random.nextInt(4); i > 0; i--) {
        map.put(name(), value(depth));
      }
      return map;
    }

    List<Long> shape() {
      List<Long> shape = new ArrayList<>();
      for (int i = random.nextInt(3); i > 0; i--) {
        shape.add((long) random.nextInt(1000));
      }
      return shape;
    }

    FieldSchema schema(int rows) {
      DType dtype = DType.values()[random.nextInt(DType.values().length)];
      return switch (random.nextInt(4)) {
        case 0 -> FieldSchema.regular(dtype, shape());
        case 1 -> {
          List<List<Long>> shapes = new ArrayList<>();
          for (int i = 0; i < rows; i++) {
            shapes.add(shape());
          }
          yield FieldSchema.nestedOf(dtype, shapes);
        }
        case 2 -> FieldSchema.nonTensorField();
        default -> FieldSchema.placeholder();
      };
    }

    List<Long> indexes(int n) {
      List<Long> list = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        list.add((long) random.nextInt(1 << 20));
      }
      return list;
    }

    BatchMeta batchMeta() {
      int n = random.nextInt(6);
      List<String> partitions = new ArrayList<>();
      List<Boolean> status = new ArrayList<>();
      List<Map<String, Object>> tags = new ArrayList<>();
      List<Map<String, Object>> backend = new ArrayList<>();
      long[] gis = new long[n];
      for (int i = 0; i < n; i++) {
        gis[i] = random.nextInt(1000);
        partitions.add("p" + random.nextInt(3));
        status.add(random.nextBoolean());
        tags.add(map(0));
        backend.add(map(1));
      }
      BatchMeta.Builder b =
          BatchMeta.builder()
              .globalIndexes(gis)
              .partitionIds(partitions)
              .productionStatus(status)
              .extraInfo(map(0))
              .tags(tags)
              .backendMeta(backend);
      for (int f = random.nextInt(4); f > 0; f--) {
        b.field("f" + f, schema(n));
      }
      return b.build();
    }

    KvBatchMeta kvBatchMeta() {
      int n = random.nextInt(5);
      List<String> keys = new ArrayList<>();
      List<Map<String, Object>> tags = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        keys.add("k" + i + "_" + random.nextInt(100));
        tags.add(map(0));
      }
      return new KvBatchMeta(
          keys,
          tags,
          random.nextBoolean() ? null : name(),
          random.nextBoolean() ? null : List.of("a", "b"),
          map(0));
    }

    Map<Long, Map<String, Object>> records(int n) {
      Map<Long, Map<String, Object>> records = new LinkedHashMap<>();
      for (Long index : indexes(n)) {
        records.put(index, map(0));
      }
      return records;
    }
  }

  private static <T> T roundTrip(
      T value,
      java.util.function.BiConsumer<MetaWriter, T> write,
      java.util.function.Function<MetaReader, T> read) {
    return MetaCodec.decode(MetaCodec.encode(value, write), read);
  }

  @Test
  void shouldRoundTripBatchMetaWhenValuesAreRandom() {
    long seed = Seeds.seed();
    Gen gen = new Gen(seed);
    for (int i = 0; i < ROUNDS; i++) {
      BatchMeta meta = gen.batchMeta();
      assertThat(MetaCodec.decodeBatchMeta(MetaCodec.encode(meta)))
          .as("seed=%d round=%d", seed, i)
          .isEqualTo(meta);
    }
  }

  @Test
  void shouldRoundTripKvMetaSchemasAndRequestsWhenValuesAreRandom() {
    long seed = Seeds.seed();
    Gen gen = new Gen(seed);
    for (int i = 0; i < ROUNDS; i++) {
      String at = "seed=" + seed + " round=" + i;
      KvBatchMeta kv = gen.kvBatchMeta();
      assertThat(MetaCodec.decodeKvBatchMeta(MetaCodec.encode(kv))).as(at).isEqualTo(kv);

      FieldSchema schema = gen.schema(gen.random.nextInt(4));
      assertThat(MetaCodec.decodeFieldSchema(MetaCodec.encode(schema))).as(at).isEqualTo(schema);

      FetchMode mode = FetchMode.values()[gen.random.nextInt(3)];
      GetMetadataRequest request =
          new GetMetadataRequest(
              mode,
              gen.name(),
              List.of("f1", "f2"),
              mode == FetchMode.FETCH ? "task" : null,
              mode == FetchMode.FORCE_FETCH ? null : 1 + gen.random.nextInt(100),
              new SamplingConfig(
                  gen.random.nextBoolean() ? null : gen.random.nextInt(8),
                  gen.random.nextBoolean() ? null : gen.random.nextInt(8),
                  gen.map(0)),
              gen.random.nextBoolean() ? null : Duration.ofNanos(gen.random.nextLong(1L << 40)));
      assertThat(
              roundTrip(
                  request,
                  ControllerCodec::writeGetMetadataRequest,
                  ControllerCodec::readGetMetadataRequest))
          .as(at)
          .isEqualTo(request);

      int n = gen.random.nextInt(4);
      Map<String, FieldSchema> fields = new LinkedHashMap<>();
      fields.put("x", gen.schema(n));
      ProductionUpdate update =
          new ProductionUpdate(gen.name(), gen.indexes(n), fields, gen.records(n));
      assertThat(
              roundTrip(
                  update,
                  ControllerCodec::writeProductionUpdate,
                  ControllerCodec::readProductionUpdate))
          .as(at)
          .isEqualTo(update);

      TagUpdate tags =
          new TagUpdate(
              Map.of("p1", gen.records(n), "p2", gen.records(1)),
              TagUpdate.Mode.values()[gen.random.nextInt(2)]);
      assertThat(roundTrip(tags, ControllerCodec::writeTagUpdate, ControllerCodec::readTagUpdate))
          .as(at)
          .isEqualTo(tags);

      List<Long> indexes = gen.indexes(n);
      ClearSamplesRequest clear =
          new ClearSamplesRequest(
              indexes, java.util.Collections.nCopies(n, "p"), gen.random.nextBoolean());
      assertThat(
              roundTrip(
                  clear,
                  ControllerCodec::writeClearSamplesRequest,
                  ControllerCodec::readClearSamplesRequest))
          .as(at)
          .isEqualTo(clear);
    }
  }

  @Test
  void shouldRoundTripStatusesListingsAndStatisticsWhenValuesAreRandom() {
    long seed = Seeds.seed();
    Gen gen = new Gen(seed);
    for (int i = 0; i < ROUNDS; i++) {
      String at = "seed=" + seed + " round=" + i;
      IndexSet all = IndexSet.of(gen.indexes(5).stream().mapToLong(Long::longValue).toArray());
      IndexSet some = IndexSet.of(Arrays.copyOf(all.toArray(), gen.random.nextInt(all.size() + 1)));
      ProductionStatus production =
          new ProductionStatus("p", List.of("a", "b"), all, List.of(some, all));
      assertThat(
              roundTrip(
                  production,
                  ControllerCodec::writeProductionStatus,
                  ControllerCodec::readProductionStatus))
          .as(at)
          .isEqualTo(production);

      ConsumptionStatus consumption = new ConsumptionStatus("p", "t", all, some);
      assertThat(
              roundTrip(
                  consumption,
                  ControllerCodec::writeConsumptionStatus,
                  ControllerCodec::readConsumptionStatus))
          .as(at)
          .isEqualTo(consumption);

      Map<String, Map<String, Map<String, Object>>> partitions = new LinkedHashMap<>();
      partitions.put("p" + i, Map.of("k1", gen.map(0), "k2", gen.map(0)));
      KvListing listing = new KvListing(partitions, gen.random.nextBoolean() ? null : "msg");
      assertThat(
              roundTrip(listing, ControllerCodec::writeKvListing, ControllerCodec::readKvListing))
          .as(at)
          .isEqualTo(listing);

      PartitionStatistics stats =
          new PartitionStatistics(
              "p",
              gen.random.nextLong(1L << 40),
              gen.random.nextInt(100),
              gen.random.nextInt(100),
              gen.random.nextInt(10),
              List.of("t1", "t2"),
              gen.random.nextInt(100),
              Map.of("a", gen.random.nextInt(9)),
              Map.of("t1", gen.random.nextInt(9)));
      ControllerStatistics controller =
          new ControllerStatistics(
              List.of(stats, stats), gen.random.nextInt(1000), gen.random.nextInt(10), 17);
      assertThat(
              roundTrip(
                  controller,
                  ControllerCodec::writeControllerStatistics,
                  ControllerCodec::readControllerStatistics))
          .as(at)
          .isEqualTo(controller);
    }
  }

  @Test
  void shouldKeepExactNumberTypesWhenValuesAreBigOrSmall() {
    Map<String, Object> extra = new LinkedHashMap<>();
    extra.put("int", 7);
    extra.put("big", new BigInteger("123456789012345678901234567890"));
    extra.put("dec", new BigDecimal("1.50"));
    extra.put("float", 0.5f);
    BatchMeta meta = BatchMeta.empty(extra);
    BatchMeta back = MetaCodec.decodeBatchMeta(MetaCodec.encode(meta));
    assertThat(back.extraInfo())
        .containsEntry("int", 7L)
        .containsEntry("big", new BigInteger("123456789012345678901234567890"))
        .containsEntry("dec", new BigDecimal("1.50"))
        .containsEntry("float", 0.5);
  }

  @Test
  void shouldFailWithProtocolErrorWhenMessageIsTruncatedOrMistyped() {
    Gen gen = new Gen(42);
    BatchMeta meta = gen.batchMeta();
    while (meta.isEmpty()) {
      meta = gen.batchMeta();
    }
    byte[] wire = MetaCodec.encode(meta);
    for (int cut = 0; cut < wire.length; cut++) {
      byte[] truncated = Arrays.copyOf(wire, cut);
      assertThatThrownBy(() -> MetaCodec.decodeBatchMeta(truncated))
          .as("cut=%d", cut)
          .isInstanceOf(TqException.class);
    }
    byte[] kv = MetaCodec.encode(gen.kvBatchMeta());
    assertThatThrownBy(() -> MetaCodec.decodeBatchMeta(kv))
        .isInstanceOfSatisfying(
            ProtocolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.PROTOCOL_ERROR));
    byte[] trailing = Arrays.copyOf(wire, wire.length + 1);
    assertThatThrownBy(() -> MetaCodec.decodeBatchMeta(trailing))
        .isInstanceOfSatisfying(
            ProtocolException.class, e -> assertThat(e.getMessage()).contains("unexpected bytes"));
  }

  @Test
  void shouldRejectHeadersLongerThanTheMessageWithoutAllocating() {
    byte[] hugeArray = {(byte) 0xdd, 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff};
    assertThatThrownBy(() -> new MetaReader(hugeArray).longArray("indexes"))
        .isInstanceOfSatisfying(
            ProtocolException.class,
            e -> assertThat(e.getMessage()).contains("declares 2147483647 elements"));
    byte[] hugeMap = {(byte) 0xdf, 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff};
    assertThatThrownBy(() -> new MetaReader(hugeMap).value("tags"))
        .isInstanceOf(ProtocolException.class);
  }

  @Test
  void shouldRejectUnknownEnumNamesWithProtocolError() {
    MetaWriter w = new MetaWriter().arrayHeader(2).string("APPEND").mapHeader(0);
    assertThatThrownBy(() -> MetaCodec.decode(w.toByteArray(), ControllerCodec::readTagUpdate))
        .isInstanceOfSatisfying(
            ProtocolException.class, e -> assertThat(e.getMessage()).contains("'APPEND'"));
  }

  @Test
  void shouldRefuseALoneSurrogateWhenWritingStringsValuesOrMapKeys() {
    List<Runnable> writes =
        List.of(
            () -> new MetaWriter().string("p\uD800"),
            () -> new MetaWriter().strings(List.of("ok", "\uDC00")),
            () -> new MetaWriter().value(List.of("fine", "v\uDBFF")),
            () -> new MetaWriter().valueMap(Map.of("k\uDFFF", 1L)));
    for (int i = 0; i < writes.size(); i++) {
      assertThatThrownBy(writes.get(i)::run)
          .as("write %d", i)
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
          .hasMessageContaining("is not valid Unicode: lone surrogate \\u");
    }
    byte[] pair = new MetaWriter().string("\uD83D\uDE00 \uFFFD").toByteArray();
    assertThat(new MetaReader(pair).string("s")).isEqualTo("\uD83D\uDE00 \uFFFD");
  }

  @Test
  void shouldRejectMalformedUtf8WithProtocolErrorWhenReadingStringsValuesOrMapKeys() {
    // ED A0 80 is U+D800 encoded as if it were a code point: not UTF-8 (nor is C0 80, overlong).
    byte[] surrogate = {(byte) 0xa3, (byte) 0xed, (byte) 0xa0, (byte) 0x80};
    byte[] overlong = {(byte) 0xa2, (byte) 0xc0, (byte) 0x80};
    for (byte[] bad : List.of(surrogate, overlong)) {
      byte[] inArray = concat(new byte[] {(byte) 0x92, (byte) 0xa1, 'a'}, bad);
      byte[] asKey = concat(new byte[] {(byte) 0x81}, bad, new byte[] {0x01});
      byte[] asValue = concat(new byte[] {(byte) 0x81, (byte) 0xa1, 't'}, bad);
      List<Runnable> reads =
          List.of(
              () -> new MetaReader(bad).string("partitionId"),
              () -> new MetaReader(inArray).strings("keys"),
              () -> new MetaReader(asKey).valueMap("tags"),
              () -> new MetaReader(asValue).valueMap("tags"),
              () -> new MetaReader(inArray).value("extraInfo"));
      for (int i = 0; i < reads.size(); i++) {
        assertThatThrownBy(reads.get(i)::run)
            .as("read %d of %s", i, Arrays.toString(bad))
            .isInstanceOfSatisfying(
                ProtocolException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.PROTOCOL_ERROR))
            .hasMessageContaining("not valid UTF-8");
      }
    }
    byte[] replacement = {(byte) 0xa3, (byte) 0xef, (byte) 0xbf, (byte) 0xbd};
    assertThat(new MetaReader(replacement).string("s")).isEqualTo("\uFFFD");
  }

  private static byte[] concat(byte[]... parts) {
    int n = 0;
    for (byte[] part : parts) {
      n += part.length;
    }
    byte[] out = new byte[n];
    int at = 0;
    for (byte[] part : parts) {
      System.arraycopy(part, 0, out, at, part.length);
      at += part.length;
    }
    return out;
  }

  @Test
  void shouldRejectUnencodableValuesWithInvalidArgument() {
    assertThatThrownBy(() -> new MetaWriter().value(new Object()))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
  }
}
