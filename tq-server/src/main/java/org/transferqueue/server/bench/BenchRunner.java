package org.transferqueue.server.bench;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.LongSupplier;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.client.KvApi;
import org.transferqueue.client.TransferQueueSystem;
import org.transferqueue.config.TqConfig;
import org.transferqueue.memory.RootAllocator;
import org.transferqueue.objectstore.MooncakeStoreBackend;
import org.transferqueue.storage.StorageManagerRegistry;
import org.transferqueue.storage.simple.SimpleStorageManager;
import org.transferqueue.tensor.Batch;

/**
 * Runs a {@link BenchPlan}: per size, generates the data once; per mode, measures the mode's
 * baseline, then for every backend starts a system and runs the iterations of upstream's perftest
 * on it:
 *
 * <pre>
 *   t0  kv.batchPut(keys, "train_0", batch)     timed: put
 *   t1  kv.list("train_0")                       timed: list (the keys the get then asks for)
 *   t2  kv.batchGet(listedKeys, "train_0", all)  timed: get
 *   t3  kv.clear(listedKeys, "train_0")          timed: clear
 * </pre>
 *
 * The data read in the first iteration of each case is compared with what was put (outside the
 * timed region); a difference fails the run. Not thread-safe: one run at a time.
 */
public final class BenchRunner {
  /** The partition every iteration writes to, as upstream. */
  public static final String PARTITION = "train_0";

  private final BenchPlan plan;
  private final MemoryProbe probe;
  private final BenchListener listener;
  private final LongSupplier nanoClock;
  // Progress counters, owned by the thread calling run().
  private int completed;
  private int total;

  /**
   * Creates a runner.
   *
   * @param plan what to run
   * @param probe the machine's memory, checked before each size
   * @param listener receives progress
   * @param nanoClock the time source of every measurement, e.g. {@code System::nanoTime}
   */
  public BenchRunner(
      BenchPlan plan, MemoryProbe probe, BenchListener listener, LongSupplier nanoClock) {
    this.plan = Objects.requireNonNull(plan, "plan");
    this.probe = Objects.requireNonNull(probe, "probe");
    this.listener = Objects.requireNonNull(listener, "listener");
    this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
  }

  /**
   * Checks every size of the plan against the machine's memory and the configured allocator limit,
   * before anything is allocated.
   *
   * @throws TqException {@code OUT_OF_MEMORY} naming the first size that does not fit
   */
  public void checkMemory() {
    for (BenchSize size : plan.sizes()) {
      long bytes = Workload.expectedBytes(size, plan.complex());
      TqConfig config = plan.caseConfig(plan.backends().getFirst(), size, bytes);
      MemoryCheck.check(size, bytes, plan.backends(), probe, config.memory().limitBytes());
    }
  }

  /**
   * Runs the plan.
   *
   * @return the report
   * @throws TqException {@code OUT_OF_MEMORY} from {@link #checkMemory()}; {@code CORRUPT_DATA}
   *     when a backend returns data that differs from what was put; any error of the system
   */
  public BenchReport run() {
    checkMemory();
    Instant startedAt = Instant.now();
    BenchEnvironment environment = BenchEnvironment.current(probe);
    int perMode = 1 + plan.backends().size() * (1 + 4 * plan.iterations());
    total = plan.sizes().size() * (1 + plan.modes().size() * perMode);
    completed = 0;
    List<SizeResult> results = new ArrayList<>();
    try (RootAllocator allocator = RootAllocator.builder().name("bench-data").build()) {
      for (BenchSize size : plan.sizes()) {
        results.add(runSize(allocator, size));
        allocator.trim();
      }
    }
    listener.onStep("done", total, total);
    Map<String, String> unavailable = new LinkedHashMap<>();
    for (BenchMode mode : plan.skippedModes()) {
      unavailable.put(mode.optionName(), mode.missing().orElse("not available"));
    }
    return new BenchReport(plan, environment, startedAt, results, unavailable);
  }

  private SizeResult runSize(RootAllocator allocator, BenchSize size) {
    step(size.name() + ": generating data");
    try (Workload workload = Workload.generate(allocator, size, plan.complex(), plan.seed())) {
      Map<BenchMode, Baseline> baselines = new LinkedHashMap<>();
      List<CaseResult> cases = new ArrayList<>();
      for (BenchMode mode : plan.modes()) {
        step(size.name() + " " + mode.optionName() + ": baseline");
        Baseline baseline = measureBaseline(mode, allocator, workload);
        // Give the baseline's buffers back to the OS: the systems measured next need the room.
        allocator.trim();
        baselines.put(mode, baseline);
        for (BenchBackend backend : plan.backends()) {
          cases.add(runCase(workload, backend, mode, baseline));
        }
      }
      return new SizeResult(size, plan.complex(), workload.bytes(), baselines, cases);
    }
  }

