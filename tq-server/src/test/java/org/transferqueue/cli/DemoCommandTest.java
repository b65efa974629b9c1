package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

class DemoCommandTest {

  private record Run(int status, String output) {}

  private static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine commandLine = TqCommand.newCommandLine();
    commandLine.setOut(new PrintWriter(out));
    commandLine.setErr(new PrintWriter(err));
    int status = commandLine.execute(args);
    return new Run(status, out + err.toString());
  }

  @Test
  @Timeout(120)
  void shouldRunEveryStageAndVerifyEverySample() {
    Run run =
        run(
            "demo",
            "--iterations",
            "2",
            "--batch-size",
            "40",
            "--micro-batch-size",
            "16",
            "--seq-len",
            "64");
    assertThat(run.status()).as(run.output()).isZero();
    assertThat(run.output())
        .contains("step 2/2")
        .containsPattern("rollout\\s+80\\s")
        .containsPattern("reward\\s+80\\s")
        .containsPattern("reference\\s+80\\s")
        .containsPattern("trainer\\s+80\\s")
        .contains("verified: all 80 samples match");
  }

  @Test
  @Timeout(120)
  void shouldRunTheStreamingPipelineAndVerifyEveryStageOfEveryStep() {
    Run run =
        run(
            "demo",
            "--pipeline",
            "streaming",
            "--iterations",
            "3",
            "--batch-size",
            "8",
            "--micro-batch-size",
            "2",
            "--seq-len",
            "32");
    assertThat(run.status()).as(run.output()).isZero();
    assertThat(run.output())
        .contains("tq demo (streaming)")
        .contains("step 3/3")
        .containsPattern("rollout\\s+24\\s")
        .containsPattern("ref\\s+24\\s")
        .containsPattern("actor\\s+24\\s")
        .containsPattern("reward\\s+24\\s")
        .containsPattern("update\\s+24\\s")
        .contains("verified: all 24 samples match");
  }

  @Test
  void shouldRejectAnUnknownPipeline() {
    Run run = run("demo", "--pipeline", "central");
    assertThat(run.status()).isNotZero();
    assertThat(run.output()).contains("--pipeline").contains("central");
  }

  @Test
  @Timeout(120)
  void shouldServeMetricsWhileRunningWhenAskedTo() {
    Run run =
        run(
            "demo",
            "--iterations",
            "1",
            "--batch-size",
            "8",
            "--micro-batch-size",
            "4",
            "--seq-len",
            "16",
            "--metrics-port",
            "0");
    assertThat(run.status()).as(run.output()).isZero();
    assertThat(run.output())
        .containsPattern("metrics: http://127\\.0\\.0\\.1:[1-9][0-9]*/metrics")
        .contains("verified: all 8 samples match");
  }

  @Test
  void shouldRejectAMetricsPortOutOfRange() {
    Run run = run("demo", "--metrics-port", "70000");
    assertThat(run.status()).isNotZero();
    assertThat(run.output()).contains("--metrics-port");
  }

  @Test
  void shouldRejectNonPositiveSizes() {
    Run run = run("demo", "--batch-size", "0");
    assertThat(run.status()).isNotZero();
    assertThat(run.output()).contains("--batch-size");
  }

  @Test
  void shouldRejectUnknownBackend() {
    Run run = run("demo", "--backend", "Redis", "--iterations", "1", "--batch-size", "4");
    assertThat(run.status()).isNotZero();
    assertThat(run.output()).contains("Redis");
  }
}
