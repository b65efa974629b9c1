package org.transferqueue.remote.storage;

import org.transferqueue.remote.RemoteUnits;
import org.transferqueue.transport.TransportConfig;

/**
 * The storage-manager contract of {@link RemoteSimpleStorageContractTest} with shared memory on in
 * the units and the router: bodies of every size travel through the units' segments.
 */
class RemoteSimpleStorageSharedMemoryContractTest extends RemoteSimpleStorageContractTest {
  @Override
  TransportConfig transport() {
    return RemoteUnits.sharedMemoryConfig();
  }
}
