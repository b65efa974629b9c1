package org.transferqueue.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.transferqueue.client.CheckpointResult;
import org.transferqueue.client.TransferQueueSystem;
import org.transferqueue.config.TqConfig;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.memory.RootAllocator;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;

/**
 * Checkpoint save and load of 1 GiB of stored tensors against writing and reading the same number
 * of bytes to a plain file with {@link FileChannel}, measured in the same run.
 *
 * <p>The embedded system (SimpleStorage, two units) holds {@value #ROWS} samples of one float32
 * field of 4 MiB each. {@code save} writes a full checkpoint ({@code includeStorage=true}, synced
 * and renamed into place, replacing the previous one); {@code load} validates and loads the
 * checkpoint written in setup (the system's allocator briefly holds the stored and the staged copy,
 * so its limit is 2.5 GiB). {@code fileWrite} writes {@value #ROWS} pre-allocated 4 MiB native
 * buffers to one file and forces it to disk; {@code fileRead} reads that file back into the same
 * buffers (1 GiB, own allocator). All files live in a temporary directory under {@code /tmp},
 * deleted in teardown; reads come from the page cache in both cases. GB/s = 2^30 bytes / time.
 *
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -jar tq-bench/target/tq-benchmarks.jar \
 *     CheckpointBenchmark -f 1 -wi 1 -i 3
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@Warmup(iterations = 1, time = 2)
@Measurement(iterations = 3, time = 2)
public class CheckpointBenchmark {
  private static final int ROWS = 256;
  private static final int ROW_BYTES = 4 << 20;

  private Path root;
  private Path saveDir;
  private Path loadDir;
  private Path plainFile;
  private TransferQueueSystem tq;
  private RootAllocator baselineAllocator;
  private final List<NativeBuffer> buffers = new ArrayList<>();

  /** Stores 1 GiB, writes the checkpoint that {@code load} reads, and allocates the buffers. */
  @Setup(Level.Trial)
  public void setUp() throws IOException {
    root = Files.createTempDirectory(Path.of("/tmp"), "tq-checkpoint-bench-");
    saveDir = root.resolve("save");
    loadDir = root.resolve("load");
    plainFile = root.resolve("plain.bin");
    tq =
        TransferQueueSystem.builder()
            .config(
                TqConfig.builder()
                    .controller(c -> c.pollingMode(true))
                    .backend(b -> b.simpleStorage(s -> s.numDataStorageUnits(2)))
                    .memory(m -> m.limitBytes(5L << 29))
                    .build())
            .start();
    int chunk = 32;
    for (int start = 0; start < ROWS; start += chunk) {
      Tensor tensor = Tensor.allocate(tq.allocator(), DType.FLOAT32, chunk, ROW_BYTES / 4);
      tensor.segment().fill((byte) 3);
      try (Batch batch = Batch.builder().dense("weights", tensor).build()) {
        tq.client().put(batch, "ckpt");
      }
    }
    CheckpointResult saved = tq.saveCheckpoint(loadDir, true);
    if (!saved.storageSaved()) {
      throw new IllegalStateException("storage was not saved: " + saved);
    }
    baselineAllocator =
        RootAllocator.builder().name("checkpoint-baseline").limitBytes(1L << 30).build();
    for (int i = 0; i < ROWS; i++) {
      NativeBuffer buffer = baselineAllocator.allocate(ROW_BYTES);
      buffer.segment().fill((byte) 3);
      buffers.add(buffer);
    }
    fileWrite();
  }

  /** Frees everything and deletes the temporary directory. */
  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    tq.close();
    buffers.forEach(NativeBuffer::close);
    baselineAllocator.close();
    try (Stream<Path> paths = Files.walk(root)) {
      paths
          .sorted(Comparator.reverseOrder())
          .forEach(
              p -> {
                try {
                  Files.delete(p);
                } catch (IOException e) {
                  throw new UncheckedIOException(e);
                }
              });
    }
  }

  /**
   * Saves a checkpoint with the stored data.
   *
   * @return the result, so that it is not optimised away
   */
  @Benchmark
  public CheckpointResult save() {
    return tq.saveCheckpoint(saveDir, true);
  }

  /** Loads the checkpoint written in setup, replacing the stored data with the same bytes. */
  @Benchmark
  public void load() {
    tq.loadCheckpoint(loadDir);
  }

  /**
   * Writes the 1 GiB of buffers to a plain file and forces it to disk.
   *
   * @return the file size, so that the work is not optimised away
   * @throws IOException on a file error
   */
  @Benchmark
  public long fileWrite() throws IOException {
    try (FileChannel channel =
        FileChannel.open(
            plainFile,
            StandardOpenOption.CREATE,
            StandardOpenOption.TRUNCATE_EXISTING,
            StandardOpenOption.WRITE)) {
      for (NativeBuffer buffer : buffers) {
        ByteBuffer bytes = buffer.segment().asByteBuffer();
        while (bytes.hasRemaining()) {
          channel.write(bytes);
        }
      }
      channel.force(true);
      return channel.size();
    }
  }

  /**
   * Reads the plain file back into the buffers.
   *
   * @return the bytes read
   * @throws IOException on a file error
   */
  @Benchmark
  public long fileRead() throws IOException {
    long total = 0;
    try (FileChannel channel = FileChannel.open(plainFile, StandardOpenOption.READ)) {
      for (NativeBuffer buffer : buffers) {
        ByteBuffer bytes = buffer.segment().asByteBuffer();
        while (bytes.hasRemaining()) {
          int n = channel.read(bytes);
          if (n < 0) {
            throw new IOException(plainFile + " ended after " + total + " bytes");
          }
          total += n;
        }
      }
    }
    return total;
  }
}
