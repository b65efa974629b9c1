package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;

/**
 * {@code --help} and {@code -h} answer with the usage on every command and subcommand of the tree,
 * exit 0 and print nothing on standard error (no missing-option error, no picocli warning).
 */
class HelpEverywhereTest {

  /** Every command path of the tree ({@code []} is {@code tq} itself), times both spellings. */
  static Stream<Arguments> commands() {
    List<List<String>> paths = new ArrayList<>();
    collect(TqCommand.newCommandLine(), new ArrayList<>(), paths);
    assertThat(paths)
        .contains(
            List.of("demo"),
            List.of("bench"),
            List.of("stress"),
            List.of("version"),
            List.of("controller"),
            List.of("storage-unit"),
            List.of("store-node"),
            List.of("up"),
            List.of("status"),
            List.of("kv", "get"),
            List.of("checkpoint", "save"));
    return paths.stream().flatMap(p -> Stream.of(Arguments.of(p, "--help"), Arguments.of(p, "-h")));
  }

  private static void collect(CommandLine line, List<String> path, List<List<String>> out) {
    out.add(List.copyOf(path));
    line.getSubcommands()
        .forEach(
            (name, sub) -> {
              if (sub.getCommandSpec().name().equals(name) && !name.equals("help")) {
                List<String> child = new ArrayList<>(path);
                child.add(name);
                collect(sub, child, out);
              }
            });
  }

  @ParameterizedTest(name = "tq {0} {1}")
  @MethodSource("commands")
  void shouldPrintUsageAndExitZero(List<String> path, String option) {
    List<String> args = new ArrayList<>(path);
    args.add(option);
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    ByteArrayOutputStream stderr = new ByteArrayOutputStream();
    PrintStream previous = System.err;
    int status;
    System.setErr(new PrintStream(stderr, true, StandardCharsets.UTF_8));
    try {
      CommandLine commandLine = TqCommand.newCommandLine();
      commandLine.setOut(new PrintWriter(out));
      commandLine.setErr(new PrintWriter(err));
      status = commandLine.execute(args.toArray(String[]::new));
    } finally {
      System.setErr(previous);
    }

    assertThat(status).as("exit status of tq %s", args).isZero();
    assertThat(out.toString()).as("usage of tq %s", args).startsWith("Usage: tq");
    assertThat(err.toString()).as("errors of tq %s", args).isEmpty();
    assertThat(stderr.toString(StandardCharsets.UTF_8))
        .as("picocli warnings of tq %s", args)
        .isEmpty();
  }
}
