package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.transferqueue.config.Durability;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.meta.BatchMeta;

/** An embedded system with {@code controller.durability: journal} recovers its controller. */
class EmbeddedControllerJournalTest {
  @Test
  void shouldRecoverTheControllerOfAnEmbeddedSystem(@TempDir Path dir) {
    TqConfig config =
        TqConfig.builder()
            .controller(c -> c.durability(Durability.JOURNAL))
            .durability(d -> d.journalDir(dir.toString()))
            .build();
    BatchMeta inserted;
    String id;
    try (TransferQueueSystem tq = TransferQueueSystem.start(config)) {
      assertThat(tq.controller().durable()).isTrue();
      inserted = tq.client().getMeta(GetMetadataRequest.insert("train", List.of("x"), 3));
      id = tq.controller().controllerId();
    }
    try (TransferQueueSystem tq = TransferQueueSystem.start(config)) {
      assertThat(tq.controller().controllerId()).isEqualTo(id);
      assertThat(tq.controller().getPartitionIndexRange("train").stream().boxed().toList())
          .containsAll(inserted.globalIndexes());
    }
  }
}
