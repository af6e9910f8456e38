"""Generate ``smolagents_openinference``: smolagents under ``openinference-instrumentation-smolagents``.

Run in its own environment (``make traces-fixtures`` builds it from
``requirements-smolagents_openinference.txt``), from the repository root:
``.venv-traces/smolagents_openinference/bin/python tests/data/traces/stacks/gen/smolagents_openinference.py``.
"""

from __future__ import annotations

import sys
from typing import Any

import smolagents_world


def instrument(provider: Any) -> None:
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor

    SmolagentsInstrumentor().instrument(tracer_provider=provider)


if __name__ == "__main__":
    sys.exit(
        smolagents_world.main(
            "smolagents_openinference", "openinference-instrumentation-smolagents", instrument
        )
    )
