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
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging

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
