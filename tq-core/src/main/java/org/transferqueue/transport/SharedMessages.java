package org.transferqueue.transport;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.codec.MsgpackException;
import org.transferqueue.codec.MsgpackReader;
import org.transferqueue.codec.MsgpackWriter;
import org.transferqueue.memory.SharedSegment;

/**
 * Application metadata of the shared-memory messages (docs/PROTOCOL.md section 4.2): the HELLO
 * offer, SHM_ATTACH, SHM_GRANT, SHM_RELEASE and the shared-body item of a frame flagged {@link
 * org.transferqueue.codec.FrameDescriptor#FLAG_SHARED_BODY}. Stateless.
 */
final class SharedMessages {
  private SharedMessages() {}

  /**
   * A segment reference {@code [fd, key, size]}.
   *
   * @param fd the server's descriptor of the memfd
   * @param key the segment's 16-byte key
   * @param size the segment's whole size
   */
  record SegmentRef(int fd, byte[] key, long size) {
    static SegmentRef of(SharedSegment segment) {
      return new SegmentRef(segment.fd(), segment.key(), segment.size());
    }

    void write(MsgpackWriter out) {
      out.writeArrayHeader(3);
      out.writeLong(fd);
      out.writeBinary(key);
      out.writeLong(size);
    }

    static SegmentRef read(MsgpackReader in) {
      if (in.readArrayHeader() != 3) {
        throw new MsgpackException("segment reference", in.offset(), "is not [fd, key, size]");
      }
      long fd = in.readLong();
      byte[] key = in.readBinary();
      long size = in.readLong();
      if (fd < 0 || fd > Integer.MAX_VALUE || key.length != SharedSegment.KEY_BYTES || size <= 0) {
        throw new MsgpackException(
            "segment reference",
            in.offset(),
            "has fd=" + fd + ", key of " + key.length + " bytes, size=" + size);
      }
      return new SegmentRef((int) fd, key, size);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof SegmentRef r && r.fd == fd && r.size == size && Arrays.equals(r.key, key);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(key);
    }

    @Override
    public String toString() {
      return "SegmentRef[fd=" + fd + ", size=" + size + "]";
    }
  }

  /**
   * A HELLO reply's offer.
   *
   * @param pid the server's process id
   * @param segment the segment holding the probe region
   * @param probeOffset the probe region's offset in it
   */
  record Offer(long pid, SegmentRef segment, long probeOffset) {}

  /**
   * A granted region, or a placed grant.
   *
   * @param grantId the id a request names it by
   * @param segment its segment; null for a placed grant
   * @param offset its offset in the segment
   * @param length its length (at least the length asked for); 0 for a placed grant
   * @param placements where each body goes, for a placed grant; null for a region
   */
  record Grant(
      long grantId, SegmentRef segment, long offset, long length, List<Placement> placements) {
    Grant(long grantId, SegmentRef segment, long offset, long length) {
      this(grantId, segment, offset, length, null);
    }

    /** Whether the server placed the bodies (each goes to its own placement). */
    boolean placed() {
      return placements != null;
    }
  }

  /**
   * An SHM_GRANT request.
   *
   * @param length the bytes of a region, should the server grant one
   * @param type the message type of the request the grant is for; -1 in the short form
   * @param metadata that request's application metadata; null in the short form
   * @param bodyLengths that request's body lengths; null in the short form
   */
  record GrantRequest(long length, int type, byte[] metadata, long[] bodyLengths) {
    boolean placing() {
      return metadata != null;
    }
  }

  /**
   * Where one reply body lies.
   *
   * @param segment its segment
   * @param offset its offset in the segment
   */
  record Placement(SegmentRef segment, long offset) {}

  /**
   * A decoded shared-body item and the application metadata after it.
   *
   * @param id the grant id (request) or lease id (reply)
   * @param placements a reply's body placements; empty for a request
   * @param offsets a request's explicit body offsets in its grant, or null for the implicit layout
   *     ({@link #requestOffsets(long[])})
   * @param applicationMetadata the bytes after the item
   */
  record SharedItem(
      long id, List<Placement> placements, long[] offsets, byte[] applicationMetadata) {}

  /** The whole metadata section of a HELLO: {@code [token]} or {@code [token, true]}. */
  static byte[] helloSection(String token, boolean wantShm) {
    if (!wantShm) {
      return ControlMessages.helloSection(token);
    }
    MsgpackWriter out = new MsgpackWriter(16 + (token == null ? 0 : 3 * token.length()));
    out.writeArrayHeader(0);
    out.writeArrayHeader(2);
    if (token == null) {
      out.writeNil();
    } else {
      out.writeString(token, "token");
    }
    out.writeBoolean(true);
    return out.toByteArray();
  }

