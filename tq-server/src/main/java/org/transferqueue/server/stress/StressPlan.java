package org.transferqueue.server.stress;

import java.time.Duration;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * What a stress run does: how many clients, sharing how many client instances, for how long, with
 * batches of how many rows of how many bytes.
 *
 * @param clients concurrent clients, each a virtual thread, 1 to {@value #MAX_CLIENTS}
 * @param connections client instances ({@code TqClient}s) the clients share round-robin, 1 to
 *     {@code clients}
 * @param duration how long clients start new iterations; each finishes the one it is in
 * @param rows rows per put, 1 to 1024
 * @param valueBytes the widest payload row, {@value #MIN_VALUE_BYTES} to 64 MiB; client {@code i}
 *     writes rows of {@code 64 * 4^(i mod k)} bytes up to this on its own partition, and rows of
 *     this width on the shared one
 * @param opTimeout the longest a blocking fetch waits
 * @param verify whether every row read is checked (checksum, writer, sequence, fields agree, each
 *     shared row read once); without it only the counts of fetched rows are checked
 * @param seed seeds the random bytes of every client
 * @param flows the flows every client repeats, at least one
 */
public record StressPlan(
    int clients,
    int connections,
    Duration duration,
    int rows,
    int valueBytes,
    Duration opTimeout,
    boolean verify,
    long seed,
    Set<StressFlow> flows) {
  /** The most clients a run accepts. */
  public static final int MAX_CLIENTS = 65_536;

  /** The narrowest payload row: the header plus some random bytes. */
  public static final int MIN_VALUE_BYTES = 64;

  /** Validates every value; the messages name the option. */
  public StressPlan {
    check(clients >= 1 && clients <= MAX_CLIENTS, "--clients=" + clients, "1.." + MAX_CLIENTS);
    check(
        connections >= 1 && connections <= clients,
        "--connections=" + connections,
        "1..clients=" + clients);
    check(
        duration != null && !duration.isNegative() && !duration.isZero(),
        "--duration=" + duration,
        "a positive duration");
    check(rows >= 1 && rows <= 1024, "--rows=" + rows, "1..1024");
    check(
        valueBytes >= MIN_VALUE_BYTES && valueBytes <= (64 << 20),
        "--value-bytes=" + valueBytes,
        MIN_VALUE_BYTES + "..67108864");
    check(
        opTimeout != null && !opTimeout.isNegative() && !opTimeout.isZero(),
        "--op-timeout=" + opTimeout,
        "a positive duration");
    check(flows != null && !flows.isEmpty(), "--flows=" + flows, "a non-empty list");
    flows = Collections.unmodifiableSet(EnumSet.copyOf(flows));
  }

  /**
   * The payload width of a client's own partition: {@code 64 * 4^(clientId mod k)}, the widths from
   * 64 bytes up to {@link #valueBytes} cycling over the clients.
   *
   * @param clientId the client
   * @return bytes per row
   */
  public int ownWidth(int clientId) {
    int steps = 0;
    while ((long) MIN_VALUE_BYTES << (2 * (steps + 1)) <= valueBytes) {
      steps++;
    }
    return MIN_VALUE_BYTES << (2 * (clientId % (steps + 1)));
  }

  /**
   * The bytes one put of a client moves at most (both partitions' widths are bounded by {@link
   * #valueBytes}): payload, tags and strings.
   *
   * @return an upper bound in bytes
   */
  public long batchBytesBound() {
    return (long) rows * (valueBytes + 2L * Long.BYTES + 32);
  }

  private static void check(boolean ok, String value, String allowed) {
    if (!ok) {
      throw new TqException(ErrorCode.INVALID_ARGUMENT, value + " is not in " + allowed);
    }
  }
}
