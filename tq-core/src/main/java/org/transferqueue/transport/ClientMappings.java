package org.transferqueue.transport;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.SharedSegment;

/**
 * A client connection's mappings of its server's shared-memory segments, by segment reference, each
 * mapped once and kept for the connection's life.
 *
 * <p>Design note. A mapping is reference-counted: the cache holds one reference while the
 * connection lives, and every reply-body view or request copy in progress holds one more. {@link
 * #close()} (the connection ended) drops the cache's references, so a segment is unmapped as soon
 * as the last view over it is released, and never while one is. Thread-safe: the cache is guarded
 * by {@code this}, the counts are atomic.
 */
final class ClientMappings {
  /** Maps another process's segment; {@link SharedSegment#open} unless a test replaces it. */
  @FunctionalInterface
  interface Mapper {
    SharedSegment open(long pid, int fd, byte[] key, long size);
  }

  /** One mapped segment and its holders. */
  static final class Mapping {
    private final SharedSegment segment;
    private final AtomicInteger live;
    private final AtomicInteger refs = new AtomicInteger(1);

    Mapping(SharedSegment segment, AtomicInteger live) {
      this.segment = segment;
      this.live = live;
      live.incrementAndGet();
    }

    SharedSegment segment() {
      return segment;
    }

    Mapping retain() {
      refs.incrementAndGet();
      return this;
    }

    void release() {
      if (refs.decrementAndGet() == 0) {
        segment.close();
        live.decrementAndGet();
      }
    }
  }

  private final Mapper mapper;
  private final long pid;
  private final AtomicInteger live;
  private final Map<SharedMessages.SegmentRef, Mapping> cache = new HashMap<>();
  private boolean closed;

  /**
   * @param mapper how segments are mapped
   * @param pid the server's process id from its HELLO offer
   * @param live counts this client's mappings not yet unmapped
   */
  ClientMappings(Mapper mapper, long pid, AtomicInteger live) {
    this.mapper = mapper;
    this.pid = pid;
    this.live = live;
  }

  /**
   * Maps a segment, or finds its mapping.
   *
   * @return the mapping with one reference for the caller, who releases it
   * @throws TqException {@code CONNECTION_FAILED} after close or when the segment cannot be mapped,
   *     {@code PROTOCOL_ERROR} when it does not match its reference
   */
  synchronized Mapping acquire(SharedMessages.SegmentRef ref) {
    if (closed) {
      throw new TqException(ErrorCode.CONNECTION_FAILED, "the connection's mappings are closed");
    }
    Mapping mapping = cache.get(ref);
    if (mapping == null) {
      mapping = new Mapping(mapper.open(pid, ref.fd(), ref.key(), ref.size()), live);
      cache.put(ref, mapping);
    }
    return mapping.retain();
  }

  /** Drops the cache's references; segments no view holds are unmapped now. Idempotent. */
  void close() {
    List<Mapping> drop;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      drop = new ArrayList<>(cache.values());
      cache.clear();
    }
    drop.forEach(Mapping::release);
  }
}
