package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.TqException;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.StorageBackend;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.Controller;
import org.transferqueue.controller.ControllerOptions;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.LeakPolicy;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.KvBatchMeta;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.objectstore.engine.EmbeddedObjectStore;
import org.transferqueue.objectstore.engine.MasterConfig;
import org.transferqueue.remote.controller.ControllerServer;
import org.transferqueue.remote.objectstore.StoreNodeServer;
import org.transferqueue.remote.storage.StorageUnitServer;
import org.transferqueue.storage.simple.StorageUnit;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;
import org.transferqueue.testing.Await;
import org.transferqueue.testing.Seeds;
import org.transferqueue.transport.TransportConfig;

/**
 * Hostile replies against every remote client: real servers (a controller, two storage units, a
 * store node) behind {@link MutatingProxy}s that answer, for a bounded time, with seeded random and
 * mutated replies, while real client calls run through a {@link TqClient} per backend (getMeta, put
 * and get over SimpleStorage and MooncakeStore, the kv API). Every call must end normally or with a
 * {@link TqException}, never another exception and never past its deadline; afterwards the client's
 * allocator is back to its baseline, and the same clients make a correct round trip once the
 * proxies are transparent again. Each run prints its seed and figures ({@code [client-fuzz]});
 * rerun one with {@code -Dtq.seed=N}; {@code -Dtq.fuzz.millis=M} sets the time per backend.
 */
@ExtendWith(LeakCheckExtension.class)
class ClientFuzzTest {
  private static final long MILLIS = Long.getLong("tq.fuzz.millis", 2_500);
  private static final long SLOW_MILLIS = Long.getLong("tq.fuzz.slow.millis", 60_000);
  private static final Duration DEADLINE = Duration.ofSeconds(1);

  /** How long a call may take beyond its deadline before it counts as a hang (2 shared cores). */
  private static final Duration HANG = Duration.ofSeconds(20);

  private static final String P = "fuzz";

  /** The scratch buffer each client connection holds (FrameReader.SCRATCH_BYTES). */
  private static final long CONNECTION_SCRATCH_BYTES = 64 * 1024;

  /** Correct round trips in a row required after fuzzing. */
  private static final int ROUND_TRIPS = 8;

  /** Calls in flight at once. */
  private static final int PARALLEL = 16;

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void shouldFailTypedAndLeakNothingWhenSimpleStorageRepliesAreHostile(BufferAllocator allocator)
      throws Exception {
    fuzzAndCheck(allocator, StorageBackend.SIMPLE_STORAGE, MILLIS);
  }

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void shouldFailTypedAndLeakNothingWhenMooncakeStoreRepliesAreHostile(BufferAllocator allocator)
      throws Exception {
    fuzzAndCheck(allocator, StorageBackend.MOONCAKE_STORE, MILLIS);
  }

  @Test
  @Tag("slow")
  @Timeout(value = 900, unit = TimeUnit.SECONDS)
  void shouldFailTypedAndLeakNothingAfterLongFuzzOfBothBackends(BufferAllocator allocator)
      throws Exception {
    fuzzAndCheck(allocator, StorageBackend.SIMPLE_STORAGE, SLOW_MILLIS);
    fuzzAndCheck(allocator, StorageBackend.MOONCAKE_STORE, SLOW_MILLIS);
  }

  /** The servers of one backend behind proxies. */
  private static final class Deployment implements AutoCloseable {
    final List<AutoCloseable> started = new ArrayList<>();
    final List<MutatingProxy> proxies = new ArrayList<>();
    MutatingProxy controllerProxy;
    final List<HostPort> storage = new ArrayList<>();

