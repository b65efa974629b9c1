package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.transferqueue.client.Rows.batch;
import static org.transferqueue.client.Rows.i64;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.transferqueue.Strings;
import org.transferqueue.TqException;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.KvBatchMeta;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

/**
 * Bad input gets the same outcome on SimpleStorage and on MooncakeStore, in each deployment: the
 * same exception type and {@link org.transferqueue.ErrorCode}, or the same answer where the input
 * is accepted. The capacity limit is left out: it is a backend setting (samples for SimpleStorage,
 * segment bytes for MooncakeStore), not a property of the input.
 */
@ExtendWith(LeakCheckExtension.class)
class BackendEquivalenceTest {
  private static final String P = "equivalence";

  /** Runs every probe, in order, on one fresh system; returns each probe's outcome by name. */
  private static Map<String, String> outcomes(
      Deployment deployment, Backend backend, BufferAllocator allocator) {
    Map<String, Function<TestSystem, Object>> probes = probes(allocator);
    Map<String, String> out = new LinkedHashMap<>();
    try (TestSystem tq = deployment.fresh(backend);
        Batch seed = batch("x", i64(allocator, new long[] {1}, new long[] {2}, new long[] {3}))) {
      tq.client().put(seed, P);
      tq.kv().put("k", P, seed.slice(0, 1), null);
      tq.kv().put("gone", P, seed.slice(1, 2), null);
      tq.kv().clear(List.of("gone"), P);
      tq.kv().put("tagged", P, (Batch) null, Map.of("s", 1));
      for (Map.Entry<String, Function<TestSystem, Object>> probe : probes.entrySet()) {
        String outcome;
        try {
          outcome = "ok " + probe.getValue().apply(tq);
        } catch (TqException e) {
          outcome = e.getClass().getSimpleName() + " " + e.code();
        }
        out.put(probe.getKey(), outcome);
      }
    }
    return out;
  }

  private static Map<String, Function<TestSystem, Object>> probes(BufferAllocator allocator) {
    Map<String, Function<TestSystem, Object>> p = new LinkedHashMap<>();
    readProbes(p);
    kvPutProbes(p, allocator);
    kvReadAndClearProbes(p);
    lowLevelProbes(p, allocator);
    p.put("what is left", tq -> new ArrayList<>(tq.kv().list(P).get(P).keySet()));
    p.put("partitions", tq -> tq.client().getPartitionList());
    return p;
  }

  /** Low-level reads of cells the storage does not hold. */
  private static void readProbes(Map<String, Function<TestSystem, Object>> p) {
    p.put(
        "read a cleared sample",
        tq -> {
          BatchMeta all = tq.client().getMeta(GetMetadataRequest.forceFetch(P, List.of("x")));
          tq.client().clearSamples(all.selectSamples(0));
          return readSize(tq, all.selectSamples(0));
        });
    p.put(
        "read unwritten cells of a field new to their partition",
        tq ->
            readSize(
                tq, tq.client().getMeta(GetMetadataRequest.insert("unwritten", List.of("x"), 2))));
    p.put(
        "read unwritten cells of a field the partition has",
        tq -> readSize(tq, tq.client().getMeta(GetMetadataRequest.insert(P, List.of("x"), 2))));
    p.put("read an index that does not exist", tq -> readSize(tq, handMade(P, "x", 999)));
    p.put(
        "read a field the samples do not have",
        tq -> {
          BatchMeta all = tq.client().getMeta(GetMetadataRequest.forceFetch(P, List.of("x")));
          long[] gis = all.globalIndexes().stream().mapToLong(Long::longValue).toArray();
          return readSize(tq, handMade(P, "nope", gis));
        });
    p.put(
        "read a known and an unknown field",
        tq -> {
          BatchMeta all = tq.client().getMeta(GetMetadataRequest.forceFetch(P, List.of("x")));
          return readSize(
              tq,
              all.addFields(Map.of("nope", FieldSchema.regular(DType.INT64, 1)), false)
                  .selectSamples(all.size() - 1));
        });
    p.put(
        "read samples of a partition that does not exist",
        tq -> readSize(tq, handMade("ghost", "x", 0)));
    p.put("read empty metadata", tq -> readSize(tq, BatchMeta.empty()));
    p.put("read a field whose name holds '@'", tq -> readSize(tq, handMade(P, "a@b", 0)));
    p.put(
        "clear samples naming a field whose name holds '@'",
        tq -> {
          tq.client().clearSamples(handMade("ghost", "a@b", 0));
          return tq.client().getPartitionList();
        });
  }

