package org.transferqueue.client;

import java.util.Objects;
import org.transferqueue.config.TqConfig;
import org.transferqueue.sampler.Sampler;

/**
 * Where the scenarios' system runs: {@link #EMBEDDED} in one {@link TransferQueueSystem}, or as
 * servers in this JVM (a controller server, storage-unit or store-node servers on 127.0.0.1
 * ephemeral ports) that the scenario reaches only through a remote client ({@link TqClient}), with
 * every byte over TCP ({@link #LOOPBACK}) or through the servers' shared memory ({@link #SHM}).
 * Scenario classes run once per deployment with
 * {@code @ParameterizedClass @EnumSource(Deployment.class)}.
 */
enum Deployment {
  EMBEDDED,
  /** Servers over loopback sockets, shared memory off on every side: every byte over TCP. */
  LOOPBACK,
  /**
   * The servers of {@link #LOOPBACK} with shared memory on in them and in the client, for bodies of
   * every size ({@code network.shared_memory_min_bytes: 1}) and with small segments, so that the
   * scenarios' small tensors take the shared path and larger ones get segments of their own.
   */
  SHM;

  /** FRESH: a new SYS (SimpleStorage, 2 units, 200 samples, polling mode). */
  TestSystem fresh() {
    return start(Systems.sysConfig());
  }

  /** FRESH with {@code backend}. */
  TestSystem fresh(Backend backend) {
    return start(backend.sysConfig());
  }

  /** A new system of {@code config} with leak checking. */
  TestSystem start(TqConfig config) {
    return start(config, MissingKeyPolicy.FAIL, null);
  }

  /**
   * A new system of {@code config} with leak checking, the key-value API's missing-key policy and a
   * sampler instance (null: the sampler the configuration names).
   */
  TestSystem start(TqConfig config, MissingKeyPolicy policy, Sampler sampler) {
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(policy, "policy");
    return switch (this) {
      case EMBEDDED -> {
        TransferQueueSystem.Builder builder = Systems.builder(config).missingKeyPolicy(policy);
        if (sampler != null) {
          builder.sampler(sampler);
        }
        yield new TestSystem.Embedded(builder.start());
      }
      case LOOPBACK -> LoopbackSystem.start(config, policy, sampler, false);
      case SHM -> LoopbackSystem.start(config, policy, sampler, true);
    };
  }
}