  /** Whether a HELLO's application metadata asks for shared memory; false if malformed. */
  static boolean helloWantsShm(byte[] appMeta) {
    MsgpackReader in = new MsgpackReader(appMeta, "hello");
    try {
      if (in.readArrayHeader() < 2) {
        return false;
      }
      if (!in.tryReadNil()) {
        in.readString();
      }
      return in.readBoolean();
    } catch (MsgpackException e) {
      return false;
    }
  }

  /** A HELLO reply's application metadata: {@code [offer]}, offer null = nil. */
  static byte[] helloReply(Offer offer) {
    MsgpackWriter out = new MsgpackWriter(64);
    out.writeArrayHeader(1);
    if (offer == null) {
      out.writeNil();
    } else {
      out.writeArrayHeader(3);
      out.writeLong(offer.pid());
      offer.segment().write(out);
      out.writeLong(offer.probeOffset());
    }
    return out.toByteArray();
  }

  /**
   * The offer of a HELLO reply.
   *
   * @return the offer, or null when the metadata is absent or carries nil
   * @throws ProtocolException {@code PROTOCOL_ERROR} for malformed metadata
   */
  static Offer decodeHelloReply(byte[] appMeta, String where) {
    if (appMeta.length == 0) {
      return null;
    }
    MsgpackReader in = new MsgpackReader(appMeta, "hello reply");
    try {
      if (in.readArrayHeader() < 1 || in.tryReadNil()) {
        return null;
      }
      if (in.readArrayHeader() != 3) {
        throw new MsgpackException("hello reply", in.offset(), "offer is not [pid, seg, probe]");
      }
      long pid = in.readLong();
      SegmentRef segment = SegmentRef.read(in);
      long probe = in.readLong();
      return new Offer(pid, segment, probe);
    } catch (MsgpackException e) {
      throw malformed(where, "HELLO reply", e);
    }
  }

  /** SHM_ATTACH request: {@code [nonce]} or {@code [nil]}. */
  static byte[] attachRequest(byte[] nonce) {
    MsgpackWriter out = new MsgpackWriter(24);
    out.writeArrayHeader(1);
    if (nonce == null) {
      out.writeNil();
    } else {
      out.writeBinary(nonce);
    }
    return out.toByteArray();
  }

  /** The nonce of an SHM_ATTACH request, null for nil; PROTOCOL_ERROR when malformed. */
  static byte[] decodeAttachRequest(byte[] appMeta) {
    MsgpackReader in = new MsgpackReader(appMeta, "SHM_ATTACH");
    try {
      if (in.readArrayHeader() != 1) {
        throw new MsgpackException("SHM_ATTACH", in.offset(), "is not [nonce]");
      }
      return in.tryReadNil() ? null : in.readBinary();
    } catch (MsgpackException e) {
      throw malformed("client", "SHM_ATTACH request", e);
    }
  }

  /** SHM_ATTACH reply: {@code [attached]}. */
  static byte[] attachReply(boolean attached) {
    MsgpackWriter out = new MsgpackWriter(2);
    out.writeArrayHeader(1);
    out.writeBoolean(attached);
    return out.toByteArray();
  }

  static boolean decodeAttachReply(byte[] appMeta, String where) {
    MsgpackReader in = new MsgpackReader(appMeta, "SHM_ATTACH reply");
    try {
      if (in.readArrayHeader() < 1) {
        throw new MsgpackException("SHM_ATTACH reply", in.offset(), "is not [attached]");
      }
      return in.readBoolean();
    } catch (MsgpackException e) {
      throw malformed(where, "SHM_ATTACH reply", e);
    }
  }

  /** SHM_GRANT request: {@code [length]}. */
  static byte[] grantRequest(long length) {
    MsgpackWriter out = new MsgpackWriter(10);
    out.writeArrayHeader(1);
    out.writeLong(length);
    return out.toByteArray();
  }

  /**
   * SHM_GRANT request in the placing form: {@code [length, type, metadata: bin, body_lengths:
   * [int...]]}.
   */
  static byte[] placedGrantRequest(long length, int type, byte[] metadata, long[] bodyLengths) {
    MsgpackWriter out = new MsgpackWriter(24 + metadata.length + 9 * bodyLengths.length);
    out.writeArrayHeader(4);
    out.writeLong(length);
    out.writeLong(type);
    out.writeBinary(metadata);
    writeTable(out, bodyLengths);
    return out.toByteArray();
  }

