package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.StorageBackend;
import org.transferqueue.config.TqConfig;
import org.transferqueue.server.config.TqConfigs;
import org.transferqueue.system.ConfigMapper;
import org.transferqueue.transport.TransportConfig;

/**
 * Loads examples/loopback.yaml with the YAML loader and checks the deployment it describes: a
 * controller, two storage units and two store nodes on fixed loopback ports, the roles {@code tq
 * up} starts from it, the token from TQ_AUTH_TOKEN and the selectable backend.
 */
class LoopbackExampleTest {
  private static Path file;

  @BeforeAll
  static void findFile() {
    Path dir = Path.of("").toAbsolutePath();
    while (dir != null && !Files.exists(dir.resolve("examples/loopback.yaml"))) {
      dir = dir.getParent();
    }
    assertThat(dir).as("examples/loopback.yaml above the working directory").isNotNull();
    file = dir.resolve("examples/loopback.yaml");
  }

  @Test
  void shouldDescribeAControllerTwoUnitsAndTwoNodesOnFixedLoopbackPorts() throws IOException {
    TqConfig config = TqConfigs.load(file);

    assertThat(config.network().bindHost()).isEqualTo("127.0.0.1");
    assertThat(config.network().controllerAddress()).contains(new HostPort("127.0.0.1", 46100));
    assertThat(config.network().storageUnitAddresses())
        .containsExactly(new HostPort("127.0.0.1", 46101), new HostPort("127.0.0.1", 46102));
    assertThat(config.network().storeNodeAddresses())
        .containsExactly(new HostPort("127.0.0.1", 46111), new HostPort("127.0.0.1", 46112));
    assertThat(config.backend().simpleStorage().numDataStorageUnits()).isEqualTo(2);
    assertThat(config.backend().storageBackend()).isEqualTo(StorageBackend.SIMPLE_STORAGE);
    assertThat(config.network().authToken()).isEmpty();

    List<HostPort> all = new ArrayList<>();
    config.network().controllerAddress().ifPresent(all::add);
    all.addAll(config.network().storageUnitAddresses());
    all.addAll(config.network().storeNodeAddresses());
    assertThat(all).extracting(HostPort::port).doesNotHaveDuplicates().doesNotContain(0);
    for (HostPort address : all) {
      assertThat(InetAddress.getByName(address.host()).isLoopbackAddress())
          .as("%s is a loopback address", address)
          .isTrue();
    }
  }

  @Test
  void shouldSetTheLimitsOfEveryProcess() {
    TqConfig config = TqConfigs.load(file);
    TransportConfig transport = ConfigMapper.transport(config.network());

    assertThat(config.network().maxFrameBytes()).isEqualTo(256L << 20);
    assertThat(transport.maxFrameBytes()).isEqualTo(256L << 20);
    assertThat(transport.maxBodySegmentBytes()).isEqualTo(256L << 20);
    assertThat(transport.bindHost()).isEqualTo("127.0.0.1");
    assertThat(config.memory().limitBytes()).hasValue(2L << 30);
    assertThat(config.memory().storageUnitLimitBytes()).hasValue(1L << 30);
    assertThat(config.backend().simpleStorage().perUnitCapacity()).hasValue(50_000);
  }

  @Test
  void shouldStartEveryRoleOfTheFileWithTqUp() {
    TqConfig config = TqConfigs.load(file);

    List<UpCommand.Role> roles = UpCommand.roles(config, file);

    assertThat(roles)
        .extracting(UpCommand.Role::name)
        .containsExactly(
            "controller", "storage-unit 0", "storage-unit 1", "store-node 0", "store-node 1");
    assertThat(roles.get(4).arguments())
        .containsExactly("store-node", "--config", file.toString(), "--node", "1");
  }

  @Test
  void shouldTakeTheTokenFromTqAuthTokenOnly() {
    TqConfig config = TqConfigs.load(file, Map.of("TQ_AUTH_TOKEN", "s3cret-token"));

    assertThat(config.network().authToken()).contains("s3cret-token");
    assertThat(ConfigMapper.transport(config.network()).authToken()).contains("s3cret-token");
    assertThat(config.toString()).doesNotContain("s3cret-token");
  }

  @Test
  void shouldSwitchToTheStoreNodesWithTheBackendKey() throws IOException {
    String text = Files.readString(file, StandardCharsets.UTF_8);
    String mooncake =
        text.replace(
            "storage_backend: SimpleStorage  # or MooncakeStore", "storage_backend: MooncakeStore");
    assertThat(mooncake).isNotEqualTo(text);

    TqConfig config = TqConfigs.parse(mooncake);

    assertThat(config.backend().storageBackend()).isEqualTo(StorageBackend.MOONCAKE_STORE);
    assertThat(config.backend().mooncakeStore().globalSegmentSize()).isEqualTo(256L << 20);
    assertThat(config.network().storeNodeAddresses()).hasSize(2);
  }
}
