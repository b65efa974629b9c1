/**
 * JMH microbenchmarks. Each reports its figures next to a baseline measured in the same run, so
 * that ratios, not absolute numbers, carry the claim.
 */
package org.transferqueue.bench;
