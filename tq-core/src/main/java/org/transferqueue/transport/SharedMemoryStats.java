package org.transferqueue.transport;

/**
 * A snapshot of a {@link TransportServer}'s shared-memory pool (docs/PROTOCOL.md section 4.2).
 *
 * @param enabled whether the server offers shared memory at all
 * @param segments segments currently mapped
 * @param segmentBytes bytes the segments hold (accounted in the server's allocator)
 * @param usedBytes bytes of live regions: probes, grants, leased reply copies and request bodies
 *     still held (for example as stored cells)
 * @param regions live regions
 * @param attachedConnections connections whose client proved it maps the segments
 * @param grants regions granted to clients and not yet used by a request (a Java client keeps one
 *     spare grant of up to 8 MiB per connection, for its next request)
 * @param grantBytes the bytes of those regions
 * @param leases reply-body leases clients have not released yet
 */
public record SharedMemoryStats(
    boolean enabled,
    int segments,
    long segmentBytes,
    long usedBytes,
    long regions,
    long attachedConnections,
    long grants,
    long grantBytes,
    long leases) {

  /** The statistics of a server with shared memory off. */
  public static final SharedMemoryStats OFF = new SharedMemoryStats(false, 0, 0, 0, 0, 0, 0, 0, 0);

  /**
   * Whether nothing but unused grants holds pool memory: no lease, and the regions in use are the
   * grants' (a client's spare grant stays until its connection closes).
   *
   * @return true when idle
   */
  public boolean idle() {
    return leases == 0 && usedBytes == grantBytes;
  }
}