    Deployment(BufferAllocator allocator, StorageBackend backend, long seed) {
      TransportConfig transport =
          TransportConfig.builder().bindHost("127.0.0.1").bindPort(0).build();
      ControllerServer controller =
          ControllerServer.start(
              new Controller(ControllerOptions.defaults()), transport, allocator);
      started.add(controller);
      controllerProxy = proxy("controller", controller.address(), seed);
      if (backend == StorageBackend.MOONCAKE_STORE) {
        EmbeddedObjectStore engine = EmbeddedObjectStore.create(allocator, MasterConfig.DEFAULT);
        started.add(engine);
        int rc =
            engine.setup(
                StoreConfig.builder()
                    .localHostname("store-node-0")
                    .globalSegmentSize(16L << 20)
                    .localBufferSize(1L << 20)
                    .build());
        assertThat(rc).isZero();
        StoreNodeServer node = StoreNodeServer.start(engine, transport, allocator);
        started.add(node);
        storage.add(proxy("store-node", node.address(), seed + 1).address());
      } else {
        for (int i = 0; i < 2; i++) {
          StorageUnit unit =
              new StorageUnit("unit-" + i, java.util.OptionalLong.empty(), allocator, 1L << 30);
          started.add(unit);
          StorageUnitServer server = StorageUnitServer.start(unit, transport, allocator);
          started.add(server);
          storage.add(proxy("unit-" + i, server.address(), seed + 2 + i).address());
        }
      }
    }

    private MutatingProxy proxy(String name, HostPort target, long seed) {
      MutatingProxy proxy = new MutatingProxy(name, target, seed);
      proxies.add(proxy);
      return proxy;
    }

    void fuzzing(boolean on) {
      proxies.forEach(p -> p.fuzzing = on);
    }

    TqConfig clientConfig(StorageBackend backend) {
      return TqConfig.builder()
          .backend(
              b -> {
                b.storageBackend(backend)
                    .simpleStorage(s -> s.numDataStorageUnits(2).sendRecvTimeout(DEADLINE))
                    .mooncakeStore(
                        m ->
                            m.maxRetries(0).globalSegmentSize(16L << 20).localBufferSize(1L << 20));
              })
          .network(
              n -> {
                // A handshake reply the proxy drops or misroutes (HELLO, or SHM_ATTACH of a
                // same-host connection) holds that connection's dial until the connect timeout;
                // keep it within the round trips' budget after fuzzing.
                n.connectTimeout(Duration.ofSeconds(2));
                n.controllerAddress(controllerProxy.address());
                if (backend == StorageBackend.MOONCAKE_STORE) {
                  n.storeNodeAddresses(storage);
                } else {
                  n.storageUnitAddresses(storage);
                }
              })
          .client(c -> c.requestTimeout(DEADLINE))
          .build();
    }

    @Override
    public void close() {
      proxies.reversed().forEach(MutatingProxy::close);
      for (AutoCloseable c : started.reversed()) {
        try {
          c.close();
        } catch (Exception e) {
          throw new AssertionError("closing " + c, e);
        }
      }
    }
  }

  private static Batch rows(BufferAllocator a, int n, int salt) {
    float[] values = new float[n * 3];
    List<String> texts = new ArrayList<>();
    for (int i = 0; i < values.length; i++) {
      values[i] = salt * 100 + i;
    }
    for (int i = 0; i < n; i++) {
      texts.add("t" + salt + "-" + i);
    }
    return Batch.builder()
        .dense("x", Tensor.ofFloats(a, DType.FLOAT32, values, n, 3))
        .objects("text", texts)
        .build();
  }

