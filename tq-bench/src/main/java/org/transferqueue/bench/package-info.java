/**
 * JMH microbenchmarks. Each reports its figure next to a baseline measured in the same run (for
 * example {@link java.lang.foreign.MemorySegment#copy} of the same bytes), so results compare
 * across machines as ratios.
 */
package org.transferqueue.bench;
