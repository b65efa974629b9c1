package org.transferqueue.server.bench;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.HostPort;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.transport.ProcessStats;
import org.transferqueue.transport.TransportClient;
import org.transferqueue.transport.TransportConfig;

/**
 * Reads the heap-allocation counters of the client process (this one) and of the server processes
 * of a loopback case, so that the allocation of one timed call can be split into client and server.
 * The servers answer {@code PROCESS_STATS} over their own transport; the meter keeps one connection
 * to each. Not thread-safe.
 *
 * <pre>{@code
 * HeapMeter.Reading before = meter.read();
 * kv.batchPut(...);
 * HeapMeter.Reading after = meter.readAfter();
 * long client = after.client() - before.client();
 * }</pre>
 *
 * A reading takes the client's counter last on the way in and first on the way out ({@link #read()}
 * then {@link #readAfter()}), so the meter's own calls to the servers stay outside the client's
 * figure; they add about 2-3 KiB per server to the servers' figure, a few bytes per MiB moved.
 */
final class HeapMeter implements AutoCloseable {
  private static final Duration CALL = Duration.ofSeconds(30);

  private final TransportClient client;
  private final List<HostPort> servers;

  /**
   * Counter values of one moment: the client process, the servers' sum, and the first server's (the
   * controller's when the case lists it first).
   */
  record Reading(long client, long servers, long first) {}

  /**
   * Creates a meter.
   *
   * @param transport the servers' transport settings (token, limits)
   * @param allocator where the meter's transport buffers come from
   * @param servers every server process of the case
   */
  HeapMeter(TransportConfig transport, BufferAllocator allocator, List<HostPort> servers) {
    this.servers = List.copyOf(servers);
    this.client = new TransportClient(Objects.requireNonNull(transport, "transport"), allocator);
  }

  /**
   * Reads before an operation: the servers, then the client.
   *
   * @return the reading
   * @throws TqException {@code UNSUPPORTED_OPERATION} when a process does not measure allocation
   */
  Reading read() {
    long[] servers = serversNow();
    return new Reading(clientNow(), servers[0], servers[1]);
  }

  Reading readAfter() {
    long client = clientNow();
    long[] servers = serversNow();
    return new Reading(client, servers[0], servers[1]);
  }

  /**
   * The number of servers after the first (the storage servers when the controller is first).
   *
   * @return the count
   */
  int storageServers() {
    return Math.max(0, servers.size() - 1);
  }

  private static long clientNow() {
    return check(ProcessStats.currentHeapAllocatedBytes(), "this process");
  }

  /** The servers' sum and the first server's counter. */
  private long[] serversNow() {
    long sum = 0;
    long first = 0;
    for (int i = 0; i < servers.size(); i++) {
      HostPort server = servers.get(i);
      long bytes = check(client.processStats(server, CALL).heapAllocatedBytes(), server.toString());
      sum += bytes;
      if (i == 0) {
        first = bytes;
      }
    }
    return new long[] {sum, first};
  }

  private static long check(long bytes, String where) {
    if (bytes < 0) {
      throw new TqException(
          ErrorCode.UNSUPPORTED_OPERATION, where + " does not measure heap allocation");
    }
    return bytes;
  }

  @Override
  public void close() {
    client.close();
  }
}
