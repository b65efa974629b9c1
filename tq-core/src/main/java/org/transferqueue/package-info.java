/**
 * TransferQueue for Java: the streaming data layer between the stages of an RL post-training
 * pipeline. This root package holds the error model shared by every layer: {@link
 * org.transferqueue.TqException} and its stable {@link org.transferqueue.ErrorCode}s, and {@link
 * org.transferqueue.Closeables}, which closes groups of resources under that error model.
 */
package org.transferqueue;
