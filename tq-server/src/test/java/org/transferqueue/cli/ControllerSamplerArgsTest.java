package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.client.TqClient;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.server.config.TqConfigs;
import org.transferqueue.tensor.Batch;

/**
 * {@code tq controller} builds its sampler with {@code controller.sampler_args}: a multi-process
 * deployment can set {@code GRPOGroupNSampler}'s group size.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ControllerSamplerArgsTest {

  @Test
  void shouldServeGroupsOfTheConfiguredSizeFromTheControllerRole() {
    TqConfig serverConfig =
        TqConfigs.parse(
            """
            controller:
              sampler: GRPOGroupNSampler
              sampler_args:
                n_samples_per_prompt: 2
              polling_mode: true
            """);
    try (RoleRunner.ServedRole role = ControllerCommand.start(serverConfig)) {
      TqConfig clientConfig =
          TqConfigs.parse(
              "network:\n  controller_address: \"" + role.address() + "\"\n", java.util.Map.of());
      try (TqClient tq = TqClient.connect(clientConfig);
          Batch rows = Batch.builder().objects("x", List.of("a", "b", "c", "d")).build()) {
        tq.client().put(rows, "p");

        assertThatThrownBy(
                () -> tq.client().getMeta(GetMetadataRequest.fetch("p", List.of("x"), "t", 3)))
            .isInstanceOf(TqException.class)
            .hasMessageContaining("must be a multiple of n_samples_per_prompt=2")
            .extracting(e -> ((TqException) e).code())
            .isEqualTo(ErrorCode.INVALID_ARGUMENT);
        BatchMeta group = tq.client().getMeta(GetMetadataRequest.fetch("p", List.of("x"), "t", 2));
        assertThat(group.size()).isEqualTo(2);
      }
    }
  }
}
