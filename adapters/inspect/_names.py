"""Registry names under the ``ek/`` namespace, whatever the install mode."""

from __future__ import annotations

import importlib.util

__all__ = ["NAMESPACE", "qualified", "unqualified"]

NAMESPACE = "ek"


def _inspect_prefixes_ek() -> bool:
    # Inspect prefixes a decorated object's name with its top-level package only when that
    # package lives in site-packages or is an editable install of a distribution *named* like
    # the package. The distribution here is "ek-agents", so an editable or source checkout of
    # `ek` gets no prefix: ask Inspect's own rule and add the prefix ourselves when it won't.
    try:
        from inspect_ai._util.package import package_path_is_in_site_packages

        spec = importlib.util.find_spec(NAMESPACE)
        origin = spec.origin if spec is not None else None
        return bool(origin) and package_path_is_in_site_packages(str(origin))
    except Exception:  # pragma: no cover - a future Inspect without this helper
        return False


_AUTO = _inspect_prefixes_ek()


def qualified(name: str) -> str:
    """The name to give an Inspect decorator so that it registers as ``ek/<name>``."""
    return name if _AUTO else f"{NAMESPACE}/{name}"


def unqualified(name: str) -> str:
    """``"ek/x"`` -> ``"x"`` (sample score keys use the unqualified name)."""
    return name.split("/", 1)[1] if name.startswith(f"{NAMESPACE}/") else name
