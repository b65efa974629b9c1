package org.transferqueue.server.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;
import org.transferqueue.Clock;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.client.KvApi;
import org.transferqueue.client.TqClient;
import org.transferqueue.client.TransferQueueSystem;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.TqConfig;
import org.transferqueue.memory.RootAllocator;
import org.transferqueue.storage.StorageManagerRegistry;
import org.transferqueue.system.ConfigMapper;
import org.transferqueue.tensor.Batch;

/**
 * Runs a {@link BenchPlan}: per size, generates the data once; per mode, measures the mode's
 * baseline, then for every backend starts a system and runs the iterations of upstream's perftest
 * on it. Embedded mode starts the system in this JVM; loopback mode starts the controller and two
 * storage units (SimpleStorage) or two store nodes (MooncakeStore) as child processes on 127.0.0.1
 * and drives them through a {@link TqClient} with shared memory off (every byte over TCP); shm mode
 * starts the same servers with shared memory on in them and in the client (bodies through the
 * servers' segments, its baseline is a memory copy in this process). A case's servers are always
 * stopped at its end:
 *
 * <pre>
 *   t0  kv.batchPut(keys, "train_0", batch)     timed: put
 *   t1  kv.list("train_0")                       timed: list (the keys the get then asks for)
 *   t2  kv.batchGet(listedKeys, "train_0", all)  timed: get
 *   t3  kv.clear(listedKeys, "train_0")          timed: clear
 * </pre>
 *
 * Each case first runs warm-up iterations ({@link BenchPlan#warmup()}, by default until the JIT
 * compilers of its processes have settled), timed the same way but kept out of the means: the first
 * one pays for the first touch of the system's memory (storage blocks, the pooled buffers of a
 * get's result, transport buffers), and the first tens for compiling the code paths, which a
 * long-running user pays once. The data read in the first iteration of each case is compared with
 * what was put (outside the timed region); a difference fails the run. In loopback mode the
 * heap-allocation counters of the client (this process) and of every server process are read right
 * before and after each measured put and get ({@link HeapMeter}), giving each case's heap bytes per
 * MiB moved ({@link HeapAllocation}). Not thread-safe: one run at a time.
 */
public final class BenchRunner {
  /** The partition every iteration writes to, as upstream. */
  public static final String PARTITION = "train_0";

  private static final System.Logger LOG = System.getLogger(BenchRunner.class.getName());

  private final BenchPlan plan;
  private final MemoryProbe probe;
  private final BenchListener listener;
  private final Clock nanoClock;
  private final LoopbackCommands loopback;
  // Progress counters, owned by the thread calling run().
  private int completed;
  private int total;

  /**
   * Creates a runner.
   *
   * @param plan what to run
   * @param probe the machine's memory, checked before each size
   * @param listener receives progress
   * @param nanoClock the time source of every measurement, e.g. {@code Clock.SYSTEM}
   */
  public BenchRunner(BenchPlan plan, MemoryProbe probe, BenchListener listener, Clock nanoClock) {
    this(plan, probe, listener, nanoClock, null);
  }

