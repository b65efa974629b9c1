package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.transferqueue.TqException;
import org.transferqueue.config.HostPort;
import org.transferqueue.controller.ControllerApi;
import org.transferqueue.controller.ControllerWorkload;
import org.transferqueue.controller.ControllerWorkload.Sample;
import org.transferqueue.controller.FetchMode;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.remote.controller.RemoteController;
import org.transferqueue.sampler.SamplingConfig;
import org.transferqueue.testing.Await;
import org.transferqueue.testing.Seeds;
import org.transferqueue.transport.TransportClient;
import org.transferqueue.transport.TransportConfig;

/**
 * {@code tq controller} with {@code controller.durability: journal} as a child JVM, killed with
 * SIGKILL at a random point of a seeded workload (a request may be in flight) and restarted on the
 * same journal directory, several times per seed: afterwards every acknowledged allocation,
 * production, consumption and clear is there. Acknowledged samples are still allocated at their
 * generation, produced ones are produced, a task's consumed samples are consumed and fetching again
 * never hands them to the task, cleared ones stay gone. The default run takes one seed; the slow
 * profile ({@code -Pslow}) many.
 */
@ExtendWith(LeakCheckExtension.class)
class ControllerJournalKillTest {
  private static final Duration CALL = Duration.ofSeconds(5);

  @Test
  @Timeout(value = 240, unit = TimeUnit.SECONDS)
  void shouldKeepEveryAcknowledgedChangeAcrossKills(@TempDir Path dir, BufferAllocator allocator) {
    runSeed(Seeds.seed(), dir, allocator, 2, "fsync");
  }

  @Test
  @Tag("slow")
  @Timeout(value = 1800, unit = TimeUnit.SECONDS)
  void shouldKeepEveryAcknowledgedChangeAcrossKillsForManySeeds(
      @TempDir Path dir, BufferAllocator allocator) {
    long base = Seeds.seed();
    for (int i = 0; i < 12; i++) {
      runSeed(base + i, dir.resolve("seed" + i), allocator, 3, i % 2 == 0 ? "fsync" : "interval");
    }
  }

  private static void runSeed(
      long seed, Path dir, BufferAllocator allocator, int kills, String sync) {
    Random random = new Random(seed);
    HostPort address = new HostPort("127.0.0.1", freePort());
    Path config = writeConfig(dir, address, sync);
    TransportConfig transport =
        TransportConfig.builder()
            .connectTimeout(Duration.ofSeconds(2))
            .defaultCallTimeout(CALL)
            .build();
    RoleProcess controller = start(dir, config);
    try (TransportClient client = new TransportClient(transport, allocator)) {
      ControllerApi api = new RemoteController(client, address, CALL, Duration.ofMillis(100));
      ControllerWorkload workload = new ControllerWorkload(seed, api, false);
      for (int kill = 0; kill < kills; kill++) {
        int steps = 40 + random.nextInt(400);
        runUntilKilled(workload, controller, steps);
        controller.close();
        controller = start(dir, config);
        checkAcknowledged(api, workload, "seed=" + seed + " after kill " + (kill + 1));
      }
      System.out.println(
          "[faults] controller journal seed="
              + seed
              + " sync="
              + sync
              + ": "
              + kills
              + " kills, acknowledged produced="
              + workload.produced.size()
              + " consumed="
              + workload.consumed.values().stream().mapToInt(Set::size).sum()
              + " cleared="
              + workload.cleared.size()
              + ", none lost");
    } finally {
      controller.close();
    }
  }

  /**
   * Runs the workload on its own thread; once it has made {@code steps} steps, kills the controller
   * with SIGKILL while the workload keeps sending (so a request is usually in flight), then waits
   * for the workload to fail.
   */
  private static void runUntilKilled(
      ControllerWorkload workload, RoleProcess controller, int steps) {
    AtomicInteger done = new AtomicInteger();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread runner =
        Thread.ofVirtual()
            .start(
                () -> {
                  try {
                    while (true) {
                      workload.step();
                      done.incrementAndGet();
                    }
                  } catch (TqException e) {
                    failure.set(e);
                  } catch (RuntimeException | Error e) {
                    failure.set(e);
                  }
                });
    Await.until(
        () -> done.get() >= steps || failure.get() != null, "the workload's " + steps + " steps");
    assertThat(failure.get()).as("workload before the kill").isNull();
    controller.kill();
    Await.until(() -> !runner.isAlive(), "the workload to fail on the killed controller");
    assertThat(failure.get()).isInstanceOf(TqException.class);
  }

