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
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

/**
 * Bad input gets the same outcome embedded, over loopback TCP and over shared memory: the same
 * exception type and {@link org.transferqueue.ErrorCode} (the scenario suites accept either of two
 * codes in places; here the deployments must agree exactly), or the same answer where the input is
 * accepted.
 */
@ExtendWith(LeakCheckExtension.class)
class DeploymentEquivalenceTest {
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
        "read a cleared sample",
        tq -> {
          BatchMeta all = tq.client().getMeta(GetMetadataRequest.forceFetch(P, List.of("x")));
          tq.client().clearSamples(all.selectSamples(0));
          return readSize(tq, all.selectSamples(0));
        });
    p.put(
        "read cells never written",
        tq ->
            readSize(
                tq, tq.client().getMeta(GetMetadataRequest.insert("unwritten", List.of("x"), 2))));
    p.put(
        "read an index that does not exist",
        tq ->
            readSize(
                tq,
                BatchMeta.builder()
                    .globalIndexes(999)
                    .partitionId(P)
                    .field("x", FieldSchema.regular(DType.INT64, 1))
                    .build()));
    p.put(
        "read a field the samples do not have",
        tq -> {
          BatchMeta all = tq.client().getMeta(GetMetadataRequest.forceFetch(P, List.of("x")));
          return readSize(
              tq,
              BatchMeta.builder()
                  .globalIndexes(all.globalIndexes().stream().mapToLong(Long::longValue).toArray())
                  .partitionId(P)
                  .field("nope", FieldSchema.regular(DType.INT64, 1))
                  .build());
        });
    p.put(
        "force-fetch an unknown partition",
        tq -> tq.client().getMeta(GetMetadataRequest.forceFetch("nope", List.of("x"))).size());
    p.put(
        "fetch more than a partition holds, polling",
        tq -> tq.client().getMeta(GetMetadataRequest.fetch(P, List.of("x"), "t", 50)).size());
    p.put(
        "put another dtype into a stored field",
        tq -> {
          try (Batch floats =
              batch("x", Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {1}, 1, 1))) {
            return tq.kv().put("k", P, floats, null).keys();
          }
        });
    p.put(
        "get a missing key",
        tq -> {
          try (Batch b = tq.kv().batchGet(List.of("k", "zzz"), P, null)) {
            return b.rowCount();
          }
        });
    p.put(
        "put an empty key",
        tq -> {
          try (Batch one = batch("x", i64(allocator, new long[] {1}))) {
            return tq.kv().put("", P, one, null).keys();
          }
        });
    p.put("put values under an empty key", tq -> tq.kv().put("", P, Map.of("v", 1L), null).keys());
    p.put("put values under a null key", tq -> tq.kv().put(null, P, Map.of("v", 1L), null).keys());
    p.put(
        "put into a partition whose id holds a lone surrogate",
        tq -> {
          tq.kv().put("k", "p\uD800", Map.of("v", 1L), null);
          return Strings.quote(tq.client().getPartitionList());
        });
    p.put(
        "put an object value that holds a lone surrogate",
        tq -> {
          tq.kv().put("s", P, Map.of("v", "x\uD800"), null);
          try (Batch read = tq.kv().batchGet(List.of("s"), P, List.of("v"))) {
            return Strings.quote(((ObjectColumn) read.column("v")).values());
          }
        });
    p.put(
        "consumption status of an empty task name",
        tq -> tq.client().getConsumptionStatus(P, "").isPresent());
    p.put(
        "put duplicate keys",
        tq -> {
          try (Batch two = batch("x", i64(allocator, new long[] {1}, new long[] {2}))) {
            return tq.kv().batchPut(List.of("d", "d"), P, two, null).keys();
          }
        });
    p.put("list an unknown partition", tq -> tq.kv().list("nope"));
    p.put(
        "clear an unknown key and partition",
        tq -> {
          tq.kv().clear(List.of("zzz"), "nope");
          return tq.client().getPartitionList();
        });
    p.put(
        "resolve indexes of an unknown partition",
        tq -> tq.client().resolveIndexes("nope", List.of(1L)));
    p.put(
        "insert beyond the storage capacity",
        tq -> tq.client().getMeta(GetMetadataRequest.insert("big", List.of("x"), 500)).size());
    p.put(
        "production status of an unknown partition",
        tq -> tq.client().checkProductionStatus("nope", List.of("x")));
    p.put("what is left", tq -> new ArrayList<>(tq.kv().list(P).get(P).keySet()));
    return p;
  }

  private static int readSize(TestSystem tq, BatchMeta meta) {
    try (Batch read = tq.client().getData(meta)) {
      return read.rowCount();
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldGiveTheSameOutcomeOfBadInputEmbeddedOverLoopbackAndOverSharedMemory(
      Backend backend, BufferAllocator allocator) {
    Map<String, String> embedded = outcomes(Deployment.EMBEDDED, backend, allocator);
    Map<String, String> loopback = outcomes(Deployment.LOOPBACK, backend, allocator);
    Map<String, String> shm = outcomes(Deployment.SHM, backend, allocator);
    assertThat(loopback).containsExactlyEntriesOf(embedded);
    assertThat(shm).as("over shared memory").containsExactlyEntriesOf(embedded);
    assertThat(embedded.values()).anyMatch(o -> !o.startsWith("ok"));
    assertThat(embedded)
        .containsEntry("put values under an empty key", "TqException INVALID_ARGUMENT")
        .containsEntry("put values under a null key", "TqException INVALID_ARGUMENT")
        .containsEntry(
            "put into a partition whose id holds a lone surrogate", "TqException INVALID_ARGUMENT")
        .containsEntry(
            "put an object value that holds a lone surrogate", "TqException INVALID_ARGUMENT")
        .containsEntry("consumption status of an empty task name", "TqException INVALID_ARGUMENT");
  }
}
