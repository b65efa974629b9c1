package org.transferqueue.objectstore.engine;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.objectstore.ReplicateConfig;
import org.transferqueue.storage.checkpoint.CheckpointDigests;
import org.transferqueue.storage.checkpoint.CheckpointFileReader;
import org.transferqueue.storage.checkpoint.CheckpointFileWriter;
import org.transferqueue.storage.checkpoint.FileDigest;

/**
 * The checkpoint file of one embedded object store: every readable object with its pins, written
 * straight from the store's slabs and read straight into staging memory. All integers
 * little-endian.
 *
 * <pre>
 *  file   = magic u32 'TQOS' | version u32 (1) | objectCount i64 | object*
 *  object = keyLength u32 | key UTF-8 | flags u8 (bit 0 hard pin, bit 1 soft pin)
 *           | reserved u8 x 3 | size i64 | bytes
 * </pre>
 *
 * <p>Objects are written sorted by key. The file is written to a temporary sibling, fsynced and
 * moved into place; its CRC32C is computed while writing and verified while reading. Every length
 * is checked against the bytes left before memory is allocated. Stateless.
 */
final class StoreCheckpointFile {
  static final int MAGIC = 0x534f5154; // "TQOS" little-endian
  static final int VERSION = 1;
  private static final int HARD_PIN = 1;
  private static final int SOFT_PIN = 2;

  private StoreCheckpointFile() {}

  /** One object read from a file: key, pins and its bytes in staging memory (owned). */
  record StagedObject(String key, ReplicateConfig config, NativeBuffer bytes) {}

  /**
   * Writes every object of {@code master} to {@code file}, as of one instant; the objects stay
   * pinned (readable, never reused) until written.
   *
   * @return the file's size and CRC32C
   */
  static FileDigest write(Path file, StoreMaster master) throws IOException {
    return write(file, master, () -> {});
  }

  /**
   * As {@link #write(Path, StoreMaster)}, running {@code underLock} at the instant the objects are
   * pinned (under the master's lock).
   */
  static FileDigest write(Path file, StoreMaster master, Runnable underLock) throws IOException {
    Path temporary = file.resolveSibling(file.getFileName() + ".tmp");
    List<StoreMaster.PinnedObject> objects = master.pinAllReadable(underLock);
    try {
      FileDigest digest;
      try (CheckpointFileWriter out = CheckpointFileWriter.create(temporary)) {
        out.i32(MAGIC).i32(VERSION).i64(objects.size());
        for (StoreMaster.PinnedObject object : objects) {
          int flags = (object.hardPinned() ? HARD_PIN : 0) | (object.softPinned() ? SOFT_PIN : 0);
          out.string(object.key()).u8(flags).u8(0).u8(0).u8(0);
          out.i64(object.ticket().size());
          out.bytes(object.ticket().allocation().memory);
        }
        digest = out.finish();
      }
      Files.move(
          temporary, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      return digest;
    } catch (IOException | RuntimeException e) {
      Files.deleteIfExists(temporary);
      throw e;
    } finally {
      master.releaseReads(
          objects.stream()
              .map(StoreMaster.PinnedObject::ticket)
              .toArray(StoreMaster.ReadTicket[]::new));
    }
  }

  /**
   * Reads a file into buffers of {@code allocator}, verifying it in the same pass.
   *
   * @param expected the manifest's digest, or null to check the structure only
   * @return the objects, which the caller owns
   * @throws StorageException {@code NOT_FOUND}, {@code CORRUPT_DATA} or {@code STORAGE_ERROR}
   *     naming the file; nothing is kept then
   */
  static List<StagedObject> read(
      Path file, FileDigest expected, CheckpointDigests digests, BufferAllocator allocator) {
    List<StagedObject> objects = new ArrayList<>();
    try (CheckpointFileReader in = CheckpointFileReader.open(file, expected)) {
      if (in.i32() != MAGIC) {
        throw in.corrupt("not an object store checkpoint (bad magic)");
      }
      int version = in.i32();
      if (version != VERSION) {
        throw in.corrupt("unsupported object store checkpoint version " + version);
      }
      long count = in.i64();
      if (count < 0 || count > in.remaining()) {
        throw in.corrupt("objectCount=" + count + " with " + in.remaining() + " bytes left");
      }
      for (long i = 0; i < count; i++) {
        String key = in.string();
        int flags = in.u8();
        in.u8();
        in.u8();
        in.u8();
        if (key.isEmpty() || (flags & ~(HARD_PIN | SOFT_PIN)) != 0) {
          throw in.corrupt("object " + i + ": key='" + key + "' flags=" + flags);
        }
        long size = in.length("size of object '" + key + "'");
        if (size == 0) {
          throw in.corrupt("object '" + key + "' has size 0");
        }
        NativeBuffer bytes = allocator.allocate(size);
        objects.add(
            new StagedObject(
                key,
                new ReplicateConfig(1, (flags & HARD_PIN) != 0, (flags & SOFT_PIN) != 0),
                bytes));
        in.readInto(bytes.segment());
      }
      in.finish(digests);
      return objects;
    } catch (RuntimeException e) {
      objects.forEach(o -> o.bytes().close());
      if (e instanceof StorageException || !(e instanceof IllegalArgumentException)) {
        throw e;
      }
      throw new StorageException(
          ErrorCode.CORRUPT_DATA, "corrupt checkpoint file " + file + ": " + e, e);
    }
  }
}
