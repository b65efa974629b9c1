package org.transferqueue.transport;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.codec.FrameDescriptor;
import org.transferqueue.memory.NativeBuffer;

/**
 * One request being handled on a server connection, and its {@link Responder}.
 *
 * <p>Design note. The request's body buffers are released when two things have happened, in either
 * order: the handler has returned, and the answer has been written or dropped. {@code parts} counts
 * them down from 2; the thread that takes it to 0 releases the bodies, the connection's concurrency
 * permit and its hold on the connection. {@code answered} makes the first answer win.
 */
final class ServerExchange implements Responder {
  private final ServerConnection connection;
  private final ReceivedRequest request;
  private final AtomicBoolean answered = new AtomicBoolean();
  private final AtomicInteger parts = new AtomicInteger(2);
  private volatile Thread handlerThread;

  ServerExchange(ServerConnection connection, ReceivedRequest request) {
    this.connection = connection;
    this.request = request;
  }

  ReceivedRequest request() {
    return request;
  }

  void handlerThread(Thread thread) {
    this.handlerThread = thread;
  }

  /** Interrupts the handler's thread, if it is still running. */
  void interrupt() {
    Thread thread = handlerThread;
    if (thread != null) {
      thread.interrupt();
    }
  }

  @Override
  public boolean reply(Reply reply) {
    if (!answered.compareAndSet(false, true)) {
      closeAll(reply.resources());
      return false;
    }
    byte[] section;
    try {
      section = connection.checkedReplySection(reply);
    } catch (TqException e) {
      closeAll(reply.resources());
      return send(
          FrameDescriptor.FLAG_RESPONSE | FrameDescriptor.FLAG_ERROR,
          ControlMessages.errorSection(e.code(), e.getMessage()),
          List.of(),
          List.of());
    }
    ServerSharedMemory shared = connection.shared();
    if (shared != null) {
      ServerSharedMemory.SharedReply sharedReply;
      try {
        sharedReply = shared.share(reply);
      } catch (RuntimeException e) {
        closeAll(reply.resources());
        TqException error =
            e instanceof TqException tq
                ? tq
                : new TqException(
                    ErrorCode.INTERNAL, "sharing the reply bodies failed: " + Errors.describe(e));
        return send(
            FrameDescriptor.FLAG_RESPONSE | FrameDescriptor.FLAG_ERROR,
            ControlMessages.errorSection(error.code(), error.getMessage()),
            List.of(),
            List.of());
      }
      if (sharedReply != null) {
        // The bodies are in the pool now. Copied: the reply's own resources can go as soon as the
        // small frame is written. Leased in place: the lease holds them until the client releases.
        return send(
            FrameDescriptor.FLAG_RESPONSE | FrameDescriptor.FLAG_SHARED_BODY,
            sharedReply.section(),
            List.of(),
            sharedReply.keepsResources() ? List.of() : reply.resources());
      }
    }
    return send(FrameDescriptor.FLAG_RESPONSE, section, reply.bodies(), reply.resources());
  }

  @Override
  public boolean fail(TqException error) {
    if (!answered.compareAndSet(false, true)) {
      return false;
    }
    return send(
        FrameDescriptor.FLAG_RESPONSE | FrameDescriptor.FLAG_ERROR,
        ControlMessages.errorSection(error.code(), error.getMessage()),
        List.of(),
        List.of());
  }

  /** The connection closed before an answer: counts as answered and dropped. */
  void drop() {
    if (answered.compareAndSet(false, true)) {
      partDone();
    }
  }

  /** Called once by the handler's thread when the handler has returned or thrown. */
  void handlerReturned() {
    partDone();
  }

  boolean isAnswered() {
    return answered.get();
  }

  private boolean send(
      int flags,
      byte[] section,
      List<java.lang.foreign.MemorySegment> bodies,
      List<AutoCloseable> resources) {
    FrameWriter.Listener listener =
        new FrameWriter.Listener() {
          @Override
          public boolean onWriteStart() {
            return true;
          }

          @Override
          public void onWriteEnd(Throwable failure) {
            closeAll(resources);
            if (failure instanceof FrameWriter.UnwritableFrameException unwritable) {
              connection.recordError(
                  "reply:" + ErrorCode.INVALID_ARGUMENT.name(),
                  "reply of type=" + request.type() + " was unwritable: " + unwritable.getMessage(),
                  unwritable);
              // The error reply takes over this exchange's last part, also if it cannot be queued.
              send(
                  FrameDescriptor.FLAG_RESPONSE | FrameDescriptor.FLAG_ERROR,
                  ControlMessages.errorSection(ErrorCode.INTERNAL, unwritable.getMessage()),
                  List.of(),
                  List.of());
              return;
            }
            partDone();
          }
        };
    return connection.enqueue(
        new FrameWriter.OutboundFrame(
            request.type(), flags, request.correlationId(), section, bodies, listener));
  }

  private void partDone() {
    if (parts.decrementAndGet() == 0) {
      for (NativeBuffer body : request.bodyBuffers()) {
        body.close();
      }
      connection.exchangeDone(this);
    }
  }

  private void closeAll(List<AutoCloseable> resources) {
    for (AutoCloseable resource : resources) {
      try {
        resource.close();
      } catch (Exception e) {
        connection.recordError(
            ErrorCode.INTERNAL.name(), "closing a reply resource failed: " + Errors.describe(e), e);
      }
    }
  }
}
