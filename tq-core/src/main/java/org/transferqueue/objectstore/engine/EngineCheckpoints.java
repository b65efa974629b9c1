package org.transferqueue.objectstore.engine;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.objectstore.ObjectStoreCheckpoints;
import org.transferqueue.objectstore.ReplicateConfig;
import org.transferqueue.objectstore.StoreStatus;
import org.transferqueue.objectstore.engine.StoreMaster.WriteTicket;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.checkpoint.CheckpointDigests;
import org.transferqueue.storage.checkpoint.FileDigest;

/**
 * Checkpoints of one {@link EmbeddedObjectStore}: saving its objects into the checkpoint directory
 * and the two-phase load back, in the file format of {@link StoreCheckpointFile}. Every step that
 * touches the store's master passes the store's life-cycle gate, as a request does, so a store that
 * closes meanwhile fails the step with {@code CLOSED}; reading and verifying a file happens outside
 * the gate, into staging memory from the store's allocator.
 *
 * <p>Thread-safe: it holds no state besides the store; a staged load is committed or closed once.
 */
final class EngineCheckpoints {
  private static final int OK = StoreStatus.OK.code();

  private final EmbeddedObjectStore store;
  private final BufferAllocator allocator;

  EngineCheckpoints(EmbeddedObjectStore store, BufferAllocator allocator) {
    this.store = store;
    this.allocator = allocator;
  }

  private StoreMaster master() {
    return store.master();
  }

  /**
   * Saves every readable object to {@code directory/mooncake_store/node_0.ckpt} (this store is one
   * node) and lists the node in {@code store_node_info.json}.
   */
  void save(Path directory, CheckpointDigests digests) {
    Path base = directory.resolve(ObjectStoreCheckpoints.CHECKPOINT_DIRECTORY);
    try {
      Files.createDirectories(base);
    } catch (IOException e) {
      throw new StorageException(ErrorCode.STORAGE_ERROR, "cannot create " + base + ": " + e, e);
    }
    Path file = base.resolve(ObjectStoreCheckpoints.nodeFileName(0));
    digests.record(file, saveFile(file, () -> {}));
    ObjectStoreCheckpoints.writeNodeManifest(base, List.of(store.hostname()));
  }

  StorageManager.PreparedLoad prepareLoad(Path directory, CheckpointDigests digests) {
    Path base = directory.resolve(ObjectStoreCheckpoints.CHECKPOINT_DIRECTORY);
    ObjectStoreCheckpoints.readNodeManifest(base, 1);
    Path file = base.resolve(ObjectStoreCheckpoints.nodeFileName(0));
    return prepareFile(file, digests.expected(file), digests);
  }

  /**
   * Writes every readable object with its pins to one file, as of one instant (the objects stay
   * pinned, so removes and upserts meanwhile never change what is written); format in {@code
   * docs/CHECKPOINT.md}. Requests may continue.
   *
   * @param file the file, replaced if present; its directory must exist
   * @return the file's size and CRC32C, computed while writing
   * @throws StorageException {@code CLOSED} for a store that is not open, {@code STORAGE_ERROR} if
   *     writing failed
   */
  FileDigest saveFile(Path file, Runnable underLock) {
    if (!store.enter()) {
      throw new StorageException(ErrorCode.CLOSED, "object store is not open: " + store.hostname());
    }
    try {
      return StoreCheckpointFile.write(file, master(), underLock);
    } catch (IOException e) {
      throw new StorageException(
          ErrorCode.STORAGE_ERROR,
          "object store failed to save checkpoint to " + file + ": " + e,
          e);
    } finally {
      store.exit();
    }
  }

