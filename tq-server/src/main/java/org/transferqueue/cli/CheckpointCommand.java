package org.transferqueue.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.transferqueue.ErrorCode;
import org.transferqueue.JsonWriter;
import org.transferqueue.TqException;
import org.transferqueue.client.CheckpointResult;
import org.transferqueue.client.TqClient;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tq checkpoint save|load}: saves or loads a checkpoint of a running multi-process system
 * (format in {@code docs/CHECKPOINT.md}). The controller's state is written and read by this
 * process, every storage unit or store node writes and reads its own file on its host, so {@code
 * --dir} must be the same path for this process and every unit or node (a shared filesystem, or one
 * host). A load runs in two phases: every unit or node validates and stages its file, and only then
 * does any of them apply it. Failures exit with status 1 and one line naming the problem; a failed
 * load changes nothing.
 */
@Command(
    name = "checkpoint",
    description = "Save or load a checkpoint of a running system.",
    subcommands = {CheckpointCommand.Save.class, CheckpointCommand.Load.class},
    mixinStandardHelpOptions = true)
final class CheckpointCommand implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  /** {@code tq checkpoint save}: writes a checkpoint of the running system. */
  @Command(
      name = "save",
      description =
          "Save the controller state and every storage unit or store node into --dir (replacing"
              + " a checkpoint there).")
  static final class Save extends ConnectedCommand {
    @Option(names = "--dir", required = true, description = "The checkpoint directory.")
    Path dir;

    @Option(
        names = "--no-storage",
        description =
            "Save only the controller state (include_storage=false); SimpleStorage keeps its data"
                + " only in memory and is saved anyway.")
    boolean noStorage;

    @Option(
        names = "--metadata",
        paramLabel = "JSON",
        description =
            "A JSON object saved in the manifest and printed by 'checkpoint load', e.g."
                + " '{\"iteration\": 42}'.")
    String metadata;

    @Override
    int run(TqClient tq, PrintWriter out) {
      CheckpointResult saved = tq.saveCheckpoint(dir, !noStorage, parseMetadata(metadata));
      if (json) {
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("directory", saved.directory().toString());
        result.put("backend", saved.backend());
        result.put("storage_saved", saved.storageSaved());
        result.put("files", saved.files().size());
        result.put("bytes", saved.totalBytes());
        result.put("metadata", saved.metadata());
        out.println(JsonWriter.COMPACT.write(result));
      } else {
        out.println(
            "saved checkpoint "
                + saved.directory()
                + ": "
                + saved.files().size()
                + " files, "
                + saved.totalBytes()
                + " bytes, backend "
                + saved.backend());
      }
      return 0;
    }
  }

  /** {@code tq checkpoint load}: replaces the running system's state by a checkpoint. */
  @Command(
      name = "load",
      description =
          "Replace the controller state and the stored data by the checkpoint in --dir; everything"
              + " is validated first.")
  static final class Load extends ConnectedCommand {
    @Option(names = "--dir", required = true, description = "The checkpoint directory.")
    Path dir;

    @Override
    int run(TqClient tq, PrintWriter out) {
      Map<String, Object> metadata = tq.loadCheckpoint(dir);
      if (json) {
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("loaded", dir.toAbsolutePath().normalize().toString());
        result.put("metadata", metadata);
        out.println(JsonWriter.COMPACT.write(result));
      } else {
        out.println(
            "loaded checkpoint "
                + dir.toAbsolutePath().normalize()
                + (metadata.isEmpty() ? "" : ", metadata " + JsonWriter.COMPACT.write(metadata)));
      }
      return 0;
    }
  }

  /**
   * The {@code --metadata} option's JSON object.
   *
   * @throws TqException {@code INVALID_ARGUMENT} for text that is not a JSON object
   */
  @SuppressWarnings("unchecked")
  static Map<String, Object> parseMetadata(String text) {
    if (text == null) {
      return Map.of();
    }
    if (!(Json.parse(text) instanceof Map<?, ?> map)) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "--metadata must be a JSON object, got: " + text);
    }
    return (Map<String, Object>) map;
  }
}
