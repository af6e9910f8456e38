"""Deprecated: use :mod:`ek.scalar_gate` (the scalar gate) and :mod:`ek.jsonio` (JSON files).

``ek.harness`` held two unrelated things under a name that, in ek-agents, means the k-trial
runner (:mod:`ek.agents.harness`). It now only re-exports them, so every existing import keeps
working; new code should import from the modules that say what they do:

=====================================  =================================================
old name (``ek.harness``)              new home
=====================================  =================================================
``regression_gate``, ``ScalarCheck``,  :mod:`ek.scalar_gate`
``ScalarGateResult``,
``metric_direction``,
``undefined_policy``,
``save_baseline``, ``load_baseline``,
``_LOWER_IS_BETTER``                   (``ek.scalar_gate.LOWER_IS_BETTER``)
``to_json_safe``, ``from_json_safe``,  :mod:`ek.jsonio`
``write_json_atomic``, ``read_json``
=====================================  =================================================

No warning is raised on import (ek's own modules and users' code import these names on hot
paths); the alias will stay until the next major version.

Example:
    >>> from ek.harness import regression_gate
    >>> import ek.scalar_gate
    >>> regression_gate is ek.scalar_gate.regression_gate
    True
"""

from __future__ import annotations

from ek.jsonio import from_json_safe, read_json, to_json_safe, write_json_atomic
from ek.scalar_gate import (
    LOWER_IS_BETTER as _LOWER_IS_BETTER,
)
from ek.scalar_gate import (
    ScalarCheck,
    ScalarGateResult,
    load_baseline,
    metric_direction,
    regression_gate,
    save_baseline,
    undefined_policy,
)

__all__ = [
    "ScalarCheck",
    "ScalarGateResult",
    "from_json_safe",
    "load_baseline",
    "metric_direction",
    "read_json",
    "regression_gate",
    "save_baseline",
    "to_json_safe",
    "undefined_policy",
    "write_json_atomic",
]

_ = _LOWER_IS_BETTER  # re-exported for code that read the table from here
