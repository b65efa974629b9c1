package org.transferqueue.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.transferqueue.controller.Fixtures.controller;
import static org.transferqueue.controller.Fixtures.ids;
import static org.transferqueue.controller.Fixtures.insert;
import static org.transferqueue.controller.Fixtures.nested;
import static org.transferqueue.controller.Fixtures.schema;
import static org.transferqueue.controller.Fixtures.shape;

import java.lang.foreign.MemorySegment;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.transferqueue.codec.ValueDecoder;
import org.transferqueue.codec.ValueEncoder;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.tensor.DType;

/** The controller-state encoding: generations and per-sample column kinds survive a checkpoint. */
class ControllerStateCodecTest {

  private static Controller stateWithGenerationsAndJaggedSamples() {
    Controller c = controller();
    insert(c, "p", 3, "f");
    c.updateProductionStatus(
        ProductionUpdate.of(
            "p",
            ids(0, 1, 2),
            schema(nested(DType.INT64, List.of(shape(2), shape(2), shape(3))), "f")));
    c.clearSamples(ClearSamplesRequest.of("p", ids(2)));
    return c;
  }

  @Test
  void shouldRoundTripGenerationsAndJaggedSamples() {
    Controller c = stateWithGenerationsAndJaggedSamples();
    ControllerState state = c.snapshotState();
    assertThat(state.allocator().generations()).containsEntry(2L, 1L);

    ControllerState decoded =
        ControllerStateCodec.decode(ControllerStateCodec.encode(state), "test");
    assertThat(decoded).isEqualTo(state);

    Controller restored = controller();
    restored.restoreState(decoded);
    BatchMeta meta = restored.getMetadata(GetMetadataRequest.forceFetch("p", List.of("f")));
    assertThat(meta.field("f").nested()).as("rows put jagged stay jagged").isTrue();
    BatchMeta reused = restored.getMetadata(GetMetadataRequest.insert("q", List.of("f"), 1));
    assertThat(reused.globalIndex(0)).isEqualTo(2);
    assertThat(reused.generation(0)).isEqualTo(1);
  }

  @Test
  @SuppressWarnings("unchecked")
  void shouldReadAVersionOneStateAsEverySampleAtGenerationZero() {
    ControllerState state = stateWithGenerationsAndJaggedSamples().snapshotState();
    Map<String, Object> root =
        new LinkedHashMap<>(
            (Map<String, Object>)
                ValueDecoder.decode(
                    MemorySegment.ofArray(ControllerStateCodec.encode(state)), List.of(), "v2"));
    root.put("version", (long) ControllerStateCodec.VERSION_WITHOUT_GENERATIONS);
    Map<String, Object> allocator =
        new LinkedHashMap<>((Map<String, Object>) root.get("allocator"));
    allocator.remove("generations");
    root.put("allocator", allocator);

    ControllerState old =
        ControllerStateCodec.decode(ValueEncoder.encode(root).mainFrame(), "version 1");

    assertThat(old.allocator().generations()).isEmpty();
    assertThat(old.partitions().getFirst().fields().getFirst().jagged().isEmpty()).isTrue();
    assertThat(old.partitions()).hasSameSizeAs(state.partitions());
  }
}
