package org.transferqueue.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.RootAllocator;

class StorageManagerRegistryTest {

  @Test
  void shouldListSupportedNamesWhenBackendIsUnknown() {
    StorageManagerRegistry registry =
        StorageManagerRegistry.builder()
            .register(StorageManagerRegistry.SIMPLE_STORAGE, ctx -> null)
            .register(StorageManagerRegistry.MOONCAKE_STORE, ctx -> null)
            .build();

    try (RootAllocator allocator = RootAllocator.builder().build()) {
      StorageContext context = new StorageContext(allocator, ProductionNotifier.NO_OP);
      assertThatThrownBy(() -> registry.create("Foo", context))
          .isInstanceOfSatisfying(
              TqException.class,
              e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION))
          .hasMessageContaining("'Foo'")
          .hasMessageContaining("[SimpleStorage, MooncakeStore]");
    }
  }

  @Test
  void shouldRejectDuplicateRegistration() {
    StorageManagerRegistry.Builder builder =
        StorageManagerRegistry.builder().register("SimpleStorage", ctx -> null);

    assertThatThrownBy(() -> builder.register("SimpleStorage", ctx -> null))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.DUPLICATE_KEY));
  }
}
