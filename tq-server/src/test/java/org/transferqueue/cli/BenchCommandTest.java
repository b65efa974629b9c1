package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.transferqueue.server.bench.Baseline;
import org.transferqueue.server.bench.ChartReporter;
import org.transferqueue.server.bench.CsvReporter;
import org.transferqueue.server.bench.MemoryProbe;
import picocli.CommandLine;

class BenchCommandTest {
  private static final long GIB = 1L << 30;

  private record Run(int status, String out, String err) {}

  private static Run run(CommandLine commandLine, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    commandLine.setOut(new PrintWriter(out));
    commandLine.setErr(new PrintWriter(err));
    int status = commandLine.execute(args);
    return new Run(status, out.toString(), err.toString());
  }

  private static Run bench(MemoryProbe probe, String... args) {
    return run(new CommandLine(new BenchCommand(probe)), args);
  }

  @Test
  void shouldWriteEveryFigureWhenTinyRunsEndToEndOnSimpleStorage(@TempDir Path dir)
      throws IOException {
    Path json = dir.resolve("bench.json");
    Path csv = dir.resolve("bench.csv");
    Path png = dir.resolve("bench.png");
    Run run =
        run(
            TqCommand.newCommandLine(),
            "bench",
            "--preset=tiny",
            "--batch=16",
            "--fields=3",
            "--seq-len=64",
            "--iterations=2",
            "--backend=SimpleStorage",
            "--mode=embedded",
            "--json=" + json,
            "--csv=" + csv,
            "--chart=" + png);

    assertThat(run.status()).as(run.err()).isZero();
    assertThat(run.out())
        .contains("SimpleStorage/embedded")
        .contains("embedded baseline: memory copy");

    Map<String, Object> report = parseJson(json);
    Map<String, Object> config = map(report.get("configuration"));
    assertThat(config.get("sizes")).isEqualTo(List.of("custom"));
    assertThat(String.valueOf(config.get("command")))
        .startsWith("tq bench --preset=tiny --batch=16");
    assertThat(config.get("backends")).isEqualTo(List.of("SimpleStorage"));
    assertThat(config.get("modes")).isEqualTo(List.of("embedded"));
    assertThat(number(config.get("iterations"))).isEqualTo(2);
    assertThat(number(config.get("warmup"))).isEqualTo(3);
    assertThat(number(config.get("warmupMax"))).isEqualTo(1000);
    assertThat(config.get("complex")).isEqualTo(false);
    Map<String, Object> env = map(report.get("environment"));
    assertThat(env.get("jdk")).isEqualTo(System.getProperty("java.runtime.version"));
    assertThat(String.valueOf(env.get("os"))).startsWith(System.getProperty("os.name"));
    assertThat(number(env.get("cores"))).isEqualTo(Runtime.getRuntime().availableProcessors());
    assertThat(map(report.get("unavailableModes"))).isEmpty();

    List<Object> sizes = list(report.get("sizes"));
    assertThat(sizes).hasSize(1);
    Map<String, Object> size = map(sizes.getFirst());
    assertThat(number(size.get("batch"))).isEqualTo(16);
    assertThat(number(size.get("fields"))).isEqualTo(3);
    assertThat(number(size.get("seqLen"))).isEqualTo(64);
    double bytes = number(size.get("bytes"));
    assertThat(bytes).isEqualTo(16.0 * 3 * 64 * 4);
    Map<String, Object> baselines = map(size.get("baselines"));
    assertThat(baselines).containsOnlyKeys("embedded");
    Map<String, Object> baseline = map(baselines.get("embedded"));
    assertThat(baseline.get("kind")).isEqualTo("memory copy between pre-touched segments");
    double baselineGbPerSec = number(baseline.get("gbPerSec"));
    assertThat(baselineGbPerSec).isPositive();
    assertThat(list(baseline.get("seconds")))
        .hasSize(5)
        .allSatisfy(s -> assertThat(number(s)).isPositive());

    List<Object> results = list(size.get("results"));
    assertThat(results).hasSize(1);
    Map<String, Object> result = map(results.getFirst());
    assertThat(result.get("backend")).isEqualTo("SimpleStorage");
    assertThat(result.get("mode")).isEqualTo("embedded");
    assertThat(result.get("verified")).isEqualTo(true);
    Map<String, Object> mean = map(result.get("mean"));
    assertThat(mean).hasSize(13);
    mean.values().forEach(v -> assertThat(number(v)).isPositive());
    Map<String, Object> steady = map(result.get("steady"));
    assertThat(number(steady.get("fromIteration"))).isEqualTo(2);
    assertThat(steady).hasSize(6);
    steady.values().forEach(v -> assertThat(number(v)).isPositive());
    List<Object> iterations = list(result.get("iterations"));
    assertThat(iterations).hasSize(2);
    List<Object> warmup = list(result.get("warmup"));
    // --warmup auto: at least 3, then until compilation took at most 5% of the CPU of the last 10
    // (or 1000 iterations, or 60 s): it never runs past the first window that settled.
    assertThat(warmup).hasSizeGreaterThanOrEqualTo(3);
    assertThat(number(result.get("warmupIterations"))).isEqualTo(warmup.size());
    assertThat(number(map(warmup.getFirst()).get("putSeconds"))).isPositive();
    double[] compiler = new double[warmup.size()];
    double[] all = new double[warmup.size()];
    for (int i = 0; i < warmup.size(); i++) {
      Map<String, Object> it = map(warmup.get(i));
      compiler[i] = number(it.get("compilerCpuSeconds"));
      all[i] = number(it.get("cpuSeconds"));
      assertThat(compiler[i]).isNotNegative().isLessThanOrEqualTo(all[i]);
    }
    for (int end = 10; end < warmup.size(); end++) {
      double c = 0;
      double a = 0;
      for (int i = end - 10; i < end; i++) {
        c += compiler[i];
        a += all[i];
      }
      assertThat(c).as("window ending at warm-up %d had settled", end).isGreaterThan(0.05 * a);
    }
    assertThat(result.get("warmupSettled")).isInstanceOf(Boolean.class);
    Map<String, Object> cpu = map(result.get("cpu"));
    assertThat(number(cpu.get("putSeconds"))).isNotNegative();
    assertThat(number(cpu.get("getSeconds"))).isNotNegative();
    assertThat(run.out()).contains("CPU s per batch");
    assertThat(number(steady.get("totalGbPerSec")))
        .isCloseTo(
            number(map(iterations.get(1)).get("totalGbPerSec")),
            relative(number(steady.get("totalGbPerSec"))));
    for (Object item : iterations) {
      Map<String, Object> it = map(item);
      timingsAndFigures(it).forEach(v -> assertThat(number(v)).isPositive());
      assertThat(number(it.get("putCpuSeconds"))).isNotNegative();
      assertThat(number(it.get("baselineGbPerSec")))
          .isCloseTo(baselineGbPerSec, within(1e-6 * baselineGbPerSec));
      double put = number(it.get("putSeconds"));
      double get = number(it.get("getSeconds"));
      assertThat(number(it.get("putGbPerSec")))
          .isCloseTo(bytes / 1e9 / put, relative(bytes / 1e9 / put));
      assertThat(number(it.get("totalGbPerSec")))
          .isCloseTo(2 * bytes / 1e9 / (put + get), relative(2 * bytes / 1e9 / (put + get)));
      assertThat(number(it.get("totalGbps")))
          .isCloseTo(bytes / GIB * 16 / (put + get), relative(bytes / GIB * 16 / (put + get)));
      for (String kind : List.of("put", "get", "total")) {
        double ratio = number(it.get(kind + "Ratio"));
        double expected = number(it.get(kind + "GbPerSec")) / baselineGbPerSec;
        assertThat(ratio).as(kind + "Ratio").isCloseTo(expected, relative(expected));
      }
    }

    List<String> lines = Files.readAllLines(csv, StandardCharsets.UTF_8);
    assertThat(lines.getFirst()).isEqualTo(CsvReporter.HEADER);
    assertThat(lines.getFirst())
        .startsWith(
            "backend,device,total_data_size_gb,put_time,get_time,put_gbit_per_sec,"
                + "get_gbit_per_sec,total_gbit_per_sec");
    assertThat(lines).hasSize(3);
    for (String line : lines.subList(1, 3)) {
      String[] cells = line.split(",");
      assertThat(cells).hasSize(18);
      assertThat(cells[0]).isEqualTo("SimpleStorage");
      assertThat(cells[1]).isEqualTo("cpu");
      assertThat(Double.parseDouble(cells[2])).isCloseTo(bytes / GIB, relative(bytes / GIB));
      for (int c : new int[] {3, 4, 5, 6, 7, 11, 12, 13, 14, 15, 16, 17}) {
        assertThat(Double.parseDouble(cells[c])).as("column %d of %s", c, line).isPositive();
      }
      double put = Double.parseDouble(cells[3]);
      double get = Double.parseDouble(cells[4]);
      double total = Double.parseDouble(cells[7]);
      assertThat(total).isCloseTo(bytes / GIB * 16 / (put + get), relative(total));
      assertThat(cells[8]).isEqualTo("custom");
      assertThat(cells[9]).isEqualTo("embedded");
      assertThat(Double.parseDouble(cells[14]))
          .isCloseTo(baselineGbPerSec, relative(baselineGbPerSec));
      double ratio = Double.parseDouble(cells[13]) / Double.parseDouble(cells[14]);
      assertThat(Double.parseDouble(cells[17])).isCloseTo(ratio, relative(ratio));
    }

    BufferedImage image = ImageIO.read(png.toFile());
    assertThat(image).as("a readable PNG").isNotNull();
    assertThat(image.getWidth()).isEqualTo(ChartReporter.WIDTH);
    assertThat(image.getHeight()).isEqualTo(ChartReporter.HEIGHT);
  }

