package org.transferqueue.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.transferqueue.codec.MsgpackValue.newArray;
import static org.transferqueue.codec.MsgpackValue.newBoolean;
import static org.transferqueue.codec.MsgpackValue.newInteger;
import static org.transferqueue.codec.MsgpackValue.newNil;
import static org.transferqueue.codec.MsgpackValue.newString;

import java.io.IOException;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
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
import org.transferqueue.server.config.TqConfigs;
import org.transferqueue.storage.simple.StorageUnit;
import org.transferqueue.system.ConfigMapper;
import org.transferqueue.testing.Await;
import org.transferqueue.transport.TransportConfig;

/**
 * Access control of every server role: with a token configured, a connection without it (no HELLO,
 * a HELLO without a token, or with a wrong one) is answered {@code UNAUTHENTICATED} and closed, and
 * the request it carried never runs (the role's state is unchanged); servers bind loopback unless
 * configured otherwise.
 */
@ExtendWith(LeakCheckExtension.class)
class TokenAccessTest {
  private static final String TOKEN = "s3cret-token";

  /** The three ways to arrive without the token; each is followed by a request. */
  private static final List<String> OPENINGS = List.of("no hello", "hello without token", "wrong");

  private static TransportConfig withToken() {
    return TransportConfig.builder().bindPort(0).authToken(TOKEN).build();
  }

  @Test
  void shouldBindLoopbackUnlessConfigured(BufferAllocator allocator) throws IOException {
    assertThat(TransportConfig.builder().build().bindHost()).isEqualTo("127.0.0.1");
    assertThat(ConfigMapper.transport(TqConfigs.parse("network: {}\n").network()).bindHost())
        .isEqualTo("127.0.0.1");
    ControllerServer server =
        ControllerServer.start(
            new Controller(ControllerOptions.defaults()),
            TransportConfig.builder().bindPort(0).build(),
            allocator);
    try {
      assertThat(InetAddress.getByName(server.address().host()).isLoopbackAddress()).isTrue();
    } finally {
      server.close();
    }
  }

  @Test
  void shouldRefuseControllerRequestsWithoutTheTokenBeforeRunningThem(BufferAllocator allocator)
      throws IOException {
    Controller controller = new Controller(ControllerOptions.defaults());
    ControllerServer server = ControllerServer.start(controller, withToken(), allocator);
    try {
      for (String opening : OPENINGS) {
        assertRefused(server.address(), opening, 101, newArray(newString("intruder")), List.of());
      }
      assertThat(controller.listPartitions()).as("no handler ran").isEmpty();

      try (RawFrames.Connection c = new RawFrames.Connection(server.address())) {
        c.write(hello(newString(TOKEN)));
        assertThat(c.read().isError()).isFalse();
        c.write(RawFrames.request(101, 2, newArray(newString("member")), List.of()));
        assertThat(c.read().meta()).isEqualTo(newBoolean(true));
      }
      assertThat(controller.listPartitions()).containsExactly("member");
    } finally {
      server.close();
    }
  }

  @Test
  void shouldRefuseStorageUnitPutsWithoutTheTokenBeforeStoringAnything(BufferAllocator allocator)
      throws IOException {
    BufferAllocator connections = allocator.newChildAllocator("unit-server", 1L << 26);
    StorageUnit unit = new StorageUnit("unit", OptionalLong.empty(), allocator, 1L << 26);
    StorageUnitServer server = StorageUnitServer.start(unit, withToken(), connections);
    try {
      MsgpackValue field =
          newArray(newString("f"), newInteger(0), newString("int64"), newArray(ints(2)));
      MsgpackValue put = newArray(newInteger(0), ints(5), newArray(field));
      for (String opening : OPENINGS) {
        assertRefused(server.address(), opening, 200, put, List.of(new byte[16]));
      }
      assertThat(unit.stats().samples()).as("no cell stored").isZero();
      assertThat(unit.stats().cells()).isZero();
      Await.until(() -> connections.allocatedBytes() == 0, "refused connections' memory freed");
    } finally {
      server.close();
      unit.close();
      connections.close();
    }
  }

  @Test
  void shouldRefuseStoreNodeWritesWithoutTheTokenBeforeStoringAnything(BufferAllocator allocator)
      throws IOException {
    BufferAllocator connections = allocator.newChildAllocator("node-server", 1L << 26);
    EmbeddedObjectStore engine =
        EmbeddedObjectStore.create(allocator, MasterConfig.builder().asyncThreads(1).build());
    assertThat(
            engine.setup(
                StoreConfig.builder()
                    .localHostname("node")
                    .globalSegmentSize(1L << 22)
                    .localBufferSize(1L << 20)
                    .build()))
        .isZero();
    StoreNodeServer server = StoreNodeServer.start(engine, withToken(), connections);
    try {
      MsgpackValue write =
          newArray(
              newBoolean(true),
              newInteger(1),
              newBoolean(true),
              newBoolean(false),
              newArray(newString("intruder")));
      for (String opening : OPENINGS) {
        assertRefused(server.address(), opening, 300, write, List.of(new byte[32]));
      }
      assertThat(engine.isExist("intruder")).as("no object stored").isNotEqualTo(1);
      Await.until(() -> connections.allocatedBytes() == 0, "refused connections' memory freed");
    } finally {
      server.close();
      engine.close();
      connections.close();
    }
  }

  /**
   * Opens a connection the given wrong way, pipelines one request behind it, and checks that every
   * reply is {@code UNAUTHENTICATED} and the server closes the connection.
   */
  private static void assertRefused(
      HostPort address, String opening, int type, MsgpackValue meta, List<byte[]> bodies)
      throws IOException {
    try (RawFrames.Connection c = new RawFrames.Connection(address)) {
      switch (opening) {
        case "no hello" -> {}
        case "hello without token" -> c.write(hello(newNil()));
        default -> c.write(hello(newString("wrong-" + TOKEN)));
      }
      try {
        c.write(RawFrames.request(type, 2, meta, bodies));
      } catch (IOException e) {
        // The server may already have closed after refusing the HELLO.
      }
      List<RawFrames.Reply> replies = new ArrayList<>();
      try {
        RawFrames.Reply reply;
        while ((reply = c.read()) != null) {
          replies.add(reply);
        }
      } catch (IOException e) {
        // A reset instead of an orderly close: the connection is gone either way.
      }
      assertThat(replies).as(opening).isNotEmpty();
      assertThat(replies)
          .as(opening)
          .allSatisfy(
              r -> {
                assertThat(r.isError()).isTrue();
                assertThat(r.errorCode()).isEqualTo(ErrorCode.UNAUTHENTICATED.value());
              });
    }
  }

  private static byte[] hello(MsgpackValue token) {
    return RawFrames.request(1, 1, newArray(token), List.of());
  }

  private static MsgpackValue ints(long... values) {
    List<MsgpackValue> list = new ArrayList<>();
    for (long v : values) {
      list.add(newInteger(v));
    }
    return newArray(list);
  }
}
