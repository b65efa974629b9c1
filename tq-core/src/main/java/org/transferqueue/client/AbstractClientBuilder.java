package org.transferqueue.client;

import java.util.Objects;
import java.util.function.Supplier;
import org.transferqueue.CloseStack;
import org.transferqueue.config.ConfigWarnings;
import org.transferqueue.config.TqConfig;
import org.transferqueue.memory.LeakPolicy;
import org.transferqueue.memory.RootAllocator;
import org.transferqueue.storage.StorageContext;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.StorageManagerRegistry;

/**
 * The skeleton of {@link TqClient.Builder} and {@link TransferQueueSystem.Builder}: the settings
 * both take (configuration, storage backends, leak and missing-key policies), their setters, and
 * the one start-up path both run. Package-private so that the public types stay the two {@code
 * Builder}s; its public members are their API.
 *
 * <p>Start-up: the configuration's warnings are logged, a root allocator sized by {@code
 * memory.limit_bytes} is created, and the built object's constructor starts its parts, pushing each
 * onto a {@link CloseStack} that already holds the allocator; if any part fails, everything started
 * so far is closed in reverse order and nothing stays running.
 *
 * <p>Not thread-safe.
 *
 * @param <B> the concrete builder, returned by every setter
 */
abstract sealed class AbstractClientBuilder<B extends AbstractClientBuilder<B>>
    permits TqClient.Builder, TransferQueueSystem.Builder {
  TqConfig config = TqConfig.defaults();
  StorageManagerRegistry backends;
  LeakPolicy leakPolicy = LeakPolicy.LOG;
  MissingKeyPolicy missingKeyPolicy = MissingKeyPolicy.FAIL;

  AbstractClientBuilder() {}

  /** This builder as its concrete type. */
  abstract B self();

  /**
   * Sets the configuration.
   *
   * @param config the configuration; {@link TqConfig#defaults()} unless set
   * @return this builder
   */
  public B config(TqConfig config) {
    this.config = Objects.requireNonNull(config, "config");
    return self();
  }

  /**
   * Sets the registry the storage manager of {@code backend.storage_backend} is created from. By
   * default a {@link TransferQueueSystem} uses {@link StorageBackends#builtIn(TqConfig)} and a
   * {@link TqClient} the remote storage servers of the configured addresses (see {@link
   * TqClient#connect(TqConfig)}).
   *
   * @param backends the registry
   * @return this builder
   */
  public B storageBackends(StorageManagerRegistry backends) {
    this.backends = Objects.requireNonNull(backends, "backends");
    return self();
  }

  /**
   * Sets what closing does about memory still leased (tests use {@link LeakPolicy#THROW}).
   *
   * @param leakPolicy the policy; {@link LeakPolicy#LOG} by default
   * @return this builder
   */
  public B leakPolicy(LeakPolicy leakPolicy) {
    this.leakPolicy = Objects.requireNonNull(leakPolicy, "leakPolicy");
    return self();
  }

  /**
   * Sets what key-value reads do about keys without data.
   *
   * @param policy the policy; {@link MissingKeyPolicy#FAIL} by default
   * @return this builder
   */
  public B missingKeyPolicy(MissingKeyPolicy policy) {
    this.missingKeyPolicy = Objects.requireNonNull(policy, "policy");
    return self();
  }

  /** Starts the parts of a built object; each part is pushed onto {@code cleanup} as it starts. */
  @FunctionalInterface
  interface Starter<T> {
    T start(RootAllocator allocator, CloseStack cleanup);
  }

  /**
   * The start-up path of both built types: logs the configuration's warnings, creates the root
   * allocator and runs {@code starter}; closes whatever started when it throws.
   *
   * @param allocatorName the name of the root allocator
   * @param starter starts the object's parts, normally its constructor
   * @return the started object, which now owns the allocator and every pushed part
   */
  final <T> T start(String allocatorName, Starter<T> starter) {
    ConfigWarnings.log(config);
    RootAllocator allocator =
        RootAllocator.builder()
            .name(allocatorName)
            .limitBytes(config.memory().limitBytes().orElse(Long.MAX_VALUE))
            .leakPolicy(leakPolicy)
            .build();
    try (CloseStack cleanup = new CloseStack()) {
      cleanup.push(allocator);
      T started = starter.start(allocator, cleanup);
      cleanup.release();
      return started;
    }
  }

  /**
   * Creates the storage manager of {@code backend.storage_backend} from the registry set by {@link
   * #storageBackends}, or from {@code defaults} when none was set, and pushes it onto {@code
   * cleanup}.
   */
  final StorageManager startStorage(
      StorageContext context, Supplier<StorageManagerRegistry> defaults, CloseStack cleanup) {
    StorageManagerRegistry registry = backends != null ? backends : defaults.get();
    return cleanup.push(registry.create(config.backend().storageBackend().configName(), context));
  }
}
