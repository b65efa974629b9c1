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
    # glibc's alignment slack may leave one column on fresh pages; the rest is reused.
    assert retained <= PAGES // 4, f"{retained} page faults for 64 MiB of columns after batches of them were freed"
    if not _transparent_huge_pages_always():
        fresh = _faults("default")
        assert fresh > PAGES // 2, f"the control: glibc's defaults gave only {fresh} faults"


def test_the_setting_is_off_by_default_and_refuses_unknown_neighbours():
    assert configs.load(None)["python"]["reuse_freed_memory"] is False
    assert configs.load({"python": {"reuse_freed_memory": True}})["python"]["reuse_freed_memory"] is True
    with pytest.raises(Exception, match="reuse_freed_memry"):
        configs.load({"python": {"reuse_freed_memry": True}})
