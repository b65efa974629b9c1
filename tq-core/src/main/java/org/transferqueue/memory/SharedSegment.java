package org.transferqueue.memory;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.concurrent.atomic.AtomicBoolean;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * One shared-memory segment: a Linux memfd mapped read-write and shared, either created by this
 * process ({@link #create}) or opened from another process's descriptor ({@link #open}).
 *
 * <p>Nothing is created in a file system: the kernel frees a memfd when its last descriptor and
 * mapping are gone, so a killed process leaves nothing behind. Another process opens it as {@code
 * /proc/<pid>/fd/<fd>}, which Linux only allows to the same user (ptrace read access) in the same
 * pid namespace.
 *
 * <pre>
 *  offset  size  field
 *       0     8  magic  54 51 53 48 4D 00 00 01 ("TQSHM", 0, 0, 1)
 *       8    16  key    random bytes naming this segment
 *      24     8  size   u64 LE, the whole segment (file) size
 *      32    32  zero
 *      64     .  regions, 64-byte aligned
 * </pre>
 *
 * <p>Thread-safe; {@link #close()} is idempotent and must only be called once nobody reads the
 * memory any more (the owner of the segment counts its users).
 */
public final class SharedSegment implements AutoCloseable {
  /** Bytes of the segment header; regions start at or after it. */
  public static final long HEADER_BYTES = 64;

  /** Length of {@link #key()}. */
  public static final int KEY_BYTES = 16;

  /** The header's first 8 bytes. */
  static final byte[] MAGIC = {0x54, 0x51, 0x53, 0x48, 0x4D, 0x00, 0x00, 0x01};

  private static final long KEY_OFFSET = 8;
  private static final long SIZE_OFFSET = 24;
  private static final int MFD_CLOEXEC = 1;
  private static final SecureRandom RANDOM = new SecureRandom();

  private static final ValueLayout.OfLong SIZE_LAYOUT =
      ValueLayout.JAVA_LONG_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);

  private final int fd;
  private final byte[] key;
  private final long size;
  private final Arena arena;
  private final MemorySegment memory;
  private final AtomicBoolean closed = new AtomicBoolean();

  private SharedSegment(int fd, byte[] key, long size, Arena arena, MemorySegment memory) {
    this.fd = fd;
    this.key = key;
    this.size = size;
    this.arena = arena;
    this.memory = memory;
  }

  /**
   * Creates a memfd of {@code size} bytes, maps it and writes the header with a fresh random key.
   *
   * @param size the whole segment size, a multiple of 4096 above {@link #HEADER_BYTES}
   * @return the segment; the caller owns it and closes it (which closes the descriptor)
   * @throws TqException with {@code INVALID_ARGUMENT} for a bad size, {@code OUT_OF_MEMORY} if the
   *     system refuses the memfd or its mapping
   */
  public static SharedSegment create(long size) {
    if (size <= HEADER_BYTES || size % 4096 != 0) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "shared segment size=" + size + " must be a multiple of 4096 above " + HEADER_BYTES);
    }
    int fd = Native.memfdCreate();
    try {
      Native.ftruncate(fd, size);
      byte[] key = new byte[KEY_BYTES];
      RANDOM.nextBytes(key);
      Arena arena = Arena.ofShared();
      MemorySegment memory;
      try {
        memory = map(Path.of("/proc/self/fd/" + fd), size, arena);
      } catch (IOException | RuntimeException e) {
        arena.close();
        throw new TqException(
            ErrorCode.OUT_OF_MEMORY, "mapping a shared segment of " + size + " bytes failed", e);
      }
      MemorySegment.copy(MAGIC, 0, memory, ValueLayout.JAVA_BYTE, 0, MAGIC.length);
      MemorySegment.copy(key, 0, memory, ValueLayout.JAVA_BYTE, KEY_OFFSET, KEY_BYTES);
      memory.set(SIZE_LAYOUT, SIZE_OFFSET, size);
      return new SharedSegment(fd, key, size, arena, memory);
    } catch (RuntimeException e) {
      Native.close(fd);
      throw e;
    }
  }

  /**
   * Maps another process's segment and checks it against its reference.
   *
   * @param pid the owning process
   * @param fd the owner's descriptor of the memfd
   * @param key the key the reference names
   * @param size the size the reference names
   * @return the mapping; the caller closes it
   * @throws TqException with {@code CONNECTION_FAILED} if the file cannot be opened or mapped
   *     (other user, other pid namespace, process gone), {@code PROTOCOL_ERROR} if size, magic or
   *     key do not match the reference
   */
  public static SharedSegment open(long pid, int fd, byte[] key, long size) {
    Path path = Path.of("/proc/" + pid + "/fd/" + fd);
    if (key == null || key.length != KEY_BYTES || size <= HEADER_BYTES) {
      throw new TqException(
          ErrorCode.PROTOCOL_ERROR,
          "shared segment reference for " + path + " has a bad key or size=" + size);
    }
    Arena arena = Arena.ofShared();
    MemorySegment memory;
    try (FileChannel channel =
        FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      long actual = channel.size();
      if (actual != size) {
        throw new TqException(
            ErrorCode.PROTOCOL_ERROR,
            "shared segment " + path + " has size=" + actual + ", its reference says " + size);
      }
      memory = channel.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
    } catch (IOException | RuntimeException e) {
      arena.close();
      if (e instanceof TqException tq) {
        throw tq;
      }
      throw new TqException(
          ErrorCode.CONNECTION_FAILED, "cannot map shared segment " + path + ": " + e, e);
    }
    byte[] magic = memory.asSlice(0, MAGIC.length).toArray(ValueLayout.JAVA_BYTE);
    byte[] actualKey = memory.asSlice(KEY_OFFSET, KEY_BYTES).toArray(ValueLayout.JAVA_BYTE);
    long headerSize = memory.get(SIZE_LAYOUT, SIZE_OFFSET);
    if (!Arrays.equals(magic, MAGIC) || !Arrays.equals(actualKey, key) || headerSize != size) {
      arena.close();
      throw new TqException(
          ErrorCode.PROTOCOL_ERROR,
          "shared segment "
              + path
              + " does not match its reference (magic "
              + HexFormat.of().formatHex(magic)
              + ", key "
              + HexFormat.of().formatHex(actualKey)
              + ", size "
              + headerSize
              + ")");
    }
    return new SharedSegment(-1, key.clone(), size, arena, memory);
  }

  private static MemorySegment map(Path path, long size, Arena arena) throws IOException {
    try (FileChannel channel =
        FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      return channel.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
    }
  }

  /**
   * The descriptor of the memfd in this process, or -1 for a segment opened from another process.
   *
   * @return the descriptor
   */
  public int fd() {
    return fd;
  }

  /**
   * The segment's random key.
   *
   * @return a copy of the 16 bytes
   */
  public byte[] key() {
    return key.clone();
  }

  /**
   * The whole segment size, header included.
   *
   * @return bytes
   */
  public long size() {
    return size;
  }

  /**
   * The mapped bytes, header included; valid until {@link #close()}.
   *
   * @return the mapping
   */
  public MemorySegment memory() {
    return memory;
  }

  /**
   * Whether {@code other} names this segment's key.
   *
   * @param other 16 bytes
   * @return true if equal
   */
  public boolean hasKey(byte[] other) {
    return Arrays.equals(key, other);
  }

  /** Unmaps the segment and, for one this process created, closes its descriptor. Idempotent. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    arena.close();
    if (fd >= 0) {
      Native.close(fd);
    }
  }

  @Override
  public String toString() {
    return "SharedSegment[fd="
        + fd
        + ", size="
        + size
        + ", key="
        + HexFormat.of().formatHex(key)
        + "]";
  }

  /** The three libc calls a memfd needs. */
  private static final class Native {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle MEMFD_CREATE =
        link(
            "memfd_create",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
    private static final MethodHandle FTRUNCATE =
        link(
            "ftruncate",
            FunctionDescriptor.of(
                ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
    private static final MethodHandle CLOSE =
        link("close", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));

    // Downcalls need native access (the launcher and the tests pass
    // --enable-native-access=ALL-UNNAMED); these take and return plain values.
    @SuppressWarnings("restricted")
    private static MethodHandle link(String name, FunctionDescriptor descriptor) {
      SymbolLookup libc = LINKER.defaultLookup();
      return LINKER.downcallHandle(libc.findOrThrow(name), descriptor);
    }

    private Native() {}

    static int memfdCreate() {
      int fd;
      try (Arena scratch = Arena.ofConfined()) {
        fd = (int) MEMFD_CREATE.invokeExact(scratch.allocateFrom("tq-shm"), MFD_CLOEXEC);
      } catch (Throwable t) {
        throw new TqException(ErrorCode.OUT_OF_MEMORY, "memfd_create failed: " + t, t);
      }
      if (fd < 0) {
        throw new TqException(ErrorCode.OUT_OF_MEMORY, "memfd_create failed (returned " + fd + ")");
      }
      return fd;
    }

    static void ftruncate(int fd, long size) {
      int result;
      try {
        result = (int) FTRUNCATE.invokeExact(fd, size);
      } catch (Throwable t) {
        throw new TqException(ErrorCode.OUT_OF_MEMORY, "ftruncate failed: " + t, t);
      }
      if (result != 0) {
        throw new TqException(
            ErrorCode.OUT_OF_MEMORY, "ftruncate of a memfd to " + size + " bytes failed");
      }
    }

    static void close(int fd) {
      try {
        int ignored = (int) CLOSE.invokeExact(fd);
      } catch (Throwable t) {
        throw new IllegalStateException("close(" + fd + ") failed", t);
      }
    }
  }
}
