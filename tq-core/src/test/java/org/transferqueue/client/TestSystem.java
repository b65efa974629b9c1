package org.transferqueue.client;

import java.nio.file.Path;
import java.util.Map;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.ControllerApi;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.storage.StorageManager;

/**
 * A running TransferQueue as a scenario sees it, whatever its {@link Deployment}: the low-level
 * client, the key-value API, the client's allocator, the configuration it runs with and the
 * controller it talks to (the controller itself when embedded, its remote proxy over loopback).
 * Closing releases everything the deployment started and fails on a leak.
 */
sealed interface TestSystem extends AutoCloseable permits TestSystem.Embedded, LoopbackSystem {
  /** The low-level client. */
  MetaClient client();

  /** The key-value API. */
  KvApi kv();

  /** The allocator of the client's buffers (data read by {@code getData}). */
  BufferAllocator allocator();

  /** The configuration the scenario asked for (without the addresses a loopback adds). */
  TqConfig config();

  /**
   * Another client of the same system, closed independently (embedded: {@link
   * TransferQueueSystem#newClient()}; over loopback: the client of another {@link TqClient}
   * connection, released with the system).
   */
  MetaClient newClient();

  /** The controller the client talks to. */
  ControllerApi controller();

  /**
   * The client's storage manager: the system's own when embedded, the remote client's router to the
   * storage servers over loopback.
   */
  StorageManager storage();

  /**
   * Saves a checkpoint ({@link TransferQueueSystem#saveCheckpoint}, or {@link
   * TqClient#saveCheckpoint} over loopback).
   */
  default CheckpointResult saveCheckpoint(Path directory, boolean includeStorage) {
    return saveCheckpoint(directory, includeStorage, Map.of());
  }

  /** Saves a checkpoint with the caller's metadata. */
  CheckpointResult saveCheckpoint(Path directory, boolean includeStorage, Map<String, ?> metadata);

  /** Loads a checkpoint; returns its metadata. */
  Map<String, Object> loadCheckpoint(Path directory);

  /**
   * The bytes the system's storage holds: when embedded, all of the system's allocator (storage and
   * client share it); over loopback, the storage units' cells (SimpleStorage) or the store nodes'
   * allocator (MooncakeStore), not the client's transport buffers.
   */
  long storedBytes();

  @Override
  void close();

  /** An embedded {@link TransferQueueSystem}. */
  record Embedded(TransferQueueSystem system) implements TestSystem {
    @Override
    public MetaClient client() {
      return system.client();
    }

    @Override
    public KvApi kv() {
      return system.kv();
    }

    @Override
    public MetaClient newClient() {
      return system.newClient();
    }

    @Override
    public BufferAllocator allocator() {
      return system.allocator();
    }

    @Override
    public TqConfig config() {
      return system.config();
    }

    @Override
    public ControllerApi controller() {
      return system.controller();
    }

    @Override
    public StorageManager storage() {
      return system.storage();
    }

    @Override
    public CheckpointResult saveCheckpoint(
        Path directory, boolean includeStorage, Map<String, ?> metadata) {
      return system.saveCheckpoint(directory, includeStorage, metadata);
    }

    @Override
    public Map<String, Object> loadCheckpoint(Path directory) {
      return system.loadCheckpoint(directory);
    }

    @Override
    public long storedBytes() {
      return system.allocator().allocatedBytes();
    }

    @Override
    public void close() {
      system.close();
    }
  }
}
