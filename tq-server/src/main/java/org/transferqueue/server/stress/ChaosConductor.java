package org.transferqueue.server.stress;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.transferqueue.Clock;
import org.transferqueue.TqException;
import org.transferqueue.server.bench.LoopbackServers;
import org.transferqueue.transport.TransportClient;

/**
 * Kills a server process of a loopback stress run with SIGKILL every interval and restarts it on
 * its address, configuration and journal directory, on its own thread while the clients run. The
 * kinds of role of the {@link ChaosPlan} take turns, and within a kind the ranks do. Each kill
 * opens an {@link Outages.Outage}; the conductor marks when the restarted process printed its ready
 * line and when it answered a PING, which lets waiting clients retry.
 *
 * <p>Closing stops the schedule, finishes the restart in progress and restarts any child that is
 * still down, so the run can drain and clear. Owns its thread; the servers stay the caller's.
 */
final class ChaosConductor implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(ChaosConductor.class.getName());
  private static final Duration PING_TIMEOUT = Duration.ofSeconds(1);
  private static final Duration ANSWER_WAIT = Duration.ofSeconds(60);
  private static final long PING_RETRY_NANOS = 10_000_000L;

  private final LoopbackServers servers;
  private final ChaosPlan plan;
  private final Outages outages;
  private final TransportClient pinger;
  private final Clock clock;
  private final List<Integer> victims;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition stopping = lock.newCondition();
  private final Thread thread;
  // Guarded by lock.
  private boolean stopped;

  /**
   * Starts the schedule: the first kill one interval from now.
   *
   * @param servers the running children; only this conductor kills and restarts them until closed
   * @param plan which roles, how often
   * @param outages where kills and recoveries are recorded
   * @param pinger the transport that pings restarted roles (the caller closes it)
   * @param clock the run's clock
   */
  ChaosConductor(
      LoopbackServers servers,
      ChaosPlan plan,
      Outages outages,
      TransportClient pinger,
      Clock clock) {
    this.servers = Objects.requireNonNull(servers, "servers");
    this.plan = Objects.requireNonNull(plan, "plan");
    this.outages = Objects.requireNonNull(outages, "outages");
    this.pinger = Objects.requireNonNull(pinger, "pinger");
    this.clock = Objects.requireNonNull(clock, "clock");
    List<String> roles = new ArrayList<>();
    for (int i = 0; i < servers.size(); i++) {
      roles.add(servers.role(i));
    }
    this.victims = victims(roles, plan.roles());
    this.thread = Thread.ofPlatform().name("tq-stress-chaos").daemon().start(this::run);
  }

  /**
   * The children killed in turn: the kinds of role in declaration order, each kind's ranks in turn
   * within it (controller, unit 0, controller, unit 1, ..).
   *
   * @param roles the {@code tq} role of each child, by child
   * @param killed the kinds to kill
   * @return child numbers, one cycle of the schedule (empty when no child is of those kinds)
   */
  static List<Integer> victims(List<String> roles, Set<ChaosRole> killed) {
    List<List<Integer>> byKind = new ArrayList<>();
    for (ChaosRole role : killed) {
      List<Integer> ofKind = new ArrayList<>();
      for (int i = 0; i < roles.size(); i++) {
        if (roles.get(i).equals(role.label())) {
          ofKind.add(i);
        }
      }
      if (!ofKind.isEmpty()) {
        byKind.add(ofKind);
      }
    }
    List<Integer> order = new ArrayList<>();
    int longest = byKind.stream().mapToInt(List::size).max().orElse(0);
    int kinds = byKind.size();
    // Enough turns that every kind and every rank of each kind comes up.
    for (int turn = 0; turn < kinds * longest; turn++) {
      List<Integer> ofKind = byKind.get(turn % kinds);
      order.add(ofKind.get((turn / kinds) % ofKind.size()));
    }
    return List.copyOf(order);
  }

  private void run() {
    long next = clock.nanoTime() + plan.interval().toNanos();
    int turn = 0;
    while (!victims.isEmpty() && awaitUntil(next)) {
      int child = victims.get(turn++ % victims.size());
      if (!killAndRestart(child)) {
        return; // a role that does not come back ends the chaos; the run reports it
      }
      next += plan.interval().toNanos();
    }
  }

  /** Waits until {@code nanos}; false when stopped first. */
  private boolean awaitUntil(long nanos) {
    lock.lock();
    try {
      while (!stopped && nanos - clock.nanoTime() > 0) {
        stopping.awaitNanos(nanos - clock.nanoTime());
      }
      return !stopped;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } finally {
      lock.unlock();
    }
  }

  private boolean killAndRestart(int child) {
    ChaosRole role = ChaosRole.fromLabel(servers.role(child));
    String name = servers.name(child);
    Outages.Outage outage = outages.killing(role, servers.rank(child), name);
    try {
      servers.kill(child);
      servers.restart(child);
      outages.ready(outage);
      awaitAnswer(child);
      outages.answering(outage);
      return true;
    } catch (TqException e) {
      LOG.log(System.Logger.Level.WARNING, "chaos: " + name + " did not recover: " + e);
      outages.failed(outage, e.getMessage());
      return false;
    }
  }

  /** Pings the restarted child until it answers; throws at the deadline. */
  private void awaitAnswer(int child) {
    long deadline = clock.nanoTime() + ANSWER_WAIT.toNanos();
    while (true) {
      try {
        pinger.ping(servers.address(child), PING_TIMEOUT);
        return;
      } catch (TqException e) {
        if (clock.nanoTime() - deadline > 0) {
          throw e;
        }
      }
      pause(PING_RETRY_NANOS);
    }
  }

  /** A refused dial fails at once: pauses briefly instead of spinning (even when stopping). */
  private void pause(long nanos) {
    long until = clock.nanoTime() + nanos;
    lock.lock();
    try {
      while (until - clock.nanoTime() > 0) {
        stopping.awaitNanos(until - clock.nanoTime());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      lock.unlock();
    }
  }

  /** Stops the schedule, waits for the kill or restart in progress, restarts any child down. */
  @Override
  public void close() {
    lock.lock();
    try {
      stopped = true;
      stopping.signalAll();
    } finally {
      lock.unlock();
    }
    try {
      thread.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    for (int i = 0; i < servers.size(); i++) {
      if (!servers.isAlive(i)) {
        try {
          servers.restart(i);
        } catch (TqException e) {
          LOG.log(System.Logger.Level.WARNING, "chaos: cannot restart " + servers.name(i), e);
        }
      }
    }
  }
}
