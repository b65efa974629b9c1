package org.transferqueue.remote.objectstore;

import org.transferqueue.remote.RemoteUnits;
import org.transferqueue.transport.TransportConfig;

/**
 * The tests of {@link RemoteObjectStoreTest} (the object-store contract included) with shared
 * memory on in the store nodes and the remote store: bodies of every size travel through the nodes'
 * segments.
 */
class RemoteObjectStoreSharedMemoryTest extends RemoteObjectStoreTest {
  @Override
  TransportConfig transport() {
    return RemoteUnits.sharedMemoryConfig();
  }
}
