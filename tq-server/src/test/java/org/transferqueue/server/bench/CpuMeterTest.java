package org.transferqueue.server.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class CpuMeterTest {

  @Test
  void shouldCountTheCompilerThreadsAsPartOfTheProcessWhenProcIsThere() {
    assumeTrue(Files.isDirectory(Path.of("/proc/self/task")), "needs /proc");
    CpuMeter.Reading reading = new CpuMeter().read();
    long compiler = reading.compilerNanos();
    long all = reading.cpuNanos();
    // A JVM that ran this far has compiled something, and its compilers are some of its threads.
    assertThat(compiler).isPositive().isLessThan(all);
  }
}
