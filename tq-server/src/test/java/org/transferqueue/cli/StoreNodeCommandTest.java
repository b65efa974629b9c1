package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.transferqueue.config.HostPort;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.objectstore.ReplicateConfig;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.remote.objectstore.RemoteObjectStore;
import org.transferqueue.transport.TransportConfig;

/** {@code tq store-node} as a child process: put and get through it, then a clean SIGTERM stop. */
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StoreNodeCommandTest {

  @Test
  void shouldServePutAndGetIntoAndStopOnSigterm(BufferAllocator allocator, @TempDir Path dir)
      throws IOException, InterruptedException {
    Path config = dir.resolve("tq.yaml");
    Files.writeString(
        config,
        """
        backend:
          storage_backend: MooncakeStore
          MooncakeStore:
            global_segment_size: 4194304
            local_buffer_size: 1048576
        network:
          store_node_addresses: ["127.0.0.1:0"]
        """);
    try (RoleProcess process =
            RoleProcess.role(dir, "store-node", "--config", config.toString(), "--node", "0");
        NativeBuffer memory = allocator.allocate(1024)) {
      HostPort address = process.awaitListeningFirstLine();

      TransportConfig transport =
          TransportConfig.builder().defaultCallTimeout(Duration.ofSeconds(20)).build();
      try (RemoteObjectStore store =
          RemoteObjectStore.connect(List.of(address), transport, allocator)) {
        assertThat(store.setup(StoreConfig.builder().build())).isZero();
        assertThat(store.registerBuffer(memory.segment())).isZero();
        MemorySegment source = memory.segment().asSlice(0, 512);
        MemorySegment destination = memory.segment().asSlice(512, 512);
        source.fill((byte) 3);
        assertThat(store.putFrom("k", source, ReplicateConfig.DEFAULT)).isZero();
        assertThat(store.getInto("k", destination)).isEqualTo(512);
        assertThat(destination.mismatch(source)).isEqualTo(-1);
      }

      process.terminateAndCheck();
    }
  }
}
