package org.transferqueue.remote;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.MooncakeStoreConfig;
import org.transferqueue.objectstore.MooncakeKvClient;
import org.transferqueue.objectstore.engine.MooncakeStoreBackend;
import org.transferqueue.storage.StorageManagerFactory;
import org.transferqueue.transport.TransportConfig;

/**
 * Storage-manager factories of a client whose storage runs in other processes: SimpleStorage over
 * remote storage units and MooncakeStore over remote object-store nodes. The managers talk to the
 * storage servers directly and send their production notifications to the context's notifier
 * (normally the remote controller). Stateless and thread-safe.
 */
public final class RemoteBackends {
  private RemoteBackends() {}

  /**
   * SimpleStorage over remote storage units.
   *
   * @param units the unit addresses in routing order, the same for every client; at least one
   * @param transport token, limits and the per-call deadline
   * @return the factory; each manager owns its transport client
   */
  public static StorageManagerFactory simpleStorage(
      List<HostPort> units, TransportConfig transport) {
    List<HostPort> copy = List.copyOf(units);
    Objects.requireNonNull(transport, "transport");
    return context ->
        new RemoteSimpleStorageManager(copy, transport, context.allocator(), context.notifier());
  }

  /**
   * MooncakeStore over remote object-store nodes: a key-value manager over a {@link
   * MooncakeKvClient} over a {@link RemoteObjectStore}.
   *
   * @param nodes the node addresses in sharding order, the same for every client; at least one
   * @param transport token, limits and the per-call deadline
   * @param config the MooncakeStore settings (local buffer size, batching, retries)
   * @return the factory; each manager owns its store client
   */
  public static StorageManagerFactory mooncakeStore(
      List<HostPort> nodes, TransportConfig transport, MooncakeStoreConfig config) {
    List<HostPort> copy = List.copyOf(nodes);
    Objects.requireNonNull(transport, "transport");
    Objects.requireNonNull(config, "config");
    // One call, one deadline: a put, get or clear of the client ends by the call timeout,
    // retries included, as a call to a storage unit does.
    return context ->
        MooncakeStoreBackend.over(
            RemoteObjectStore.connect(copy, transport, context.allocator()),
            config,
            context,
            Optional.of(transport.defaultCallTimeout()));
  }
}
