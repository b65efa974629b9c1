package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.transferqueue.config.ConfigException;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.TqConfig;

/**
 * Every server role follows one bind rule: it listens on {@code network.bind_host} and on the port
 * of its own configured address, whatever that address's host. The roles run in the test JVM; the
 * second loopback address 127.0.0.2 stands for an interface other than the addresses' 127.0.0.1.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BindHostTest {
  private static final String OTHER_LOOPBACK = "127.0.0.2";

  private static TqConfig config(String bindHost, HostPort controller) {
    return TqConfig.builder()
        .backend(b -> b.mooncakeStore(m -> m.globalSegmentSize(1 << 22).localBufferSize(1 << 20)))
        .network(n -> n.bindHost(bindHost).controllerAddress(controller))
        .build();
  }

  private static int freePort() throws IOException {
    try (ServerSocketChannel channel = ServerSocketChannel.open()) {
      channel.bind(new InetSocketAddress("127.0.0.1", 0));
      return ((InetSocketAddress) channel.getLocalAddress()).getPort();
    }
  }

  @Test
  void shouldBindControllerOnBindHostAndThePortOfItsAddress() throws IOException {
    int port = freePort();
    TqConfig tq = config(OTHER_LOOPBACK, new HostPort("127.0.0.1", port));
    try (RoleRunner.ServedRole role = ControllerCommand.start(tq)) {
      assertThat(role.address()).isEqualTo(new HostPort(OTHER_LOOPBACK, port));
    }
  }

  @Test
  void shouldBindStorageUnitOnBindHostNotOnTheHostOfItsAddress() {
    TqConfig tq = config(OTHER_LOOPBACK, null);
    try (RoleRunner.ServedRole role =
        StorageUnitCommand.start(tq, new HostPort("127.0.0.1", 0), 0)) {
      assertThat(role.address().host()).isEqualTo(OTHER_LOOPBACK);
      assertThat(role.address().port()).isPositive();
    }
  }

  @Test
  void shouldBindStoreNodeOnBindHostNotOnTheHostOfItsAddress() {
    TqConfig tq = config(OTHER_LOOPBACK, null);
    try (RoleRunner.Role role = StoreNodeCommand.start(tq, new HostPort("127.0.0.1", 0), 0)) {
      assertThat(role.address().host()).isEqualTo(OTHER_LOOPBACK);
      assertThat(role.address().port()).isPositive();
    }
  }

  @Test
  void shouldRefuseToStartARoleWhoseAddressLoopbackBindingCannotServe() {
    TqConfig tq = config("127.0.0.1", null);

    assertThatThrownBy(() -> StorageUnitCommand.start(tq, new HostPort("10.0.0.5", 7001), 1))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("network.storage_unit_addresses[1]")
        .hasMessageContaining("network.bind_host=127.0.0.1");
    assertThatThrownBy(() -> StoreNodeCommand.start(tq, new HostPort("10.0.0.5", 7002), 0))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("network.store_node_addresses[0]");
  }
}
