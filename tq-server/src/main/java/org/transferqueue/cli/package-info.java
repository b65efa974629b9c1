/**
 * The {@code tq} command line: one picocli subcommand per task (version, and later demo, bench,
 * server roles). The only package that writes to standard output.
 */
package org.transferqueue.cli;
