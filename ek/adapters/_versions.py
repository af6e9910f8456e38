"""The host versions an adapter supports, checked when the adapter is imported.

Each adapter has one :class:`HostRange` (in :data:`HOSTS`, checked by its ``_version.py``): the
oldest release it scores right (the floor, measured by ``make test-hosts``), the first release it no longer claims (the
next major), and any release inside that it refuses, each with the reason. Importing the adapter
with a host outside the range raises :class:`HostVersionError` (an ``ImportError``) naming the
version found, the range and the ``pip`` command that fixes it, before the host is imported: an
adapter never runs where it would give a wrong number silently. Inside the range an adapter
detects what changed by looking at the host's API (a field, a parameter), never by comparing
versions; a feature a release must have is checked with :func:`require_features`.

Versions are compared by their release numbers (``"4.0.10"`` -> ``(4, 0, 10)``); a pre-, post-,
dev- or local suffix is ignored, so ``5.0.0rc1`` is refused by ``<5`` as pip refuses it.

Example:
    >>> r = HostRange("deepeval", "deepeval", floor="3.9.9", below="5",
    ...               why_floor="its test cases drop metadata silently")
    >>> r.spec, r.refusal("4.3.1") is None
    ('>=3.9.9,<5', True)
    >>> print(r.refusal("3.9.5"))
    ek.adapters.deepeval supports deepeval >=3.9.9,<5; found deepeval 3.9.5 (before 3.9.9 its test cases drop metadata silently). Fix: pip install 'deepeval>=3.9.9,<5'
"""

from __future__ import annotations

import importlib
import re
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib import metadata

__all__ = [
    "HOSTS",
    "HostRange",
    "HostVersionError",
    "installed_version",
    "load_host",
    "release",
    "require_features",
]

_RELEASE = re.compile(r"^\s*v?(\d+(?:\.\d+)*)")


class HostVersionError(ImportError):
    """The installed host framework is outside the range the adapter supports."""


