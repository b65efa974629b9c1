/**
 * Off-heap memory: the {@link org.transferqueue.memory.BufferAllocator} hierarchy with byte limits
 * and accounting, the size-class pool of reusable pre-touched blocks behind it, and the {@link
 * org.transferqueue.memory.RegisteredRegions} registry of long-lived regions.
 *
 * <p>Every tensor byte in the system lives in a {@link org.transferqueue.memory.NativeBuffer}
 * handed out by an allocator. Fresh native memory is slow to touch for the first time, so blocks
 * are pooled by size class and reused; a released buffer returns its block to the pool, not to the
 * operating system. Only this package creates {@link java.lang.foreign.Arena}s.
 *
 * <p>Shared memory between processes of one host: {@link org.transferqueue.memory.SharedSegment} (a
 * Linux memfd, created here or opened from another process) and {@link
 * org.transferqueue.memory.SharedMemoryPool} (a server's segments and the regions it hands out as
 * {@link org.transferqueue.memory.NativeBuffer}s, accounted through {@link
 * org.transferqueue.memory.BufferAllocator#wrapForeign}).
 */
package org.transferqueue.memory;
