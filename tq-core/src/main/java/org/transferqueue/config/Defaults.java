package org.transferqueue.config;

import java.time.Duration;

/**
 * The one definition of every default and bound that a YAML section and a component's own settings
 * record share: the values {@code config/tq.yaml} documents. The section records (for example
 * {@link ControllerConfig}) and the component records ({@code ControllerOptions}, {@code
 * TransportConfig}, {@code StoreConfig}, {@code KvClientConfig}, {@code SimpleStorageSettings})
 * both refer to these constants, so that a component built without a configuration behaves as one
 * built from an empty YAML file. This class and {@link HostPort} are the only types of this package
 * that components may use; the sections themselves are mapped onto component records by {@code
 * org.transferqueue.system.ConfigMapper}.
 */
public final class Defaults {
  private Defaults() {}

  /** {@code controller.prealloc_sample_num}: global indexes reserved per new partition. */
  public static final int PREALLOC_SAMPLE_NUM = 1;

  /** {@code controller.polling_mode}: blocking fetches, as upstream. */
  public static final boolean POLLING_MODE = false;

  /** {@code controller.get_metadata_timeout}: total wait of a blocking fetch, as upstream. */
  public static final Duration GET_METADATA_TIMEOUT = Duration.ofSeconds(1);

  /**
   * {@code controller.get_metadata_check_interval}: the longest a waiting fetch sleeps before it
   * asks the sampler again although nothing changed.
   */
  public static final Duration GET_METADATA_CHECK_INTERVAL = Duration.ofSeconds(5);

  /** {@code backend.SimpleStorage.num_data_storage_units}. */
  public static final int NUM_DATA_STORAGE_UNITS = 2;

  /** {@code backend.MooncakeStore.global_segment_size}: 4 GiB, as upstream. */
  public static final long GLOBAL_SEGMENT_SIZE = 4L << 30;

  /** {@code backend.MooncakeStore.local_buffer_size}: 1 GiB, as upstream. */
  public static final long LOCAL_BUFFER_SIZE = 1L << 30;

  /** Smallest non-zero segment or buffer Mooncake accepts: 1 KiB. */
  public static final long MIN_SEGMENT_BYTES = 1L << 10;

  /** Largest segment or buffer Mooncake accepts: 1 TiB. */
  public static final long MAX_SEGMENT_BYTES = 1L << 40;

  /** {@code backend.MooncakeStore.batch_size_limit}: keys per store call and per worker task. */
  public static final int BATCH_SIZE_LIMIT = 400;

  /** {@code backend.MooncakeStore.max_batch_worker_threads}: parallel batch tasks per call. */
  public static final int MAX_BATCH_WORKER_THREADS = 4;

  /** {@code backend.MooncakeStore.max_retries}: retries of keys that failed transiently. */
  public static final int MAX_RETRIES = 3;

  /** {@code backend.MooncakeStore.retry_delay}: pause before the second and later retries. */
  public static final Duration RETRY_DELAY = Duration.ofSeconds(1);

  /** {@code network.bind_host}: loopback. */
  public static final String BIND_HOST = "127.0.0.1";

  /** {@code network.connect_timeout}: deadline of opening one connection. */
  public static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);

  /** {@code network.max_frame_bytes}: 1 GiB. */
  public static final long MAX_FRAME_BYTES = 1L << 30;

  /** Smallest accepted {@code network.max_frame_bytes}. */
  public static final long MIN_FRAME_BYTES = 4096;

  /** {@code network.shared_memory}: same-host peers move bodies through shared memory. */
  public static final boolean SHARED_MEMORY = true;

  /** {@code network.shared_memory_limit_bytes}: 2 GiB of segments per server. */
  public static final long SHARED_MEMORY_LIMIT_BYTES = 2L << 30;

  /** {@code network.shared_memory_segment_bytes}: 64 MiB per standard segment. */
  public static final long SHARED_MEMORY_SEGMENT_BYTES = 64L << 20;

  /** Smallest accepted {@code network.shared_memory_segment_bytes}: one page of header room. */
  public static final long MIN_SHARED_MEMORY_SEGMENT_BYTES = 8192;

  /** {@code network.shared_memory_min_bytes}: frames with fewer body bytes stay on the socket. */
  public static final long SHARED_MEMORY_MIN_BYTES = 64L << 10;

  /** {@code durability.journal_dir}: each role journals into a sub-directory of it. */
  public static final String JOURNAL_DIR = "tq-journal";

  /** {@code durability.sync}: one fsync per group commit. */
  public static final String DURABILITY_SYNC = "fsync";

  /** {@code durability.sync_interval}: the loss window of the {@code interval} sync policy. */
  public static final Duration DURABILITY_SYNC_INTERVAL = Duration.ofMillis(10);

  /** {@code durability.max_bytes}: 4 GiB of journal segments per role. */
  public static final long DURABILITY_MAX_BYTES = 4L << 30;

  /** {@code durability.segment_bytes}: 64 MiB per segment file. */
  public static final long DURABILITY_SEGMENT_BYTES = 64L << 20;

  /** {@code controller.durability}: no journal. */
  public static final Durability CONTROLLER_DURABILITY = Durability.NONE;
}