def release(version: str) -> tuple[int, ...]:
    """The release numbers of a version string, trailing zeros dropped.

    Raises:
        ValueError: the string does not start with a release number.

    Example:
        >>> release("0.3.285"), release("4.0.0rc1"), release("2.4") == release("2.4.0")
        ((0, 3, 285), (4,), True)
    """
    m = _RELEASE.match(version) if isinstance(version, str) else None
    if m is None:
        raise ValueError(
            f"a version must start with a release number like '1.2.3', got {version!r}"
        )
    parts = [int(p) for p in m.group(1).split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def installed_version(dist: str) -> str | None:
    """The installed version of distribution ``dist`` (``None`` when it is not installed)."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


@dataclass(frozen=True)
class HostRange:
    """The releases of one host framework an adapter supports.

    Attributes:
        dist: The host's distribution name (``"inspect-ai"``).
        module: The adapter's name under ``ek.adapters`` (``"inspect"``).
        floor: The oldest supported release (inclusive).
        below: The first release no longer supported (exclusive), normally the next major.
        why_floor: What goes wrong before the floor (read after "before <floor> ").
        excluded: Releases inside the range that are refused, each with the reason.
        why_below: What is known about ``below`` and later (read after "from <below> ").
    """

    dist: str
    module: str
    floor: str
    below: str
    why_floor: str
    excluded: tuple[tuple[str, str], ...] = field(default=())
    why_below: str = "it is a new major release ek has not been tested with"

    def __post_init__(self) -> None:
        versions = [self.floor, self.below, *(v for v, _ in self.excluded)]
        for v in versions:
            release(v)  # raises ValueError on a malformed version
        if release(self.floor) >= release(self.below):
            raise ValueError(f"floor {self.floor!r} must be below {self.below!r}")

    @property
    def spec(self) -> str:
        """The range as a requirement specifier (``">=0.3.7,!=0.4.2,<1"``)."""
        skip = "".join(f",!={v}" for v, _ in self.excluded)
        return f">={self.floor}{skip},<{self.below}"

    @property
    def requirement(self) -> str:
        """The host with its range, as ``pip install`` takes it (``"ragas>=0.3.7,!=0.4.2,<1"``)."""
        return f"{self.dist}{self.spec}"

    def refusal(self, found: str) -> str | None:
        """Why version ``found`` is refused (one line with the fix), or ``None`` if supported."""
        r = release(found)
        why = None
        if r < release(self.floor):
            why = f"before {self.floor} {self.why_floor}"
        elif r >= release(self.below):
            why = f"from {self.below} {self.why_below}"
        else:
            why = next((w for v, w in self.excluded if release(v) == r), None)
        if why is None:
            return None
        return (
            f"ek.adapters.{self.module} supports {self.dist} {self.spec}; found {self.dist} "
            f"{found} ({why}). Fix: pip install '{self.requirement}'"
        )

    def check(self, found: str | None = None) -> str | None:
        """Refuse the installed host (or ``found``) when it is outside the range.

        Returns:
            The version checked; ``None`` when the host is not installed (the adapter's import
            of the host then fails with the extra to install).

        Raises:
            HostVersionError: the version is outside the range (the message names it, the
                range and the fix).
        """
        version = installed_version(self.dist) if found is None else found
        if version is None:
            return None
        try:
            why = self.refusal(version)
        except ValueError:  # a version string we cannot read: say so instead of guessing
            why = (
                f"ek.adapters.{self.module} supports {self.dist} {self.spec}; found "
                f"{self.dist} {version!r}, which is not a release number. "
                f"Fix: pip install '{self.requirement}'"
            )
        if why is not None:
            raise HostVersionError(why)
        return version


def require_features(host: HostRange, version: str | None, missing: Iterable[str]) -> None:
    """Refuse a host whose API lacks what the adapter needs to score right.

    Args:
        host: The adapter's range.
        version: The installed version (``None`` if unknown).
        missing: What the installed host lacks, one phrase each (empty: nothing is missing).

    Raises:
        HostVersionError: something is missing (named, with the range and the fix).

    Example:
        >>> r = HostRange("x", "x", floor="1", below="2", why_floor="-")
        >>> require_features(r, "1.5", [])
        >>> require_features(r, "1.5", ["Score.reason"])
        Traceback (most recent call last):
        ...
        ek.adapters._versions.HostVersionError: ek.adapters.x needs x >=1,<2 with Score.reason; found x 1.5 without it. Fix: pip install 'x>=1,<2'
    """
    lacking = list(missing)
    if lacking:
        raise HostVersionError(
            f"ek.adapters.{host.module} needs {host.dist} {host.spec} with {', '.join(lacking)}; "
            f"found {host.dist} {version or '(version unknown)'} without it. "
            f"Fix: pip install '{host.requirement}'"
        )


def load_host(
    module: str, package: str, title: str, missing: Callable[[], Iterable[str]]
) -> str | None:
    """An adapter's first step: check the host's version, import the host, check its features.

    The version is read from the distribution's metadata and refused outside the range before
    the host is imported (so a release that misbehaves at import, Ragas 0.4.2, is never run).
    A host that is not installed, or fails to import, raises ``ImportError`` naming the extra to
    install; then ``missing()`` (which may import from the host) lists what the adapter needs
    and the host lacks, refused with :func:`require_features`.

    Args:
        module: The adapter's key in :data:`HOSTS` (``"pydantic_evals"``).
        package: The host's import name (``"pydantic_evals"``).
        title: The host's name for people (``"pydantic-evals"``).
        missing: Lists what the installed host lacks (empty when it has all).

    Returns:
        The installed version (``None`` when the distribution's metadata is not found).

    Raises:
        HostVersionError: the host is outside the range or lacks a feature.
        ImportError: the host is not installed or cannot be imported.
    """
    host = HOSTS[module]
    found = host.check()
    try:
        with warnings.catch_warnings():  # a host's own deprecations at import are not ek's
            warnings.simplefilter("ignore", DeprecationWarning)
            importlib.import_module(package)
    except ImportError as e:
        extra = module.replace("_", "-")
        raise ImportError(
            f"ek.adapters.{module} needs {title}: pip install ek-agents[{extra}] "
            f"(import {package} failed: {e})"
        ) from e
    require_features(host, found, missing())
    return found


#: Every adapter's range (ek.adapters.<name>), read by the adapters, the host matrix
#: (``make test-hosts``), the README's table and the test that the extras agree.
HOSTS: dict[str, HostRange] = {
    "inspect": HostRange(
        dist="inspect-ai",
        module="inspect",
        floor="0.3.262",
        below="1",
        why_floor=(
            "ek is not tested there: before 0.3.241 Inspect has no @metric(scores='unreduced'), "
            "so ek's corpus metrics would see only the first epoch of each sample (a wrong "
            "number); 0.3.241 fails ek's tests (no score reasons, so a raising ek metric errors "
            "the eval; a NaN read back from the log as None); 0.3.242-0.3.261 are not tested"
        ),
    ),
    "deepeval": HostRange(
        dist="deepeval",
        module="deepeval",
        floor="3.9.9",
        below="5",
        why_floor=(
            "a test case drops its metadata silently, where ek keeps task ids, gold calls and "
            "costs: Cost-of-Pass would be NaN and gold calls missing, with no error"
        ),
    ),
    "ragas": HostRange(
        dist="ragas",
        module="ragas",
        floor="0.3.7",
        below="1",
        why_floor="Ragas has no ragas.metrics.collections, whose BaseMetric ek's experiment metric is",
        excluded=(
            (
                "0.4.2",
                "Ragas 0.4.2 downloads a tokenizer when it is imported: it cannot run offline",
            ),
        ),
    ),
    "pydantic_evals": HostRange(
        dist="pydantic-evals",
        module="pydantic_evals",
        floor="2.4",
        below="3",
        why_floor=(
            "a span-tree node has no status: a failed tool call would read as a successful one "
            "(the 1.x line included)"
        ),
    ),
}
