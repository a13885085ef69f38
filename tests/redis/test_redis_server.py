"""The throwaway ``redis-server``: a port taken between its pick and the server's own
bind costs a retry, not the test run (a CI run lost a whole cluster to that race)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from pygents.redis import RedisServer
from pygents.redis._server.local_cluster import LocalCluster
from pygents.redis._server.redis_server import _ephemeral, answers_ping, free_port
from system_programs import needs

pytestmark = needs("redis-server")


@contextmanager
def listening_on(port: int) -> Iterator[socket.socket]:
    """Someone else listens on ``port`` (as a client's or another server's socket would)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        yield taken


def test_a_picked_port_is_below_the_range_outgoing_connections_take() -> None:
    low, _ = _ephemeral()
    ports = {free_port() for _ in range(50)}
    assert all(1024 <= port < low for port in ports), sorted(ports)


def test_a_server_whose_port_was_taken_before_it_started_starts_on_another(
    tmp_path: Path,
) -> None:
    server = RedisServer(tmp_path)
    picked = server.port
    with listening_on(picked), server:
        assert server.port != picked
        assert answers_ping(server.port)


def test_a_cluster_node_whose_bus_port_was_taken_starts_on_fresh_ports(tmp_path: Path) -> None:
    server = RedisServer(tmp_path, cluster=True)
    assert server.cluster_port is not None
    bus = server.cluster_port
    with listening_on(bus), server:
        assert server.cluster_port != bus
        assert answers_ping(server.port)


def test_a_restart_keeps_its_port_and_says_so_when_it_is_taken(tmp_path: Path) -> None:
    server = RedisServer(tmp_path)
    with server:
        port = server.port
        server.stop()
        with listening_on(port), pytest.raises(RuntimeError, match=f"(?s)port {port}: .*in use"):
            server.start()
        assert server.port == port
        server.start()
        assert answers_ping(port)


def test_a_port_given_by_the_caller_is_never_moved(tmp_path: Path) -> None:
    port = free_port()
    with listening_on(port), pytest.raises(RuntimeError, match=f"port {port}"):
        RedisServer(tmp_path, port=port).start()


@needs("redis-cli")
def test_a_local_cluster_gives_each_node_a_bus_port_of_its_own() -> None:
    with LocalCluster(primaries=3, replicas=0) as cluster:
        buses = [node.cluster_port for node in cluster.nodes]
        ports = [node.port for node in cluster.nodes]
        assert None not in buses
        assert len(set(buses) | set(ports)) == 2 * len(ports)
