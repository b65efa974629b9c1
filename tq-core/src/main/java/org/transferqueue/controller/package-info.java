/**
 * The in-process controller: partitions, the global index allocator, production and consumption
 * tables, field schema registry, fetch through a sampler, tags, the key index and checkpoint state.
 *
 * <p>{@link org.transferqueue.controller.Controller} is the only public entry point; it owns all
 * mutable state behind one lock and answers requests given as plain values (records), so that a
 * network front can serialise them unchanged. Data never flows through the controller.
 */
package org.transferqueue.controller;
