package org.transferqueue.client;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.provider.Arguments;
import org.transferqueue.config.StorageBackend;
import org.transferqueue.config.TqConfig;

/**
 * The storage backends the scenarios run over ({@code backend.storage_backend}): SimpleStorage, and
 * MooncakeStore on its embedded engine with a small segment.
 */
enum Backend {
  SIMPLE_STORAGE,
  MOONCAKE_STORE;

  /** SYS with this backend. */
  TqConfig sysConfig() {
    return Systems.sysConfig(
        b -> {
          if (this == MOONCAKE_STORE) {
            b.backend(
                backend ->
                    backend
                        .storageBackend(StorageBackend.MOONCAKE_STORE)
                        .mooncakeStore(
                            m -> m.globalSegmentSize(64L << 20).localBufferSize(1L << 20)));
          }
        });
  }

  /** FRESH with this backend. */
  TransferQueueSystem fresh() {
    return Systems.start(sysConfig());
  }

  /** Every (key-value form, backend) pair. */
  static List<Arguments> withKvForms() {
    List<Arguments> out = new ArrayList<>();
    for (Backend backend : values()) {
      for (KvCalls.Form form : KvCalls.Form.values()) {
        out.add(Arguments.of(form, backend));
      }
    }
    return out;
  }

  /** Every (form, backend) pair, for scenarios run in both forms over both backends. */
  static List<Arguments> withForms() {
    List<Arguments> out = new ArrayList<>();
    for (Backend backend : values()) {
      for (MetaCalls.Form form : MetaCalls.Form.values()) {
        out.add(Arguments.of(form, backend));
      }
    }
    return out;
  }
}
