package org.transferqueue;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.properties.HasName.Predicates.name;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.transferqueue.testing.BannedApis;

/**
 * Fails the build when a package depends on a higher layer of DESIGN §3, when packages form a
 * cycle, or when main code uses a banned API.
 */
class ArchitectureTest {
  /** Layers from the bottom up; a package may use its own layer and the ones below. */
  private static final String[][] LAYERS = {
    {
      "org.transferqueue",
      "org.transferqueue.memory..",
      "org.transferqueue.tensor..",
      "org.transferqueue.config.."
    },
    {"org.transferqueue.metrics.."},
    {"org.transferqueue.meta.."},
    {"org.transferqueue.codec.."},
    {"org.transferqueue.journal.."},
    {"org.transferqueue.sampler.."},
    {"org.transferqueue.controller.."},
    {"org.transferqueue.storage.."},
    {"org.transferqueue.objectstore.."},
    {"org.transferqueue.transport.."},
    {"org.transferqueue.remote.."},
    {"org.transferqueue.system.."},
    {"org.transferqueue.client.."},
  };

  private static JavaClasses mainClasses;

  @BeforeAll
  static void importMainClasses() {
    mainClasses =
        new ClassFileImporter()
            // Main classes only, whatever the build directory is called (see tq.buildSuffix).
            .withImportOption(location -> !location.contains("/test-classes/"))
            .importPackages("org.transferqueue");
  }

  @Test
  void shouldOnlyDependOnLowerLayers() {
    for (int layer = 0; layer < LAYERS.length; layer++) {
      List<String> higher = new ArrayList<>();
      for (int above = layer + 1; above < LAYERS.length; above++) {
        higher.addAll(Arrays.asList(LAYERS[above]));
      }
      if (higher.isEmpty()) {
        continue;
      }
      noClasses()
          .that()
          .resideInAnyPackage(LAYERS[layer])
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(higher.toArray(String[]::new))
          .allowEmptyShould(true)
          .because("DESIGN §3: data flows top to bottom, never back up")
          .check(mainClasses);
    }
  }

  /**
   * Components receive their own typed settings records; only the mapping layer ({@code system}),
   * {@code client} and the server roles read the YAML section records of {@code config}. The shared
   * defaults ({@code config.Defaults}) and the address value {@code config.HostPort} are the
   * exceptions.
   */
  @Test
  void shouldKeepYamlSectionsOutOfComponents() {
    noClasses()
        .that()
        .resideInAnyPackage(
            "org.transferqueue.controller..",
            "org.transferqueue.storage..",
            "org.transferqueue.objectstore..",
            "org.transferqueue.transport..",
            "org.transferqueue.remote..")
        .should()
        .dependOnClassesThat(
            resideInAPackage("org.transferqueue.config..")
                .and(
                    not(
                        name("org.transferqueue.config.Defaults")
                            .or(name("org.transferqueue.config.HostPort")))))
        .because(
            "configuration is mapped at the top: components take their own settings records,"
                + " org.transferqueue.system.ConfigMapper maps the YAML sections onto them")
        .check(mainClasses);
  }

  @Test
  void shouldHaveNoPackageCycles() {
    slices().matching("org.transferqueue.(*)..").should().beFreeOfCycles().check(mainClasses);
  }

  /**
   * Each package on its own, sub-packages included: {@code objectstore} and {@code
   * objectstore.engine} are two slices here, while the rule above folds them into one.
   */
  @Test
  void shouldHaveNoCyclesBetweenSubPackages() {
    slices().matching("org.transferqueue.(**)").should().beFreeOfCycles().check(mainClasses);
  }

  @Test
  void shouldCreateArenasOnlyInMemoryPackage() {
    noClasses()
        .that()
        .resideOutsideOfPackage("org.transferqueue.memory..")
        .should()
        .dependOnClassesThat()
        .haveFullyQualifiedName("java.lang.foreign.Arena")
        .orShould()
        .callMethod(java.nio.ByteBuffer.class, "allocateDirect", int.class)
        .because("STYLE §5: all off-heap memory comes from a BufferAllocator")
        .check(mainClasses);
  }

  @Test
  void shouldReadTimeOnlyThroughTheClock() {
    BannedApis.timeOnlyThroughTheClock().check(mainClasses);
  }

  @Test
  void shouldNotUseBannedApisInLibrary() {
    BannedApis.standardStreamsOnlyInCli().check(mainClasses);
    BannedApis.noSleepUnsafeOrSerialization().check(mainClasses);
  }
}
