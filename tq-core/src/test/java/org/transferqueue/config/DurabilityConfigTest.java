package org.transferqueue.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.transferqueue.journal.JournalSettings;
import org.transferqueue.journal.SyncPolicy;
import org.transferqueue.system.ConfigMapper;

/** The {@code durability} section, {@code controller.durability} and their mapping. */
class DurabilityConfigTest {
  @Test
  void shouldReadTheSectionAndTheEnvironment() {
    TqConfig config =
        TqConfig.builder()
            .set("durability.max_bytes", 4L << 30)
            .set("durability.segment_bytes", 64L << 20)
            .set("controller.durability", "journal")
            .applyEnvironment(Map.of("TQ_JOURNAL_DIR", "/var/tq", "TQ_DURABILITY_SYNC", "interval"))
            .build();
    assertThat(config.durability().maxBytes()).isEqualTo(4L << 30);
    assertThat(config.durability().segmentBytes()).isEqualTo(64L << 20);
    assertThat(config.controller().durability()).isEqualTo(Durability.JOURNAL);
    JournalSettings settings = ConfigMapper.journal(config.durability(), "controller");
    assertThat(settings.directory()).isEqualTo(Path.of("/var/tq", "controller"));
    assertThat(settings.sync()).isEqualTo(SyncPolicy.INTERVAL);
    assertThat(settings.syncInterval()).isEqualTo(Duration.ofMillis(10));
  }

  @Test
  void shouldDefaultToNoJournal() {
    TqConfig config = TqConfig.defaults();
    assertThat(config.controller().durability()).isEqualTo(Durability.NONE);
    assertThat(config.durability().sync()).isEqualTo("fsync");
    assertThat(config.durability().maxBytes()).isEqualTo(4L << 30);
  }

  @Test
  void shouldRefuseBadValuesNamingTheKey() {
    assertThatThrownBy(() -> TqConfig.builder().set("controller.durability", "always").build())
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("controller.durability");
    assertThatThrownBy(() -> TqConfig.builder().set("durability.sync", "never").build())
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("durability.sync");
    assertThatThrownBy(
            () ->
                TqConfig.builder()
                    .set("durability.max_bytes", 64L << 10)
                    .set("durability.segment_bytes", 64L << 10)
                    .build())
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("durability.max_bytes");
  }
}
