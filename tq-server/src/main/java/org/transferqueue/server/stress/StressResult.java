package org.transferqueue.server.stress;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The figures of one stress run against one backend.
 *
 * @param backend the storage backend's configuration name
 * @param clients concurrent clients (virtual threads)
 * @param connections client instances the clients shared (each with its own connections and memory)
 * @param rows rows per put
 * @param valueBytes the widest payload row in bytes
 * @param seconds wall time of the workload, from the first client's start to the last one's end
 * @param iterations completed iterations of all clients (one on the own, the shared and the
 *     key-value partition count one each)
 * @param operations per operation: count, bytes, latency percentiles
 * @param errors error count by error code name (or exception class for an untyped error)
 * @param rowsWritten rows put
 * @param rowsVerified rows read back and checked
 * @param lost rows written and acknowledged that no read returned
 * @param corrupted rows read back with a bad checksum, a wrong header or delivered to the wrong
 *     reader or twice
 * @param leakedBytes client memory still allocated after every client closed its batches
 * @param offHeapPeakBytes the most off-heap memory the client process had allocated at once: the
 *     run's data allocator plus every client's allocator (each peak taken separately, so an upper
 *     bound)
 * @param peakRssBytes peak resident memory ({@code VmHWM}) by process name: {@code client} and the
 *     servers; -1 where unknown
 * @param problems the first problems in words
 * @param chaos what {@code --chaos} did and how the roles recovered; empty for a run without chaos
 */
public record StressResult(
    String backend,
    int clients,
    int connections,
    int rows,
    int valueBytes,
    double seconds,
    long iterations,
    Map<StressOp, OpFigures> operations,
    Map<String, Long> errors,
    long rowsWritten,
    long rowsVerified,
    long lost,
    long corrupted,
    long leakedBytes,
    long offHeapPeakBytes,
    Map<String, Long> peakRssBytes,
    List<String> problems,
    Optional<ChaosFigures> chaos) {

  /** Copies the collections (the memory figures keep their order). */
  public StressResult {
    operations = Map.copyOf(operations);
    errors = Map.copyOf(errors);
    peakRssBytes = Collections.unmodifiableMap(new LinkedHashMap<>(peakRssBytes));
    problems = List.copyOf(problems);
    Objects.requireNonNull(chaos, "chaos");
  }

  /**
   * The figures of one operation.
   *
   * @param count completed operations
   * @param bytes bytes they moved (tensor bytes plus the UTF-8 bytes of strings)
   * @param p50Nanos median latency
   * @param p99Nanos 99th percentile latency
   * @param maxNanos longest latency
   */
  public record OpFigures(long count, long bytes, long p50Nanos, long p99Nanos, long maxNanos) {}

  /**
   * Whether the run found nothing wrong: nothing lost or corrupted, no memory leaked, and no error
   * (in a chaos run errors are expected, since calls in flight fail when a role is killed, but
   * every killed role must have come back).
   *
   * @return true for a clean run
   */
  public boolean clean() {
    boolean errorsOk = chaos.map(c -> c.failures().isEmpty()).orElseGet(errors::isEmpty);
    return errorsOk && lost == 0 && corrupted == 0 && leakedBytes == 0;
  }

  /**
   * All operations of the run.
   *
   * @return the sum of the operation counts
   */
  public long totalOperations() {
    return operations.values().stream().mapToLong(OpFigures::count).sum();
  }

  /**
   * All bytes the run moved, written plus read.
   *
   * @return the sum of the bytes of every operation
   */
  public long totalBytes() {
    return operations.values().stream().mapToLong(OpFigures::bytes).sum();
  }
}
