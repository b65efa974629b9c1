package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.transferqueue.config.HostPort;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.remote.storage.RemoteSimpleStorageManager;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.Tensor;
import org.transferqueue.transport.TransportConfig;
import picocli.CommandLine;

/**
 * {@code tq storage-unit} as a child process: it prints one {@code listening on} line, serves a put
 * and a get, and stops cleanly on SIGTERM.
 */
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StorageUnitCommandTest {

  @Test
  void shouldServePutAndGetAndStopOnSigterm(BufferAllocator allocator, @TempDir Path dir)
      throws IOException, InterruptedException {
    Path config = dir.resolve("tq.yaml");
    Files.writeString(
        config,
        """
        backend:
          SimpleStorage:
            num_data_storage_units: 1
        network:
          storage_unit_addresses: ["127.0.0.1:0"]
        """);
    try (RoleProcess process =
        RoleProcess.role(dir, "storage-unit", "--config", config.toString(), "--unit", "0")) {
      HostPort address = process.awaitListeningFirstLine();

      TransportConfig transport =
          TransportConfig.builder().defaultCallTimeout(Duration.ofSeconds(20)).build();
      try (RemoteSimpleStorageManager manager =
              new RemoteSimpleStorageManager(List.of(address), transport, allocator, u -> {});
          Tensor t = Tensor.ofLongs(allocator, DType.INT64, new long[] {4, 5, 6}, 3);
          Batch batch = Batch.builder().dense("x", t).build()) {
        manager.put(batch, meta(List.of(), 7, 8, 9));
        try (Batch read = manager.get(meta(List.of("x"), 9, 7), allocator)) {
          assertThat(((DenseColumn) read.column("x")).tensor().toLongArray()).containsExactly(6, 4);
        }
        assertThat(manager.unitStats().getFirst().capacitySamples())
            .isEqualTo(OptionalLong.empty());
      }

      process.terminateAndCheck();
    }
  }

  @Test
  void shouldRejectAUnitIndexOutsideTheAddressList(@TempDir Path dir) throws IOException {
    Path config = dir.resolve("tq.yaml");
    Files.writeString(
        config,
        "backend: {SimpleStorage: {num_data_storage_units: 1}}\n"
            + "network: {storage_unit_addresses: [\"127.0.0.1:0\"]}\n");
    StringWriter err = new StringWriter();
    CommandLine commandLine = TqCommand.newCommandLine().setErr(new PrintWriter(err));

    int status = commandLine.execute("storage-unit", "--config", config.toString(), "--unit", "3");

    assertThat(status).isEqualTo(2);
    assertThat(err.toString())
        .contains("--unit=3 is not an index of network.storage_unit_addresses (1 entries)");
  }

  private static BatchMeta meta(List<String> fields, long... gis) {
    BatchMeta.Builder builder = BatchMeta.builder().globalIndexes(gis).partitionId("p");
    fields.forEach(f -> builder.field(f, FieldSchema.placeholder()));
    return builder.build();
  }
}