  @Test
  void shouldMeasureBothBackendsOverLoopbackAndSharedMemoryAgainstTheirBaselinesWhenModeAll(
      @TempDir Path dir) throws IOException {
    Path json = dir.resolve("loopback.json");
    Run run =
        bench(
            MemoryProbe.system(),
            "--preset=tiny",
            "--batch=16",
            "--fields=3",
            "--seq-len=64",
            "--iterations=2",
            "--warmup=2",
            "--backend=all",
            "--mode=all",
            "--json=" + json);

    assertThat(run.status()).as(run.err()).isZero();
    assertThat(run.out())
        .contains("SimpleStorage/loopback")
        .contains("MooncakeStore/loopback")
        .contains("loopback baseline: loopback socket")
        .contains("SimpleStorage/shm")
        .contains("MooncakeStore/shm")
        .contains("shm baseline: memory copy")
        .contains("SimpleStorage shm vs tcp")
        .contains("MooncakeStore shm vs tcp");
    Map<String, Object> report = parseJson(json);
    assertThat(map(report.get("configuration")).get("modes"))
        .isEqualTo(List.of("embedded", "loopback", "shm"));
    Map<String, Object> size = map(list(report.get("sizes")).getFirst());
    double bytes = number(size.get("bytes"));
    Map<String, Object> baselines = map(size.get("baselines"));
    assertThat(baselines).containsOnlyKeys("embedded", "loopback", "shm");
    assertThat(String.valueOf(map(baselines.get("shm")).get("kind")))
        .isEqualTo(Baseline.MEMORY_COPY);
    Map<String, Object> loopback = map(baselines.get("loopback"));
    assertThat(String.valueOf(loopback.get("kind"))).startsWith("loopback socket");
    assertThat(number(loopback.get("bytes"))).isEqualTo(bytes);
    double baselineGbPerSec = number(loopback.get("gbPerSec"));
    assertThat(baselineGbPerSec).isPositive();
    assertThat(list(loopback.get("seconds")))
        .hasSize(5)
        .allSatisfy(s -> assertThat(number(s)).isPositive());
    assertThat(list(loopback.get("cpuSeconds")))
        .hasSize(5)
        .allSatisfy(s -> assertThat(number(s)).isNotNegative());

    List<Map<String, Object>> results =
        list(size.get("results")).stream().map(BenchCommandTest::map).toList();
    assertThat(results)
        .extracting(r -> r.get("backend") + "/" + r.get("mode"))
        .containsExactly(
            "SimpleStorage/embedded",
            "MooncakeStore/embedded",
            "SimpleStorage/loopback",
            "MooncakeStore/loopback",
            "SimpleStorage/shm",
            "MooncakeStore/shm");
    assertThat(results).allSatisfy(r -> assertThat(list(r.get("warmup"))).hasSize(2));
    for (Map<String, Object> result : results.subList(2, 6)) {
      assertThat(result.get("verified")).isEqualTo(true);
      Map<String, Object> mean = map(result.get("mean"));
      mean.values().forEach(v -> assertThat(number(v)).isPositive());
      Map<String, Object> heap = map(result.get("heapBytesPerMib"));
      assertThat(heap)
          .containsKeys(
              "clientPut",
              "serverPut",
              "clientGet",
              "serverGet",
              "controllerPut",
              "storageServerPut",
              "controllerGet",
              "storageServerGet");
      // The controller is one of the servers: its part never exceeds their sum.
      assertThat(number(heap.get("controllerPut")))
          .isLessThanOrEqualTo(number(heap.get("serverPut")));
      heap.values().forEach(v -> assertThat(number(v)).isPositive());
      for (Object item : list(result.get("iterations"))) {
        Map<String, Object> it = map(item);
        timingsAndFigures(it).forEach(v -> assertThat(number(v)).isPositive());
        assertThat(it)
            .containsKeys(
                "clientPutHeapBytes",
                "serverPutHeapBytes",
                "clientGetHeapBytes",
                "serverGetHeapBytes");
        assertThat(number(it.get("putCpuSeconds"))).isNotNegative();
        assertThat(number(it.get("getCpuSeconds"))).isNotNegative();
        double own = number(map(result.get("baseline")).get("gbPerSec"));
        assertThat(own).isPositive();
        assertThat(number(it.get("baselineGbPerSec"))).isCloseTo(own, within(1e-6 * own));
        double expected = number(it.get("totalGbPerSec")) / own;
        assertThat(number(it.get("totalRatio"))).isCloseTo(expected, relative(expected));
      }
    }
    // Each backend's shm case next to its TCP case, both against the memory copy.
    List<Map<String, Object>> transports =
        list(size.get("shmVsTcp")).stream().map(BenchCommandTest::map).toList();
    assertThat(transports)
        .extracting(t -> t.get("backend"))
        .containsExactly("SimpleStorage", "MooncakeStore");
    for (Map<String, Object> t : transports) {
      Map<String, Object> shm =
          results.stream()
              .filter(r -> r.get("backend").equals(t.get("backend")) && r.get("mode").equals("shm"))
              .findFirst()
              .orElseThrow();
      Map<String, Object> tcp =
          results.stream()
              .filter(
                  r ->
                      r.get("backend").equals(t.get("backend")) && r.get("mode").equals("loopback"))
              .findFirst()
              .orElseThrow();
      double copy = number(t.get("memoryCopyGbPerSec"));
      assertThat(copy).isEqualTo(number(map(shm.get("baseline")).get("gbPerSec")));
      double shmPut = number(map(shm.get("mean")).get("putGbPerSec"));
      double tcpPut = number(map(tcp.get("mean")).get("putGbPerSec"));
      double shmGet = number(map(shm.get("mean")).get("getGbPerSec"));
      double tcpGet = number(map(tcp.get("mean")).get("getGbPerSec"));
      assertThat(number(t.get("shmPutToMemoryCopy")))
          .isCloseTo(shmPut / copy, relative(shmPut / copy));
      assertThat(number(t.get("tcpGetToMemoryCopy")))
          .isCloseTo(tcpGet / copy, relative(tcpGet / copy));
      assertThat(number(t.get("putShmToTcp")))
          .isCloseTo(shmPut / tcpPut, relative(shmPut / tcpPut));
      assertThat(number(t.get("getShmToTcp")))
          .isCloseTo(shmGet / tcpGet, relative(shmGet / tcpGet));
      for (String key :
          List.of(
              "shmPutCpuSeconds",
              "shmGetCpuSeconds",
              "tcpPutCpuSeconds",
              "tcpGetCpuSeconds",
              "memoryCopyCpuSeconds")) {
        assertThat(number(t.get(key))).as(key).isNotNegative();
      }
      assertThat(t).containsKeys("putCpuShmToTcp", "getCpuShmToTcp", "shmGetToMemoryCopy");
    }
  }

