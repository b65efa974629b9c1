package org.transferqueue.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.transferqueue.TqException;
import org.transferqueue.client.TqClient;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.StorageBackend;
import org.transferqueue.config.TqConfig;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.server.RawShmSession;
import org.transferqueue.server.config.TqConfigs;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.Tensor;

/**
 * A client process for the shared-memory tests. Usage: {@code ShmClientProcess MODE CONFIG
 * PARTITION KEYS FLOATS [GRANTS GRANT_BYTES]}; keys {@code k0 ..} each get one float32 row of
 * FLOATS values derived from the key (field {@code x}). It prints one line per step, {@code failed
 * CODE ...} and exits 1 on an error, {@code corrupt ...} and exits 2 on a wrong value.
 *
 * <ul>
 *   <li>{@code roundtrip}: puts the keys, reads them back and checks every value, prints {@code
 *       mapped N} (the shared-memory segments this process maps while it holds the result, from
 *       {@code /proc/self/maps}), closes the result, clears the keys and prints {@code verified
 *       KEYS};
 *   <li>{@code hold}: puts and reads back as above, then opens {@link HeldViews} (reply bodies kept
 *       as views of the servers' segments, each a lease) and prints {@code leases mapped N} (the
 *       segments this process maps); then takes GRANTS regions of GRANT_BYTES from every storage
 *       server through a raw session ({@link RawShmSession}) and never uses them, prints {@code
 *       granted G attached A} and {@code holding}, and waits until its standard input ends (or it
 *       is killed).
 * </ul>
 */
public final class ShmClientProcess {
  static final String FIELD = "x";

  private ShmClientProcess() {}

  /**
   * Runs one mode.
   *
   * @param args mode, configuration file, partition, keys, floats per row[, grants, grant bytes]
   * @throws IOException when standard input fails
   */
  public static void main(String[] args) throws IOException {
    String mode = args[0];
    TqConfig config = TqConfigs.load(Path.of(args[1]), System.getenv());
    String partition = args[2];
    int keys = Integer.parseInt(args[3]);
    int floats = Integer.parseInt(args[4]);
    int status;
    try (TqClient tq = TqClient.connect(config)) {
      List<String> names = ClientProcess.keys("k", keys);
      try (Batch rows = rows(tq.allocator(), names, floats)) {
        tq.kv().batchPut(names, partition, rows, null);
      }
      Batch read = tq.kv().batchGet(names, partition, List.of(FIELD));
      String diff = difference(read, names, floats);
      if (diff != null) {
        System.out.println("corrupt " + diff);
        read.close();
        status = 2;
      } else if (mode.equals("roundtrip")) {
        System.out.println("mapped " + SharedMappings.segmentInodes(-1).size());
        read.close();
        tq.kv().clear(names, partition);
        System.out.println("verified " + keys);
        status = 0;
      } else {
        read.close();
        HeldViews views = HeldViews.open(tq, config, tq.allocator(), keys, floats);
        System.out.println(
            "leases mapped "
                + SharedMappings.segmentInodes(-1).size()
                + (views.intact() ? "" : " corrupt"));
        hold(config, Integer.parseInt(args[5]), Long.parseLong(args[6]));
        views.close();
        status = 0;
      }
    } catch (TqException e) {
      System.out.println("failed " + e.code() + " " + e.getMessage());
      status = 1;
    }
    System.out.flush();
    System.exit(status);
  }

  /** Takes grants from every storage server, reports them, then waits for the end of stdin. */
  private static void hold(TqConfig config, int grants, long grantBytes) throws IOException {
    List<HostPort> servers =
        config.backend().storageBackend() == StorageBackend.MOONCAKE_STORE
            ? config.network().storeNodeAddresses()
            : config.network().storageUnitAddresses();
    List<RawShmSession> sessions = new ArrayList<>();
    int granted = 0;
    int attached = 0;
    for (HostPort server : servers) {
      RawShmSession session = new RawShmSession(server, config.network().authToken().orElse(null));
      sessions.add(session);
      if (session.attached()) {
        attached++;
        for (int i = 0; i < grants; i++) {
          session.grant(grantBytes);
          granted++;
        }
      }
    }
    System.out.println("granted " + granted + " attached " + attached);
    System.out.println("holding");
    System.out.flush();
    while (System.in.read() >= 0) {
      // Holding the sessions, their grants and the open result until stdin ends or a kill.
    }
    sessions.forEach(RawShmSession::close);
  }

  /** The value of element {@code j} of key {@code key}'s row. */
  static float element(String key, int j) {
    return (key.hashCode() % 1000) + j * 0.5f;
  }

  /** One float32 row per key, owned by the caller. */
  static Batch rows(BufferAllocator allocator, List<String> keys, int floats) {
    float[] values = new float[keys.size() * floats];
    for (int r = 0; r < keys.size(); r++) {
      for (int j = 0; j < floats; j++) {
        values[r * floats + j] = element(keys.get(r), j);
      }
    }
    return Batch.builder()
        .dense(FIELD, Tensor.ofFloats(allocator, DType.FLOAT32, values, keys.size(), floats))
        .build();
  }

  /** Null when every row of {@code batch} holds what was written for its key. */
  static String difference(Batch batch, List<String> keys, int floats) {
    if (batch.rowCount() != keys.size()) {
      return "rows=" + batch.rowCount() + " keys=" + keys.size();
    }
    Tensor x = ((DenseColumn) batch.column(FIELD)).tensor();
    for (int r = 0; r < keys.size(); r++) {
      for (int j = 0; j < floats; j++) {
        float got = x.getFloat((long) r * floats + j);
        if (got != element(keys.get(r), j)) {
          return "key=" + keys.get(r) + " x[" + j + "]=" + got + " != " + element(keys.get(r), j);
        }
      }
    }
    return null;
  }
}
