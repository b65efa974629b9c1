package org.transferqueue.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.util.Properties;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code tq version}: prints the product version, the JDK and the operating system. */
@Command(name = "version", description = "Print the version, JDK and operating system.")
final class VersionCommand implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    PrintWriter out = spec.commandLine().getOut();
    for (String line : lines()) {
      out.println(line);
    }
    out.flush();
  }

  static String productVersion() {
    try (InputStream in = VersionCommand.class.getResourceAsStream("version.properties")) {
      Properties properties = new Properties();
      if (in != null) {
        properties.load(in);
      }
      return properties.getProperty("version", "unknown");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static String[] lines() {
    return new String[] {
      "tq " + productVersion(),
      "JDK "
          + System.getProperty("java.runtime.version")
          + " ("
          + System.getProperty("java.vendor")
          + ")",
      "OS "
          + System.getProperty("os.name")
          + " "
          + System.getProperty("os.version")
          + " "
          + System.getProperty("os.arch")
          + ", "
          + Runtime.getRuntime().availableProcessors()
          + " cores"
    };
  }

  /** Supplies {@code tq --version}. */
  static final class Provider implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return lines();
    }
  }
}
