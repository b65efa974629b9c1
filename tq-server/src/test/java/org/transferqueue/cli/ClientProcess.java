package org.transferqueue.cli;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.transferqueue.TqException;
import org.transferqueue.client.KvApi;
import org.transferqueue.client.TqClient;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.server.config.TqConfigs;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

/**
 * A writer or reader client as its own process, for the multi-process tests. Usage: {@code
 * ClientProcess MODE CONFIG PARTITION COUNT}; it prints one result line per step and exits 0, or
 * prints {@code corrupt ...} and exits 2 when a value read differs from what was written, or {@code
 * failed CODE ...} and exits 1 on an unexpected error.
 *
 * <ul>
 *   <li>{@code write}: puts keys {@code k0 .. k<COUNT-1>} (fields {@code ids}: int64 [16] derived
 *       from the key, {@code note}: a string) and prints {@code wrote COUNT};
 *   <li>{@code read}: fetches COUNT samples for task {@code reader} (blocking), reads and checks
 *       them, reads the keys again with a key-value get, clears them, and prints {@code verified
 *       FETCHED GOT} and {@code cleared REMAINING};
 *   <li>{@code workload}: loops putting and reading back fresh keys of {@code PARTITION-live-PID}
 *       and reading the COUNT keys of PARTITION, printing {@code ready} after the first round. At
 *       the first error it prints {@code error CODE EPOCH_MILLIS CALL_MILLIS EXCEPTION}, then tries
 *       every key of PARTITION once and prints {@code readable R/COUNT FAILURES}.
 * </ul>
 */
public final class ClientProcess {
  static final int WIDTH = 16;
  static final List<String> FIELDS = List.of("ids", "note");

  private ClientProcess() {}

  /**
   * Runs one mode.
   *
   * @param args mode, configuration file, partition, key count
   */
  public static void main(String[] args) {
    String mode = args[0];
    Path config = Path.of(args[1]);
    String partition = args[2];
    int count = Integer.parseInt(args[3]);
    int status;
    try (TqClient tq = TqClient.connect(TqConfigs.load(config, System.getenv()))) {
      status =
          switch (mode) {
            case "write" -> write(tq, partition, keys("k", count));
            case "read" -> read(tq, partition, count);
            case "workload" -> workload(tq, partition, count);
            default -> throw new IllegalArgumentException("mode=" + mode);
          };
    } catch (TqException e) {
      System.out.println("failed " + e.code() + " " + e.getMessage());
      status = 1;
    }
    System.out.flush();
    System.exit(status);
  }