  private static RoleProcess start(Path dir, Path config) {
    RoleProcess controller =
        RoleProcess.tq("controller", dir, "controller", "--config", config.toString());
    controller.awaitListening();
    return controller;
  }

  /** Every fact the workload saw acknowledged holds in the restarted controller. */
  static void checkAcknowledged(ControllerApi api, ControllerWorkload workload, String what) {
    Set<Sample> allocated = new HashSet<>(workload.allocated);
    allocated.removeAll(workload.cleared);
    allocated.removeAll(workload.uncertain);
    for (Sample s : allocated) {
      Optional<Long> generation = currentGeneration(api, s);
      assertThat(generation).as(what + ": allocated " + s).contains(s.generation());
    }
    for (Sample s : workload.produced) {
      if (workload.cleared.contains(s) || workload.uncertain.contains(s)) {
        continue;
      }
      BatchMeta meta = api.getSampleMeta(s.partition(), List.of(s.index()), List.of("a"));
      assertThat(meta.size()).as(what + ": produced " + s).isEqualTo(1);
      assertThat(meta.generationArray()[0]).as(what + ": produced " + s).isEqualTo(s.generation());
      // A sample marked for clearing reads as not produced: no fetch may hand it out.
      assertThat(meta.isProduced(0))
          .as(what + ": produced " + s)
          .isEqualTo(!workload.marked.contains(s));
    }
    for (Sample s : workload.cleared) {
      assertThat(currentGeneration(api, s))
          .as(what + ": cleared " + s)
          .isNotEqualTo(Optional.of(s.generation()));
    }
    for (Map.Entry<String, Set<Sample>> e : workload.consumed.entrySet()) {
      String task = e.getKey();
      for (Sample s : e.getValue()) {
        if (!currentGeneration(api, s).equals(Optional.of(s.generation()))) {
          continue;
        }
        assertThat(
                api.getConsumptionStatus(s.partition(), task)
                    .orElseThrow()
                    .consumed()
                    .contains(s.index()))
            .as(what + ": consumed by " + task + " " + s)
            .isTrue();
      }
      for (String partition : List.of("p0", "p1", "p2")) {
        List<Sample> fetched = fetchAll(api, partition, task);
        assertThat(fetched)
            .as(what + ": fetched again by " + task + " in " + partition)
            .doesNotContainAnyElementsOf(e.getValue());
        e.getValue().addAll(fetched);
      }
    }
  }

  /** The generation of the sample now at {@code s}'s index, when it is active in its partition. */
  private static Optional<Long> currentGeneration(ControllerApi api, Sample s) {
    BatchMeta meta = api.getSampleMeta(s.partition(), List.of(s.index()), List.of());
    return meta.size() == 0 ? Optional.empty() : Optional.of(meta.generationArray()[0]);
  }

  /** Fetches until nothing is ready for the task; what it fetched the task has consumed. */
  private static List<Sample> fetchAll(ControllerApi api, String partition, String task) {
    List<Sample> out = new ArrayList<>();
    for (int i = 0; i < 10_000; i++) {
      Optional<BatchMeta> meta =
          api.tryGetMetadata(
              new GetMetadataRequest(
                  FetchMode.FETCH,
                  partition,
                  List.of("a"),
                  task,
                  16,
                  SamplingConfig.NONE,
                  null,
                  null));
      if (meta.isEmpty() || meta.get().size() == 0) {
        return out;
      }
      long[] indexes = meta.get().globalIndexArray();
      long[] generations = meta.get().generationArray();
      for (int j = 0; j < indexes.length; j++) {
        out.add(new Sample(partition, indexes[j], generations[j]));
      }
    }
    return out;
  }

  private static Path writeConfig(Path dir, HostPort address, String sync) {
    String yaml =
        "controller:\n"
            + "  polling_mode: true\n"
            + "  durability: journal\n"
            + "durability:\n"
            + "  journal_dir: \""
            + dir.resolve("journal")
            + "\"\n"
            + "  sync: "
            + sync
            + "\n"
            + "  segment_bytes: 65536\n"
            + "  max_bytes: 16777216\n"
            + "network:\n"
            + "  bind_host: 127.0.0.1\n"
            + "  controller_address: \""
            + address
            + "\"\n"
            + "  connect_timeout: 2s\n";
    try {
      Files.createDirectories(dir);
      return Files.writeString(dir.resolve("controller.yaml"), yaml, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      socket.setReuseAddress(true);
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
