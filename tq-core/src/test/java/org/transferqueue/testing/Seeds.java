package org.transferqueue.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

/**
 * The seeds of randomised tests, so that every failing run can be replayed.
 *
 * <p>{@link #seed()} returns {@code -Dtq.seed=N} when it is set, else a fresh seed. This class is
 * also a JUnit extension, registered for every test by auto-detection ({@code
 * junit-platform.properties}): when a test that drew a seed fails, the failure carries, as a
 * suppressed exception and on standard error, the last seed it drew and the command that replays
 * it:
 *
 * <pre>{@code
 * long seed = Seeds.seed();
 * Random random = new Random(seed);
 * ...
 * // on failure: seed=8412... replay: mvn -pl tq-core test -Dtest='CodecTest#shouldRoundTrip' -Dtq.seed=8412...
 * }</pre>
 *
 * <p>Seeds are recorded per thread: call {@link #seed()} on the test's own thread.
 */
public final class Seeds implements BeforeEachCallback, TestExecutionExceptionHandler {
  /** The system property that replays a seed. */
  public static final String PROPERTY = "tq.seed";

  private static final SplittableRandom FRESH = new SplittableRandom();
  private static final ThreadLocal<List<Long>> DRAWN = ThreadLocal.withInitial(ArrayList::new);

  /** Created by JUnit's extension auto-detection. */
  public Seeds() {}

  /**
   * The seed for one randomised test: {@code -Dtq.seed} if set, else a fresh one. Recorded so that
   * a failure of the running test reports it.
   *
   * @return the seed
   */
  public static long seed() {
    Long replay = Long.getLong(PROPERTY);
    long seed;
    if (replay != null) {
      seed = replay;
    } else {
      synchronized (FRESH) {
        seed = FRESH.nextLong();
      }
    }
    DRAWN.get().add(seed);
    return seed;
  }

  /**
   * The command line that replays {@code seed} for one test method.
   *
   * @param testClass the test class
   * @param method the test method's name
   * @param seed the seed
   * @return the command, e.g. {@code mvn -pl tq-core test -Dtest='FooTest#shouldX' -Dtq.seed=42}
   */
  public static String replayCommand(Class<?> testClass, String method, long seed) {
    var source = testClass.getProtectionDomain().getCodeSource();
    String module =
        source != null && source.getLocation().getPath().contains("/tq-server/")
            ? "tq-server"
            : "tq-core";
    return "mvn -pl "
        + module
        + " test -Dtest='"
        + testClass.getSimpleName()
        + "#"
        + method
        + "' -D"
        + PROPERTY
        + "="
        + seed;
  }

  @Override
  public void handleTestExecutionException(ExtensionContext context, Throwable failure)
      throws Throwable {
    List<Long> drawn = DRAWN.get();
    if (!drawn.isEmpty()) {
      // A test that runs several seeded sequences draws each one's seed as it starts it, so the
      // last seed drawn is the failing sequence's.
      long seed = drawn.getLast();
      String report =
          "seed="
              + seed
              + " replay: "
              + replayCommand(
                  context.getRequiredTestClass(), context.getRequiredTestMethod().getName(), seed);
      System.err.println(context.getDisplayName() + " failed with " + report);
      failure.addSuppressed(new SeedReport(report));
      drawn.clear();
    }
    throw failure;
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    DRAWN.get().clear();
  }

  /** The seeds of a failed test, attached to its failure. */
  static final class SeedReport extends RuntimeException {
    SeedReport(String message) {
      super(message, null, false, false);
    }
  }
}
