package org.transferqueue.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.Location;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.transferqueue.cli.TqCommand;
import org.transferqueue.testing.BannedApis;

/**
 * Fails the build when tq-server's main code uses a banned API: the rules tq-core's {@code
 * ArchitectureTest} checks there, over this module's own classes (tq-core's are checked in
 * tq-core). Only {@code org.transferqueue.cli} may write to standard output.
 */
class ServerArchitectureTest {
  private static JavaClasses serverClasses;

  @BeforeAll
  static void importServerClasses() throws URISyntaxException {
    // The directory (or jar) TqCommand was loaded from holds this module's main classes only.
    Path classes =
        Path.of(TqCommand.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    serverClasses = new ClassFileImporter().importLocations(Set.of(Location.of(classes)));
  }

  @Test
  void shouldImportTheServerClasses() {
    assertThat(serverClasses.contain(TqCommand.class)).isTrue();
    assertThat(serverClasses.containPackage("org.transferqueue.server.bench")).isTrue();
  }

  @Test
  void shouldReadTimeOnlyThroughTheClock() {
    BannedApis.timeOnlyThroughTheClock().check(serverClasses);
  }

  @Test
  void shouldWriteToStandardStreamsOnlyInTheCli() {
    BannedApis.standardStreamsOnlyInCli().check(serverClasses);
  }

  @Test
  void shouldNotSleepOrUseUnsafeOrJavaSerialization() {
    BannedApis.noSleepUnsafeOrSerialization().check(serverClasses);
  }
}
