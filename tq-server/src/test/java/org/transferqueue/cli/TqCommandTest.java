package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class TqCommandTest {

  private static String run(String... args) {
    StringWriter out = new StringWriter();
    CommandLine commandLine = TqCommand.newCommandLine();
    commandLine.setOut(new PrintWriter(out));
    int status = commandLine.execute(args);
    assertThat(status).as("exit status of tq %s", String.join(" ", args)).isZero();
    return out.toString();
  }

  @Test
  void shouldPrintVersionJdkAndOs() {
    String output = run("version");
    assertThat(output)
        .containsPattern("tq \\d+\\.\\d+\\.\\d+")
        .contains("JDK " + System.getProperty("java.runtime.version"))
        .contains("OS " + System.getProperty("os.name"));
  }

  @Test
  void shouldListSubcommandsInHelp() {
    assertThat(run("--help")).contains("Usage: tq").contains("version");
  }
}