  /**
   * An SHM_GRANT request, short ({@code [length]}) or placing ({@code [length, type, metadata,
   * body_lengths]}, at most {@code maxBodies} lengths).
   *
   * @throws ProtocolException {@code PROTOCOL_ERROR} when malformed
   */
  static GrantRequest decodeGrantRequest(byte[] appMeta, int maxBodies) {
    MsgpackReader in = new MsgpackReader(appMeta, "SHM_GRANT");
    try {
      int size = in.readArrayHeader();
      if (size != 1 && size != 4) {
        throw new MsgpackException(
            "SHM_GRANT", in.offset(), "is not [length] or [length, type, metadata, body_lengths]");
      }
      long length = in.readLong();
      if (size == 1) {
        return new GrantRequest(length, -1, null, null);
      }
      long type = in.readLong();
      if (type < MessageDescriptor.FIRST_APPLICATION_TYPE || type > MessageDescriptor.MAX_TYPE) {
        throw new MsgpackException("SHM_GRANT", in.offset(), "type=" + type + " is not a request");
      }
      byte[] metadata = in.readBinary();
      int count = in.readArrayHeader();
      if (count < 0 || count > maxBodies) {
        throw new MsgpackException(
            "SHM_GRANT", in.offset(), "names " + count + " bodies > maxBodySegments=" + maxBodies);
      }
      long[] lengths = new long[count];
      for (int i = 0; i < count; i++) {
        lengths[i] = in.readLong();
        if (lengths[i] < 0) {
          throw new MsgpackException(
              "SHM_GRANT", in.offset(), "body " + i + " length=" + lengths[i] + " < 0");
        }
      }
      return new GrantRequest(length, (int) type, metadata, lengths);
    } catch (MsgpackException e) {
      throw malformed("client", "SHM_GRANT request", e);
    }
  }

  /** SHM_GRANT reply: {@code [grant_id, segment, offset, length]}. */
  static byte[] grantReply(Grant grant) {
    MsgpackWriter out = new MsgpackWriter(64);
    out.writeArrayHeader(4);
    out.writeLong(grant.grantId());
    grant.segment().write(out);
    out.writeLong(grant.offset());
    out.writeLong(grant.length());
    return out.toByteArray();
  }

  /** SHM_GRANT reply of a placed grant: {@code [grant_id, [[segment, offset], ...]]}. */
  static byte[] placedGrantReply(long grantId, List<Placement> placements) {
    MsgpackWriter out = new MsgpackWriter(16 + 48 * placements.size());
    out.writeArrayHeader(2);
    out.writeLong(grantId);
    writePlacements(out, placements);
    return out.toByteArray();
  }

