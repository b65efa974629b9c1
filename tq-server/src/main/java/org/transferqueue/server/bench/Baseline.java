package org.transferqueue.server.bench;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.LongSupplier;
import org.transferqueue.Clock;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.tensor.ObjectColumn;

/**
 * What a mode's figures are compared with: the bandwidth of moving the workload's bytes by the
 * mode's plain mechanism, without the system. For {@link BenchMode#EMBEDDED} and {@link
 * BenchMode#SHM} that is {@link MemorySegment#copy} between pre-touched segments, one copy per
 * field ({@link #measureMemoryCopy}): the best an in-process put or get of the same data could do
 * with one copy per direction, and what a put through shared memory (one copy into the segment)
 * approaches. For {@link BenchMode#LOOPBACK} it is the same bytes written over a plain loopback
 * socket to a receiver in another process ({@link #measureLoopback}).
 *
 * @param kind what was measured, e.g. {@value #MEMORY_COPY}
 * @param bytes bytes moved per repetition (the workload's {@link Workload#bytes()})
 * @param seconds the time of each timed repetition
 * @param cpuSeconds the CPU time of each timed repetition, summed over the processes taking part
 *     (for the loopback socket: this process and the receiver); empty when not measured
 */
public record Baseline(String kind, long bytes, List<Double> seconds, List<Double> cpuSeconds) {
  /** The {@link #kind()} of {@link #measureMemoryCopy}. */
  public static final String MEMORY_COPY = "memory copy between pre-touched segments";

  /** The {@link #kind()} of {@link #measureLoopback}. */
  public static final String LOOPBACK_SOCKET =
      "loopback socket to a receiver process (write all bytes, wait for its 1-byte answer)";

  /** Timed repetitions {@link #measureMemoryCopy} makes, after one untimed pass. */
  public static final int REPETITIONS = 5;

