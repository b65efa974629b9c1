package org.transferqueue.cli;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.transferqueue.Closeables;
import org.transferqueue.client.TqClient;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.StorageBackend;
import org.transferqueue.config.TqConfig;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.objectstore.ReplicateConfig;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.remote.objectstore.RemoteObjectStore;
import org.transferqueue.remote.storage.RemoteStorageUnit;
import org.transferqueue.system.ConfigMapper;
import org.transferqueue.tensor.Batch;
import org.transferqueue.transport.TransportClient;

/**
 * Reply bodies a client keeps open as views of the storage servers' shared memory: the rows of
 * every storage unit read with the transport allocating (a {@link RemoteStorageUnit} get), or
 * objects of every store node read with {@link RemoteObjectStore#getBatch}. While they are open,
 * each server keeps a lease on their bytes and the client keeps its mapping of the segments holding
 * them. (The key-value API reads into result tensors it allocates itself, so its results are copies
 * and hold no lease.) Closing releases the views, then the clients they came from.
 */
final class HeldViews implements AutoCloseable {
  private final List<AutoCloseable> held = new ArrayList<>();
  private final List<NativeBuffer> objects = new ArrayList<>();
  private byte[] expected;

  private HeldViews() {}

  /**
   * Writes {@code count} values of {@code bytes} bytes to every storage server of {@code config}
   * and reads them back as views.
   *
   * @param tq a client of the deployment (SimpleStorage rows are put through it)
   * @param config the deployment's configuration
   * @param allocator where the views are accounted
   * @param count values (rows, objects) in all
   * @param floats float32 elements of each value
   * @return the open views
   */
  static HeldViews open(
      TqClient tq, TqConfig config, BufferAllocator allocator, int count, int floats) {
    HeldViews views = new HeldViews();
    try {
      TransportClient transport =
          new TransportClient(ConfigMapper.transport(config.network()), allocator);
      if (config.backend().storageBackend() == StorageBackend.SIMPLE_STORAGE) {
        views.held.add(transport);
        views.rows(
            tq, config.network().storageUnitAddresses(), transport, allocator, count, floats);
      } else {
        transport.close();
        views.objects(config, allocator, count, floats);
      }
      return views;
    } catch (RuntimeException e) {
      views.close();
      throw e;
    }
  }

  private void rows(
      TqClient tq,
      List<HostPort> units,
      TransportClient transport,
      BufferAllocator allocator,
      int count,
      int floats) {
    List<String> keys = ClientProcess.keys("view", count);
    BatchMeta meta;
    try (Batch rows = ShmClientProcess.rows(tq.allocator(), keys, floats)) {
      meta = tq.client().put(rows, "views");
    }
    for (int u = 0; u < units.size(); u++) {
      List<Long> gis = new ArrayList<>();
      for (long gi : meta.globalIndexes()) {
        if (gi % units.size() == u) {
          gis.add(gi);
        }
      }
      long[] generations = new long[gis.size()];
      Arrays.fill(generations, -1);
      RemoteStorageUnit unit =
          new RemoteStorageUnit(transport, units.get(u), Duration.ofSeconds(20));
      held.addFirst(
          unit.getAsync(
                  gis.stream().mapToLong(Long::longValue).toArray(),
                  generations,
                  List.of(ShmClientProcess.FIELD),
                  allocator)
              .join());
    }
  }

  private void objects(TqConfig config, BufferAllocator allocator, int count, int floats) {
    RemoteObjectStore store =
        RemoteObjectStore.connect(
            config.network().storeNodeAddresses(),
            ConfigMapper.transport(config.network()),
            allocator);
    held.add(store);
    if (store.setup(
            StoreConfig.builder()
                .localHostname("views")
                .globalSegmentSize(1L << 20)
                .localBufferSize(1L << 20)
                .build())
        != 0) {
      throw new IllegalStateException("remote store setup failed");
    }
    expected = new byte[floats * Float.BYTES];
    for (int i = 0; i < expected.length; i++) {
      expected[i] = (byte) (i * 31 + 7);
    }
    List<String> keys = ClientProcess.keys("view/", count);
    try (NativeBuffer source = allocator.allocate(expected.length)) {
      MemorySegment.copy(MemorySegment.ofArray(expected), 0, source.segment(), 0, expected.length);
      // putFrom writes from registered memory only, as Mooncake's zero-copy put.
      if (store.registerBuffer(source.segment()) != 0) {
        throw new IllegalStateException("registerBuffer failed");
      }
      for (String key : keys) {
        int rc = store.putFrom(key, source.segment(), ReplicateConfig.DEFAULT);
        if (rc != 0) {
          throw new IllegalStateException("putFrom " + key + ": rc=" + rc);
        }
      }
      store.unregisterBuffer(source.segment());
    }
    objects.addAll(store.getBatch(keys));
  }

  /**
   * Whether the objects read from store nodes still hold what was written (rows of storage units
   * are not compared: only their lifetime matters here).
   *
   * @return true when every object is intact
   */
  boolean intact() {
    for (NativeBuffer object : objects) {
      if (object == null
          || !Arrays.equals(object.segment().toArray(ValueLayout.JAVA_BYTE), expected)) {
        return false;
      }
    }
    return true;
  }

  @Override
  public void close() {
    List<AutoCloseable> order = new ArrayList<>(objects);
    objects.clear();
    order.addAll(held);
    held.clear();
    Closeables.closeAll(order);
  }
}
