package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.tensor.Batch;

/** Client-api §4 C50: the COMPLEX round trip through the low-level client, in both forms. */
@ExtendWith(LeakCheckExtension.class)
class MetaClientRoundTripTest {

  @ParameterizedTest
  @EnumSource(MetaCalls.Form.class)
  void C50_fullTypeRoundTrip(MetaCalls.Form form, BufferAllocator allocator) {
    String partition = "test_core_consistency";
    try (TransferQueueSystem tq = Systems.fresh();
        Batch input = ComplexBatch.range(allocator, 0, 20)) {
      MetaCalls calls = form.over(tq.client());
      BatchMeta written = calls.put(input, partition);
      assertThat(written.size()).isEqualTo(20);
      assertThat(written.isReady()).isTrue();
      List<String> sorted = new ArrayList<>(ComplexBatch.FIELDS);
      sorted.sort(null);
      assertThat(written.fieldNames()).containsExactlyElementsOf(sorted);

      BatchMeta fetched =
          calls.getMeta(
              GetMetadataRequest.fetch(
                  partition, ComplexBatch.FIELDS, "core_consistency_task", 20));
      assertThat(fetched.size()).isEqualTo(20);
      try (Batch output = calls.getData(fetched)) {
        Eq.assertBatchEq(output, input);
      }
    }
  }
}
