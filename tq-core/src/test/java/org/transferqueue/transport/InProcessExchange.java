package org.transferqueue.transport;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.NativeBuffer;

/**
 * Answers one request with a server's registered handler in this thread, without sockets: the
 * request's bodies are copied into buffers of the given allocator (as the server's reader would
 * receive them), the handler runs, and its reply, or the error a client would see for its error
 * reply, comes back. The protocol tests use it to check every message type's encoding and decoding.
 *
 * <pre>{@code
 * try (InProcessExchange reply = InProcessExchange.call(server, type, metadata, bodies, allocator)) {
 *   MetaCodec.decode(reply.metadata(), ...);
 * }
 * }</pre>
 *
 * <p>Closing releases the reply's resources and the request's buffers. Not thread-safe.
 */
public final class InProcessExchange implements AutoCloseable {
  private static final long REPLY_WAIT_SECONDS = 30;

  private final Reply reply;
  private final List<NativeBuffer> requestBodies;
  private boolean closed;

  private InProcessExchange(Reply reply, List<NativeBuffer> requestBodies) {
    this.reply = reply;
    this.requestBodies = requestBodies;
  }

  /**
   * Runs the handler of {@code type} on a request.
   *
   * @param server the server whose handler answers
   * @param type the message type
   * @param metadata the request's metadata
   * @param bodies the request's bodies, copied
   * @param allocator where the copies of the bodies live
   * @return the reply; the caller closes it
   * @throws TqException as a client would see the error reply ({@code UNSUPPORTED_OPERATION} for a
   *     type without handler, the handler's code otherwise, {@code INTERNAL} for other failures)
   */
  public static InProcessExchange call(
      TransportServer server,
      int type,
      byte[] metadata,
      List<MemorySegment> bodies,
      BufferAllocator allocator) {
    String where = "in-process type=" + type;
    RequestHandler handler = server.handler(type);
    if (handler == null) {
      throw Errors.remote(
          ErrorCode.UNSUPPORTED_OPERATION, "no handler for message type " + type, where);
    }
    List<NativeBuffer> copies = new ArrayList<>();
    try {
      for (MemorySegment body : bodies) {
        NativeBuffer copy = allocator.allocate(body.byteSize());
        copies.add(copy);
        MemorySegment.copy(body, 0, copy.segment(), 0, body.byteSize());
      }
      ReceivedRequest request =
          new ReceivedRequest(
              type,
              1L,
              metadata,
              copies,
              new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      CompletableFuture<Reply> answer = new CompletableFuture<>();
      Responder responder =
          new Responder() {
            @Override
            public boolean reply(Reply reply) {
              if (answer.complete(reply)) {
                return true;
              }
              closeAll(reply.resources());
              return false;
            }

            @Override
            public boolean fail(TqException error) {
              return answer.completeExceptionally(error);
            }
          };
      try {
        handler.onRequest(request, responder);
      } catch (TqException e) {
        responder.fail(e);
      } catch (RuntimeException e) {
        responder.fail(
            new TqException(
                ErrorCode.INTERNAL, "request handler failed: " + Errors.describe(e), e));
      }
      return new InProcessExchange(await(answer, where), copies);
    } catch (RuntimeException | Error e) {
      copies.forEach(NativeBuffer::close);
      throw e;
    }
  }

  /**
   * Answers a request as {@link TransportClient#callAsync(org.transferqueue.config.HostPort,
   * Request, BodyDestination, java.time.Duration)} would: the reply's bodies are copied into the
   * call's destination exactly as the client's reader would place them, and the response owns what
   * the destination allocated.
   *
   * @param server the server whose handler answers
   * @param request the request
   * @param destination where the reply's bodies go
   * @param allocator where the server side's copies of the request bodies live
   * @return the completed response, or the typed error a client would see
   */
  public static CompletableFuture<Response> respond(
      TransportServer server,
      Request request,
      BodyDestination destination,
      BufferAllocator allocator) {
    try (InProcessExchange exchange =
        call(server, request.type(), request.metadata(), request.bodies(), allocator)) {
      List<MemorySegment> bodies = exchange.bodies();
      long[] lengths = bodies.stream().mapToLong(MemorySegment::byteSize).toArray();
      Destinations.Prepared prepared =
          Destinations.prepare(destination, new BodyTable(lengths, exchange.metadata()));
      try {
        for (int i = 0; i < lengths.length; i++) {
          MemorySegment.copy(bodies.get(i), 0, prepared.segments().get(i), 0, lengths[i]);
        }
      } catch (RuntimeException e) {
        prepared.owned().forEach(NativeBuffer::close);
        throw e;
      }
      return CompletableFuture.completedFuture(
          new Response(exchange.metadata(), prepared.segments(), prepared.owned()));
    } catch (TqException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * A response as the client's reader builds it: {@code metadata} and bodies read into {@code
   * buffers}, which the response owns. For tests of replies a real server would not send.
   *
   * @param metadata the reply's application metadata
   * @param buffers one buffer per body, each body its whole buffer; owned by the response
   * @return the response; closing it closes the buffers
   */
  public static Response response(byte[] metadata, List<NativeBuffer> buffers) {
    return new Response(metadata, buffers.stream().map(NativeBuffer::segment).toList(), buffers);
  }

  private static Reply await(CompletableFuture<Reply> answer, String where) {
    try {
      return answer.get(REPLY_WAIT_SECONDS, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      TqException error = Errors.unwrap(e);
      throw Errors.remote(error.code(), error.getMessage(), where);
    } catch (TimeoutException e) {
      throw new TqException(ErrorCode.DEADLINE_EXCEEDED, where + ": no reply", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TqException(ErrorCode.INTERNAL, where + ": interrupted", e);
    }
  }

  /** The reply's metadata. */
  public byte[] metadata() {
    return reply.metadata();
  }

  /** The reply's bodies, valid until {@link #close()}. */
  public List<MemorySegment> bodies() {
    return reply.bodies();
  }

  /** The reply as a client's response over the reply's bodies (not owning them). */
  public Response response() {
    return new Response(reply.metadata(), reply.bodies(), List.of());
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    closeAll(reply.resources());
    requestBodies.forEach(NativeBuffer::close);
  }

  private static void closeAll(List<AutoCloseable> resources) {
    for (AutoCloseable resource : resources) {
      try {
        resource.close();
      } catch (Exception e) {
        throw new TqException(ErrorCode.INTERNAL, "closing a reply resource failed: " + e, e);
      }
    }
  }
}
