"""Lifecycle of the embedded default: init()/close() cycles leave nothing behind, and the Java roles
die with an interpreter killed by SIGKILL.

Each case runs in a fresh interpreter (a child of the test), so that what it leaves is its own.
"""

from __future__ import annotations

import json
import os
import pwd
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"


def _env(tmp: Path) -> dict:
    env = dict(os.environ, TMPDIR=str(tmp), PYTHONDONTWRITEBYTECODE="1")
    if os.environ.get("TQ_PYTHON_INSTALLED") != "1":
        env["PYTHONPATH"] = os.pathsep.join([str(SRC)] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


# Children, sockets and files of the running interpreter, from /proc.
_PROBE = textwrap.dedent("""
    import os, json
    def children():
        out = []
        for t in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{t}/children") as f:
                out += [int(p) for p in f.read().split()]
        return sorted(out)
    def fds():
        kinds = {}
        for fd in os.listdir("/proc/self/fd"):
            try:
                target = os.readlink(f"/proc/self/fd/{fd}")
            except OSError:
                continue
            kinds[fd] = target
        return kinds
    def sockets():
        return sorted(t for t in fds().values() if t.startswith("socket:"))
""")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("cycles", [3, pytest.param(20, marks=pytest.mark.slow)])
def test_init_close_cycles_leave_no_process_socket_or_file(need_servers, tmp_path, cycles):
    """20 cycles take 20 role starts of a JVM each (about 3 minutes on 2 busy cores): ``-m slow``;
    3 cycles run by default."""
    script = _PROBE + textwrap.dedent("""
        import sys, tempfile, torch
        import transferqueue_jvm as tq
        base_children, base_sockets, base_fds = children(), sockets(), set(fds())
        pids, peak = [], 0
        for i in range(int(sys.argv[1])):
            conf = tq.init({"backend": {"storage_backend": ["SimpleStorage", "MooncakeStore"][i % 2]}})
            tq.kv_put("k", "p", {"x": torch.arange(4)})
            assert tq.kv_batch_get("k", "p")["x"].tolist() == [[0, 1, 2, 3]]
            now = children()
            peak = max(peak, len(now))
            pids += now
            tq.close()
            assert children() == base_children, (i, children())
        left_fds = {fd: t for fd, t in fds().items() if fd not in base_fds}
        print(json.dumps({"pids": pids, "peak": peak, "sockets": sockets(), "base_sockets": base_sockets,
                          "fds": left_fds, "tmp": sorted(os.listdir(tempfile.gettempdir()))}))
    """)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    r = subprocess.run([sys.executable, "-c", script, str(cycles)], capture_output=True, text=True, env=_env(tmp),
                       timeout=900)
    assert r.returncode == 0, r.stderr[-4000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["peak"] == 3 and len(set(out["pids"])) == 3 * cycles  # a controller and two servers each
    assert out["sockets"] == out["base_sockets"]
    assert out["fds"] == {}, out["fds"]
    assert out["tmp"] == []
    assert not [p for p in out["pids"] if _alive(p)]
    # and no JVM left its perf-data file (it deletes it when it exits normally)
    perf = Path("/tmp") / f"hsperfdata_{pwd.getpwuid(os.getuid()).pw_name}"
    assert not [p for p in out["pids"] if (perf / str(p)).exists()]


def test_sigkill_of_the_interpreter_stops_the_java_roles(need_servers, tmp_path):
    script = _PROBE + textwrap.dedent("""
        import sys, time
        import transferqueue_jvm as tq
        tq.init({"backend": {"storage_backend": sys.argv[1]}})
        print(json.dumps(children()), flush=True)
        time.sleep(600)
    """)
    for backend in ("SimpleStorage", "MooncakeStore"):
        proc = subprocess.Popen([sys.executable, "-c", script, backend], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, env=_env(tmp_path))
        try:
            line = proc.stdout.readline()
            roles = json.loads(line)
            assert len(roles) == 3 and all(_alive(p) for p in roles)
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
            deadline = time.monotonic() + 30
            while any(_alive(p) for p in roles) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert not [p for p in roles if _alive(p)], f"{backend}: roles outlived their parent"
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


@pytest.mark.parametrize("backend", ["SimpleStorage"])
def test_close_at_interpreter_exit_stops_the_roles(need_servers, tmp_path, backend):
    script = _PROBE + textwrap.dedent("""
        import sys
        import transferqueue_jvm as tq
        tq.init({"backend": {"storage_backend": sys.argv[1]}})
        print(json.dumps(children()), flush=True)
    """)  # no close(): atexit does it
    r = subprocess.run([sys.executable, "-c", script, backend], capture_output=True, text=True,
                       env=_env(tmp_path), timeout=120)
    assert r.returncode == 0, r.stderr[-4000:]
    roles = json.loads(r.stdout.strip().splitlines()[-1])
    assert len(roles) == 3 and not [p for p in roles if _alive(p)]
