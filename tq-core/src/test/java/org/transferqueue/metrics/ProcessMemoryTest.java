package org.transferqueue.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ProcessMemoryTest {

  @Test
  void shouldParseVmRssInKilobytes() {
    String status = "Name:\tjava\nVmPeak:\t 999 kB\nVmRSS:\t  524288 kB\nThreads:\t12\n";
    assertThat(ProcessMemory.parseVmRss(status)).isEqualTo(536_870_912L);
  }

  @Test
  void shouldGiveZeroWhenTheLineIsMissingOrMalformed() {
    assertThat(ProcessMemory.parseVmRss("Name:\tjava\n")).isZero();
    assertThat(ProcessMemory.parseVmRss("VmRSS:\tlots kB\n")).isZero();
  }

  @Test
  void shouldReadThisProcessOnLinux() {
    long rss = ProcessMemory.rssBytes();
    if (System.getProperty("os.name").toLowerCase().contains("linux")) {
      assertThat(rss).isPositive();
    } else {
      assertThat(rss).isZero();
    }
  }
}
