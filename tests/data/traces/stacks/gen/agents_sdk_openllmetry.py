"""Generate ``agents_sdk_openllmetry``: the OpenAI Agents SDK under ``opentelemetry-instrumentation-openai-agents`` (OpenLLMetry).

Run in its own environment (``make traces-fixtures`` builds it from
``requirements-agents_sdk_openllmetry.txt``), from the repository root:
``.venv-traces/agents_sdk_openllmetry/bin/python tests/data/traces/stacks/gen/agents_sdk_openllmetry.py``.
"""

from __future__ import annotations

import sys
from typing import Any

import agents_sdk


def instrument(provider: Any) -> None:
    from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)


if __name__ == "__main__":
    sys.exit(
        agents_sdk.main(
            "agents_sdk_openllmetry", "opentelemetry-instrumentation-openai-agents", instrument
        )
    )
