package org.transferqueue.objectstore.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.config.MooncakeStoreConfig;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.objectstore.ReplicateConfig;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.objectstore.StoreStatistics;
import org.transferqueue.system.ConfigMapper;

/**
 * {@code backend.MooncakeStore.offload.eviction_high_watermark_ratio} and {@code eviction_ratio}
 * take effect: they set when the engine of an embedded store or store node evicts objects that are
 * not hard-pinned.
 */
@ExtendWith(LeakCheckExtension.class)
class EvictionSettingsTest {
  private static final long SEGMENT = 1 << 20;
  private static final long OBJECT = 64 << 10;

  @Test
  void shouldEvictUnpinnedObjectsAtTheConfiguredWatermark(BufferAllocator allocator) {
    MooncakeStoreConfig half =
        MooncakeStoreConfig.builder()
            .offload(o -> o.evictionHighWatermarkRatio(0.5).evictionRatio(0.25))
            .build();
    assertThat(ConfigMapper.master(half).evictionHighWatermark()).isEqualTo(0.5);
    assertThat(ConfigMapper.master(half).evictionRatio()).isEqualTo(0.25);

    // 10 of 16 slots (62.5 %): above a watermark of 0.5, below the default of 0.9.
    assertThat(evictedAfterTenObjects(allocator, half)).isPositive();
    assertThat(evictedAfterTenObjects(allocator, MooncakeStoreConfig.builder().build())).isZero();
  }

  private static long evictedAfterTenObjects(
      BufferAllocator allocator, MooncakeStoreConfig config) {
    try (EmbeddedObjectStore store =
            EmbeddedObjectStore.create(allocator, ConfigMapper.master(config));
        NativeBuffer source = allocator.allocate(OBJECT)) {
      assertThat(
              store.setup(
                  StoreConfig.builder()
                      .localHostname("node-a:12300")
                      .globalSegmentSize(SEGMENT)
                      .localBufferSize(SEGMENT)
                      .build()))
          .isZero();
      for (int i = 0; i < 10; i++) {
        assertThat(store.put("k" + i, source.segment(), ReplicateConfig.DEFAULT)).isZero();
      }
      StoreStatistics stats = store.statistics();
      assertThat(stats.capacityBytes()).isEqualTo(SEGMENT);
      assertThat(stats.objects() + stats.evictedObjects()).isEqualTo(10);
      return stats.evictedObjects();
    }
  }
}