  @Test
  void shouldRunEveryBackendWhenAll(@TempDir Path dir) throws IOException {
    Path json = dir.resolve("all.json");
    Run run =
        bench(
            MemoryProbe.system(),
            "--preset=tiny",
            "--batch=8",
            "--fields=3",
            "--seq-len=32",
            "--iterations=1",
            "--complex",
            "--backend=all",
            "--json=" + json);
    assertThat(run.status()).as(run.err()).isZero();
    assertThat(run.out()).contains("SimpleStorage/embedded").contains("MooncakeStore/embedded");
    Map<String, Object> size = map(list(parseJson(json).get("sizes")).getFirst());
    assertThat(size.get("complex")).isEqualTo(true);
    List<Object> results = list(size.get("results"));
    assertThat(results)
        .extracting(r -> map(r).get("backend"))
        .containsExactly("SimpleStorage", "MooncakeStore");
    assertThat(results).allSatisfy(r -> assertThat(map(r).get("verified")).isEqualTo(true));
  }

  @Test
  void shouldRejectUnknownBackendNamingTheChoices() {
    Run run = bench(MemoryProbe.fixed(64 * GIB, 64 * GIB), "--backend=Redis");
    assertThat(run.status()).isEqualTo(2);
    assertThat(run.err())
        .contains("unknown backend 'Redis'")
        .contains("SimpleStorage")
        .contains("MooncakeStore");
  }

