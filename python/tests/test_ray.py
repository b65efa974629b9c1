"""Running on Ray: roles placed as actors on a local three-node cluster, attach by name, lifecycle.

The cluster (``ray.cluster_utils.Cluster``, no dashboard) has three logical nodes, each with its own
resource ``tq_node_<i>`` so actors can be pinned to a node.
"""

import os
import pathlib
import signal
import time

import pytest

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'ray==2.60.0')")

import torch  # noqa: E402

TESTS = str(pathlib.Path(__file__).resolve().parent)
SRC = str(pathlib.Path(__file__).resolve().parents[1] / "src")
NAMESPACE = "tq_ray_test"
# The `small` preset of `tq bench`: 1024 keys x 9 fields x 8192 float32 values (288 MiB).
SMALL_KEYS, SMALL_FIELDS, SMALL_LEN = 1024, 9, 8192
CHUNK = 128


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _wait(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} within {timeout}s")
        time.sleep(0.1)


def _live_actors(class_names=("_RoleActor", "_Registry")) -> list[dict]:
    from ray._private import state
    return [a for a in state.actors().values()
            if a.get("State") != "DEAD" and any(n in str(a.get("ActorClassName", "")) for n in class_names)]


def test_should_reject_bad_actor_resources_when_placing():
    from transferqueue_jvm import InvalidConfigurationError
    from transferqueue_jvm.ray_placement import _actor_options, _bundle
    key = "python.ray.storage_options"
    with pytest.raises(InvalidConfigurationError, match=r"storage_options.num_cpus: -1"):
        _actor_options({"num_cpus": -1}, key)
    with pytest.raises(InvalidConfigurationError, match=r"storage_options.resources: .*'x'"):
        _actor_options({"resources": {"tq": "x"}}, key)
    with pytest.raises(InvalidConfigurationError, match="needs a resource > 0"):
        _bundle(_actor_options({"num_cpus": 0, "num_gpus": 0}, key), key)
    assert _bundle(_actor_options({"num_cpus": 2, "num_gpus": 0, "resources": {"tq": 1}}, key), key) == \
        {"CPU": 2.0, "tq": 1.0}


def test_should_reject_an_unknown_placement_mode():
    from transferqueue_jvm import InvalidConfigurationError, init
    with pytest.raises(InvalidConfigurationError, match="python.placement: 'cloud'"):
        init({"python": {"placement": "cloud"}})


@pytest.fixture(scope="module")
def cluster(need_servers):
    from ray.cluster_utils import Cluster
    # The workers import this module (its actor classes) and, unless installed, the package from src/.
    paths = [TESTS] + ([SRC] if os.environ.get("TQ_PYTHON_INSTALLED") != "1" else [])
    os.environ["PYTHONPATH"] = os.pathsep.join(paths + [p for p in [os.environ.get("PYTHONPATH")] if p])
    # A shared test machine can be near its memory limit because of other processes: Ray's memory
    # monitor would then kill this cluster's workers, which is not what these tests are about.
    os.environ.setdefault("RAY_memory_monitor_refresh_ms", "0")
    store = 80 * 1024 * 1024
    c = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 2, "resources": {"tq_node_0": 4}, "include_dashboard": False, "object_store_memory": store})
    for i in (1, 2):
        c.add_node(num_cpus=2, resources={f"tq_node_{i}": 4}, object_store_memory=store)
    c.wait_for_nodes()
    ray.init(address=c.address, namespace=NAMESPACE, log_to_driver=True)
    yield c
    import transferqueue_jvm as tq
    tq.close()
    ray.shutdown()
    c.shutdown()


@pytest.fixture(scope="module")
def shared(cluster):
    """One system for the tests that only read and write (a system takes seconds to place)."""
    import transferqueue_jvm as tq
    tq.close()
    conf = tq.init(_conf(units=2))
    yield tq, conf
    tq.close()


@pytest.fixture
def tq(cluster):
    import transferqueue_jvm as tq
    tq.close()
    yield tq
    tq.close()


def _conf(units: int = 2, **python) -> dict:
    return {"backend": {"SimpleStorage": {"num_data_storage_units": units, "send_recv_timeout": "5s"}},
            "client": {"request_timeout": "5s"},
            "python": {"java_options": "-Xmx256m", "start_timeout": "300s", **python}}


def _system():
    from transferqueue_jvm import interface
    return interface._system


def _field(keys: torch.Tensor, f: int) -> torch.Tensor:
    """The deterministic value of field ``f`` of the keys numbered ``keys``."""
    return torch.arange(SMALL_LEN, dtype=torch.float32)[None, :] + (keys[:, None] * 16 + f).to(torch.float32)


