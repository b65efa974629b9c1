package org.transferqueue.server.stress;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.transferqueue.Clock;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.meta.BatchMeta;

/**
 * The outages of a chaos run as the clients meet them. The {@link ChaosConductor} opens an outage
 * when it kills a role and marks when the restarted process printed its ready line and when it
 * answered a PING; the clients report their successful operations, and the first one that started
 * after the kill and reached the restarted role ends the outage's measurement. Clients whose call
 * failed because a role was unreachable wait here (until no role is down, then a short back-off)
 * before they retry, for at most the recovery timeout.
 *
 * <p>Without chaos ({@link #none}) nothing is ever down and nothing is retried: a failed call is
 * counted and the client goes on, as in a plain stress run. Thread-safe.
 */
final class Outages {
  private static final long MIN_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
  private static final long MAX_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

  private final Clock clock;
  private final long recoveryTimeoutNanos;
  private final int storageServers;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final List<Outage> all = new ArrayList<>();
  // Outages whose role answers again and that no client operation has reached yet.
  private final List<Outage> awaitingFirstOp = new CopyOnWriteArrayList<>();
  // Guarded by lock: roles killed that do not answer yet.
  private int down;

  private Outages(Clock clock, long recoveryTimeoutNanos, int storageServers) {
    this.clock = clock;
    this.recoveryTimeoutNanos = recoveryTimeoutNanos;
    this.storageServers = storageServers;
  }

  /** A run without chaos: no outages, no retries. */
  static Outages none(Clock clock) {
    return new Outages(clock, 0, 1);
  }

  /**
   * A chaos run.
   *
   * @param clock the run's clock
   * @param plan the recovery timeout
   * @param storageServers storage units or store nodes (global index {@code gi} lives on {@code gi
   *     mod storageServers})
   */
  static Outages chaos(Clock clock, ChaosPlan plan, int storageServers) {
    return new Outages(clock, plan.recoveryTimeout().toNanos(), storageServers);
  }

  /** Whether clients retry calls that failed because a role was unreachable. */
  boolean retries() {
    return recoveryTimeoutNanos > 0;
  }

  /**
   * Whether an error means that a role could not be reached or went away during the call (the call
   * may or may not have taken effect), rather than a refusal.
   */
  static boolean unreachable(TqException e) {
    ErrorCode code = e.code();
    return code == ErrorCode.CONNECTION_FAILED
        || code == ErrorCode.DEADLINE_EXCEEDED
        || code == ErrorCode.CLOSED;
  }

  /** Opens an outage: the conductor is about to kill {@code name}. */
  Outage killing(ChaosRole role, int rank, String name) {
    Outage outage = new Outage(role, rank, name, clock.nanoTime());
    lock.lock();
    try {
      all.add(outage);
      down++;
    } finally {
      lock.unlock();
    }
    return outage;
  }

  /** The restarted process printed its ready line. */
  void ready(Outage outage) {
    outage.readyNanos = clock.nanoTime();
  }

  /** The restarted role answered a PING: clients may retry. */
  void answering(Outage outage) {
    outage.answeringNanos = clock.nanoTime();
    awaitingFirstOp.add(outage);
    up();
  }

  /** The role could not be restarted: clients stop waiting for it. */
  void failed(Outage outage, String why) {
    outage.failure = why;
    up();
  }

  private void up() {
    lock.lock();
    try {
      down--;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits before a retry: until no killed role is down any more, then a back-off that grows with
   * {@code attempt}.
   *
   * @param attempt retries so far of this call, 0 for the first
   * @param sinceNanos when the first attempt failed
   * @return true to retry, false when there are no retries or the recovery timeout passed
   */
  boolean awaitRetry(int attempt, long sinceNanos) {
    if (!retries()) {
      return false;
    }
    long deadline = sinceNanos + recoveryTimeoutNanos;
    long ceiling = Math.min(MAX_BACKOFF_NANOS, MIN_BACKOFF_NANOS << Math.min(attempt, 20));
    // Jitter spreads the clients a restarted role releases at once.
    long backoff = ThreadLocalRandom.current().nextLong(ceiling / 2, ceiling + 1);
    lock.lock();
    try {
      while (down > 0 && deadline - clock.nanoTime() > 0) {
        changed.awaitNanos(deadline - clock.nanoTime());
      }
      // A back-off, not a wait for state: a restarted role may still refuse the first dials.
      long until = Math.min(deadline, clock.nanoTime() + backoff);
      while (until - clock.nanoTime() > 0) {
        changed.awaitNanos(until - clock.nanoTime());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } finally {
      lock.unlock();
    }
    return deadline - clock.nanoTime() > 0;
  }

  /**
   * A client operation succeeded. The first one that started after a kill and reached the killed
   * role (a put or fetch for the controller; a put or get of a sample on the killed storage
   * process) ends that outage's measurement.
   *
   * @param op the operation
   * @param startNanos when the operation started
   * @param meta the samples it wrote or read
   */
  void succeeded(StressOp op, long startNanos, BatchMeta meta) {
    if (awaitingFirstOp.isEmpty()) {
      return;
    }
    for (Outage outage : awaitingFirstOp) {
      if (startNanos - outage.killNanos > 0 && reaches(outage, op, meta)) {
        long now = clock.nanoTime();
        synchronized (outage) {
          if (outage.firstOpNanos == 0) {
            outage.firstOpNanos = now;
          }
        }
        awaitingFirstOp.remove(outage);
      }
    }
  }

  private boolean reaches(Outage outage, StressOp op, BatchMeta meta) {
    if (outage.role == ChaosRole.CONTROLLER) {
      return op == StressOp.PUT || op == StressOp.FETCH;
    }
    if (op != StressOp.PUT && op != StressOp.GET) {
      return false;
    }
    for (int i = 0; i < meta.size(); i++) {
      if (meta.globalIndex(i) % storageServers == outage.rank) {
        return true;
      }
    }
    return false;
  }

  /** Every outage so far, as figures. */
  List<ChaosFigures.Recovery> recoveries() {
    lock.lock();
    try {
      List<ChaosFigures.Recovery> out = new ArrayList<>(all.size());
      for (Outage o : all) {
        long firstOp;
        synchronized (o) {
          firstOp = o.firstOpNanos;
        }
        out.add(
            new ChaosFigures.Recovery(
                o.role,
                o.name,
                since(o, o.readyNanos),
                since(o, o.answeringNanos),
                since(o, firstOp),
                o.failure));
      }
      return out;
    } finally {
      lock.unlock();
    }
  }

  private static long since(Outage o, long nanos) {
    return nanos == 0 ? -1 : nanos - o.killNanos;
  }

  /** One kill and restart of a role. */
  static final class Outage {
    final ChaosRole role;
    final int rank;
    final String name;
    final long killNanos;
    // Written by the conductor, read by the report after the conductor stopped.
    volatile long readyNanos;
    volatile long answeringNanos;
    volatile String failure;
    // Guarded by this.
    private long firstOpNanos;

    private Outage(ChaosRole role, int rank, String name, long killNanos) {
      this.role = role;
      this.rank = rank;
      this.name = name;
      this.killNanos = killNanos;
    }
  }
}
