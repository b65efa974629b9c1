"""python.reuse_freed_memory: freed tensor memory is reused instead of faulted in afresh."""

import subprocess
import sys
import textwrap

import pytest

from transferqueue_jvm import config as configs

# A get's pattern: the columns of one batch (4 x 16 MiB) are allocated, filled and freed; then the
# page faults of a later batch's columns are counted.
_PROBE = textwrap.dedent("""
    import resource, sys, torch
    if sys.argv[1] == "retain":
        from transferqueue_jvm.memory import retain_freed_memory
        assert retain_freed_memory() >= 32 << 20
    n = 4 << 20
    def batch(value):
        columns = [torch.empty(n, dtype=torch.float32) for _ in range(4)]
        for c in columns:
            c.fill_(value)
        return columns
    for value in range(2):  # the heap settles after a batch or two
        del batch(value)[:]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    columns = batch(3)
    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
""")
PAGES = (64 << 20) // 4096


def _faults(mode: str) -> int:
    out = subprocess.run([sys.executable, "-c", _PROBE, mode], capture_output=True, text=True, timeout=120,
                         env={**__import__("os").environ, "PYTHONPATH": ":".join(sys.path)})
    assert out.returncode == 0, out.stderr
    return int(out.stdout.split()[-1])


def _transparent_huge_pages_always() -> bool:
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            return "[always]" in f.read()
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt and /proc fault counts")
def test_a_freed_tensor_is_reused_without_page_faults_when_retained():
    retained = _faults("retain")
    # glibc's alignment slack may leave one column (and a few pages of the heap's own) on fresh
    # pages; the rest is reused.
    assert retained <= PAGES // 4 + 64, f"{retained} page faults for 64 MiB of columns after batches of them were freed"
    if not _transparent_huge_pages_always():
        fresh = _faults("default")
        assert fresh > PAGES // 2, f"the control: glibc's defaults gave only {fresh} faults"


def test_the_setting_is_off_by_default_and_refuses_unknown_neighbours():
    assert configs.load(None)["python"]["reuse_freed_memory"] is False
    assert configs.load({"python": {"reuse_freed_memory": True}})["python"]["reuse_freed_memory"] is True
    with pytest.raises(Exception, match="reuse_freed_memry"):
        configs.load({"python": {"reuse_freed_memry": True}})


# The pattern glibc alone fails on: a large column freed, a small allocation, the same large column
# again (it no longer fits the heap's free top), repeated. Pooled columns reuse their pages.
_POOL_PROBE = textwrap.dedent("""
    import gc, resource, sys, torch
    from transferqueue_jvm import memory
    assert memory.retain_freed_memory() >= 32 << 20
    n = 64 << 20
    keep = []
    faults = []
    for i in range(6):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        column = memory.empty((n // 4,), torch.float32)
        column.fill_(i)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
        assert float(column[-1]) == i
        del column
        gc.collect()
        keep.append(bytearray(4096))  # what a get allocates besides its columns
    print(max(faults[2:]), memory.pooled_idle_bytes())
""")


def test_large_result_columns_reuse_pooled_pages():
    out = subprocess.run([sys.executable, "-c", _POOL_PROBE], capture_output=True, text=True, timeout=120,
                         env={**__import__("os").environ, "PYTHONPATH": ":".join(sys.path)})
    assert out.returncode == 0, out.stderr
    faults, idle = map(int, out.stdout.split())
    assert faults < ((64 << 20) // 4096) // 10, f"{faults} page faults: the column's pages were fresh"
    assert idle == 64 << 20, "the freed column's block is kept for the next one"


def test_small_or_unpooled_columns_are_plain_tensors():
    import torch
    from transferqueue_jvm import memory
    small = memory.empty((10, 3), torch.int64)
    assert small.shape == (10, 3) and small.dtype == torch.int64
    if not memory._retained:  # this process never asked to retain freed memory
        large = memory.empty((1 << 20,), torch.float32)
        assert large.shape == (1 << 20,) and memory.pooled_idle_bytes() == 0
