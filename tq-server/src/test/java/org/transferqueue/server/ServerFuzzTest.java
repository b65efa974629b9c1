package org.transferqueue.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.transferqueue.codec.MsgpackValue.newArray;
import static org.transferqueue.codec.MsgpackValue.newBinary;
import static org.transferqueue.codec.MsgpackValue.newBoolean;
import static org.transferqueue.codec.MsgpackValue.newInteger;
import static org.transferqueue.codec.MsgpackValue.newMap;
import static org.transferqueue.codec.MsgpackValue.newNil;
import static org.transferqueue.codec.MsgpackValue.newString;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.codec.FrameDescriptor;
import org.transferqueue.codec.MsgpackValue;
import org.transferqueue.config.HostPort;
import org.transferqueue.controller.Controller;
import org.transferqueue.controller.ControllerOptions;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.objectstore.engine.EmbeddedObjectStore;
import org.transferqueue.objectstore.engine.MasterConfig;
import org.transferqueue.remote.controller.ControllerServer;
import org.transferqueue.remote.objectstore.StoreNodeServer;
import org.transferqueue.remote.storage.StorageUnitServer;
import org.transferqueue.storage.simple.StorageUnit;
import org.transferqueue.testing.Await;
import org.transferqueue.testing.Seeds;
import org.transferqueue.transport.TransportConfig;

/**
 * Hostile input against every server role: for a bounded time, seeded random and mutated frames
 * (truncated frames, lying and huge lengths, wrong message types, invalid msgpack, values of the
 * wrong type or out of range, lying body tables and body sizes, garbage bytes, bad magic, version
 * and flags). Afterwards the server still answers a correct round trip, and the memory of its
 * connections is back to its baseline. Each run prints its seed and figures ({@code [fuzz]}); rerun
 * one with {@code -Dtq.seed=N}; {@code -Dtq.fuzz.millis=M} sets the time per role.
 */
@ExtendWith(LeakCheckExtension.class)
class ServerFuzzTest {
  private static final long MILLIS = Long.getLong("tq.fuzz.millis", 2_500);
  private static final long SLOW_MILLIS = Long.getLong("tq.fuzz.slow.millis", 60_000);
  private static final long[] INTERESTING = {
    0,
    1,
    -1,
    2,
    63,
    64,
    65,
    255,
    256,
    65_535,
    65_536,
    1 << 20,
    (1 << 24) + 1,
    Integer.MAX_VALUE,
    Integer.MIN_VALUE,
    1L << 31,
    1L << 32,
    1L << 40,
    1L << 62,
    Long.MAX_VALUE,
    Long.MIN_VALUE
  };

  private static final java.util.Set<String> INTERNAL_MESSAGES =
      java.util.concurrent.ConcurrentHashMap.newKeySet();

  /** One server role under test. */
  interface Role extends AutoCloseable {
    String name();

    HostPort address();

    /** Valid requests of the role to mutate. */
    List<Template> templates();

    /** A correct request/reply exchange whose answer is checked. */
    void roundTrip(RawFrames.Connection connection, long id) throws IOException;

    /** The allocator of the server's connections. */
    BufferAllocator connections();

    @Override
    void close();
  }

  /** A valid request: type, application metadata and bodies. */
  record Template(int type, MsgpackValue meta, List<byte[]> bodies) {}