def _roles_gone(pids: list[int]) -> bool:
    return not any(_alive(p) for p in pids) and not _live_actors()


@ray.remote(num_cpus=0)
class Producer:
    def run(self, partition: str) -> str:
        import transferqueue_jvm as tq
        from tensordict import TensorDict
        tq.init()  # attaches: no argument
        for start in range(0, SMALL_KEYS, CHUNK):
            keys = torch.arange(start, start + CHUNK)
            fields = TensorDict({f"f{f}": _field(keys, f) for f in range(SMALL_FIELDS)}, batch_size=[CHUNK])
            tq.kv_batch_put([f"k{int(k)}" for k in keys], partition, fields)
        tq.close()
        return ray.get_runtime_context().get_node_id()


@ray.remote(num_cpus=0)
class Consumer:
    def run(self, partition: str, parity: int) -> tuple[str, int]:
        import transferqueue_jvm as tq
        tq.init()
        seen = 0
        mine = [k for k in range(SMALL_KEYS) if k % 2 == parity]
        for start in range(0, len(mine), CHUNK):
            numbers = mine[start:start + CHUNK]
            batch = tq.kv_batch_get([f"k{k}" for k in numbers], partition)
            keys = torch.tensor(numbers)
            for f in range(SMALL_FIELDS):
                if not torch.equal(batch[f"f{f}"], _field(keys, f)):
                    raise AssertionError(f"field f{f} of keys {numbers[0]}.. differs from what was put")
            seen += len(numbers)
        tq.close()
        return ray.get_runtime_context().get_node_id(), seen