  private static void fuzzAndCheck(BufferAllocator servers, StorageBackend backend, long millis)
      throws Exception {
    long seed = Seeds.seed();
    Random random = new Random(seed);
    try (Deployment d = new Deployment(servers, backend, seed);
        TqClient tq =
            TqClient.builder()
                .config(d.clientConfig(backend))
                .leakPolicy(LeakPolicy.THROW)
                .connect();
        ExecutorService calls = Executors.newVirtualThreadPerTaskExecutor()) {
      BufferAllocator a = tq.allocator();
      List<String> keys = List.of("k0", "k1", "k2");
      // Warm-up on a busy machine: a call may miss the short deadline; retry it.
      retrying(
          () -> {
            try (Batch data = rows(a, 3, 0)) {
              return tq.kv().batchPut(keys, P, data, null);
            }
          });
      BatchMeta written =
          retrying(
              () -> {
                try (Batch data = rows(a, 2, 1)) {
                  return tq.client().put(data, P);
                }
              });
      KvBatchMeta kvMeta =
          retrying(
              () -> {
                try (Batch data = rows(a, 1, 2)) {
                  return tq.kv().batchPut(List.of("k3"), P, data, null);
                }
              });
      long baselineBytes = a.allocatedBytes();
      long baselineBuffers = a.outstandingBuffers();

      List<String> names =
          List.of(
              "getMeta",
              "put",
              "getData",
              "kv.batchPut",
              "kv.batchGet",
              "kv.batchGet(x)",
              "kv.get",
              "kv.list",
              "kv.clear",
              "partitions");
      Map<String, Long> callsByKind = new TreeMap<>();
      Map<String, Long> codes = new TreeMap<>();
      List<Throwable> unchecked = new ArrayList<>();
      d.fuzzing(true);
      long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
      int counter = 0;
      while (System.nanoTime() < end) {
        // A few calls at once, so that deadlines overlap and replies interleave.
        List<Future<?>> futures = new ArrayList<>();
        List<String> ops = new ArrayList<>();
        for (int i = 0; i < PARALLEL; i++) {
          int op = random.nextInt(names.size());
          int salt = 10 + counter++;
          ops.add(names.get(op));
          futures.add(
              calls.submit(
                  () -> {
                    call(tq, a, op, salt, written, kvMeta, keys);
                    return null;
                  }));
        }
        for (int i = 0; i < futures.size(); i++) {
          Future<?> future = futures.get(i);
          try {
            future.get(DEADLINE.plus(HANG).toMillis(), TimeUnit.MILLISECONDS);
          } catch (TimeoutException e) {
            futures.forEach(f -> f.cancel(true));
            throw new AssertionError(
                ops.get(i) + " hung past its deadline " + DEADLINE + ", seed=" + seed);
          } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof TqException tqe && uncheckedCause(tqe) == null) {
              codes.merge(tqe.code().name(), 1L, Long::sum);
            } else {
              unchecked.add(cause);
            }
          }
          callsByKind.merge(ops.get(i), 1L, Long::sum);
        }
      }
      d.fuzzing(false);
      // Checked first: an unchecked exception usually also strands a buffer, and the leak wait
      // below
      // would otherwise report the symptom instead of the cause.
      if (!unchecked.isEmpty()) {
        AssertionError failure =
            new AssertionError(
                unchecked.size() + " calls ended with an unchecked exception, seed=" + seed);
        unchecked.stream().limit(5).forEach(failure::addSuppressed);
        throw failure;
      }

