package org.transferqueue.server.bench;

/**
 * The machine and JVM a run was made on.
 *
 * @param jdk {@code java.runtime.version}
 * @param jdkVendor {@code java.vendor}
 * @param vm {@code java.vm.name}
 * @param os operating system name and version
 * @param arch {@code os.arch}
 * @param cores available processors
 * @param physicalMemoryBytes total physical memory, or -1 when unknown
 * @param availableMemoryBytes physical memory available when the run started, or -1 when unknown
 */
public record BenchEnvironment(
    String jdk,
    String jdkVendor,
    String vm,
    String os,
    String arch,
    int cores,
    long physicalMemoryBytes,
    long availableMemoryBytes) {

  /**
   * Describes this JVM and machine.
   *
   * @param probe where the memory figures come from
   * @return the description
   */
  public static BenchEnvironment current(MemoryProbe probe) {
    return new BenchEnvironment(
        System.getProperty("java.runtime.version"),
        System.getProperty("java.vendor"),
        System.getProperty("java.vm.name"),
        System.getProperty("os.name") + " " + System.getProperty("os.version"),
        System.getProperty("os.arch"),
        Runtime.getRuntime().availableProcessors(),
        probe.totalBytes(),
        probe.availableBytes());
  }
}
