package org.transferqueue.server.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Peak resident memory from a {@code /proc/<pid>/status} file. */
class PeakRssTest {

  @Test
  void shouldReadTheKilobytesOfTheKeyAsBytes(@TempDir Path dir) throws IOException {
    Path status = dir.resolve("status");
    Files.writeString(
        status, "Name:\tjava\nVmPeak:\t 9000 kB\nVmHWM:\t  123456 kB\nVmRSS:\t 1 kB\n");

    assertThat(PeakRss.statusKilobytes(status, "VmHWM:")).isEqualTo(123456L * 1024);
    assertThat(PeakRss.statusKilobytes(status, "VmSwap:")).isEqualTo(-1);
    assertThat(PeakRss.statusKilobytes(dir.resolve("absent"), "VmHWM:")).isEqualTo(-1);
  }

  @Test
  void shouldReadThisProcessWhenOnLinux() {
    long own = PeakRss.ownPeakRssBytes();

    if (Files.isReadable(Path.of("/proc/self/status"))) {
      assertThat(own).isPositive();
      assertThat(PeakRss.peakRssBytes(ProcessHandle.current().pid())).isGreaterThanOrEqualTo(own);
    } else {
      assertThat(own).isEqualTo(-1);
    }
  }
}
