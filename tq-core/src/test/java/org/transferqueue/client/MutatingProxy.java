package org.transferqueue.client;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.transferqueue.codec.FrameDescriptor;
import org.transferqueue.codec.MsgpackReader;
import org.transferqueue.codec.MsgpackValue;
import org.transferqueue.config.HostPort;

/**
 * A hostile server for client fuzzing: a TCP proxy in front of a real server that forwards every
 * request unchanged and, while {@link #fuzzing} is on, replaces replies (never the HELLO reply of a
 * connection) with seeded random mutations of them: truncated frames, lying and huge lengths, wrong
 * correlation ids, types and flags, bad magic and version, invalid msgpack, application metadata
 * with values of the wrong type or out of range, body tables that disagree with the bodies, flipped
 * body bytes, the reply of another message, garbage, and no reply at all. After a mutation that
 * leaves the byte stream out of step, the proxy ends the connection, as a crashing server would,
 * except that after a lying length it may also keep it open ({@link #stallOnLies}), so that the
 * client waits for bytes that never come. {@link #freeze()} makes the server look stopped (as under
 * SIGSTOP): nothing is forwarded in either direction, what arrives waits in the proxy and the
 * sockets' buffers, and {@link #thaw()} delivers it in order. Heap buffers; test code only.
 */
