/**
 * Child JVMs: the one launcher that builds a {@code java -cp <class path> [options] Main args}
 * command line, starts it, waits for a ready line by a deadline and stops it, used by {@code tq
 * up}, the loopback benchmark and the process tests.
 */
package org.transferqueue.server.process;
