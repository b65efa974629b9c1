package org.transferqueue.config;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The settings of upstream's Yuanrong backend (YAML section {@code backend.Yuanrong}), accepted so
 * that upstream's own configuration file loads as it is. This build does not provide the backend:
 * the keys are validated, and {@code backend.storage_backend: Yuanrong} stops start-up naming the
 * backends that are available. Nothing reads these values.
 *
 * @param autoInit whether upstream starts the Yuanrong data system itself
 * @param workerPort the data-system worker port
 * @param metastorePort the metastore service port
 * @param enableYrNpuTransport whether upstream uses the NPU transport
 * @param dsMaxWorkers upstream's serialisation threads (upstream 0.1.11 and later)
 * @param enableRdma whether upstream uses host RDMA through UCX
 * @param ucxEnvVars environment variables upstream passes to the data-system process
 * @param workerArgs extra arguments of upstream's worker
 */
public record YuanrongConfig(
    boolean autoInit,
    int workerPort,
    int metastorePort,
    boolean enableYrNpuTransport,
    int dsMaxWorkers,
    boolean enableRdma,
    Map<String, String> ucxEnvVars,
    String workerArgs) {

  /** The section's path. */
  public static final String SECTION = "backend.Yuanrong";

  /** Key of {@link #autoInit()}. */
  public static final String AUTO_INIT_PROP_NAME = SECTION + ".auto_init";

  /** Default of {@link #autoInit()}. */
  public static final boolean AUTO_INIT_DEFAULT = true;

  /** Key of {@link #workerPort()}. */
  public static final String WORKER_PORT_PROP_NAME = SECTION + ".worker_port";

  /** Default of {@link #workerPort()}. */
  public static final int WORKER_PORT_DEFAULT = 31501;

  /** Key of {@link #metastorePort()}. */
  public static final String METASTORE_PORT_PROP_NAME = SECTION + ".metastore_port";

  /** Default of {@link #metastorePort()}. */
  public static final int METASTORE_PORT_DEFAULT = 2379;

  /** Key of {@link #enableYrNpuTransport()}. */
  public static final String ENABLE_YR_NPU_TRANSPORT_PROP_NAME =
      SECTION + ".enable_yr_npu_transport";

  /** Default of {@link #enableYrNpuTransport()}. */
  public static final boolean ENABLE_YR_NPU_TRANSPORT_DEFAULT = false;

  /** Key of {@link #dsMaxWorkers()}. */
  public static final String DS_MAX_WORKERS_PROP_NAME = SECTION + ".ds_max_workers";

  /** Default of {@link #dsMaxWorkers()}. */
  public static final int DS_MAX_WORKERS_DEFAULT = 1;

  /** Key of {@link #enableRdma()}. */
  public static final String ENABLE_RDMA_PROP_NAME = SECTION + ".enable_rdma";

  /** Default of {@link #enableRdma()}. */
  public static final boolean ENABLE_RDMA_DEFAULT = false;

  /** Key of {@link #ucxEnvVars()}. */
  public static final String UCX_ENV_VARS_PROP_NAME = SECTION + ".ucx_env_vars";

  /** Default of {@link #ucxEnvVars()}. */
  public static final Map<String, String> UCX_ENV_VARS_DEFAULT = Map.of();

  /** Key of {@link #workerArgs()}. */
  public static final String WORKER_ARGS_PROP_NAME = SECTION + ".worker_args";

  /** Default of {@link #workerArgs()}. */
  public static final String WORKER_ARGS_DEFAULT = "--shared_memory_size_mb 8192";

  /**
   * Validates every component and copies the map.
   *
   * @throws ConfigException naming each invalid key and value
   */
  public YuanrongConfig {
    Problems p = new Problems();
    p.port(WORKER_PORT_PROP_NAME, workerPort, false);
    p.port(METASTORE_PORT_PROP_NAME, metastorePort, false);
    p.atLeast(DS_MAX_WORKERS_PROP_NAME, dsMaxWorkers, 1);
    p.notNull(UCX_ENV_VARS_PROP_NAME, ucxEnvVars);
    p.notNull(WORKER_ARGS_PROP_NAME, workerArgs);
    p.throwIfAny();
    ucxEnvVars = Collections.unmodifiableMap(new LinkedHashMap<>(ucxEnvVars));
  }

  /**
   * A builder holding the defaults.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /** Mutable builder of {@link YuanrongConfig}; not thread-safe. */
  public static final class Builder {
    private boolean autoInit = AUTO_INIT_DEFAULT;
    private int workerPort = WORKER_PORT_DEFAULT;
    private int metastorePort = METASTORE_PORT_DEFAULT;
    private boolean enableYrNpuTransport = ENABLE_YR_NPU_TRANSPORT_DEFAULT;
    private int dsMaxWorkers = DS_MAX_WORKERS_DEFAULT;
    private boolean enableRdma = ENABLE_RDMA_DEFAULT;
    private Map<String, String> ucxEnvVars = UCX_ENV_VARS_DEFAULT;
    private String workerArgs = WORKER_ARGS_DEFAULT;

    Builder() {}

    /**
     * Sets {@value #AUTO_INIT_PROP_NAME}.
     *
     * @param autoInit the value
     * @return this builder
     */
    public Builder autoInit(boolean autoInit) {
      this.autoInit = autoInit;
      return this;
    }

    /**
     * Sets {@value #WORKER_PORT_PROP_NAME}.
     *
     * @param workerPort 1-65535
     * @return this builder
     */
    public Builder workerPort(int workerPort) {
      this.workerPort = workerPort;
      return this;
    }

    /**
     * Sets {@value #METASTORE_PORT_PROP_NAME}.
     *
     * @param metastorePort 1-65535
     * @return this builder
     */
    public Builder metastorePort(int metastorePort) {
      this.metastorePort = metastorePort;
      return this;
    }

    /**
     * Sets {@value #ENABLE_YR_NPU_TRANSPORT_PROP_NAME}.
     *
     * @param enable the value
     * @return this builder
     */
    public Builder enableYrNpuTransport(boolean enable) {
      this.enableYrNpuTransport = enable;
      return this;
    }

    /**
     * Sets {@value #DS_MAX_WORKERS_PROP_NAME}.
     *
     * @param dsMaxWorkers at least 1
     * @return this builder
     */
    public Builder dsMaxWorkers(int dsMaxWorkers) {
      this.dsMaxWorkers = dsMaxWorkers;
      return this;
    }

    /**
     * Sets {@value #ENABLE_RDMA_PROP_NAME}.
     *
     * @param enable the value
     * @return this builder
     */
    public Builder enableRdma(boolean enable) {
      this.enableRdma = enable;
      return this;
    }

    /**
     * Sets {@value #UCX_ENV_VARS_PROP_NAME}.
     *
     * @param variables variable names to values
     * @return this builder
     */
    public Builder ucxEnvVars(Map<String, String> variables) {
      this.ucxEnvVars = Objects.requireNonNull(variables, "variables");
      return this;
    }

    /**
     * Sets {@value #WORKER_ARGS_PROP_NAME}.
     *
     * @param workerArgs the arguments
     * @return this builder
     */
    public Builder workerArgs(String workerArgs) {
      this.workerArgs = Objects.requireNonNull(workerArgs, "workerArgs");
      return this;
    }

    /**
     * Validates and builds.
     *
     * @return the configuration
     * @throws ConfigException naming each invalid key and value
     */
    public YuanrongConfig build() {
      return new YuanrongConfig(
          autoInit,
          workerPort,
          metastorePort,
          enableYrNpuTransport,
          dsMaxWorkers,
          enableRdma,
          ucxEnvVars,
          workerArgs);
    }
  }
}