final class MutatingProxy implements AutoCloseable {
  private static final long[] INTERESTING = {
    0,
    1,
    -1,
    2,
    7,
    63,
    64,
    255,
    256,
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

  private final String name;
  private final HostPort target;
  private final ServerSocketChannel listener;
  private final Random random;
  private final Thread acceptor;
  private final List<byte[]> recentReplies = Collections.synchronizedList(new ArrayList<>());
  private final Map<String, AtomicLong> mutations = new ConcurrentHashMap<>();
  private final List<SocketChannel> open = Collections.synchronizedList(new ArrayList<>());
  private final AtomicLong replies = new AtomicLong();

  /** Whether replies are mutated; off means a transparent proxy. */
  volatile boolean fuzzing;

  /** Whether a lying length may leave the connection open, the stream out of step. */
  volatile boolean stallOnLies = true;

  /** The probability that one reply is mutated while fuzzing. */
  volatile double mutationRate = 0.5;

  // Guarded by frozenLock; forwarding threads wait on it while frozen.
  private final Object frozenLock = new Object();
  private boolean frozen;

  MutatingProxy(String name, HostPort target, long seed) {
    this.name = name;
    this.target = target;
    this.random = new Random(seed);
    try {
      listener = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    acceptor = Thread.ofPlatform().daemon().name("proxy-" + name).start(this::acceptLoop);
  }

  HostPort address() {
    return new HostPort("127.0.0.1", listener.socket().getLocalPort());
  }

  /** Mutations applied so far, by kind. */
  Map<String, Long> mutations() {
    Map<String, Long> out = new TreeMap<>();
    mutations.forEach((k, v) -> out.put(k, v.get()));
    return out;
  }

  long replies() {
    return replies.get();
  }

  /** Stops forwarding in both directions until {@link #thaw()}, as a stopped process would. */
  void freeze() {
    synchronized (frozenLock) {
      frozen = true;
    }
  }

  /** Forwards again, first what waited while frozen. */
  void thaw() {
    synchronized (frozenLock) {
      frozen = false;
      frozenLock.notifyAll();
    }
  }

  private void awaitThawed() throws IOException {
    synchronized (frozenLock) {
      while (frozen) {
        try {
          frozenLock.wait();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new InterruptedIOException("interrupted while frozen");
        }
      }
    }
  }

  /** Ends every proxied connection (the clients see their connections lost). */
  void dropConnections() {
    List<SocketChannel> copy;
    synchronized (open) {
      copy = new ArrayList<>(open);
    }
    copy.forEach(MutatingProxy::closeQuietly);
  }

  private void acceptLoop() {
    while (listener.isOpen()) {
      SocketChannel client;
      try {
        client = listener.accept();
      } catch (IOException e) {
        return;
      }
      SocketChannel server;
      try {
        server = SocketChannel.open(new InetSocketAddress(target.host(), target.port()));
      } catch (IOException e) {
        closeQuietly(client);
        continue;
      }
      open.add(client);
      open.add(server);
      Thread.ofVirtual().start(() -> pump(client, server));
      Thread.ofVirtual().start(() -> replies(server, client));
    }
  }

  /** Forwards requests unchanged. */
  private void pump(SocketChannel from, SocketChannel to) {
    ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
    try {
      while (from.read(buffer.clear()) >= 0) {
        awaitThawed();
        buffer.flip();
        while (buffer.hasRemaining()) {
          to.write(buffer);
        }
      }
    } catch (IOException e) {
      // The session is over.
    } finally {
      end(from, to);
    }
  }

  private void replies(SocketChannel server, SocketChannel client) {
    boolean first = true;
    try {
      byte[] frame;
      while ((frame = readFrame(server)) != null) {
        awaitThawed();
        replies.incrementAndGet();
        boolean keepGoing = true;
        if (first || !fuzzing) {
          write(client, frame);
        } else {
          keepGoing = mutateAndWrite(frame, client);
        }
        if (!first) {
          remember(frame);
        }
        first = false;
        if (!keepGoing) {
          break;
        }
      }
    } catch (IOException | RuntimeException e) {
      // The session is over.
    } finally {
      end(server, client);
    }
  }

  private void end(SocketChannel a, SocketChannel b) {
    closeQuietly(a);
    closeQuietly(b);
    open.remove(a);
    open.remove(b);
  }

  private void remember(byte[] frame) {
    synchronized (recentReplies) {
      if (recentReplies.size() >= 64) {
        recentReplies.remove(0);
      }
      recentReplies.add(frame);
    }
  }

  /**
   * Writes a mutation of {@code frame}, or the frame itself.
   *
   * @return false if the connection must end (the stream is out of step)
   */
  private boolean mutateAndWrite(byte[] frame, SocketChannel client) throws IOException {
    Random r;
    int kind;
    long seed;
    synchronized (random) {
      if (random.nextDouble() >= mutationRate) {
        write(client, frame);
        return true;
      }
      kind = random.nextInt(16);
      seed = random.nextLong();
    }
    r = new Random(seed);
    Parsed p = Parsed.of(frame);
    switch (kind) {
      case 0 -> {
        count("truncated");
        write(client, Arrays.copyOf(frame, r.nextInt(frame.length)));
        return false;
      }
      case 1 -> {
        count("no-reply");
        return true;
      }
      case 2 -> {
        count("wrong-correlation-id");
        long id = r.nextBoolean() ? p.id + 1 + r.nextInt(3) : pick(r);
        write(client, p.withId(id).encode());
      }
      case 3 -> {
        count("wrong-type");
        write(client, p.withType(r.nextBoolean() ? r.nextInt(400) : r.nextInt(0x1_0000)).encode());
      }
      case 4 -> {
        count("wrong-flags");
        int flags =
            switch (r.nextInt(3)) {
              case 0 -> 0;
              case 1 -> FrameDescriptor.FLAG_RESPONSE | FrameDescriptor.FLAG_ERROR;
              default -> r.nextInt();
            };
        write(client, p.withFlags(flags).encode());
      }
      case 5 -> {
        count("bad-magic-or-version");
        byte[] out = frame.clone();
        out[r.nextInt(6)] ^= (byte) (1 + r.nextInt(255));
        write(client, out);
        return false;
      }
      case 6 -> {
        count("lying-metadata-length");
        byte[] out = frame.clone();
        ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN).putInt(12, (int) pick(r));
        write(client, out);
        return stayOpen(r);
      }
      case 7 -> {
        count("lying-body-length");
        byte[] out = frame.clone();
        long length = r.nextBoolean() ? pick(r) : p.bodies.length + r.nextInt(129) - 64;
        ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN).putLong(24, length);
        write(client, out);
        return stayOpen(r);
      }
      case 8 -> {
        count("invalid-msgpack");
        byte[] section = p.section.clone();
        int flips = 1 + r.nextInt(4);
        for (int i = 0; i < flips && section.length > 0; i++) {
          section[r.nextInt(section.length)] = (byte) r.nextInt(256);
        }
        if (r.nextInt(4) == 0 && section.length > 0) {
          section = Arrays.copyOf(section, r.nextInt(section.length));
        }
        write(client, p.withSection(section).encode());
      }
      case 9, 10, 11 -> {
        count("mutated-metadata-values");
        MsgpackValue meta = p.appMeta();
        if (meta == null) {
          write(client, frame);
          return true;
        }
        int times = 1 + r.nextInt(3);
        for (int i = 0; i < times; i++) {
          meta = Values.mutate(meta, r);
        }
        write(client, p.withSection(section(p.bodyTable(), pack(meta))).encode());
      }
      case 12 -> {
        count("lying-body-table");
        long[] table = p.bodyTable();
        if (table == null) {
          write(client, frame);
          return true;
        }
        long[] lied = mutateTable(table, r);
        MsgpackValue meta = p.appMeta();
        byte[] appMeta = meta == null ? new byte[0] : pack(meta);
        write(client, p.withSection(section(lied, appMeta)).encode());
      }
      case 13 -> {
        count("flipped-body-bytes");
        byte[] bodies = p.bodies.clone();
        for (int i = 0; i < 1 + r.nextInt(8) && bodies.length > 0; i++) {
          bodies[r.nextInt(bodies.length)] = (byte) r.nextInt(256);
        }
        write(client, p.withBodies(bodies).encode());
      }
      case 14 -> {
        count("reply-of-another-message");
        byte[] other;
        synchronized (recentReplies) {
          other =
              recentReplies.isEmpty() ? frame : recentReplies.get(r.nextInt(recentReplies.size()));
        }
        Parsed o = Parsed.of(other);
        write(client, o.withId(p.id).encode());
      }
      default -> {
        count("garbage");
        byte[] garbage = new byte[r.nextInt(256)];
        r.nextBytes(garbage);
        write(client, garbage);
        return false;
      }
    }
    return true;
  }

