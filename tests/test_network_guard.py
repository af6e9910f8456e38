"""The suite is offline: the guard in conftest.py refuses any non-local connection."""

from __future__ import annotations

import socket

import pytest
from _offline import NetworkBlocked


def test_outbound_connection_is_refused() -> None:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        with pytest.raises(NetworkBlocked, match="offline"):
            s.connect(("93.184.216.34", 443))
    finally:
        s.close()


def test_dns_lookup_is_refused() -> None:
    with pytest.raises(NetworkBlocked):
        socket.getaddrinfo("example.com", 443)


def test_loopback_is_allowed() -> None:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    c = socket.socket()
    try:
        c.connect(srv.getsockname())
    finally:
        c.close()
        srv.close()
