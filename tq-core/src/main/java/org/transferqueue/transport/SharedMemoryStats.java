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
 *     spare grant of up to 8 MiB per connection, for its next request), placed grants included
 * @param grantBytes the bytes of those regions (a placed grant holds no region of the pool: its
 *     bodies go where the handler keeps them)
 * @param leases reply-body leases clients have not released yet
 * @param storageBytes bytes of storage segments: memory a store keeps in the pool so that clients
 *     can map what it holds (a store node's engine slabs), accounted in the server's allocator too
 *     and not part of {@code segmentBytes}, {@code usedBytes} or {@code regions}
 * @param requestBytesGranted request body bytes clients wrote into ordinary granted regions since
 *     the server started (the handler then keeps them in place or copies them where they go)
 * @param requestBytesPlaced request body bytes clients wrote straight into their final place
 *     through placed grants since the server started (one copy on the hop, by the client)
 * @param replyBytesCopied reply body bytes the server copied into fresh regions since it started
 * @param replyBytesLent reply body bytes lent in place (no copy by the server) since it started
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
    long leases,
    long storageBytes,
    long requestBytesGranted,
    long requestBytesPlaced,
    long replyBytesCopied,
    long replyBytesLent) {

  /** The statistics of a server with shared memory off. */
  public static final SharedMemoryStats OFF =
      new SharedMemoryStats(false, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

  /**
   * The sums of two servers' statistics (enabled if either is), for a deployment's total.
   *
   * @param other the other server's statistics
   * @return the sums
   */
  public SharedMemoryStats plus(SharedMemoryStats other) {
    return new SharedMemoryStats(
        enabled || other.enabled,
        segments + other.segments,
        segmentBytes + other.segmentBytes,
        usedBytes + other.usedBytes,
        regions + other.regions,
        attachedConnections + other.attachedConnections,
        grants + other.grants,
        grantBytes + other.grantBytes,
        leases + other.leases,
        storageBytes + other.storageBytes,
        requestBytesGranted + other.requestBytesGranted,
        requestBytesPlaced + other.requestBytesPlaced,
        replyBytesCopied + other.replyBytesCopied,
        replyBytesLent + other.replyBytesLent);
  }

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
