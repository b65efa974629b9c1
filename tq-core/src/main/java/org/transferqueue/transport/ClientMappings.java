package org.transferqueue.transport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
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
 * as the last view over it is released, and never while one is. The server may close a segment it
 * no longer needs, but its pages stay alive while this side maps it: so each time this side maps a
 * new segment, it drops the mappings only the cache holds whose segment the server no longer holds
 * (its {@code /proc/<pid>/fd/<fd>} is gone or names another file than the one mapped). A segment
 * the server still holds stays mapped whatever its size (its pages are alive anyway), so a store
 * node's slabs are mapped once and never faulted in again. Thread-safe: the cache is guarded by
 * {@code this}, the counts are atomic.
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

    /** The server's file as this side mapped it, or null if it could not be told. */
    private final Object file;

    Mapping(SharedSegment segment, AtomicInteger live, Object file) {
      this.segment = segment;
      this.live = live;
      this.file = file;
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

    /** Whether only the cache holds this mapping. */
    boolean idle() {
      return refs.get() == 1;
    }
  }

  private final Mapper mapper;
  private final long pid;
  private final AtomicInteger live;

  /** In access order, for dropping the least recently used. */
  private final Map<SharedMessages.SegmentRef, Mapping> cache =
      new LinkedHashMap<>(16, 0.75f, true);

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
      dropClosedIdle();
      mapping =
          new Mapping(
              mapper.open(pid, ref.fd(), ref.key(), ref.size()), live, fileOf(pid, ref.fd()));
      cache.put(ref, mapping);
    }
    return mapping.retain();
  }

  /**
   * Drops the idle mappings whose segment the server no longer holds: their pages would otherwise
   * stay alive for this side alone. A mapping whose file could not be told is dropped when idle.
   */
  private void dropClosedIdle() {
    Iterator<Map.Entry<SharedMessages.SegmentRef, Mapping>> it = cache.entrySet().iterator();
    while (it.hasNext()) {
      Map.Entry<SharedMessages.SegmentRef, Mapping> entry = it.next();
      Mapping mapping = entry.getValue();
      if (mapping.idle()
          && (mapping.file == null || !mapping.file.equals(fileOf(pid, entry.getKey().fd())))) {
        it.remove();
        mapping.release();
      }
    }
  }

  /** The identity (inode) of the file the server holds under {@code fd}, or null. */
  private static Object fileOf(long pid, int fd) {
    try {
      return Files.getAttribute(Path.of("/proc/" + pid + "/fd/" + fd), "unix:ino");
    } catch (IOException | RuntimeException e) {
      return null;
    }
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