def test_should_place_units_on_distinct_nodes_and_move_a_small_batch_between_actors_on_three_nodes(shared):
    _, conf = shared
    system = _system()
    assert system is not None, "init() with Ray connected did not place the roles on Ray"
    where = system.placement
    assert [w["role"] for w in where] == ["controller", "storage-unit 0", "storage-unit 1"]
    assert where[1]["node_id"] != where[2]["node_id"], f"SPREAD put both units on one node: {where}"
    for w in where:  # the node's address, not loopback, and the address the role printed
        assert w["address"].split(":")[0] == w["node_ip"] and not w["node_ip"].startswith("127.")
    assert conf["network"]["controller_address"] == where[0]["address"]
    assert conf["network"]["storage_unit_addresses"] == [w["address"] for w in where[1:]]
    token = conf["network"]["auth_token"]
    assert token, "init() did not generate a token"
    for w in where:  # handed over by environment: not on a command line anyone on the host can read
        with open(f"/proc/{w['java_pid']}/cmdline", "rb") as f:
            assert token.encode() not in f.read()

    producer = Producer.options(resources={"tq_node_0": 1}).remote()
    consumers = [Consumer.options(resources={f"tq_node_{i + 1}": 1}).remote() for i in range(2)]
    producer_node = ray.get(producer.run.remote("rollout"), timeout=300)
    results = ray.get([c.run.remote("rollout", i) for i, c in enumerate(consumers)], timeout=300)
    assert len({producer_node, results[0][0], results[1][0]}) == 3, "the actors did not run on three nodes"
    assert [seen for _, seen in results] == [SMALL_KEYS // 2, SMALL_KEYS // 2]


def test_should_refuse_a_client_without_the_token(shared):
    from transferqueue_jvm import TransferQueueClient, UnauthenticatedError
    from transferqueue_jvm.client import new_client_id
    from transferqueue_jvm.interface import _deployment
    _, conf = shared
    stranger = dict(conf, network=dict(conf["network"], auth_token=None))
    client = TransferQueueClient(new_client_id(), _deployment(stranger))
    try:
        with pytest.raises(UnauthenticatedError):
            client.get_partition_list()
    finally:
        client.close()


@ray.remote(num_cpus=0)
def _read_in_task(keys: list[str], partition: str) -> tuple[dict, list[list[int]]]:
    import transferqueue_jvm as tq
    conf = tq.init()
    try:
        batch = tq.kv_batch_get(keys, partition)
        return conf["network"], batch["ids"].tolist()
    finally:
        tq.close()


def test_should_attach_a_task_with_bare_init_and_read_what_the_driver_wrote(shared):
    tq, conf = shared
    tq.kv_batch_put(["a", "b", "c"], "p", {"ids": torch.tensor([[1, 2], [3, 4], [5, 6]])})
    network, ids = ray.get(_read_in_task.options(resources={"tq_node_2": 1}).remote(["c", "a"], "p"), timeout=120)
    assert ids == [[5, 6], [1, 2]]
    assert network["controller_address"] == conf["network"]["controller_address"]
    assert network["auth_token"] == conf["network"]["auth_token"]


def test_should_leave_no_java_process_and_no_actor_after_close(shared):
    tq, _ = shared
    pids = [w["java_pid"] for w in _system().placement]
    assert all(_alive(p) for p in pids) and len(_live_actors()) == 4
    tq.close()
    _wait(lambda: _roles_gone(pids), 30, "a Java role or an actor remained after close()")
    with pytest.raises(ValueError):
        ray.get_actor("TransferQueueJvm", namespace="transferqueue_jvm")


def test_should_place_store_nodes_on_distinct_nodes_for_mooncake_store_and_serve_an_attached_task(tq):
    conf = tq.init({"backend": {"storage_backend": "MooncakeStore",
                                "MooncakeStore": {"global_segment_size": 128 << 20,
                                                  "local_buffer_size": 32 << 20}},
                    "client": {"request_timeout": "5s"},
                    "python": {"java_options": "-Xmx256m", "start_timeout": "300s", "store_nodes": 2}})
    where = _system().placement
    assert [w["role"] for w in where] == ["controller", "store-node 0", "store-node 1"]
    assert where[1]["node_id"] != where[2]["node_id"], f"SPREAD put both store nodes on one node: {where}"
    assert conf["network"]["store_node_addresses"] == [w["address"] for w in where[1:]]
    assert conf["network"]["storage_unit_addresses"] == []
    tq.kv_batch_put(["a", "b", "c"], "p", {"ids": torch.tensor([[1, 2], [3, 4], [5, 6]])})
    network, ids = ray.get(_read_in_task.options(resources={"tq_node_2": 1}).remote(["c", "a"], "p"), timeout=120)
    assert ids == [[5, 6], [1, 2]]
    assert network["store_node_addresses"] == conf["network"]["store_node_addresses"]
    pids = [w["java_pid"] for w in where]
    tq.close()
    _wait(lambda: _roles_gone(pids), 30, "a Java role or an actor remained after close()")


def test_should_fail_typed_for_a_dead_unit_while_the_other_goes_on_and_end_the_role_of_a_dead_actor(tq):
    from transferqueue_jvm import ConnectionFailed, DeadlineExceeded, TQError
    from transferqueue_jvm.ray_placement import health
    tq.init(_conf(units=2))
    keys = [f"k{i}" for i in range(8)]
    meta = tq.kv_batch_put(keys, "p", {"x": torch.arange(16).reshape(8, 2)})
    on_unit = {u: [k for k, gi in zip(keys, meta.global_indexes) if gi % 2 == u] for u in (0, 1)}
    assert on_unit[0] and on_unit[1]
    victim = _system().placement[2]  # storage-unit 1
    os.kill(victim["java_pid"], signal.SIGKILL)
    _wait(lambda: not _alive(victim["java_pid"]), 10, "the killed Java role did not end")

    _wait(lambda: not ray.get(_system().storage[1].status.remote())["alive"], 10, "the actor did not see the exit")
    status = {h["role"]: h for h in health()}
    assert set(status) == {"controller", "storage-unit 0", "storage-unit 1"}, status
    assert status["storage-unit 1"]["alive"] is False and status["storage-unit 1"]["exit_code"] is not None
    assert status["storage-unit 0"]["alive"] and status["controller"]["alive"]

    started = time.monotonic()
    with pytest.raises(TQError) as failure:
        tq.kv_batch_get(on_unit[1], "p")
    assert time.monotonic() - started < 5 + 3, "the read of the dead unit outlived its deadline"
    assert isinstance(failure.value, (ConnectionFailed, DeadlineExceeded)), repr(failure.value)
    batch = tq.kv_batch_get(on_unit[0], "p")  # the other unit goes on
    assert batch["x"].shape == (len(on_unit[0]), 2)

    # An actor that dies takes its Java role with it.
    system = _system()
    survivor = system.placement[1]
    ray.kill(system.storage[0], no_restart=True)
    _wait(lambda: not _alive(survivor["java_pid"]), 20, "the Java role outlived its killed actor")
    assert not any(h["alive"] for h in health() if h["role"] != "controller")

    # close() after both faults still leaves nothing behind.
    pids = [w["java_pid"] for w in system.placement]
    tq.close()
    _wait(lambda: _roles_gone(pids), 30, "a Java role or an actor remained after close()")


def test_should_leave_nothing_behind_after_ray_shutdown(tq, cluster):
    tq.init(_conf(units=2))
    pids = [w["java_pid"] for w in _system().placement]
    ray.shutdown()
    try:
        _wait(lambda: not any(_alive(p) for p in pids), 60, "a Java role outlived ray.shutdown()")
    finally:
        ray.init(address=cluster.address, namespace=NAMESPACE, log_to_driver=True)
    _wait(lambda: not _live_actors(), 60, "an actor outlived the job that created it")