  /**
   * Creates a runner that can run {@link BenchMode#LOOPBACK} and {@link BenchMode#SHM}.
   *
   * @param plan what to run
   * @param probe the machine's memory, checked before each size
   * @param listener receives progress
   * @param nanoClock the time source of every measurement, e.g. {@code Clock.SYSTEM}
   * @param loopback how to start the child processes of loopback and shm mode, or null when the
   *     plan has neither
   */
  public BenchRunner(
      BenchPlan plan,
      MemoryProbe probe,
      BenchListener listener,
      Clock nanoClock,
      LoopbackCommands loopback) {
    this.plan = Objects.requireNonNull(plan, "plan");
    this.probe = Objects.requireNonNull(probe, "probe");
    this.listener = Objects.requireNonNull(listener, "listener");
    this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
    if (loopback == null && plan.modes().stream().anyMatch(BenchMode::servedByChildProcesses)) {
      throw new IllegalArgumentException(
          "a plan with loopback or shm mode needs the loopback commands");
    }
    this.loopback = loopback;
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
    int perMode =
        plan.backends().size() * (2 + 4 * (progressWarmup(plan.warmup()) + plan.iterations()));
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
        for (BenchBackend backend : plan.backends()) {
          // Measured again before every case: on a shared machine the load changes from one case
          // to the next, and a ratio is only meaningful against a baseline taken side by side.
          step(size.name() + " " + mode.optionName() + ": baseline");
          Baseline baseline = measureBaseline(mode, allocator, workload);
          // Give the baseline's buffers back to the OS: the system measured next needs the room.
          allocator.trim();
          baselines.putIfAbsent(mode, baseline);
          cases.add(runCase(workload, backend, mode, baseline));
        }
      }
      return new SizeResult(size, plan.complex(), workload.bytes(), baselines, cases);
    }
  }

  /** The plain mechanism of a mode moving the workload's bytes. */
  private Baseline measureBaseline(BenchMode mode, RootAllocator allocator, Workload workload) {
    return switch (mode) {
      case EMBEDDED, SHM ->
          Baseline.measureMemoryCopy(
              allocator, workload, Baseline.REPETITIONS, nanoClock, new CpuMeter()::cpuNanos);
      case LOOPBACK -> measureLoopback(allocator, workload);
    };
  }

  /** Sends the workload's bytes to a receiver child process over a plain loopback socket. */
  private Baseline measureLoopback(RootAllocator allocator, Workload workload) {
    Path dir = tempDir();
    try (LoopbackProcess receiver =
            LoopbackProcess.start("receiver", loopback.receiver(), dir.resolve("receiver.err"));
        SocketChannel channel =
            SocketChannel.open(
                new InetSocketAddress(receiver.address().host(), receiver.address().port()))) {
      CpuMeter cpu = new CpuMeter().add(receiver.pid());
      return Baseline.measureLoopback(
          allocator, workload, Baseline.REPETITIONS, nanoClock, channel, cpu::cpuNanos);
    } catch (IOException e) {
      throw new TqException(ErrorCode.CONNECTION_FAILED, "loopback baseline: " + e.getMessage(), e);
    } finally {
      deleteTree(dir);
    }
  }

  private CaseResult runCase(
      Workload workload, BenchBackend backend, BenchMode mode, Baseline baseline) {
    String label = workload.size().name() + " " + backend.configName() + "/" + mode.optionName();
    step(label + ": starting");
    TqConfig config = plan.caseConfig(backend, mode, workload.size(), workload.bytes());
    List<IterationResult> warmup = new ArrayList<>();
    List<IterationResult> iterations = new ArrayList<>();
    List<HeapAllocation> heap = new ArrayList<>();
    switch (mode) {
      case EMBEDDED -> {
        try (TransferQueueSystem system =
            TransferQueueSystem.builder()
                .config(config)
                .storageBackends(backends(config))
                .start()) {
          iterateAll(
              system.kv(),
              new CpuMeter(),
              null,
              workload,
              label,
              baseline,
              warmup,
              iterations,
              heap);
        }
      }
      case LOOPBACK, SHM -> {
        Path dir = tempDir();
        try (LoopbackServers servers = LoopbackServers.start(loopback.tq(), backend, config, dir);
            TqClient client = TransferQueueSystem.connect(servers.clientConfig());
            HeapMeter meter = heapMeter(servers.clientConfig(), backend, client)) {
          CpuMeter cpu = new CpuMeter();
          servers.pids().forEach(cpu::add);
          iterateAll(client.kv(), cpu, meter, workload, label, baseline, warmup, iterations, heap);
        } finally {
          deleteTree(dir);
        }
      }
    }
    return new CaseResult(backend, mode, baseline, warmup, iterations, true, heap);
  }

  /** A meter of the client (this process) and every server process of a loopback case. */
  private static HeapMeter heapMeter(TqConfig config, BenchBackend backend, TqClient client) {
    List<HostPort> servers = new ArrayList<>();
    config.network().controllerAddress().ifPresent(servers::add);
    servers.addAll(
        backend == BenchBackend.SIMPLE_STORAGE
            ? config.network().storageUnitAddresses()
            : config.network().storeNodeAddresses());
    return new HeapMeter(ConfigMapper.transport(config.network()), client.allocator(), servers);
  }

  private void iterateAll(
      KvApi kv,
      CpuMeter cpu,
      HeapMeter meter,
      Workload workload,
      String label,
      Baseline baseline,
      List<IterationResult> warmup,
      List<IterationResult> into,
      List<HeapAllocation> heapInto) {
    WarmupPolicy policy = plan.warmup();
    long warmupStart = nanoClock.nanoTime();
    while (!policy.done(warmup, (nanoClock.nanoTime() - warmupStart) / 1e9)) {
      int i = warmup.size() + 1;
      String prefix =
          label
              + " warm-up "
              + i
              + (policy.adaptive() ? " (until compilation settles): " : "/" + policy.min() + ": ");
      warmup.add(
          iterate(kv, cpu, null, workload, prefix, i, i == 1, baseline.gbPerSec(), heapInto));
    }
    completed += 4 * Math.max(0, progressWarmup(policy) - warmup.size());
    for (int i = 1; i <= plan.iterations(); i++) {
      String prefix = label + " iteration " + i + "/" + plan.iterations() + ": ";
      boolean verify = i == 1 && warmup.isEmpty();
      into.add(iterate(kv, cpu, meter, workload, prefix, i, verify, baseline.gbPerSec(), heapInto));
    }
  }

  /**
   * The warm-up iterations the progress bar counts per case: the fixed number, or for an adaptive
   * policy a typical count (the bar then jumps when a case settles sooner and waits at the end of
   * the case when it takes longer).
   */
  private static int progressWarmup(WarmupPolicy policy) {
    return policy.adaptive() ? Math.min(policy.maxIterations(), 100) : policy.min();
  }

  private static Path tempDir() {
    try {
      return Files.createTempDirectory("tq-bench-loopback");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Deletes the child processes' configuration and error files; best effort. */
  private static void deleteTree(Path dir) {
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(path);
      }
    } catch (IOException e) {
      LOG.log(System.Logger.Level.DEBUG, "cannot delete " + dir + ": " + e.getMessage());
    }
  }

  /**
   * One iteration; with a meter, the heap counters of client and servers are read right outside the
   * timed put and get (never inside the timed region), into {@code heapInto}.
   */
  private IterationResult iterate(
      KvApi kv,
      CpuMeter cpu,
      HeapMeter meter,
      Workload workload,
      String prefix,
      int iteration,
      boolean verify,
      double baseline,
      List<HeapAllocation> heapInto) {
    step(prefix + "put");
    // The CPU readings enclose the heap readings, not the other way round: reading the CPU meter
    // allocates (it parses /proc), which would otherwise count as the put's heap; the heap meter's
    // few calls to the servers cost no measurable CPU next to a batch.
    // The whole iteration's CPU and its compilers' part, each from one pass over the threads.
    CpuMeter.Reading iterationStart = cpu.read();
    long c0 = cpu.cpuNanos();
    HeapMeter.Reading beforePut = meter == null ? null : meter.read();
    long t0 = nanoClock.nanoTime();
    kv.batchPut(workload.keys(), PARTITION, workload.batch(), null);
    long t1 = nanoClock.nanoTime();
    HeapMeter.Reading afterPut = meter == null ? null : meter.readAfter();
    long c1 = cpu.cpuNanos();
    step(prefix + "list");
    long t2 = nanoClock.nanoTime();
    Map<String, Map<String, Object>> listed = kv.list(PARTITION).get(PARTITION);
    long t3 = nanoClock.nanoTime();
    List<String> keys = listed == null ? List.of() : List.copyOf(listed.keySet());
    if (keys.size() != workload.keys().size()) {
      throw new TqException(
          ErrorCode.CORRUPT_DATA,
          "list found " + keys.size() + " keys after a put of " + workload.keys().size());
    }
    step(prefix + "get");
    long c4 = cpu.cpuNanos();
    HeapMeter.Reading beforeGet = meter == null ? null : meter.read();
    long t4 = nanoClock.nanoTime();
    Batch read = kv.batchGet(keys, PARTITION, null);
    long t5 = nanoClock.nanoTime();
    HeapMeter.Reading afterGet = meter == null ? null : meter.readAfter();
    long c5 = cpu.cpuNanos();
    if (meter != null) {
      heapInto.add(
          new HeapAllocation(
              iteration,
              workload.bytes(),
              afterPut.client() - beforePut.client(),
              afterPut.servers() - beforePut.servers(),
              afterGet.client() - beforeGet.client(),
              afterGet.servers() - beforeGet.servers(),
              afterPut.first() - beforePut.first(),
              afterGet.first() - beforeGet.first(),
              meter.storageServers()));
    }
    try (read) {
      if (verify) {
        verify(workload, keys, read, prefix);
      }
    }
    step(prefix + "clear");
    long t6 = nanoClock.nanoTime();
    kv.clear(keys, PARTITION);
    long t7 = nanoClock.nanoTime();
    CpuMeter.Reading iterationEnd = cpu.read();
    return new IterationResult(
        iteration,
        workload.bytes(),
        seconds(t1 - t0),
        seconds(t3 - t2),
        seconds(t5 - t4),
        seconds(t7 - t6),
        baseline,
        cpuSeconds(c0, c1),
        cpuSeconds(c4, c5),
        cpuSeconds(iterationStart.cpuNanos(), iterationEnd.cpuNanos()),
        cpuSeconds(iterationStart.compilerNanos(), iterationEnd.compilerNanos()));
  }

  private static double cpuSeconds(long start, long end) {
    // A thread that exited in between takes its time with it (see CpuMeter): never below zero.
    return start < 0 || end < 0 ? Double.NaN : Math.max(0, end - start) / 1e9;
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
    return ConfigMapper.embeddedBackends(config);
  }

  private static double seconds(long nanos) {
    return Math.max(1, nanos) / 1e9;
  }

  private void step(String activity) {
    listener.onStep(activity, Math.min(completed, total - 1), total);
    completed++;
  }
}
