"""Test set-up: the package from src/ (or the installed wheel under Maven), and Java systems."""

import os
import pathlib
import sys

if os.environ.get("TQ_PYTHON_INSTALLED") != "1":
    SRC = pathlib.Path(__file__).resolve().parents[1] / "src"
    if str(SRC) not in sys.path:
        sys.path.insert(0, str(SRC))

import pytest  # noqa: E402

BACKENDS = ["SimpleStorage", "MooncakeStore"]


def servers_available() -> str | None:
    """None when the server jar and a JDK 25 are there, else why not."""
    from transferqueue_jvm import launcher
    try:
        launcher.jar_path()
        launcher.find_java()
    except Exception as e:  # reported as the skip reason
        return str(e)
    return None


@pytest.fixture(scope="session")
def need_servers():
    why = servers_available()
    if why is not None:
        if os.environ.get("TQ_PYTHON_INSTALLED") == "1":
            pytest.fail(f"the Java servers are needed under Maven: {why}")
        pytest.skip(why)


@pytest.fixture(scope="module", params=BACKENDS)
def tq(request, need_servers):
    """transferqueue_jvm initialised on an embedded-default system of each backend."""
    import transferqueue_jvm as tq
    tq.close()
    tq.init({"backend": {"storage_backend": request.param}})
    tq.backend = request.param
    yield tq
    tq.close()


_counter = [0]


@pytest.fixture
def pid():
    """A fresh partition id per test."""
    _counter[0] += 1
    return f"p{_counter[0]}"
