package org.transferqueue.remote.storage;

import java.util.List;
import java.util.Objects;
import org.transferqueue.config.HostPort;
import org.transferqueue.storage.StorageManagerFactory;
import org.transferqueue.transport.TransportConfig;

/**
 * The storage-manager factory of a client whose SimpleStorage units run in other processes: a
 * {@link RemoteSimpleStorageManager} that talks to the units directly and sends its production
 * notifications to the context's notifier (normally the remote controller). Stateless and
 * thread-safe.
 */
public final class RemoteSimpleStorage {
  private RemoteSimpleStorage() {}

  /**
   * SimpleStorage over remote storage units.
   *
   * @param units the unit addresses in routing order, the same for every client; at least one
   * @param transport token, limits and the per-call deadline
   * @return the factory; each manager owns its transport client
   */
  public static StorageManagerFactory factory(List<HostPort> units, TransportConfig transport) {
    List<HostPort> copy = List.copyOf(units);
    Objects.requireNonNull(transport, "transport");
    return context ->
        new RemoteSimpleStorageManager(copy, transport, context.allocator(), context.notifier());
  }
}
