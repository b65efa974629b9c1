/**
 * TransferQueue for Java: the streaming data layer between the stages of an RL post-training
 * pipeline. This root package holds the error model shared by every layer: {@link
 * org.transferqueue.TqException} and its stable {@link org.transferqueue.ErrorCode}s, {@link
 * org.transferqueue.Closeables}, which closes groups of resources under that error model, and
 * {@link org.transferqueue.Strings}, the rule every string follows (valid Unicode, so that UTF-8
 * carries it unchanged) with the quoting that keeps error messages encodable.
 *
 * <p>It also holds the infrastructure every layer shares, one of each: the {@link
 * org.transferqueue.Clock} all time is read from; the {@link org.transferqueue.ErrorHandler} of
 * background work with its bounded {@link org.transferqueue.DistinctErrorLog}; the {@link
 * org.transferqueue.Threads} factories every background thread comes from; the {@link
 * org.transferqueue.CloseStack} that undoes a start-up which fails half-way; and the {@link
 * org.transferqueue.JsonWriter} of command output, reports and checkpoint manifests.
 */
package org.transferqueue;