  /**
   * Validates the components.
   *
   * @throws TqException {@code INVALID_ARGUMENT} when there is no time or a time is not positive
   */
  public Baseline {
    Objects.requireNonNull(kind, "kind");
    seconds = List.copyOf(seconds);
    cpuSeconds = List.copyOf(cpuSeconds);
    if (bytes <= 0 || seconds.isEmpty() || seconds.stream().anyMatch(s -> !(s > 0))) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "baseline needs positive bytes and times: bytes=" + bytes + ", seconds=" + seconds);
    }
  }

  /**
   * A baseline without CPU times.
   *
   * @param kind what was measured
   * @param bytes bytes moved per repetition
   * @param seconds the time of each timed repetition
   */
  public Baseline(String kind, long bytes, List<Double> seconds) {
    this(kind, bytes, seconds, List.of());
  }

  /**
   * The median of the repetitions' CPU times.
   *
   * @return seconds, or NaN when not measured
   */
  public double medianCpuSeconds() {
    return cpuSeconds.isEmpty() ? Double.NaN : median(cpuSeconds);
  }

  private static double median(List<Double> values) {
    double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    int mid = sorted.length / 2;
    return sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  }

  /**
   * The median repetition's time.
   *
   * @return seconds
   */
  public double medianSeconds() {
    return median(seconds);
  }

  /**
   * The bandwidth of the median repetition.
   *
   * @return 10^9 bytes per second
   */
  public double gbPerSec() {
    return bytes / 1e9 / medianSeconds();
  }

  /**
   * Measures the copy bandwidth of a workload's bytes. Destinations (and, for string fields, a
   * source holding the strings' UTF-8 bytes) come pre-touched from {@code allocator} and are
   * returned to it before this method returns.
   *
   * @param allocator where the destination buffers come from
   * @param workload the data whose bytes are copied
   * @param repetitions timed repetitions, at least 1
   * @param nanoClock the time source
   * @param cpuClock CPU nanoseconds of this process, or -1 when unknown
   * @return the measurement
   */
  public static Baseline measureMemoryCopy(
      BufferAllocator allocator,
      Workload workload,
      int repetitions,
      Clock nanoClock,
      LongSupplier cpuClock) {
    List<String> fields = workload.batch().fields();
    long[] fieldBytes = workload.fieldBytes();
    List<NativeBuffer> owned = new ArrayList<>();
    try {
      MemorySegment[] sources = new MemorySegment[fields.size()];
      MemorySegment[] targets = new MemorySegment[fields.size()];
      for (int i = 0; i < sources.length; i++) {
        MemorySegment tensor = workload.tensorSegment(fields.get(i));
        sources[i] =
            tensor != null ? tensor : stringBytes(allocator, workload, fields.get(i), owned);
        NativeBuffer target = allocator.allocate(fieldBytes[i]);
        owned.add(target);
        targets[i] = target.segment();
      }
      copyAll(sources, targets, fieldBytes);
      Double[] seconds = new Double[repetitions];
      List<Double> cpuSeconds = new ArrayList<>();
      for (int r = 0; r < repetitions; r++) {
        long cpuStart = cpuClock.getAsLong();
        long start = nanoClock.nanoTime();
        copyAll(sources, targets, fieldBytes);
        seconds[r] = Math.max(1, nanoClock.nanoTime() - start) / 1e9;
        addCpu(cpuSeconds, cpuStart, cpuClock.getAsLong());
      }
      return new Baseline(
          MEMORY_COPY,
          Arrays.stream(fieldBytes).sum(),
          Arrays.asList(seconds),
          cpuSeconds.size() == repetitions ? cpuSeconds : List.of());
    } finally {
      for (NativeBuffer buffer : owned) {
        buffer.close();
      }
    }
  }

  /**
   * Measures the loopback socket bandwidth of a workload's bytes: per repetition, writes an 8-byte
   * big-endian length and every field's bytes to {@code channel} and waits for the receiver's
   * one-byte answer (the protocol of the {@code LoopbackReceiver} child process). String fields'
   * UTF-8 bytes come from {@code allocator} and are returned to it before this method returns.
   *
   * @param allocator where string fields' bytes are staged
   * @param workload the data whose bytes are sent
   * @param repetitions timed repetitions, at least 1, after one untimed pass
   * @param nanoClock the time source
   * @param channel a blocking channel connected to a receiver
   * @param cpuClock CPU nanoseconds of this process and the receiver, or -1 when unknown
   * @return the measurement
   * @throws TqException {@code CONNECTION_FAILED} when the socket fails or closes early
   */
  public static Baseline measureLoopback(
      BufferAllocator allocator,
      Workload workload,
      int repetitions,
      Clock nanoClock,
      SocketChannel channel,
      LongSupplier cpuClock) {
    List<String> fields = workload.batch().fields();
    long[] fieldBytes = workload.fieldBytes();
    long total = Arrays.stream(fieldBytes).sum();
    List<NativeBuffer> owned = new ArrayList<>();
    try {
      MemorySegment[] sources = new MemorySegment[fields.size()];
      for (int i = 0; i < sources.length; i++) {
        MemorySegment tensor = workload.tensorSegment(fields.get(i));
        sources[i] =
            tensor != null ? tensor : stringBytes(allocator, workload, fields.get(i), owned);
      }
      ByteBuffer header = ByteBuffer.allocate(Long.BYTES);
      ByteBuffer ack = ByteBuffer.allocate(1);
      send(channel, sources, fieldBytes, total, header, ack);
      Double[] seconds = new Double[repetitions];
      List<Double> cpuSeconds = new ArrayList<>();
      for (int r = 0; r < repetitions; r++) {
        long cpuStart = cpuClock.getAsLong();
        long start = nanoClock.nanoTime();
        send(channel, sources, fieldBytes, total, header, ack);
        seconds[r] = Math.max(1, nanoClock.nanoTime() - start) / 1e9;
        addCpu(cpuSeconds, cpuStart, cpuClock.getAsLong());
      }
      return new Baseline(
          LOOPBACK_SOCKET,
          total,
          Arrays.asList(seconds),
          cpuSeconds.size() == repetitions ? cpuSeconds : List.of());
    } catch (IOException e) {
      throw new TqException(ErrorCode.CONNECTION_FAILED, "loopback baseline: " + e.getMessage(), e);
    } finally {
      for (NativeBuffer buffer : owned) {
        buffer.close();
      }
    }
  }

  private static void send(
      SocketChannel channel,
      MemorySegment[] sources,
      long[] lengths,
      long total,
      ByteBuffer header,
      ByteBuffer ack)
      throws IOException {
    header.clear().putLong(total).flip();
    while (header.hasRemaining()) {
      channel.write(header);
    }
    for (int i = 0; i < sources.length; i++) {
      for (long offset = 0; offset < lengths[i]; ) {
        long n = Math.min(Integer.MAX_VALUE, lengths[i] - offset);
        ByteBuffer slice = sources[i].asSlice(offset, n).asByteBuffer();
        while (slice.hasRemaining()) {
          channel.write(slice);
        }
        offset += n;
      }
    }
    ack.clear();
    while (ack.hasRemaining()) {
      if (channel.read(ack) < 0) {
        throw new IOException("the receiver closed the connection before answering");
      }
    }
  }

  private static void addCpu(List<Double> into, long startNanos, long endNanos) {
    if (startNanos >= 0 && endNanos >= 0) {
      into.add(Math.max(0, endNanos - startNanos) / 1e9);
    }
  }

  private static void copyAll(MemorySegment[] sources, MemorySegment[] targets, long[] lengths) {
    for (int i = 0; i < sources.length; i++) {
      MemorySegment.copy(sources[i], 0, targets[i], 0, lengths[i]);
    }
  }

  private static MemorySegment stringBytes(
      BufferAllocator allocator, Workload workload, String field, List<NativeBuffer> owned) {
    ObjectColumn column = (ObjectColumn) workload.batch().column(field);
    long total = 0;
    for (Object value : column.values()) {
      total += ((String) value).getBytes(StandardCharsets.UTF_8).length;
    }
    NativeBuffer buffer = allocator.allocate(total);
    owned.add(buffer);
    long offset = 0;
    for (Object value : column.values()) {
      byte[] utf8 = ((String) value).getBytes(StandardCharsets.UTF_8);
      MemorySegment.copy(MemorySegment.ofArray(utf8), 0, buffer.segment(), offset, utf8.length);
      offset += utf8.length;
    }
    return buffer.segment();
  }
}
