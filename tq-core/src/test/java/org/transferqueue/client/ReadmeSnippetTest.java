package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakPolicy;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.Tensor;

/** The README's "Using it from Java" snippet, kept compiling and correct. */
class ReadmeSnippetTest {

  @Test
  void shouldRunTheReadmeSnippet() {
    long[] read;
    try (TransferQueueSystem tq =
        TransferQueueSystem.builder()
            .config(TqConfig.defaults())
            .leakPolicy(LeakPolicy.THROW)
            .start()) {
      BufferAllocator memory = tq.allocator();
      try (Batch prompts =
          Batch.builder()
              .rowCount(2)
              .dense(
                  "input_ids",
                  Tensor.ofLongs(memory, DType.INT64, new long[] {1, 2, 3, 4, 5, 6}, 2, 3))
              .build()) {
        tq.client().put(prompts, "train");
      }
      BatchMeta ready =
          tq.client()
              .getMeta(GetMetadataRequest.fetch("train", List.of("input_ids"), "trainer", 2));
      try (Batch rows = tq.client().getData(ready)) {
        Tensor ids = ((DenseColumn) rows.column("input_ids")).tensor();
        read = ids.toLongArray();
      }
      tq.kv().put("sample_0", "replay", Map.of("score", 0.9), Map.of("status", "running"));
      tq.client().clearPartition("train");
      assertThat(tq.kv().list("replay").get("replay")).containsKey("sample_0");
    }
    assertThat(read).containsExactly(1, 2, 3, 4, 5, 6);
  }
}
