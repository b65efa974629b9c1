package org.transferqueue.server.bench;

/**
 * Heap bytes allocated while one iteration of a loopback case moved its data, in the client process
 * and in the server processes together (controller plus the storage units or store nodes), for the
 * put and for the get. Read with {@link HeapMeter} from each process's own counter ({@link
 * org.transferqueue.transport.ProcessStats}) right before and after the timed call.
 *
 * <p>The figure of merit is bytes per MiB moved: the allocation divided by the bytes of the put (or
 * get) in MiB. The project's goal is under 1 KiB per MiB on each side.
 *
 * @param iteration the iteration number, from 1
 * @param bytesMoved bytes of one put (and of one get)
 * @param clientPutBytes heap bytes the client process allocated during the put
 * @param serverPutBytes heap bytes the server processes allocated during the put, summed
 * @param clientGetBytes heap bytes the client process allocated during the get
 * @param serverGetBytes heap bytes the server processes allocated during the get, summed
 * @param controllerPutBytes the controller's part of {@code serverPutBytes}
 * @param controllerGetBytes the controller's part of {@code serverGetBytes}
 * @param storageServers the number of storage servers (units or store nodes) in the server figures
 *     besides the controller
 */
public record HeapAllocation(
    int iteration,
    long bytesMoved,
    long clientPutBytes,
    long serverPutBytes,
    long clientGetBytes,
    long serverGetBytes,
    long controllerPutBytes,
    long controllerGetBytes,
    int storageServers) {

  /** The goal: at most this many heap bytes per MiB moved, on each side. */
  public static final double GOAL_BYTES_PER_MIB = 1024;

  private static final double MIB = 1 << 20;

  /**
   * Client heap bytes per MiB put.
   *
   * @return bytes per MiB
   */
  public double clientPutPerMib() {
    return perMib(clientPutBytes);
  }

  /**
   * Server heap bytes per MiB put.
   *
   * @return bytes per MiB
   */
  public double serverPutPerMib() {
    return perMib(serverPutBytes);
  }

  /**
   * Client heap bytes per MiB read.
   *
   * @return bytes per MiB
   */
  public double clientGetPerMib() {
    return perMib(clientGetBytes);
  }

  /**
   * Server heap bytes per MiB read.
   *
   * @return bytes per MiB
   */
  public double serverGetPerMib() {
    return perMib(serverGetBytes);
  }

  /**
   * The controller's heap bytes per MiB put (part of {@link #serverPutPerMib()}).
   *
   * @return bytes per MiB
   */
  public double controllerPutPerMib() {
    return perMib(controllerPutBytes);
  }

  /**
   * The controller's heap bytes per MiB read (part of {@link #serverGetPerMib()}).
   *
   * @return bytes per MiB
   */
  public double controllerGetPerMib() {
    return perMib(controllerGetBytes);
  }

  /**
   * Heap bytes per MiB put of one storage server, on average: the servers' figure without the
   * controller's, over the storage servers.
   *
   * @return bytes per MiB; NaN without storage servers
   */
  public double storageServerPutPerMib() {
    return perStorageServer(serverPutBytes - controllerPutBytes);
  }

  /**
   * Heap bytes per MiB read of one storage server, on average.
   *
   * @return bytes per MiB; NaN without storage servers
   */
  public double storageServerGetPerMib() {
    return perStorageServer(serverGetBytes - controllerGetBytes);
  }

  private double perStorageServer(long storageBytes) {
    return storageServers == 0 ? Double.NaN : perMib(storageBytes) / storageServers;
  }

  private double perMib(long allocated) {
    return allocated / (bytesMoved / MIB);
  }
}
