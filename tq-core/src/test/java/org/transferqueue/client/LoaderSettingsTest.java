package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/** The streaming loader's settings: defaults, validation once in build(), immutability. */
class LoaderSettingsTest {

  private static LoaderSettings.Builder valid() {
    return LoaderSettings.builder().partition("train").task("actor").fields("x");
  }

  private static void assertInvalid(LoaderSettings.Builder builder, String message) {
    assertThatThrownBy(builder::build)
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining(message);
  }

  @Test
  void shouldCarryTheDocumentedDefaults() {
    LoaderSettings settings = valid().build();

    assertThat(settings.batchSize()).isEqualTo(1);
    assertThat(settings.microBatchSize()).isEqualTo(1);
    assertThat(settings.dpRank()).isZero();
    assertThat(settings.termination()).isEqualTo(Termination.INFINITE);
    assertThat(settings.prefetch()).isEqualTo(1);
    assertThat(settings.fetchWorkers()).isEqualTo(1);
    assertThat(settings.pollInterval()).isEqualTo(StreamingLoader.POLL_INTERVAL_DEFAULT);
    assertThat(settings.ackTimeout()).isNull();
    assertThat(settings.samplingOptions()).isEmpty();
    assertThat(settings.fetchHandler()).isNull();
    assertThat(settings.processHandler()).isNull();
  }

  @Test
  void shouldNameTheFirstInvalidSetting() {
    assertInvalid(LoaderSettings.builder().task("t").fields("x"), "partition_id");
    assertInvalid(valid().task(""), "task_name");
    assertInvalid(valid().fields(List.of("x", "")), "data_fields");
    assertInvalid(valid().batchSize(0), "batch_size=0");
    assertInvalid(valid().batchSize(4).microBatchSize(5), "micro_batch_size=5");
    assertInvalid(valid().dpRank(-1), "dp_rank=-1");
    assertInvalid(valid().termination(null), "termination");
    assertInvalid(valid().prefetch(0), "prefetch=0");
    assertInvalid(valid().fetchWorkers(0), "fetch_workers=0");
    assertInvalid(valid().pollInterval(Duration.ZERO), "poll_interval=PT0S");
    assertInvalid(valid().ackTimeout(Duration.ofSeconds(-1)), "ack_timeout=PT-1S");
  }

  @Test
  void shouldNotChangeWhenTheCallersCollectionsDo() {
    Map<String, Object> options = new HashMap<>(Map.of("k", 1));
    List<String> fields = new java.util.ArrayList<>(List.of("a", "b"));
    LoaderSettings settings = valid().fields(fields).samplingOptions(options).build();

    options.put("k", 2);
    fields.add("c");

    assertThat(settings.samplingOptions()).containsExactly(Map.entry("k", 1));
    assertThat(settings.fields()).containsExactly("a", "b");
  }

  @Test
  void shouldRejectALoaderWithoutAClientBeforeItsSettings() {
    assertThatThrownBy(() -> StreamingLoader.builder(null).build())
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining("client");
    assertThatThrownBy(() -> StreamingLoader.of(null, valid().build()))
        .hasMessageContaining("client");
  }
}