  /** Key-value writes with bad arguments or conflicting data. */
  private static void kvPutProbes(
      Map<String, Function<TestSystem, Object>> p, BufferAllocator allocator) {
    p.put(
        "put another dtype into a stored field",
        tq -> {
          try (Batch floats =
              batch("x", Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {1}, 1, 1))) {
            return tq.kv().put("k", P, floats, null).keys();
          }
        });
    p.put(
        "put another shape into a stored field",
        tq -> {
          try (Batch wide = batch("x", i64(allocator, new long[] {1, 2}))) {
            return tq.kv().put("k", P, wide, null).keys();
          }
        });
    p.put(
        "put an empty key",
        tq -> {
          try (Batch one = batch("x", i64(allocator, new long[] {1}))) {
            return tq.kv().put("", P, one, null).keys();
          }
        });
    p.put("put tags of an empty key", tq -> tq.kv().put("", P, (Batch) null, Map.of("a", 1)));
    p.put("put values under an empty key", tq -> tq.kv().put("", P, Map.of("v", 1L), null).keys());
    p.put(
        "put an object value that holds a lone surrogate",
        tq -> {
          tq.kv().put("s", P, Map.of("v", "x\uD800"), null);
          try (Batch read = tq.kv().batchGet(List.of("s"), P, List.of("v"))) {
            return Strings.quote(((ObjectColumn) read.column("v")).values());
          }
        });
    p.put(
        "batch-put an empty key among others",
        tq -> {
          try (Batch two = batch("x", i64(allocator, new long[] {1}, new long[] {2}))) {
            return tq.kv().batchPut(List.of("e1", ""), P, two, null).keys();
          }
        });
    p.put(
        "put duplicate keys",
        tq -> {
          try (Batch two = batch("x", i64(allocator, new long[] {1}, new long[] {2}))) {
            return tq.kv().batchPut(List.of("d", "d"), P, two, null).keys();
          }
        });
    p.put(
        "put an empty key list",
        tq -> tq.kv().batchPut(List.of(), P, null, List.of(Map.of("a", 1))));
    p.put(
        "put more rows than keys",
        tq -> {
          try (Batch three =
              batch("x", i64(allocator, new long[] {1}, new long[] {2}, new long[] {3}))) {
            return tq.kv().batchPut(List.of("r1", "r2"), P, three, null).keys();
          }
        });
    p.put(
        "put fewer tags than keys",
        tq -> tq.kv().batchPut(List.of("t1", "t2"), P, null, List.of(Map.of("a", 1))));
    p.put(
        "put a field whose name holds '@'",
        tq -> {
          try (Batch one = batch("a@b", i64(allocator, new long[] {1}))) {
            return tq.kv().put("at", P, one, null).keys();
          }
        });
    p.put(
        "put a field whose name ends in a chunk suffix",
        tq -> {
          try (Batch one = batch("a:c0", i64(allocator, new long[] {1}))) {
            return tq.kv().put("chunk", P, one, null).keys();
          }
        });
    p.put(
        "low-level put of a field whose name holds '@'",
        tq -> {
          try (Batch one = batch("a@b", i64(allocator, new long[] {1}))) {
            return tq.client().put(one, "at-partition").size();
          }
        });
    p.put("put neither fields nor tags", tq -> tq.kv().put("n", P, (Batch) null, null));
    p.put(
        "put a two-row batch under one key",
        tq -> {
          try (Batch two = batch("x", i64(allocator, new long[] {1}, new long[] {2}))) {
            return tq.kv().put("two", P, two, null).keys();
          }
        });
  }

  /** Key-value reads and clears of keys, fields and partitions that do not exist. */
  private static void kvReadAndClearProbes(Map<String, Function<TestSystem, Object>> p) {
    p.put("get a missing key", tq -> kvRows(tq, List.of("k", "zzz"), P, null));
    p.put("get only missing keys", tq -> kvRows(tq, List.of("zzz"), P, null));
    p.put("get a cleared key", tq -> kvRows(tq, List.of("gone"), P, null));
    p.put("get from an unknown partition", tq -> kvRows(tq, List.of("k"), "nope", null));
    p.put("get an unknown field", tq -> kvRows(tq, List.of("k"), P, List.of("nope")));
    p.put("get a key with tags only", tq -> kvRows(tq, List.of("tagged"), P, null));
    p.put("get an empty key", tq -> kvRows(tq, List.of(""), P, null));
    p.put("get an empty key list", tq -> kvRows(tq, List.of(), P, null));
    p.put("get duplicate keys", tq -> kvRows(tq, List.of("k", "k"), P, null));
    p.put(
        "get by metadata without partition",
        tq -> kvMetaRows(tq, KvBatchMeta.of(List.of("k"), List.of(Map.of()), null, null), null));
    p.put(
        "get by metadata selecting a field it lacks",
        tq ->
            kvMetaRows(
                tq,
                KvBatchMeta.of(List.of("k"), List.of(Map.of()), P, List.of("x")),
                List.of("nope")));
    p.put(
        "get by metadata of a missing key",
        tq ->
            kvMetaRows(
                tq, KvBatchMeta.of(List.of("zzz"), List.of(Map.of()), P, List.of("x")), null));
    p.put("list an unknown partition", tq -> tq.kv().list("nope"));
    p.put(
        "clear an unknown key and partition",
        tq -> {
          tq.kv().clear(List.of("zzz"), "nope");
          return tq.client().getPartitionList();
        });
    p.put(
        "clear a cleared key",
        tq -> {
          tq.kv().clear(List.of("gone"), P);
          return tq.kv().list(P).get(P).size();
        });
    p.put(
        "clear an empty key",
        tq -> {
          tq.kv().clear(List.of(""), P);
          return tq.kv().list(P).get(P).size();
        });
    p.put(
        "clear an empty key list",
        tq -> {
          tq.kv().clear(List.of(), P);
          return tq.kv().list(P).get(P).size();
        });
  }

  /** Low-level writes and queries with bad metadata. */
  private static void lowLevelProbes(
      Map<String, Function<TestSystem, Object>> p, BufferAllocator allocator) {
    p.put(
        "put more rows than the metadata names",
        tq -> {
          BatchMeta two = tq.client().getMeta(GetMetadataRequest.insert("rows", List.of("x"), 2));
          try (Batch three =
              batch("x", i64(allocator, new long[] {1}, new long[] {2}, new long[] {3}))) {
            return tq.client().put(three, two).size();
          }
        });
    p.put(
        "put another dtype into stored samples",
        tq -> {
          BatchMeta all = tq.client().getMeta(GetMetadataRequest.forceFetch(P, List.of("x")));
          try (Batch floats =
              batch("x", Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {1}, 1, 1))) {
            return tq.client().put(floats, all.selectSamples(all.size() - 1)).size();
          }
        });
    p.put(
        "put into samples of a partition that does not exist",
        tq -> {
          try (Batch one = batch("x", i64(allocator, new long[] {1}))) {
            return tq.client().put(one, handMade("ghost", "x", 0)).size();
          }
        });
    p.put(
        "put into a cleared sample",
        tq -> {
          BatchMeta k = tq.client().resolveKeys(P, List.of("k"), false);
          tq.client().clearSamples(k);
          try (Batch one = batch("x", i64(allocator, new long[] {1}))) {
            return tq.client().put(one, k).size();
          }
        });
    p.put(
        "put an empty batch",
        tq -> {
          try (Batch none = Batch.builder().rowCount(0).build()) {
            return tq.client().put(none, P).size();
          }
        });
    p.put(
        "force-fetch an unknown partition",
        tq -> tq.client().getMeta(GetMetadataRequest.forceFetch("nope", List.of("x"))).size());
    p.put(
        "resolve indexes of an unknown partition",
        tq -> tq.client().resolveIndexes("nope", List.of(1L)));
    p.put(
        "production status of an unknown partition",
        tq -> tq.client().checkProductionStatus("nope", List.of("x")));
    p.put(
        "clear samples of a partition that does not exist",
        tq -> {
          tq.client().clearSamples(handMade("ghost", "x", 0));
          return tq.client().getPartitionList();
        });
  }

  /** Metadata naming {@code field} (int64, one element per row) for {@code gis} of a partition. */
  private static BatchMeta handMade(String partition, String field, long... gis) {
    return BatchMeta.builder()
        .globalIndexes(gis)
        .partitionId(partition)
        .field(field, FieldSchema.regular(DType.INT64, 1))
        .build();
  }

  private static int readSize(TestSystem tq, BatchMeta meta) {
    try (Batch read = tq.client().getData(meta)) {
      return read.rowCount();
    }
  }

  private static String kvRows(
      TestSystem tq, List<String> keys, String partition, List<String> fields) {
    try (Batch read = tq.kv().batchGet(keys, partition, fields)) {
      return read.rowCount() + " rows " + read.fields();
    }
  }

  private static String kvMetaRows(TestSystem tq, KvBatchMeta meta, List<String> fields) {
    try (Batch read = tq.kv().get(meta, fields)) {
      return read.rowCount() + " rows " + read.fields();
    }
  }

  @ParameterizedTest
  @EnumSource(Deployment.class)
  void shouldGiveTheSameOutcomeOfBadInputOnBothBackends(
      Deployment deployment, BufferAllocator allocator) {
    Map<String, String> simple = outcomes(deployment, Backend.SIMPLE_STORAGE, allocator);
    Map<String, String> mooncake = outcomes(deployment, Backend.MOONCAKE_STORE, allocator);
    assertThat(mooncake).as("MooncakeStore vs SimpleStorage").containsExactlyEntriesOf(simple);
    assertThat(simple)
        .containsEntry("read a cleared sample", "StorageException STALE_METADATA")
        .containsEntry(
            "read unwritten cells of a field new to their partition",
            "StorageException UNKNOWN_FIELD")
        .containsEntry(
            "read unwritten cells of a field the partition has", "StorageException NOT_FOUND")
        .containsEntry("read an index that does not exist", "StorageException NOT_FOUND")
        .containsEntry("read a field the samples do not have", "StorageException UNKNOWN_FIELD")
        .containsEntry("read a known and an unknown field", "StorageException UNKNOWN_FIELD")
        .containsEntry(
            "read samples of a partition that does not exist", "StorageException NOT_FOUND")
        .containsEntry("put an empty key", "TqException INVALID_ARGUMENT")
        .containsEntry("put tags of an empty key", "TqException INVALID_ARGUMENT")
        .containsEntry("put values under an empty key", "TqException INVALID_ARGUMENT")
        .containsEntry(
            "put an object value that holds a lone surrogate", "TqException INVALID_ARGUMENT")
        .containsEntry("batch-put an empty key among others", "TqException INVALID_ARGUMENT")
        .containsEntry("get an empty key", "TqException INVALID_ARGUMENT")
        .containsEntry("clear an empty key", "TqException INVALID_ARGUMENT")
        .containsEntry("put a field whose name holds '@'", "TqException INVALID_ARGUMENT")
        .containsEntry(
            "low-level put of a field whose name holds '@'", "TqException INVALID_ARGUMENT")
        .containsEntry(
            "clear samples naming a field whose name holds '@'", "TqException INVALID_ARGUMENT")
        .containsEntry("what is left", "ok [tagged]")
        .containsEntry("partitions", "ok [equivalence, unwritten, rows]");
  }
}