  static List<String> keys(String prefix, int count) {
    List<String> keys = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      keys.add(prefix + i);
    }
    return keys;
  }

  /** The value of element {@code j} of key {@code key}'s {@code ids} row. */
  static long element(String key, int j) {
    return (long) key.hashCode() * 1_000_003L + j * 7919L;
  }

  static String note(String key) {
    return "note of " + key;
  }

  /** A batch with one row per key, owned by the caller. */
  static Batch rows(BufferAllocator allocator, List<String> keys) {
    long[] values = new long[keys.size() * WIDTH];
    for (int r = 0; r < keys.size(); r++) {
      for (int j = 0; j < WIDTH; j++) {
        values[r * WIDTH + j] = element(keys.get(r), j);
      }
    }
    Tensor ids = Tensor.ofLongs(allocator, DType.INT64, values, keys.size(), WIDTH);
    return Batch.builder()
        .dense("ids", ids)
        .objects("note", keys.stream().map(ClientProcess::note).toList())
        .build();
  }

  /**
   * Checks that row {@code r} of {@code batch} holds what was written for {@code key}.
   *
   * @return null when it does, else a description of the difference
   */
  static String difference(Batch batch, int r, String key) {
    Tensor ids = ((DenseColumn) batch.column("ids")).tensor();
    for (int j = 0; j < WIDTH; j++) {
      long got = ids.getLong((long) r * WIDTH + j);
      if (got != element(key, j)) {
        return "key=" + key + " ids[" + j + "]=" + got + " != " + element(key, j);
      }
    }
    Object note = ((ObjectColumn) batch.column("note")).get(r);
    return note(key).equals(note) ? null : "key=" + key + " note=" + note;
  }

  private static int write(TqClient tq, String partition, List<String> keys) {
    try (Batch rows = rows(tq.allocator(), keys)) {
      tq.kv().batchPut(keys, partition, rows, null);
    }
    System.out.println("wrote " + keys.size());
    return 0;
  }

  private static int read(TqClient tq, String partition, int count) {
    BatchMeta meta =
        tq.client()
            .getMeta(
                GetMetadataRequest.fetch(partition, FIELDS, "reader", count)
                    .withTimeout(Duration.ofSeconds(20)));
    List<String> fetchedKeys = tq.client().resolveIndexes(partition, meta.globalIndexes());
    int fetched = 0;
    try (Batch data = tq.client().getData(meta)) {
      for (int r = 0; r < data.rowCount(); r++) {
        String diff = difference(data, r, fetchedKeys.get(r));
        if (diff != null) {
          System.out.println("corrupt fetched " + diff);
          return 2;
        }
        fetched++;
      }
    }
    List<String> keys = keys("k", count);
    int got = 0;
    try (Batch data = tq.kv().batchGet(keys, partition, FIELDS)) {
      for (int r = 0; r < data.rowCount(); r++) {
        String diff = difference(data, r, keys.get(r));
        if (diff != null) {
          System.out.println("corrupt got " + diff);
          return 2;
        }
        got++;
      }
    }
    System.out.println("verified " + fetched + " " + got);
    tq.kv().clear(keys, partition);
    Map<String, ?> left = tq.kv().list(partition).getOrDefault(partition, Map.of());
    System.out.println("cleared " + left.size());
    return 0;
  }

  private static int workload(TqClient tq, String partition, int count) {
    List<String> keys = keys("k", count);
    String live = partition + "-live-" + ProcessHandle.current().pid();
    boolean ready = false;
    for (int round = 0; ; round++) {
      long start = System.nanoTime();
      try {
        List<String> fresh = keys("r" + round + "-", 4);
        try (Batch rows = rows(tq.allocator(), fresh)) {
          tq.kv().batchPut(fresh, live, rows, null);
        }
        String diff = check(tq.kv(), live, fresh);
        if (diff == null) {
          diff = check(tq.kv(), partition, keys);
        }
        if (diff != null) {
          System.out.println("corrupt " + diff);
          return 2;
        }
        tq.kv().clear(fresh, live);
      } catch (TqException e) {
        long callMillis = (System.nanoTime() - start) / 1_000_000;
        System.out.println(
            "error "
                + e.code()
                + " "
                + System.currentTimeMillis()
                + " "
                + callMillis
                + " "
                + e.getClass().getSimpleName()
                + ": "
                + e.getMessage().replace('\n', ' '));
        System.out.println(readable(tq.kv(), partition, keys));
        return 0;
      }
      if (!ready) {
        System.out.println("ready");
        System.out.flush();
        ready = true;
      }
    }
  }

  private static String check(KvApi kv, String partition, List<String> keys) {
    try (Batch data = kv.batchGet(keys, partition, FIELDS)) {
      for (int r = 0; r < data.rowCount(); r++) {
        String diff = difference(data, r, keys.get(r));
        if (diff != null) {
          return diff;
        }
      }
    }
    return null;
  }

  /** Reads every key once: {@code readable R/N {CODE=COUNT, ...}}; a wrong value is a failure. */
  static String readable(KvApi kv, String partition, List<String> keys) {
    int readable = 0;
    Map<String, Integer> failures = new TreeMap<>();
    for (String key : keys) {
      try {
        String diff = check(kv, partition, List.of(key));
        if (diff == null) {
          readable++;
        } else {
          failures.merge("CORRUPT", 1, Integer::sum);
        }
      } catch (TqException e) {
        failures.merge(e.code().name(), 1, Integer::sum);
      }
    }
    return "readable " + readable + "/" + keys.size() + " " + failures;
  }
}
