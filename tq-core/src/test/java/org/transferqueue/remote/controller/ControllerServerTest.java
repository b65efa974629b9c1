package org.transferqueue.remote.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.Clock;
import org.transferqueue.DeadlineExceededException;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.TqException;
import org.transferqueue.controller.ClearSamplesRequest;
import org.transferqueue.controller.Controller;
import org.transferqueue.controller.ControllerApi;
import org.transferqueue.controller.ControllerOptions;
import org.transferqueue.controller.ControllerState;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.controller.TagUpdate;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.remote.DocumentedLayouts;
import org.transferqueue.remote.MetaCodec;
import org.transferqueue.remote.MetaWriter;
import org.transferqueue.remote.ProtocolTables;
import org.transferqueue.sampler.SequentialSampler;
import org.transferqueue.tensor.DType;
import org.transferqueue.testing.Await;
import org.transferqueue.transport.BodyDestination;
import org.transferqueue.transport.InProcessExchange;
import org.transferqueue.transport.Request;
import org.transferqueue.transport.TransportClient;
import org.transferqueue.transport.TransportConfig;

/** The controller service over loopback: equivalence with the in-process controller, errors. */
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ControllerServerTest {
  private static final Duration CALL = Duration.ofSeconds(20);
  private static final FieldSchema F32_2 = FieldSchema.regular(DType.FLOAT32, 2);

  /** A clock that stands still, so that two controllers given the same calls agree exactly. */
  private static final Clock FIXED =
      new Clock() {
        @Override
        public long nanoTime() {
          return 1_000_000L;
        }

        @Override
        public long epochMillis() {
          return 1_700_000_000_000L;
        }
      };

  private static Controller controller(Duration fetchTimeout) {
    return controller(fetchTimeout, FIXED);
  }

  private static Controller controller(Duration fetchTimeout, Clock clock) {
    return new Controller(
        ControllerOptions.builder().preallocSampleNum(2).fetchTimeout(fetchTimeout).build(),
        new SequentialSampler(),
        clock);
  }

  private static TransportConfig.Builder transport() {
    return TransportConfig.builder()
        .bindPort(0)
        .connectTimeout(Duration.ofSeconds(5))
        .defaultCallTimeout(CALL)
        .shutdownGracePeriod(Duration.ofSeconds(1));
  }

  private static RemoteController remote(TransportClient client, ControllerServer server) {
    return new RemoteController(client, server.address(), CALL, CALL);
  }

  private static List<Long> range(long from, long to) {
    return LongStream.range(from, to).boxed().toList();
  }

  /** Runs every operation once (some twice, some failing) and records each answer. */
  private static List<Object> scenario(ControllerApi c) {
    List<Object> log = new ArrayList<>();
    record(log, c::metricsEndpoint);
    record(log, () -> c.createPartition("train"));
    record(log, () -> c.createPartition("train"));
    record(log, c::listPartitions);
    record(log, () -> c.getPartitionIndexRange("train"));
    BatchMeta slots = c.getMetadata(GetMetadataRequest.insert("train", List.of("x", "y"), 4));
    log.add(slots);
    Map<Long, Map<String, Object>> backend = new LinkedHashMap<>();
    backend.put(slots.globalIndex(0), Map.of("x", Map.of("unit", 0L)));
    record(
        log,
        () -> {
          c.updateProductionStatus(
              new ProductionUpdate(
                  "train", slots.globalIndexes(), Map.of("x", F32_2, "y", F32_2), backend));
          return "notified";
        });
    record(
        log,
        () -> {
          c.updateProductionStatus(
              ProductionUpdate.of(
                  "train",
                  slots.globalIndexes(),
                  Map.of("x", FieldSchema.regular(DType.INT64, 2))));
          return "conflict accepted";
        });
    record(
        log,
        () -> {
          c.checkPut(
              "train",
              Map.of("x", FieldSchema.regular(DType.INT8, 2)),
              slots.globalIndexArray(),
              slots.generationArray());
          return "schema accepted";
        });
    record(
        log,
        () -> {
          c.checkPut(
              "train",
              Map.of("x", F32_2, "z", FieldSchema.nonTensorField()),
              slots.globalIndexArray(),
              slots.generationArray());
          return "schema accepted";
        });
    record(log, () -> c.getSampleMeta("train", slots.globalIndexes(), List.of("x")));
    record(log, () -> c.getSampleMeta("train", List.of(999L), null));
    record(log, () -> c.getProductionStatus("train", List.of("x", "y")));
    record(log, () -> c.getProductionStatus("nope", List.of("x")));
    record(log, () -> c.scanReady("train", List.of("x"), "actor"));
    record(log, () -> c.getMetadata(GetMetadataRequest.fetch("train", List.of("x"), "actor", 2)));
    record(log, () -> c.getConsumptionStatus("train", "actor"));
    record(log, () -> c.getConsumptionStatus("nope", "actor"));
    record(log, () -> c.resetConsumption("train", "actor"));
    record(log, () -> c.resetConsumption("train", "actor"));
    record(log, () -> c.getConsumptionStatus("train", "actor"));
    record(log, () -> c.getMetadata(GetMetadataRequest.forceFetch("train", List.of("x", "y"))));
    record(log, () -> c.getMetadata(GetMetadataRequest.forceFetch("nope", List.of("x"))));
    record(log, () -> c.getPartitionMeta("train"));
    record(log, () -> c.getPartitionMeta("nope"));
    Map<Long, Map<String, Object>> tags = new LinkedHashMap<>();
    tags.put(slots.globalIndex(1), Map.of("score", 0.5, "ok", true));
    record(log, () -> c.setTags(TagUpdate.merge("train", tags)));
    record(log, () -> c.getTags("train", slots.globalIndexes()));
    record(log, () -> c.getBackendMeta("train", slots.globalIndexes(), List.of("x")));
    record(log, () -> c.resolveKeys("kv", List.of("a", "b"), true));
    record(log, () -> c.resolveKeys("kv", List.of("a", "zz"), false));
    record(log, () -> c.resolveKeys("kv", List.of("a", "a"), false));
    record(log, () -> c.resolveKeysForPut("kv", List.of("b", "c"), Map.of("x", F32_2), 2));
    record(
        log,
        () ->
            c.resolveKeysForPut(
                "train", List.of("d"), Map.of("x", FieldSchema.regular(DType.INT8, 2)), 1));
    record(log, () -> c.resolveKeysForPut("kv2", List.of("a"), Map.of(), 1));
    record(log, () -> c.resolveKeysForPut("kv", List.of("e", "e"), Map.of(), 2));
    record(log, () -> c.resolveIndexes("kv", range(0, 12)));
    record(log, () -> c.listKeys("kv"));
    record(log, () -> c.listKeys(null));
    record(log, () -> c.listKeys("nope"));
    record(log, () -> c.partitionStatistics("train"));
    record(log, () -> c.partitionStatistics("nope"));
    record(log, c::statistics);
    record(
        log,
        () ->
            c.markClearing(
                new ClearSamplesRequest(
                    slots.globalIndexes().subList(0, 2), List.of("train", "train"), true)));
    record(log, () -> c.getMetadata(GetMetadataRequest.forceFetch("train", List.of("x"))));
    record(
        log,
        () ->
            c.clearSamples(
                new ClearSamplesRequest(
                    slots.globalIndexes().subList(0, 2), List.of("train", "train"), true)));
    record(log, () -> c.clearPartition("kv"));
    record(log, () -> c.clearPartition("kv"));
    record(log, c::statistics);
    record(log, c::listPartitions);
    return log;
  }

  private static void record(List<Object> log, Supplier<Object> op) {
    try {
      log.add(op.get());
    } catch (TqException e) {
      log.add("error " + e.code());
    }
  }

  @Test
  void A1_everyOperationThroughTheServerEqualsTheInProcessAnswer(BufferAllocator allocator) {
    Controller local = controller(CALL);
    Controller served = controller(CALL);
    local.publishMetricsEndpoint("127.0.0.1:9100");
    served.publishMetricsEndpoint("127.0.0.1:9100");
    List<Object> expected = scenario(local);
    try (ControllerServer server = ControllerServer.start(served, transport().build(), allocator);
        TransportClient client = new TransportClient(transport().build(), allocator)) {
      RemoteController remote = remote(client, server);
      List<Object> actual = scenario(remote);
      assertThat(actual).hasSameSizeAs(expected);
      for (int i = 0; i < expected.size(); i++) {
        assertThat(actual.get(i)).as("answer %d", i).isEqualTo(expected.get(i));
      }
      assertThat(expected).contains("error " + ErrorCode.SCHEMA_CONFLICT);
      assertThat(remote.controllerId()).isEqualTo(served.controllerId());
    }
  }

  @Test
  void shouldEncodeAndDecodeEveryMessageTypeWithoutSockets(BufferAllocator allocator) {
    Controller local = controller(CALL);
    Controller served = controller(CALL);
    List<Object> expected = scenario(local);
    expected.add(local.controllerId().equals(local.snapshotState().controllerId()));
    try (ControllerServer server = ControllerServer.start(served, transport().build(), allocator)) {
      Set<Integer> sent = new TreeSet<>();
      DocumentedLayouts layouts = DocumentedLayouts.read();
      // Requests are encoded by the proxy, decoded and answered by the server's handlers and the
      // replies decoded by the proxy, all in this thread: no byte crosses a socket. Every request
      // and reply is also held against the layout docs/PROTOCOL.md gives for its type.
      RemoteController remote =
          new RemoteController(
              (type, metadata, timeout) -> {
                sent.add(type);
                try (InProcessExchange reply =
                    InProcessExchange.call(
                        server.transport(), type, metadata, List.of(), allocator)) {
                  layouts.check(type, metadata, reply.metadata());
                  return reply.metadata();
                } catch (TqException failed) {
                  layouts.check(type, metadata, null);
                  throw failed;
                }
              },
              server.address(),
              CALL,
              CALL);
      List<Object> actual = scenario(remote);
      actual.add(remote.controllerId().equals(remote.snapshotState().controllerId()));
      assertThat(actual).hasSameSizeAs(expected);
      for (int i = 0; i < expected.size(); i++) {
        assertThat(actual.get(i)).as("answer %d", i).isEqualTo(expected.get(i));
      }
      ControllerState before = served.snapshotState();
      remote.clearPartition("train");
      remote.restoreState(before);
      assertThat(served.snapshotState()).isEqualTo(before);
      assertThat(sent)
          .containsExactlyElementsOf(ProtocolTables.typeIds(ControllerProtocol.types()));
      assertThat(layouts.checked()).containsAll(sent);
    }
  }

  @Test
  void shouldRejectWrongArgumentCountsOfEveryMessageTypeWithoutSockets(BufferAllocator allocator) {
    Controller served = controller(CALL);
    try (ControllerServer server = ControllerServer.start(served, transport().build(), allocator)) {
      for (int type : ProtocolTables.typeIds(ControllerProtocol.types())) {
        byte[] tooMany = new MetaWriter().arrayHeader(9).toByteArray();
        assertThatThrownBy(
                () ->
                    InProcessExchange.call(server.transport(), type, tooMany, List.of(), allocator)
                        .close())
            .as("type %d", type)
            .isInstanceOf(ProtocolException.class)
            .hasMessageContaining("message type " + type);
      }
      assertThat(served.listPartitions()).isEmpty();
    }
  }

  @Test
  void shouldWakeBlockingFetchWhenAnotherClientNotifies(BufferAllocator allocator) {
    Controller served = controller(CALL, Clock.SYSTEM);
    try (ControllerServer server = ControllerServer.start(served, transport().build(), allocator);
        TransportClient consumerTransport = new TransportClient(transport().build(), allocator);
        TransportClient producerTransport = new TransportClient(transport().build(), allocator)) {
      RemoteController consumer = remote(consumerTransport, server);
      RemoteController producer = remote(producerTransport, server);
      CompletableFuture<BatchMeta> fetch =
          CompletableFuture.supplyAsync(
              () ->
                  consumer.getMetadata(
                      GetMetadataRequest.fetch("p", List.of("x"), "actor", 2)
                          .withTimeout(Duration.ofSeconds(30))));
      Await.until(() -> consumerTransport.outstandingCalls() == 1, "the fetch is in flight");
      // While the fetch waits, other requests keep flowing.
      BatchMeta slots = producer.getMetadata(GetMetadataRequest.insert("p", List.of("x"), 2));
      assertThat(producer.listPartitions()).containsExactly("p");
      assertThat(fetch).isNotDone();
      producer.updateProductionStatus(
          ProductionUpdate.of("p", slots.globalIndexes(), Map.of("x", F32_2)));
      BatchMeta fetched = fetch.join();
      assertThat(fetched.globalIndexes()).isEqualTo(slots.globalIndexes());
      assertThat(fetched.field("x")).isEqualTo(F32_2);
    }
  }

  @Test
  void shouldFailTypedWhenBlockingFetchDeadlinePasses(BufferAllocator allocator) {
    Controller served = controller(CALL, Clock.SYSTEM);
    try (ControllerServer server = ControllerServer.start(served, transport().build(), allocator);
        TransportClient client = new TransportClient(transport().build(), allocator)) {
      RemoteController remote =
          new RemoteController(client, server.address(), CALL, Duration.ofMillis(200));
      remote.createPartition("p");
      assertThatThrownBy(
              () -> remote.getMetadata(GetMetadataRequest.fetch("p", List.of("x"), "actor", 1)))
          .isInstanceOf(DeadlineExceededException.class)
          .hasMessageContaining("Timeout while waiting for sufficient data");
      assertThat(remote.listPartitions()).containsExactly("p");
    }
  }

  @Test
  void shouldCarryControllerErrorCodesWhenRequestsAreRejected(BufferAllocator allocator) {
    Controller served = controller(CALL);
    try (ControllerServer server = ControllerServer.start(served, transport().build(), allocator);
        TransportClient client = new TransportClient(transport().build(), allocator)) {
      RemoteController remote = remote(client, server);
      BatchMeta slots = remote.getMetadata(GetMetadataRequest.insert("p", List.of("x"), 2));
      remote.updateProductionStatus(
          ProductionUpdate.of("p", slots.globalIndexes(), Map.of("x", F32_2)));
      assertThatThrownBy(
              () ->
                  remote.updateProductionStatus(
                      ProductionUpdate.of(
                          "p",
                          slots.globalIndexes(),
                          Map.of("x", FieldSchema.regular(DType.INT8, 2)))))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.SCHEMA_CONFLICT));
      assertThatThrownBy(
              () -> remote.updateProductionStatus(ProductionUpdate.of("q", List.of(0L), Map.of())))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNKNOWN_PARTITION));
      assertThatThrownBy(() -> remote.resolveIndexes("p", List.of()))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
      assertThat(served.getProductionStatus("p", List.of("x")).orElseThrow().allProduced())
          .isTrue();
    }
  }

  @Test
  void shouldAnswerMalformedRequestsWithErrorsAndKeepServing(BufferAllocator allocator) {
    Controller served = controller(CALL);
    try (ControllerServer server = ControllerServer.start(served, transport().build(), allocator);
        TransportClient client = new TransportClient(transport().build(), allocator)) {
      List<ErrorCode> codes = new ArrayList<>();
      byte[][] bad = {
        {(byte) 0xc1},
        new MetaWriter().arrayHeader(2).string("p").toByteArray(),
        new MetaWriter().arrayHeader(1).integer(42).toByteArray(),
        new MetaWriter().arrayHeader(1).string("p").string("trailing").toByteArray(),
        new byte[0],
      };
      for (byte[] metadata : bad) {
        codes.add(errorOf(client, server, ControllerProtocol.GET_METADATA.typeId(), metadata));
      }
      // Well-formed but invalid: an insert of batch size 0, encoded by hand.
      MetaWriter zero = new MetaWriter().arrayHeader(1).arrayHeader(7);
      zero.string("INSERT").string("p").strings(List.of("x")).string(null).integer(0);
      zero.arrayHeader(3).nil().nil().nil().nil();
      codes.add(
          errorOf(client, server, ControllerProtocol.GET_METADATA.typeId(), zero.toByteArray()));
      // A null key list reaches the controller as null.
      MetaWriter nullKeys = new MetaWriter().arrayHeader(3).string("p").nil().bool(true);
      codes.add(
          errorOf(
              client, server, ControllerProtocol.RESOLVE_KEYS.typeId(), nullKeys.toByteArray()));
      // A fetch asking to wait longer than any server allows.
      MetaWriter endless = new MetaWriter().arrayHeader(1);
      ControllerCodec.writeGetMetadataRequest(
          endless,
          GetMetadataRequest.fetch("p", List.of("x"), "t", 1).withTimeout(Duration.ofDays(2)));
      codes.add(
          errorOf(client, server, ControllerProtocol.GET_METADATA.typeId(), endless.toByteArray()));
      codes.add(errorOf(client, server, 199, new MetaWriter().arrayHeader(0).toByteArray()));
      assertThat(codes)
          .containsExactly(
              ErrorCode.PROTOCOL_ERROR,
              ErrorCode.PROTOCOL_ERROR,
              ErrorCode.PROTOCOL_ERROR,
              ErrorCode.PROTOCOL_ERROR,
              ErrorCode.PROTOCOL_ERROR,
              ErrorCode.INVALID_ARGUMENT,
              ErrorCode.INVALID_ARGUMENT,
              ErrorCode.INVALID_ARGUMENT,
              ErrorCode.UNSUPPORTED_OPERATION);
      RemoteController remote = remote(client, server);
      assertThat(remote.createPartition("after")).isTrue();
      assertThat(served.listPartitions()).containsExactly("after");
    }
  }

  @Test
  void shouldAnswerInvalidUtf8WithProtocolErrorAndKeepServingWhenAForeignClientSendsIt(
      BufferAllocator allocator) {
    Controller served = controller(CALL);
    try (ControllerServer server = ControllerServer.start(served, transport().build(), allocator);
        TransportClient client = new TransportClient(transport().build(), allocator)) {
      served.createPartition("p");
      // What a client that does not check its strings would send: U+D800 encoded as if it were a
      // code point (ED A0 80), which is not UTF-8; the server must not store it as "\uFFFD...".
      byte[] surrogate = {(byte) 0xa3, (byte) 0xed, (byte) 0xa0, (byte) 0x80};
      byte[] create = ProtocolTables.concat(new byte[] {(byte) 0x91}, surrogate);
      byte[] resolve =
          ProtocolTables.concat(
              new byte[] {(byte) 0x93, (byte) 0xa1, 'p', (byte) 0x91}, surrogate, TRUE);
      MetaWriter tags = new MetaWriter().arrayHeader(1).arrayHeader(2).string("MERGE");
      tags.mapHeader(1).string("p").mapHeader(1).integer(0).mapHeader(1).string("t");
      byte[] setTags = ProtocolTables.concat(tags.toByteArray(), surrogate);
      assertThat(errorOf(client, server, ControllerProtocol.CREATE_PARTITION.typeId(), create))
          .isEqualTo(ErrorCode.PROTOCOL_ERROR);
      assertThat(errorOf(client, server, ControllerProtocol.RESOLVE_KEYS.typeId(), resolve))
          .isEqualTo(ErrorCode.PROTOCOL_ERROR);
      assertThat(errorOf(client, server, ControllerProtocol.SET_TAGS.typeId(), setTags))
          .isEqualTo(ErrorCode.PROTOCOL_ERROR);
      assertThat(served.listPartitions()).containsExactly("p");
      assertThat(served.listKeys("p").partitions().get("p")).isEmpty();
      RemoteController remote = remote(client, server);
      assertThat(remote.createPartition("after \uD83D\uDE00")).isTrue();
      assertThat(served.listPartitions()).containsExactly("p", "after \uD83D\uDE00");
    }
  }

  @Test
  void shouldRefuseAnEmptyKeyWhenARemoteClientSendsIt(BufferAllocator allocator) {
    Controller served = controller(CALL);
    try (ControllerServer server = ControllerServer.start(served, transport().build(), allocator);
        TransportClient client = new TransportClient(transport().build(), allocator)) {
      for (List<String> keys : List.of(List.of(""), List.of("a", ""))) {
        MetaWriter resolve = new MetaWriter().arrayHeader(3).string("p").strings(keys).bool(true);
        assertThatThrownBy(
                () ->
                    client
                        .call(
                            server.address(),
                            Request.of(
                                ControllerProtocol.RESOLVE_KEYS.typeId(), resolve.toByteArray()),
                            BodyDestination.into(List.of()),
                            CALL)
                        .close())
            .isInstanceOfSatisfying(
                TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
            .hasMessageContaining("key at position " + keys.indexOf("") + " is empty")
            .hasMessageContaining("\"\"");
      }
      assertThat(served.listPartitions()).isEmpty();
    }
  }

  private static final byte[] TRUE = {(byte) 0xc3};

  private static ErrorCode errorOf(
      TransportClient client, ControllerServer server, int type, byte[] metadata) {
    try {
      client
          .call(server.address(), Request.of(type, metadata), BodyDestination.into(List.of()), CALL)
          .close();
    } catch (TqException e) {
      return e.code();
    }
    throw new AssertionError("type " + type + " was accepted");
  }

  @Test
  void shouldRefuseClientsWithoutTheTokenWhenAuthIsConfigured(BufferAllocator allocator) {
    Controller served = controller(CALL);
    try (ControllerServer server =
            ControllerServer.start(served, transport().authToken("tok-123").build(), allocator);
        TransportClient anonymous = new TransportClient(transport().build(), allocator);
        TransportClient member =
            new TransportClient(transport().authToken("tok-123").build(), allocator)) {
      assertThatThrownBy(() -> remote(anonymous, server).createPartition("p"))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAUTHENTICATED));
      assertThat(served.listPartitions()).isEmpty();
      assertThat(remote(member, server).createPartition("p")).isTrue();
    }
  }

  @Test
  void shouldRejectDecodingGarbageWithProtocolException() {
    assertThatThrownBy(
            () -> MetaCodec.decode(new byte[] {(byte) 0x91}, ControllerCodec::readTagUpdate))
        .isInstanceOf(ProtocolException.class);
  }
}
