package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.StorageBackend;
import org.transferqueue.config.TqConfig;

/**
 * {@code backend.MooncakeStore.auto_init: false} takes effect: the object store runs elsewhere, so
 * an embedded system, which would start a store of its own, refuses to start (a client connects to
 * the configured store nodes instead).
 */
class AutoInitTest {

  @Test
  void shouldRefuseToStartAnEmbeddedStoreWhenAutoInitIsFalse() {
    TqConfig config =
        TqConfig.builder()
            .backend(
                b ->
                    b.storageBackend(StorageBackend.MOONCAKE_STORE)
                        .mooncakeStore(m -> m.autoInit(false)))
            .network(n -> n.storeNodeAddresses(List.of(new HostPort("127.0.0.1", 46111))))
            .build();

    assertThatThrownBy(() -> TransferQueueSystem.start(config))
        .isInstanceOf(TqException.class)
        .hasMessageStartingWith(
            "backend.MooncakeStore.auto_init: false says the object store runs elsewhere, but an"
                + " embedded system starts its own")
        .extracting(e -> ((TqException) e).code())
        .isEqualTo(ErrorCode.INVALID_CONFIGURATION);
  }
}