  /**
   * An SHM_GRANT reply: a region ({@code [grant_id, segment, offset, length]}) or, to a placing
   * request, a placed grant ({@code [grant_id, placements]}, one placement per body of {@code
   * bodies}; -1 when the request was short and a placed grant is malformed).
   */
  static Grant decodeGrantReply(byte[] appMeta, String where, int bodies) {
    MsgpackReader in = new MsgpackReader(appMeta, "SHM_GRANT reply");
    try {
      int size = in.readArrayHeader();
      if (size == 2 && bodies >= 0) {
        long id = in.readLong();
        int count = in.readArrayHeader();
        if (count != bodies) {
          throw new MsgpackException(
              "SHM_GRANT reply", in.offset(), "places " + count + " bodies of " + bodies);
        }
        List<Placement> placements = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
          if (in.readArrayHeader() != 2) {
            throw new MsgpackException("SHM_GRANT reply", in.offset(), "is not [seg, offset]");
          }
          SegmentRef segment = SegmentRef.read(in);
          long offset = in.readLong();
          if (offset < SharedSegment.HEADER_BYTES || offset > segment.size()) {
            throw new MsgpackException(
                "SHM_GRANT reply",
                in.offset(),
                "placement offset=" + offset + " outside its segment");
          }
          placements.add(new Placement(segment, offset));
        }
        return new Grant(id, null, 0, 0, placements);
      }
      if (size != 4) {
        throw new MsgpackException("SHM_GRANT reply", in.offset(), "is not [id, seg, off, len]");
      }
      long id = in.readLong();
      SegmentRef segment = SegmentRef.read(in);
      long offset = in.readLong();
      long length = in.readLong();
      if (offset < SharedSegment.HEADER_BYTES || length < 0 || offset + length > segment.size()) {
        throw new MsgpackException(
            "SHM_GRANT reply",
            in.offset(),
            "region offset=" + offset + " length=" + length + " outside its segment");
      }
      return new Grant(id, segment, offset, length);
    } catch (MsgpackException e) {
      throw malformed(where, "SHM_GRANT reply", e);
    }
  }

  /** SHM_RELEASE request: {@code [[ids...]]}. */
  static byte[] releaseRequest(long[] ids) {
    MsgpackWriter out = new MsgpackWriter(8 + 9 * ids.length);
    out.writeArrayHeader(1);
    out.writeArrayHeader(ids.length);
    for (long id : ids) {
      out.writeLong(id);
    }
    return out.toByteArray();
  }

  static long[] decodeReleaseRequest(byte[] appMeta, int maxIds) {
    MsgpackReader in = new MsgpackReader(appMeta, "SHM_RELEASE");
    try {
      if (in.readArrayHeader() != 1) {
        throw new MsgpackException("SHM_RELEASE", in.offset(), "is not [ids]");
      }
      int count = in.readArrayHeader();
      if (count < 0 || count > maxIds) {
        throw new MsgpackException(
            "SHM_RELEASE", in.offset(), "names " + count + " ids > max=" + maxIds);
      }
      long[] ids = new long[count];
      for (int i = 0; i < count; i++) {
        ids[i] = in.readLong();
      }
      return ids;
    } catch (MsgpackException e) {
      throw malformed("client", "SHM_RELEASE request", e);
    }
  }

  /**
   * The metadata section of a request whose bodies lie in grant {@code grantId} at {@code offsets}
   * (item {@code [grant_id, [o_0, o_1, ...]]}).
   */
  static byte[] sharedRequestSection(long[] lengths, long grantId, long[] offsets, byte[] appMeta) {
    MsgpackWriter out = new MsgpackWriter(24 + 18 * lengths.length + appMeta.length);
    writeTable(out, lengths);
    out.writeArrayHeader(2);
    out.writeLong(grantId);
    out.writeArrayHeader(lengths.length);
    for (int i = 0; i < lengths.length; i++) {
      out.writeLong(offsets[i]);
    }
    out.writeRaw(appMeta, 0, appMeta.length);
    return out.toByteArray();
  }

  /** The metadata section of a reply whose bodies lie where {@code placements} say. */
  static byte[] sharedReplySection(
      long[] lengths, long leaseId, List<Placement> placements, byte[] appMeta) {
    MsgpackWriter out = new MsgpackWriter(32 + 48 * lengths.length + appMeta.length);
    writeTable(out, lengths);
    out.writeArrayHeader(2);
    out.writeLong(leaseId);
    writePlacements(out, placements);
    out.writeRaw(appMeta, 0, appMeta.length);
    return out.toByteArray();
  }

  /**
   * The metadata section of a request whose bodies lie where placed grant {@code grantId} put them
   * (item {@code [grant_id]}).
   */
  static byte[] placedRequestSection(long[] lengths, long grantId, byte[] appMeta) {
    MsgpackWriter out = new MsgpackWriter(16 + 9 * lengths.length + appMeta.length);
    writeTable(out, lengths);
    out.writeArrayHeader(1);
    out.writeLong(grantId);
    out.writeRaw(appMeta, 0, appMeta.length);
    return out.toByteArray();
  }

  private static void writePlacements(MsgpackWriter out, List<Placement> placements) {
    out.writeArrayHeader(placements.size());
    for (Placement placement : placements) {
      out.writeArrayHeader(2);
      placement.segment().write(out);
      out.writeLong(placement.offset());
    }
  }

  private static void writeTable(MsgpackWriter out, long[] lengths) {
    out.writeArrayHeader(lengths.length);
    for (long length : lengths) {
      out.writeLong(length);
    }
  }

  /**
   * Splits the shared-body item off the metadata after the body table.
   *
   * @param afterTable the bytes after the body table
   * @param reply true for a reply item {@code [lease_id, [[seg, off]...]]}, false for a request
   *     item {@code [grant_id]} or {@code [grant_id, [o_0, o_1, ...]]}
   * @param bodies the body table's entry count (a reply item has one placement each)
   * @throws ProtocolException {@code PROTOCOL_ERROR} for a malformed item
   */
  static SharedItem decodeItem(byte[] afterTable, boolean reply, int bodies, String where) {
    MsgpackReader in = new MsgpackReader(afterTable, "shared-body item");
    try {
      long id;
      List<Placement> placements = List.of();
      long[] offsets = null;
      if (reply) {
        if (in.readArrayHeader() != 2) {
          throw new MsgpackException("shared-body item", in.offset(), "is not [lease, bodies]");
        }
        id = in.readLong();
        int count = in.readArrayHeader();
        if (count != bodies) {
          throw new MsgpackException(
              "shared-body item",
              in.offset(),
              "places " + count + " bodies, the body table has " + bodies);
        }
        placements = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
          if (in.readArrayHeader() != 2) {
            throw new MsgpackException("shared-body item", in.offset(), "is not [seg, offset]");
          }
          SegmentRef segment = SegmentRef.read(in);
          placements.add(new Placement(segment, in.readLong()));
        }
      } else {
        int size = in.readArrayHeader();
        if (size != 1 && size != 2) {
          throw new MsgpackException(
              "shared-body item", in.offset(), "is not [grant_id] or [grant_id, offsets]");
        }
        id = in.readLong();
        if (size == 2) {
          // Checked against the body table by the grant's taker, which consumes the grant first.
          int count = in.readArrayHeader();
          if (count > bodies) {
            throw new MsgpackException(
                "shared-body item",
                in.offset(),
                "has " + count + " offsets, the body table has " + bodies);
          }
          offsets = new long[count];
          for (int i = 0; i < count; i++) {
            offsets[i] = in.readLong();
          }
        }
      }
      byte[] rest = Arrays.copyOfRange(afterTable, (int) in.offset(), afterTable.length);
      return new SharedItem(id, placements, offsets, rest);
    } catch (MsgpackException e) {
      throw malformed(where, "shared-body item", e);
    }
  }

  /**
   * Where body {@code i} starts in a request's granted region: {@code o_{i+1} = align64(o_i +
   * len_i)}.
   */
  static long[] requestOffsets(long[] lengths) {
    long[] offsets = new long[lengths.length + 1];
    for (int i = 0; i < lengths.length; i++) {
      offsets[i + 1] = align64(offsets[i] + lengths[i]);
    }
    return offsets;
  }

  /**
   * Where a client lays out a request's bodies in its grant: a body as long as the previous one
   * follows it back to back (the rows of a dense tensor field, which a storage unit then keeps as
   * one block without a copy); any other body starts a new run at the next multiple of 64. Every
   * body of a run lies at {@code start + k * length} with a 64-aligned start, so each stays aligned
   * for its element type (an element's size divides 64 and the body's length).
   *
   * @param lengths the bodies' lengths in bytes
   * @return {@code n + 1} offsets: body {@code i} at {@code offsets[i]}, the bytes used at {@code
   *     offsets[n]}
   */
  static long[] requestLayout(long[] lengths) {
    int n = lengths.length;
    long[] offsets = new long[n + 1];
    long end = 0;
    for (int i = 0; i < n; i++) {
      offsets[i] = i > 0 && lengths[i] == lengths[i - 1] ? end : align64(end);
      end = offsets[i] + lengths[i];
    }
    offsets[n] = end;
    return offsets;
  }

  /**
   * Checks a request's explicit body offsets against its grant: in order, not overlapping, within
   * {@code regionBytes}.
   *
   * @return the end of the last body
   * @throws ProtocolException {@code PROTOCOL_ERROR} naming the first offending body
   */
  static long checkRequestOffsets(long[] offsets, long[] lengths, long regionBytes, long grantId) {
    if (offsets.length != lengths.length) {
      throw new ProtocolException(
          ErrorCode.PROTOCOL_ERROR,
          "grant_id="
              + grantId
              + ": "
              + offsets.length
              + " offsets, the body table has "
              + lengths.length);
    }
    long end = 0;
    for (int i = 0; i < lengths.length; i++) {
      if (offsets[i] < end || offsets[i] > regionBytes || lengths[i] > regionBytes - offsets[i]) {
        throw new ProtocolException(
            ErrorCode.PROTOCOL_ERROR,
            "body "
                + i
                + " at offset="
                + offsets[i]
                + " length="
                + lengths[i]
                + (offsets[i] < end
                    ? " overlaps the body before it (which ends at " + end + ")"
                    : " overflows grant_id=" + grantId + " of " + regionBytes + " bytes"));
      }
      end = offsets[i] + lengths[i];
    }
    return end;
  }

  static long align64(long x) {
    return (x + 63) & ~63L;
  }

  private static ProtocolException malformed(String where, String what, MsgpackException e) {
    return new ProtocolException(
        ErrorCode.PROTOCOL_ERROR,
        "malformed " + what + " from " + where + ": " + e.detail() + " at offset " + e.offset());
  }
}
