package org.transferqueue.sampler;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The checkpointable state of a sampler: its name and a list of JSON-compatible entries (maps of
 * strings, numbers, booleans and lists).
 *
 * @param samplerName the {@link Sampler#name()} of the sampler that saved the state
 * @param entries the sampler-specific entries; empty for stateless samplers
 */
public record SamplerState(String samplerName, List<Map<String, Object>> entries) {
  /** Copies the entry list. */
  public SamplerState {
    Objects.requireNonNull(samplerName, "samplerName");
    entries = List.copyOf(entries);
  }
}