      // The same client objects work again through the now transparent proxies.
      int failedRoundTrips = roundTrip(tq, a, written);
      // Back to the baseline, give or take pooled connections (each holds one scratch buffer):
      // the pool dials more of its connections per peer once calls overlap. Closing the client
      // (leak policy THROW) then proves that nothing else is outstanding.
      Await.until(
          () ->
              a.allocatedBytes() - baselineBytes
                  == (a.outstandingBuffers() - baselineBuffers) * CONNECTION_SCRATCH_BYTES,
          "client allocator back to baseline "
              + baselineBytes
              + " bytes / "
              + baselineBuffers
              + " buffers, plus connection scratch (now "
              + a.allocatedBytes()
              + " / "
              + a.outstandingBuffers()
              + "), seed="
              + seed);
      Map<String, Map<String, Long>> mutations = new TreeMap<>();
      for (MutatingProxy p : d.proxies) {
        mutations.put(p.toString(), p.mutations());
      }
      System.out.println(
          "[client-fuzz] "
              + backend.configName()
              + ": seed="
              + seed
              + " calls="
              + callsByKind.values().stream().mapToLong(Long::longValue).sum()
              + " "
              + callsByKind
              + " failed round trips before recovery="
              + failedRoundTrips
              + " unchecked="
              + unchecked.size()
              + " leaks=0 error codes "
              + codes
              + " mutations "
              + mutations);
    }
  }

  /**
   * A programming-error exception inside a typed error (e.g. INTERNAL "unexpected failure" wrapping
   * an ArithmeticException a decoder let through), or null.
   */
  private static Throwable uncheckedCause(TqException e) {
    for (Throwable t = e.getCause(); t != null && t != t.getCause(); t = t.getCause()) {
      if (t instanceof ArithmeticException
          || t instanceof IndexOutOfBoundsException
          || t instanceof NullPointerException
          || t instanceof ClassCastException
          || t instanceof IllegalArgumentException
          || t instanceof IllegalStateException
          || t instanceof NegativeArraySizeException
          || t instanceof UnsupportedOperationException
          || t instanceof Error) {
        return t;
      }
    }
    return null;
  }

  private static <T> T retrying(java.util.function.Supplier<T> call) {
    for (int attempt = 1; ; attempt++) {
      try {
        return call.get();
      } catch (TqException e) {
        if (attempt == 5) {
          throw e;
        }
      }
    }
  }

  private static void call(
      TqClient tq,
      BufferAllocator a,
      int op,
      int salt,
      BatchMeta written,
      KvBatchMeta kvMeta,
      List<String> keys) {
    switch (op) {
      case 0 -> tq.client().getMeta(GetMetadataRequest.insert(P, List.of("x", "text"), 2));
      case 1 -> {
        try (Batch data = rows(a, 2, salt)) {
          tq.client().put(data, P);
        }
      }
      case 2 -> {
        try (Batch got = tq.client().getData(written)) {
          assertThat(got.rowCount()).isEqualTo(written.size());
        }
      }
      case 3 -> {
        try (Batch data = rows(a, 2, salt)) {
          tq.kv().batchPut(List.of("n" + salt, "m" + salt), P, data, null);
        }
      }
      case 4 -> {
        try (Batch got = tq.kv().batchGet(keys, P, null)) {
          assertThat(got.rowCount()).isEqualTo(keys.size());
        }
      }
      case 5 -> {
        try (Batch got = tq.kv().batchGet(keys, P, List.of("x"))) {
          assertThat(got.rowCount()).isEqualTo(keys.size());
        }
      }
      case 6 -> {
        try (Batch got = tq.kv().get(kvMeta, null)) {
          assertThat(got.rowCount()).isEqualTo(1);
        }
      }
      case 7 -> tq.kv().list(P);
      case 8 -> tq.kv().clear(List.of("n" + (salt - 1)), P);
      default -> tq.client().getPartitionList();
    }
  }

  /**
   * A correct round trip through the same client objects. Connections the proxies ended may still
   * be noticed by the first calls, so a few attempts may fail; then {@link #ROUND_TRIPS} in a row
   * must succeed, so that every pooled connection is used (a stalled one would fail them).
   *
   * @return the attempts that failed
   */
  private static int roundTrip(TqClient tq, BufferAllocator a, BatchMeta written) {
    TqException last = null;
    int failed = 0;
    int succeeded = 0;
    for (int attempt = 0; attempt < 20 && succeeded < ROUND_TRIPS; attempt++) {
      try (Batch data = rows(a, 2, 7);
          Batch x = data.selectFields("x")) {
        tq.kv().batchPut(List.of("final-0", "final-1"), P, data, null);
        try (Batch got = tq.kv().batchGet(List.of("final-0", "final-1"), P, List.of("x"))) {
          assertThat(got.contentEquals(x)).as("round trip after fuzzing").isTrue();
        }
        try (Batch got = tq.client().getData(written)) {
          assertThat(got.rowCount()).isEqualTo(written.size());
        }
        succeeded++;
      } catch (TqException e) {
        last = e;
        failed++;
        succeeded = 0;
      }
    }
    if (succeeded < ROUND_TRIPS) {
      throw new AssertionError(
          "no " + ROUND_TRIPS + " correct round trips in a row after fuzzing", last);
    }
    return failed;
  }
}
