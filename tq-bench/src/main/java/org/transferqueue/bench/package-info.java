/**
 * JMH microbenchmarks. Each reports against a baseline measured in the same run (for example a
 * plain {@link java.lang.foreign.MemorySegment#copy} of the same bytes).
 */
package org.transferqueue.bench;
