package org.transferqueue.remote;

import java.nio.file.Path;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.storage.checkpoint.FileDigest;
import org.transferqueue.transport.Response;

/**
 * The checkpoint messages both storage services carry (storage units 205-208, store nodes 307-310),
 * written once for both: the client side encodes with these records, {@link StagedCheckpointLoads}
 * decodes with them (where their meaning is described).
 */
public final class CheckpointMessages {
  private CheckpointMessages() {}

  /**
   * SAVE: write the server's checkpoint file at {@code path} on its host.
   *
   * @param path the file on the server's host
   */
  public record Save(String path) {
    /**
     * The request's metadata.
     *
     * @return {@code [path]}
     */
    public byte[] encode() {
      return new Wire.Writer().array(1).str(path).toBytes();
    }

    static Save decode(byte[] metadata, String what) {
      try (Wire.Reader in = new Wire.Reader(metadata, what)) {
        if (in.array() != 1) {
          throw in.malformed("expected [path]");
        }
        return new Save(in.str());
      }
    }
  }

  /**
   * The reply to SAVE: the written file's size and CRC32C.
   *
   * @param digest the file's digest
   * @return {@code [size, crc32c]}
   */
  static byte[] encodeDigest(FileDigest digest) {
    return new Wire.Writer().array(2).i64(digest.sizeBytes()).i64(digest.crc32c()).toBytes();
  }

  /**
   * Reads the reply to SAVE and closes it.
   *
   * @param response the reply
   * @return the written file's digest
   * @throws StorageException {@code CORRUPT_DATA} for a reply that is not a digest
   */
  public static FileDigest digest(Response response) {
    try (response;
        Wire.Reader in = new Wire.Reader(response.metadata(), "checkpoint save reply")) {
      if (in.array() != 2) {
        throw in.malformed("expected [size, crc32c]");
      }
      return new FileDigest(in.i64(), in.i64());
    } catch (IllegalArgumentException e) {
      throw new StorageException(ErrorCode.CORRUPT_DATA, "bad checkpoint save reply: " + e, e);
    }
  }

  /**
   * PREPARE: the first phase of a load; read, verify and stage the file under {@code token}.
   *
   * @param token the load's token, chosen by the client
   * @param path the file on the server's host
   * @param expected the manifest's digest of the file, or null to check its structure only
   */
  public record Prepare(long token, String path, FileDigest expected) {
    /**
     * The request's metadata.
     *
     * @return {@code [token, path, size|-1, crc32c]}
     */
    public byte[] encode() {
      return new Wire.Writer()
          .array(4)
          .i64(token)
          .str(path)
          .i64(expected == null ? -1 : expected.sizeBytes())
          .i64(expected == null ? 0 : expected.crc32c())
          .toBytes();
    }

    static Prepare decode(byte[] metadata, String what) {
      try (Wire.Reader in = new Wire.Reader(metadata, what)) {
        if (in.array() != 4) {
          throw in.malformed("expected [token, path, size, crc32c]");
        }
        long token = in.i64();
        String path = in.str();
        Path.of(path); // a path this host cannot name is refused before the rest is read
        long size = in.i64();
        long crc = in.i64();
        if (size < -1 || (crc >>> 32) != 0) {
          throw in.malformed("size=" + size + " crc32c=" + crc);
        }
        return new Prepare(token, path, size < 0 ? null : new FileDigest(size, crc));
      }
    }
  }

  /**
   * COMMIT or ABORT: the second phase of the load staged under {@code token}.
   *
   * @param token the load's token
   */
  public record Token(long token) {
    /**
     * The request's metadata.
     *
     * @return {@code [token]}
     */
    public byte[] encode() {
      return new Wire.Writer().array(1).i64(token).toBytes();
    }

    static Token decode(byte[] metadata, String what) {
      try (Wire.Reader in = new Wire.Reader(metadata, what)) {
        if (in.array() != 1) {
          throw in.malformed("expected [token]");
        }
        return new Token(in.i64());
      }
    }
  }
}