  /** Whether a server that lied about a length keeps the connection open (stalls the stream). */
  private boolean stayOpen(Random r) {
    boolean stay = stallOnLies && r.nextBoolean();
    if (stay) {
      count("stalled-stream");
    }
    return !stay;
  }

  private static long[] mutateTable(long[] table, Random r) {
    switch (r.nextInt(4)) {
      case 0 -> {
        return Arrays.copyOf(table, Math.max(0, table.length - 1 - r.nextInt(2)));
      }
      case 1 -> {
        long[] out = Arrays.copyOf(table, table.length + 1 + r.nextInt(3));
        for (int i = table.length; i < out.length; i++) {
          out[i] = r.nextInt(3) == 0 ? pick(r) : r.nextInt(16);
        }
        return out;
      }
      case 2 -> {
        long[] out = table.clone();
        if (out.length > 0) {
          out[r.nextInt(out.length)] = pick(r);
        }
        return out;
      }
      default -> {
        // Same total, different split.
        long[] out = table.clone();
        if (out.length > 1) {
          int a = r.nextInt(out.length);
          int b = r.nextInt(out.length);
          long moved = out[a] == 0 ? 0 : 1 + r.nextLong(out[a]);
          out[a] -= moved;
          out[b] += moved;
        }
        return out;
      }
    }
  }

  private void count(String kind) {
    mutations.computeIfAbsent(kind, k -> new AtomicLong()).incrementAndGet();
  }

  static long pick(Random r) {
    long v = INTERESTING[r.nextInt(INTERESTING.length)];
    return r.nextInt(4) == 0 ? v + r.nextInt(3) - 1 : v;
  }

  private static void write(SocketChannel channel, byte[] bytes) throws IOException {
    ByteBuffer buffer = ByteBuffer.wrap(bytes);
    while (buffer.hasRemaining()) {
      channel.write(buffer);
    }
  }

