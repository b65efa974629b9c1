package org.transferqueue.client;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.transferqueue.Clock;
import org.transferqueue.DurableFiles;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.codec.EncodedValue;
import org.transferqueue.codec.ValueDecoder;
import org.transferqueue.codec.ValueEncoder;
import org.transferqueue.controller.Controller;
import org.transferqueue.controller.ControllerApi;
import org.transferqueue.controller.ControllerOptions;
import org.transferqueue.controller.ControllerState;
import org.transferqueue.controller.ControllerStateCodec;
import org.transferqueue.sampler.SampleResult;
import org.transferqueue.sampler.Sampler;
import org.transferqueue.sampler.SamplerState;
import org.transferqueue.sampler.SamplingRequest;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.StorageManagerRegistry;
import org.transferqueue.storage.checkpoint.CheckpointDigests;
import org.transferqueue.storage.checkpoint.FileDigest;

/**
 * Writes and reads whole-system checkpoints: the manifest, the controller state and the storage
 * directory (format in {@code docs/CHECKPOINT.md}).
 *
 * <pre>
 *  dir/MANIFEST                    text: magic and version line, facts, files with sizes and CRC32C
 *  dir/controller_state.msgpack    ControllerStateCodec
 *  dir/simple_storage/...          written by the storage manager into the same directory
 *  dir/mooncake_store/...          (or the object store's files)
 * </pre>
 *
 * Saving writes everything into a temporary sibling directory, fsyncs it and renames it into place
 * (an existing checkpoint is moved aside first and deleted only after the rename); any failure
 * deletes the temporary directory; file checksums are computed while the files are written. Loading
 * verifies the manifest, every file's size and the small files' checksums, decodes the controller
 * state, restores it into a scratch controller and stages the storage data (whose checksums the
 * storage readers verify in the same pass) before it changes anything. Stateless; callers serialise
 * saves and loads of one system.
 */
final class Checkpoints {
  /** The first word of a manifest. */
  static final String MAGIC = "TQ-CHECKPOINT";

  /** The format version written and read. */
  static final int FORMAT_VERSION = 1;

  static final String MANIFEST = "MANIFEST";
  static final String CONTROLLER_FILE = "controller_state.msgpack";

  /** The manifest key of the caller's metadata. */
  static final String USER_METADATA = "user_metadata";

  private static final long MAP_CHUNK = 1L << 28;

  /** Files up to this size are checksummed before the load reads them; larger ones while read. */
  private static final long SMALL_FILE_BYTES = 1L << 20;

  private static final System.Logger LOG = System.getLogger(Checkpoints.class.getName());

  private Checkpoints() {}

  // ---- save --------------------------------------------------------------------------------

