"""Calling a user's sync-or-async callable, with an optional time limit (core, instance-free).

ek calls code it did not write: an agent inside :func:`ek.agents.harness.run_suite`, an LLM
judge inside :mod:`ek.agents.judge`. Either may be a plain function or a coroutine function (or
an object with an ``async def __call__``), and either may hang. This module is the one place
that knows how to call such a thing:

* :func:`acall`, from async code: an async callable is awaited on the running loop; a sync one
  runs in a worker (``asyncio.to_thread``, or any ``concurrent.futures.Executor``), so the loop
  is never blocked. A time limit applies to each await.
* :func:`call`, from sync code: an async callable (or an awaitable result) is run with
  ``asyncio.run``; a sync callable with a time limit runs in a daemon thread.
* :func:`run_to_completion`, in a worker (thread, process, Dask): call and finish it there.

A time limit that expires raises :class:`CallTimeoutError` (a ``TimeoutError``). A sync callable
cannot be killed: on a time limit its thread is abandoned (a daemon) and its result discarded.
What the callable itself raises propagates unchanged; the caller decides what it means (an agent
failure, a :class:`~ek.agents.judge.JudgeError`, ...).

Example:
    >>> import asyncio
    >>> async def double(x):
    ...     return 2 * x
    >>> call(double, (21,)), call(lambda x: x + 1, (1,), timeout=5.0)
    (42, 2)
    >>> asyncio.run(acall(lambda x: x * 3, (2,), timeout=5.0))
    6
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import threading
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = [
    "CallTimeoutError",
    "EventLoopRunningError",
    "acall",
    "call",
    "is_async_callable",
    "loop_running",
    "run_to_completion",
]


class CallTimeoutError(TimeoutError):
    """The callable gave no result within its time limit."""


class EventLoopRunningError(RuntimeError):
    """An awaitable would have to be run from synchronous code inside a running event loop."""


def is_async_callable(fn: Any) -> bool:
    """A coroutine function, or an object whose ``__call__`` is one.

    Example:
        >>> async def f(): ...
        >>> is_async_callable(f), is_async_callable(print)
        (True, False)
    """
    if inspect.iscoroutinefunction(fn):
        return True
    call_method = getattr(type(fn), "__call__", None)  # noqa: B004 (an async __call__ method)
    return not inspect.isfunction(fn) and inspect.iscoroutinefunction(call_method)


def loop_running() -> bool:
    """Whether an event loop is running in this thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


async def _wait(aw: Awaitable[Any], timeout: float | None) -> Any:
    if timeout is None:
        return await aw
    try:
        return await asyncio.wait_for(aw, timeout)
    except asyncio.TimeoutError as e:
        raise CallTimeoutError(f"no result within {timeout:g} s") from e


async def _finish(aw: Awaitable[Any]) -> Any:
    return await aw


def run_to_completion(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``, with an awaitable result run to completion (``asyncio.run``).

    Meant for a worker thread or process, where no event loop is running.
    """
    out = fn(*args)
    if inspect.isawaitable(out):
        out = asyncio.run(_finish(out))
    return out


def _call_in_thread(fn: Callable[..., Any], args: tuple[Any, ...], timeout: float) -> Any:
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn(*args)
        except BaseException as e:  # re-raised in the caller's thread
            box["error"] = e

    name = getattr(fn, "__name__", type(fn).__name__)
    t = threading.Thread(target=run, name=f"ek-call-{name}", daemon=True)
    t.start()
    t.join(timeout)
    if t.is_alive():  # the thread cannot be killed; it is abandoned (daemon) and ignored
        raise CallTimeoutError(f"no result within {timeout:g} s")
    if "error" in box:
        raise box["error"]
    return box.get("value")


def call(
    fn: Callable[..., Any], args: tuple[Any, ...] = (), *, timeout: float | None = None
) -> Any:
    """``fn(*args)`` from synchronous code, within ``timeout`` seconds (``None``: no limit).

    Raises:
        EventLoopRunningError: ``fn`` is async (or returned an awaitable) and an event loop is
            running in this thread, so nothing can wait for it here; checked before ``fn`` is
            called when ``fn`` is declared async.
        CallTimeoutError: no result within ``timeout``.
    """
    is_async = is_async_callable(fn)
    if is_async and loop_running():
        raise EventLoopRunningError("an event loop is running in this thread")
    res = _call_in_thread(fn, args, timeout) if timeout is not None and not is_async else fn(*args)
    if not inspect.isawaitable(res):
        return res
    if loop_running():
        if inspect.iscoroutine(res):
            res.close()  # never awaited: close it to avoid a "never awaited" warning
        raise EventLoopRunningError("an event loop is running in this thread")
    return asyncio.run(_wait(res, timeout))


async def acall(
    fn: Callable[..., Any],
    args: tuple[Any, ...] = (),
    *,
    timeout: float | None = None,
    executor: concurrent.futures.Executor | None = None,
) -> Any:
    """Await ``fn(*args)`` within ``timeout`` seconds, never blocking the running loop.

    An async ``fn`` (with no ``executor``) runs on this loop. A sync one runs in ``executor``,
    else in ``asyncio.to_thread``. With an ``executor`` the call is finished in the worker
    (:func:`run_to_completion`: an async ``fn`` gets its own loop there); otherwise an awaitable
    result is awaited here, within the same time limit.

    Raises:
        CallTimeoutError: no result within ``timeout``.
    """
    aw: Awaitable[Any]
    if executor is not None:
        loop = asyncio.get_running_loop()
        aw = loop.run_in_executor(executor, run_to_completion, fn, *args)
    elif is_async_callable(fn):
        aw = fn(*args)
    else:
        aw = asyncio.to_thread(fn, *args)
    res = await _wait(aw, timeout)
    if inspect.isawaitable(res):
        res = await _wait(res, timeout)
    return res
