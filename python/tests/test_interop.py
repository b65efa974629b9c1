"""Interoperability in one deployment: Python puts and Java gets, Java puts and Python gets, for
every dtype and column kind, byte for byte, on both backends of a ``tq up`` system.

The Java side is tests/java/Interop.java (the Java client, compiled once against the server jar):
it writes the seeded data set of interop_data.py and dumps what it reads as exact JSON.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import interop_data
from conftest import BACKENDS
from deployments import java_base
from transferqueue_jvm import launcher

ROWS = 4
SOURCE = Path(__file__).parent / "java" / "Interop.java"


@pytest.fixture(scope="module")
def java_interop(need_servers, tmp_path_factory):
    """A function running Interop.java with arguments; returns its stdout."""
    java = launcher.find_java()
    jar = str(launcher.jar_path())
    javac = Path(java).with_name("javac")
    if javac.is_file():
        classes = tmp_path_factory.mktemp("interop-classes")
        subprocess.run([str(javac), "-cp", jar, "-d", str(classes), str(SOURCE)], check=True,
                       capture_output=True, timeout=180)
        command = java_base(java) + ["-cp", f"{jar}:{classes}", "Interop"]
    else:  # a runtime without javac: the source launcher compiles it on each run
        command = java_base(java) + ["-cp", jar, str(SOURCE)]

    def run(*args: str) -> str:
        r = subprocess.run(command + list(args), capture_output=True, text=True, timeout=180)
        assert r.returncode == 0, r.stderr
        return r.stdout

    return run


@pytest.fixture(scope="module", params=BACKENDS)
def system(request, up_system):
    import transferqueue_jvm as tq
    up = up_system(request.param)
    tq.close()
    tq.init(str(up.config))
    yield tq, up
    tq.close()


def test_java_reads_exactly_what_python_wrote(system, java_interop, pid):
    tq, up = system
    data = interop_data.data_set(ROWS)
    tq.kv_batch_put(interop_data.keys(ROWS), pid, data)
    expected = interop_data.dump(data)
    got = json.loads(java_interop("get", str(up.config), pid, *interop_data.keys(ROWS)))
    assert sorted(got) == sorted(expected)
    for field in expected:
        assert got[field] == expected[field], field
    # a subset in another order
    order = [3, 0, 2]
    got = json.loads(java_interop("get", str(up.config), pid, *[f"k{r}" for r in order]))
    assert got == interop_data.dump(interop_data.select_rows(data, order))


def test_python_reads_exactly_what_java_wrote(system, java_interop, pid):
    tq, up = system
    assert json.loads(java_interop("put", str(up.config), pid, str(ROWS))) == {"put": ROWS}
    expected = interop_data.dump(interop_data.data_set(ROWS))
    got = interop_data.dump(tq.kv_batch_get(interop_data.keys(ROWS), pid))
    assert sorted(got) == sorted(expected)
    for field in expected:
        assert got[field] == expected[field], field
    # the kinds are the kinds Java put: dense stays dense, jagged stays jagged, objects objects
    assert {f: v["kind"] for f, v in got.items()} == {f: v["kind"] for f, v in expected.items()}
    # and Java reads its own data back the same, so both sides agree on one data set
    assert json.loads(java_interop("get", str(up.config), pid, *interop_data.keys(ROWS))) == expected


def test_dump_tells_a_single_changed_byte():
    data = interop_data.data_set(2)
    before = interop_data.dump(data)
    data["d_bfloat16"].view(-1)[0] = data["d_bfloat16"].view(-1)[1]
    data["o"][1]["tensors"][9].view(-1)[0] += 1
    after = interop_data.dump(data)
    assert after["d_bfloat16"] != before["d_bfloat16"] and after["o"] != before["o"]
    assert after["d_float32"] == before["d_float32"]
