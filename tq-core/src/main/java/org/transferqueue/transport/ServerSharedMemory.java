package org.transferqueue.transport;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.TqException;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.memory.SharedMemoryPool;
import org.transferqueue.memory.SharedSegment;

/**
 * The shared-memory state of one server connection: the pending probe of its HELLO offer, whether
 * the client proved it maps the server's segments (attached), the regions granted to it and not yet
 * used by a request, and the leases of reply bodies it still reads.
 *
 * <p>Design note. Threads: the connection's reader thread offers, attaches, grants, releases and
 * takes grants; handler threads add leases ({@link #share}); the connection's last holder calls
 * {@link #close()}. Every table is guarded by {@code this}; a lease added after close is released
 * at once. Invariant: every region of the pool this connection holds is in {@code probe}, {@code
 * grants} or {@code leases}, and every placed grant (destinations a handler's body allocator chose
 * inside the pool) is in {@code placed} until a request takes it or it is abandoned, so {@link
 * #close()} returns all of it.
 */
final class ServerSharedMemory {
  private static final System.Logger LOG = System.getLogger(ServerSharedMemory.class.getName());

  /** The most ids one SHM_RELEASE may name. */
  static final int MAX_RELEASE_IDS = 1 << 20;

  private final SharedMemoryPool pool;
  private final TransportConfig config;
  private final SharedMemoryCounters counters;
  private final Map<Long, NativeBuffer> grants = new HashMap<>();
  private final Map<Long, List<AutoCloseable>> leases = new HashMap<>();
  private final Map<Long, PlacedGrant> placed = new HashMap<>();
  private long grantedBytes;
  private NativeBuffer probe;
  private SharedMemoryPool.Location probeLocation;
  private boolean attached;
  private boolean closed;
  private long nextId = 1;

  ServerSharedMemory(SharedMemoryPool pool, TransportConfig config, SharedMemoryCounters counters) {
    this.pool = pool;
    this.config = config;
    this.counters = counters;
  }

  /**
   * Reserves a probe region for a HELLO offer.
   *
   * @return the offer, or null if the pool has no room (the client stays on TCP)
   */
  synchronized SharedMessages.Offer offer() {
    releaseProbe();
    attached = false;
    try {
      probe = pool.allocate(SharedSegment.HEADER_BYTES);
    } catch (TqException e) {
      return null;
    }
    probeLocation = pool.locate(probe.segment());
    probe.segment().fill((byte) 0);
    return new SharedMessages.Offer(
        ProcessHandle.current().pid(),
        SharedMessages.SegmentRef.of(probeLocation.segment()),
        probeLocation.offset());
  }

  /**
   * Checks a client's proof and frees the probe region either way.
   *
   * @param nonce the 16 bytes the client wrote at the probe offset, or null if it declined
   * @return whether the connection is now attached
   */
  synchronized boolean attach(byte[] nonce) {
    if (probe == null || nonce == null || nonce.length != 16) {
      releaseProbe();
      return false;
    }
    byte[] written = probe.segment().asSlice(0, 16).toArray(ValueLayout.JAVA_BYTE);
    attached = java.security.MessageDigest.isEqual(written, nonce);
    releaseProbe();
    return attached;
  }

  synchronized boolean attached() {
    return attached;
  }