  private static byte[] readFrame(SocketChannel channel) throws IOException {
    ByteBuffer header = ByteBuffer.allocate(FrameDescriptor.HEADER_LENGTH);
    if (!fill(channel, header)) {
      return null;
    }
    header.order(ByteOrder.LITTLE_ENDIAN);
    long metadataLength = Integer.toUnsignedLong(header.getInt(12));
    long bodyLength = header.getLong(24);
    long total = FrameDescriptor.bodyOffset(metadataLength) + bodyLength;
    ByteBuffer frame = ByteBuffer.allocate(Math.toIntExact(total));
    frame.put(header.array());
    if (!fill(channel, frame)) {
      return null;
    }
    return frame.array();
  }

  private static boolean fill(SocketChannel channel, ByteBuffer buffer) throws IOException {
    while (buffer.hasRemaining()) {
      if (channel.read(buffer) < 0) {
        return false;
      }
    }
    return true;
  }

  static byte[] section(long[] table, byte[] appMeta) {
    return MsgpackValue.section(table, appMeta);
  }

  static byte[] pack(MsgpackValue value) {
    return value.pack();
  }

  private static void closeQuietly(java.io.Closeable c) {
    try {
      c.close();
    } catch (IOException e) {
      // Ending a test session.
    }
  }

  @Override
  public void close() {
    thaw();
    closeQuietly(listener);
    dropConnections();
    try {
      acceptor.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public String toString() {
    return "MutatingProxy[" + name + " -> " + target + "]";
  }

  /** A reply frame split into header fields, metadata section and body bytes. */
  private record Parsed(int type, int flags, long id, byte[] section, byte[] bodies) {
    static Parsed of(byte[] frame) {
      ByteBuffer b = ByteBuffer.wrap(frame).order(ByteOrder.LITTLE_ENDIAN);
      int metadataLength = b.getInt(12);
      int bodyOffset = (int) FrameDescriptor.bodyOffset(Integer.toUnsignedLong(metadataLength));
      return new Parsed(
          Short.toUnsignedInt(b.getShort(6)),
          b.getInt(8),
          b.getLong(16),
          Arrays.copyOfRange(frame, 32, 32 + metadataLength),
          Arrays.copyOfRange(frame, bodyOffset, frame.length));
    }

    Parsed withId(long id) {
      return new Parsed(type, flags, id, section, bodies);
    }

    Parsed withType(int type) {
      return new Parsed(type, flags, id, section, bodies);
    }

    Parsed withFlags(int flags) {
      return new Parsed(type, flags, id, section, bodies);
    }

    Parsed withSection(byte[] section) {
      return new Parsed(type, flags, id, section, bodies);
    }

    Parsed withBodies(byte[] bodies) {
      return new Parsed(type, flags, id, section, bodies);
    }

    /** The body table, or null if the section is not one. */
    long[] bodyTable() {
      try {
        MsgpackReader u = new MsgpackReader(section, "section");
        int count = u.readArrayHeader();
        long[] out = new long[count];
        for (int i = 0; i < count; i++) {
          out[i] = u.readLong();
        }
        return out;
      } catch (RuntimeException e) {
        return null;
      }
    }

    /** The application metadata, or null if the section does not parse. */
    MsgpackValue appMeta() {
      try {
        MsgpackReader u = new MsgpackReader(section, "section");
        int count = u.readArrayHeader();
        for (int i = 0; i < count; i++) {
          u.readLong();
        }
        return u.hasRemaining() ? MsgpackValue.read(u) : MsgpackValue.newNil();
      } catch (RuntimeException e) {
        return null;
      }
    }

    byte[] encode() {
      long padded = FrameDescriptor.bodyOffset(section.length);
      ByteBuffer b =
          ByteBuffer.allocate(Math.toIntExact(padded + bodies.length))
              .order(ByteOrder.LITTLE_ENDIAN);
      b.putInt(FrameDescriptor.MAGIC);
      b.putShort((short) FrameDescriptor.CURRENT_VERSION);
      b.putShort((short) type);
      b.putInt(flags);
      b.putInt(section.length);
      b.putLong(id);
      b.putLong(bodies.length);
      b.put(section);
      b.position((int) padded);
      b.put(bodies);
      return b.array();
    }
  }

  /** Structural mutations of msgpack values. */
  static final class Values {
    private Values() {}

    static MsgpackValue mutate(MsgpackValue root, Random r) {
      int nodes = count(root);
      int[] target = {r.nextInt(nodes)};
      return rebuild(root, target, r);
    }

    private static int count(MsgpackValue v) {
      int n = 1;
      if (v.isArrayValue()) {
        for (MsgpackValue e : v.asArrayValue()) {
          n += count(e);
        }
      } else if (v.isMapValue()) {
        for (Map.Entry<MsgpackValue, MsgpackValue> e : v.asMapValue().entrySet()) {
          n += count(e.getKey()) + count(e.getValue());
        }
      }
      return n;
    }

    private static MsgpackValue rebuild(MsgpackValue v, int[] target, Random r) {
      if (target[0]-- == 0) {
        return replace(v, r);
      }
      if (v.isArrayValue()) {
        List<MsgpackValue> out = new ArrayList<>();
        for (MsgpackValue e : v.asArrayValue()) {
          out.add(rebuild(e, target, r));
        }
        return MsgpackValue.newArray(out);
      }
      if (v.isMapValue()) {
        Map<MsgpackValue, MsgpackValue> out = new LinkedHashMap<>();
        for (Map.Entry<MsgpackValue, MsgpackValue> e : v.asMapValue().entrySet()) {
          out.put(rebuild(e.getKey(), target, r), rebuild(e.getValue(), target, r));
        }
        return MsgpackValue.newMap(out);
      }
      return v;
    }

    private static MsgpackValue replace(MsgpackValue v, Random r) {
      if (v.isIntegerValue() && r.nextInt(4) != 0) {
        return r.nextBoolean()
            ? MsgpackValue.newInteger(pick(r))
            : MsgpackValue.newInteger(v.asIntegerValue().toLong() + r.nextInt(5) - 2);
      }
      if (v.isStringValue() && r.nextInt(3) != 0) {
        return switch (r.nextInt(3)) {
          case 0 -> MsgpackValue.newString("");
          case 1 -> MsgpackValue.newString("x" + r.nextInt(1000));
          default -> MsgpackValue.newString("z".repeat(r.nextInt(300)));
        };
      }
      if (v.isBinaryValue() && r.nextInt(3) != 0) {
        byte[] bytes = v.asBinaryValue().asByteArray();
        byte[] out = Arrays.copyOf(bytes, Math.max(0, bytes.length + r.nextInt(9) - 4));
        if (out.length > 0) {
          out[r.nextInt(out.length)] = (byte) r.nextInt(256);
        }
        return MsgpackValue.newBinary(out);
      }
      if (v.isArrayValue() && r.nextInt(3) != 0) {
        List<MsgpackValue> list = new ArrayList<>(v.asArrayValue().list());
        switch (r.nextInt(3)) {
          case 0 -> {
            if (!list.isEmpty()) {
              list.remove(r.nextInt(list.size()));
            }
          }
          case 1 -> {
            if (!list.isEmpty()) {
              list.add(list.get(r.nextInt(list.size())));
            } else {
              list.add(MsgpackValue.newInteger(pick(r)));
            }
          }
          default -> list.clear();
        }
        return MsgpackValue.newArray(list);
      }
      if (v.isMapValue() && r.nextInt(3) != 0) {
        Map<MsgpackValue, MsgpackValue> map = new LinkedHashMap<>(v.asMapValue().map());
        if (!map.isEmpty()) {
          MsgpackValue key = new ArrayList<>(map.keySet()).get(r.nextInt(map.size()));
          if (r.nextBoolean()) {
            map.remove(key);
          } else {
            map.put(key, MsgpackValue.newNil());
          }
        }
        return MsgpackValue.newMap(map);
      }
      return switch (r.nextInt(6)) {
        case 0 -> MsgpackValue.newNil();
        case 1 -> MsgpackValue.newBoolean(r.nextBoolean());
        case 2 -> MsgpackValue.newInteger(pick(r));
        case 3 -> MsgpackValue.newString("bad");
        case 4 -> MsgpackValue.newArray(MsgpackValue.newInteger(pick(r)));
        default -> MsgpackValue.newFloat(r.nextDouble());
      };
    }
  }
}
