"""CPU time and peak memory of a process tree, from /proc (Linux).

A system under test is every process descended from its host process: for upstream, the Ray
driver, ``gcs_server``, ``raylet``, Ray's agents and workers (controller, storage units, the two
clients) and ``mooncake_master``; for this project, the Java controller, storage units or store
nodes and the two Python clients.
"""

from __future__ import annotations

import os

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat_fields(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    # comm may hold spaces and parentheses: the fields after it start past the last ')'.
    close = raw.rfind(")")
    return [raw[raw.find("(") + 1:close]] + raw[close + 2:].split()


def tree(root: int) -> dict[int, str]:
    """``{pid: comm}`` of ``root`` and all its descendants alive now."""
    children: dict[int, list[int]] = {}
    names: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        f = _stat_fields(int(entry))
        if f is None:
            continue
        pid = int(entry)
        names[pid] = f[0]
        children.setdefault(int(f[2]), []).append(pid)  # f[1] state, f[2] ppid
    out: dict[int, str] = {}
    stack = [root]
    while stack:
        pid = stack.pop()
        if pid in names and pid not in out:
            out[pid] = names[pid]
            stack.extend(children.get(pid, ()))
    return out


def cpu_seconds(pids) -> float:
    """User + system CPU seconds of the processes, with their reaped children's (so that a
    process of the tree that ended and was reaped by another one still counts)."""
    total = 0
    for pid in pids:
        f = _stat_fields(pid)
        if f is None:
            continue
        # f[0] is comm, then from state on: state f[1], ppid f[2], ..., utime f[12], stime f[13],
        # cutime f[14], cstime f[15] (proc(5) fields 14 to 17; f[16] is the priority)
        total += int(f[12]) + int(f[13]) + int(f[14]) + int(f[15])
    return total / _TICKS


def peak_rss(pids) -> dict[int, int]:
    """``{pid: VmHWM bytes}`` (the peak resident set of each live process)."""
    out: dict[int, int] = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status", encoding="utf-8", errors="replace") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        out[pid] = int(line.split()[1]) * 1024
                        break
        except OSError:
            continue
    return out


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return ""


class TreeMeter:
    """Follows one system's process tree: CPU deltas and the peak RSS of every process seen."""

    def __init__(self, root: int):
        self.root = root
        self.peaks: dict[int, int] = {}
        self.names: dict[int, str] = {}
        self.commands: dict[int, str] = {}

    def snapshot(self) -> float:
        pids = tree(self.root)
        for pid, name in pids.items():
            if pid not in self.names:
                self.names[pid] = name
                self.commands[pid] = cmdline(pid)[:200]
        return cpu_seconds(pids)

    def sample_memory(self) -> None:
        for pid, rss in peak_rss(tree(self.root)).items():
            if rss > self.peaks.get(pid, 0):
                self.peaks[pid] = rss

    def memory_report(self) -> list[dict]:
        rows = [{"pid": pid, "name": self.names.get(pid, "?"), "command": self.commands.get(pid, ""),
                 "peak_rss_bytes": rss} for pid, rss in self.peaks.items()]
        rows.sort(key=lambda r: -r["peak_rss_bytes"])
        return rows