  /**
   * Reads a file written by {@link #saveFile} into staging memory from this store's allocator,
   * verifying it in the same pass, without changing the store. The commit removes every object
   * (forced) and writes the staged ones with their pins; it fails only if the store was closed or
   * requests ran meanwhile and took the space.
   *
   * @param file the file
   * @param expected the manifest's size and CRC32C, or null to check the structure only
   * @param digests where the verified file is noted, or null
   * @return the staged load
   * @throws StorageException {@code NOT_FOUND}, {@code CORRUPT_DATA} naming the file, {@code
   *     INVALID_ARGUMENT} when the objects do not fit this store, {@code OUT_OF_MEMORY} when the
   *     staging memory does not fit the allocator
   */
  StorageManager.PreparedLoad prepareFile(
      Path file, FileDigest expected, CheckpointDigests digests) {
    long capacity;
    long maxObject;
    if (!store.enter()) {
      throw new StorageException(ErrorCode.CLOSED, "object store is not open: " + store.hostname());
    }
    try {
      capacity = master().capacityBytes();
      maxObject = master().maxObjectBytes();
    } finally {
      store.exit();
    }
    List<StoreCheckpointFile.StagedObject> objects =
        StoreCheckpointFile.read(file, expected, digests, allocator);
    long total = 0;
    for (StoreCheckpointFile.StagedObject object : objects) {
      long size = object.bytes().segment().byteSize();
      total += size;
      if (size > maxObject || total > capacity) {
        objects.forEach(o -> o.bytes().close());
        throw new StorageException(
            ErrorCode.INVALID_ARGUMENT,
            file
                + " does not fit this store: object '"
                + object.key()
                + "' of "
                + size
                + " bytes (largest possible "
                + maxObject
                + "), "
                + total
                + " bytes so far (capacity "
                + capacity
                + ")");
      }
    }
    return new StagedObjects(objects);
  }

  /** Replaces every object by {@code objects}; returns the keys that could not be written. */
  private Map<String, Integer> install(List<StoreCheckpointFile.StagedObject> objects) {
    if (!store.enter()) {
      throw new StorageException(ErrorCode.CLOSED, "object store is not open: " + store.hostname());
    }
    try {
      master().removeMatching(key -> true, true);
      Map<ReplicateConfig, List<StoreCheckpointFile.StagedObject>> byConfig = new HashMap<>();
      for (StoreCheckpointFile.StagedObject object : objects) {
        byConfig.computeIfAbsent(object.config(), c -> new ArrayList<>()).add(object);
      }
      Map<String, Integer> failed = new TreeMap<>();
      for (Map.Entry<ReplicateConfig, List<StoreCheckpointFile.StagedObject>> group :
          byConfig.entrySet()) {
        List<StoreCheckpointFile.StagedObject> batch = group.getValue();
        List<String> keys = batch.stream().map(StoreCheckpointFile.StagedObject::key).toList();
        long[] sizes = batch.stream().mapToLong(o -> o.bytes().segment().byteSize()).toArray();
        int[] codes = new int[keys.size()];
        WriteTicket[] tickets = master().startWrites(keys, sizes, group.getKey(), true, codes);
        boolean[] copied = new boolean[keys.size()];
        for (int i = 0; i < tickets.length; i++) {
          if (tickets[i] != null) {
            copied[i] =
                EmbeddedObjectStore.copy(
                    batch.get(i).bytes().segment(), tickets[i].allocation().memory, keys.get(i));
          }
        }
        master().finishWrites(tickets, copied, codes);
        for (int i = 0; i < codes.length; i++) {
          if (codes[i] != OK) {
            failed.put(keys.get(i), codes[i]);
          }
        }
      }
      store.awaitJournal();
      return failed;
    } finally {
      store.exit();
    }
  }

  /** Objects read from a checkpoint file, installed by {@link #commit} or freed by close. */
  private final class StagedObjects implements StorageManager.PreparedLoad {
    private final List<StoreCheckpointFile.StagedObject> objects;
    private boolean done;

    StagedObjects(List<StoreCheckpointFile.StagedObject> objects) {
      this.objects = objects;
    }

    @Override
    public synchronized void commit() {
      if (done) {
        throw new StorageException(ErrorCode.ILLEGAL_STATE, "checkpoint load already finished");
      }
      done = true;
      try {
        Map<String, Integer> failed = install(objects);
        if (!failed.isEmpty()) {
          throw new StorageException(
              ErrorCode.STORAGE_ERROR,
              "object store "
                  + store.hostname()
                  + " could not restore "
                  + failed.size()
                  + " objects (key=code): "
                  + failed);
        }
      } finally {
        objects.forEach(o -> o.bytes().close());
      }
    }

    @Override
    public synchronized void close() {
      if (!done) {
        done = true;
        objects.forEach(o -> o.bytes().close());
      }
    }
  }
}
