package org.transferqueue.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code tq} program: dispatches to its subcommands. */
@Command(
    name = "tq",
    mixinStandardHelpOptions = true,
    versionProvider = VersionCommand.Provider.class,
    description = "TransferQueue for Java: the streaming data layer for RL post-training.",
    subcommands = {
      VersionCommand.class,
      DemoCommand.class,
      BenchCommand.class,
      ControllerCommand.class,
      StorageUnitCommand.class,
      StoreNodeCommand.class,
      UpCommand.class,
      KvCommand.class,
      StatusCommand.class,
      CheckpointCommand.class,
      CommandLine.HelpCommand.class
    })
public final class TqCommand implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  /** Creates the top-level command; picocli fills {@link #spec}. */
  public TqCommand() {}

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  /**
   * Runs the command line and exits with its status.
   *
   * @param args the arguments
   */
  public static void main(String[] args) {
    System.exit(newCommandLine().execute(args));
  }

  /**
   * Builds the command line, for {@link #main} and for tests.
   *
   * @return a configured picocli command line
   */
  public static CommandLine newCommandLine() {
    return new CommandLine(new TqCommand()).setCaseInsensitiveEnumValuesAllowed(true);
  }
}
