/**
 * Runnable examples of the user stories: each class has a {@code main} that prints what it does,
 * and a {@code run} method that returns what it observed, which the tests check.
 *
 * <p>Every example starts an embedded {@link org.transferqueue.client.TransferQueueSystem}, closes
 * every batch it reads, and closes the system at the end; the systems use {@link
 * org.transferqueue.memory.LeakPolicy#THROW}, so an example that forgot a batch fails loudly.
 */
package org.transferqueue.examples;
