"""The offline guard: any connection to a non-local address raises :class:`NetworkBlocked`.

Installed by ``tests/conftest.py`` for the whole session (and importable by subprocess helpers
through ``sitecustomize`` when a test needs the guard in a child process). Loopback and Unix
sockets stay allowed (asyncio, dask's LocalCluster and subprocess pipes need them).
"""

from __future__ import annotations

import socket
from typing import Any

_LOCAL_PREFIXES = ("127.", "::1", "0:0:0:0:0:0:0:1", "localhost", "0.0.0.0")


class NetworkBlocked(RuntimeError):
    """A test tried to open a connection to a non-local address."""


def _is_local(address: Any) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX path
        return True
    if isinstance(address, tuple) and address:
        host = address[0]
        if isinstance(host, bytes):
            host = host.decode()
        return isinstance(host, str) and (host.startswith(_LOCAL_PREFIXES) or host == "")
    return False


_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo


def _guard_connect(self: socket.socket, address: Any) -> Any:
    if not _is_local(address):
        raise NetworkBlocked(f"test tried to connect to {address!r}; the test suite is offline")
    return _real_connect(self, address)


def _guard_connect_ex(self: socket.socket, address: Any) -> Any:
    if not _is_local(address):
        raise NetworkBlocked(f"test tried to connect to {address!r}; the test suite is offline")
    return _real_connect_ex(self, address)


def _guard_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    h = host.decode() if isinstance(host, bytes) else host
    if h is not None and not _is_local((h,)) and h not in (socket.gethostname(),):
        raise NetworkBlocked(f"test tried to resolve {host!r}; the test suite is offline")
    return _real_getaddrinfo(host, *args, **kwargs)


def install() -> None:
    """Patch the socket module (idempotent)."""
    if socket.socket.connect is _guard_connect:
        return
    socket.socket.connect = _guard_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _guard_connect_ex  # type: ignore[method-assign]
    socket.getaddrinfo = _guard_getaddrinfo
