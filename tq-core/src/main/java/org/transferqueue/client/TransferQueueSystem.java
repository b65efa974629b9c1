package org.transferqueue.client;

import java.lang.reflect.InvocationTargetException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.Controller;
import org.transferqueue.controller.ControllerClock;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakPolicy;
import org.transferqueue.memory.RootAllocator;
import org.transferqueue.remote.ControllerNotifier;
import org.transferqueue.sampler.GrpoGroupNSampler;
import org.transferqueue.sampler.RankAwareSampler;
import org.transferqueue.sampler.Sampler;
import org.transferqueue.sampler.SeqlenBalancedSampler;
import org.transferqueue.sampler.SequentialSampler;
import org.transferqueue.storage.StorageContext;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.StorageManagerRegistry;

/**
 * An embedded TransferQueue: controller, storage and clients in this JVM, started from one
 * configuration and owned by whoever started it.
 *
 * <pre>{@code
 * try (TransferQueueSystem tq = TransferQueueSystem.start(TqConfig.defaults())) {
 *   BatchMeta written = tq.client().put(batch, "train");
 *   tq.kv().put("sample_0", "train", Map.of("input_ids", ids), Map.of("score", 0.9));
 * }
 * }</pre>
 *
 * <p>Closing the system stops the clients, the storage (releasing all its memory) and the
 * controller, in that order; it is idempotent. Thread-safe.
 */
public final class TransferQueueSystem implements AutoCloseable {
  private final TqConfig config;
  private final RootAllocator allocator;
  private final Controller controller;
  private final StorageManager storage;
  private final LocalMetaClient client;
  private final KvApi kv;
  private final AtomicBoolean closed = new AtomicBoolean();

  private TransferQueueSystem(Builder builder) {
    this.config = builder.config;
    this.allocator =
        RootAllocator.builder()
            .name("transferqueue")
            .limitBytes(config.memory().limitBytes().orElse(Long.MAX_VALUE))
            .leakPolicy(builder.leakPolicy)
            .build();
    Controller startedController = null;
    StorageManager startedStorage = null;
    try {
      Sampler sampler =
          builder.sampler != null ? builder.sampler : samplerNamed(config.controller().sampler());
      startedController = new Controller(ControllerSettings.from(config), sampler, builder.clock);
      StorageContext context =
          new StorageContext(
              allocator, new ControllerNotifier(startedController), StorageOptions.from(config));
      startedStorage =
          builder.backends.create(config.backend().storageBackend().configName(), context);
    } catch (RuntimeException | Error e) {
      if (startedStorage != null) {
        startedStorage.close();
      }
      allocator.close();
      throw e;
    }
    this.controller = startedController;
    this.storage = startedStorage;
    this.client = new LocalMetaClient(controller, storage, allocator);
    this.kv = new KvApi(client, builder.missingKeyPolicy);
  }

  /**
   * Starts an embedded system with the built-in backends.
   *
   * @param config the configuration
   * @return the running system; the caller owns it and must close it
   * @throws TqException {@code INVALID_CONFIGURATION} naming a key whose value cannot be used;
   *     nothing stays running then
   */
  public static TransferQueueSystem start(TqConfig config) {
    return builder().config(config).start();
  }

  /**
   * Connects to a system started elsewhere (for example by {@code tq controller} and the storage
   * roles) whose addresses are in the configuration; the returned client does not own it.
   *
   * @param config the configuration; {@code network.controller_address} must be set
   * @return a non-owning client; closing it releases only the client
   * @throws org.transferqueue.TqException as described on {@link TqClient#connect(TqConfig)}
   */
  public static TqClient connect(TqConfig config) {
    return TqClient.connect(config);
  }

  /**
   * Starts building a system, for settings beyond the configuration file (a sampler instance, a
   * clock, extra storage backends).
   *
   * @return a builder with {@link TqConfig#defaults()}
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The low-level, metadata-based client of this system.
   *
   * @return the client; owned by the system (closing it has no effect on the system)
   */
  public MetaClient client() {
    return client;
  }

  /**
   * The key-value API of this system.
   *
   * @return the API; owned by the system
   */
  public KvApi kv() {
    return kv;
  }

  /**
   * The effective configuration.
   *
   * @return the configuration the system runs with
   */
  public TqConfig config() {
    return config;
  }

  /**
   * The allocator behind storage and the batches that reads return; its statistics show the memory
   * the system holds.
   *
   * @return the system's root allocator
   */
  public BufferAllocator allocator() {
    return allocator;
  }

  /**
   * The embedded controller, for statistics and checkpoint state.
   *
   * @return the controller
   */
  public Controller controller() {
    return controller;
  }

  /**
   * The storage manager of the configured backend.
   *
   * @return the storage manager
   */
  public StorageManager storage() {
    return storage;
  }

