package org.transferqueue.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.transferqueue.config.ConfigException;
import org.transferqueue.config.TqConfig;
import org.transferqueue.config.YuanrongConfig;

/**
 * Upstream's own configuration file loads as it is: its {@code backend.Yuanrong} section and its
 * empty {@code backend.RayStore:} are accepted (validated, unavailable backends), and selecting
 * either backend stops start-up naming it and the available ones.
 */
class UpstreamConfigFileTest {
  private static final String[] FILES = {
    "upstream-0.1.10-config.yaml", "upstream-0.1.11-config.yaml"
  };

  @ParameterizedTest
  @ValueSource(strings = {"upstream-0.1.10-config.yaml", "upstream-0.1.11-config.yaml"})
  void shouldLoadUpstreamsFileAsItIsToTheDefaults(String file) throws IOException {
    TqConfig config = TqConfigs.parse(resource(file));

    assertThat(config).isEqualTo(TqConfig.defaults());
    assertThat(config.backend().yuanrong()).isEqualTo(YuanrongConfig.builder().build());
    assertThat(config.warnings()).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {"Yuanrong", "RayStore"})
  void shouldStopStartupNamingAnUnavailableBackendAndTheAvailableOnes(String backend)
      throws IOException {
    for (String file : FILES) {
      String yaml =
          resource(file).replace("storage_backend: SimpleStorage", "storage_backend: " + backend);

      assertThatThrownBy(
              () -> TqConfigs.parse(yaml, "config.yaml", java.util.Map.of(), java.util.Map.of()))
          .isInstanceOf(ConfigException.class)
          .hasMessage(
              "config.yaml: backend.storage_backend: \""
                  + backend
                  + "\" is an upstream backend that is not available in this build (available:"
                  + " SimpleStorage, MooncakeStore)");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"upstream-0.1.10-config.yaml", "upstream-0.1.11-config.yaml"})
  void shouldValidateTheYuanrongSectionOfUpstreamsFile(String file) throws IOException {
    String yaml =
        resource(file)
            .replace("worker_port: 31501", "worker_port: 70000")
            .replace("ucx_env_vars: {}", "ucx_env_vars: {UCX_TLS: [rc]}");

    assertThatThrownBy(() -> TqConfigs.parse(yaml))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("backend.Yuanrong.worker_port: 70000 is not a port (1-65535)")
        .hasMessageContaining(
            "backend.Yuanrong.ucx_env_vars: {\"UCX_TLS\": [\"rc\"]} has a value that is not a"
                + " string at UCX_TLS: [\"rc\"]");
  }

  @ParameterizedTest
  @ValueSource(strings = {"upstream-0.1.10-config.yaml", "upstream-0.1.11-config.yaml"})
  void shouldAcceptTheRayStoreSectionOnlyEmpty(String file) throws IOException {
    String yaml = resource(file).replace("  RayStore:", "  RayStore:\n    address: auto");

    assertThatThrownBy(() -> TqConfigs.parse(yaml))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "backend.RayStore.address: \"auto\" is not a known key (upstream's RayStore backend"
                + " has no settings, and this build does not provide it)");
  }

  private static String resource(String name) throws IOException {
    try (InputStream in = UpstreamConfigFileTest.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IOException("test resource " + name + " is missing");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
