"""Reuse of freed tensor memory in this process.

Every ``get`` returns new tensors (``torch.empty`` per column, then the bytes are received into
them). glibc serves an allocation above its mmap threshold (at most 32 MiB by default) with fresh
pages from the kernel and gives them back when the tensor is freed, so each get of large columns
pays a page fault per 4 KiB page on first touch: on a typical host that caps filling fresh memory
at a few GB/s, below the speed of the loopback socket. :func:`retain_freed_memory` raises the
threshold and the trim threshold, so large tensors are carved from heap memory that freed tensors
leave behind and that stays mapped: the process keeps what it grew, as the Java servers' pools do.

It is process-wide and opt-in (``python.reuse_freed_memory: true``): the process's resident memory
then stays at its peak instead of shrinking when tensors are freed.

glibc alone is not enough for the largest columns: a small allocation carved from the free space a
freed column left at the top of the heap leaves too little for the next column of that size, which
then gets fresh pages again (every other get, in a loop of same-sized gets). So with the option on,
result columns of at least :data:`POOLED_MIN_BYTES` come from :func:`empty`: blocks of anonymous
memory kept for reuse by size (like the Java client's block pool), at most
:data:`POOLED_MAX_BYTES` of them idle, a block going back to the pool when the last tensor over it
is garbage.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import mmap
import threading
import weakref

import numpy as np
import torch

logger = logging.getLogger(__name__)

# glibc's mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
# Allocations up to this size come from the heap; glibc refuses values above its limit, in which
# case the largest accepted power of two is used.
_MMAP_THRESHOLD_BYTES = 1 << 30
_TRIM_THRESHOLD_BYTES = 0x7FFFFFFF

_retained: int | None = None


def retain_freed_memory() -> int:
    """Makes glibc keep freed memory for later tensors; returns the mmap threshold now in force.

    Idempotent. Returns 0 (and logs a warning) where the C library is not glibc or refuses every
    threshold: nothing was changed then.
    """
    global _retained
    if _retained is not None:
        return _retained
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError) as e:
        logger.warning("python.reuse_freed_memory: no glibc mallopt here (%s); freed memory is not retained", e)
        _retained = 0
        return 0
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    threshold = _MMAP_THRESHOLD_BYTES
    while threshold >= (32 << 20) and mallopt(_M_MMAP_THRESHOLD, threshold) != 1:
        threshold >>= 1
    if threshold < (32 << 20):
        logger.warning("python.reuse_freed_memory: mallopt refused every mmap threshold; freed memory is not retained")
        _retained = 0
        return 0
    mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD_BYTES)
    _retained = threshold
    return threshold


# Result columns at least this large come from the pool (when reuse_freed_memory is on).
POOLED_MIN_BYTES = 1 << 20
# The most bytes of idle blocks the pool keeps; a block freed beyond it is unmapped.
POOLED_MAX_BYTES = 4 << 30


def _block_size(nbytes: int) -> int:
    """The block for ``nbytes``: four size classes per power of two, so a block wastes at most a
    fifth of itself and same-sized columns always share a class."""
    step = max(mmap.PAGESIZE, (1 << (nbytes - 1).bit_length()) >> 2)
    return -(-nbytes // step) * step


class _BlockPool:
    """Idle anonymous memory blocks by size; thread-safe (finalizers run on any thread)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._idle: dict[int, list[mmap.mmap]] = {}
        self._idle_bytes = 0

    def take(self, size: int) -> mmap.mmap:
        with self._lock:
            blocks = self._idle.get(size)
            if blocks:
                self._idle_bytes -= size
                return blocks.pop()
        return mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)

    def give_back(self, block: mmap.mmap) -> None:
        size = len(block)
        with self._lock:
            if self._idle_bytes + size <= POOLED_MAX_BYTES:
                self._idle.setdefault(size, []).append(block)
                self._idle_bytes += size
                return
        block.close()

    def idle_bytes(self) -> int:
        with self._lock:
            return self._idle_bytes


_POOL = _BlockPool()


def _give_back(block: mmap.mmap) -> None:
    try:
        _POOL.give_back(block)
    except BufferError:  # still exported by a view that outlived its array: let it go
        pass


def empty(shape: tuple, dtype: torch.dtype) -> torch.Tensor:
    """An uninitialised tensor for a get's result column: from the block pool when
    ``reuse_freed_memory`` is on and the column is large (its pages then usually already mapped and
    touched), else ``torch.empty``."""
    nbytes = dtype.itemsize
    for d in shape:
        nbytes *= d
    if not _retained or nbytes < POOLED_MIN_BYTES:
        return torch.empty(shape, dtype=dtype)
    block = _POOL.take(_block_size(nbytes))
    array = np.frombuffer(block, dtype=np.uint8, count=nbytes)
    # torch keeps the array alive as long as any tensor over it; then the block is reused.
    weakref.finalize(array, _give_back, block)
    return torch.from_numpy(array).view(dtype).view(shape)


def pooled_idle_bytes() -> int:
    """Bytes of idle blocks the result pool keeps for reuse."""
    return _POOL.idle_bytes()
