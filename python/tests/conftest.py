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


_UP: dict = {}


@pytest.fixture(scope="session")
def up_system(need_servers):
    """``up_system(backend)``: a ``tq up`` process of that backend (started once per session, its
    roles separate processes reached through the ``network`` section of its tq.yaml)."""
    from deployments import UpSystem

    def get(backend: str) -> "UpSystem":
        if backend not in _UP:
            _UP[backend] = UpSystem(backend)
        return _UP[backend]

    yield get
    while _UP:
        _UP.popitem()[1].stop()


DEPLOYMENTS = [(b, d) for d in ("init", "up") for b in BACKENDS]


@pytest.fixture(scope="module", params=DEPLOYMENTS, ids=[f"{b}-{d}" for b, d in DEPLOYMENTS])
def tq(request, need_servers, up_system):
    """transferqueue_jvm initialised on each backend, both on an embedded-default system that
    init() starts (``init``) and on a ``tq up`` deployment started by the tests (``up``)."""
    import transferqueue_jvm as tq
    backend, deployment = request.param
    tq.close()
    tq.init_conf = {"backend": {"storage_backend": backend}} if deployment == "init" \
        else str(up_system(backend).config)
    tq.init(tq.init_conf)
    tq.backend = backend
    tq.deployment = deployment
    yield tq
    tq.close()


_counter = [0]


@pytest.fixture
def pid():
    """A fresh partition id per test."""
    _counter[0] += 1
    return f"p{_counter[0]}"
