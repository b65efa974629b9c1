"""The local system's start-up: roles whose chosen port was taken meanwhile start again elsewhere."""

import socket

import pytest
import torch


@pytest.mark.parametrize("taken_role", ["controller", "last storage unit"])
def test_a_role_whose_port_was_taken_is_started_again_on_fresh_ports(need_servers, monkeypatch, taken_role):
    import transferqueue_jvm as tq
    from transferqueue_jvm import launcher
    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))
    blocker.listen()
    taken = blocker.getsockname()[1]
    real, calls = launcher._free_ports, []

    def first_choice_taken(n, host):
        ports = real(n, host)
        calls.append(ports)
        if len(calls) == 1:  # another process binds the chosen port before the role does
            ports[0 if taken_role == "controller" else -1] = taken
        return ports

    monkeypatch.setattr(launcher, "_free_ports", first_choice_taken)
    tq.close()
    try:
        conf = tq.init({"backend": {"storage_backend": "SimpleStorage"}})
        assert len(calls) == 2
        net = conf["network"]
        assert f"127.0.0.1:{taken}" not in [net["controller_address"], *net["storage_unit_addresses"]]
        tq.kv_put("k", "p", fields={"v": torch.tensor([1])})
        assert tq.kv_batch_get(["k"], "p")["v"].tolist() == [[1]]
    finally:
        tq.close()
        blocker.close()
