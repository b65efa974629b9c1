package org.transferqueue.cli;

import java.io.PrintWriter;
import org.transferqueue.config.LoggingConfig;
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
      StressCommand.class,
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
    // Until a command loads its configuration, log at the configuration's default level.
    LogLevels.apply(LoggingConfig.LEVEL_DEFAULT);
    System.exit(newCommandLine().execute(args));
  }

  /**
   * Builds the command line, for {@link #main} and for tests.
   *
   * @return a configured picocli command line
   */
  public static CommandLine newCommandLine() {
    CommandLine commandLine =
        new CommandLine(new TqCommand()).setCaseInsensitiveEnumValuesAllowed(true);
    addHelpOptions(commandLine);
    CommandLine.IParameterExceptionHandler standard = commandLine.getParameterExceptionHandler();
    commandLine.setParameterExceptionHandler(
        (e, args) -> {
          // tq stress reports a bad option in one line (scripts grep it), without the usage.
          if (e.getCommandLine().getCommandSpec().userObject() instanceof StressCommand) {
            PrintWriter err = e.getCommandLine().getErr();
            err.println("tq stress: error: " + e.getMessage().replaceAll("\\R", " "));
            err.flush();
            return StressCommand.EXIT_USAGE;
          }
          return standard.handleParseException(e, args);
        });
    return commandLine;
  }

  /**
   * Gives every command of the tree that has none a {@code -h}/{@code --help} option: picocli
   * prints the usage for it before checking required options, so {@code tq controller --help}
   * answers with its help instead of a missing {@code --config}.
   */
  private static void addHelpOptions(CommandLine commandLine) {
    CommandLine.Model.CommandSpec spec = commandLine.getCommandSpec();
    boolean hasHelp = spec.options().stream().anyMatch(CommandLine.Model.OptionSpec::usageHelp);
    if (!hasHelp) {
      spec.addOption(
          CommandLine.Model.OptionSpec.builder("-h", "--help")
              .usageHelp(true)
              .description("Show this help message and exit.")
              .build());
    }
    for (CommandLine sub : commandLine.getSubcommands().values()) {
      if (sub.getParent() == commandLine) {
        addHelpOptions(sub);
      }
    }
  }
}
