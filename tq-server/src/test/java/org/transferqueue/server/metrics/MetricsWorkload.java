package org.transferqueue.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.stream.LongStream;
import org.transferqueue.client.MetaClient;
import org.transferqueue.client.TransferQueueSystem;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.tensor.Batch;

/** A small put, fetch, read and clear workload, and an HTTP scrape, shared by the tests. */
final class MetricsWorkload {
  private MetricsWorkload() {}

  /** Puts 6 samples to train, fetches and reads 4 for actor, clears 2 of them. */
  static void run(TransferQueueSystem tq) {
    MetaClient client = tq.client();
    try (Batch rows =
        Batch.builder()
            .objects("x", LongStream.range(0, 6).boxed().map(Object.class::cast).toList())
            .build()) {
      client.put(rows, "train");
    }
    BatchMeta fetched = client.getMeta(GetMetadataRequest.fetch("train", List.of("x"), "actor", 4));
    assertThat(fetched.size()).isEqualTo(4);
    try (Batch read = client.getData(fetched)) {
      assertThat(read.rowCount()).isEqualTo(4);
    }
    client.clearSamples(fetched.selectSamples(0, 1));
    tq.metrics().orElseThrow().collector().collectNow();
  }

  static HttpResponse<String> get(String address, String path, String method)
      throws IOException, InterruptedException {
    try (HttpClient http = HttpClient.newHttpClient()) {
      HttpRequest request =
          HttpRequest.newBuilder(URI.create("http://" + address + path))
              .method(method, HttpRequest.BodyPublishers.noBody())
              .build();
      return http.send(request, HttpResponse.BodyHandlers.ofString());
    }
  }
}