  /**
   * Grants a region of at least {@code length} bytes to this connection.
   *
   * @throws TqException {@code PROTOCOL_ERROR} when not attached, {@code INVALID_ARGUMENT} for a
   *     length out of range, {@code OUT_OF_MEMORY} when the pool has no room
   */
  synchronized SharedMessages.Grant grant(long length) {
    requireAttached();
    if (length < 1 || length > pool.limitBytes()) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "SHM_GRANT length=" + length + " not in [1, " + pool.limitBytes() + "]");
    }
    requireRoom(length, "SHM_GRANT length=" + length);
    NativeBuffer region = pool.allocate(length);
    SharedMemoryPool.Location location = pool.locate(region.segment());
    long id = nextId++;
    grants.put(id, region);
    grantedBytes += region.lengthBytes();
    return new SharedMessages.Grant(
        id,
        SharedMessages.SegmentRef.of(location.segment()),
        location.offset(),
        region.lengthBytes());
  }

  /**
   * A placed grant: the destinations a handler's body allocator chose for a request announced by
   * its type, application metadata (the very array the allocator saw) and body lengths.
   */
  private record PlacedGrant(
      RequestBodyAllocator.Placed placed, byte[] metadata, long[] lengths, long bytes) {}

  /**
   * Registers a placed grant when every destination lies inside a live region of the pool, so that
   * the client can write each body straight where the handler keeps it.
   *
   * @param destinations the allocator's destinations, each exactly its body's length
   * @param metadata the application metadata the allocator was given (kept by identity: the
   *     dispatched request carries this array)
   * @return the grant id and placements, or null when a destination is not in the pool (the caller
   *     then abandons the destinations and grants a region instead)
   * @throws TqException {@code PROTOCOL_ERROR} when not attached, {@code OUT_OF_MEMORY} when the
   *     connection's unused grants would exceed its limit, {@code CLOSED} after close; the caller
   *     abandons the destinations
   */
  PlacedReply place(RequestBodyAllocator.Placed destinations, byte[] metadata, long[] lengths) {
    List<SharedMessages.Placement> placements = new ArrayList<>(lengths.length);
    long bytes = 0;
    for (MemorySegment destination : destinations.segments()) {
      SharedMemoryPool.Location location = pool.locate(destination);
      if (location == null) {
        return null;
      }
      placements.add(
          new SharedMessages.Placement(
              SharedMessages.SegmentRef.of(location.segment()), location.offset()));
      bytes += destination.byteSize();
    }
    synchronized (this) {
      requireAttached();
      requireRoom(bytes, "SHM_GRANT of " + bytes + " placed bytes");
      long id = nextId++;
      placed.put(id, new PlacedGrant(destinations, metadata, lengths.clone(), bytes));
      grantedBytes += bytes;
      return new PlacedReply(id, placements);
    }
  }

  private void requireAttached() {
    if (!attached) {
      throw new ProtocolException(
          ErrorCode.PROTOCOL_ERROR, "SHM_GRANT on a connection that is not attached");
    }
  }

  /**
   * Checks that this connection is open and that {@code bytes} more of unused grants stay within
   * its {@code connectionMemoryLimitBytes}; called with {@code this} held.
   */
  private void requireRoom(long bytes, String request) {
    ensureOpen();
    if (grantedBytes + bytes > config.connectionMemoryLimitBytes()) {
      throw new TqException(
          ErrorCode.OUT_OF_MEMORY,
          request
              + ": the connection's unused grants hold "
              + grantedBytes
              + " bytes, connectionMemoryLimitBytes="
              + config.connectionMemoryLimitBytes());
    }
  }

  /** A placed grant's id and where its bodies go. */
  record PlacedReply(long grantId, List<SharedMessages.Placement> placements) {}

  /**
   * What a request naming a grant gets: its bodies, and for a placed grant the metadata array the
   * body allocator saw (the request is dispatched with it), else null.
   */
  record TakenGrant(RequestBodyAllocator.Placed bodies, byte[] placedMetadata) {}

  /**
   * Takes the grant a request names: a placed grant's destinations when the request matches what
   * the grant was placed for, or a region's bodies ({@link #takeGrant(long, long[], long[])}).
   *
   * @throws ProtocolException {@code PROTOCOL_ERROR} for a request that does not match its placed
   *     grant (the placement is abandoned), and as {@link #takeGrant(long, long[], long[])}
   */
  TakenGrant take(long grantId, long[] offsets, long[] lengths, byte[] appMeta) {
    PlacedGrant grant;
    synchronized (this) {
      grant = attached ? placed.remove(grantId) : null;
      if (grant != null) {
        grantedBytes -= grant.bytes();
      }
    }
    if (grant == null) {
      return new TakenGrant(takeGrant(grantId, offsets, lengths), null);
    }
    String mismatch =
        offsets != null
            ? "names placed grant_id=" + grantId + " with offsets (a placed request has none)"
            : !Arrays.equals(lengths, grant.lengths())
                ? "has body lengths "
                    + Arrays.toString(lengths)
                    + ", placed grant_id="
                    + grantId
                    + " was placed for "
                    + Arrays.toString(grant.lengths())
                : !Arrays.equals(appMeta, grant.metadata())
                    ? "has other application metadata than placed grant_id=" + grantId + " was for"
                    : null;
    if (mismatch != null) {
      grant.placed().abandon();
      throw new ProtocolException(ErrorCode.PROTOCOL_ERROR, "a request " + mismatch);
    }
    counters.requestBytesPlaced.add(grant.bytes());
    return new TakenGrant(grant.placed(), grant.metadata());
  }

  /**
   * Takes the grant a request names and slices its bodies out of it; the grant is consumed whether
   * or not the slicing succeeds. The region's unused tail (beyond the last body, rounded up to 64)
   * goes back to the pool at once, so that a handler keeping the bodies (a storage unit's cells)
   * holds only their bytes.
   *
   * @param offsets the bodies' explicit offsets in the region, or null for the implicit layout
   * @return the bodies, owned by the request (one buffer: the region)
   * @throws ProtocolException {@code PROTOCOL_ERROR} for an unattached connection, an unknown or
   *     used grant id, or bodies that overlap or overflow the region
   */
  RequestBodyAllocator.Placed takeGrant(long grantId, long[] offsets, long[] lengths) {
    NativeBuffer region;
    synchronized (this) {
      if (!attached) {
        throw new ProtocolException(
            ErrorCode.PROTOCOL_ERROR,
            "a request with shared bodies (grant_id=" + grantId + ") on a connection not attached");
      }
      region = grants.remove(grantId);
      if (region != null) {
        grantedBytes -= region.lengthBytes();
      }
    }
    if (region == null) {
      throw new ProtocolException(
          ErrorCode.PROTOCOL_ERROR, "grant_id=" + grantId + " is unknown or already used");
    }
    long[] at = offsets;
    long end;
    try {
      if (at == null) {
        at = SharedMessages.requestOffsets(lengths);
        end = lengths.length == 0 ? 0 : at[lengths.length - 1] + lengths[lengths.length - 1];
        if (end > region.lengthBytes()) {
          throw new ProtocolException(
              ErrorCode.PROTOCOL_ERROR,
              "bodies of "
                  + end
                  + " bytes (64-byte aligned) overflow grant_id="
                  + grantId
                  + " of "
                  + region.lengthBytes()
                  + " bytes");
        }
      } else {
        end = SharedMessages.checkRequestOffsets(at, lengths, region.lengthBytes(), grantId);
      }
    } catch (ProtocolException e) {
      region.close();
      throw e;
    }
    pool.trim(region, end);
    long total = 0;
    for (long length : lengths) {
      total += length;
    }
    counters.requestBytesGranted.add(total);
    List<MemorySegment> bodies = new ArrayList<>(lengths.length);
    for (int i = 0; i < lengths.length; i++) {
      bodies.add(region.segment().asSlice(at[i], lengths[i]));
    }
    return new RequestBodyAllocator.Placed(bodies, List.of(region));
  }

  /** Releases leases and unused grants by id; unknown ids are ignored. */
  void release(long[] ids) {
    List<AutoCloseable> freed = new ArrayList<>();
    synchronized (this) {
      for (long id : ids) {
        NativeBuffer grant = grants.remove(id);
        if (grant != null) {
          grantedBytes -= grant.lengthBytes();
          freed.add(grant);
        }
        PlacedGrant unused = placed.remove(id);
        if (unused != null) {
          grantedBytes -= unused.bytes();
          freed.add(unused.placed()::abandon);
        }
        List<AutoCloseable> lease = leases.remove(id);
        if (lease != null) {
          freed.addAll(lease);
        }
      }
    }
    closeAll(freed);
  }

  /** A reply put into shared memory. */
  record SharedReply(byte[] section, boolean keepsResources) {}

  /**
   * Puts a reply's bodies into shared memory: a body already inside a live pool region is leased in
   * place, the others are copied into one fresh region. A lease in place also takes over the
   * reply's resources (the cells or read tickets that keep those bytes unchanged), so they are
   * closed when the client releases the lease, not when the frame is written.
   *
   * @return the metadata section of the shared reply and whether the lease took the reply's
   *     resources, or null to send it over the socket (not attached, too small, or no room in the
   *     pool)
   */
  SharedReply share(Reply reply) {
    List<MemorySegment> bodies = reply.bodies();
    if (bodies.isEmpty() || reply.bodyLength() < config.sharedMemoryMinBytes() || !attached()) {
      return null;
    }
    List<AutoCloseable> held = new ArrayList<>();
    SharedMessages.Placement[] placements = new SharedMessages.Placement[bodies.size()];
    long[] lengths = new long[bodies.size()];
    long copyBytes = 0;
    long lentBytes = 0;
    int inPlace = 0;
    int empty = 0;
    SharedMessages.Placement anyInPlace = null;
    try {
      for (int i = 0; i < bodies.size(); i++) {
        MemorySegment body = bodies.get(i);
        lengths[i] = body.byteSize();
        if (lengths[i] == 0) {
          // Lent with the others if they all are (any offset holds zero bytes), else copied.
          empty++;
          copyBytes = SharedMessages.align64(copyBytes);
          continue;
        }
        SharedMemoryPool.Location location = pool.locate(body);
        NativeBuffer hold = location == null ? null : retainQuietly(location.region());
        if (hold != null) {
          held.add(hold);
          inPlace++;
          lentBytes += lengths[i];
          placements[i] =
              new SharedMessages.Placement(
                  SharedMessages.SegmentRef.of(location.segment()), location.offset());
          anyInPlace = anyInPlace == null ? placements[i] : anyInPlace;
        } else {
          copyBytes = SharedMessages.align64(copyBytes) + lengths[i];
        }
      }
      if (anyInPlace != null && inPlace + empty == bodies.size()) {
        // Every non-empty body is lent in place: the empty ones need no region either.
        for (int i = 0; i < placements.length; i++) {
          placements[i] = placements[i] == null ? anyInPlace : placements[i];
        }
        inPlace += empty;
      }
      if (inPlace < bodies.size()) {
        NativeBuffer copies;
        try {
          copies = pool.allocate(copyBytes);
        } catch (TqException e) {
          closeAll(held);
          return null;
        }
        held.add(copies);
        SharedMemoryPool.Location base = pool.locate(copies.segment());
        SharedMessages.SegmentRef ref = SharedMessages.SegmentRef.of(base.segment());
        long offset = 0;
        for (int i = 0; i < bodies.size(); i++) {
          if (placements[i] == null) {
            offset = SharedMessages.align64(offset);
            MemorySegment.copy(bodies.get(i), 0, copies.segment(), offset, lengths[i]);
            placements[i] = new SharedMessages.Placement(ref, base.offset() + offset);
            offset += lengths[i];
          }
        }
      }
    } catch (RuntimeException e) {
      closeAll(held);
      throw e;
    }
    boolean keepsResources = inPlace > 0 && !reply.resources().isEmpty();
    if (keepsResources) {
      held.addAll(reply.resources());
    }
    long leaseId;
    synchronized (this) {
      if (closed) {
        if (keepsResources) {
          held.removeAll(reply.resources());
        }
        closeAll(held);
        return null;
      }
      leaseId = nextId++;
      leases.put(leaseId, held);
    }
    byte[] section =
        SharedMessages.sharedReplySection(lengths, leaseId, List.of(placements), reply.metadata());
    if (section.length > config.maxMetadataBytes()) {
      // Too many placements for one metadata section: the reply goes over the socket instead.
      synchronized (this) {
        leases.remove(leaseId);
      }
      if (keepsResources) {
        held.removeAll(reply.resources());
      }
      closeAll(held);
      return null;
    }
    counters.replyBytesLent.add(lentBytes);
    counters.replyBytesCopied.add(reply.bodyLength() - lentBytes);
    return new SharedReply(section, keepsResources);
  }

  private static void closeAll(List<AutoCloseable> resources) {
    for (AutoCloseable resource : resources) {
      try {
        resource.close();
      } catch (Exception e) {
        LOG.log(
            System.Logger.Level.WARNING,
            "closing a shared-memory lease's resource failed: " + Errors.describe(e),
            e);
      }
    }
  }

  private static NativeBuffer retainQuietly(NativeBuffer region) {
    try {
      return region.retain();
    } catch (TqException e) {
      return null; // released concurrently: the body is copied instead
    }
  }

  /**
   * The grants and leases outstanding on this connection.
   *
   * @return {@code [grants (placed ones included), leases, bytes of the granted regions]}
   */
  synchronized long[] outstanding() {
    long regionBytes = 0;
    for (NativeBuffer grant : grants.values()) {
      regionBytes += grant.lengthBytes();
    }
    return new long[] {grants.size() + placed.size(), leases.size(), regionBytes};
  }

  /** Frees the probe, every grant and every lease. Idempotent. */
  void close() {
    List<AutoCloseable> freed = new ArrayList<>();
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      attached = false;
      if (probe != null) {
        freed.add(probe);
        probe = null;
      }
      freed.addAll(grants.values());
      grants.clear();
      for (PlacedGrant unused : placed.values()) {
        freed.add(unused.placed()::abandon);
      }
      placed.clear();
      grantedBytes = 0;
      leases.values().forEach(freed::addAll);
      leases.clear();
    }
    closeAll(freed);
  }

  private void ensureOpen() {
    if (closed) {
      throw new TqException(ErrorCode.CLOSED, "connection closed");
    }
  }

  private void releaseProbe() {
    if (probe != null) {
      probe.close();
      probe = null;
      probeLocation = null;
    }
  }
}
