package org.transferqueue.remote.objectstore;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.transferqueue.config.HostPort;
import org.transferqueue.objectstore.KvClientConfig;
import org.transferqueue.objectstore.MooncakeKvClient;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.objectstore.engine.MooncakeStoreBackend;
import org.transferqueue.storage.StorageManagerFactory;
import org.transferqueue.transport.TransportConfig;

/**
 * The storage-manager factory of a client whose MooncakeStore runs in other processes: a key-value
 * manager over a {@link MooncakeKvClient} over a {@link RemoteObjectStore}. The managers talk to
 * the store nodes directly and send their production notifications to the context's notifier
 * (normally the remote controller). Stateless and thread-safe.
 */
public final class RemoteMooncakeStore {
  private RemoteMooncakeStore() {}

  /**
   * MooncakeStore over remote object-store nodes.
   *
   * @param nodes the node addresses in sharding order, the same for every client; at least one
   * @param transport token, limits and the per-call deadline
   * @param storeConfig this client's segment name, contributed segment and local buffer
   * @param clientConfig batching, retries and hard pin of the key-value client
   * @return the factory; each manager owns its store client
   */
  public static StorageManagerFactory factory(
      List<HostPort> nodes,
      TransportConfig transport,
      StoreConfig storeConfig,
      KvClientConfig clientConfig) {
    List<HostPort> copy = List.copyOf(nodes);
    Objects.requireNonNull(transport, "transport");
    Objects.requireNonNull(storeConfig, "storeConfig");
    Objects.requireNonNull(clientConfig, "clientConfig");
    // One call, one deadline: a put, get or clear of the client ends by the call timeout,
    // retries included, as a call to a storage unit does.
    return context ->
        MooncakeStoreBackend.over(
            RemoteObjectStore.connect(copy, transport, context.allocator()),
            storeConfig,
            clientConfig,
            context,
            Optional.of(transport.defaultCallTimeout()));
  }
}
