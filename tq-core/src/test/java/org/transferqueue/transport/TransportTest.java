package org.transferqueue.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.DeadlineExceededException;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.TqException;
import org.transferqueue.codec.FrameDescriptor;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.NetworkConfig;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.system.ConfigMapper;
import org.transferqueue.testing.Await;

/** Client and server over loopback: bodies, pipelining, deadlines, errors, hostile input, auth. */
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TransportTest {
  private static final int ECHO = 16;
  private static final int NEVER = 17;
  private static final int FAIL = 18;
  private static final int BLOCK = 19;
  private static final int UNKNOWN = 999;
  private static final Duration SHORT = Duration.ofSeconds(1);
  private static final Duration LONG = Duration.ofSeconds(20);

  private static TransportConfig.Builder config() {
    return TransportConfig.builder()
        .connectTimeout(Duration.ofSeconds(5))
        .defaultCallTimeout(LONG)
        .shutdownGracePeriod(Duration.ofSeconds(5));
  }

  /** Echoes metadata and bodies; the reply's bodies are slices of the request's. */
  private static final RequestHandler ECHO_HANDLER =
      RequestHandler.replying(
          r -> {
            List<MemorySegment> bodies = new ArrayList<>();
            for (int i = 0; i < r.bodyCount(); i++) {
              bodies.add(r.body(i));
            }
            return new Reply(r.metadata(), bodies, List.of());
          });

  private static NativeBuffer patterned(BufferAllocator allocator, long length, long seed) {
    NativeBuffer buffer = allocator.allocate(length);
    Random random = new Random(seed);
    MemorySegment s = buffer.segment();
    long i = 0;
    for (; i + 8 <= length; i += 8) {
      s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, random.nextLong());
    }
    for (; i < length; i++) {
      s.set(ValueLayout.JAVA_BYTE, i, (byte) random.nextInt());
    }
    return buffer;
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void shouldReadRequestBodiesWhereTheHandlersAllocatorPlacesThem(BufferAllocator allocator) {
    long[] sizes = {5, 0, 1000, 3};
    AtomicReference<long[]> offsets = new AtomicReference<>();
    // Every body back to back in one buffer; the handler reports each body's offset in it.
    RequestBodyAllocator oneBuffer =
        (metadata, lengths, connection) -> {
          NativeBuffer whole = connection.allocate(Arrays.stream(lengths).sum());
          List<MemorySegment> segments = new ArrayList<>();
          long offset = 0;
          for (long length : lengths) {
            segments.add(whole.segment().asSlice(offset, length));
            offset += length;
          }
          return new RequestBodyAllocator.Placed(segments, List.of(whole));
        };
    RequestHandler offsetsOf =
        RequestHandler.replying(
            r -> {
              long base = r.bodyBuffers().getFirst().segment().address();
              long[] found = new long[r.bodyCount()];
              for (int i = 0; i < found.length; i++) {
                found[i] = r.body(i).address() - base;
              }
              offsets.set(found);
              return new Reply(r.metadata(), List.of(r.body(2)), List.of());
            });
    List<NativeBuffer> sources = new ArrayList<>();
    try (TransportServer server =
            TransportServer.builder(config().build(), allocator)
                .handler(ECHO, offsetsOf, oneBuffer)
                .handler(
                    FAIL,
                    ECHO_HANDLER,
                    (metadata, lengths, connection) -> {
                      throw new TqException(
                          ErrorCode.OUT_OF_MEMORY, "no room for " + lengths.length);
                    })
                .start();
        TransportClient client = new TransportClient(config().build(), allocator)) {
      for (int i = 0; i < sizes.length; i++) {
        sources.add(patterned(allocator, sizes[i], i));
      }
      List<MemorySegment> bodies = sources.stream().map(NativeBuffer::segment).toList();
      try (Response response =
          client.call(server.address(), new Request(ECHO, utf8("m"), bodies))) {
        assertThat(offsets.get()).containsExactly(0, 5, 5, 1005);
        assertThat(response.body(0).mismatch(sources.get(2).segment())).isEqualTo(-1L);
      }
      assertThatThrownBy(() -> client.call(server.address(), new Request(FAIL, utf8("m"), bodies)))
          .isInstanceOf(TqException.class)
          .hasMessageContaining("no room for 4");
      try (Response again = client.call(server.address(), new Request(ECHO, utf8("m"), bodies))) {
        assertThat(again.bodyCount()).as("the connection goes on").isEqualTo(1);
      }
    } finally {
      sources.forEach(NativeBuffer::close);
    }
  }

  @Test
  void shouldEchoSeveralBodiesOfDifferentSizesIncludingEmptyAnd64MiB(BufferAllocator allocator) {
    long[] sizes = {0, 1, 63, 4096, (1 << 20) + 3, 0, 64L << 20};
    List<NativeBuffer> sources = new ArrayList<>();
    try (TransportServer server =
            TransportServer.builder(config().build(), allocator)
                .handler(ECHO, ECHO_HANDLER)
                .start();
        TransportClient client = new TransportClient(config().build(), allocator)) {
      for (int i = 0; i < sizes.length; i++) {
        sources.add(patterned(allocator, sizes[i], i));
      }
      Request request =
          new Request(ECHO, utf8("meta"), sources.stream().map(NativeBuffer::segment).toList());
      try (Response response = client.call(server.address(), request)) {
        assertThat(new String(response.metadata(), StandardCharsets.UTF_8)).isEqualTo("meta");
        assertThat(response.bodyCount()).isEqualTo(sizes.length);
        for (int i = 0; i < sizes.length; i++) {
          assertThat(response.body(i).byteSize()).as("body %d length", i).isEqualTo(sizes[i]);
          assertThat(response.body(i).mismatch(sources.get(i).segment()))
              .as("body %d content", i)
              .isEqualTo(-1L);
        }
        assertThat(response.buffers()).hasSize(sizes.length);
      }
    } finally {
      sources.forEach(NativeBuffer::close);
    }
  }

  @Test
  void shouldReadReplyBodiesStraightIntoCallerSegments(BufferAllocator allocator) {
    try (TransportServer server =
            TransportServer.builder(config().build(), allocator)
                .handler(ECHO, ECHO_HANDLER)
                .start();
        TransportClient client = new TransportClient(config().build(), allocator);
        NativeBuffer a = patterned(allocator, 1000, 1);
        NativeBuffer b = patterned(allocator, 3 << 20, 2);
        NativeBuffer intoA = allocator.allocate(1024);
        NativeBuffer intoB = allocator.allocate(3 << 20)) {
      Request request = Request.of(ECHO, new byte[0], a.segment(), b.segment());
      try (Response response =
          client.call(
              server.address(),
              request,
              BodyDestination.into(List.of(intoA.segment(), intoB.segment())),
              LONG)) {
        assertThat(response.buffers()).isEmpty();
        assertThat(response.body(0).address()).isEqualTo(intoA.segment().address());
        assertThat(response.body(0).byteSize()).isEqualTo(1000);
        assertThat(response.body(1).address()).isEqualTo(intoB.segment().address());
        assertThat(intoA.segment().asSlice(0, 1000).mismatch(a.segment())).isEqualTo(-1L);
        assertThat(intoB.segment().mismatch(b.segment())).isEqualTo(-1L);
      }

      AtomicReference<long[]> seenLengths = new AtomicReference<>();
      BodyAllocator callback =
          (metadata, lengths) -> {
            seenLengths.set(lengths);
            List<NativeBuffer> buffers = new ArrayList<>();
            for (long length : lengths) {
              buffers.add(allocator.allocate(length));
            }
            return buffers;
          };
      try (Response response =
          client.call(server.address(), request, BodyDestination.allocateWith(callback), LONG)) {
        assertThat(seenLengths.get()).containsExactly(1000L, 3L << 20);
        assertThat(response.buffers()).hasSize(2);
        assertThat(response.body(1).mismatch(b.segment())).isEqualTo(-1L);
      }
    }
  }

  @Test
  void shouldFailWithShapeMismatchWhenReplyDoesNotFitCallerSegments(BufferAllocator allocator) {
    try (TransportServer server =
            TransportServer.builder(config().build(), allocator)
                .handler(ECHO, ECHO_HANDLER)
                .start();
        TransportClient client =
            new TransportClient(config().connectionsPerPeer(1).build(), allocator);
        NativeBuffer body = patterned(allocator, 4096, 3);
        NativeBuffer small = allocator.allocate(100)) {
      small.segment().fill((byte) 0x5A);
      Request request = Request.of(ECHO, new byte[0], body.segment());
      Throwable thrown =
          catchThrowable(
              () ->
                  client.call(
                      server.address(),
                      request,
                      BodyDestination.into(List.of(small.segment())),
                      LONG));
      assertThat(thrown).isInstanceOf(TqException.class);
      assertThat(((TqException) thrown).code()).isEqualTo(ErrorCode.SHAPE_MISMATCH);
      assertThat(small.segment().elements(ValueLayout.JAVA_BYTE))
          .allMatch(s -> s.get(ValueLayout.JAVA_BYTE, 0) == 0x5A);
      try (Response response = client.call(server.address(), request)) {
        assertThat(response.body(0).mismatch(body.segment())).isEqualTo(-1L);
      }
      assertThat(client.openConnections(server.address())).isEqualTo(1);
    }
  }

  @Test
  void shouldGrowThePoolWhenManyThreadsShareOneClientBeyondTheServersSlotsPerConnection(
      BufferAllocator allocator) throws Exception {
    int slotsPerConnection = 8;
    int callers = 256;
    int needTogether = 40;
    CountDownLatch together = new CountDownLatch(needTogether);
    RequestHandler gathering =
        RequestHandler.replying(
            r -> {
              together.countDown();
              try {
                if (!together.await(LONG.toSeconds(), TimeUnit.SECONDS)) {
                  throw new TqException(ErrorCode.INTERNAL, "fewer than 40 requests ran at once");
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new TqException(ErrorCode.INTERNAL, "interrupted");
              }
              return new Reply(r.metadata(), List.of(), List.of());
            });
    TransportConfig shared =
        config()
            .connectionsPerPeer(1)
            .maxConcurrentRequestsPerConnection(slotsPerConnection)
            .build();
    try (TransportServer server =
            TransportServer.builder(shared, allocator).handler(BLOCK, gathering).start();
        TransportClient client = new TransportClient(shared, allocator);
        ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<String>> replies = new ArrayList<>();
      for (int i = 0; i < callers; i++) {
        String tag = "caller-" + i;
        replies.add(
            threads.submit(
                () -> {
                  try (Response response =
                      client.call(server.address(), Request.of(BLOCK, utf8(tag)))) {
                    return new String(response.metadata(), StandardCharsets.UTF_8);
                  }
                }));
      }
      for (int i = 0; i < callers; i++) {
        assertThat(replies.get(i).get()).isEqualTo("caller-" + i);
      }
      // One connection would hold the server to 8 requests at once: 40 needed more connections.
      assertThat(client.openConnections(server.address()))
          .isGreaterThan(needTogether / slotsPerConnection)
          .isLessThanOrEqualTo(TransportClient.POOL_GROWTH);
      assertThat(client.outstandingCalls()).isZero();
    }
  }

  @Test
  void shouldCorrelate1000PipelinedCallsFrom32VirtualThreadsOnOneConnection(
      BufferAllocator allocator) throws Exception {
    int calls = 1000;
    int threads = 32;
    AtomicInteger concurrent = new AtomicInteger();
    AtomicInteger maxConcurrent = new AtomicInteger();
    RequestHandler slowEcho =
        (request, responder) -> {
          int now = concurrent.incrementAndGet();
          maxConcurrent.accumulateAndGet(now, Math::max);
          try {
            // Even-numbered calls yield so replies overtake each other.
            if ((request.body(0).get(ValueLayout.JAVA_INT_UNALIGNED, 0) & 1) == 0) {
              Thread.yield();
            }
            ECHO_HANDLER.onRequest(request, responder);
          } finally {
            concurrent.decrementAndGet();
          }
        };
    try (TransportServer server =
            TransportServer.builder(config().build(), allocator).handler(ECHO, slowEcho).start();
        TransportClient client =
            new TransportClient(config().connectionsPerPeer(1).build(), allocator);
        ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      AtomicInteger next = new AtomicInteger();
      List<Future<Integer>> workers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        workers.add(
            pool.submit(
                () -> {
                  int done = 0;
                  int i;
                  while ((i = next.getAndIncrement()) < calls) {
                    try (NativeBuffer body = allocator.allocate(4 + (i % 97))) {
                      body.segment().fill((byte) i);
                      body.segment().set(ValueLayout.JAVA_INT_UNALIGNED, 0, i);
                      Request request = Request.of(ECHO, utf8("call-" + i), body.segment());
                      try (Response response = client.call(server.address(), request)) {
                        assertThat(new String(response.metadata(), StandardCharsets.UTF_8))
                            .isEqualTo("call-" + i);
                        assertThat(response.body(0).mismatch(body.segment())).isEqualTo(-1L);
                      }
                    }
                    done++;
                  }
                  return done;
                }));
      }
      int total = 0;
      for (Future<Integer> worker : workers) {
        total += worker.get();
      }
      assertThat(total).isEqualTo(calls);
      assertThat(client.openConnections(server.address())).isEqualTo(1);
      assertThat(server.openConnections()).isEqualTo(1);
      assertThat(maxConcurrent.get()).as("requests handled concurrently").isGreaterThan(1);
      assertThat(client.outstandingCalls()).isZero();
    }
  }

  @Test
  void shouldFailWithDeadlineExceededAndDiscardLateReplyWithoutTouchingCallerSegments(
      BufferAllocator allocator) {
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch lateReplyWritten = new CountDownLatch(1);
    RequestHandler late =
        (request, responder) -> {
          entered.countDown();
          awaitUninterruptibly(release);
          NativeBuffer body = allocator.allocate(1 << 20);
          body.segment().fill((byte) 0x7F);
          responder.reply(Reply.of(new byte[0], body.segment()).releasing(body));
          lateReplyWritten.countDown();
        };
    try (TransportServer server =
            TransportServer.builder(config().build(), allocator)
                .handler(ECHO, ECHO_HANDLER)
                .handler(NEVER, late)
                .start();
        TransportClient client =
            new TransportClient(config().connectionsPerPeer(1).build(), allocator);
        NativeBuffer destination = allocator.allocate(1 << 20);
        NativeBuffer body = patterned(allocator, 10_000, 4)) {
      destination.segment().fill((byte) 0);
      // Warm the connection so the deadline below covers only the call itself.
      client.call(server.address(), Request.of(ECHO, new byte[0])).close();
      Throwable thrown =
          catchThrowable(
              () ->
                  client.call(
                      server.address(),
                      Request.of(NEVER, new byte[0]),
                      BodyDestination.into(List.of(destination.segment())),
                      SHORT));
      assertThat(thrown).isInstanceOf(DeadlineExceededException.class);
      assertThat(((TqException) thrown).code()).isEqualTo(ErrorCode.DEADLINE_EXCEEDED);
      awaitUninterruptibly(entered);

      // The connection still works, and the late reply is drained, not written into `destination`.
      release.countDown();
      awaitUninterruptibly(lateReplyWritten);
      for (int i = 0; i < 3; i++) {
        try (Response response =
            client.call(server.address(), Request.of(ECHO, utf8("after"), body.segment()))) {
          assertThat(response.body(0).mismatch(body.segment())).isEqualTo(-1L);
        }
      }
      assertThat(client.openConnections(server.address())).isEqualTo(1);
      assertThat(destination.segment().elements(ValueLayout.JAVA_LONG))
          .allMatch(s -> s.get(ValueLayout.JAVA_LONG, 0) == 0L);
    }
  }

  @Test
  void shouldMeetTheDeadlineWhileBytesAreInFlightByClosingOnlyThatConnection(
      BufferAllocator allocator) throws Exception {
    CountDownLatch done = new CountDownLatch(1);
    ServerSocketChannel fake = ServerSocketChannel.open();
    try {
      fake.bind(new InetSocketAddress("127.0.0.1", 0));
      HostPort address =
          new HostPort("127.0.0.1", ((InetSocketAddress) fake.getLocalAddress()).getPort());
      // A peer that answers HELLO, then stalls: it never reads the first request (the client's
      // writer blocks mid-frame) and answers the second with half a body (the reader blocks).
      Thread peer =
          Thread.ofVirtual()
              .start(
                  () -> {
                    List<RawConnection> held = new ArrayList<>();
                    try {
                      RawConnection first = new RawConnection(fake.accept());
                      held.add(first);
                      answerHello(first);
                      RawConnection second = new RawConnection(fake.accept());
                      held.add(second);
                      answerHello(second);
                      long id = second.readReply().id();
                      byte[] reply =
                          RawConnection.frame(
                              ECHO,
                              FrameDescriptor.FLAG_RESPONSE,
                              id,
                              new long[] {1 << 20},
                              new byte[0],
                              new byte[1 << 20]);
                      second.write(java.util.Arrays.copyOf(reply, reply.length / 2));
                      awaitUninterruptibly(done);
                      for (RawConnection c : held) {
                        c.close();
                      }
                    } catch (IOException e) {
                      // The test closed the fake server socket: nothing more to play.
                      held.forEach(RawConnection::closeQuietly);
                    }
                  });
      try (TransportClient client =
              new TransportClient(config().connectionsPerPeer(1).build(), allocator);
          NativeBuffer big = allocator.allocate(64L << 20);
          NativeBuffer destination = allocator.allocate(1 << 20)) {
        Throwable writeStall =
            catchThrowable(
                () ->
                    client.call(
                        address,
                        Request.of(ECHO, new byte[0], big.segment()),
                        BodyDestination.into(List.of()),
                        SHORT));
        assertThat(writeStall).isInstanceOf(DeadlineExceededException.class);

        destination.segment().fill((byte) 0x11);
        Throwable readStall =
            catchThrowable(
                () ->
                    client.call(
                        address,
                        Request.of(ECHO, new byte[0]),
                        BodyDestination.into(List.of(destination.segment())),
                        SHORT));
        assertThat(readStall).isInstanceOf(DeadlineExceededException.class);
        assertThat(client.outstandingCalls()).isZero();
      } finally {
        done.countDown();
        fake.close();
        peer.join();
      }
    } finally {
      fake.close();
    }
  }

  private static void answerHello(RawConnection connection) throws IOException {
    long id = connection.readReply().id();
    connection.write(
        RawConnection.frame(
            MessageDescriptor.TYPE_HELLO,
            FrameDescriptor.FLAG_RESPONSE,
            id,
            new long[0],
            new byte[0]));
  }

  @Test
  void shouldRethrowRemoteErrorsWithTheirCodeAndMessage(BufferAllocator allocator) {
    RequestHandler failing =
        (request, responder) -> {
          String what = new String(request.metadata(), StandardCharsets.UTF_8);
          switch (what) {
            case "tq" -> throw new TqException(ErrorCode.UNKNOWN_KEY, "key=sample-7 not found");
            case "bug" -> throw new IllegalStateException("broken invariant x=3");
            case "deadline" -> responder.fail(ErrorCode.DEADLINE_EXCEEDED, "store busy");
            default -> responder.fail(ErrorCode.STORAGE_ERROR, "disk full on unit=2");
          }
        };
    try (TransportServer server =
            TransportServer.builder(config().build(), allocator).handler(FAIL, failing).start();
        TransportClient client = new TransportClient(config().build(), allocator)) {
      HostPort address = server.address();
      TqException tq = callFailure(client, address, Request.of(FAIL, utf8("tq")));
      assertThat(tq.code()).isEqualTo(ErrorCode.UNKNOWN_KEY);
      assertThat(tq.getMessage()).contains("key=sample-7 not found");

      TqException bug = callFailure(client, address, Request.of(FAIL, utf8("bug")));
      assertThat(bug.code()).isEqualTo(ErrorCode.INTERNAL);
      assertThat(bug.getMessage()).contains("broken invariant x=3");

      TqException deadline = callFailure(client, address, Request.of(FAIL, utf8("deadline")));
      assertThat(deadline).isInstanceOf(DeadlineExceededException.class);

      TqException storage = callFailure(client, address, Request.of(FAIL, utf8("other")));
      assertThat(storage.code()).isEqualTo(ErrorCode.STORAGE_ERROR);
      assertThat(storage.getMessage()).contains("disk full on unit=2");
      assertThat(server.errorCounts()).containsKey("handler:java.lang.IllegalStateException");
    }
  }

  @Test
  void shouldFailOnlyTheCallWhoseBodiesTheWriterCannotRead(BufferAllocator allocator) {
    RequestHandler confinedReply =
        (request, responder) -> {
          // Test-only: memory the writer thread may not touch (confined to this handler thread).
          try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            responder.reply(Reply.of(new byte[0], arena.allocate(128)));
          }
        };
    try (TransportServer server =
            TransportServer.builder(config().build(), allocator)
                .handler(ECHO, ECHO_HANDLER)
                .handler(FAIL, confinedReply)
                .start();
        TransportClient client =
            new TransportClient(config().connectionsPerPeer(1).build(), allocator);
        NativeBuffer body = patterned(allocator, 777, 8);
        java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
      TqException replyError = callFailure(client, server.address(), Request.of(FAIL, new byte[0]));
      assertThat(replyError.code()).isEqualTo(ErrorCode.INTERNAL);
      assertThat(replyError.getMessage()).contains("cannot be read by the writer thread");

      TqException requestError =
          callFailure(client, server.address(), Request.of(ECHO, new byte[0], arena.allocate(64)));
      assertThat(requestError.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);

      try (Response response =
          client.call(server.address(), Request.of(ECHO, new byte[0], body.segment()))) {
        assertThat(response.body(0).mismatch(body.segment())).isEqualTo(-1L);
      }
      assertThat(client.openConnections(server.address())).isEqualTo(1);
    }
  }

  @Test
  void shouldAnswerUnknownTypeWithErrorAndKeepTheConnection(BufferAllocator allocator) {
    try (TransportServer server =
            TransportServer.builder(config().build(), allocator)
                .handler(ECHO, ECHO_HANDLER)
                .start();
        TransportClient client =
            new TransportClient(config().connectionsPerPeer(1).build(), allocator);
        NativeBuffer body = patterned(allocator, 5000, 5)) {
      TqException error =
          callFailure(client, server.address(), Request.of(UNKNOWN, new byte[0], body.segment()));
      assertThat(error.code()).isEqualTo(ErrorCode.UNSUPPORTED_OPERATION);
      assertThat(error.getMessage()).contains("type=" + UNKNOWN);
      try (Response response =
          client.call(server.address(), Request.of(ECHO, new byte[0], body.segment()))) {
        assertThat(response.body(0).mismatch(body.segment())).isEqualTo(-1L);
      }
      assertThat(client.openConnections(server.address())).isEqualTo(1);
    }
  }

  @Test
  void shouldAnswerUnknownVersionWithErrorReplyThenClose(BufferAllocator allocator)
      throws IOException {
    try (TransportServer server =
            TransportServer.builder(config().build(), allocator)
                .handler(ECHO, ECHO_HANDLER)
                .start();
        RawConnection raw = new RawConnection(server.address())) {
      raw.write(RawConnection.header(7, ECHO, 0, 42, 0, 0));
      RawConnection.RawReply reply = raw.readReply();
      assertThat(reply.isError()).isTrue();
      assertThat(reply.id()).isEqualTo(42);
      assertThat(reply.errorCode()).isEqualTo(ErrorCode.UNSUPPORTED_VERSION.value());
      assertThat(reply.errorMessage()).contains("version=7");
      assertThat(raw.readUntilClosed()).isZero();
    }
  }

  @Test
  void shouldSurviveLyingLengthsTruncatedFramesAndRandomBytes(BufferAllocator allocator)
      throws IOException {
    TransportConfig limits =
        config().maxFrameBytes(16L << 20).maxMetadataBytes(64 * 1024).maxBodySegments(8).build();
    long seed = 0x5EED_7A3CL;
    try (TransportServer server =
            TransportServer.builder(limits, allocator).handler(ECHO, ECHO_HANDLER).start();
        TransportClient client = new TransportClient(limits, allocator);
        NativeBuffer body = patterned(allocator, 1 << 20, 6)) {
      HostPort address = server.address();
      // Lengths over the limits: an error reply naming them, then the connection closes.
      assertRejectedAndClosed(
          address, RawConnection.header(1, ECHO, 0, 1, 0, 1L << 62), ErrorCode.FRAME_TOO_LONG);
      assertRejectedAndClosed(
          address, RawConnection.header(1, ECHO, 0, 2, 0xFFFF_FFFFL, 0), ErrorCode.FRAME_TOO_LONG);
      assertRejectedAndClosed(
          address, RawConnection.header(1, ECHO, 0, 3, 100, -1L), ErrorCode.FRAME_TOO_LONG);

      // A body table that lies about the body, too many segments, or a segment over the limit:
      // error reply, the connection goes on.
      try (RawConnection raw = new RawConnection(address)) {
        raw.write(RawConnection.frame(ECHO, 4, new long[] {10, 10}, new byte[0], new byte[5]));
        assertThat(raw.readReply().errorCode()).isEqualTo(ErrorCode.PROTOCOL_ERROR.value());
        raw.write(RawConnection.frame(ECHO, 5, new long[9], new byte[0]));
        assertThat(raw.readReply().errorCode()).isEqualTo(ErrorCode.FRAME_TOO_LONG.value());
        raw.write(RawConnection.frame(ECHO, 6, new long[] {1L << 40}, new byte[0]));
        assertThat(raw.readReply().errorCode()).isEqualTo(ErrorCode.FRAME_TOO_LONG.value());
        raw.write(RawConnection.frame(ECHO, 7, new long[] {3}, utf8("ok"), new byte[] {1, 2, 3}));
        RawConnection.RawReply echoed = raw.readReply();
        assertThat(echoed.isError()).isFalse();
        assertThat(echoed.id()).isEqualTo(7);
        assertThat(new String(echoed.meta(), StandardCharsets.UTF_8)).isEqualTo("ok");
      }

      // Truncated frames: the peer goes away mid-header, mid-metadata, mid-body.
      byte[] good = RawConnection.frame(ECHO, 8, new long[] {1000}, new byte[0], new byte[1000]);
      for (int cut : new int[] {5, FrameDescriptor.HEADER_LENGTH + 3, good.length - 10}) {
        try (RawConnection raw = new RawConnection(address)) {
          raw.write(java.util.Arrays.copyOf(good, cut));
          raw.channel.shutdownOutput();
          assertThat(raw.readUntilClosed()).isZero();
        }
      }

      // Random bytes.
      Random random = new Random(seed);
      for (int i = 0; i < 30; i++) {
        byte[] junk = new byte[1 + random.nextInt(4096)];
        random.nextBytes(junk);
        if (random.nextBoolean()) {
          // Valid magic and version, random rest: exercises the length checks.
          System.arraycopy(
              RawConnection.header(1, ECHO, 0, 0, 0, 0), 0, junk, 0, Math.min(6, junk.length));
        }
        try (RawConnection raw = new RawConnection(address)) {
          raw.write(junk);
          raw.channel.shutdownOutput();
          raw.readUntilClosed();
        }
      }

      // A good client still gets served.
      try (Response response =
          client.call(address, Request.of(ECHO, utf8("still here"), body.segment()))) {
        assertThat(response.body(0).mismatch(body.segment())).as("seed=%d", seed).isEqualTo(-1L);
      }
      assertThat(server.errorCount()).as("seed=%d", seed).isGreaterThanOrEqualTo(3);
      Await.until(() -> server.openConnections() == 1, "hostile connections closed, seed=" + seed);
    }
  }

  @Test
  void shouldRequireTheTokenWhenOneIsConfigured(BufferAllocator allocator) throws IOException {
    AtomicInteger handled = new AtomicInteger();
    RequestHandler counting =
        (request, responder) -> {
          handled.incrementAndGet();
          ECHO_HANDLER.onRequest(request, responder);
        };
    TransportConfig serverConfig = config().authToken("s3cret-token").build();
    try (TransportServer server =
            TransportServer.builder(serverConfig, allocator).handler(ECHO, counting).start();
        TransportClient good =
            new TransportClient(config().authToken("s3cret-token").build(), allocator);
        TransportClient wrong =
            new TransportClient(config().authToken("guess").build(), allocator);
        TransportClient none = new TransportClient(config().build(), allocator)) {
      HostPort address = server.address();
      try (Response response = good.call(address, Request.of(ECHO, utf8("hi")))) {
        assertThat(response.metadata()).isEqualTo(utf8("hi"));
      }
      assertThat(callFailure(wrong, address, Request.of(ECHO, utf8("x"))).code())
          .isEqualTo(ErrorCode.UNAUTHENTICATED);
      assertThat(callFailure(none, address, Request.of(ECHO, utf8("x"))).code())
          .isEqualTo(ErrorCode.UNAUTHENTICATED);
      // A raw peer that skips HELLO is refused before its request runs.
      try (RawConnection raw = new RawConnection(address)) {
        raw.write(RawConnection.frame(ECHO, 9, new long[0], utf8("sneak")));
        RawConnection.RawReply reply = raw.readReply();
        assertThat(reply.errorCode()).isEqualTo(ErrorCode.UNAUTHENTICATED.value());
        assertThat(raw.readUntilClosed()).isZero();
      }
      assertThat(handled.get()).isEqualTo(1);
    }
  }

  @Test
  void shouldFailWithConnectionFailedWhenNothingListens(BufferAllocator allocator)
      throws IOException {
    int port;
    try (ServerSocketChannel probe = ServerSocketChannel.open()) {
      probe.bind(new InetSocketAddress("127.0.0.1", 0));
      port = ((InetSocketAddress) probe.getLocalAddress()).getPort();
    }
    try (TransportClient client = new TransportClient(config().build(), allocator)) {
      TqException error =
          callFailure(client, new HostPort("127.0.0.1", port), Request.of(ECHO, new byte[0]));
      assertThat(error.code()).isEqualTo(ErrorCode.CONNECTION_FAILED);
      assertThat(error.getMessage()).contains("127.0.0.1:" + port);
    }
  }

  @Test
  void shouldFailInFlightCallsWhenTheServerCloses(BufferAllocator allocator) {
    CountDownLatch entered = new CountDownLatch(2);
    RequestHandler blocking =
        (request, responder) -> {
          entered.countDown();
          try {
            new CountDownLatch(1).await();
          } catch (InterruptedException e) {
            responder.fail(ErrorCode.CLOSED, "interrupted");
          }
        };
    TransportServer server =
        TransportServer.builder(config().shutdownGracePeriod(Duration.ZERO).build(), allocator)
            .handler(BLOCK, blocking)
            .start();
    try (TransportClient client = new TransportClient(config().build(), allocator)) {
      CompletableFuture<Response> first =
          client.callAsync(server.address(), Request.of(BLOCK, new byte[0]));
      CompletableFuture<Response> second =
          client.callAsync(server.address(), Request.of(BLOCK, new byte[0]));
      awaitUninterruptibly(entered);
      server.close();
      for (CompletableFuture<Response> call : List.of(first, second)) {
        TqException error = Errors.unwrap(catchThrowable(call::join));
        assertThat(error.code()).isIn(ErrorCode.CONNECTION_FAILED, ErrorCode.CLOSED);
      }
      // A failed call's future completes on its own thread, possibly before the connection's
      // bookkeeping forgets the call.
      Await.until(() -> client.outstandingCalls() == 0, "no outstanding calls after server close");
      assertThat(callFailure(client, server.address(), Request.of(BLOCK, new byte[0])).code())
          .isEqualTo(ErrorCode.CONNECTION_FAILED);
    } finally {
      server.close();
    }
  }

  @Test
  void shouldCompleteInFlightCallsWithinTheGracePeriodWhenTheServerCloses(BufferAllocator allocator)
      throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    RequestHandler waiting =
        (request, responder) -> {
          entered.countDown();
          awaitUninterruptibly(release);
          responder.reply(Reply.of(utf8("done")));
        };
    TransportServer server =
        TransportServer.builder(config().shutdownGracePeriod(LONG).build(), allocator)
            .handler(BLOCK, waiting)
            .start();
    HostPort address = server.address();
    try (TransportClient client = new TransportClient(config().build(), allocator)) {
      CompletableFuture<Response> call = client.callAsync(address, Request.of(BLOCK, new byte[0]));
      awaitUninterruptibly(entered);
      Thread closer = Thread.ofVirtual().start(server::close);
      Await.until(() -> !accepts(address), "the server stops accepting");
      release.countDown();
      try (Response response = call.join()) {
        assertThat(response.metadata()).isEqualTo(utf8("done"));
      }
      closer.join();
      // A probe connection accepted while the server was closing is force-closed on its own
      // thread, possibly just after close() returns.
      Await.until(() -> server.openConnections() == 0, "every connection closed");
    } finally {
      release.countDown();
      server.close();
    }
  }

  private static boolean accepts(HostPort address) {
    try (java.nio.channels.SocketChannel probe =
        java.nio.channels.SocketChannel.open(
            new InetSocketAddress(address.host(), address.port()))) {
      return probe.isConnected();
    } catch (IOException e) {
      return false;
    }
  }

  @Test
  void shouldFailOutstandingCallsWithClosedWhenTheClientCloses(BufferAllocator allocator) {
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    RequestHandler waiting =
        (request, responder) -> {
          entered.countDown();
          awaitUninterruptibly(release);
          responder.reply(Reply.empty());
        };
    try (TransportServer server =
        TransportServer.builder(config().build(), allocator).handler(BLOCK, waiting).start()) {
      TransportClient client = new TransportClient(config().build(), allocator);
      CompletableFuture<Response> call =
          client.callAsync(server.address(), Request.of(BLOCK, new byte[0]));
      awaitUninterruptibly(entered);
      client.close();
      TqException error = Errors.unwrap(catchThrowable(call::join));
      assertThat(error.code()).isEqualTo(ErrorCode.CLOSED);
      assertThat(callFailure(client, server.address(), Request.of(BLOCK, new byte[0])).code())
          .isEqualTo(ErrorCode.CLOSED);
      release.countDown();
    }
  }

  @Test
  void shouldRejectOversizedRequestsBeforeSendingAndRequestsOverTheConnectionLimit(
      BufferAllocator allocator) {
    // Over the socket: shared-memory bodies live in the server's pool, not the connection's
    // allocator.
    TransportConfig small =
        config()
            .sharedMemory(false)
            .maxFrameBytes(1 << 20)
            .connectionMemoryLimitBytes(256 * 1024)
            .build();
    try (TransportServer server =
            TransportServer.builder(small, allocator).handler(ECHO, ECHO_HANDLER).start();
        TransportClient client = new TransportClient(small, allocator);
        NativeBuffer huge = allocator.allocate(2 << 20);
        NativeBuffer big = allocator.allocate(512 * 1024);
        NativeBuffer fits = patterned(allocator, 1000, 7)) {
      TqException tooLong =
          callFailure(client, server.address(), Request.of(ECHO, new byte[0], huge.segment()));
      assertThat(tooLong).isInstanceOf(ProtocolException.class);
      assertThat(tooLong.code()).isEqualTo(ErrorCode.FRAME_TOO_LONG);
      assertThat(client.openConnections(server.address())).isZero();

      TqException outOfMemory =
          callFailure(client, server.address(), Request.of(ECHO, new byte[0], big.segment()));
      assertThat(outOfMemory.code()).isEqualTo(ErrorCode.OUT_OF_MEMORY);
      try (Response response =
          client.call(server.address(), Request.of(ECHO, new byte[0], fits.segment()))) {
        assertThat(response.body(0).mismatch(fits.segment())).isEqualTo(-1L);
      }
    }
  }

  @Test
  void shouldBuildConfigFromNetworkSectionAndRejectBadValues() {
    NetworkConfig network =
        NetworkConfig.builder().bindHost("0.0.0.0").authToken("tok").maxFrameBytes(1 << 24).build();
    TransportConfig config = ConfigMapper.transport(network);
    assertThat(config.bindHost()).isEqualTo("0.0.0.0");
    assertThat(config.authToken()).contains("tok");
    assertThat(config.maxFrameBytes()).isEqualTo(1 << 24);
    assertThat(config.toString()).doesNotContain("tok");
    assertThatThrownBy(
            () -> TransportConfig.builder().maxBodySegments(0).connectionsPerPeer(0).build())
        .isInstanceOf(TqException.class)
        .hasMessageContaining("maxBodySegments=0")
        .hasMessageContaining("connectionsPerPeer=0");
    assertThatThrownBy(() -> Request.of(MessageDescriptor.TYPE_HELLO, new byte[0]))
        .hasMessageContaining("message type=1");
  }

  private static void assertRejectedAndClosed(HostPort address, byte[] bytes, ErrorCode expected)
      throws IOException {
    try (RawConnection raw = new RawConnection(address)) {
      raw.write(bytes);
      RawConnection.RawReply reply = raw.readReply();
      assertThat(reply.isError()).isTrue();
      assertThat(reply.errorCode()).as(reply.errorMessage()).isEqualTo(expected.value());
      assertThat(raw.readUntilClosed()).isZero();
    }
  }

  private static TqException callFailure(
      TransportClient client, HostPort address, Request request) {
    Throwable thrown = catchThrowable(() -> client.call(address, request).close());
    assertThat(thrown).isInstanceOf(TqException.class);
    return (TqException) thrown;
  }

  private static void awaitUninterruptibly(CountDownLatch latch) {
    boolean interrupted = false;
    while (true) {
      try {
        latch.await();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
