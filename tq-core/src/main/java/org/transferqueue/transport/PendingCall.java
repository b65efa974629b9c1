package org.transferqueue.transport;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.locks.ReentrantLock;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * One outstanding client call: its request, where its reply's bodies go, and its outcome.
 *
 * <p>Design note. Three parties touch a call: the connection's writer thread (reads the request
 * bodies), its reader thread (fills the reply destinations) and whoever decides the outcome first
 * (reply, error reply, deadline timer, connection loss, client close). The outcome is decided once
 * ({@code finished}); the future completes only when the outcome is decided <em>and</em> neither
 * the writer nor the reader is touching caller memory, so a caller never sees its future complete
 * while its segments are still in use. If a deadline or close decides the outcome while bytes are
 * in flight, the connection is aborted (a frame cannot be withdrawn half-written or half-read) and
 * the future completes as soon as the I/O thread has let go. All state is guarded by {@code lock}.
 */
final class PendingCall implements FrameWriter.Listener {
  final int type;
  final byte[] metadataSection;
  final List<MemorySegment> bodies;
  final BodyDestination destination;
  final String description;

  /**
   * The request's application metadata alone, for a call whose bodies may travel through shared
   * memory (the section is then rebuilt around a grant); null for the transport's own messages.
   */
  final byte[] applicationMetadata;

  /** Whether the request asks for a placed grant when its bodies go through shared memory. */
  final boolean placedBodies;

  final CompletableFuture<Response> future = new CompletableFuture<>();

  private final ReentrantLock lock = new ReentrantLock();
  private boolean writerBusy;
  private boolean readerBusy;
  private boolean finished;
  private boolean completed;
  private Response response;
  private TqException failure;
  private ClientConnection connection;

  /** The correlation id on {@link #connection}, 0 before it is sent. */
  private volatile long correlationId;

  private ScheduledFuture<?> deadlineTask;

  PendingCall(
      int type,
      byte[] metadataSection,
      List<MemorySegment> bodies,
      BodyDestination destination,
      String description) {
    this(type, metadataSection, null, bodies, destination, description, false);
  }

  PendingCall(
      int type,
      byte[] metadataSection,
      byte[] applicationMetadata,
      List<MemorySegment> bodies,
      BodyDestination destination,
      String description,
      boolean placedBodies) {
    this.type = type;
    this.metadataSection = metadataSection;
    this.applicationMetadata = applicationMetadata;
    this.placedBodies = placedBodies;
    this.bodies = bodies;
    this.destination = destination;
    this.description = description;
  }

  void deadlineTask(ScheduledFuture<?> task) {
    lock.lock();
    try {
      if (completed) {
        task.cancel(false);
      } else {
        deadlineTask = task;
      }
    } finally {
      lock.unlock();
    }
  }

  /** Records the correlation id the call was sent with. */
  void correlationId(long id) {
    correlationId = id;
  }

  /** The correlation id the call was sent with, or 0 before it was. */
  long correlationId() {
    return correlationId;
  }

  /**
   * Attaches the call to the connection that carries it.
   *
   * @return false if the outcome is already decided
   */
  boolean attach(ClientConnection carrier) {
    lock.lock();
    try {
      connection = carrier;
      return !finished;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public boolean onWriteStart() {
    lock.lock();
    try {
      if (finished) {
        return false;
      }
      writerBusy = true;
      return true;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void onWriteEnd(Throwable writeFailure) {
    lock.lock();
    try {
      writerBusy = false;
      if (writeFailure != null && !finished) {
        finish(
            null,
            writeFailure instanceof FrameWriter.UnwritableFrameException unwritable
                ? unwritable
                : Errors.connectionFailed(description, writeFailure));
      }
    } finally {
      lock.unlock();
    }
    completeIfReady();
  }

  /**
   * Claims the call for receiving its reply's bodies.
   *
   * @return false if the outcome is already decided (the reader drains the bodies instead)
   */
  boolean beginReceive() {
    lock.lock();
    try {
      if (finished) {
        return false;
      }
      readerBusy = true;
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** Ends receiving with a response or a failure; a response nobody will get is closed. */
  void endReceive(Response received, TqException receiveFailure) {
    Response orphan = null;
    lock.lock();
    try {
      readerBusy = false;
      if (finished) {
        orphan = received;
      } else {
        finish(received, receiveFailure);
      }
    } finally {
      lock.unlock();
    }
    if (orphan != null) {
      orphan.close();
    }
    completeIfReady();
  }

  /**
   * Decides the outcome as a failure if it is still open, for failures the connection reports
   * (error reply, lost connection): the writer or reader finishes on its own, and the future
   * completes when it has.
   */
  void fail(TqException error) {
    lock.lock();
    try {
      if (finished) {
        return;
      }
      finish(null, error);
    } finally {
      lock.unlock();
    }
    completeIfReady();
  }

  /**
   * Decides the outcome as a failure if it is still open, for failures decided outside the
   * connection (deadline, client close). If the writer or reader is in the middle of this call's
   * bytes, the connection is aborted so they let go promptly: half a frame cannot be withdrawn.
   */
  void abandon(TqException error) {
    abandon(error, null);
  }

  /**
   * {@link #abandon(TqException)} for a missed deadline: also aborts the connection if its stream
   * stalled inside a reply frame ({@link ClientConnection#stallCause}), before the caller learns of
   * the failure, so that its next call finds the connection closed and dials a fresh one.
   *
   * @param error the deadline error
   * @param timeout the call's timeout, or null for a failure that is not a deadline
   */
  void abandon(TqException error, java.time.Duration timeout) {
    ClientConnection abort = null;
    ClientConnection carrier;
    lock.lock();
    try {
      if (finished) {
        return;
      }
      finish(null, error);
      carrier = connection;
      if (writerBusy || readerBusy) {
        abort = connection;
      }
    } finally {
      lock.unlock();
    }
    if (abort == null && carrier != null && timeout != null) {
      TqException stalled = carrier.stallCause(this, timeout);
      if (stalled != null) {
        carrier.abort(stalled);
      }
    }
    if (abort != null) {
      abort.abort(
          new TqException(
              ErrorCode.CONNECTION_FAILED,
              "connection to "
                  + abort.address()
                  + " aborted: "
                  + description
                  + " was abandoned ("
                  + error.code()
                  + ") while its bytes were in flight"));
    }
    completeIfReady();
  }

  private void finish(Response received, TqException error) {
    finished = true;
    response = received;
    failure = error;
  }

  private void completeIfReady() {
    Response result;
    TqException error;
    ScheduledFuture<?> task;
    lock.lock();
    try {
      if (!finished || writerBusy || readerBusy || completed) {
        return;
      }
      completed = true;
      result = response;
      error = failure;
      task = deadlineTask;
    } finally {
      lock.unlock();
    }
    if (task != null) {
      task.cancel(false);
    }
    if (error != null) {
      future.completeExceptionally(error);
    } else {
      future.complete(result);
    }
  }

  static TqException closed(String description) {
    return new TqException(ErrorCode.CLOSED, description + ": the client was closed");
  }
}
