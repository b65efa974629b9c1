package org.transferqueue.client;

import java.util.function.Consumer;
import org.transferqueue.config.TqConfig;
import org.transferqueue.memory.LeakPolicy;

/**
 * Starts the systems of the acceptance fixtures with leak checking: closing a system while any
 * batch it handed out is still open fails the test ({@link LeakPolicy#THROW}).
 */
final class Systems {
  private Systems() {}

  /**
   * The SYS configuration: polling mode, SimpleStorage with 2 units and a total capacity of 200
   * samples.
   */
  static TqConfig sysConfig() {
    return sysConfig(b -> {});
  }

  /** The SYS configuration with further changes. */
  static TqConfig sysConfig(Consumer<TqConfig.Builder> change) {
    TqConfig.Builder builder =
        TqConfig.builder()
            .controller(c -> c.pollingMode(true))
            .backend(b -> b.simpleStorage(s -> s.numDataStorageUnits(2).totalStorageSize(200L)));
    change.accept(builder);
    return builder.build();
  }

  /** FRESH: a new SYS (global indexes start at 0, no partitions). */
  static TransferQueueSystem fresh() {
    return start(sysConfig());
  }

  /** A new system with leak checking. */
  static TransferQueueSystem start(TqConfig config) {
    return builder(config).start();
  }

  /** A builder with leak checking, for further settings. */
  static TransferQueueSystem.Builder builder(TqConfig config) {
    return TransferQueueSystem.builder().config(config).leakPolicy(LeakPolicy.THROW);
  }
}
