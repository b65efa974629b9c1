package org.transferqueue.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.transferqueue.TqException;
import org.transferqueue.client.TqClient;
import org.transferqueue.config.TqConfig;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * Base of the commands that act on a running system: loads {@code --config}, connects a non-owning
 * {@link TqClient} to the addresses in it, runs {@link #run}, and closes the client. A {@link
 * TqException} (unknown key, unreachable controller, bad value) ends the command with exit status 1
 * and one line on standard error: {@code tq kv get: error: MESSAGE}.
 */
abstract class ConnectedCommand implements Callable<Integer> {
  /** Exit status of a command that failed with a {@link TqException}. */
  static final int FAILED = 1;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--config",
      required = true,
      description = "YAML configuration naming the controller and storage-unit addresses.")
  Path config;

  @Option(names = "--json", description = "Print JSON instead of a table.")
  boolean json;

  /**
   * Does the command's work.
   *
   * @param tq the connected client, closed after this returns
   * @param out standard output
   * @return the exit status
   */
  abstract int run(TqClient tq, PrintWriter out);

  @Override
  public final Integer call() {
    TqConfig tq = RoleRunner.load(spec.commandLine(), config);
    PrintWriter out = spec.commandLine().getOut();
    try (TqClient client = TqClient.connect(tq)) {
      return run(client, out);
    } catch (TqException e) {
      PrintWriter err = spec.commandLine().getErr();
      err.println(spec.qualifiedName() + ": error: " + e.getMessage().replaceAll("\\R", " "));
      err.flush();
      return FAILED;
    } finally {
      out.flush();
    }
  }
}