  /** Stops clients, storage and controller and releases all memory. Idempotent. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    List<AutoCloseable> order = new ArrayList<>(List.of(kv, client, storage, allocator));
    RuntimeException failure = null;
    for (AutoCloseable resource : order) {
      try {
        resource.close();
      } catch (Exception e) {
        if (failure == null) {
          failure =
              e instanceof RuntimeException r
                  ? r
                  : new TqException(ErrorCode.INTERNAL, "close failed: " + e, e);
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  /**
   * Creates a built-in sampler from its configuration name, or a user sampler from a class name (a
   * public no-argument constructor is required).
   *
   * @param name {@code SequentialSampler}, {@code GRPOGroupNSampler}, {@code RankAwareSampler},
   *     {@code SeqlenBalancedSampler} or a fully qualified class name
   * @return a new sampler
   * @throws TqException {@code INVALID_CONFIGURATION} naming the value when no sampler fits
   */
  public static Sampler samplerNamed(String name) {
    Map<String, java.util.function.Supplier<Sampler>> builtIn = new LinkedHashMap<>();
    builtIn.put("SequentialSampler", SequentialSampler::new);
    builtIn.put("GRPOGroupNSampler", GrpoGroupNSampler::new);
    builtIn.put("GrpoGroupNSampler", GrpoGroupNSampler::new);
    builtIn.put("RankAwareSampler", RankAwareSampler::new);
    builtIn.put("SeqlenBalancedSampler", () -> new SeqlenBalancedSampler(1, 1));
    java.util.function.Supplier<Sampler> supplier = builtIn.get(name);
    if (supplier != null) {
      return supplier.get();
    }
    try {
      Class<?> type = Class.forName(name);
      if (!Sampler.class.isAssignableFrom(type)) {
        throw new TqException(
            ErrorCode.INVALID_CONFIGURATION,
            "controller.sampler: class " + name + " does not implement " + Sampler.class.getName());
      }
      return (Sampler) type.getConstructor().newInstance();
    } catch (ClassNotFoundException e) {
      throw new TqException(
          ErrorCode.INVALID_CONFIGURATION,
          "controller.sampler: Could not find sampler '"
              + name
              + "' (built in: "
              + builtIn.keySet()
              + ")",
          e);
    } catch (NoSuchMethodException
        | InstantiationException
        | IllegalAccessException
        | InvocationTargetException e) {
      throw new TqException(
          ErrorCode.INVALID_CONFIGURATION,
          "controller.sampler: cannot instantiate '"
              + name
              + "' with a public no-argument constructor",
          e);
    }
  }

  /** Settings of a {@link TransferQueueSystem} beyond its configuration. */
  public static final class Builder {
    private TqConfig config = TqConfig.defaults();
    private Sampler sampler;
    private ControllerClock clock = ControllerClock.SYSTEM;
    private StorageManagerRegistry backends = StorageBackends.builtIn();
    private LeakPolicy leakPolicy = LeakPolicy.LOG;
    private MissingKeyPolicy missingKeyPolicy = MissingKeyPolicy.FAIL;

    private Builder() {}

    /**
     * Sets the configuration.
     *
     * @param config the configuration
     * @return this builder
     */
    public Builder config(TqConfig config) {
      this.config = Objects.requireNonNull(config, "config");
      return this;
    }

    /**
     * Uses this sampler instance instead of the one named by {@code controller.sampler}.
     *
     * @param sampler the sampler
     * @return this builder
     */
    public Builder sampler(Sampler sampler) {
      this.sampler = Objects.requireNonNull(sampler, "sampler");
      return this;
    }

    /**
     * Sets the controller's time source (for tests).
     *
     * @param clock the clock
     * @return this builder
     */
    public Builder clock(ControllerClock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Sets the storage backends to choose from by {@code backend.storage_backend}.
     *
     * @param backends the registry
     * @return this builder
     */
    public Builder storageBackends(StorageManagerRegistry backends) {
      this.backends = Objects.requireNonNull(backends, "backends");
      return this;
    }

    /**
     * Sets what closing the system does about memory still leased (tests use {@link
     * LeakPolicy#THROW}).
     *
     * @param leakPolicy the policy
     * @return this builder
     */
    public Builder leakPolicy(LeakPolicy leakPolicy) {
      this.leakPolicy = Objects.requireNonNull(leakPolicy, "leakPolicy");
      return this;
    }

    /**
     * Sets what key-value reads do about missing keys.
     *
     * @param policy the policy; {@link MissingKeyPolicy#FAIL} by default
     * @return this builder
     */
    public Builder missingKeyPolicy(MissingKeyPolicy policy) {
      this.missingKeyPolicy = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /**
     * Starts the system.
     *
     * @return the running system; the caller owns it
     */
    public TransferQueueSystem start() {
      return new TransferQueueSystem(this);
    }
  }
}