  /** The plain mechanism of a mode moving the workload's bytes. */
  private Baseline measureBaseline(BenchMode mode, RootAllocator allocator, Workload workload) {
    return switch (mode) {
      case EMBEDDED ->
          Baseline.measureMemoryCopy(allocator, workload, Baseline.REPETITIONS, nanoClock);
      case LOOPBACK -> throw unsupported(mode);
    };
  }

  /** Starts the system a case measures: in this JVM for embedded mode. */
  private static TransferQueueSystem start(BenchMode mode, TqConfig config) {
    return switch (mode) {
      case EMBEDDED ->
          TransferQueueSystem.builder().config(config).storageBackends(backends(config)).start();
      case LOOPBACK -> throw unsupported(mode);
    };
  }

  private static TqException unsupported(BenchMode mode) {
    return new TqException(
        ErrorCode.UNSUPPORTED_OPERATION, mode.missing().orElse(mode.optionName()));
  }

  private CaseResult runCase(
      Workload workload, BenchBackend backend, BenchMode mode, Baseline baseline) {
    String label = workload.size().name() + " " + backend.configName() + "/" + mode.optionName();
    step(label + ": starting");
    TqConfig config = plan.caseConfig(backend, workload.size(), workload.bytes());
    List<IterationResult> iterations = new ArrayList<>();
    try (TransferQueueSystem system = start(mode, config)) {
      KvApi kv = system.kv();
      for (int i = 1; i <= plan.iterations(); i++) {
        String prefix = label + " iteration " + i + "/" + plan.iterations() + ": ";
        iterations.add(iterate(kv, workload, prefix, i, i == 1, baseline.gbPerSec()));
      }
    }
    return new CaseResult(backend, mode, iterations, true);
  }

  private IterationResult iterate(
      KvApi kv, Workload workload, String prefix, int iteration, boolean verify, double baseline) {
    step(prefix + "put");
    long t0 = nanoClock.getAsLong();
    kv.batchPut(workload.keys(), PARTITION, workload.batch(), null);
    long t1 = nanoClock.getAsLong();
    step(prefix + "list");
    long t2 = nanoClock.getAsLong();
    Map<String, Map<String, Object>> listed = kv.list(PARTITION).get(PARTITION);
    long t3 = nanoClock.getAsLong();
    List<String> keys = listed == null ? List.of() : List.copyOf(listed.keySet());
    if (keys.size() != workload.keys().size()) {
      throw new TqException(
          ErrorCode.CORRUPT_DATA,
          "list found " + keys.size() + " keys after a put of " + workload.keys().size());
    }
    step(prefix + "get");
    long t4 = nanoClock.getAsLong();
    Batch read = kv.batchGet(keys, PARTITION, null);
    long t5 = nanoClock.getAsLong();
    try (read) {
      if (verify) {
        verify(workload, keys, read, prefix);
      }
    }
    step(prefix + "clear");
    long t6 = nanoClock.getAsLong();
    kv.clear(keys, PARTITION);
    long t7 = nanoClock.getAsLong();
    return new IterationResult(
        iteration,
        workload.bytes(),
        seconds(t1 - t0),
        seconds(t3 - t2),
        seconds(t5 - t4),
        seconds(t7 - t6),
        baseline);
  }

  /** Compares a read with the workload, field by field, in the order of the listed keys. */
  private static void verify(Workload workload, List<String> keys, Batch read, String prefix) {
    Batch put = workload.batch();
    if (!keys.equals(workload.keys())) {
      throw new TqException(
          ErrorCode.CORRUPT_DATA, prefix + "list returned the keys in another order than put");
    }
    if (read.rowCount() != put.rowCount()
        || !new HashSet<>(read.fields()).equals(new HashSet<>(put.fields()))) {
      throw new TqException(
          ErrorCode.CORRUPT_DATA,
          prefix
              + "get returned "
              + read.rowCount()
              + " rows of "
              + read.fields()
              + ", put had "
              + put.rowCount()
              + " rows of "
              + put.fields());
    }
    for (String field : put.fields()) {
      if (!put.column(field).contentEquals(read.column(field))) {
        throw new TqException(
            ErrorCode.CORRUPT_DATA, prefix + "field '" + field + "' read back differs from put");
      }
    }
  }

  private static StorageManagerRegistry backends(TqConfig config) {
    StorageManagerRegistry.Builder registry =
        StorageManagerRegistry.builder()
            .register(StorageManagerRegistry.SIMPLE_STORAGE, SimpleStorageManager::create);
    return MooncakeStoreBackend.register(registry, config.backend().mooncakeStore()).build();
  }

  private static double seconds(long nanos) {
    return Math.max(1, nanos) / 1e9;
  }

  private void step(String activity) {
    listener.onStep(activity, completed, total);
    completed++;
  }
}
