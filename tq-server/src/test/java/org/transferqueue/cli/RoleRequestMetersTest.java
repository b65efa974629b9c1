package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.TqConfig;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.objectstore.ReplicateConfig;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.remote.controller.RemoteController;
import org.transferqueue.remote.objectstore.RemoteObjectStore;
import org.transferqueue.remote.storage.RemoteStorageUnit;
import org.transferqueue.server.config.TqConfigs;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;
import org.transferqueue.transport.TransportClient;
import org.transferqueue.transport.TransportConfig;

/**
 * The controller, storage-unit and store-node roles record their requests by {@code op_type} and
 * serve them on their Prometheus endpoints with the upstream names: scraped after a known sequence
 * of requests, the counters show exactly those requests.
 */
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RoleRequestMetersTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(20);

  private static TqConfig config(Path dir) throws IOException {
    Path file = dir.resolve("tq.yaml");
    Files.writeString(
        file,
        """
        backend:
          MooncakeStore:
            global_segment_size: 4194304
            local_buffer_size: 1048576
        network:
          bind_host: "127.0.0.1"
        metrics:
          enabled: true
          port: 0
        """,
        StandardCharsets.UTF_8);
    return TqConfigs.load(file, Map.of());
  }

  /** The body of a successful GET of {@code http://ADDRESS/metrics}. */
  static String scrape(String address) throws IOException, InterruptedException {
    try (HttpClient http = HttpClient.newHttpClient()) {
      HttpResponse<String> response =
          http.send(
              HttpRequest.newBuilder(URI.create("http://" + address + "/metrics")).build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(response.statusCode()).isEqualTo(200);
      return response.body();
    }
  }

  /** The value of the series {@code metric} whose labels include every {@code name="value"}. */
  private static double value(String body, String metric, String... labels) {
    return body.lines()
        .filter(line -> line.startsWith(metric + "{"))
        .filter(line -> Arrays.stream(labels).allMatch(line::contains))
        .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
        .findFirst()
        .orElseThrow(
            () ->
                new AssertionError(
                    "no series " + metric + List.of(labels) + " in:\n" + relevant(body, metric)));
  }

  private static String relevant(String body, String metric) {
    return String.join("\n", body.lines().filter(l -> l.startsWith(metric)).toList());
  }

  @Test
  void shouldCountControllerRequestsByOpType(@TempDir Path dir, BufferAllocator allocator)
      throws Exception {
    try (RoleRunner.ServedRole role = ControllerCommand.start(config(dir));
        TransportClient transport =
            new TransportClient(TransportConfig.builder().build(), allocator)) {
      RemoteController controller =
          new RemoteController(transport, role.address(), TIMEOUT, TIMEOUT);
      controller.listPartitions();
      controller.listPartitions();
      controller.createPartition("p");
      controller.getPartitionMeta("p");
      assertThatThrownBy(() -> controller.resolveIndexes("p", List.of()))
          .hasMessageContaining("non-empty");

      String body = scrape(role.metricsAddress().orElseThrow());
      assertThat(value(body, "tq_controller_request_total", "op_type=\"GET_LIST_PARTITIONS\""))
          .isEqualTo(2.0);
      assertThat(value(body, "tq_controller_request_total", "op_type=\"GET_PARTITION_META\""))
          .isEqualTo(1.0);
      assertThat(value(body, "tq_controller_request_total", "op_type=\"KV_RETRIEVE_KEYS\""))
          .isEqualTo(1.0);
      assertThat(value(body, "tq_controller_request_errors_total", "op_type=\"KV_RETRIEVE_KEYS\""))
          .isEqualTo(1.0);
      assertThat(
              value(
                  body,
                  "tq_controller_request_duration_seconds_count",
                  "op_type=\"GET_LIST_PARTITIONS\""))
          .isEqualTo(2.0);
      assertThat(body).doesNotContain("op_type=\"CREATE_PARTITION\"");
    }
  }

  @Test
  void shouldCountStorageUnitRequestsByOpType(@TempDir Path dir, BufferAllocator allocator)
      throws Exception {
    try (RoleRunner.ServedRole role =
            StorageUnitCommand.start(config(dir), new HostPort("127.0.0.1", 0), 4);
        TransportClient transport =
            new TransportClient(TransportConfig.builder().build(), allocator);
        Tensor t = Tensor.ofLongs(allocator, DType.INT64, new long[] {1, 2, 3}, 3);
        Batch batch = Batch.builder().dense("x", t).build()) {
      RemoteStorageUnit unit = new RemoteStorageUnit(transport, role.address(), TIMEOUT);
      unit.putAsync(new long[] {0, 1, 2}, new long[3], batch, new int[] {0, 1, 2}, 0, allocator)
          .join();
      unit.putAsync(new long[] {3}, new long[1], batch, new int[] {0}, 0, allocator).join();
      unit.getAsync(new long[] {0, 1}, new long[2], List.of("x"), allocator).join().close();
      unit.clearAsync(new long[] {0, 1, 2, 3}, new long[4]).join();

      String body = scrape(role.metricsAddress().orElseThrow());
      String id = "storage_unit_id=\"TQ_STORAGE_UNIT_4\"";
      assertThat(value(body, "tq_storage_request_total", id, "op_type=\"PUT_DATA\"")).isEqualTo(2);
      assertThat(value(body, "tq_storage_request_samples_total", id, "op_type=\"PUT_DATA\""))
          .isEqualTo(4);
      assertThat(value(body, "tq_storage_request_total", id, "op_type=\"GET_DATA\"")).isEqualTo(1);
      assertThat(value(body, "tq_storage_request_samples_total", id, "op_type=\"GET_DATA\""))
          .isEqualTo(2);
      assertThat(value(body, "tq_storage_request_total", id, "op_type=\"CLEAR_DATA\""))
          .isEqualTo(1);
      assertThat(
              value(body, "tq_storage_request_duration_seconds_count", id, "op_type=\"PUT_DATA\""))
          .isEqualTo(2);
      assertThat(value(body, "tq_storage_request_errors_total", id, "op_type=\"GET_DATA\""))
          .isZero();
    }
  }

  @Test
  void shouldCountStoreNodeRequestsByOpType(@TempDir Path dir, BufferAllocator allocator)
      throws Exception {
    try (RoleRunner.ServedRole role =
            StoreNodeCommand.start(config(dir), new HostPort("127.0.0.1", 0), 2);
        RemoteObjectStore store =
            RemoteObjectStore.connect(
                List.of(role.address()), TransportConfig.builder().build(), allocator);
        NativeBuffer memory = allocator.allocate(3 * 4096)) {
      assertThat(store.setup(StoreConfig.builder().build())).isZero();
      assertThat(store.registerBuffer(memory.segment())).isZero();
      List<String> keys = List.of("a", "b", "c");
      List<MemorySegment> slices =
          List.of(
              memory.segment().asSlice(0, 4096),
              memory.segment().asSlice(4096, 4096),
              memory.segment().asSlice(8192, 4096));
      assertThat(store.batchPutFrom(keys, slices, ReplicateConfig.DEFAULT)).containsOnly(0);
      assertThat(store.batchGetInto(keys, slices)).containsOnly(4096L);
      assertThat(store.batchRemove(List.of("a", "b"), true)).containsOnly(0);
      assertThat(store.getSize("c")).isEqualTo(4096);

      String body = scrape(role.metricsAddress().orElseThrow());
      String id = "storage_unit_id=\"TQ_STORE_NODE_2\"";
      assertThat(value(body, "tq_storage_request_total", id, "op_type=\"PUT_DATA\"")).isEqualTo(1);
      assertThat(value(body, "tq_storage_request_samples_total", id, "op_type=\"PUT_DATA\""))
          .isEqualTo(3);
      assertThat(value(body, "tq_storage_request_total", id, "op_type=\"GET_DATA\"")).isEqualTo(1);
      assertThat(value(body, "tq_storage_request_total", id, "op_type=\"CLEAR_DATA\""))
          .isEqualTo(1);
      assertThat(value(body, "tq_storage_request_samples_total", id, "op_type=\"CLEAR_DATA\""))
          .isEqualTo(2);
    }
  }
}
