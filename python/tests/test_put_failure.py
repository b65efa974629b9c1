"""A put whose storage server stops answering: a typed error by the deadline, and nothing half-written.

A put sends to every storage unit (or store node) at once; when one of them is frozen (SIGSTOP) the
put fails with a typed error by its deadline, the data stored before is unchanged, and once the
server runs again a put of the same keys succeeds and reads back.
"""

import os
import signal

import pytest
import torch

BACKENDS = ["SimpleStorage", "MooncakeStore"]


@pytest.fixture(params=BACKENDS)
def system(request, need_servers):
    import transferqueue_jvm as tq
    from transferqueue_jvm import interface
    tq.close()
    tq.init({"backend": {"storage_backend": request.param,
                         "SimpleStorage": {"send_recv_timeout": "2s"}},
             "client": {"request_timeout": "2s"}})
    yield tq, interface._system, request.param
    tq.close()


def _storage_pid(system, backend: str) -> int:
    kind = "storage-unit" if backend == "SimpleStorage" else "store-node"
    return next(r.proc.pid for r in system.roles if r.name.startswith(kind) and r.name.endswith(" 1"))


def test_a_put_to_a_frozen_server_fails_typed_and_leaves_the_stored_data_whole(system):
    tq, local, backend = system
    from transferqueue_jvm import TQError
    before = {"x": torch.arange(8 * 4, dtype=torch.float32).reshape(8, 4)}
    tq.kv_batch_put([f"old{i}" for i in range(8)], "p", before)
    frozen = _storage_pid(local, backend)
    os.kill(frozen, signal.SIGSTOP)
    try:
        with pytest.raises(TQError) as failure:
            tq.kv_batch_put([f"new{i}" for i in range(8)], "p", {"x": torch.ones(8, 4)})
        assert failure.value.code_name in ("DEADLINE_EXCEEDED", "CONNECTION_FAILED", "NOTIFICATION_FAILED",
                                           "STORAGE_ERROR"), failure.value
    finally:
        os.kill(frozen, signal.SIGCONT)
    got = tq.kv_batch_get([f"old{i}" for i in range(8)], "p")
    assert torch.equal(got["x"], before["x"])
    after = {"x": torch.full((8, 4), 7.0)}
    tq.kv_batch_put([f"new{i}" for i in range(8)], "p", after)
    assert torch.equal(tq.kv_batch_get([f"new{i}" for i in range(8)], "p")["x"], after["x"])