  /** What one fuzz run did. */
  record Figures(long frames, long sessions, Map<Integer, Integer> replyCodes) {}

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void shouldServeAndLeakNothingAfterFuzzedFramesToTheController(BufferAllocator allocator)
      throws IOException {
    try (Role role = controller(allocator)) {
      fuzzAndCheck(role, MILLIS);
    }
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void shouldServeAndLeakNothingAfterFuzzedFramesToAStorageUnit(BufferAllocator allocator)
      throws IOException {
    try (Role role = storageUnit(allocator)) {
      fuzzAndCheck(role, MILLIS);
    }
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void shouldServeAndLeakNothingAfterFuzzedFramesToAStoreNode(BufferAllocator allocator)
      throws IOException {
    try (Role role = storeNode(allocator)) {
      fuzzAndCheck(role, MILLIS);
    }
  }

  @Test
  @Tag("slow")
  @Timeout(value = 900, unit = TimeUnit.SECONDS)
  void shouldServeAndLeakNothingAfterLongFuzzOfEveryRole(BufferAllocator allocator)
      throws IOException {
    try (Role role = controller(allocator)) {
      fuzzAndCheck(role, SLOW_MILLIS);
    }
    try (Role role = storageUnit(allocator)) {
      fuzzAndCheck(role, SLOW_MILLIS);
    }
    try (Role role = storeNode(allocator)) {
      fuzzAndCheck(role, SLOW_MILLIS);
    }
  }

  private static void fuzzAndCheck(Role role, long millis) throws IOException {
    long seed = Seeds.seed();
    long baselineBytes = role.connections().allocatedBytes();
    long baselineBuffers = role.connections().outstandingBuffers();
    Figures figures = fuzz(role, seed, millis);

    // No crash: a fresh connection gets correct answers.
    try (RawFrames.Connection connection = new RawFrames.Connection(role.address())) {
      hello(connection);
      role.roundTrip(connection, 2);
    }
    // No leak: once the fuzzing connections are gone, their memory is back.
    Await.until(
        () -> role.connections().outstandingBuffers() == baselineBuffers,
        role.name() + " connection buffers back to " + baselineBuffers);
    Await.until(
        () -> role.connections().allocatedBytes() == baselineBytes,
        role.name() + " connection bytes back to " + baselineBytes);
    long internal = figures.replyCodes().getOrDefault(900, 0);
    System.out.println(
        "[fuzz] "
            + role.name()
            + ": seed="
            + seed
            + " frames="
            + figures.frames()
            + " sessions="
            + figures.sessions()
            + " crashes=0 leaks=0 (connection bytes "
            + role.connections().allocatedBytes()
            + " = baseline "
            + baselineBytes
            + ") reply codes "
            + figures.replyCodes());
    assertThat(internal)
        .as(
            "INTERNAL (900) replies, i.e. handler bugs, seed=%d: %s %s",
            seed, figures.replyCodes(), INTERNAL_MESSAGES)
        .isZero();
  }

  private static void hello(RawFrames.Connection connection) throws IOException {
    connection.write(RawFrames.request(1, 1, newArray(newNil()), List.of()));
    RawFrames.Reply reply = connection.read();
    assertThat(reply).isNotNull();
    assertThat(reply.isError()).isFalse();
  }

  /** Sends mutated frames over short sessions until {@code millis} have passed. */
  static Figures fuzz(Role role, long seed, long millis) {
    Random random = new Random(seed);
    Map<Integer, Integer> codes = new TreeMap<>();
    long frames = 0;
    long sessions = 0;
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    try (ScheduledExecutorService watchdog = Executors.newSingleThreadScheduledExecutor()) {
      while (System.nanoTime() < end) {
        frames += session(role, new Random(random.nextLong()), codes, watchdog);
        sessions++;
      }
    }
    return new Figures(frames, sessions, codes);
  }

  /** One connection: an optional HELLO, up to 16 frames, then close; returns frames sent. */
  private static int session(
      Role role, Random random, Map<Integer, Integer> codes, ScheduledExecutorService watchdog) {
    int sent = 0;
    try (RawFrames.Connection connection = new RawFrames.Connection(role.address())) {
      // A session never outlives its budget, whatever the server does with its bytes.
      var guard = watchdog.schedule(connection::abort, 3, TimeUnit.SECONDS);
      Map<Integer, Integer> local = new TreeMap<>();
      Thread drain =
          Thread.ofVirtual()
              .start(
                  () -> {
                    try {
                      RawFrames.Reply reply;
                      while ((reply = connection.read()) != null) {
                        local.merge(reply.isError() ? reply.errorCode() : 0, 1, Integer::sum);
                        if (reply.isError() && reply.errorCode() == 900) {
                          INTERNAL_MESSAGES.add(reply.meta().toString());
                        }
                      }
                    } catch (IOException | RuntimeException e) {
                      // The server closed the connection or sent what we cannot parse after a
                      // frame that desynchronised the stream: the session is over.
                    }
                  });
      try {
        if (random.nextInt(10) != 0) {
          connection.write(RawFrames.request(1, 1, newArray(newNil()), List.of()));
        }
        int count = 1 + random.nextInt(16);
        List<Template> templates = role.templates();
        for (int i = 0; i < count; i++) {
          Template template = templates.get(random.nextInt(templates.size()));
          Mutation mutation = mutate(template, random, 2L + i);
          connection.write(mutation.bytes());
          sent++;
          if (mutation.last()) {
            break;
          }
        }
        connection.channel.shutdownOutput();
      } catch (IOException e) {
        // The server closed the connection (bad magic, a length over a limit): expected.
      }
      try {
        drain.join(Duration.ofSeconds(3));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      guard.cancel(false);
      connection.abort();
      try {
        drain.join(Duration.ofSeconds(3));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      synchronized (local) {
        local.forEach((code, n) -> codes.merge(code, n, Integer::sum));
      }
    }
    return sent;
  }

  /** A frame to send; {@code last} when nothing may follow it (a truncated frame). */
  record Mutation(byte[] bytes, boolean last) {}

  static Mutation mutate(Template t, Random r, long id) {
    return switch (r.nextInt(13)) {
      case 0, 1 -> new Mutation(RawFrames.request(t.type(), id, t.meta(), t.bodies()), false);
      case 2, 3, 4 ->
          new Mutation(RawFrames.request(t.type(), id, mutate(t.meta(), r), t.bodies()), false);
      case 5 ->
          new Mutation(RawFrames.request(t.type(), id, t.meta(), bodies(t.bodies(), r)), false);
      case 6 -> new Mutation(RawFrames.request(randomType(r), id, t.meta(), t.bodies()), false);
      case 7 -> {
        // Invalid msgpack (or any bytes) as application metadata.
        long[] table = t.bodies().stream().mapToLong(b -> b.length).toArray();
        byte[] section = RawFrames.section(table, bytes(r, r.nextInt(40)));
        yield new Mutation(frame(t, id, section, section.length, bodyLength(t)), false);
      }
      case 8 -> {
        // A body table that lies: another count, a wrong entry, a huge entry.
        long[] table = t.bodies().stream().mapToLong(b -> b.length).toArray();
        long[] lie = Arrays.copyOf(table, Math.max(0, table.length + r.nextInt(3) - 1));
        if (lie.length > 0) {
          lie[r.nextInt(lie.length)] = INTERESTING[r.nextInt(INTERESTING.length)];
        }
        byte[] section = RawFrames.section(lie, RawFrames.pack(t.meta()));
        yield new Mutation(frame(t, id, section, section.length, bodyLength(t)), false);
      }
      case 9 -> {
        // A header that lies about the metadata or body length.
        byte[] section =
            RawFrames.section(
                t.bodies().stream().mapToLong(b -> b.length).toArray(), RawFrames.pack(t.meta()));
        long metadataLength = section.length;
        long bodyLength = bodyLength(t);
        switch (r.nextInt(4)) {
          case 0 -> metadataLength = INTERESTING[r.nextInt(INTERESTING.length)] & 0xFFFF_FFFFL;
          case 1 -> metadataLength = Math.max(0, metadataLength + r.nextInt(129) - 64);
          case 2 -> bodyLength = INTERESTING[r.nextInt(INTERESTING.length)];
          default -> bodyLength = Math.max(0, bodyLength + r.nextInt(129) - 64);
        }
        yield new Mutation(frame(t, id, section, metadataLength, bodyLength), true);
      }
      case 10 -> {
        byte[] whole = RawFrames.request(t.type(), id, t.meta(), t.bodies());
        yield new Mutation(Arrays.copyOf(whole, r.nextInt(whole.length)), true);
      }
      case 11 -> new Mutation(bytes(r, 1 + r.nextInt(200)), true);
      default -> {
        // Bad magic, another version, or the response/error flags on a request.
        byte[] section =
            RawFrames.section(
                t.bodies().stream().mapToLong(b -> b.length).toArray(), RawFrames.pack(t.meta()));
        int choice = r.nextInt(3);
        byte[] bytes =
            RawFrames.frame(
                choice == 0 ? r.nextInt() : FrameDescriptor.MAGIC,
                choice == 1 ? 2 + r.nextInt(100) : FrameDescriptor.CURRENT_VERSION,
                t.type(),
                choice == 2 ? 1 + r.nextInt(3) : 0,
                id,
                section.length,
                bodyLength(t),
                section,
                t.bodies());
        yield new Mutation(bytes, choice == 0);
      }
    };
  }

  private static byte[] frame(Template t, long id, byte[] section, long metaLength, long bodyLen) {
    return RawFrames.frame(
        FrameDescriptor.MAGIC,
        FrameDescriptor.CURRENT_VERSION,
        t.type(),
        0,
        id,
        metaLength,
        bodyLen,
        section,
        t.bodies());
  }

  private static long bodyLength(Template t) {
    return t.bodies().stream().mapToLong(b -> b.length).sum();
  }

  /** Any type but the storage unit's checkpoint types, which would write files where told. */
  private static int randomType(Random r) {
    int type =
        switch (r.nextInt(3)) {
          case 0 -> r.nextInt(65_536);
          case 1 -> r.nextInt(20);
          default -> 100 + r.nextInt(310);
        };
    return type == 205 || type == 206 ? 203 : type;
  }

  private static List<byte[]> bodies(List<byte[]> bodies, Random r) {
    List<byte[]> copy = new ArrayList<>(bodies);
    switch (r.nextInt(3)) {
      case 0 -> copy.add(bytes(r, r.nextInt(100)));
      case 1 -> {
        if (!copy.isEmpty()) {
          copy.remove(r.nextInt(copy.size()));
        }
      }
      default -> {
        if (!copy.isEmpty()) {
          int i = r.nextInt(copy.size());
          copy.set(i, bytes(r, r.nextInt(3) == 0 ? 0 : r.nextInt(200)));
        }
      }
    }
    return copy;
  }

  /** Replaces, removes or inserts one node of a msgpack value tree. */
  static MsgpackValue mutate(MsgpackValue value, Random r) {
    if (value.isArrayValue() && !value.asArrayValue().list().isEmpty() && r.nextInt(5) != 0) {
      List<MsgpackValue> list = new ArrayList<>(value.asArrayValue().list());
      int i = r.nextInt(list.size());
      switch (r.nextInt(8)) {
        case 0 -> list.remove(i);
        case 1 -> list.add(i, randomValue(r, 2));
        default -> list.set(i, mutate(list.get(i), r));
      }
      return MsgpackValue.newArray(list);
    }
    if (value.isMapValue() && !value.asMapValue().map().isEmpty() && r.nextInt(5) != 0) {
      List<Map.Entry<MsgpackValue, MsgpackValue>> entries =
          new ArrayList<>(value.asMapValue().entrySet());
      int i = r.nextInt(entries.size());
      Map.Entry<MsgpackValue, MsgpackValue> e = entries.get(i);
      Map<MsgpackValue, MsgpackValue> map = new java.util.LinkedHashMap<>();
      for (Map.Entry<MsgpackValue, MsgpackValue> entry : entries) {
        map.put(entry.getKey(), entry.getValue());
      }
      if (r.nextBoolean()) {
        map.put(e.getKey(), mutate(e.getValue(), r));
      } else {
        map.remove(e.getKey());
        map.put(mutate(e.getKey(), r), e.getValue());
      }
      return MsgpackValue.newMap(map);
    }
    return randomValue(r, 2);
  }

  static MsgpackValue randomValue(Random r, int depth) {
    return switch (r.nextInt(depth > 0 ? 13 : 9)) {
      case 0 -> newNil();
      case 1 -> newBoolean(r.nextBoolean());
      case 2, 3 -> newInteger(INTERESTING[r.nextInt(INTERESTING.length)]);
      case 4 -> newInteger(r.nextInt(70) - 5);
      case 5 -> newInteger(r.nextLong());
      case 6 -> newString(randomString(r));
      case 7 -> newBinary(bytes(r, r.nextInt(40)));
      case 8 -> MsgpackValue.newFloat(r.nextBoolean() ? Double.NaN : r.nextGaussian() * 1e18);
      case 9 -> newInteger(BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE));
      case 10 -> MsgpackValue.newExtension((byte) (r.nextInt(8) - 1), bytes(r, r.nextInt(20)));
      case 11 -> {
        List<MsgpackValue> list = new ArrayList<>();
        for (int i = r.nextInt(4); i > 0; i--) {
          list.add(randomValue(r, depth - 1));
        }
        yield MsgpackValue.newArray(list);
      }
      default -> newMap(Map.of(newString(randomString(r)), randomValue(r, depth - 1)));
    };
  }

  private static String randomString(Random r) {
    String[] special = {
      "", "@", "k1", "f:c1", "p0", "int64", "float32", "torch.bool", "\u0000", "é"
    };
    if (r.nextBoolean()) {
      return special[r.nextInt(special.length)];
    }
    byte[] b = new byte[r.nextInt(12)];
    for (int i = 0; i < b.length; i++) {
      b[i] = (byte) ('a' + r.nextInt(26));
    }
    return new String(b, StandardCharsets.US_ASCII);
  }

  private static byte[] bytes(Random r, int n) {
    byte[] b = new byte[n];
    r.nextBytes(b);
    return b;
  }

  // ---- roles ----

  private static TransportConfig serverConfig() {
    return TransportConfig.builder()
        .bindHost("127.0.0.1")
        .bindPort(0)
        .maxFrameBytes(16L << 20)
        .maxBodySegmentBytes(16L << 20)
        .connectionMemoryLimitBytes(64L << 20)
        .shutdownGracePeriod(Duration.ofSeconds(1))
        .build();
  }

  private static MsgpackValue str(String s) {
    return newString(s);
  }

  private static MsgpackValue ints(long... values) {
    List<MsgpackValue> list = new ArrayList<>();
    for (long v : values) {
      list.add(newInteger(v));
    }
    return MsgpackValue.newArray(list);
  }

  private static MsgpackValue strs(String... values) {
    List<MsgpackValue> list = new ArrayList<>();
    for (String v : values) {
      list.add(newString(v));
    }
    return MsgpackValue.newArray(list);
  }

  private static Template t(int type, MsgpackValue meta, byte[]... bodies) {
    return new Template(type, meta, List.of(bodies));
  }

  static Role controller(BufferAllocator allocator) {
    BufferAllocator connections = allocator.newChildAllocator("controller-server", 256L << 20);
    ControllerServer server =
        ControllerServer.start(
            new Controller(ControllerOptions.defaults()), serverConfig(), connections);
    MsgpackValue schema =
        newArray(str("int64"), ints(2), newBoolean(false), newBoolean(false), newNil());
    MsgpackValue fields = newMap(Map.of(str("f"), schema));
    MsgpackValue sampling = newArray(newNil(), newNil(), newNil());
    List<Template> templates =
        List.of(
            t(100, newArray()),
            t(101, newArray(str("p0"))),
            t(102, newArray()),
            t(103, newArray(str("p0"))),
            t(104, newArray(newArray(str("p0"), ints(0, 1), fields, newNil(), ints(0, 0)))),
            t(105, newArray(str("p0"), strs("f"))),
            t(106, newArray(str("p0"), strs("f"), str("t"))),
            t(107, newArray(str("p0"), str("t"))),
            t(108, newArray(str("p0"), newNil())),
            t(
                109,
                newArray(
                    newArray(
                        str("INSERT"),
                        str("p0"),
                        strs("f"),
                        newNil(),
                        newInteger(4),
                        sampling,
                        newNil()))),
            t(
                109,
                newArray(
                    newArray(
                        str("FETCH"),
                        str("p0"),
                        strs("f"),
                        str("t"),
                        newInteger(2),
                        sampling,
                        newInteger(50_000_000L)))),
            t(110, newArray(str("p0"))),
            t(
                111,
                newArray(
                    newArray(
                        str("MERGE"),
                        newMap(
                            Map.of(
                                str("p0"),
                                newMap(
                                    Map.of(
                                        newInteger(0),
                                        newMap(Map.of(str("a"), newInteger(1)))))))))),
            t(112, newArray(str("p0"), ints(0, 1))),
            t(113, newArray(str("p0"), newNil(), newNil())),
            t(114, newArray(str("p0"))),
            t(115, newArray(newArray(ints(0, 1), strs("p0"), newBoolean(true), ints(0, -1)))),
            t(116, newArray(str("p0"), strs("k1", "k2"), newBoolean(true))),
            t(117, newArray(str("p0"), ints(0, 1))),
            t(118, newArray(newNil())),
            t(119, newArray(str("p0"))),
            t(120, newArray()),
            t(121, newArray(str("p0"), fields, ints(0, 1), ints(0, 0))),
            t(122, newArray()),
            t(123, newArray(newBinary(new byte[] {(byte) 0x92, 1, 2}))),
            t(125, newArray(str("p0"), ints(0, 1, 7), newNil())));
    return new Role() {
      @Override
      public String name() {
        return "controller";
      }

      @Override
      public HostPort address() {
        return server.address();
      }

      @Override
      public List<Template> templates() {
        return templates;
      }

      @Override
      public void roundTrip(RawFrames.Connection c, long id) throws IOException {
        c.write(RawFrames.request(101, id, newArray(str("after-fuzz")), List.of()));
        RawFrames.Reply created = c.read();
        assertThat(created.isError()).as("%s", created.meta()).isFalse();
        assertThat(created.meta()).isEqualTo(newBoolean(true));
        c.write(RawFrames.request(102, id + 1, newArray(), List.of()));
        RawFrames.Reply list = c.read();
        assertThat(list.meta().asArrayValue().list()).contains(str("after-fuzz"));
      }

      @Override
      public BufferAllocator connections() {
        return connections;
      }

      @Override
      public void close() {
        server.close();
        connections.close();
      }
    };
  }

  static Role storageUnit(BufferAllocator allocator) {
    BufferAllocator cells = allocator.newChildAllocator("unit-cells", 256L << 20);
    BufferAllocator connections = allocator.newChildAllocator("unit-server", 256L << 20);
    StorageUnit unit =
        new StorageUnit("fuzz-unit", java.util.OptionalLong.of(100_000), cells, 128L << 20);
    StorageUnitServer server = StorageUnitServer.start(unit, serverConfig(), connections);
    MsgpackValue tensorField =
        newArray(str("f"), newInteger(0), str("int64"), newArray(ints(2), ints(2)));
    byte[] objectMain = RawFrames.pack(newArray(str("a"), newInteger(7)));
    MsgpackValue objectField =
        newArray(str("o"), newInteger(2), newInteger(objectMain.length), newInteger(0));
    byte[] row = new byte[16];
    List<Template> templates =
        List.of(
            t(
                200,
                newArray(newInteger(0), ints(1, 2), ints(0, 0), newArray(tensorField)),
                row,
                row),
            t(
                200,
                newArray(
                    newInteger(77), ints(3, 4), ints(0, 1), newArray(tensorField, objectField)),
                row,
                row,
                objectMain),
            t(201, newArray(ints(1, 2), ints(0, 0), strs("f"))),
            t(201, newArray(ints(3), ints(-1), strs("f", "o"))),
            t(202, newArray(ints(1, 3), ints(0, 0))),
            t(203, newArray()),
            t(204, newArray(newBoolean(false), ints(77))),
            t(204, newArray(newBoolean(true), ints(77))));
    return new Role() {
      @Override
      public String name() {
        return "storage unit";
      }

      @Override
      public HostPort address() {
        return server.address();
      }

      @Override
      public List<Template> templates() {
        return templates;
      }

      @Override
      public void roundTrip(RawFrames.Connection c, long id) throws IOException {
        byte[] body = new byte[24];
        for (int i = 0; i < body.length; i++) {
          body[i] = (byte) (i * 7 + 1);
        }
        MsgpackValue field = newArray(str("rt"), newInteger(0), str("int64"), newArray(ints(3)));
        c.write(
            RawFrames.request(
                200,
                id,
                newArray(newInteger(0), ints(9_000_001), ints(0), newArray(field)),
                List.of(body)));
        RawFrames.Reply put = c.read();
        assertThat(put.isError()).as("%s", put.meta()).isFalse();
        c.write(
            RawFrames.request(
                201, id + 1, newArray(ints(9_000_001), ints(0), strs("rt")), List.of()));
        RawFrames.Reply get = c.read();
        assertThat(get.isError()).as("%s", get.meta()).isFalse();
        assertThat(get.bodies()).hasSize(1);
        assertThat(get.bodies().get(0)).isEqualTo(body);
      }

      @Override
      public BufferAllocator connections() {
        return connections;
      }

      @Override
      public void close() {
        server.close();
        unit.close();
        connections.close();
        cells.close();
      }
    };
  }

  static Role storeNode(BufferAllocator allocator) {
    BufferAllocator engineMemory = allocator.newChildAllocator("node-engine", 256L << 20);
    BufferAllocator connections = allocator.newChildAllocator("node-server", 256L << 20);
    EmbeddedObjectStore engine =
        EmbeddedObjectStore.create(engineMemory, MasterConfig.builder().asyncThreads(1).build());
    assertThat(
            engine.setup(
                StoreConfig.builder()
                    .localHostname("fuzz-node")
                    .globalSegmentSize(16L << 20)
                    .localBufferSize(1L << 20)
                    .build()))
        .isZero();
    StoreNodeServer server = StoreNodeServer.start(engine, serverConfig(), connections);
    byte[] value = new byte[40];
    List<Template> templates =
        List.of(
            t(
                300,
                newArray(
                    newBoolean(true),
                    newInteger(1),
                    newBoolean(true),
                    newBoolean(false),
                    strs("k1", "k2")),
                value,
                value),
            t(
                300,
                newArray(
                    newBoolean(false),
                    newInteger(1),
                    newBoolean(false),
                    newBoolean(true),
                    strs("k3")),
                value),
            t(301, newArray(strs("k1", "k2"), ints(-1, 64))),
            t(302, newArray(strs("k1"))),
            t(303, newArray(strs("k1", "k3"))),
            t(304, newArray(newBoolean(true), strs("k1"))),
            t(305, newArray(newBoolean(false), str("^k"))),
            t(306, newArray(newBoolean(false))));
    return new Role() {
      @Override
      public String name() {
        return "store node";
      }

      @Override
      public HostPort address() {
        return server.address();
      }

      @Override
      public List<Template> templates() {
        return templates;
      }

      @Override
      public void roundTrip(RawFrames.Connection c, long id) throws IOException {
        byte[] body = new byte[100];
        for (int i = 0; i < body.length; i++) {
          body[i] = (byte) (i * 3 + 5);
        }
        c.write(
            RawFrames.request(
                300,
                id,
                newArray(
                    newBoolean(true),
                    newInteger(1),
                    newBoolean(true),
                    newBoolean(false),
                    strs("after-fuzz")),
                List.of(body)));
        RawFrames.Reply write = c.read();
        assertThat(write.isError()).as("%s", write.meta()).isFalse();
        assertThat(write.meta()).isEqualTo(newArray(ints(0)));
        c.write(RawFrames.request(301, id + 1, newArray(strs("after-fuzz"), ints(-1)), List.of()));
        RawFrames.Reply read = c.read();
        assertThat(read.meta()).isEqualTo(newArray(ints(100)));
        assertThat(read.bodies().get(0)).isEqualTo(body);
      }

      @Override
      public BufferAllocator connections() {
        return connections;
      }

      @Override
      public void close() {
        server.close();
        engine.close();
        connections.close();
        engineMemory.close();
      }
    };
  }
}