  @Test
  void shouldRejectUnknownPresetAndMode() {
    MemoryProbe plenty = MemoryProbe.fixed(64 * GIB, 64 * GIB);
    Run preset = bench(plenty, "--preset=huge");
    assertThat(preset.status()).isEqualTo(2);
    assertThat(preset.err()).contains("unknown preset 'huge'");
    Run mode = bench(plenty, "--mode=remote");
    assertThat(mode.status()).isEqualTo(2);
    assertThat(mode.err()).contains("unknown mode 'remote'");
    Run iterations = bench(plenty, "--preset=tiny", "--iterations=0");
    assertThat(iterations.status()).isEqualTo(2);
    assertThat(iterations.err()).contains("iterations=0");
    Run warmup = bench(plenty, "--preset=tiny", "--warmup=soon");
    assertThat(warmup.status()).isEqualTo(2);
    assertThat(warmup.err()).contains("warmup='soon'");
    Run negative = bench(plenty, "--preset=tiny", "--warmup=-1");
    assertThat(negative.status()).isEqualTo(2);
    assertThat(negative.err()).contains("warmup=-1");
  }

  @Test
  void shouldRefuseMediumWhenPhysicalMemoryIsShort() {
    Run run = bench(MemoryProbe.fixed(12 * GIB, 16 * GIB), "--preset=medium");
    assertThat(run.status()).isEqualTo(BenchCommand.EXIT_MEMORY);
    assertThat(run.err())
        .contains("refused")
        .contains("medium (4096x15x32768)")
        .contains("7.50 GiB per batch")
        .contains("12.00 GiB of physical memory is available");
    assertThat(run.out()).doesNotContain("backend/mode");
  }

