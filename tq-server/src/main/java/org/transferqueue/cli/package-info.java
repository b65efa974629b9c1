/**
 * The {@code tq} command line: one picocli subcommand per task (version, demo, bench, and later the
 * server roles). The only package that writes to standard output.
 */
package org.transferqueue.cli;
