package org.transferqueue.objectstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.transferqueue.TqException;
import org.transferqueue.objectstore.engine.MasterConfig;

class ObjectStoreConfigTest {

  @Test
  void shouldUseMooncakeDefaultsWhenBuiltWithoutSettings() {
    assertThat(ReplicateConfig.builder().build()).isEqualTo(ReplicateConfig.DEFAULT);
    assertThat(ReplicateConfig.DEFAULT.replicaNum()).isEqualTo(1);
    StoreConfig store = StoreConfig.builder().build();
    assertThat(store.globalSegmentSize()).isEqualTo(4L << 30);
    assertThat(store.localBufferSize()).isEqualTo(1L << 30);
    MasterConfig master = MasterConfig.DEFAULT;
    assertThat(master.leaseTtl()).isEqualTo(Duration.ofSeconds(10));
    assertThat(master.evictionHighWatermark()).isEqualTo(0.90);
    assertThat(master.evictionRatio()).isEqualTo(0.05);
    assertThat(master.softPinTtl()).isEqualTo(Duration.ofMinutes(30));
  }

  @Test
  void shouldRejectInvalidValuesNamingThem() {
    assertThatThrownBy(() -> ReplicateConfig.builder().replicaNum(0).build())
        .isInstanceOf(TqException.class)
        .hasMessageContaining("replicaNum=0");
    assertThatThrownBy(() -> StoreConfig.builder().globalSegmentSize(100).build())
        .isInstanceOf(TqException.class)
        .hasMessageContaining("globalSegmentSize=100");
    assertThatThrownBy(() -> StoreConfig.builder().localHostname(" ").build())
        .hasMessageContaining("localHostname");
    assertThatThrownBy(() -> MasterConfig.builder().evictionRatio(0.95).build())
        .hasMessageContaining("evictionRatio=0.95");
    assertThatThrownBy(() -> MasterConfig.builder().leaseTtl(Duration.ZERO).build())
        .hasMessageContaining("leaseTtl=PT0S");
    assertThatThrownBy(() -> MasterConfig.builder().asyncThreads(0).build())
        .hasMessageContaining("asyncThreads=0");
  }

  @Test
  void shouldAcceptPureRequesterWithoutSegment() {
    assertThat(StoreConfig.builder().globalSegmentSize(0).build().globalSegmentSize()).isZero();
  }
}
