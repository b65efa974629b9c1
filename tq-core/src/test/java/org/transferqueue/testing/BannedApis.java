package org.transferqueue.testing;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaAccess;
import com.tngtech.archunit.lang.ArchRule;
import java.time.Duration;

/**
 * The banned-API rules of STYLE §7, §8 and §11 as ArchUnit rules, checked over the main classes of
 * every module (tq-core's and tq-server's {@code ArchitectureTest}).
 */
public final class BannedApis {
  /** The one package whose classes may write to standard output and standard error. */
  public static final String CLI_PACKAGE = "org.transferqueue.cli..";

  private BannedApis() {}

  /**
   * No {@code System.out} or {@code System.err} outside {@link #CLI_PACKAGE}.
   *
   * @return the rule
   */
  public static ArchRule standardStreamsOnlyInCli() {
    return noClasses()
        .that()
        .resideOutsideOfPackage(CLI_PACKAGE)
        .should()
        .accessField(System.class, "out")
        .orShould()
        .accessField(System.class, "err")
        .because("STYLE §8: libraries log through System.Logger; only the cli writes to stdout");
  }

  /**
   * No {@code Thread.sleep}, no {@code sun.misc.Unsafe}, no {@code ObjectInputStream}.
   *
   * @return the rule
   */
  public static ArchRule noSleepUnsafeOrSerialization() {
    return noClasses()
        .should()
        .callMethod(Thread.class, "sleep", long.class)
        .orShould()
        .callMethod(Thread.class, "sleep", Duration.class)
        .orShould()
        .dependOnClassesThat()
        .haveFullyQualifiedName("sun.misc.Unsafe")
        .orShould()
        .dependOnClassesThat()
        .haveFullyQualifiedName("java.io.ObjectInputStream")
        .because("no sleeps to wait for state, no Unsafe, no Java serialization");
  }

  /**
   * Time only through {@code org.transferqueue.Clock}: no {@code System.nanoTime} or {@code
   * System.currentTimeMillis} anywhere else.
   *
   * @return the rule
   */
  public static ArchRule timeOnlyThroughTheClock() {
    return noClasses()
        .that()
        .doNotHaveFullyQualifiedName("org.transferqueue.Clock")
        .should()
        .accessTargetWhere(
            DescribedPredicate.<JavaAccess<?>>describe(
                "System.nanoTime or System.currentTimeMillis",
                access ->
                    access.getTargetOwner().isEquivalentTo(System.class)
                        && (access.getName().equals("nanoTime")
                            || access.getName().equals("currentTimeMillis"))))
        .because(
            "STYLE §7: time comes from an injected org.transferqueue.Clock, so tests control it");
  }
}