  @Test
  void shouldRefuseWhenTheConfiguredAllocatorLimitIsTooSmall(@TempDir Path dir) throws IOException {
    Path config = dir.resolve("tq.yaml");
    Files.writeString(config, "memory:\n  limit_bytes: 1048576\n");
    Run run = bench(MemoryProbe.fixed(64 * GIB, 64 * GIB), "--preset=tiny", "--config=" + config);
    assertThat(run.status()).isEqualTo(BenchCommand.EXIT_MEMORY);
    assertThat(run.err()).contains("memory.limit_bytes=1048576");
  }

  @Test
  void shouldRejectAnOutputInAMissingDirectoryBeforeRunning(@TempDir Path dir) {
    Run run =
        bench(
            MemoryProbe.fixed(64 * GIB, 64 * GIB),
            "--preset=tiny",
            "--json=" + dir.resolve("missing").resolve("bench.json"));
    assertThat(run.status()).isEqualTo(2);
    assertThat(run.err()).contains("--json").contains("does not exist or is not writable");
    assertThat(run.out()).doesNotContain("backend/mode");
  }

  @Test
  void shouldBeListedInTqHelp() {
    Run run = run(TqCommand.newCommandLine(), "--help");
    assertThat(run.out()).contains("bench");
  }

  private static org.assertj.core.data.Offset<Double> relative(double value) {
    return within(Math.abs(value) * 1e-6 + 1e-12);
  }

  private static Map<String, Object> parseJson(Path file) throws IOException {
    Object parsed =
        new Load(LoadSettings.builder().build())
            .loadFromString(Files.readString(file, StandardCharsets.UTF_8));
    return map(parsed);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object value) {
    assertThat(value).isInstanceOf(Map.class);
    return (Map<String, Object>) value;
  }

  @SuppressWarnings("unchecked")
  private static List<Object> list(Object value) {
    assertThat(value).isInstanceOf(List.class);
    return (List<Object>) value;
  }

  private static double number(Object value) {
    assertThat(value).isInstanceOf(Number.class);
    return ((Number) value).doubleValue();
  }

  /** An iteration's values other than its CPU times (which may be zero, see CpuMeter). */
  private static java.util.Collection<Object> timingsAndFigures(Map<String, Object> iteration) {
    Map<String, Object> rest = new java.util.LinkedHashMap<>(iteration);
    rest.remove("putCpuSeconds");
    rest.remove("getCpuSeconds");
    rest.remove("cpuSeconds");
    rest.remove("compilerCpuSeconds");
    return rest.values();
  }
}
