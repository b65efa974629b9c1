package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.transferqueue.cli.RunningSystem.Result;
import org.transferqueue.client.TqClient;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.server.config.TqConfigs;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;

/** {@code tq kv put|get|list|clear} in-process against servers on loopback ports. */
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class KvCommandTest {
  private RunningSystem system;
  private BufferAllocator allocator;

  @BeforeEach
  void start(BufferAllocator allocator, @TempDir Path dir) {
    system = new RunningSystem(allocator, dir, 2);
    this.allocator = allocator;
  }

  @AfterEach
  void stop() {
    system.close();
  }

  private Result ok(String... args) {
    Result result = system.tq(args);
    assertThat(result.status())
        .as("tq %s: out=%s err=%s", String.join(" ", args), result.out(), result.err())
        .isZero();
    assertThat(result.err()).isEmpty();
    return result;
  }

  private Result fails(String... args) {
    Result result = system.tq(args);
    assertThat(result.status()).as("tq %s: out=%s", String.join(" ", args), result.out()).isOne();
    assertThat(result.out()).isEmpty();
    assertThat(result.err().lines().toList()).as("one error line").hasSize(1);
    return result;
  }

  @Test
  void shouldPutTensorsAndValuesAndGetThemBackAsTableAndJson() {
    Result put =
        ok(
            "kv",
            "put",
            "--partition",
            "train",
            "--key",
            "k1",
            "input_ids=int64:[1,2,3]",
            "x=float32:[[1,2.5],[3,4]]",
            "flag=bool:[true,false]",
            "note=\"hello\"",
            "meta={\"a\":1,\"b\":[true,null]}",
            "--tag",
            "score=0.5",
            "--tag",
            "status=\"done\"");
    assertThat(put.out())
        .isEqualTo(
            "put key 'k1' in partition 'train': fields [flag, input_ids, meta, note, x],"
                + " tags {\"score\":0.5,\"status\":\"done\"}\n");

    Result table = ok("kv", "get", "--partition", "train", "--key", "k1");
    assertThat(table.out().lines().toList())
        .containsExactly(
            "KEY  FIELD      VALUE",
            "k1   flag       bool[2] [true,false]",
            "k1   input_ids  int64[3] [1,2,3]",
            "k1   meta       {\"a\":1,\"b\":[true,null]}",
            "k1   note       \"hello\"",
            "k1   x          float32[2x2] [[1.0,2.5],[3.0,4.0]]");

    Result json = ok("kv", "get", "--partition", "train", "--key", "k1", "--field", "x", "--json");
    assertThat(json.out())
        .isEqualTo(
            "{\"partition\":\"train\",\"keys\":{\"k1\":{\"x\":"
                + "{\"dtype\":\"float32\",\"shape\":[2,2],\"data\":[[1.0,2.5],[3.0,4.0]]}}}}\n");
  }

  @Test
  void shouldGetEachKeysOwnFieldsInRequestOrder() {
    ok("kv", "put", "--partition", "p", "--key", "a", "n=int32:[1]", "extra=\"x\"");
    ok("kv", "put", "--partition", "p", "--key", "b", "n=int32:[2]");
    ok("kv", "put", "--partition", "p", "--key", "c", "--tag", "only=\"tags\"");
    Result json =
        ok("kv", "get", "--partition", "p", "--key", "b", "--key", "a", "--key", "c", "--json");
    assertThat(json.out())
        .isEqualTo(
            "{\"partition\":\"p\",\"keys\":{"
                + "\"b\":{\"n\":{\"dtype\":\"int32\",\"shape\":[1],\"data\":[2]}},"
                + "\"a\":{\"extra\":\"x\","
                + "\"n\":{\"dtype\":\"int32\",\"shape\":[1],\"data\":[1]}},"
                + "\"c\":{}}}\n");
    assertThat(ok("kv", "get", "--partition", "p", "--key", "c", "--key", "b").out().lines())
        .containsExactly(
            "KEY  FIELD  VALUE", "c    -      (no fields)", "b    n      int32[1] [2]");
    // An explicit field must exist for every key.
    assertThat(
            fails("kv", "get", "--partition", "p", "--key", "a", "--key", "b", "--field", "extra")
                .err())
        .startsWith("tq kv get: error: fields [extra] are not produced");
    assertThat(fails("kv", "get", "--partition", "p", "--key", "a", "--key", "a").err())
        .isEqualTo("tq kv get: error: key 'a' is given more than once\n");
  }

  @Test
  void shouldListPartitionsKeysAndTags() {
    ok("kv", "put", "--partition", "train", "--key", "k1", "v=1", "--tag", "score=0.5");
    ok("kv", "put", "--partition", "train", "--key", "k2", "v=2");
    ok("kv", "put", "--partition", "eval", "--key", "e1", "--tag", "ok=true");

    Result table = ok("kv", "list");
    assertThat(table.out().lines().toList())
        .containsExactly(
            "PARTITION  KEY  TAGS",
            "train      k1   {\"score\":0.5}",
            "train      k2   {}",
            "eval       e1   {\"ok\":true}");
    assertThat(ok("kv", "list", "--partition", "eval", "--json").out())
        .isEqualTo("{\"eval\":{\"e1\":{\"ok\":true}}}\n");
  }

  @Test
  void shouldClearKeysWithTheirDataAndTags() {
    ok("kv", "put", "--partition", "p", "--key", "a", "v=int64:[1]", "--tag", "t=1");
    ok("kv", "put", "--partition", "p", "--key", "b", "v=int64:[2]");
    ok("kv", "put", "--partition", "p", "--key", "c", "v=int64:[3]");

    assertThat(ok("kv", "clear", "--partition", "p", "--key", "a", "--key", "c").out())
        .isEqualTo("cleared 2 keys from partition 'p': [a, c]\n");

    assertThat(ok("kv", "list", "--json").out()).isEqualTo("{\"p\":{\"b\":{}}}\n");
    assertThat(ok("kv", "clear", "--partition", "p", "--key", "b", "--json").out())
        .isEqualTo("{\"partition\":\"p\",\"cleared\":[\"b\"]}\n");
    assertThat(ok("kv", "put", "--partition", "p", "--key", "b", "v=true", "--json").out())
        .isEqualTo("{\"partition\":\"p\",\"key\":\"b\",\"fields\":[\"v\"],\"tags\":{}}\n");
    assertThat(fails("kv", "get", "--partition", "p", "--key", "a").err())
        .isEqualTo("tq kv get: error: keys not found in partition 'p': [a]\n");
    assertThat(system.units).allMatch(u -> u.stats().samples() <= 1, "cleared cells are gone");
    assertThat(system.units.stream().mapToLong(u -> u.stats().samples()).sum()).isEqualTo(1);
  }

  @Test
  void shouldFailWithOneLineNamingMissingKeysFieldsAndPartitions() {
    ok("kv", "put", "--partition", "p", "--key", "a", "v=int64:[1]");

    assertThat(
            fails("kv", "get", "--partition", "p", "--key", "a", "--key", "x", "--key", "y").err())
        .isEqualTo("tq kv get: error: keys not found in partition 'p': [x, y]\n");
    assertThat(fails("kv", "get", "--partition", "p", "--key", "a", "--field", "w").err())
        .startsWith("tq kv get: error: fields [w] are not produced")
        .contains("(available: [v])");
    assertThat(fails("kv", "get", "--partition", "nope", "--key", "a").err())
        .isEqualTo("tq kv get: error: unknown partition 'nope' (partitions: [p])\n");
    assertThat(fails("kv", "list", "--partition", "nope").err())
        .isEqualTo("tq kv list: error: unknown partition 'nope' (partitions: [p])\n");
    assertThat(fails("kv", "clear", "--partition", "p", "--key", "a", "--key", "z").err())
        .isEqualTo("tq kv clear: error: keys not found in partition 'p': [z]\n");
    // The rejected clear removed nothing.
    assertThat(ok("kv", "list", "--json").out()).isEqualTo("{\"p\":{\"a\":{}}}\n");
  }

  @Test
  void shouldPrintTensorsNestedInObjectValuesAsTheirValues() {
    try (TqClient tq = TqClient.connect(TqConfigs.load(system.config));
        Tensor scalar = Tensor.ofDoubles(allocator, DType.FLOAT64, new double[] {1.5});
        Tensor ids = Tensor.ofLongs(allocator, DType.INT32, new long[] {1, 2, 3, 4}, 2, 2)) {
      Map<String, Object> meta = new LinkedHashMap<>();
      meta.put("score", scalar);
      meta.put("steps", Arrays.asList(ids, null, "x"));
      tq.kv().put("k", "p", Map.of("meta", meta), null);
    }
    String nested =
        "{\"score\":{\"dtype\":\"float64\",\"shape\":[],\"data\":1.5},"
            + "\"steps\":[{\"dtype\":\"int32\",\"shape\":[2,2],\"data\":[[1,2],[3,4]]},"
            + "null,\"x\"]}";
    assertThat(ok("kv", "get", "--partition", "p", "--key", "k", "--json").out())
        .isEqualTo("{\"partition\":\"p\",\"keys\":{\"k\":{\"meta\":" + nested + "}}}\n");
    assertThat(ok("kv", "get", "--partition", "p", "--key", "k").out().lines())
        .containsExactly("KEY  FIELD  VALUE", "k    meta   " + nested);
  }

  @Test
  void shouldRunThePutExampleOfTheHelpAsAShellTypesIt() throws IOException, InterruptedException {
    String help = ok("kv", "put", "--help").out();
    int start = help.indexOf("tq kv put --config");
    assertThat(start).as("an example in: %s", help).isNotNegative();
    // The example's lines up to the first one that does not continue with a backslash.
    String example = help.substring(start).split("(?<!\\\\)\n", 2)[0];
    // Split the example exactly as bash does, then run it against the running system.
    Process bash =
        new ProcessBuilder("bash", "-c", "printf '%s\\0' " + example.substring("tq ".length()))
            .redirectErrorStream(true)
            .start();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    bash.getInputStream().transferTo(bytes);
    assertThat(bash.waitFor()).isZero();
    List<String> args =
        new ArrayList<>(Arrays.asList(bytes.toString(StandardCharsets.UTF_8).split("\0")));
    // The example's --config names a file of its own; the running system's is appended.
    int config = args.indexOf("--config");
    args.remove(config + 1);
    args.remove(config);
    ok(args.toArray(String[]::new));
    assertThat(ok("kv", "get", "--partition", "train", "--key", "k1", "--field", "note").out())
        .contains("\"hello\"");
  }

  @Test
  void shouldRejectBadValuesWithTypedErrorsAndStoreNothing() {
    List<String[]> cases =
        List.of(
            new String[] {"x=float33:[1]", "unknown dtype 'float33'"},
            new String[] {"x=int64:[[1,2],[3]]", "ragged array [[1,2],[3]]"},
            new String[] {"x=int8:[1,300]", "value 300 is out of range for int8"},
            new String[] {"x=uint8:[-1]", "value -1 is out of range for uint8"},
            new String[] {"x=int64:[1.5]", "element 1.5 is not an integer (dtype int64)"},
            new String[] {"x=uint8:[2,1e2]", "element 100.0 is not an integer (dtype uint8)"},
            new String[] {"x=bool:[0.5]", "element 0.5 is not a boolean (true, false, 0 or 1)"},
            new String[] {"x=float16:[70000]", "value 70000 is out of range for float16"},
            new String[] {"x=int32:[1,\"a\"]", "element \"a\" is not a number"},
            new String[] {"x={\"a\":1", "invalid JSON '{\"a\":1' at position 6"},
            new String[] {"x=hello", "invalid JSON 'hello' at position 0"},
            new String[] {"novalue", "argument 'novalue' is not NAME=VALUE"});
    for (String[] c : cases) {
      Result result = fails("kv", "put", "--partition", "p", "--key", "k", c[0]);
      assertThat(result.err()).as(c[0]).startsWith("tq kv put: error: ").contains(c[1]);
    }
    assertThat(fails("kv", "put", "--partition", "p", "--key", "k", "--tag", "t=[1,").err())
        .contains("'t': invalid JSON '[1,'");
    assertThat(ok("kv", "list", "--json").out()).isEqualTo("{}\n");
  }

  @Test
  void shouldRefuseEmptyKeysAndPartitionsWithOneLineNamingThem() {
    ok("kv", "put", "--partition", "p", "--key", "a", "v=1");
    assertThat(fails("kv", "put", "--partition", "p", "--key", "", "v=1").err())
        .isEqualTo("tq kv put: error: key is empty\n");
    assertThat(fails("kv", "put", "--partition", "", "--key", "b", "v=1").err())
        .isEqualTo("tq kv put: error: partition_id is empty\n");
    assertThat(fails("kv", "get", "--partition", "p", "--key", "a", "--key", "").err())
        .isEqualTo("tq kv get: error: keys [\"a\", \"\"]: key at position 1 is empty\n");
    assertThat(fails("kv", "clear", "--partition", "p", "--key", "").err())
        .isEqualTo("tq kv clear: error: keys [\"\"]: key at position 0 is empty\n");
    assertThat(fails("kv", "get", "--partition", "", "--key", "a").err())
        .isEqualTo("tq kv get: error: partition_id is empty\n");
    assertThat(fails("kv", "list", "--partition", "").err())
        .isEqualTo("tq kv list: error: partition_id is empty\n");
    assertThat(fails("kv", "get", "--partition", "p", "--key", "a", "--field", "").err())
        .isEqualTo("tq kv get: error: field names [\"\"]: field name at position 0 is empty\n");
    assertThat(ok("kv", "list", "--json").out()).isEqualTo("{\"p\":{\"a\":{}}}\n");
  }

  @Test
  void shouldRefuseStringsThatAreNotValidUnicodeAndPrintTheErrorEscaped() {
    // A JSON value can spell a lone surrogate with an escape; so can a program that calls tq.
    assertThat(fails("kv", "put", "--partition", "p", "--key", "k", "note=\"\\ud800\"").err())
        .isEqualTo(
            "tq kv put: error: field \"note\": object value of row 0: string \"\\uD800\" is not"
                + " valid Unicode: lone surrogate \\uD800 at index 0, which UTF-8 cannot encode\n");
    assertThat(
            fails("kv", "put", "--partition", "p", "--key", "k", "--tag", "t=\"x\\udc00\"").err())
        .startsWith("tq kv put: error: metadata value of key \"t\" \"x\\uDC00\" is not valid");
    assertThat(fails("kv", "put", "--partition", "p\uD800", "--key", "k", "v=1").err())
        .startsWith("tq kv put: error: partition_id \"p\\uD800\" is not valid Unicode");
    assertThat(fails("kv", "get", "--partition", "p", "--key", "\uDFFF").err())
        .startsWith("tq kv get: error: keys [\"\\uDFFF\"]: key at position 0 \"\\uDFFF\"");
    assertThat(ok("kv", "list", "--json").out()).isEqualTo("{}\n");
  }

  @Test
  void shouldReportAnUnreadableConfigurationAsUsageError(@TempDir Path dir) {
    Result result =
        RunningSystem.run("kv", "list", "--config", dir.resolve("missing.yaml").toString());
    assertThat(result.status()).isEqualTo(2);
    assertThat(result.err()).contains("missing.yaml");
  }

  @Test
  void shouldStoreAScalarTensorAsOneElementPerRow() {
    ok("kv", "put", "--partition", "p", "--key", "a", "reward=float64:0.25");
    assertThat(ok("kv", "get", "--partition", "p", "--key", "a").out())
        .contains("a    reward  float64[] 0.25");
  }

  @Test
  void shouldFailWithOneLineWhenTheControllerIsUnreachable() {
    system.close();
    Result result = fails("kv", "list");
    assertThat(result.err()).startsWith("tq kv list: error: ");
  }

  @Test
  void shouldListKvAndStatusInHelp() {
    Result help = RunningSystem.run("--help");
    assertThat(help.out()).containsPattern("(?m)^\\s+kv\\s").containsPattern("(?m)^\\s+status\\s");
    assertThat(RunningSystem.run("kv", "--help").out()).contains("put", "get", "list", "clear");
  }
}