  static CheckpointResult save(
      Path directory,
      boolean includeStorage,
      Map<String, ?> metadata,
      ControllerApi controller,
      StorageManager storage,
      Clock clock) {
    String encodedMetadata = encodeMetadata(metadata);
    Path target = directory.toAbsolutePath().normalize();
    Path parent = target.getParent();
    if (parent == null) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "checkpoint directory needs a parent: " + directory);
    }
    String suffix = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
    Path tmp = parent.resolve("." + target.getFileName() + ".tmp-" + suffix);
    try {
      Files.createDirectories(parent);
      Files.createDirectory(tmp);
      Instant createdAt = Instant.ofEpochMilli(clock.epochMillis());
      ControllerState state = controller.snapshotState();
      CheckpointDigests digests = CheckpointDigests.recording(tmp);
      writeFile(tmp.resolve(CONTROLLER_FILE), ControllerStateCodec.encode(state), digests);
      boolean storageSaved = saveStorage(tmp, includeStorage, storage, digests);
      List<CheckpointResult.CheckpointFile> files = describe(tmp, digests);
      String manifest =
          manifest(createdAt, storage.backendName(), state, storageSaved, encodedMetadata, files);
      writeFile(tmp.resolve(MANIFEST), manifest.getBytes(StandardCharsets.UTF_8), null);
      syncDirectories(tmp);
      replace(tmp, target, suffix);
      return new CheckpointResult(
          target,
          FORMAT_VERSION,
          createdAt,
          storage.backendName(),
          storageSaved,
          files,
          decodeMetadata(encodedMetadata, target));
    } catch (IOException e) {
      deleteQuietly(tmp);
      throw new TqException(
          ErrorCode.STORAGE_ERROR, "save checkpoint to " + target + " failed: " + e, e);
    } catch (RuntimeException | Error e) {
      deleteQuietly(tmp);
      throw e;
    }
  }

  private static boolean saveStorage(
      Path dir, boolean includeStorage, StorageManager storage, CheckpointDigests digests) {
    boolean inMemory = StorageManagerRegistry.SIMPLE_STORAGE.equals(storage.backendName());
    if (!includeStorage && !inMemory) {
      return false;
    }
    if (!includeStorage) {
      LOG.log(
          System.Logger.Level.WARNING,
          "include_storage=false ignored: {0} keeps its data only in memory, so it is saved",
          storage.backendName());
    }
    try {
      storage.saveCheckpoint(dir, digests);
      return true;
    } catch (TqException e) {
      if (e.code() != ErrorCode.UNSUPPORTED_OPERATION) {
        throw e;
      }
      LOG.log(
          System.Logger.Level.WARNING,
          "storage backend {0} does not support checkpoints; only the controller is saved"
              + " (storage_saved=false)",
          storage.backendName());
      return false;
    }
  }

  private static String manifest(
      Instant createdAt,
      String backend,
      ControllerState state,
      boolean storageSaved,
      String encodedMetadata,
      List<CheckpointResult.CheckpointFile> files) {
    StringBuilder out = new StringBuilder();
    out.append(MAGIC).append(' ').append(FORMAT_VERSION).append('\n');
    out.append("product_version ").append(productVersion()).append('\n');
    out.append("created_at ").append(createdAt).append('\n');
    out.append("backend ").append(backend).append('\n');
    out.append("controller_id ").append(state.controllerId()).append('\n');
    out.append("sampler ").append(state.samplerType()).append('\n');
    out.append("storage_saved ").append(storageSaved).append('\n');
    if (!encodedMetadata.isEmpty()) {
      out.append(USER_METADATA).append(' ').append(encodedMetadata).append('\n');
    }
    for (CheckpointResult.CheckpointFile f : files) {
      out.append("file ")
          .append(f.path())
          .append(' ')
          .append(f.sizeBytes())
          .append(' ')
          .append(hex(f.crc32c()))
          .append('\n');
    }
    CRC32C crc = new CRC32C();
    crc.update(out.toString().getBytes(StandardCharsets.UTF_8));
    out.append("manifest_crc32c ").append(hex(crc.getValue())).append('\n');
    return out.toString();
  }

  /**
   * The caller's metadata as the manifest carries it: the msgpack map of the wire value encoding,
   * in base64 (RFC 4648, with padding); empty for no or empty metadata.
   *
   * @throws TqException {@code INVALID_ARGUMENT} for a null key or a value that is not plain (a
   *     tensor, an object of another class), before anything is written
   */
  static String encodeMetadata(Map<String, ?> metadata) {
    if (metadata == null || metadata.isEmpty()) {
      return "";
    }
    Map<String, Object> copy = new LinkedHashMap<>();
    for (Map.Entry<String, ?> e : metadata.entrySet()) {
      if (e.getKey() == null) {
        throw new TqException(ErrorCode.INVALID_ARGUMENT, "checkpoint metadata has a null key");
      }
      copy.put(e.getKey(), e.getValue());
    }
    EncodedValue encoded;
    try {
      encoded = ValueEncoder.encode(copy);
    } catch (TqException e) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "checkpoint metadata must hold plain values (null, booleans, numbers, strings, bytes,"
              + " lists, maps): "
              + e.getMessage(),
          e);
    }
    if (!encoded.auxTensors().isEmpty()) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "checkpoint metadata holds "
              + encoded.auxTensors().size()
              + " tensor(s); a checkpoint's metadata stores only plain values");
    }
    return Base64.getEncoder().encodeToString(encoded.mainFrame());
  }

  /** Decodes the manifest's metadata line; an unmodifiable map, empty for none. */
  @SuppressWarnings("unchecked")
  static Map<String, Object> decodeMetadata(String encoded, Path dir) {
    if (encoded.isEmpty()) {
      return Map.of();
    }
    byte[] bytes;
    try {
      bytes = Base64.getDecoder().decode(encoded);
    } catch (IllegalArgumentException e) {
      throw corrupt(dir, "the manifest's " + USER_METADATA + " is not base64");
    }
    Object value;
    try {
      value = ValueDecoder.decode(MemorySegment.ofArray(bytes), List.of(), USER_METADATA);
    } catch (TqException e) {
      throw corrupt(
          dir, "the manifest's " + USER_METADATA + " cannot be decoded: " + e.getMessage());
    }
    if (!(value instanceof Map<?, ?> map)) {
      throw corrupt(dir, "the manifest's " + USER_METADATA + " is not a map");
    }
    return Collections.unmodifiableMap(new LinkedHashMap<>((Map<String, Object>) map));
  }

  static String productVersion() {
    String version = TransferQueueSystem.class.getPackage().getImplementationVersion();
    return version == null ? "dev" : version;
  }

  private static String hex(long crc) {
    return String.format("%08x", crc);
  }

  /**
   * Every regular file under {@code root}, sorted, with size and CRC32C: the digest its writer
   * recorded, or (for a file nobody recorded) computed by reading it.
   */
  private static List<CheckpointResult.CheckpointFile> describe(
      Path root, CheckpointDigests digests) throws IOException {
    List<Path> paths;
    try (Stream<Path> walk = Files.walk(root)) {
      paths = walk.filter(Files::isRegularFile).sorted().toList();
    }
    List<CheckpointResult.CheckpointFile> out = new ArrayList<>();
    for (Path p : paths) {
      String relative = root.relativize(p).toString().replace('\\', '/');
      FileDigest recorded = digests.recorded().get(relative);
      long size = Files.size(p);
      if (recorded != null && recorded.sizeBytes() == size) {
        out.add(new CheckpointResult.CheckpointFile(relative, size, recorded.crc32c()));
      } else {
        out.add(new CheckpointResult.CheckpointFile(relative, size, crc32c(p)));
      }
    }
    return out;
  }

  /** The CRC32C of a file, computed over read-only mappings (no copy through the heap). */
  static long crc32c(Path file) throws IOException {
    CRC32C crc = new CRC32C();
    try (FileChannel in = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = in.size();
      for (long at = 0; at < size; at += MAP_CHUNK) {
        crc.update(in.map(FileChannel.MapMode.READ_ONLY, at, Math.min(MAP_CHUNK, size - at)));
      }
    }
    return crc.getValue();
  }

  private static void writeFile(Path file, byte[] bytes, CheckpointDigests digests)
      throws IOException {
    if (digests != null) {
      CRC32C crc = new CRC32C();
      crc.update(bytes);
      digests.record(file, new FileDigest(bytes.length, crc.getValue()));
    }
    try (FileChannel out =
        FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      ByteBuffer buffer = ByteBuffer.wrap(bytes);
      while (buffer.hasRemaining()) {
        out.write(buffer);
      }
      out.force(true);
    }
  }

  /** Fsyncs every directory under and including {@code root}, deepest first. */
  private static void syncDirectories(Path root) throws IOException {
    List<Path> dirs;
    try (Stream<Path> walk = Files.walk(root)) {
      dirs = walk.filter(Files::isDirectory).sorted().toList().reversed();
    }
    for (Path dir : dirs) {
      DurableFiles.syncDirectory(dir);
    }
  }

  /** Renames {@code tmp} to {@code target}, moving an existing checkpoint aside first. */
  private static void replace(Path tmp, Path target, String suffix) throws IOException {
    Path parent = target.getParent();
    if (!Files.exists(target)) {
      Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
      DurableFiles.syncDirectory(parent);
      return;
    }
    Path old = parent.resolve("." + target.getFileName() + ".old-" + suffix);
    Files.move(target, old, StandardCopyOption.ATOMIC_MOVE);
    try {
      Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      try {
        Files.move(old, target, StandardCopyOption.ATOMIC_MOVE);
      } catch (IOException restore) {
        e.addSuppressed(restore);
      }
      throw e;
    }
    DurableFiles.syncDirectory(parent);
    deleteQuietly(old);
  }

  static void deleteQuietly(Path root) {
    try {
      DurableFiles.deleteTree(root);
    } catch (IOException e) {
      LOG.log(System.Logger.Level.WARNING, "cannot delete {0}: {1}", root, e);
    }
  }

  // ---- load --------------------------------------------------------------------------------

  static Map<String, Object> load(
      Path directory, ControllerApi controller, StorageManager storage) {
    Path dir = directory.toAbsolutePath().normalize();
    if (!Files.isDirectory(dir)) {
      throw new TqException(ErrorCode.NOT_FOUND, "checkpoint directory not found: " + dir);
    }
    Manifest manifest = Manifest.read(dir);
    Map<String, Object> metadata = decodeMetadata(manifest.userMetadata(), dir);
    if (!manifest.hasFile(CONTROLLER_FILE)) {
      throw corrupt(dir, "the manifest lists no " + CONTROLLER_FILE);
    }
    Map<String, FileDigest> expected = new HashMap<>();
    for (CheckpointResult.CheckpointFile f : manifest.files()) {
      checkPresent(dir, f);
      expected.put(f.path(), new FileDigest(f.sizeBytes(), f.crc32c()));
    }
    CheckpointDigests digests = CheckpointDigests.expecting(dir, expected);
    // Small files (the controller state, storage manifests) are checked before anything reads
    // them; large data files are checked by the storage reader in the pass that stages them.
    ControllerState state = readControllerState(dir, expected.get(CONTROLLER_FILE), digests);
    for (CheckpointResult.CheckpointFile f : manifest.files()) {
      if (f.sizeBytes() <= SMALL_FILE_BYTES && !digests.isVerified(f.path())) {
        verify(dir, f, digests);
      }
    }
    if (manifest.storageSaved() && !manifest.backend().equals(storage.backendName())) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          dir
              + ": checkpoint of backend "
              + manifest.backend()
              + " cannot be loaded into "
              + storage.backendName());
    }
    dryRun(controller, state, dir);
    StorageManager.PreparedLoad staged =
        manifest.storageSaved() ? storage.prepareLoadCheckpoint(dir, digests) : null;
    try {
      for (CheckpointResult.CheckpointFile f : manifest.files()) {
        if (!digests.isVerified(f.path())) {
          verify(dir, f, digests); // a listed file the backend did not read
        }
      }
      controller.restoreState(state);
    } catch (RuntimeException e) {
      if (staged != null) {
        staged.close();
      }
      throw e;
    }
    if (staged != null) {
      try (staged) {
        staged.commit();
      }
    } else {
      LOG.log(
          System.Logger.Level.WARNING,
          "checkpoint {0} holds no storage data (storage_saved=false); only the controller was"
              + " restored",
          dir);
    }
    return metadata;
  }

  /** Reads the controller state once, checks its size and CRC32C, then decodes it. */
  private static ControllerState readControllerState(
      Path dir, FileDigest expected, CheckpointDigests digests) {
    Path file = dir.resolve(CONTROLLER_FILE);
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(file);
    } catch (NoSuchFileException e) {
      throw corrupt(dir, "missing file " + CONTROLLER_FILE);
    } catch (IOException e) {
      throw new TqException(ErrorCode.STORAGE_ERROR, "cannot read " + file + ": " + e, e);
    }
    CRC32C crc = new CRC32C();
    crc.update(bytes);
    check(dir, CONTROLLER_FILE, new FileDigest(bytes.length, crc.getValue()), expected);
    digests.verified(CONTROLLER_FILE);
    return ControllerStateCodec.decode(bytes, file.toString());
  }

  /** Restores the state into a scratch controller, so that malformed state fails here. */
  private static void dryRun(ControllerApi controller, ControllerState state, Path dir) {
    Sampler probe;
    try {
      probe = TransferQueueSystem.samplerNamed(state.samplerType());
      if (!probe.name().equals(state.samplerType())) {
        probe = new ProbeSampler(state.samplerType());
      }
    } catch (TqException e) {
      probe = new ProbeSampler(state.samplerType());
    }
    try {
      ControllerOptions options =
          controller instanceof Controller local ? local.config() : ControllerOptions.defaults();
      new Controller(options, probe, Clock.SYSTEM).restoreState(state);
    } catch (TqException e) {
      throw new TqException(
          ErrorCode.CORRUPT_DATA,
          dir + ": controller state cannot be restored: " + e.getMessage(),
          e);
    }
  }

  /** Checks that a listed file lies inside the checkpoint, exists and has the recorded size. */
  private static void checkPresent(Path dir, CheckpointResult.CheckpointFile f) {
    Path file = dir.resolve(f.path()).normalize();
    if (!file.startsWith(dir)) {
      throw corrupt(dir, "the manifest names a file outside the checkpoint: " + f.path());
    }
    try {
      long size = Files.size(file);
      if (size != f.sizeBytes()) {
        throw corrupt(
            dir,
            f.path()
                + " is "
                + size
                + " bytes, the manifest records "
                + f.sizeBytes()
                + " (truncated?)");
      }
    } catch (NoSuchFileException e) {
      throw corrupt(dir, "missing file " + f.path());
    } catch (IOException e) {
      throw new TqException(ErrorCode.STORAGE_ERROR, "cannot read " + file + ": " + e, e);
    }
  }

  /** Reads a whole file to check its CRC32C (for files no storage reader verified). */
  private static void verify(
      Path dir, CheckpointResult.CheckpointFile f, CheckpointDigests digests) {
    Path file = dir.resolve(f.path()).normalize();
    try {
      check(dir, f.path(), new FileDigest(Files.size(file), crc32c(file)), digestOf(f));
      digests.verified(f.path());
    } catch (NoSuchFileException e) {
      throw corrupt(dir, "missing file " + f.path());
    } catch (IOException e) {
      throw new TqException(ErrorCode.STORAGE_ERROR, "cannot read " + file + ": " + e, e);
    }
  }

  private static FileDigest digestOf(CheckpointResult.CheckpointFile f) {
    return new FileDigest(f.sizeBytes(), f.crc32c());
  }

  private static void check(Path dir, String path, FileDigest actual, FileDigest expected) {
    if (actual.sizeBytes() != expected.sizeBytes()) {
      throw corrupt(
          dir,
          path
              + " is "
              + actual.sizeBytes()
              + " bytes, the manifest records "
              + expected.sizeBytes()
              + " (truncated?)");
    }
    if (actual.crc32c() != expected.crc32c()) {
      throw corrupt(
          dir,
          path + " has CRC32C " + actual.crcHex() + ", the manifest records " + expected.crcHex());
    }
  }

  static TqException corrupt(Path dir, String problem) {
    return new TqException(ErrorCode.CORRUPT_DATA, "corrupt checkpoint " + dir + ": " + problem);
  }

  /** A parsed manifest. */
  record Manifest(
      String backend,
      boolean storageSaved,
      List<CheckpointResult.CheckpointFile> files,
      String userMetadata) {
    boolean hasFile(String path) {
      return files.stream().anyMatch(f -> f.path().equals(path));
    }

    static Manifest read(Path dir) {
      Path file = dir.resolve(MANIFEST);
      String text;
      try {
        text = Files.readString(file, StandardCharsets.UTF_8);
      } catch (NoSuchFileException e) {
        throw new TqException(
            ErrorCode.NOT_FOUND, "checkpoint manifest not found: " + file + " (not a checkpoint?)");
      } catch (IOException e) {
        throw new TqException(ErrorCode.CORRUPT_DATA, "cannot read manifest " + file + ": " + e, e);
      }
      List<String> lines = List.of(text.split("\n", -1));
      String first = lines.getFirst();
      String[] head = first.split(" ");
      if (head.length != 2 || !head[0].equals(MAGIC)) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT,
            file + " is not a checkpoint manifest: it starts with '" + abbreviate(first) + "'");
      }
      if (!head[1].equals(Integer.toString(FORMAT_VERSION))) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT,
            file
                + ": checkpoint format version "
                + abbreviate(head[1])
                + " is not supported (this build reads "
                + FORMAT_VERSION
                + ")");
      }
      int crcLine = text.lastIndexOf("manifest_crc32c ");
      if (crcLine < 0 || !text.endsWith("\n")) {
        throw corrupt(dir, "the manifest has no checksum line (truncated?)");
      }
      CRC32C crc = new CRC32C();
      crc.update(text.substring(0, crcLine).getBytes(StandardCharsets.UTF_8));
      String recorded = text.substring(crcLine + "manifest_crc32c ".length(), text.length() - 1);
      if (!recorded.equals(hex(crc.getValue()))) {
        throw corrupt(dir, "the manifest's checksum does not match its content");
      }
      String backend = null;
      Boolean storageSaved = null;
      List<CheckpointResult.CheckpointFile> files = new ArrayList<>();
      String userMetadata = "";
      for (String line : lines.subList(1, lines.size())) {
        String[] parts = line.split(" ");
        switch (parts[0]) {
          case "backend" -> backend = parts.length == 2 ? parts[1] : null;
          case "storage_saved" -> storageSaved = parts.length == 2 && parts[1].equals("true");
          case USER_METADATA -> {
            if (parts.length != 2) {
              throw corrupt(dir, "malformed manifest line '" + abbreviate(line) + "'");
            }
            userMetadata = parts[1];
          }
          case "file" -> {
            if (parts.length != 4) {
              throw corrupt(dir, "malformed manifest line '" + abbreviate(line) + "'");
            }
            try {
              files.add(
                  new CheckpointResult.CheckpointFile(
                      parts[1], Long.parseLong(parts[2]), Long.parseLong(parts[3], 16)));
            } catch (NumberFormatException e) {
              throw corrupt(dir, "malformed manifest line '" + abbreviate(line) + "'");
            }
          }
          default -> {} // informative lines (versions, times, ids) and the checksum line
        }
      }
      if (backend == null || storageSaved == null) {
        throw corrupt(dir, "the manifest lacks the backend or storage_saved line");
      }
      return new Manifest(backend, storageSaved, files, userMetadata);
    }

    private static String abbreviate(String s) {
      return s.length() > 40 ? s.substring(0, 40) + "..." : s;
    }
  }

  /**
   * Stands in for a sampler that cannot be created by name during the dry run: accepts any state
   * and never samples.
   */
  private record ProbeSampler(String name) implements Sampler {
    @Override
    public SampleResult sample(SamplingRequest request) {
      return SampleResult.empty();
    }

    @Override
    public void loadState(SamplerState state) {}
  }
}
