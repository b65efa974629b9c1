package org.transferqueue.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;

/** The one bind rule of every server role: {@code bind_host} on the port of the role's address. */
class NetworkConfigTest {
  private static NetworkConfig bindHost(String host) {
    return NetworkConfig.builder().bindHost(host).build();
  }

  @Test
  void shouldBindLoopbackByDefault() {
    assertThat(NetworkConfig.builder().build().bindHost()).isEqualTo("127.0.0.1");
    assertThat(
            NetworkConfig.builder()
                .build()
                .bindAddress(Optional.of(new HostPort("localhost", 7001)), "k"))
        .isEqualTo(new HostPort("127.0.0.1", 7001));
  }

  @Test
  void shouldBindBindHostOnThePortOfTheRoleAddressWhateverItsHost() {
    NetworkConfig all = bindHost("0.0.0.0");

    assertThat(all.bindAddress(Optional.of(new HostPort("10.0.0.5", 7001)), "k"))
        .isEqualTo(new HostPort("0.0.0.0", 7001));
    assertThat(all.bindAddress(Optional.of(new HostPort("node-1.internal", 7002)), "k"))
        .isEqualTo(new HostPort("0.0.0.0", 7002));
    assertThat(
            bindHost("10.0.0.5").bindAddress(Optional.of(new HostPort("203.0.113.7", 7003)), "k"))
        .as("an address behind NAT differs from the interface")
        .isEqualTo(new HostPort("10.0.0.5", 7003));
  }

  @Test
  void shouldBindAnEphemeralPortWhenTheRoleHasNoAddress() {
    assertThat(bindHost("127.0.0.1").bindAddress(Optional.empty(), "k"))
        .isEqualTo(new HostPort("127.0.0.1", 0));
  }

  @Test
  void shouldRejectLoopbackBindWhenTheRoleAddressIsAnotherInterface() {
    for (String loopback : new String[] {"127.0.0.1", "localhost", "::1"}) {
      NetworkConfig network = bindHost(loopback);
      assertThatThrownBy(
              () ->
                  network.bindAddress(
                      Optional.of(new HostPort("10.0.0.5", 7001)),
                      "network.storage_unit_addresses[1]"))
          .isInstanceOfSatisfying(
              ConfigException.class,
              e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION);
                assertThat(e.problems())
                    .singleElement()
                    .satisfies(
                        p -> {
                          assertThat(p.key()).isEqualTo("network.storage_unit_addresses[1]");
                          assertThat(p.value()).contains("10.0.0.5:7001");
                          assertThat(p.reason())
                              .contains("network.bind_host=" + loopback)
                              .contains("0.0.0.0");
                        });
              });
    }
  }

  @Test
  void shouldAcceptLoopbackBindForLoopbackAndNamedAddresses() {
    NetworkConfig network = bindHost("127.0.0.1");

    assertThat(network.bindAddress(Optional.of(new HostPort("127.0.0.1", 1)), "k").port())
        .isEqualTo(1);
    assertThat(network.bindAddress(Optional.of(new HostPort("127.0.0.2", 2)), "k").port())
        .isEqualTo(2);
    assertThat(network.bindAddress(Optional.of(new HostPort("my-host", 3)), "k").port())
        .as("names are not looked up")
        .isEqualTo(3);
  }

  @Test
  void shouldRejectASharedMemorySegmentSizeThatIsNotWholePages() {
    assertThatThrownBy(() -> NetworkConfig.builder().sharedMemorySegmentBytes(10_000).build())
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("network.shared_memory_segment_bytes")
        .hasMessageContaining("10000");
    assertThatThrownBy(() -> NetworkConfig.builder().sharedMemoryMinBytes(-1).build())
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("network.shared_memory_min_bytes");
  }
}
