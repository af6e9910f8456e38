"""Registry names under the ``ek/`` namespace, whatever the install mode."""

from __future__ import annotations

import functools
import importlib.util
from typing import Any

__all__ = ["NAMESPACE", "qualified", "register_bare_alias", "unqualified"]

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


def register_bare_alias(factory: Any) -> None:
    """Also register a scorer factory under its bare name (``"ek/tool_calls"`` -> ``"tool_calls"``).

    Inspect records a scorer in the log (``log.eval.scorers``) and keys its sample scores by the
    name *without* the package prefix, and ``inspect score LOG`` (no ``--scorer``) looks that
    bare name up, which never reaches the ``ek/`` namespace. The alias makes the recorded name
    resolve, so a re-score of an ek-scored log needs no flags. A name that is already taken
    (an Inspect built-in, or a scorer registered earlier under that bare name) is left alone.

    Inspect has no public registry look-up (``registry_create`` loads entry points, which would
    re-enter this import), so the alias needs its private ``registry_lookup`` and
    ``registry_add``: for a name without a ``/`` the look-up reads the registry alone, never the
    entry points (the same in every supported release; ``registry_has``, which says so, exists
    only from 0.3.278). An Inspect that moved them gets no alias, and re-scoring needs
    ``--scorer ek/<name>``.
    """
    try:
        from inspect_ai._util.registry import registry_add, registry_info, registry_lookup
    except ImportError:  # pragma: no cover - an Inspect that moved them: no alias
        return
    info = registry_info(factory)
    bare = unqualified(info.name)
    if bare == info.name or registry_lookup(info.type, bare) is not None:
        return

    @functools.wraps(factory)
    def alias(*args: Any, **kwargs: Any) -> Any:
        return factory(*args, **kwargs)

    registry_add(alias, info.model_copy(update={"name": bare}))
