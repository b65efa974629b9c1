package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.client.TqClient;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.ClearSamplesRequest;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.remote.storage.RemoteSimpleStorage;
import org.transferqueue.server.config.TqConfigs;
import org.transferqueue.storage.StorageContext;
import org.transferqueue.storage.StorageManagerRegistry;
import org.transferqueue.system.ConfigMapper;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.ObjectColumn;

/**
 * Agreement between a journaling controller and storage across a kill of the controller between a
 * put's storage write and its production update: the controller, a storage unit and the writing
 * client are separate processes. If the controller is back within the client's retry window, the
 * notification is sent again and the put succeeds with its cells kept; if not, the put fails, its
 * cells are rolled back, and after the restart the samples exist (their insert was acknowledged)
 * but are not produced: no fetch hands them out and a late update of their generation is refused
 * once they are cleared.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ControllerAgreementTest {

  @Test
  void shouldNotServeASampleWhoseUpdateTheKilledControllerNeverRecorded(@TempDir Path dir) {
    try (Deployment deployment = new Deployment(dir, "2s")) {
      AtomicBoolean killed = new AtomicBoolean();
      try (TqClient tq =
              deployment.client(
                  () -> {
                    if (killed.compareAndSet(false, true)) {
                      deployment.controller.get().kill();
                      deployment.controller.get().awaitExit(30);
                    }
                  });
          Batch rows = Batch.builder().objects("text", List.of("one", "two")).build()) {
        BatchMeta inserted =
            tq.client().getMeta(GetMetadataRequest.insert("p", List.of("text"), 2));
        assertThatThrownBy(() -> tq.client().put(rows, inserted))
            .as("the put whose notification found no controller")
            .isInstanceOfSatisfying(
                TqException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.NOTIFICATION_FAILED));

        deployment.restartController();
        // The insert was acknowledged: the samples exist at their generations, unproduced.
        BatchMeta now =
            tq.controller().getSampleMeta("p", inserted.globalIndexes(), List.of("text"));
        assertThat(now.globalIndexes()).isEqualTo(inserted.globalIndexes());
        assertThat(now.generationArray()).isEqualTo(inserted.generationArray());
        assertThat(now.productionStatus()).containsOnly(false);
        assertThat(
                tq.client().tryGetMeta(GetMetadataRequest.fetch("p", List.of("text"), "reader", 1)))
            .as("no fetch hands out a sample the controller never recorded as produced")
            .isEmpty();
        // The put rolled its cells back: storage holds nothing for them either.
        assertThatThrownBy(() -> tq.client().getData(inserted)).isInstanceOf(TqException.class);

        // Generations decide a late update: once the samples are cleared, an update of their
        // old generation is refused.
        tq.controller().clearSamples(ClearSamplesRequest.of(inserted, true));
        assertThatThrownBy(
                () ->
                    tq.controller()
                        .updateProductionStatus(
                            new ProductionUpdate(
                                "p",
                                inserted.globalIndexes(),
                                java.util.Map.of("text", FieldSchema.nonTensorField()),
                                java.util.Map.of(),
                                boxed(inserted.generationArray()))))
            .isInstanceOfSatisfying(
                TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.STALE_METADATA));
      }
    }
  }

  @Test
  void shouldKeepThePutWhenTheControllerIsBackWithinTheRetryWindow(@TempDir Path dir) {
    try (Deployment deployment = new Deployment(dir, "60s")) {
      AtomicBoolean killed = new AtomicBoolean();
      try (TqClient tq =
              deployment.client(
                  () -> {
                    if (killed.compareAndSet(false, true)) {
                      deployment.controller.get().kill();
                      deployment.controller.get().awaitExit(30);
                      Thread.ofVirtual().start(deployment::restartController);
                    }
                  });
          Batch rows = Batch.builder().objects("text", List.of("one", "two")).build()) {
        BatchMeta inserted =
            tq.client().getMeta(GetMetadataRequest.insert("p", List.of("text"), 2));
        BatchMeta put = tq.client().put(rows, inserted);
        assertThat(put.globalIndexes()).isEqualTo(inserted.globalIndexes());
        BatchMeta fetched =
            tq.client().getMeta(GetMetadataRequest.fetch("p", List.of("text"), "reader", 2));
        assertThat(fetched.globalIndexes()).isEqualTo(inserted.globalIndexes());
        try (Batch back = tq.client().getData(fetched)) {
          assertThat(((ObjectColumn) back.column("text")).values()).containsExactly("one", "two");
        }
      }
    }
  }

  private static List<Long> boxed(long[] values) {
    List<Long> out = new ArrayList<>();
    for (long v : values) {
      out.add(v);
    }
    return out;
  }

  /** A journaling controller and one storage unit as child processes on fixed loopback ports. */
  private static final class Deployment implements AutoCloseable {
    final AtomicReference<RoleProcess> controller = new AtomicReference<>();
    final RoleProcess unit;
    final Path dir;
    final Path config;
    final TqConfig tqConfig;

    Deployment(Path dir, String requestTimeout) {
      this.dir = dir;
      HostPort controllerAddress = new HostPort("127.0.0.1", freePort());
      HostPort unitAddress = new HostPort("127.0.0.1", freePort());
      String yaml =
          "controller:\n"
              + "  durability: journal\n"
              + "durability:\n"
              + "  journal_dir: \""
              + dir.resolve("journal")
              + "\"\n"
              + "backend:\n"
              + "  SimpleStorage:\n"
              + "    num_data_storage_units: 1\n"
              + "client:\n"
              + "  request_timeout: "
              + requestTimeout
              + "\n"
              + "network:\n"
              + "  bind_host: 127.0.0.1\n"
              + "  controller_address: \""
              + controllerAddress
              + "\"\n"
              + "  storage_unit_addresses: [\""
              + unitAddress
              + "\"]\n"
              + "  connect_timeout: 2s\n";
      try {
        Files.createDirectories(dir);
        config = Files.writeString(dir.resolve("tq.yaml"), yaml, StandardCharsets.UTF_8);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      tqConfig = TqConfigs.load(config);
      restartController();
      unit =
          RoleProcess.tq(
              "storage-unit 0", dir, "storage-unit", "--config", config.toString(), "--unit", "0");
      unit.awaitListening();
    }

    void restartController() {
      RoleProcess old = controller.get();
      if (old != null) {
        old.close();
      }
      RoleProcess started =
          RoleProcess.tq("controller", dir, "controller", "--config", config.toString());
      controller.set(started);
      started.awaitListening();
    }

    /** A client whose production notifications run {@code beforeNotify} first. */
    TqClient client(Runnable beforeNotify) {
      StorageManagerRegistry backends =
          StorageManagerRegistry.builder()
              .register(
                  StorageManagerRegistry.SIMPLE_STORAGE,
                  context ->
                      RemoteSimpleStorage.factory(
                              tqConfig.network().storageUnitAddresses(),
                              ConfigMapper.storageUnitClient(tqConfig))
                          .create(
                              new StorageContext(
                                  context.allocator(),
                                  update -> {
                                    beforeNotify.run();
                                    context.notifier().notifyProduced(update);
                                  })))
              .build();
      return TqClient.builder().config(tqConfig).storageBackends(backends).connect();
    }

    @Override
    public void close() {
      unit.close();
      RoleProcess c = controller.get();
      if (c != null) {
        c.close();
      }
    }
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      socket.setReuseAddress(true);
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
