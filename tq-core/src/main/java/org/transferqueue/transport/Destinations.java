package org.transferqueue.transport;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.NativeBuffer;

/** Turns a {@link BodyDestination} and a reply's body table into the segments to read into. */
final class Destinations {
  private Destinations() {}

  /**
   * The segments to read the bodies into, each exactly a body long, and the buffers the response
   * will own.
   */
  record Prepared(List<MemorySegment> segments, List<NativeBuffer> owned) {}

  /**
   * Prepares the destinations; on failure nothing stays allocated.
   *
   * @throws TqException with {@code SHAPE_MISMATCH} if the bodies do not fit caller segments or
   *     callback buffers, or the allocator's error
   */
  static Prepared prepare(BodyDestination destination, BodyTable table) {
    long[] lengths = table.bodyLengths();
    return switch (destination) {
      case BodyDestination.Segments s -> intoSegments(s.segments(), lengths);
      case BodyDestination.FromAllocator a -> {
        List<NativeBuffer> owned = new ArrayList<>(lengths.length);
        try {
          for (long length : lengths) {
            owned.add(a.allocator().allocate(length));
          }
        } catch (RuntimeException e) {
          owned.forEach(NativeBuffer::close);
          throw e;
        }
        yield new Prepared(owned.stream().map(NativeBuffer::segment).toList(), owned);
      }
      case BodyDestination.Callback c -> fromCallback(c.allocator(), table);
    };
  }

  private static Prepared intoSegments(List<MemorySegment> segments, long[] lengths) {
    if (segments.size() != lengths.length) {
      throw new TqException(
          ErrorCode.SHAPE_MISMATCH,
          "reply has "
              + lengths.length
              + " bodies but the call gave "
              + segments.size()
              + " destination segments");
    }
    List<MemorySegment> slices = new ArrayList<>(lengths.length);
    for (int i = 0; i < lengths.length; i++) {
      MemorySegment segment = segments.get(i);
      if (lengths[i] > segment.byteSize()) {
        throw new TqException(
            ErrorCode.SHAPE_MISMATCH,
            "reply body "
                + i
                + " length="
                + lengths[i]
                + " > destination segment size="
                + segment.byteSize());
      }
      slices.add(segment.asSlice(0, lengths[i]));
    }
    return new Prepared(slices, List.of());
  }

  private static Prepared fromCallback(BodyAllocator allocator, BodyTable table) {
    long[] lengths = table.bodyLengths();
    List<NativeBuffer> buffers = allocator.allocate(table.applicationMetadata(), lengths.clone());
    List<NativeBuffer> owned = buffers == null ? List.of() : List.copyOf(buffers);
    try {
      if (owned.size() != lengths.length) {
        throw new TqException(
            ErrorCode.SHAPE_MISMATCH,
            "body allocator returned "
                + owned.size()
                + " buffers for "
                + lengths.length
                + " reply bodies");
      }
      List<MemorySegment> slices = new ArrayList<>(lengths.length);
      for (int i = 0; i < lengths.length; i++) {
        long size = owned.get(i).lengthBytes();
        if (lengths[i] > size) {
          throw new TqException(
              ErrorCode.SHAPE_MISMATCH,
              "reply body " + i + " length=" + lengths[i] + " > allocated buffer size=" + size);
        }
        slices.add(owned.get(i).segment().asSlice(0, lengths[i]));
      }
      return new Prepared(slices, owned);
    } catch (RuntimeException e) {
      owned.forEach(NativeBuffer::close);
      throw e;
    }
  }
}
