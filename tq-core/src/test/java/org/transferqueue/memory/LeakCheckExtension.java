package org.transferqueue.memory;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives each test a fresh {@link RootAllocator} with {@link LeakPolicy#THROW} and fails the test if
 * any buffer or child allocator is still open when it ends. The allocator also checks use after
 * release ({@link RootAllocator.Builder#checkUseAfterRelease}): a test that touches a buffer's
 * memory after its last release fails with {@link IllegalStateException} instead of reading another
 * lease's bytes.
 *
 * <pre>{@code
 * @ExtendWith(LeakCheckExtension.class)
 * class CellStoreTest {
 *   @Test
 *   void shouldStoreCell(BufferAllocator allocator) { ... }
 * }
 * }</pre>
 *
 * Parameters of type {@link BufferAllocator} or {@link RootAllocator} (in test, {@code @BeforeEach}
 * and {@code @AfterEach} methods) receive the test's allocator. Resources a test's
 * {@code @AfterEach} closes are closed before the check runs.
 */
public final class LeakCheckExtension
    implements BeforeEachCallback, AfterEachCallback, ParameterResolver {
  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(LeakCheckExtension.class);

  @Override
  public void beforeEach(ExtensionContext context) {
    RootAllocator allocator =
        RootAllocator.builder()
            .name("test:" + context.getDisplayName())
            .limitBytes(1L << 32)
            .leakPolicy(LeakPolicy.THROW)
            .trackAllocationSites(true)
            .checkUseAfterRelease(true)
            .build();
    context.getStore(NAMESPACE).put(RootAllocator.class, allocator);
  }

  @Override
  public void afterEach(ExtensionContext context) {
    RootAllocator allocator =
        context.getStore(NAMESPACE).remove(RootAllocator.class, RootAllocator.class);
    if (allocator != null) {
      allocator.close();
    }
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    Class<?> type = parameter.getParameter().getType();
    return type == BufferAllocator.class || type == RootAllocator.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    return context.getStore(NAMESPACE).get(RootAllocator.class, RootAllocator.class);
  }
}
